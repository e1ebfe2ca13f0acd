"""Predicted DP pass probabilities from a public sweep's planning records.

A sweep on public data stores, for every run, the statistic each DP criterion was
released from and the candidate's public parameters (``RunEvaluation.planning``).
Nothing about the noise depends on the data beyond those, so the pass probability of
the same candidate at *other* budgets follows by re-drawing the noise:

* Laplace criteria: sensitivity and (pseudo-)threshold from
  :func:`synthflow.acceptance.evaluate.laplace_terms` (the function the evaluation
  uses), noise from :meth:`PrivacyRNG.laplace` (the release's sampler). ``K`` draws are
  kept sorted: their empirical CDF gives ``P(stat + Lap(sens / eps) < threshold)``.
* The regression criteria: the functional-mechanism fit of the public D_T is re-drawn
  ``J`` times per budget with the evaluation's own functions
  (:mod:`synthflow.criteria.regression`), then compared with each candidate's
  stored OLS model and MAE; the TSTR error's Laplace noise as above.

Common random numbers (the same seed at every budget) make the probabilities smooth
in epsilon, which the optimiser needs.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from synthflow.config.model import CriterionSpec, ReleaseSpec
from synthflow.criteria.context import laplace_terms, noise_decides
from synthflow.errors import ConfigError
from synthflow.privacy.rng import PrivacyRNG
from synthflow.sweep.store import SweepStore

__all__ = [
    "Arm",
    "NoiseLaw",
    "laplace_pass_table",
    "load_arms",
]


@dataclass(frozen=True, kw_only=True)
class Arm:
    """One configuration at one generator budget, with its runs' planning records."""

    config_id: str
    generator_epsilon: float
    configuration: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def letters(self) -> tuple[tuple[str, str], ...]:
        """The transformations, as a hashable key."""
        return tuple(self.configuration["transformations"].items())


def load_arms(spec: ReleaseSpec, store: str | Path) -> tuple[list[Arm], dict[str, str]]:
    """The store's (configuration, generator epsilon) arms and its metadata.

    Raises:
        ConfigError: If the store was made for another spec or holds no planning records.
        StoreError: If the store is missing, corrupt or foreign.
    """
    with SweepStore.open_existing(store) as db:
        meta = db.meta()
        planning = db.planning()
        configs = db.configurations()
    if meta.get("spec_sha256") != spec.sha256:
        raise ConfigError(
            f"store {str(store)!r} holds runs of another spec (sha256 "
            f"{meta.get('spec_sha256', '?')[:12]}..., {spec.path} is {spec.sha256[:12]}...): "
            "plan with the spec the sweep ran"
        )
    if not planning:
        raise ConfigError(
            f"store {str(store)!r} holds no successful run with a planning record; run "
            "'synthflow sweep' (this version records one per run) first"
        )
    grouped: dict[tuple[str, float], list[dict[str, Any]]] = defaultdict(list)
    for cid, eps, _, record in planning:
        grouped[(cid, eps)].append(record)
    arms = [
        Arm(config_id=cid, generator_epsilon=eps, configuration=configs[cid], records=recs)
        for (cid, eps), recs in sorted(grouped.items())
    ]
    return arms, meta


class NoiseLaw:
    """``K`` standard Laplace draws of the release's sampler, sorted (an empirical CDF)."""

    def __init__(self, seed: int, draws: int = 20_000) -> None:
        noise = PrivacyRNG.from_seed(seed).laplace(np.zeros(draws), sensitivity=1.0, epsilon=1.0)
        self.z = np.sort(noise)

    def pass_probability(
        self, stat: np.ndarray | float, sens: float, eps: float, threshold: float
    ) -> np.ndarray:
        """``P(stat + Lap(sens / eps) < threshold)`` for each ``stat``."""
        stat = np.asarray(stat, dtype=float)
        if sens == 0:
            return (stat < threshold).astype(float)
        x = (threshold - stat) * eps / sens
        return np.searchsorted(self.z, x, side="left") / len(self.z)


def laplace_pass_table(
    spec: ReleaseSpec,
    c: CriterionSpec,
    records: list[dict[str, Any]],
    grid: np.ndarray,
    law: NoiseLaw,
) -> np.ndarray:
    """``P[run, k]``: pass probability of criterion ``c`` for each run at ``grid[k]``.

    0 where the release at the run's own public parameters is decided by its noise
    (:func:`synthflow.criteria.context.noise_decides`): the evaluation fails it.
    """
    out = np.empty((len(records), len(grid)))
    for i, rec in enumerate(records):
        entry = rec[c.name]
        for k, eps in enumerate(grid):
            sens, threshold = laplace_terms(c, spec, entry["public"], float(eps))
            if noise_decides(c, sens, threshold, float(eps)):
                out[i, k] = 0.0
                continue
            out[i, k] = law.pass_probability(entry["statistic"], sens, float(eps), threshold)[()]
    return out

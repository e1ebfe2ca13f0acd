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
  (:mod:`synthflow.acceptance.regression`), then compared with each candidate's
  stored OLS model and MAE; the TSTR error's Laplace noise as above.

Common random numbers (the same seed at every budget) make the probabilities smooth
in epsilon, which the optimiser needs.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthflow.acceptance import regression
from synthflow.acceptance._common import code_matrix
from synthflow.acceptance.dp import laplace_terms
from synthflow.config.model import CriterionSpec, ReleaseSpec
from synthflow.errors import ConfigError
from synthflow.rng import PrivacyRNG
from synthflow.sweep.store import SweepStore
from synthflow.transform import Transformer

__all__ = [
    "Arm",
    "NoiseLaw",
    "RegressionSim",
    "laplace_pass_table",
    "load_arms",
    "planned_by_laplace",
    "standardization_from_json",
]


def planned_by_laplace(c: CriterionSpec) -> bool:
    """Whether the planner draws ``c`` as a Laplace release of its recorded statistic.

    The regression coefficients (the functional mechanism) and TSTR (which reads the
    regression fit) are simulated with the fit instead.
    """
    return c.impl.mechanism == "laplace" and not c.impl.uses_regression_fit


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
    """``P[run, k]``: pass probability of criterion ``c`` for each run at ``grid[k]``."""
    out = np.empty((len(records), len(grid)))
    for i, rec in enumerate(records):
        entry = rec[c.name]
        for k, eps in enumerate(grid):
            sens, threshold = laplace_terms(c, spec, entry["public"], float(eps))
            out[i, k] = law.pass_probability(entry["statistic"], sens, float(eps), threshold)[()]
    return out


def _model(entry: dict[str, Any], features: tuple[str, ...]) -> regression.LinearModel:
    return regression.LinearModel(
        features=features, intercept=float(entry["intercept"]), coef=tuple(entry["coef"])
    )


def standardization_from_json(entry: dict[str, Any]) -> regression.Standardization:
    """A :class:`Standardization` from its stored JSON form (``dataclasses.asdict``)."""
    return regression.Standardization(
        center=tuple(entry["center"]),
        scale=tuple(entry["scale"]),
        y_center=float(entry["y_center"]),
        y_scale=float(entry["y_scale"]),
    )


@dataclass(frozen=True, kw_only=True)
class FitDraws:
    """``J`` functional-mechanism fits of D_T at one budget and their MAE on D_T."""

    intercepts: np.ndarray
    coefs: np.ndarray
    mae: np.ndarray


class RegressionSim:
    """Re-draws the DP regression fit of one transformation's public D_T."""

    def __init__(self, codes: np.ndarray, tr: Transformer, coef: CriterionSpec) -> None:
        target = str(coef.column)
        self.noise, self.delta = str(coef.noise), float(coef.delta)
        self.x, self.y, self.features, self.xb, self.yb = regression.design(
            codes, tr, target, coef.features
        )
        self.n = len(self.x)
        rows, counts = np.unique(np.column_stack([self.x, self.y]), axis=0, return_counts=True)
        self._xu, self._yu, self._w = rows[:, :-1], rows[:, -1], counts.astype(float)
        self.ols = regression.ols(self.x, self.y, self.features)
        self.std_data = regression.Standardization.from_data(self.x, self.y, self.xb, self.yb)
        self.ols_mae = self.mae(np.array([self.ols.intercept]), np.array([self.ols.coef]))[0]
        self._stats: dict[str, np.ndarray] = {}

    @classmethod
    def from_frame(
        cls,
        spec: ReleaseSpec,
        frame: pd.DataFrame,
        transformations: dict[str, str],
        coef: CriterionSpec,
    ) -> RegressionSim:
        """The simulation of a raw public ``frame`` binned by ``transformations``."""
        tr = Transformer(spec, transformations)
        return cls(code_matrix(tr.forward(frame), tr, what="original"), tr, coef)

    def mae(self, intercepts: np.ndarray, coefs: np.ndarray) -> np.ndarray:
        """MAE on D_T of each model (the evaluation's :func:`regression.mae_many`)."""
        return regression.mae_many(intercepts, coefs, self._xu, self._yu, self.yb, weights=self._w)

    def draws(
        self, std: regression.Standardization, epsilon: float, count: int, seed: int
    ) -> FitDraws:
        """``count`` DP fits at ``epsilon`` in standardisation ``std``; seeded (public data)."""
        key = json.dumps([std.center, std.scale, std.y_center, std.y_scale])
        if key not in self._stats:
            self._stats[key] = regression.functional_mechanism_statistics(
                self.x, self.y, std, self.xb, self.yb
            )
        stats = self._stats[key]
        noise = regression.fit_noise(
            *std.box(self.xb, self.yb), epsilon, kind=self.noise, delta=self.delta
        )
        if noise.kind == "laplace":  # the release's own Laplace sampler, seeded
            noisy = PrivacyRNG.from_seed(seed).laplace(
                np.tile(stats, (count, 1)), sensitivity=noise.sensitivity, epsilon=epsilon
            )
        else:  # a normal of the discrete Gaussian's sd (sigma / g is in the thousands)
            noisy = stats + noise.simulate(np.random.default_rng(seed), (count, len(stats)))
        intercepts, coefs = regression.fits_from_noisy_statistics(
            np.asarray(noisy), std, len(self.features) + 1
        )
        return FitDraws(intercepts=intercepts, coefs=coefs, mae=self.mae(intercepts, coefs))

    def bounds_standardization(self) -> regression.Standardization:
        """The once-per-release fit's standardisation (public bounds)."""
        return regression.Standardization.from_bounds(self.xb, self.yb)

    def errors(
        self, fits: FitDraws, record: dict[str, Any], coef_name: str, tstr_name: str | None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Coefficient errors and TSTR statistics of ``fits`` against one candidate."""
        entry = record[coef_name]["public"]
        model = _model(entry["candidate_ols"], self.features)
        std = standardization_from_json(entry["candidate_standardization"])
        coef = regression.coefficient_errors(fits.intercepts, fits.coefs, model, std)
        if tstr_name is None:
            return coef, None
        return coef, np.abs(fits.mae - float(record[tstr_name]["candidate_mae"]))

    def perfect_errors(self, fits: FitDraws) -> tuple[np.ndarray, np.ndarray]:
        """Errors of ``fits`` against a perfect candidate (D_R = D_T): the fit's noise alone."""
        coef = regression.coefficient_errors(fits.intercepts, fits.coefs, self.ols, self.std_data)
        return coef, np.abs(fits.mae - self.ols_mae)

"""What every criterion kind shares: one evaluation's context and one Laplace release.

One :class:`Context` per evaluation caches what several criteria share (the OLS fits,
regression designs, each criterion's exact value), so a sweep that evaluates a candidate
exactly and with DP computes faithfulness and the fits once. :func:`laplace_release`
charges the ledger, then adds noise at the sensitivity the kind computes
(:func:`laplace_terms`, which ``synthflow plan`` also calls).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from synthflow.criteria import regression
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    pass
    import pandas as pd

    from synthflow.config.model import CriterionSpec, ReleaseSpec
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.transform import Transformer


__all__ = [
    "RELEASED_ONCE",
    "Context",
    "Released",
    "context",
    "exact_of",
    "laplace_release",
    "laplace_terms",
    "need",
    "noise_decides",
    "release_dominated",
]

RELEASED_ONCE = "released_once"
"""Cache key of what a ``once_per_release`` kind released once for the whole release
(:meth:`~synthflow.criteria.protocol.CriterionKind.release_once`); the evaluation puts
it there and the kind reads it instead of releasing its own."""


@dataclass(frozen=True, kw_only=True)
class Context:
    """What one evaluation of one candidate shares between its criteria."""

    spec: ReleaseSpec
    transformer: Transformer
    original: np.ndarray
    candidate: np.ndarray
    cache: dict[str, Any] = field(default_factory=dict)

    @property
    def sizes(self) -> tuple[int, ...]:
        """Bins per column of the configuration's domain."""
        return self.transformer.domain.sizes

    def regression_design(
        self, which: str, target: str, features: tuple[str, ...] = ()
    ) -> tuple[Any, ...]:
        """The regression design of one table (cached): X, y, features, X and y bounds."""
        key = f"design:{which}:{target}:{features}"
        if key not in self.cache:
            codes = self.original if which == "original" else self.candidate
            self.cache[key] = regression.design(codes, self.transformer, target, features)
        return self.cache[key]


def need(value: Any, what: str, crit: CriterionSpec) -> Any:
    """``value``, or a ConfigError saying that criterion ``crit`` needs ``what``."""
    if value is None:
        raise ConfigError(f"criterion {crit.name!r} (kind {crit.kind!r}) needs {what!r}")
    return value


def exact_of(c: CriterionSpec, x: Context) -> float:
    """The exact value of ``c``, computed once per evaluation context.

    A sweep's exact and DP evaluations share one context, so faithfulness (a maximum
    matching), the marginals and the OLS fits are computed once, not twice.
    """
    key = f"exact:{c.name}"
    if key not in x.cache:
        x.cache[key] = c.impl.exact(c, x)
    value: float = x.cache[key]
    return value


def context(
    spec: ReleaseSpec, transformer: Transformer, original: pd.DataFrame, candidate: pd.DataFrame
) -> Context:
    """A fresh evaluation context over both tables' code matrices."""
    from synthflow.criteria._common import code_matrix

    return Context(
        spec=spec,
        transformer=transformer,
        original=code_matrix(original, transformer, what="original"),
        candidate=code_matrix(candidate, transformer, what="candidate"),
    )


@dataclass(frozen=True, kw_only=True)
class Released:
    """One criterion's DP release: the noisy value and what it was computed from."""

    value: float
    threshold: float
    epsilon: float
    mechanism: str
    sensitivity: float
    noise_sd: float
    statistic: float | None = None
    """The statistic the noise was added to (before noise)."""
    public: dict[str, Any] = field(default_factory=dict)
    """The candidate's public parameters its sensitivity and threshold were read from."""
    dominated: bool = False
    """The noise at the candidate's own public parameters decides more than the
    candidate (:func:`release_dominated`): the criterion fails, and says why."""


def laplace_terms(
    c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
) -> tuple[float, float]:
    """Sensitivity and the (pseudo-)threshold of a Laplace-released criterion.

    ``public`` holds the public parameters the evaluation recorded for the candidate
    (``n``; ``min_count`` for the 1-way ratio; ``min_group_size`` for a conditional
    mean). Each kind computes them (:mod:`synthflow.criteria`): evaluation, the release's
    published parameters and ``synthflow plan`` all ask it, so a plan simulates exactly
    the mechanism a release runs and the audit checks the same numbers.

    Raises:
        ConfigError: If ``c`` is not released by the Laplace mechanism (the regression
            coefficients are released by the functional mechanism).
    """
    return c.impl.sensitivity_and_threshold(c, spec, public, epsilon)


def release_dominated(
    c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
) -> bool:
    """Whether a Laplace release at these public parameters is decided by its noise.

    The one noise rule (:mod:`synthflow.acceptance.noise_check`) at the candidate's own
    public parameters (its smallest resized group, its smallest count): a perfect
    candidate would pass fewer than two releases in three. Such a release must not pass
    a candidate (#60: a conditional mean released 23.6, 133.2 and -155.4 against a
    threshold of 1, and the third "passed"), so the evaluation fails it and names the
    reason. Public inputs only: a function of the candidate's public parameters, the
    spec and epsilon, so deciding on it is post-processing.
    """
    sens, threshold = laplace_terms(c, spec, public, epsilon)
    return noise_decides(c, sens, threshold, epsilon)


def noise_decides(c: CriterionSpec, sensitivity: float, threshold: float, epsilon: float) -> bool:
    """:func:`release_dominated` from a release's sensitivity and (pseudo-)threshold.

    For callers that have them already (the planner's pass tables, the audit).
    """
    from synthflow.criteria.noise import PERFECT_PASS_MIN, laplace_perfect_pass

    room = threshold - c.impl.perfect_value
    return laplace_perfect_pass(room, sensitivity / epsilon) < PERFECT_PASS_MIN


def laplace_release(
    c: CriterionSpec,
    spec: ReleaseSpec,
    stat: float,
    *,
    public: dict[str, Any],
    ledger: Ledger,
    rng: PrivacyRNG,
) -> Released:
    """``stat`` plus Laplace noise at the criterion's sensitivity, the ledger charged first."""
    sens, threshold = laplace_terms(c, spec, public, c.epsilon)
    ledger.charge(f"acceptance {c.name}", epsilon=c.epsilon, mechanism="laplace", sensitivity=sens)
    noisy = float(rng.laplace(np.array([stat]), sensitivity=sens, epsilon=c.epsilon)[0])
    return Released(
        value=noisy,
        threshold=threshold,
        epsilon=c.epsilon,
        mechanism="laplace",
        sensitivity=sens,
        noise_sd=math.sqrt(2) * sens / c.epsilon,
        statistic=stat,
        public=public,
        dominated=release_dominated(c, spec, public, c.epsilon),
    )

"""The regression criteria's noise figures: simulated DP fits of a perfect candidate.

Part of the one noise rule (:mod:`synthflow.acceptance.noise_check`): public data only
(the spec's public sample, or a reference design over the public bounds), seeded.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from synthflow.criteria.regression import fit as regression

if TYPE_CHECKING:
    from synthflow.config.model import CriterionSpec, ReleaseSpec
    from synthflow.transform import Transformer

__all__ = ["DRAWS", "reference_errors", "regression_draws"]

DRAWS = 400
"""Simulated DP fits per regression figure (seeded: a simulation on public data)."""

_LAST: list[Any] = []
"""The last regression simulation: its key, the objects its ids name, its result."""


def _resampled(public: np.ndarray, n: int) -> np.ndarray:
    """The public sample's codes resampled to ``n`` rows (seeded: public data)."""
    return public[np.random.default_rng(0).integers(0, len(public), n)]


def regression_draws(
    spec: ReleaseSpec,
    transformer: Transformer,
    n: int,
    public: np.ndarray,
    *,
    fit_once: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """A perfect candidate's coefficient and |MAE gap| errors over ``DRAWS`` DP fits.

    The planner's simulation (:class:`~synthflow.criteria.regression.sim.RegressionSim`) of the
    spec's regression fit, on ``public`` resampled to ``n`` rows.
    """
    from synthflow.criteria.regression.sim import RegressionSim

    coef = next(c for c in spec.criteria if c.impl.mechanism == "functional")
    key = (id(public), id(transformer), n, fit_once, coef.epsilon, coef.column, coef.features)
    if _LAST and _LAST[0] == key:  # the TSTR figure reuses the coefficients' simulation
        return _LAST[2]
    sim = RegressionSim(_resampled(public, n), transformer, coef)
    std = sim.bounds_standardization() if fit_once else sim.std_data
    out = sim.perfect_errors(sim.draws(std, coef.epsilon, DRAWS, seed=0))
    _LAST[:] = [key, (public, transformer), out]  # the objects kept: their ids stay theirs
    return out


def reference_errors(c: CriterionSpec, transformer: Transformer, n: int) -> np.ndarray:
    """A perfect candidate's coefficient errors on the reference design (no public sample)."""
    from synthflow.criteria.regression.law import fit_law

    empty = np.zeros((0, len(transformer.domain.names)), dtype=np.int64)
    _, _, feats, xb, yb = regression.design(empty, transformer, str(c.column), c.features)
    std = regression.Standardization.from_bounds(xb, yb)
    u_box, _ = std.box(xb, yb)
    noise = fit_law(c, transformer, std, xb, yb)
    k = len(feats) + 1
    lo, hi = u_box
    mean = (lo + hi) / 2
    second = np.outer(mean, mean)
    np.fill_diagonal(second, (lo**2 + lo * hi + hi**2) / 3)
    second[0, 0] = 1.0
    iu = np.triu_indices(k)
    exact = np.concatenate([n * second[iu], np.zeros(k)])
    truth = regression.model_from_noisy_statistics(exact, std, feats)
    # Judge in a standardisation whose scales are the sd of a uniform over the bounds
    # (the criterion uses D_R's sd; bounds' half-widths would exaggerate).
    judge = regression.Standardization(
        center=std.center,
        scale=tuple(s / math.sqrt(3) for s in std.scale),
        y_center=std.y_center,
        y_scale=std.y_scale / math.sqrt(3),
    )
    # A public simulation: numpy's Laplace (the release sampler's import costs a second).
    gen = np.random.default_rng(0)
    noisy = exact + noise.simulate(gen, (DRAWS, len(exact)))
    intercepts, coefs = regression.fits_from_noisy_statistics(noisy, std, k)
    return regression.coefficient_errors(intercepts, coefs, truth, judge)

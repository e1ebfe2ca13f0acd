"""The regression criteria's noise figures: simulated DP fits of a perfect candidate.

Part of the one noise rule (:mod:`synthflow.acceptance.noise_check`): public data only
(the spec's public sample, or a reference design over the public bounds), seeded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from synthflow.criteria import regression

if TYPE_CHECKING:
    from synthflow.config.model import CriterionSpec, ReleaseSpec
    from synthflow.transform import Transformer

__all__ = [
    "DRAWS",
    "PERFECT_PASS_MIN",
    "NoiseFigure",
    "laplace_perfect_pass",
    "reference_errors",
    "regression_draws",
    "simulated_figure",
]

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

    The planner's simulation (:class:`~synthflow.plan.simulate.RegressionSim`) of the
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


# --- the figure


PERFECT_PASS_MIN = 2 / 3
"""Below this probability that a perfect candidate passes, a criterion is noise-dominated."""


@dataclass(frozen=True, kw_only=True)
class NoiseFigure:
    """How a criterion's release noise compares with a perfect candidate's room."""

    criterion: str
    noise: float
    """Noise sd (Laplace) or a perfect candidate's median error (regression, simulated)."""
    room: float
    """Threshold minus a perfect candidate's value."""
    perfect_pass: float
    """P(a perfect candidate passes the release)."""
    simulated: bool = False

    @property
    def dominated(self) -> bool:
        """Whether the noise decides more than the candidate (see the module docstring)."""
        return self.perfect_pass < PERFECT_PASS_MIN

    def message(self) -> str:
        """One line naming the criterion and the figures (public: spec and n only)."""
        if self.room <= 0 and not self.simulated:  # no value the criterion takes is below it
            return (f"{self.criterion}: its decision threshold lies {-self.room:.3g} below a "
                    "perfect candidate's value, the least it can take: no candidate can pass at "
                    f"this n (a perfect one passes {self.perfect_pass:.0%}, by noise alone); raise "
                    "its threshold (or the epsilon it is derived from)")  # fmt: skip
        return (
            f"{self.criterion}: a perfect candidate passes {self.perfect_pass:.0%} of releases "
            f"(release {'median error' if self.simulated else 'noise sd'} {self.noise:.3g} "
            f"against room {self.room:.3g} below the threshold); raise its epsilon or its threshold"
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> NoiseFigure:
        """Inverse of :meth:`as_dict` (acceptance.json's ``noise_figures``)."""
        return cls(
            criterion=str(d["criterion"]),
            noise=float(d["noise"]),
            room=float(d["room"]),
            perfect_pass=float(d["perfect_pass"]),
            simulated=str(d["noise_is"]).startswith("median"),
        )

    def as_dict(self) -> dict[str, Any]:
        """The figures for JSON (plan.json, acceptance.json)."""
        return {
            "criterion": self.criterion,
            "noise": self.noise,
            "noise_is": "median error (simulated)" if self.simulated else "noise sd",
            "room": self.room,
            "perfect_pass": self.perfect_pass,
            "noise_dominated": self.dominated,
        }


def laplace_perfect_pass(room: float, scale: float) -> float:
    """``P(Lap(scale) < room)``: a perfect candidate's pass probability under Laplace noise."""
    if scale <= 0:
        return float(room > 0)
    return 1.0 - 0.5 * math.exp(-room / scale) if room >= 0 else 0.5 * math.exp(room / scale)


def simulated_figure(c: CriterionSpec, errors: np.ndarray) -> NoiseFigure:
    """The figure of a criterion whose perfect-candidate errors were simulated."""
    errors = np.where(np.isfinite(errors), errors, np.inf)
    return NoiseFigure(
        criterion=c.name,
        noise=float(np.median(errors)),
        room=float(c.threshold),
        perfect_pass=float(np.mean(errors < c.threshold)),
        simulated=True,
    )

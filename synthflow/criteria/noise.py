"""A criterion's noise figure: how often a perfect candidate passes its release.

Part of the one noise rule (:mod:`synthflow.acceptance.noise_check`): public figures
only. A kind whose figure is simulated (the regression fit:
:mod:`synthflow.criteria.regression.figures`) reports it by :func:`simulated_figure`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from synthflow.config.model import CriterionSpec

__all__ = [
    "PERFECT_PASS_MIN",
    "NoiseFigure",
    "laplace_perfect_pass",
    "simulated_figure",
]

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

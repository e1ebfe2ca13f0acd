"""Spy on every DP sampler during a real fit or evaluation ([tests] item 1).

:func:`record_draws` patches :class:`~synthflow.privacy.rng.PrivacyRNG`'s privacy samplers
(``laplace``, ``discrete_laplace``, ``exponential_mechanism``) to record each call
(declared sensitivity, epsilon or scale, size, the values noised) and then call the real
sampler, so the fit runs unchanged. :func:`draws_spend` turns the draws into the epsilon
they really spend, given the test's own knowledge of each statistic's replace-one
sensitivity (never the code's): ``true_sensitivity / scale`` for a (discrete) Laplace
draw, the declared epsilon for an exponential-mechanism draw whose declared sensitivity
is the true one. Tests compare that with the ledger's charges, mechanism by mechanism:
noise drawn at half the scale spends twice what was charged, and a draw calibrated to a
smaller sensitivity than the statistic's is named.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG

NOISE = ("laplace", "discrete_laplace")
SELECT = ("exponential",)


@dataclass(frozen=True)
class Draw:
    """One call of a privacy sampler."""

    kind: str
    """``laplace``, ``discrete_laplace`` or ``exponential``."""
    scale: float | None
    """Laplace: sensitivity / epsilon; discrete Laplace: its scale; else None."""
    sensitivity: float | None
    """Declared sensitivity (Laplace, exponential); None for discrete Laplace."""
    epsilon: float | None
    """Declared epsilon (Laplace, exponential); None for discrete Laplace."""
    values: np.ndarray
    """What was noised (Laplace kinds) or the utilities (exponential)."""
    output: list = dataclasses.field(default_factory=list, compare=False)
    """What the sampler returned (filled in after the call; one element)."""


def record_draws(monkeypatch) -> list[Draw]:
    """Record every privacy-sampler call from now on (the real samplers still run)."""
    draws: list[Draw] = []
    real_laplace = PrivacyRNG.laplace
    real_discrete = PrivacyRNG.discrete_laplace
    real_exponential = PrivacyRNG.exponential_mechanism

    def laplace(self, values, *, sensitivity, epsilon):
        scale = np.asarray(sensitivity, dtype=float) / epsilon
        draws.append(Draw("laplace", float(np.max(scale)), float(np.max(sensitivity)),
                          float(epsilon), np.asarray(values, dtype=float)))  # fmt: skip
        out = real_laplace(self, values, sensitivity=sensitivity, epsilon=epsilon)
        draws[-1].output.append(np.array(out))
        return out

    def discrete_laplace(self, counts, *, scale):
        draws.append(Draw("discrete_laplace", float(scale), None, None, np.asarray(counts)))
        out = real_discrete(self, counts, scale=scale)
        draws[-1].output.append(np.array(out))
        return out

    def exponential(self, utilities, *, sensitivity, epsilon):
        draws.append(Draw("exponential", None, float(sensitivity), float(epsilon),
                          np.asarray(utilities, dtype=float)))  # fmt: skip
        return real_exponential(self, utilities, sensitivity=sensitivity, epsilon=epsilon)

    monkeypatch.setattr(PrivacyRNG, "laplace", laplace)
    monkeypatch.setattr(PrivacyRNG, "discrete_laplace", discrete_laplace)
    monkeypatch.setattr(PrivacyRNG, "exponential_mechanism", exponential)
    return draws


Sensitivity = float | tuple[float, int] | None


def draws_spend(
    draws: list[Draw], true_sensitivity: Callable[[Draw], Sensitivity]
) -> dict[str, float]:
    """Epsilon really spent by the draws, by family (``noise``, ``select``).

    ``true_sensitivity(draw)``: the replace-one sensitivity of the statistic drawn, as
    the test knows it; ``(sensitivity, k)`` for a draw of ``k`` such statistics side by
    side (e.g. d histograms concatenated, each noised at its own share of epsilon: it
    spends ``k`` times one's); None accepts the declared one (a sensitivity tested
    elsewhere on neighbouring datasets, e.g. PrivBayes' mutual information).

    Raises:
        AssertionError: A draw whose declared sensitivity is below the true one.
    """
    spent = {"noise": 0.0, "select": 0.0}
    for d in draws:
        true = true_sensitivity(d)
        unit, k = true if isinstance(true, tuple) else (true, 1)
        if d.sensitivity is not None and unit is not None:
            assert d.sensitivity >= unit - 1e-12, (
                f"{d.kind} draw calibrated to sensitivity {d.sensitivity}, the statistic's "
                f"is {unit}"
            )
        if d.kind in NOISE:
            assert d.scale is not None and d.scale > 0
            sens = unit if unit is not None else d.sensitivity
            assert sens is not None, "a discrete Laplace draw needs the test's sensitivity"
            spent["noise"] += k * sens / d.scale
        else:
            assert d.epsilon is not None
            spent["select"] += k * d.epsilon
    return spent


def charged(ledger: Ledger) -> dict[str, float]:
    """The ledger's epsilon by family (``noise``, ``select``, ``other``)."""
    out = {"noise": 0.0, "select": 0.0, "other": 0.0}
    for c in ledger.charges:
        family = "noise" if c.mechanism in NOISE else "select" if c.mechanism in SELECT else "other"
        out[family] += c.epsilon
    return out


def assert_draws_match_charges(
    draws: list[Draw], ledger: Ledger, true_sensitivity: Callable[[Draw], Sensitivity]
) -> dict[str, float]:
    """Every family's draws spend exactly what the ledger charged for it (rel. 1e-9)."""
    spent, paid = draws_spend(draws, true_sensitivity), charged(ledger)
    for family in ("noise", "select"):
        assert math.isclose(spent[family], paid[family], rel_tol=1e-9, abs_tol=1e-12), (
            f"{family}: the draws spend epsilon {spent[family]:.6g}, the ledger charged "
            f"{paid[family]:.6g}"
        )
    return spent

"""Exact composition by privacy loss distributions (Google's ``dp_accounting.pld``).

One attempt of a release is a sequence of mechanisms, each described here by its public
parameters (:class:`Mechanism`), and composed by their privacy loss distributions (PLDs):
the epsilon at a delta is read off the composed PLD, not off a sum of epsilons or a zCDP
conversion. Every PLD is a *pessimistic* estimate (losses rounded up to a grid of
:data:`DISCRETIZATION`), so the figure is an upper bound on the true epsilon.

Two kinds of mechanism, each with the argument for its PLD:

- **A discrete Gaussian** of parameter ``sigma`` on a vector of integers whose coordinates
  a neighbouring dataset (replace one row) moves by at most ``shifts[j]`` each. The noise
  is independent across coordinates, so the pair of output distributions is a product
  of one-dimensional pairs ``(N_Z(0, sigma^2), N_Z(v_j, sigma^2))`` with ``|v_j| <=
  shifts[j]``. The discrete Gaussian is log-concave, so its shifts have monotone
  likelihood ratios: the most powerful test between shift 0 and shift ``v`` rejects
  above a threshold that does not depend on ``v``, and its power grows with ``|v|``.
  The pair with the largest shift therefore dominates every smaller one (in the sense
  of trade-off functions), the sign does not matter (the noise is symmetric), and a
  product of dominated pairs is dominated by the product of the dominating pairs (Dong,
  Roth and Su 2022, Lemma C.1). The PLD of ``shifts`` is thus the composition of
  one-dimensional discrete Gaussian PLDs of integer sensitivity ``shifts[j]``, as
  ``dp_accounting`` defines them (:func:`discrete_gaussian_pld`, a vectorised form of
  its ``from_discrete_gaussian_mechanism``). A marginal's counts under replace-one:
  two cells move by one, ``shifts = (1, 1)``. The library truncates the noise at
  ``11.6 sigma`` (mass outside at most 1e-30); the mechanism does not, so each such
  coordinate adds at most :data:`TRUNCATION_DELTA` to delta, which :func:`epsilon`
  subtracts from the delta it is asked for.
- **An epsilon-DP mechanism** of any shape (a Laplace criterion, an exponential
  mechanism's selection, a pure-DP generator): every epsilon-DP mechanism is dominated by
  randomized response at epsilon (Kairouz, Oh and Viswanath 2015), whose PLD is
  ``dp_accounting``'s ``from_privacy_parameters(epsilon, 0)``. For a scalar Laplace
  this costs a little (about 0.002 per criterion at the births budgets) against its own
  PLD, and it holds whatever the criterion's noise and sensitivity are.

Adaptive composition: the mechanisms of one attempt run one after another, a later one's
parameters possibly chosen from an earlier one's output (the 1-way ratio's noise scale
from the candidate's smallest count). A mechanism enters with a PLD that dominates it for
*every* such choice (its declared epsilon, or its public shifts and sigma), and PLDs of
dominating pairs compose adaptively (Zhu, Dong and Wang 2022, Theorem 10). A uniform draw
among candidates, made before any data is read, is a mixture: its delta at each epsilon
is at most the worst candidate's (joint convexity of the hockey-stick divergence), so
the attempt's epsilon is the largest of its candidates' (:func:`worst_epsilon`).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "DISCRETIZATION",
    "TRUNCATION_DELTA",
    "Mechanism",
    "compose",
    "discrete_gaussian_pld",
    "epsilon",
    "worst_epsilon",
]

DISCRETIZATION = 1e-4
"""Width of the privacy-loss grid (``dp_accounting``'s default); losses round up to it."""

TRUNCATION_DELTA = 2e-30
"""Delta one truncated discrete Gaussian coordinate may add (its mass beyond 11.6 sigma,
both pairs' sides: at most 1e-30 each, Canonne et al. 2020, supplementary Prop. 1)."""


@dataclass(frozen=True)
class Mechanism:
    """One mechanism of an attempt, by its public parameters (module docstring)."""

    label: str
    epsilon: float = 0.0
    """An epsilon-DP mechanism (0: a discrete Gaussian)."""
    sigma: float = 0.0
    """Discrete Gaussian: its parameter, in the integer units of the noisy vector."""
    shifts: tuple[int, ...] = ()
    """Discrete Gaussian: the most a neighbour moves each coordinate (integers >= 0)."""
    count: int = 1
    """How many times this mechanism runs (identical parameters)."""

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError(f"{self.label}: count ({self.count}) must be >= 1")
        gaussian = self.sigma > 0
        if gaussian == (self.epsilon > 0) or not (
            math.isfinite(self.sigma) and math.isfinite(self.epsilon)
        ):
            raise ValueError(
                f"{self.label}: a mechanism is either epsilon-DP (epsilon > 0) or a discrete "
                f"Gaussian (sigma > 0), got epsilon {self.epsilon} and sigma {self.sigma}"
            )
        if gaussian and (not self.shifts or any(int(k) != k or k < 0 for k in self.shifts)):
            raise ValueError(f"{self.label}: shifts must be integers >= 0, got {self.shifts}")

    @classmethod
    def pure(cls, label: str, epsilon: float, *, count: int = 1) -> Mechanism:
        """An epsilon-DP mechanism (dominated by randomized response at epsilon)."""
        return cls(label=label, epsilon=float(epsilon), count=count)

    @classmethod
    def discrete_gaussian(
        cls, label: str, sigma: float, shifts: Iterable[int], *, count: int = 1
    ) -> Mechanism:
        """A discrete Gaussian of ``sigma`` on coordinates moved by at most ``shifts``."""
        ks = tuple(int(k) for k in shifts)
        return cls(label=label, sigma=float(sigma), shifts=ks, count=count)

    @property
    def truncation_delta(self) -> float:
        """Delta the PLD's truncated noise may leave out (module docstring)."""
        return TRUNCATION_DELTA * len(self.shifts) * self.count

    def to_json(self) -> dict[str, Any]:
        """As published (acceptance.json, plan.json)."""
        doc: dict[str, Any] = {"label": self.label, "count": self.count}
        if self.sigma > 0:
            doc.update(kind="discrete_gaussian", sigma=self.sigma, shifts=list(self.shifts))
        else:
            doc.update(kind="pure", epsilon=self.epsilon)
        return doc


def _dpa_pld() -> Any:
    from dp_accounting.pld import privacy_loss_distribution  # noqa: PLC0415  (import cost)

    return privacy_loss_distribution


@functools.lru_cache(maxsize=4096)
def discrete_gaussian_pld(sigma: float, sensitivity: int) -> Any:
    """``dp_accounting``'s discrete Gaussian PLD (pessimistic, privacy buckets), vectorised.

    The same PMF as ``from_discrete_gaussian_mechanism(sigma, sensitivity)`` (tested
    against it): noise truncated at ``ceil(11.6 sigma)``, its CDF by cumulative
    log-sum-exp, the loss ``k (-k/2 - x) / sigma^2`` of each point rounded *up* to the
    grid, the mass whose loss is infinite (below the shifted support) kept as such. The
    library's loop over points takes seconds at the fit's sigma (tens of thousands of
    grid units); this takes milliseconds.
    """
    from dp_accounting.pld import pld_pmf  # noqa: PLC0415

    if not (sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma ({sigma}) must be finite and > 0")
    k = int(sensitivity)
    if k == 0:  # the coordinate never moves: no loss at all
        return _dpa_pld().PrivacyLossDistribution(
            pld_pmf.create_pmf({0: 1.0}, DISCRETIZATION, 0.0, pessimistic_estimate=True)
        )
    bound = math.ceil(11.6 * sigma)
    if 2 * bound < k:
        raise ValueError(f"sensitivity {k} is beyond the noise's support at sigma {sigma}")
    idx = np.arange(-bound, bound + 1)
    log_pmf = np.append(-np.inf, -0.5 * idx.astype(float) ** 2 / sigma**2)
    log_cdf = np.logaddexp.accumulate(log_pmf)
    cdf = np.exp(log_cdf - log_cdf[-1])  # cdf[i]: P(noise <= idx[i - 1]); cdf[0] = 0

    def noise_cdf(x: np.ndarray) -> np.ndarray:
        pos = np.clip(np.asarray(x) + bound + 1, 0, len(cdf) - 1)
        return cdf[pos]

    # REMOVE adjacency (the library's; symmetric for this noise): mu_upper is the noise
    # moved by k; losses are finite for x in [-bound, bound - k].
    xs = np.arange(-bound - 1, bound - k + 1)
    mass = np.diff(noise_cdf(xs + k))
    loss = k * (-0.5 * k - xs[1:].astype(float)) / sigma**2
    rounded = np.ceil(loss / DISCRETIZATION).astype(np.int64)
    infinity = float(noise_cdf(np.array([-bound - 1 + k]))[0])
    low = int(rounded.min())
    sums = np.bincount(rounded - low, weights=mass)
    keep = np.nonzero(sums)[0]
    probs = {int(i + low): float(sums[i]) for i in keep}
    return _dpa_pld().PrivacyLossDistribution(
        pld_pmf.create_pmf(probs, DISCRETIZATION, infinity, pessimistic_estimate=True)
    )


@functools.lru_cache(maxsize=1024)
def _pure_pld(epsilon: float) -> Any:
    from dp_accounting.pld import common  # noqa: PLC0415

    return _dpa_pld().from_privacy_parameters(
        common.DifferentialPrivacyParameters(epsilon, 0.0),
        value_discretization_interval=DISCRETIZATION,
    )


def _mechanism_pld(m: Mechanism) -> Any:
    if m.sigma <= 0:
        out = _pure_pld(m.epsilon)
    else:
        out = None
        for shift, times in sorted(Counter(m.shifts).items()):
            one = discrete_gaussian_pld(m.sigma, shift)
            part = one.self_compose(times) if times > 1 else one
            out = part if out is None else out.compose(part)
    return out.self_compose(m.count) if m.count > 1 else out


def compose(mechanisms: Sequence[Mechanism]) -> Any:
    """The PLD of ``mechanisms`` run in sequence (adaptively: module docstring)."""
    if not mechanisms:
        raise ValueError("nothing to compose")
    out = None
    for m in mechanisms:
        part = _mechanism_pld(m)
        out = part if out is None else out.compose(part)
    return out


@functools.lru_cache(maxsize=512)
def _epsilon(mechanisms: tuple[Mechanism, ...], delta: float) -> float:
    slack = math.fsum(m.truncation_delta for m in mechanisms)
    if delta == 0:
        return float(compose(mechanisms).get_epsilon_for_delta(0.0))
    if delta <= slack:
        raise ValueError(f"delta ({delta:g}) must exceed the truncated tails' {slack:g}")
    return float(compose(mechanisms).get_epsilon_for_delta(delta - slack))


def epsilon(mechanisms: Sequence[Mechanism], *, delta: float) -> float:
    """The composed mechanisms' epsilon at ``delta`` (an upper bound: pessimistic PLDs).

    Epsilon-DP mechanisms alone: never above basic composition (the sum of their
    epsilons, a bound that holds at any delta); with ``delta`` 0 only those can compose.

    Raises:
        ValueError: For no mechanisms, a delta outside [0, 1), or delta 0 with a Gaussian.
    """
    if not 0 <= delta < 1:
        raise ValueError(f"delta ({delta}) must be in [0, 1)")
    mechs = tuple(mechanisms)
    pure = all(m.sigma <= 0 for m in mechs)
    if delta == 0 and not pure:
        raise ValueError("a discrete Gaussian is not pure DP: give delta > 0")
    figure = _epsilon(mechs, float(delta))
    if pure:  # basic composition holds too, and beats the grid's rounding for a few
        return min(figure, math.fsum(m.epsilon * m.count for m in mechs))
    return figure


def worst_epsilon(attempts: Iterable[Sequence[Mechanism]], *, delta: float) -> float:
    """Epsilon of a uniform draw among ``attempts`` (each a candidate's mechanisms): the max."""
    figures = [epsilon(a, delta=delta) for a in attempts]
    if not figures:
        raise ValueError("no candidate to account")
    return max(figures)

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
  one-dimensional discrete Gaussian PLDs of integer sensitivity ``shifts[j]``
  (:func:`discrete_gaussian_pld`, ``dp_accounting``'s, vectorised). A marginal's
  counts under replace-one: two cells move by one, ``shifts = (1, 1)``. The noise is
  truncated at ``11.6 sigma`` there, not in the mechanism: :func:`epsilon` takes
  :data:`TRUNCATION_DELTA` per coordinate off the delta it is given.
- **An epsilon-DP mechanism** of any shape (a Laplace criterion, an exponential
  mechanism's selection, a pure-DP generator): every epsilon-DP mechanism is dominated by
  randomized response at epsilon (Kairouz, Oh and Viswanath 2015), whose PLD is
  ``dp_accounting``'s ``from_privacy_parameters(epsilon, 0)``: a little dearer than a
  scalar Laplace's own PLD (0.009 over the births criteria), whatever the noise is.

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


def _dpa_pld() -> Any:
    from dp_accounting.pld import privacy_loss_distribution  # noqa: PLC0415  (import cost)

    return privacy_loss_distribution


@functools.lru_cache(maxsize=4096)
def discrete_gaussian_pld(sigma: float, sensitivity: int) -> Any:
    """``dp_accounting``'s discrete Gaussian PLD (pessimistic, privacy buckets), vectorised.

    The PMF of ``from_discrete_gaussian_mechanism(sigma, sensitivity)`` (tested against
    it): noise truncated at ``ceil(11.6 sigma)``, each point's loss ``k (-k/2 - x) /
    sigma^2`` rounded *up* to the grid, infinite losses kept. The library loops over
    points (seconds at the fit's sigma of 1e5); this takes milliseconds.
    """
    from dp_accounting.pld import pld_pmf  # noqa: PLC0415

    if not (sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma ({sigma}) must be finite and > 0")
    k = int(sensitivity)
    if k == 0:  # the coordinate never moves: no loss at all
        return _dpa_pld().PrivacyLossDistribution(
            pld_pmf.create_pmf({0: 1.0}, DISCRETIZATION, 0.0, pessimistic_estimate=True)
        )
    bound, cdf = _noise_cdf(sigma)
    if 2 * bound < k:
        raise ValueError(f"sensitivity {k} is beyond the noise's support at sigma {sigma}")

    def noise_cdf(x: np.ndarray) -> np.ndarray:
        pos = np.clip(np.asarray(x) + bound + 1, 0, len(cdf) - 1)
        return cdf[pos]

    # REMOVE adjacency (the library's; symmetric for this noise): mu_upper is the noise
    # moved by k; losses are finite for x in [-bound, bound - k].
    infinity = float(noise_cdf(np.array([-bound - 1 + k]))[0])
    span = k * (2 * bound - k) / sigma**2 / DISCRETIZATION  # how many grid steps
    if span < 2 * bound:  # fewer buckets than points: sum each bucket's points at once
        probs = _bucket_masses(sigma, k, bound, noise_cdf)
    else:
        xs = np.arange(-bound - 1, bound - k + 1)
        mass = np.diff(noise_cdf(xs + k))
        loss = k * (-0.5 * k - xs[1:].astype(float)) / sigma**2
        rounded = np.ceil(loss / DISCRETIZATION).astype(np.int64)
        low = int(rounded.min())
        sums = np.bincount(rounded - low, weights=mass)
        probs = {int(i + low): float(sums[i]) for i in np.nonzero(sums)[0]}
    return _dpa_pld().PrivacyLossDistribution(
        pld_pmf.create_pmf(probs, DISCRETIZATION, infinity, pessimistic_estimate=True)
    )


def _bucket_masses(sigma: float, k: int, bound: int, noise_cdf: Any) -> dict[int, float]:
    """Each grid value's mass, from the CDF at the buckets' edges (pessimistic).

    The loss falls as x rises: the points whose loss rounds up to ``r`` are the integers
    from ``x_r`` to ``x_(r-1) - 1``, ``x_r`` the first at or above ``-k/2 - r d sigma^2 /
    k``. An edge within float error of an integer sends that point one value up.
    """
    d = DISCRETIZATION
    top = math.ceil(k * (-0.5 * k + bound) / sigma**2 / d) + 1  # loss at x = -bound
    bottom = math.floor(k * (-0.5 * k - (bound - k)) / sigma**2 / d) - 1  # at bound - k
    rs = np.arange(bottom - 1, top + 1)
    a = -0.5 * k - rs * (d * sigma**2 / k)
    edges = np.floor(a + 1e-9 * (np.abs(a) + 1)) + 1  # x_r, float error sent upward
    edges = np.clip(edges, -bound, bound - k + 1).astype(np.int64)
    # bucket r (rs[1:]) holds x in [edges[1:], edges[:-1] - 1]
    mass = noise_cdf(edges[:-1] - 1 + k) - noise_cdf(edges[1:] - 1 + k)
    keep = np.nonzero(mass > 0)[0]
    return {int(rs[1:][i]): float(mass[i]) for i in keep}


@functools.lru_cache(maxsize=8)
def _noise_cdf(sigma: float) -> tuple[int, np.ndarray]:
    """The truncation bound and CDF of the library's truncated discrete Gaussian.

    ``cdf[i]`` is P(noise <= i - bound - 1), ``cdf[0] = 0``; one per sigma, shared by
    every sensitivity (the fit's coordinates all have the same sigma).
    """
    bound = math.ceil(11.6 * sigma)
    idx = np.arange(-bound, bound + 1)
    log_pmf = np.append(-np.inf, -0.5 * idx.astype(float) ** 2 / sigma**2)
    log_cdf = np.logaddexp.accumulate(log_pmf)
    cdf = np.exp(log_cdf - log_cdf[-1])
    cdf.setflags(write=False)
    return bound, cdf


@functools.lru_cache(maxsize=1024)
def _pure_pld(epsilon: float) -> Any:
    from dp_accounting.pld import common  # noqa: PLC0415

    return _dpa_pld().from_privacy_parameters(
        common.DifferentialPrivacyParameters(epsilon, 0.0),
        value_discretization_interval=DISCRETIZATION,
    )


@functools.lru_cache(maxsize=64)
def _composed(mechanisms: tuple[Mechanism, ...]) -> Any:
    """Composition is commutative: each distinct one-dimensional pair is self-composed once."""
    gaussians: Counter[tuple[float, int]] = Counter()
    pures: Counter[float] = Counter()
    for m in mechanisms:
        if m.sigma > 0:
            for shift, times in Counter(m.shifts).items():
                gaussians[(m.sigma, shift)] += times * m.count
        else:
            pures[m.epsilon] += m.count
    parts = [(discrete_gaussian_pld(s, k), n) for (s, k), n in sorted(gaussians.items())]
    parts += [(_pure_pld(e), n) for e, n in sorted(pures.items())]
    out = None
    for one, times in parts:
        part = one.self_compose(times) if times > 1 else one
        out = part if out is None else out.compose(part)
    return out


def _epsilon(parts: Sequence[tuple[Mechanism, ...]], delta: float) -> float:
    """Epsilon of the composition of ``parts`` (each composed once and cached)."""
    mechanisms = [m for part in parts for m in part]
    slack = math.fsum(m.truncation_delta for m in mechanisms)
    if delta > 0 and delta <= slack:
        raise ValueError(f"delta ({delta:g}) must exceed the truncated tails' {slack:g}")
    out = None
    for part in parts:
        if part:
            out = _composed(part) if out is None else out.compose(_composed(part))
    if out is None:
        raise ValueError("nothing to compose")
    return float(out.get_epsilon_for_delta(max(delta - slack, 0.0)))


def epsilon(
    mechanisms: Sequence[Mechanism], *, delta: float, shared: Sequence[Mechanism] = ()
) -> float:
    """The composed mechanisms' epsilon at ``delta`` (an upper bound: pessimistic PLDs).

    ``shared``: more mechanisms composed with them (kept composed between calls, so that
    several candidates with the same criteria compose those once). Epsilon-DP mechanisms
    alone: never above basic composition (the sum of their epsilons, a bound that holds at
    any delta); with ``delta`` 0 only those can compose.

    Raises:
        ValueError: For no mechanisms, a delta outside [0, 1), or delta 0 with a Gaussian.
    """
    if not 0 <= delta < 1:
        raise ValueError(f"delta ({delta}) must be in [0, 1)")
    mechs = (*mechanisms, *shared)
    pure = all(m.sigma <= 0 for m in mechs)
    if delta == 0 and not pure:
        raise ValueError("a discrete Gaussian is not pure DP: give delta > 0")
    figure = _epsilon([tuple(mechanisms), tuple(shared)], float(delta))
    if pure:  # basic composition holds too, and beats the grid's rounding for a few
        return min(figure, math.fsum(m.epsilon * m.count for m in mechs))
    return figure


def worst_epsilon(
    attempts: Iterable[Sequence[Mechanism]], *, delta: float, shared: Sequence[Mechanism] = ()
) -> float:
    """Epsilon of a uniform draw among ``attempts``: the largest of theirs (module docstring).

    Each attempt is a candidate's own mechanisms, all followed by ``shared``.
    """
    figures = [epsilon(a, delta=delta, shared=shared) for a in attempts]
    if not figures:
        raise ValueError("no candidate to account")
    return max(figures)

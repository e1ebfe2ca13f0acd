"""Accounting beyond a ledger's sums: DP-SGD's (epsilon, delta) and Renyi DP curves.

Two jobs, both on Google's ``dp-accounting``: the (epsilon, delta) of DP-SGD (its PLD
accountant), and the Renyi DP curves that private selection and zCDP composition read
(below). DP-SGD as :mod:`synthflow.generators.dpsgd` runs it: every step includes each row
independently with probability ``sample_rate`` (Poisson subsampling), clips each included
row's gradient to L2 norm ``C`` and adds Gaussian noise of standard deviation
``noise_multiplier * C`` to their sum. One step is the Poisson-subsampled Gaussian
mechanism; ``steps`` of them compose.

The neighbouring relation is the project's: **replace one row** (n is public). Replacing
a row moves the clipped sum by up to 2C when that row is drawn, which the privacy loss
distribution (PLD) accountant analyses exactly for Poisson subsampling
(``NeighboringRelation.REPLACE_ONE``; its RDP accountant supports only add/remove-one
for this event). Epsilon is about twice the add/remove figure that DP-SGD papers quote.

Private selection over candidates that are not all pure DP (Papernot and Steinke,
"Hyperparameter Tuning with Renyi Differential Privacy", ICLR 2022) needs each
candidate's Renyi DP curve under the same relation: :func:`pure_renyi` (any
epsilon-DP mechanism), :func:`zcdp_renyi` (rho-zCDP), :func:`dpsgd_renyi` (DP-SGD,
replace-one, from ``dp-accounting``'s add/remove curve), :func:`repeat_and_select_renyi`
(their Theorem 2) and :func:`renyi_epsilon` (conversion to (epsilon, delta)).

``dp-accounting`` is imported on first use (a base dependency).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "RENYI_ORDERS",
    "dpsgd_epsilon",
    "dpsgd_event",
    "dpsgd_max_steps",
    "dpsgd_renyi",
    "pure_renyi",
    "renyi_epsilon",
    "repeat_and_select_renyi",
    "zcdp_renyi",
]

RENYI_ORDERS: tuple[float, ...] = tuple(
    [1 + k / 20 for k in range(1, 20)]  # 1.05 .. 1.95
    + [2 + k / 4 for k in range(0, 33)]  # 2 .. 10
    + list(range(11, 33))
    + [40, 48, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096]
)
"""Renyi orders at which curves are evaluated (the Papernot-Steinke bound minimises its
constant over all of them and the conversion to (epsilon, delta) picks the best)."""


def _dpa() -> Any:
    try:
        import dp_accounting  # noqa: PLC0415  (optional extra)
        import dp_accounting.pld  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "this accounting needs dp-accounting (a synthflow dependency): pip install -e ."
        ) from exc
    return dp_accounting


def _check(sample_rate: float, noise_multiplier: float, steps: int) -> None:
    if not 0 < sample_rate <= 1:
        raise ValueError(f"sample_rate ({sample_rate}) must be in (0, 1]")
    if not noise_multiplier > 0:
        raise ValueError(f"noise_multiplier ({noise_multiplier}) must be > 0")
    if steps < 0:
        raise ValueError(f"steps ({steps}) must be >= 0")


def dpsgd_event(*, sample_rate: float, noise_multiplier: float, steps: int) -> Any:
    """The ``dp_accounting`` event of ``steps`` Poisson-subsampled Gaussian steps."""
    _check(sample_rate, noise_multiplier, steps)
    dpa = _dpa()
    step = dpa.PoissonSampledDpEvent(sample_rate, dpa.GaussianDpEvent(noise_multiplier))
    return dpa.SelfComposedDpEvent(step, steps)


@functools.lru_cache(maxsize=4096)
def dpsgd_epsilon(
    *, sample_rate: float, noise_multiplier: float, steps: int, delta: float
) -> float:
    """Epsilon at ``delta`` of ``steps`` DP-SGD steps, replace-one neighbours (PLD).

    >>> round(dpsgd_epsilon(sample_rate=0.05, noise_multiplier=5, steps=5000, delta=1e-6), 2)
    7.28
    """
    if not 0 < delta < 1:
        raise ValueError(f"delta ({delta}) must be in (0, 1)")
    if steps == 0:
        return 0.0
    dpa = _dpa()
    accountant = dpa.pld.PLDAccountant(
        neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE,
        value_discretization_interval=_pld_interval(noise_multiplier),
    )
    accountant.compose(
        dpsgd_event(sample_rate=sample_rate, noise_multiplier=noise_multiplier, steps=steps)
    )
    return float(accountant.get_epsilon(delta))


def _pld_interval(noise_multiplier: float) -> float:
    """The PLD's discretization interval: dp-accounting's 1e-4, coarser for tiny noise.

    The privacy loss of one step spans about ``(2 / sigma)^2`` (replace-one moves the
    clipped sum by 2C), and the PLD holds one value per interval: at sigma 1e-3 the
    default would allocate tens of GiB. A coarser interval keeps about a million
    values; the discretization stays pessimistic, so epsilon is still an upper bound.
    """
    return max(1e-4, (2.0 / noise_multiplier) ** 2 / 1e6)


def dpsgd_max_steps(
    *, sample_rate: float, noise_multiplier: float, epsilon: float, delta: float, cap: int
) -> int:
    """Most steps (at most ``cap``) whose epsilon at ``delta`` stays <= ``epsilon``.

    Epsilon grows with the number of steps, so a binary search finds the boundary.
    Returns 0 when not even one step fits.
    """

    def eps(t: int) -> float:
        return dpsgd_epsilon(
            sample_rate=sample_rate, noise_multiplier=noise_multiplier, steps=t, delta=delta
        )

    if cap < 1 or eps(1) > epsilon:
        return 0
    if eps(cap) <= epsilon:
        return cap
    lo, hi = 1, cap  # eps(lo) <= epsilon < eps(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if eps(mid) <= epsilon else (lo, mid)
    return lo


def _orders(orders: Sequence[float]) -> np.ndarray:
    a = np.asarray(orders, dtype=float)
    if a.ndim != 1 or not len(a) or not np.all(a > 1) or not np.all(np.isfinite(a)):
        raise ValueError("Renyi orders must be a non-empty list of finite numbers > 1")
    return a


def pure_renyi(epsilon: float, orders: Sequence[float] = RENYI_ORDERS) -> np.ndarray:
    """Renyi DP curve of any epsilon-DP mechanism (same neighbouring relation).

    For each pair of neighbours an epsilon-DP mechanism is a post-processing of binary
    randomized response with ``P(truth) = e^eps / (1 + e^eps)`` (Kairouz, Oh and
    Viswanath 2015), so by data processing its Renyi divergence of order ``a`` is at
    most randomized response's: ``log((e^{a eps} + e^{(1-a) eps}) / (1 + e^eps)) / (a - 1)``,
    which is below both ``eps`` and ``a eps^2 / 2``.
    """
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon ({epsilon}) must be finite and >= 0")
    a = _orders(orders)
    if epsilon == 0:
        return np.zeros_like(a)
    log_mgf = np.logaddexp(a * epsilon, (1 - a) * epsilon) - np.logaddexp(0.0, epsilon)
    return np.minimum(log_mgf / (a - 1), epsilon)


def zcdp_renyi(rho: float, orders: Sequence[float] = RENYI_ORDERS) -> np.ndarray:
    """Renyi DP curve of rho-zCDP: ``rho * a`` (Bun and Steinke 2016)."""
    if not (math.isfinite(rho) and rho >= 0):
        raise ValueError(f"rho ({rho}) must be finite and >= 0")
    return rho * _orders(orders)


def _add_remove_renyi(
    sample_rate: float, noise_multiplier: float, steps: int, orders: np.ndarray
) -> np.ndarray:
    dpa = _dpa()
    from dp_accounting import rdp  # noqa: PLC0415

    accountant = rdp.RdpAccountant(
        orders=[float(o) for o in orders],
        neighboring_relation=dpa.NeighboringRelation.ADD_OR_REMOVE_ONE,
    )
    accountant.compose(
        dpsgd_event(sample_rate=sample_rate, noise_multiplier=noise_multiplier, steps=steps)
    )
    return np.asarray(accountant.rdp, dtype=float)


def dpsgd_renyi(
    *,
    sample_rate: float,
    noise_multiplier: float,
    steps: int,
    orders: Sequence[float] = RENYI_ORDERS,
) -> np.ndarray:
    """Renyi DP curve of ``steps`` DP-SGD steps for **replace-one** neighbours.

    ``dp-accounting``'s RDP accountant gives the Poisson-subsampled Gaussian's curve
    for add/remove-one only (a bound on both directions: Mironov, Talwar and Zhang
    2019). Replacing a row is removing it, then adding another, so Mironov's weak
    triangle inequality ("Renyi Differential Privacy", 2017, Proposition 11, with
    p = q = 2) bounds the replace-one divergence of order ``a`` by
    ``(a - 1/2) / (a - 1) * e(2a) + e(2a - 1)``, with ``e`` the add/remove curve.
    """
    _check(sample_rate, noise_multiplier, steps)
    a = _orders(orders)
    if steps == 0:
        return np.zeros_like(a)
    return np.array(
        _dpsgd_renyi(float(sample_rate), float(noise_multiplier), int(steps), tuple(a.tolist()))
    )


@functools.lru_cache(maxsize=256)
def _dpsgd_renyi(
    sample_rate: float, noise_multiplier: float, steps: int, orders: tuple[float, ...]
) -> tuple[float, ...]:
    a = np.asarray(orders)
    doubled = np.concatenate([2 * a, 2 * a - 1])
    both = _add_remove_renyi(sample_rate, noise_multiplier, steps, doubled)
    at_2a, at_2a_minus_1 = both[: len(a)], both[len(a) :]
    return tuple(((a - 0.5) / (a - 1) * at_2a + at_2a_minus_1).tolist())


def _geometric_check(stop_probability: float) -> None:
    if not 0 < stop_probability < 1:
        raise ValueError(
            f"stop probability ({stop_probability}) must be in (0, 1): the number of attempts "
            "must have a finite mean"
        )


def repeat_and_select_renyi(
    curve: Sequence[float] | np.ndarray,
    *,
    stop_probability: float,
    orders: Sequence[float] = RENYI_ORDERS,
    eta: float = 1.0,
) -> np.ndarray:
    """Renyi DP curve of repeating a mechanism a geometric number of times, keeping the best.

    Papernot and Steinke (ICLR 2022), Theorem 2, with the truncated negative binomial of
    shape ``eta`` (selection uses ``eta = 1``, the geometric distribution, ``P(K = k) =
    g (1 - g)^(k-1)``, mean ``1 / g``; other shapes, mean ``eta (1 - g) / (g (1 -
    g^eta))``, only for benchmarks/selection_accounting.py): if one run is
    ``(a, e(a))``-RDP for all orders, the repetition is
    ``(a, e(a) + (1 + eta) min_b [(1 - 1/b) e(b) + log(1/g) / b] + log(E[K]) / (a - 1))``-RDP;
    a curve is non-decreasing in the order, so each order also takes the smallest value
    of any higher order.
    """
    _geometric_check(stop_probability)
    a = _orders(orders)
    e = np.asarray(curve, dtype=float)
    if e.shape != a.shape:
        raise ValueError(f"curve has {e.size} values for {a.size} orders")
    if not eta > 0:
        raise ValueError(f"eta ({eta}) must be > 0")
    g = stop_probability
    mean = 1.0 / g if eta == 1 else eta * (1 - g) / (g * (1 - g**eta))
    log_inv_gamma = -math.log(stop_probability)
    constant = (1 + eta) * float(np.min((1 - 1 / a) * e + log_inv_gamma / a))
    out = e + math.log(mean) / (a - 1) + constant
    order = np.argsort(a)
    # smallest value at this or any higher order (monotonicity of Renyi divergence)
    suffix_min = np.minimum.accumulate(out[order][::-1])[::-1]
    result = np.empty_like(out)
    result[order] = suffix_min
    return result


def renyi_epsilon(
    curve: Sequence[float] | np.ndarray, *, delta: float, orders: Sequence[float] = RENYI_ORDERS
) -> tuple[float, float]:
    """(epsilon, best order) of a Renyi DP curve at ``delta`` (``dp-accounting``'s conversion)."""
    if not 0 < delta < 1:
        raise ValueError(f"delta ({delta}) must be in (0, 1)")
    _dpa()
    from dp_accounting.rdp import rdp_privacy_accountant  # noqa: PLC0415

    a = _orders(orders)
    eps, order = rdp_privacy_accountant.compute_epsilon(list(a), list(np.asarray(curve)), delta)
    return float(eps), float(order)

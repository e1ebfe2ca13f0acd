"""(epsilon, delta) accounting of DP-SGD with Google's ``dp-accounting`` (PLD accountant).

DP-SGD as :mod:`synthflow.generators.dpsgd` runs it: every step includes each row
independently with probability ``sample_rate`` (Poisson subsampling), clips each included
row's gradient to L2 norm ``C`` and adds Gaussian noise of standard deviation
``noise_multiplier * C`` to their sum. One step is the Poisson-subsampled Gaussian
mechanism; ``steps`` of them compose.

The neighbouring relation is the project's: **replace one row** (n is public). Replacing
a row moves the clipped sum by up to 2C when that row is drawn, which the privacy loss
distribution (PLD) accountant analyses exactly for Poisson subsampling
(``NeighboringRelation.REPLACE_ONE``; its RDP accountant supports only add/remove-one
for this event). Epsilon is about twice the add/remove figure that DP-SGD papers quote.

``dp-accounting`` is imported on first use (the ``gan`` extra installs it).
"""

from __future__ import annotations

from typing import Any

__all__ = ["dpsgd_epsilon", "dpsgd_event", "dpsgd_max_steps"]


def _dpa() -> Any:
    try:
        import dp_accounting  # noqa: PLC0415  (optional extra)
        import dp_accounting.pld  # noqa: PLC0415
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError('DP-SGD accounting needs dp-accounting: pip install -e ".[gan]"') from exc
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
    accountant = dpa.pld.PLDAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    accountant.compose(
        dpsgd_event(sample_rate=sample_rate, noise_multiplier=noise_multiplier, steps=steps)
    )
    return float(accountant.get_epsilon(delta))


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

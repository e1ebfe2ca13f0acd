"""rho-zCDP to (epsilon, delta) and back: the conversion the Gaussian mechanisms use.

A mechanism made of discrete Gaussian measurements (the ``workload`` generator with
``noise: gaussian``, the functional mechanism with a Gaussian fit) is rho-zCDP; it is
charged as (epsilon, delta) through :func:`zcdp_epsilon`, and calibrated to a budget
through :func:`zcdp_rho`, both on :func:`synthflow.privacy.accounting.renyi_epsilon` (the
conversion of ``dp-accounting``).
"""

from __future__ import annotations

import functools
import math

from synthflow.privacy.accounting import renyi_epsilon, zcdp_renyi

__all__ = ["zcdp_epsilon", "zcdp_rho"]


def zcdp_epsilon(rho: float, *, delta: float) -> float:
    """Epsilon at ``delta`` of a rho-zCDP mechanism (its Renyi curve through :func:`renyi_epsilon`).

    ``dp-accounting``'s conversion of the curve ``rho * a`` at the orders
    :data:`synthflow.privacy.accounting.RENYI_ORDERS` (the improved bound of Canonne, Kamath and
    Steinke 2020, Prop. 12, that its RDP accountant implements): a valid (epsilon, delta)
    guarantee, within a few percent of the best one for rho-zCDP (the orders are a grid).
    """
    if rho == 0:
        return 0.0
    eps, _ = renyi_epsilon(zcdp_renyi(rho), delta=delta)
    return eps


@functools.lru_cache(maxsize=256)
def zcdp_rho(epsilon: float, *, delta: float) -> float:
    """The largest rho whose :func:`zcdp_epsilon` at ``delta`` is at most ``epsilon``.

    Bisection (60 halvings of a bracket that starts at ``[0, epsilon]``; rho-zCDP
    implies (rho + 2 sqrt(rho log(1/delta)), delta)-DP, so rho <= epsilon always
    suffices as the upper end). The result is rounded *down*: a mechanism calibrated to
    it is at most (epsilon, delta)-DP by :func:`zcdp_epsilon`.
    """
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon ({epsilon}) must be finite and > 0")
    if not 0 < delta < 1:
        raise ValueError(f"delta ({delta}) must be in (0, 1)")
    lo, hi = 0.0, float(epsilon)
    for _ in range(60):
        mid = (lo + hi) / 2
        if zcdp_epsilon(mid, delta=delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo

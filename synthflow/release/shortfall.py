"""What a selection costs beyond a budget, in words: epsilon and delta checked alike."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from synthflow.release.cost import SelectionCost

__all__ = ["shortfall"]


def shortfall(
    cost: SelectionCost,
    *,
    epsilon: float,
    delta: float,
    where: str,
    total: tuple[float, float] | None = None,
) -> str:
    """What ``cost`` needs beyond ``epsilon`` and ``delta`` (left in ``where``); '' if none.

    Epsilon and delta are checked alike: a selection whose deltas (a Gaussian generator,
    a Gaussian regression fit) add up past the budget's delta is refused as one whose
    epsilons do, and the message names which. ``total``: the (epsilon, delta) totals
    when ``epsilon`` and ``delta`` are what is left of them.
    """
    parts = []
    left = " left" if total is not None else ""
    if cost.total > epsilon + 1e-12:
        of = f" of its total {total[0]:g}" if total is not None else ""
        parts.append(
            f"epsilon {cost.total:.6g} ({cost.to_json()['formula']}) but {where} has "
            f"{epsilon:.6g}{left}{of}"
        )
    if cost.total_delta > delta * (1 + 1e-9) + 1e-300:
        fit = f", regression fit {cost.fit_delta:g}" if cost.fit_delta else ""
        of = f" of its total {total[1]:g}" if total is not None else ""
        parts.append(
            f"delta {cost.total_delta:.3g} (attempt {cost.attempt_delta:g}{fit}) but {where} "
            f"has delta {delta:.3g}{left}{of}"
        )
    return "; and ".join(parts)

"""What a planned point costs as ``release`` charges it, at the asked P(release) and others.

:func:`exact_cost` is the chosen point's cost by the release's own accounting
(:func:`synthflow.release.cost.selection_cost`); :func:`by_release_probability` prices the
cheapest plan at each of :data:`RELEASE_LEVELS` beside the asked one (plan.json's
``by_release_probability``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from synthflow.plan.optimize import Planner, PlanOptions
from synthflow.release.cost import selection_cost
from synthflow.space import find_configuration

__all__ = ["RELEASE_LEVELS", "by_release_probability", "exact_cost"]


RELEASE_LEVELS = (0.8, 0.9, 0.95, 0.99)
"""P(release) targets whose cheapest plan ``plan`` also reports, beside the one asked for."""


def by_release_probability(
    planner: Planner,
    chosen: Any,
    *,
    spec: Any,
    rows: int,
    options: PlanOptions,
    progress: Any,
) -> list[dict[str, Any]]:
    """The cheapest plan at each of :data:`RELEASE_LEVELS` and the requested target.

    Each total is the exact cost ``release`` would charge (:func:`exact_cost`); None
    where no plan within the options (the total cap included) reaches that probability.
    """
    out = []
    for level in sorted({*RELEASE_LEVELS, options.release_probability}):
        asked = level == options.release_probability
        point = chosen if asked else planner.cheapest_at(level)
        row: dict[str, Any] = {"release_probability": level, "requested": asked}
        problem = "no plan within the options"
        if point is not None:
            cost, problem = exact_cost(spec, point, rows, point.stop_probability, options.max_total)
        if point is None or problem:
            row.update(total_epsilon=None, generator_epsilon=None, mode=None)
        else:
            row.update(
                total_epsilon=round(cost.total, 6),
                generator_epsilon=point.generator_epsilon,
                mode=point.mode,
                predicted_release_probability=round(point.release_probability, 4),
                # a failed single attempt spends its total and publishes nothing: what one
                # published release costs on average when failures are tried again
                epsilon_per_release=round(cost.total / point.release_probability, 6),
            )
        progress(
            f"at P(release) >= {level:g}: "
            + (f"total {row['total_epsilon']:.3f} ({row['mode']})" if row["mode"] else problem)
        )
        out.append(row)
    return out


def exact_cost(
    spec: Any, chosen: Any, rows: int, stop_probability: float, max_total: float | None
) -> tuple[Any, str]:
    """The chosen point's cost as ``release`` computes it, and what is wrong ("" if nothing).

    :func:`~synthflow.release.cost.selection_cost` at the planned budgets and shortlist,
    with the public file's row count standing in for the private n: the planner's own
    total for Liu-Talwar and single attempts (a zCDP shortlist's joint composition
    included); Papernot-Steinke's for a many-attempt shortlist with a GAN, MST or AIM,
    whose total the search did not see, checked against the spec's total and
    ``--max-total``.
    """
    budgeted = dataclasses.replace(
        spec,
        privacy=dataclasses.replace(spec.privacy, generator_epsilon=chosen.generator_epsilon),
        criteria=tuple(
            dataclasses.replace(c, epsilon=chosen.epsilons[c.name]) for c in spec.criteria
        ),
    )
    candidates = [find_configuration(spec, cid) for cid in chosen.candidates]
    cost = selection_cost(
        budgeted,
        fit_once=chosen.fit_once,
        candidates=candidates,
        rows=rows,
        stop_probability=stop_probability,
    )
    if not cost.papernot_steinke:
        return cost, ""
    cap = min(spec.privacy.total_epsilon, max_total if max_total is not None else math.inf)
    problem = ""
    if cost.total > cap:
        problem = (
            f"the shortlist holds (epsilon, delta) candidates, so selection is accounted by "
            f"Papernot-Steinke: at the planned budgets it costs epsilon {cost.total:.3f} "
            f"(delta {cost.total_delta:g}, stop probability {stop_probability:g}, {rows} "
            f"rows), above the cap {cap:g}; raise --stop-probability, shortlist pure-DP "
            "generators only, or raise the spec's total"
        )
    return cost, problem

"""Whether a plan was made for data of this size (the release's pre-flight)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["PLAN_ROWS_TOLERANCE", "plan_rows_problem"]

PLAN_ROWS_TOLERANCE = 0.2
"""How far (relative) the release's n may be from its plan's before the pre-flight refuses."""


def plan_rows_problem(plan: dict[str, Any] | None, rows: int) -> tuple[str, bool]:
    """(what to say, whether to refuse) when the data's size is not the plan's.

    A plan's predictions (pass and release probabilities) were simulated at its public
    file's row count (``noise_figures``' n); faithfulness and every noise scale move with
    n, so at another size they were not measured. n is public (replace-one), so this is
    decided before anything is charged: more than :data:`PLAN_ROWS_TOLERANCE` apart is
    refused without ``--force``, more than half that is said.
    """
    if plan is None:
        return "", False
    figures = plan.get("noise_figures") or []
    planned = [int(f["n"]) for f in figures if isinstance(f, dict) and "n" in f]
    if not planned or rows <= 0:
        return "", False
    n = planned[0]
    off = abs(rows - n) / n
    if off <= PLAN_ROWS_TOLERANCE / 2:
        return "", False
    from synthflow.release.shipped import recipe  # noqa: PLC0415

    name = Path(str(plan.get("source_spec", {}).get("path", ""))).stem
    fix = (
        f"synthflow ship-plan {name} --rows {rows} --out DIR, then release DIR's spec with "
        "its --candidates and --plan"
        if name and recipe(name) is not None
        else "sweep public data of this size and run synthflow plan again"
    )
    return (
        f"the plan was made for {n:,} rows and these data have {rows:,} ({off:.0%} apart; n "
        f"is public): its predicted P(release) {float(plan['release_probability']):.2f} was "
        "not measured at this size (faithfulness and the noise move with n). Remake the plan "
        f"at this size first ({fix})",
        off > PLAN_ROWS_TOLERANCE,
    )

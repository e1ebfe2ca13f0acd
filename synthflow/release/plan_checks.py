"""The release's pre-flight on its plan: the plan.json read, checked and held to.

A release made from a plan (``synthflow plan``) runs the plan's mechanism: its fit mode
and stop probability, on its candidates, within its budget, at its row count. Each is
checked here before anything is charged (:mod:`synthflow.release.preflight`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from synthflow.errors import (
    ConfigError,
)

__all__ = [
    "PLAN_ROWS_TOLERANCE",
    "check_plan_holds",
    "plan_rows_problem",
    "planned_options",
    "read_plan",
]

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


def check_plan_holds(
    plan: dict[str, Any],
    total: float,
    candidate_ids: list[str],
    *,
    delta: float = 0.0,
    theorem: str | None = None,
) -> None:
    """A planned release runs the plan's mechanism, on its candidates, within its budget."""
    planned = plan.get("candidates")
    if isinstance(planned, dict) and sorted(planned) != sorted(candidate_ids):
        raise ConfigError(
            "the candidates file differs from the plan's candidates; give the candidates.yaml "
            "written beside that plan.json (nothing was spent)"
        )
    planned_delta = plan.get("total_delta")
    if planned_delta is not None:  # 0 for a pure-DP plan: then no delta may be spent
        if delta > float(planned_delta) * (1 + 1e-9):
            raise ConfigError(
                f"this release would spend delta {delta:.3g} but its plan says "
                f"{float(planned_delta):.3g}; give the spec written beside that plan.json, or "
                "re-plan. Nothing was spent"
            )
    if theorem is not None and plan.get("selection") not in (None, theorem):
        raise ConfigError(
            f"this release would run {theorem} but its plan chose {plan['selection']}; drop "
            "the options that change it or re-plan. Nothing was spent"
        )
    if total > float(plan["total_epsilon"]) + 1e-9:
        raise ConfigError(
            f"this release would cost epsilon {total:.6g} but its plan says "
            f"{float(plan['total_epsilon']):.6g} (the cost depends on the row count, which "
            "differs from the plan's); re-plan with the release's row count. Nothing was spent"
        )


def planned_options(
    plan: dict[str, Any] | None, fit_once: bool | None, stop_probability: float | None
) -> tuple[bool | None, float | None]:
    """The fit mode and stop probability a planned release runs with: the plan's.

    An option that changes the planned mechanism (the fit mode, another stop probability:
    a single attempt against Papernot-Steinke or Liu-Talwar) is refused, before any
    charge; an option equal to the plan's is accepted.
    """
    if plan is None:
        return fit_once, stop_probability
    if fit_once is not None and bool(fit_once) != bool(plan["fit_once"]):
        raise ConfigError(
            f"--fit-once {'given' if fit_once else 'absent'} but the plan was made for a "
            f"regression fit {'once per release' if plan['fit_once'] else 'per candidate'}; "
            "drop the flag (the plan's choice is used) or re-plan"
        )
    planned = float(plan.get("stop_probability", plan["options"]["stop_probability"]))
    if stop_probability is not None and float(stop_probability) != planned:
        raise ConfigError(
            f"--stop-probability {stop_probability:g} but the plan was made for "
            f"{planned:g} ({'a single attempt' if planned == 1 else 'many attempts'}); "
            "drop the option (the plan's is used) or re-plan. Nothing was spent"
        )
    return bool(plan["fit_once"]), planned


def read_plan(path: str | Path, spec: Any) -> dict[str, Any]:
    """plan.json, checked to be the plan that wrote ``spec``."""
    p = Path(path)
    try:
        plan = json.loads(p.read_text("utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"--plan {str(p)!r} does not exist; give plan.json from 'synthflow plan'"
        ) from None
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else type(exc).__name__
        raise ConfigError(f"--plan {str(p)!r} is not a plan.json ({why})") from None
    needed = {"planned_spec_sha256", "fit_once", "options", "total_epsilon", "release_probability"}
    if not isinstance(plan, dict) or not needed <= set(plan):
        raise ConfigError(f"--plan {str(p)!r} is not a plan.json written by 'synthflow plan'")
    _check_plan_types(p, plan)
    if plan["planned_spec_sha256"] != spec.sha256:
        raise ConfigError(
            f"--plan {str(p)!r} planned another spec (sha256 "
            f"{plan['planned_spec_sha256'][:12]}..., {spec.path} is {spec.sha256[:12]}...): "
            "give the spec.yaml written beside that plan"
        )
    return plan


def _check_plan_types(path: Path, plan: dict[str, Any]) -> None:
    """Each field release reads has the type 'synthflow plan' writes (else one line, exit 2)."""

    def number(value: Any) -> bool:  # finite: json reads NaN and Infinity as floats
        return (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        )

    options = plan["options"]
    gamma: Any = (
        plan.get("stop_probability", options.get("stop_probability", 0.0))
        if isinstance(options, dict)
        else None
    )
    problems = [
        name
        for name, ok in (
            ("options (a mapping)", isinstance(options, dict)),
            ("planned_spec_sha256 (text)", isinstance(plan["planned_spec_sha256"], str)),
            ("fit_once (true or false)", isinstance(plan["fit_once"], bool)),
            ("total_epsilon (a number)", number(plan["total_epsilon"])),
            ("total_delta (a number)", plan.get("total_delta") is None
             or number(plan["total_delta"])),
            ("release_probability (a number)", number(plan["release_probability"])),
            ("stop_probability (a number in [0, 1])", number(gamma) and 0 <= float(gamma) <= 1),
            ("candidates (a mapping)", plan.get("candidates") is None
             or isinstance(plan["candidates"], dict)),
        )
        if not ok
    ]  # fmt: skip
    if problems:
        raise ConfigError(
            f"--plan {str(path)!r} is damaged or edited: {', '.join(problems)} "
            "expected; give the plan.json that 'synthflow plan' wrote (nothing was spent)"
        )

"""plan.html: the frontier a steward chooses a budget from.

Rendered from ``templates/plan_report.html.j2`` in the house style of the other reports
(:mod:`synthflow._html`: one stylesheet, plots as embedded PNGs, every value escaped).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from synthflow._html import Markup, png, render
from synthflow.plan.optimize import PlanPoint

__all__ = ["write_plan_html"]

_LABEL, _TICK, _LEGEND = 12, 10, 10
_EPS_AXIS = "total epsilon of the release (privacy loss; log scale)"
_BLANK_REASON = (
    "these criteria are decided on the noisy regression fit they share, so the planner "
    "draws their noise together with that fit and predicts them jointly, not one by one. "
    "Their joint pass is part of the per-attempt pass probability above."
)


def _epsilon_axis(ax: Any, values: list[float]) -> None:
    """A log x axis of epsilon with plain tick labels (0.5, 1, 2), three or more."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter  # noqa: PLC0415

    ax.set_xscale("log")
    ax.set_xlabel(_EPS_AXIS, fontsize=_LABEL)
    lo, hi = min(values), max(values)
    ticks: list[float] = []
    if lo > 0 and hi > 0:
        decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
        for mantissas in ((1, 2, 5), range(1, 10)):
            ticks = [m * 10.0**k for k in decades for m in mantissas if lo <= m * 10.0**k <= hi]
            if len(ticks) >= 3:
                break
        if len(ticks) < 3:
            ticks = [float(f"{v:.2g}") for v in np.geomspace(lo, hi, 4)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


def _frontier(paths: dict[str, list[PlanPoint]], chosen: PlanPoint | None) -> Markup:
    from matplotlib.figure import Figure  # noqa: PLC0415  (heavy)

    fig = Figure(figsize=(12, 4.6))
    ax1, ax2 = fig.subplots(1, 2)
    for label, path in paths.items():
        pts = sorted(path, key=lambda p: p.total_epsilon)
        x = [p.total_epsilon for p in pts]
        ax1.plot(x, [p.release_probability for p in pts], marker=".", label=label)
        ax2.plot(x, [p.expected_attempts for p in pts], marker=".", label=label)
    if chosen is not None:
        for ax, y in ((ax1, chosen.release_probability), (ax2, chosen.expected_attempts)):
            ax.plot(chosen.total_epsilon, y, "k*", markersize=15, label="the plan")
    ax1.set_ylabel("predicted P(selection releases)\n(probability, 0 to 1)", fontsize=_LABEL)
    ax1.set_ylim(-0.02, 1.02)
    ax2.set_ylabel("expected attempts of private selection\n(count)", fontsize=_LABEL)
    ax1.set_title("probability that selection releases", fontsize=_LABEL)
    ax2.set_title("attempts until selection ends", fontsize=_LABEL)
    every = [p.total_epsilon for path in paths.values() for p in path]
    for ax in (ax1, ax2):
        if every:
            _epsilon_axis(ax, every)
        ax.tick_params(labelsize=_TICK)
        ax.grid(alpha=0.3, which="both")
    ax2.legend(
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        frameon=False,
        fontsize=_LEGEND,
        title="generator budget, fit mode",
        title_fontsize=_LEGEND,
    )
    fig.tight_layout()
    return png(fig, alt="frontier: P(release) and expected attempts against total epsilon")


def _per_configuration(path: list[PlanPoint], chosen: PlanPoint) -> Markup:
    from matplotlib.figure import Figure  # noqa: PLC0415

    fig = Figure(figsize=(10, 4.6))
    ax = fig.subplots()
    pts = sorted(path, key=lambda p: p.total_epsilon)
    for cid in chosen.candidates:
        ax.plot(
            [p.total_epsilon for p in pts],
            [p.all_configurations.get(cid, 0.0) for p in pts],
            marker=".",
            label=cid,
        )
    ax.axvline(chosen.total_epsilon, color="k", linestyle=":", label="the plan")
    _epsilon_axis(ax, [p.total_epsilon for p in pts] or [chosen.total_epsilon])
    ax.set_ylim(-0.02, 1.02)
    ax.set_ylabel("predicted per-attempt pass probability\n(probability, 0 to 1)", fontsize=_LABEL)
    ax.set_title(f"candidates along {chosen.mode}", fontsize=_LABEL)
    ax.tick_params(labelsize=_TICK)
    ax.grid(alpha=0.3, which="both")
    ax.legend(
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        frameon=False,
        fontsize=_LEGEND,
        title="configuration",
        title_fontsize=_LEGEND,
    )
    fig.tight_layout()
    return png(fig, alt="predicted pass probability per candidate against total epsilon")


def _noise_sd(sd: Any) -> str:
    if isinstance(sd, dict):
        lo, hi = f"{float(sd['min']):.3g}", f"{float(sd['max']):.3g}"
        return lo if lo == hi else f"{lo} to {hi}"
    return "-" if sd is None else f"{float(sd):.3g}"


def _context(
    plan: dict[str, Any], paths: dict[str, list[PlanPoint]], chosen: PlanPoint | None
) -> dict[str, Any]:
    ctx: dict[str, Any] = {
        "warnings": list(plan.get("warnings", [])),
        "chosen": chosen,
        "reason": plan.get("reason", ""),
        "frontier": _frontier(paths, chosen),
        "formula": plan.get("formula", ""),
        "stop_probability": plan.get("options", {}).get("stop_probability"),
        "criteria": [],
        "blank": [],
        "blank_reason": _BLANK_REASON,
        "per_configuration": "",
    }
    if chosen is None:
        return ctx
    for c in plan["criteria"]:
        p = c.get("predicted_pass_probability")
        ctx["criteria"].append(
            {
                "name": c["name"],
                "epsilon": float(c["epsilon"]),
                "mechanism": c["mechanism"],
                "noise_sd": _noise_sd(c.get("noise_sd")),
                "predicted": None if p is None else float(p),
            }
        )
        if p is None:
            ctx["blank"].append(c["name"])
    ctx["per_configuration"] = _per_configuration(paths[chosen.mode], chosen)
    return ctx


def write_plan_html(
    out: Path,
    plan: dict[str, Any],
    paths: dict[str, list[PlanPoint]],
    chosen: PlanPoint | None,
) -> Path:
    """Write the plan report (atomically); returns ``out``."""
    text = render("plan_report.html.j2", **_context(plan, paths, chosen))
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    return out

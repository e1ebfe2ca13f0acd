"""plan.html: the frontier a steward chooses a budget from.

Rendered from ``templates/plan_report.html.j2`` in the house style of the other reports
(:mod:`synthflow._util.html`: one stylesheet, plots as embedded PNGs, every value escaped).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from synthflow._util.files import write_atomic
from synthflow._util.html import Markup, png, render
from synthflow.plan.optimize import PlanPoint

__all__ = ["write_plan_html"]

_LABEL, _TICK, _LEGEND = 12, 10, 10
_EPS_AXIS = "total epsilon of the release (privacy loss; log scale)"
_BLANK_REASON = (
    "these criteria are decided on the noisy regression fit they share, so the planner "
    "draws their noise together with that fit and predicts them jointly, not one by one. "
    "Their joint pass is part of the per-attempt pass probability above."
)


def _epsilon_ticks(lo: float, hi: float) -> list[float]:
    """Plain log-axis ticks from one at or below ``lo`` to one at or above ``hi``.

    The finest of 1-9, 1-2-5 and powers of ten per decade that gives at most 8 ticks
    (and at least 3 where it can), so every value in [lo, hi], the plan's among them,
    lies between two labelled ticks.
    """
    if not (lo > 0 and hi >= lo):
        return []
    ticks: list[float] = []
    for mantissas in (range(1, 10), (1, 2, 5), (1,)):
        grid = [
            float(f"{m * 10.0**k:.6g}")
            for k in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 2)
            for m in mantissas
        ]
        start = max(t for t in grid if t <= lo * (1 + 1e-9))
        stop = min(t for t in grid if t >= hi * (1 - 1e-9))
        ticks = [t for t in grid if start <= t <= stop]
        if len(ticks) <= 8:
            break
    return ticks


def _epsilon_axis(ax: Any, values: list[float]) -> None:
    """A log x axis of epsilon with plain tick labels (0.5, 1, 2) covering ``values``."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter  # noqa: PLC0415

    ax.set_xscale("log")
    ax.set_xlabel(_EPS_AXIS, fontsize=_LABEL)
    ticks = _epsilon_ticks(min(values), max(values))
    if len(ticks) < 3 and ticks:
        ticks = sorted({*ticks, *(float(f"{v:.2g}") for v in np.geomspace(ticks[0], ticks[-1], 4))})
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    if ticks:
        pad = (ticks[-1] / ticks[0]) ** 0.03 if ticks[-1] > ticks[0] else 1.5
        ax.set_xlim(ticks[0] / pad, ticks[-1] * pad)


def _zoomed(values: list[float], target: float | None) -> tuple[float, float]:
    """The y limits of a probability axis zoomed to ``values`` and the target line."""
    shown = [v for v in [*values, *([] if target is None else [target])] if math.isfinite(v)]
    if not shown:
        return -0.02, 1.02
    lo, hi = min(shown), max(shown)
    pad = max(0.12 * (hi - lo), 0.01)
    return max(-0.02, lo - pad), min(1.02, hi + pad)


def _frontier(
    paths: dict[str, list[PlanPoint]], chosen: PlanPoint | None, target: float | None = None
) -> Markup:
    from matplotlib.figure import Figure  # noqa: PLC0415  (heavy)

    # The legend goes under both charts: a long one beside them squeezes their axes. A
    # plan of single attempts has one attempt everywhere: no attempts chart then.
    single = all(p.expected_attempts == 1 for path in paths.values() for p in path)
    width = 7 if single else 12
    fig = Figure(figsize=(width, 5.4 + 0.25 * math.ceil((len(paths) + 2) / 2)),
                 layout="constrained")  # fmt: skip
    axes = [fig.subplots()] if single else list(fig.subplots(1, 2))
    ax1, ax2 = axes[0], axes[-1]
    for label, path in paths.items():
        pts = sorted(path, key=lambda p: p.total_epsilon)
        x = [p.total_epsilon for p in pts]
        ax1.plot(x, [p.release_probability for p in pts], marker=".", label=label)
        if not single:
            ax2.plot(x, [p.expected_attempts for p in pts], marker=".", label=label)
    if target is not None:
        ax1.axhline(target, color="0.3", ls="--", lw=1.2, label=f"target P(release) {target:g}")
    if chosen is not None:
        stars = [(ax1, chosen.release_probability)]
        stars += [] if single else [(ax2, chosen.expected_attempts)]
        for ax, y in stars:
            ax.plot(chosen.total_epsilon, y, "k*", markersize=15, label="the plan")
        star = (chosen.total_epsilon, chosen.release_probability)
        ax1.annotate(  # its value, which the tick labels only bracket
            f"epsilon {chosen.total_epsilon:.4g}", star, xytext=(10, -4),
            textcoords="offset points", fontsize=_TICK, va="top",
        )  # fmt: skip
    ax1.set_ylabel(
        "predicted P(selection releases)\n(probability; axis zoomed to the data)",
        fontsize=_LABEL,
    )
    ax1.set_ylim(*_zoomed([p.release_probability for ps in paths.values() for p in ps], target))
    ax1.set_title("probability that selection releases", fontsize=_LABEL)
    if not single:
        ax2.set_ylabel("expected attempts of private selection\n(count)", fontsize=_LABEL)
        ax2.set_title("attempts until selection ends", fontsize=_LABEL)
    every = [p.total_epsilon for path in paths.values() for p in path]
    for ax in axes:
        if every:
            _epsilon_axis(ax, every)
        ax.tick_params(labelsize=_TICK)
        ax.grid(alpha=0.3, which="both")
    handles, labels = ax2.get_legend_handles_labels()
    if target is not None and not single:  # on one panel the target is in its legend
        line = next(h for h, lab in zip(*ax1.get_legend_handles_labels(), strict=True)
                    if lab.startswith("target"))  # fmt: skip
        handles, labels = [*handles, line], [*labels, f"target P(release) {target:g}"]
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncol=2,
        frameon=False,
        fontsize=_LEGEND,
        title="generator budget, fit mode",
        title_fontsize=_LEGEND,
    )
    what = "P(release)" if single else "P(release) and expected attempts"
    return png(fig, alt=f"frontier: {what} against total epsilon")


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


def _target(plan: dict[str, Any]) -> float | None:
    """The release probability the plan had to reach (plan.json's options)."""
    target = plan.get("options", {}).get("release_probability")
    return None if target is None else float(target)


_NO_FIGURES = Markup(
    '<p class="note">No figure: matplotlib is not installed (the tables hold the same '
    "figures). <code>pip install 'synthflow[reports]'</code> draws them.</p>"
)
"""In place of a figure on the base install (ship-plan needs no extra, #61 item 1)."""


def _context(
    plan: dict[str, Any], paths: dict[str, list[PlanPoint]], chosen: PlanPoint | None
) -> dict[str, Any]:
    from synthflow._extras import has  # noqa: PLC0415

    figures = has("matplotlib")
    ctx: dict[str, Any] = {
        "warnings": list(plan.get("warnings", [])),
        "chosen": chosen,
        "reason": plan.get("reason", ""),
        "frontier": _frontier(paths, chosen, _target(plan)) if figures else _NO_FIGURES,
        "formula": plan.get("formula", ""),
        "stop_probability": plan.get("options", {}).get("stop_probability"),
        "criteria": [],
        "blank": [],
        "blank_reason": _BLANK_REASON,
        "per_configuration": "",
        "spec_generator_epsilon": None,
        "spec_total_epsilon": None,
        "levels": list(plan.get("by_release_probability", [])),
    }
    if chosen is None:
        return ctx
    spec_budgets = plan.get("spec_budgets") or {}
    own = spec_budgets.get("criteria", {})
    ctx["spec_generator_epsilon"] = spec_budgets.get("generator_epsilon")
    ctx["spec_total_epsilon"] = spec_budgets.get("total_epsilon")
    for c in plan["criteria"]:
        p = c.get("predicted_pass_probability")
        ctx["criteria"].append(
            {
                "name": c["name"],
                "epsilon": float(c["epsilon"]),
                "spec_epsilon": own.get(c["name"]),
                "mechanism": c["mechanism"],
                "noise_sd": _noise_sd(c.get("noise_sd")),
                "predicted": None if p is None else float(p),
            }
        )
        if p is None:
            ctx["blank"].append(c["name"])
    ctx["per_configuration"] = (
        _per_configuration(paths[chosen.mode], chosen) if figures else _NO_FIGURES
    )
    return ctx


def _candidate_rows(
    chosen: PlanPoint, configurations: dict[str, dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """The shortlist as a reader names it: model, settings and binning, not only its id."""
    rows = []
    for cid, p in sorted(chosen.candidates.items(), key=lambda kv: -kv[1]):
        c = (configurations or {}).get(cid) or {}
        hp = c.get("hyperparameters") or {}
        rows.append(
            {
                "id": cid,
                "model": c.get("model", "-"),
                "settings": ", ".join(f"{k}={v}" for k, v in sorted(hp.items())) or "-",
                "binning": ", ".join(
                    f"{k} {v}" for k, v in sorted((c.get("transformations") or {}).items())
                    if v != "a"
                ) or "as the spec's first binning",
                "pass": float(p),
            }
        )  # fmt: skip
    return rows


def write_plan_html(
    out: Path,
    plan: dict[str, Any],
    paths: dict[str, list[PlanPoint]],
    chosen: PlanPoint | None,
    *,
    configurations: dict[str, dict[str, Any]] | None = None,
) -> Path:
    """Write the plan report (atomically); returns ``out``.

    ``configurations``: id -> configuration (JSON form), to name each candidate.
    """
    ctx = _context(plan, paths, chosen)
    if chosen is not None:
        ctx["candidate_rows"] = _candidate_rows(chosen, configurations)
    text = render("plan_report.html.j2", **ctx)
    return write_atomic(out, text)

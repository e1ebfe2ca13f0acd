"""plan.html: the frontier a steward chooses a budget from."""

from __future__ import annotations

import base64
import html
import io
import os
from pathlib import Path
from typing import Any

from synthflow.plan.optimize import PlanPoint

__all__ = ["write_plan_html"]


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    data = base64.b64encode(buf.getvalue()).decode()
    return f'<img alt="frontier plot" src="data:image/png;base64,{data}">'


def _frontier(paths: dict[str, list[PlanPoint]], chosen: PlanPoint | None) -> str:
    from matplotlib.figure import Figure  # noqa: PLC0415  (heavy)

    fig = Figure(figsize=(11, 4))
    ax1, ax2 = fig.subplots(1, 2)
    for label, path in paths.items():
        pts = sorted(path, key=lambda p: p.total_epsilon)
        x = [p.total_epsilon for p in pts]
        ax1.plot(x, [p.release_probability for p in pts], marker=".", label=label)
        ax2.plot(x, [p.expected_attempts for p in pts], marker=".", label=label)
    if chosen is not None:
        ax1.plot(chosen.total_epsilon, chosen.release_probability, "k*", markersize=14)
        ax2.plot(chosen.total_epsilon, chosen.expected_attempts, "k*", markersize=14)
    ax1.set_xlabel("total epsilon of the release")
    ax1.set_ylabel("predicted P(selection releases)")
    ax2.set_xlabel("total epsilon of the release")
    ax2.set_ylabel("expected attempts")
    ax1.set_xscale("log")
    ax2.set_xscale("log")
    ax2.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8)
    ax1.set_title("frontier per generator budget and fit mode (* = plan)")
    return _png(fig)


def _per_configuration(path: list[PlanPoint], chosen: PlanPoint) -> str:
    from matplotlib.figure import Figure  # noqa: PLC0415

    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    pts = sorted(path, key=lambda p: p.total_epsilon)
    for cid in chosen.candidates:
        ax.plot(
            [p.total_epsilon for p in pts],
            [p.all_configurations.get(cid, 0.0) for p in pts],
            marker=".",
            label=cid,
        )
    ax.axvline(chosen.total_epsilon, color="k", linestyle=":")
    ax.set_xscale("log")
    ax.set_xlabel("total epsilon (along the chosen mode's frontier)")
    ax.set_ylabel("predicted per-attempt pass probability")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8)
    return _png(fig)


def write_plan_html(
    out: Path,
    plan: dict[str, Any],
    paths: dict[str, list[PlanPoint]],
    chosen: PlanPoint | None,
) -> Path:
    """Write the plan report (atomically); returns ``out``."""
    e = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>synthflow plan</title>",
        "<style>body{font-family:sans-serif;max-width:72em;margin:auto}"
        "td,th{padding:2px 8px;text-align:right}</style></head><body>",
        "<h1>Budget plan</h1>",
        "<p>Predicted from a public sweep: each run's released statistics and public "
        "parameters, with the evaluation's noise re-drawn at every budget. No private data "
        "was read and no budget was spent.</p>",
        *(f"<p style='color:#b00'><b>{e(w)}</b></p>" for w in plan.get("warnings", [])),
    ]
    if chosen is None:
        parts.append(f"<p><b>No plan meets the constraints</b>: {e(plan.get('reason', ''))}</p>")
    else:
        parts.append(
            f"<p>Plan: total epsilon <b>{chosen.total_epsilon:.3f}</b> "
            f"({e(plan['formula'])}); generator epsilon {chosen.generator_epsilon:g}; "
            f"regression fit {'once per release' if chosen.fit_once else 'per candidate'}; "
            f"{len(chosen.candidates)} candidates; predicted per-attempt pass probability "
            f"{chosen.pass_probability:.2f}; P(release) with stop probability "
            f"{plan['options']['stop_probability']:g}: {chosen.release_probability:.3f}; "
            f"expected attempts {chosen.expected_attempts:.2f}.</p>"
        )
    parts.append("<h2>Frontier</h2>")
    parts.append(_frontier(paths, chosen))
    if chosen is not None:
        parts.append(
            "<h2>Budgets</h2><table><tr><th>criterion</th><th>epsilon</th>"
            "<th>mechanism</th><th>noise sd</th><th>predicted pass</th></tr>"
        )
        for c in plan["criteria"]:
            sd = c.get("noise_sd")
            sd_text = f"{sd['min']:.4g}-{sd['max']:.4g}" if isinstance(sd, dict) else f"{sd:.4g}"
            p = c.get("predicted_pass_probability")
            parts.append(
                f"<tr><td>{e(c['name'])}</td><td>{c['epsilon']:.4g}</td>"
                f"<td>{e(c['mechanism'])}</td><td>{sd_text}</td>"
                f"<td>{'' if p is None else f'{p:.3f}'}</td></tr>"
            )
        parts.append("</table>")
        parts.append("<h2>Candidates along the chosen mode</h2>")
        parts.append(_per_configuration(paths[chosen.mode], chosen))
    parts.append("</body></html>")
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text("\n".join(parts), encoding="utf-8")
    os.replace(tmp, out)
    return out

"""The comparison as one self-contained HTML page with embedded PNG plots.

One section per table level: a risk-utility map (Hellinger distance to the true table
against the share of the original's cells of 1 published unchanged; one dot per method
and epsilon, coloured by family with a legend; utility alone, with a sentence saying
why, when the original has no cells of 1 and the risk axis is undefined), the measures
of every method side by side, and transition-matrix heatmaps (the classic methods, each
DP method at one epsilon, the synthetic release) folded away. Rendered from
``templates/tables_report.html.j2``; plots are drawn with matplotlib's object API and
embedded as PNG.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from synthflow._html import png, render
from synthflow.tables.compare import FAMILIES, Comparison, ComparisonRow
from synthflow.tables.measures import BANDS

__all__ = ["render_html", "write_report"]

_PALETTE = (
    "#7f7f7f",
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
    "#d62728",
)
_COLOURS = dict(zip(FAMILIES, _PALETTE, strict=True))
_COLUMNS = (
    ("l1", "L1", "{:.0f}"),
    ("l2", "L2", "{:.1f}"),
    ("hellinger", "HD", "{:.3f}"),
    ("share_unchanged", "unchanged", "{:.3f}"),
    ("diagonal_share", "on diagonal", "{:.3f}"),
    ("share_suppressed", "suppressed", "{:.3f}"),
    ("cramers_v", "Cramér's V", "{:.4f}"),
    ("cramers_v_change", "ΔV", "{:+.4f}"),
    ("mean_abs_noise", "mean |noise|", "{:.2f}"),
    ("entropy_risk", "entropy risk", "{:.4f}"),
    ("ones", "1s", "{:d}"),
    ("twos", "2s", "{:d}"),
    ("uniques_kept", "uniques kept", "{:d}"),
)


_BUDGET_MARKERS = ("v", "s", "D", "^", "p", "h", "P", "X", "*", "<", ">", "d")
"""Marker of each compared DP budget, smallest first (colour is the method's family)."""


def _distance_ticks(values: Sequence[float]) -> list[float]:
    """Labelled ticks of a symlog distance axis: 1-2-5 per decade covering ``values``.

    From the tick at or below the smallest positive value to the one at or above the
    largest (powers of ten alone when 1-2-5 would give more than 10), and 0 when a
    value is 0, so that every dot lies between two labelled ticks.
    """
    finite = [v for v in values if math.isfinite(v) and v >= 0]
    positive = [v for v in finite if v > 0]
    ticks: list[float] = [0.0] if len(positive) < len(finite) else []
    if not positive:
        return ticks or [0.0]
    lo, hi = min(positive), max(positive)
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    for mantissas in ((1, 2, 5), (1,)):
        grid = [float(f"{m * 10.0**k:.6g}") for k in decades for m in mantissas]
        grid += [10.0 ** (decades[-1] + 1)]
        start = max(t for t in grid if t <= lo * (1 + 1e-9))
        stop = min(t for t in grid if t >= hi * (1 - 1e-9))
        chosen = [t for t in grid if start <= t <= stop]
        if len(chosen) <= 10:
            break
    return ticks + chosen


def _distance_axis(ax: Any, values: Sequence[float]) -> None:
    """Symlog x axis of the Hellinger distance with plain labelled ticks (0.2, 0.5, 1)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter  # noqa: PLC0415

    ax.set_xscale("symlog", linthresh=1e-3)
    ticks = _distance_ticks(values)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    top = ticks[-1] * 1.15 if ticks[-1] > 0 else 1e-3
    positive = [t for t in ticks if t > 0]
    ax.set_xlim(0 if ticks[0] == 0 else positive[0] / 1.15, top)
    ax.set_xlabel(
        "Hellinger distance to the true table (utility loss; left is better)", fontsize=11
    )


def _ru_map(rows: Sequence[ComparisonRow], original_ones: int) -> Any:
    """Risk-utility map: Hellinger distance (x) against share of original 1s kept (y).

    Dots only, never joined (the risk of one method need not change monotonically with
    its budget, and a line between budgets reads as a trend). Colour is the method's
    family; a DP method's budget is its marker's shape, in a second legend, so no text
    label sits on the dots (they crowd along 0 and 1).
    """
    from matplotlib.figure import Figure  # noqa: PLC0415
    from matplotlib.lines import Line2D  # noqa: PLC0415

    fig = Figure(figsize=(10, 5.2))
    ax = fig.subplots()
    budgets = sorted({r.epsilon for r in rows if r.epsilon is not None and _budgeted(r)})
    marker: dict[float | None, str] = {
        e: _BUDGET_MARKERS[i % len(_BUDGET_MARKERS)] for i, e in enumerate(budgets)
    }
    families: list[str] = []
    for r in rows:
        y = r.measures.uniques_kept / original_ones if original_ones else math.nan
        shape = marker.get(r.epsilon, "o") if _budgeted(r) else "o"
        ax.plot(
            r.measures.hellinger, y, shape, color=_COLOURS[r.method], ms=8, mec="white",
            mew=0.6, alpha=0.9, linestyle="none",
        )  # fmt: skip
        if r.method not in families:
            families.append(r.method)
    _distance_axis(ax, [r.measures.hellinger for r in rows])
    ax.set_ylabel("share of original 1s published as 1\n(disclosure risk; lower is safer)",
                  fontsize=11)  # fmt: skip
    ax.set_ylim(-0.05, 1.05)
    ax.tick_params(labelsize=10)
    ax.grid(alpha=0.3)
    method_legend = ax.legend(
        [Line2D([], [], marker="o", ls="none", color=_COLOURS[f], ms=8) for f in families],
        families, title="method (colour)", fontsize=9, title_fontsize=9,
        loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
    )  # fmt: skip
    if budgets:
        ax.add_artist(method_legend)
        ax.legend(
            [Line2D([], [], marker=marker[e], ls="none", color="0.35", ms=8) for e in budgets],
            [f"{e:g}" for e in budgets], title="DP budget\n(epsilon, shape)", fontsize=9,
            title_fontsize=9, loc="lower left", bbox_to_anchor=(1.01, 0.0), frameon=False,
        )  # fmt: skip
    fig.tight_layout()
    return fig


def _budgeted(r: ComparisonRow) -> bool:
    """A DP table method's row at one of the compared budgets (not the release)."""
    return r.epsilon is not None and r.method != "dp-synthetic"


def _utility_only(rows: Sequence[ComparisonRow]) -> Any:
    """Utility alone, one dot per method: for a table whose original has no cells of 1."""
    from matplotlib.figure import Figure  # noqa: PLC0415

    fig = Figure(figsize=(10, 0.9 + 0.28 * len(rows)))
    ax = fig.subplots()
    y = np.arange(len(rows))
    ax.scatter(
        [r.measures.hellinger for r in rows],
        y,
        c=[_COLOURS[r.method] for r in rows],
        s=45,
        zorder=3,
        clip_on=False,  # a distance of 0 sits on the axis
    )
    ax.set_yticks(y, [r.label for r in rows], fontsize=10)
    ax.invert_yaxis()
    _distance_axis(ax, [0.0, *(r.measures.hellinger for r in rows)])  # from 0: no negatives
    ax.tick_params(axis="x", labelsize=10)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


_NO_ONES = (
    "The original table has no cells of 1, so the disclosure-risk axis (the share of the "
    "original's cells of 1 published as 1) is undefined for every method: the plot shows "
    "utility alone, one dot per method."
)


def _map(rows: Sequence[ComparisonRow], ones: int, name: str) -> tuple[Any, str]:
    """The table's plot and, when the risk axis is undefined, the sentence saying why."""
    if ones:
        return png(_ru_map(rows, ones), alt=f"risk-utility map of {name}"), ""
    return png(_utility_only(rows), alt=f"utility of each method on {name}"), _NO_ONES


def _heatmaps(rows: Sequence[ComparisonRow], title: str) -> Any:
    cols = 3
    lines = math.ceil(len(rows) / cols)
    from matplotlib.colors import LogNorm  # noqa: PLC0415
    from matplotlib.figure import Figure  # noqa: PLC0415

    fig = Figure(figsize=(4.0 * cols, 3.9 * lines + 0.6))
    axes = fig.subplots(lines, cols, squeeze=False, sharex=True, sharey=True)
    vmax = max(int(r.transition.max()) for r in rows)
    ticks = [*BANDS, "supp."]
    for ax in axes.ravel()[len(rows) :]:
        ax.axis("off")
    axes[0, 0].set_xticks(range(len(ticks)))
    axes[0, 0].set_yticks(range(len(BANDS)))
    for ax in axes[:, 0]:
        ax.set_yticklabels(BANDS, fontsize=8)
        ax.set_ylabel("original band", fontsize=9)
    for ax in axes[-1]:
        ax.set_xticklabels(ticks, rotation=90, fontsize=8)
        ax.set_xlabel("published band", fontsize=9)
    image = None
    for ax, r in zip(axes.ravel(), rows, strict=False):
        m = r.transition.astype(float)
        image = ax.imshow(np.where(m > 0, m, np.nan), cmap="viridis", norm=LogNorm(1, max(vmax, 2)))
        ax.set_title(f"{r.label}\n(on diagonal {r.measures.diagonal_share:.2f})", fontsize=10)
    if image is not None:
        fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.6, label="cells (log scale)")
    fig.suptitle(title, fontsize=12)
    return fig


def _fmt(value: float | int, spec: str) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "-"
    if spec.endswith("d}"):
        return spec.format(int(value))
    return spec.format(value)


def _heatmap_rows(rows: Sequence[ComparisonRow], epsilon: float) -> list[ComparisonRow]:
    out = []
    for r in rows:
        if r.method == "original":
            continue
        if r.epsilon is not None and r.method != "dp-synthetic" and r.epsilon != epsilon:
            continue
        out.append(r)
    return out


def _ptables(cmp: Comparison) -> str:
    pts = cmp.options.get("cell_key_ptables", {})
    parts = []
    for name, p in pts.items() if isinstance(pts, dict) else []:
        parts.append(
            f"{name} keys: max perturbation {p['max_perturbation']}, rate {p['rate_small']} "
            f"at count 1 falling to {p['rate_large']} (decay {p['decay']})"
        )
    return "; ".join(parts)


def _randomness(info: dict[str, object]) -> str:
    if info.get("secure"):
        return "a CSPRNG (not reproducible)"
    return f"seeded for reproducibility (seed {info.get('seed')}); public data only"


def render_html(cmp: Comparison, *, heatmap_epsilon: float | None = None, title: str = "") -> str:
    """The report page for ``cmp``: one section per table level.

    Args:
        cmp: Result of :func:`~synthflow.tables.compare.compare`.
        heatmap_epsilon: Epsilon of the DP methods shown as heatmaps (default: the
            compared epsilon closest to 1).
        title: Page title.
    """
    eps_h = heatmap_epsilon
    if eps_h is None or eps_h not in cmp.epsilons:
        eps_h = min(cmp.epsilons, key=lambda e: abs(math.log(e)))
    title = title or "Frequency-table protection: classic methods, DP tables, DP synthetic data"
    present = {r.method for r in cmp.rows}
    tables = []
    for i, name in enumerate(cmp.tables):
        rows = [r for r in cmp.rows if r.table == name]
        original = next((r for r in rows if r.method == "original"), None)
        ones = int(original.measures.ones) if original is not None else 0
        published = [r for r in rows if r.method != "original"]
        plot, plot_note = _map(published, ones, name)
        tables.append(
            {
                "name": name,
                "anchor": f"table-{i}",
                "description": cmp.descriptions[name],
                "map": plot,
                "map_note": plot_note,
                "rows": [
                    {
                        "label": r.label,
                        "colour": _COLOURS[r.method],
                        "cells": [_fmt(getattr(r.measures, k), spec) for k, _, spec in _COLUMNS],
                    }
                    for r in rows
                ],
                "heatmaps": png(
                    _heatmaps(_heatmap_rows(rows, eps_h), name), alt=f"transitions of {name}"
                ),
            }
        )
    return render(
        "tables_report.html.j2",
        title=title,
        n=cmp.n,
        epsilons=", ".join(f"{e:g}" for e in cmp.epsilons),
        seconds=f"{cmp.seconds:.1f}",
        neighbouring=str(cmp.options["neighbouring"]),
        delta=f"{cmp.options['delta']:g}",
        nonnegative=bool(cmp.options["nonnegative"]),
        randomness=_randomness(cmp.randomness),
        spent_epsilon=f"{cmp.privacy['spent_epsilon']:g}",
        spent_delta=f"{cmp.privacy['spent_delta']:g}",
        release_epsilon=f"{cmp.release_epsilon:g}" if cmp.release_epsilon else "",
        tables=tables,
        families=[{"name": f, "colour": _COLOURS[f]} for f in FAMILIES if f in present],
        columns=[name for _, name, _ in _COLUMNS],
        heatmap_epsilon=f"{eps_h:g}",
        ptables=_ptables(cmp),
    )


def write_report(
    cmp: Comparison, path: str | Path, *, heatmap_epsilon: float | None = None
) -> Path:
    """Write :func:`render_html` to ``path``."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(render_html(cmp, heatmap_epsilon=heatmap_epsilon), encoding="utf-8")
    return p

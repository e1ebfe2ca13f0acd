"""The tables report's plots, drawn with matplotlib's object API (no pyplot state).

Split from :mod:`synthflow.tables.report`: the risk-utility map, the utility-only plot
of a table whose original has no cells of 1, and the transition-matrix heatmaps, with
the family colours and budget markers they share with the page.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from synthflow.tables.compare import FAMILIES, ComparisonRow
from synthflow.tables.measures import BANDS

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
    families = list(dict.fromkeys(r.method for r in rows))
    _distance_axis(ax, [r.measures.hellinger for r in rows])
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("share of original 1s published as 1\n(disclosure risk; lower is safer)",
                  fontsize=11)  # fmt: skip
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
    fig.tight_layout()  # before the dots: their spreading needs the final axes size
    xs = [r.measures.hellinger for r in rows]
    ys = [r.measures.uniques_kept / original_ones if original_ones else math.nan for r in rows]
    for r, x, y in zip(rows, xs, _dodge(fig, ax, xs, ys), strict=True):
        shape = marker.get(r.epsilon, "o") if _budgeted(r) else "o"
        ax.plot(
            x, y, shape, color=_COLOURS[r.method], ms=8, mec="white",
            mew=0.6, alpha=0.9, linestyle="none", clip_on=False,
        )  # fmt: skip
    return fig


def _dodge(fig: Any, ax: Any, xs: Sequence[float], ys: Sequence[float]) -> list[float]:
    """``ys`` with dots that would cover one another stacked vertically, a dot apart.

    Many methods share a risk of exactly 0 or 1 and similar distances, so their dots
    would sit on top of each other; each dot that would overlap one already placed
    moves up or down (alternately, nearest first) by one marker diameter until it is
    clear. Only the drawing moves, by at most a few hundredths on the y axis; the
    values in the report's table are untouched.
    """
    step = 9.0 * fig.dpi / 72.0  # an 8-point marker and its edge, in pixels
    placed: list[tuple[float, float]] = []
    out = []
    for x, y in zip(xs, ys, strict=True):
        if not (math.isfinite(x) and math.isfinite(y)):
            out.append(y)
            continue
        px, py = ax.transData.transform((x, y))
        for k in range(40):
            shift = (k + 1) // 2 * step * (1 if k % 2 else -1)
            if all(math.hypot(px - qx, py + shift - qy) >= step for qx, qy in placed):
                break
        placed.append((px, py + shift))
        out.append(float(ax.transData.inverted().transform((px, py + shift))[1]))
    return out


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

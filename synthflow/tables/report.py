"""The comparison as one self-contained HTML page with embedded PNG plots.

For each table level: the measures of every method side by side, bars per method and
epsilon (L1, Hellinger distance, share unchanged, entropy risk) and transition-matrix
heatmaps (the classic methods, each DP method at one epsilon, and the synthetic
release). Plots are drawn with matplotlib's object API (an Agg canvas; no pyplot global
state) and embedded as base64 PNG.
"""

from __future__ import annotations

import base64
import html
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from synthflow.tables.compare import FAMILIES, Comparison, ComparisonRow
from synthflow.tables.measures import BANDS

if TYPE_CHECKING:  # matplotlib loads only when a report is drawn (CLI start-up)
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

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
_BARS = (
    ("l1", "L1 distance (log)", True),
    ("hellinger", "Hellinger distance", False),
    ("share_unchanged", "share of cells unchanged", False),
    ("entropy_risk", "entropy risk 1 - H/log K", False),
)
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


def _png(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)  # fixed margins: one draw, no tight bbox pass
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _bars(rows: Sequence[ComparisonRow], title: str) -> str:
    rows = [r for r in rows if r.method != "original"]
    from matplotlib.figure import Figure  # noqa: PLC0415

    fig = Figure(figsize=(max(8, 0.32 * len(rows) + 2), 11))
    fig.subplots_adjust(left=0.08, right=0.98, top=0.96, bottom=0.16, hspace=0.12)
    axes: list[Axes] = list(fig.subplots(len(_BARS), 1, sharex=True))
    x = np.arange(len(rows))
    colours = [_COLOURS[r.method] for r in rows]
    for ax, (key, name, log) in zip(axes, _BARS, strict=True):
        vals = np.array([getattr(r.measures, key) for r in rows], dtype=float)
        shown = np.where(np.isnan(vals), 0.0, vals)
        if log:
            shown = np.maximum(shown, 0.5)
            ax.set_yscale("log")
        ax.bar(x, shown, color=colours)
        for xi in x[np.isnan(vals)]:
            ax.text(xi, 0, "n/a", rotation=90, ha="center", va="bottom", fontsize=7)
        ax.set_ylabel(name, fontsize=8)
        ax.grid(axis="y", alpha=0.3)
    axes[-1].set_xticks(x)
    axes[-1].set_xticklabels([r.label for r in rows], rotation=70, ha="right", fontsize=7)
    axes[0].set_title(title, fontsize=10)
    return _png(fig)


def _heatmaps(rows: Sequence[ComparisonRow], title: str) -> str:
    cols = 4
    lines = math.ceil(len(rows) / cols)
    from matplotlib.colors import LogNorm  # noqa: PLC0415
    from matplotlib.figure import Figure  # noqa: PLC0415

    fig = Figure(figsize=(3.6 * cols, 3.3 * lines + 0.8))
    fig.subplots_adjust(
        left=0.07,
        right=0.99,
        top=1 - 0.5 / (3.3 * lines + 0.8),
        bottom=0.08,
        wspace=0.08,
        hspace=0.25,
    )
    axes = fig.subplots(lines, cols, squeeze=False, sharex=True, sharey=True)
    vmax = max(int(r.transition.max()) for r in rows)
    ticks = [*BANDS, "supp."]
    for ax in axes.ravel()[len(rows) :]:
        ax.axis("off")
    axes[0, 0].set_xticks(range(len(ticks)))
    axes[0, 0].set_yticks(range(len(BANDS)))
    for ax in axes[:, 0]:
        ax.set_yticklabels(BANDS, fontsize=6)
        ax.set_ylabel("original", fontsize=7)
    for ax in axes[-1]:
        ax.set_xticklabels(ticks, rotation=90, fontsize=6)
        ax.set_xlabel("published", fontsize=7)
    for ax, r in zip(axes.ravel(), rows, strict=False):
        m = r.transition.astype(float)
        ax.imshow(np.where(m > 0, m, np.nan), cmap="viridis", norm=LogNorm(1, max(vmax, 2)))
        for (i, j), v in np.ndenumerate(r.transition):
            if v:
                bright = math.log(v) > 0.6 * math.log(max(vmax, 2))
                colour = "black" if bright else "white"
                ax.text(j, i, str(v), ha="center", va="center", fontsize=5, color=colour)
        ax.set_title(f"{r.label} (diag {r.measures.diagonal_share:.2f})", fontsize=8)
    fig.suptitle(title, fontsize=10)
    return _png(fig)


def _fmt(value: float | int, spec: str) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "—"
    if spec.endswith("d}"):
        return spec.format(int(value))
    return spec.format(value)


def _table(rows: Sequence[ComparisonRow]) -> str:
    head = "".join(f"<th>{html.escape(name)}</th>" for _, name, _ in _COLUMNS)
    body = []
    for r in rows:
        cells = "".join(
            f"<td>{_fmt(getattr(r.measures, key), spec)}</td>" for key, _, spec in _COLUMNS
        )
        style = f' style="border-left:6px solid {_COLOURS[r.method]}"'
        body.append(f"<tr><th{style}>{html.escape(r.label)}</th>{cells}</tr>")
    return f"<table><tr><th>method</th>{head}</tr>{''.join(body)}</table>"


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


def render_html(cmp: Comparison, *, heatmap_epsilon: float | None = None, title: str = "") -> str:
    """The report page for ``cmp``.

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
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:1400px;margin:auto;padding:1em}"
        "table{border-collapse:collapse;font-size:12px;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
        "th{background:#f4f4f4}img{max-width:100%}.note{color:#555;font-size:13px}</style>",
        f"</head><body><h1>{html.escape(title)}</h1>",
        f"<p>{cmp.n} records; {len(cmp.tables)} table levels; DP epsilons {list(cmp.epsilons)}"
        f" (total over all tables of a run, split equally); computed in {cmp.seconds:.1f} s.</p>",
        "<p class='note'>Options: "
        + html.escape(
            f"neighbouring {cmp.options['neighbouring']}, Gaussian delta {cmp.options['delta']}"
            f", negative DP counts clipped to 0: {cmp.options['nonnegative']}; randomness "
            f"{cmp.randomness}"
        )
        + "</p>",
        "<p class='note'>Privacy: every DP run is charged to one ledger; together they spend "
        f"epsilon {cmp.privacy['spent_epsilon']:g} (delta {cmp.privacy['spent_delta']:g}). "
        "Run comparisons on public data, then release once with "
        "<code>synthflow tables protect</code>. "
        + (
            f"The DP synthetic release spent epsilon {cmp.release_epsilon:g} for all tables "
            "at once."
            if cmp.release_epsilon
            else ""
        )
        + "</p>",
        "<p class='note'>Methods: cell key perturbation with two generated p-tables ("
        + html.escape(_ptables(cmp))
        + "); the 10-5 rule (suppress below 10, round to 5); suppression below 10; rounding "
        "to 5; independent Laplace, geometric and Gaussian noise on every table level, "
        "rounded to integers; the top-down method (noisy total, then each level scaled to "
        "its parent and integerised by largest remainders, budget 0.01 / 0.05 / 0.165 / "
        "0.775 for four levels, otherwise 0.01 for the total and the rest by sqrt(cells)); "
        "and the same tables counted in the DP synthetic release.</p>",
        "<p class='note'>Measures: L1, L2 and mean |noise| compare published with original "
        "counts (suppressed cells read as 0); HD is the Hellinger distance on counts; "
        "'unchanged' and 'on diagonal' are shares of non-structural cells (the diagonal of "
        "the transition matrix in the ONS bands); ΔV is the change in Cramér's V (mean over "
        "pairs of dimensions); entropy risk is 1 - H/log K of the published table; 1s and 2s "
        "count published cells of 1 and 2; uniques kept are original 1s still published as "
        "1.</p>",
    ]
    for name in cmp.tables:
        rows = [r for r in cmp.rows if r.table == name]
        parts.append(f"<h2>{html.escape(name)}</h2><p>{html.escape(cmp.descriptions[name])}</p>")
        parts.append(_table(rows))
        parts.append(
            f"<img alt='bars {html.escape(name)}' src='data:image/png;base64,{_bars(rows, name)}'>"
        )
        hm = _heatmap_rows(rows, eps_h)
        parts.append(
            f"<p>Transition matrices (DP methods at ε = {eps_h:g}):</p>"
            f"<img alt='transitions {html.escape(name)}' src='data:image/png;base64,"
            f"{_heatmaps(hm, name)}'>"
        )
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(
    cmp: Comparison, path: str | Path, *, heatmap_epsilon: float | None = None
) -> Path:
    """Write :func:`render_html` to ``path``."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(render_html(cmp, heatmap_epsilon=heatmap_epsilon), encoding="utf-8")
    return p

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

from synthflow._util.html import png, render
from synthflow.tables._report_plots import (  # _distance_ticks: re-exported for tests
    _COLOURS,
    _distance_ticks,  # noqa: F401
    _heatmaps,
    _ru_map,
    _utility_only,
)
from synthflow.tables.compare import FAMILIES, Comparison, ComparisonRow

__all__ = ["render_html", "write_report"]

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

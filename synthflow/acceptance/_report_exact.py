"""Sections of the evaluation report in exact mode only (public data: they read D_T)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthflow.acceptance import diagnostics
from synthflow.config.model import ReleaseSpec
from synthflow.criteria import marginals
from synthflow.criteria.plots import (
    bin_labels,
    heading,
    html_table,
)
from synthflow.transform import Transformer

REPORT_MARGINALS = 2000
"""Most marginals the worst-cells section scans (wide tables: the highest orders go)."""


def _report_family(spec: ReleaseSpec, names: tuple[str, ...]) -> list[tuple[int, ...]]:
    """The marginals criterion's family (else every 1- and 2-way), capped by order."""
    families = (c.impl.marginal_family(c, names) for c in spec.criteria)
    family = next((f for f in families if f is not None), None) or marginals.marginal_subsets(
        len(names), max_order=2
    )
    top = max(len(s) for s in family)
    while top > 1 and sum(len(s) <= top for s in family) > REPORT_MARGINALS:
        top -= 1
    return [s for s in family if len(s) <= top]


def _worst_cells(spec: ReleaseSpec, transformer: Transformer, t: np.ndarray, r: np.ndarray) -> str:
    names = transformer.domain.names
    family = _report_family(spec, names)
    orders = sorted({len(s) for s in family})
    out = [
        heading(2, "Worst k-way cells (normalized counts)"),
        f"<p class='note'>{len(family)} marginals of order {orders[0]} to {orders[-1]}.</p>",
    ]
    for k in orders:
        cells = marginals.worst_marginal_cells(
            t, r, transformer.domain.sizes, k=k, top=5, subsets=family
        )
        rows = [
            {
                "columns": ", ".join(names[i] for i in c.columns),
                "cell": ", ".join(
                    bin_labels(transformer, names[i])[v]
                    for i, v in zip(c.columns, c.cell, strict=True)
                ),
                "original": c.original,
                "candidate": c.candidate,
                "error": c.error,
            }
            for c in cells
        ]
        out += [heading(3, f"{k}-way"), html_table(pd.DataFrame(rows))]
    return "".join(out)


def _diagnostics_section(transformer: Transformer, t: np.ndarray, r: np.ndarray) -> str:
    """Quality scores and closeness (exact mode only: they read the original exactly)."""
    names = transformer.domain.names
    q = diagnostics.quality(t, r, transformer.domain.sizes, names)
    c = diagnostics.closeness(t, r)
    worst = sorted(q.column_pairs.items(), key=lambda kv: kv[1])[:5]
    shapes = pd.DataFrame(
        {"column": list(q.column_shapes), "shape score (1 - TV)": list(q.column_shapes.values())}
    )
    pairs = pd.DataFrame(
        {
            "columns": [f"{a}, {b}" for (a, b), _ in worst],
            "pair score (1 - TV)": [v for _, v in worst],
        }
    )
    return (
        heading(2, "Diagnostics (not acceptance criteria; exact, non-private)")
        + "<p class='note'>Computed on the original records exactly, so shown only for "
        "public data. Quality in the style of SDMetrics: 1 - total variation distance of "
        "each column (shape) and each pair of columns (pair); 1 means the same low-order "
        "distributions. Closeness: how many candidate rows equal an original row on the "
        "binned columns, or differ from one in a single column. With few coarse bins many "
        "rows coincide by chance, so judge it against the same figure for an independent "
        "real sample of the same size (a much higher share suggests copied records).</p>"
        + f"<p><b>Overall quality {q.overall:.3f}</b> (column shapes {q.shape_score:.3f}, "
        f"column pairs {q.pair_score:.3f}). <b>Closeness</b>: {c.identical:.1%} of candidate "
        f"rows are identical to an original row, {c.within_one:.1%} within one column of "
        f"one, {c.farther:.1%} two or more columns from every original row.</p>"
        + html_table(shapes)
        + "<p>Lowest column pair scores:</p>"
        + html_table(pairs)
    )

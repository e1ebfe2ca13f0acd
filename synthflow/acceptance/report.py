"""Self-contained HTML evaluation report (plots embedded as PNG data URIs).

In DP mode it shows only DP-released values (and public facts about D_R). In exact
mode its first line says it holds non-private statistics, and it adds the
methodologists' detail: 1-way marginals side by side, worst k-way cells, group means
and medians, regression coefficients, unmatched records by column, constraint
violations.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import numpy as np
import pandas as pd

from synthflow.acceptance import condmean, faithfulness, marginals, regression
from synthflow.acceptance._common import code_matrix
from synthflow.acceptance.evaluate import AcceptanceReport
from synthflow.config import ReleaseSpec
from synthflow.filtering import binned_violations
from synthflow.transform import Transformer

__all__ = ["render_report", "write_report"]

EXACT_BANNER = (
    "NON-PRIVATE STATISTICS: this report holds exact values computed from the original data."
)


def _png(fig: object) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80, bbox_inches="tight")  # type: ignore[attr-defined]
    return f'<img src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}"/>'


def _table(df: pd.DataFrame) -> str:
    return df.to_html(index=False, float_format=lambda v: f"{v:.6g}", escape=True)


def _criteria(report: AcceptanceReport) -> str:
    return _table(pd.DataFrame([c.to_json() for c in report.criteria]))


def _one_way_plots(t: np.ndarray, r: np.ndarray, transformer: Transformer) -> str:
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    parts = []
    for j, name in enumerate(transformer.domain.names):
        size = transformer.domain.sizes[j]
        p = np.bincount(t[:, j], minlength=size) / len(t)
        q = np.bincount(r[:, j], minlength=size) / len(r)
        fig, ax = plt.subplots(figsize=(max(4, size * 0.3), 2.5))
        x = np.arange(size)
        ax.bar(x - 0.2, p, 0.4, label="original")
        ax.bar(x + 0.2, q, 0.4, label="candidate")
        ax.set_xticks(x, transformer.transformations[name].labels, rotation=90, fontsize=7)
        ax.set_title(name)
        ax.legend(fontsize=7)
        parts.append(_png(fig))
        plt.close(fig)
    return "".join(parts)


def _exact_sections(
    spec: ReleaseSpec, transformer: Transformer, t: np.ndarray, r: np.ndarray
) -> str:
    names = transformer.domain.names
    out = ["<h2>1-way marginals</h2>", _one_way_plots(t, r, transformer)]
    out.append("<h2>Worst k-way cells</h2>")
    for k in range(1, len(names) + 1):
        cells = marginals.worst_marginal_cells(t, r, transformer.domain.sizes, k=k, top=5)
        rows = [
            {
                "columns": ", ".join(names[i] for i in c.columns),
                "cell": ", ".join(
                    transformer.transformations[names[i]].labels[v]
                    for i, v in zip(c.columns, c.cell, strict=True)
                ),
                "original": c.original,
                "candidate": c.candidate,
                "error": c.error,
            }
            for c in cells
        ]
        out += [f"<h3>{k}-way</h3>", _table(pd.DataFrame(rows))]
    for c in spec.criteria:
        if c.kind == "conditional_mean" and c.column:
            groups = condmean.cond_mean_table(t, r, transformer, c.column, c.group_by)
            out += [
                f"<h2>Conditional means and medians: {html.escape(c.column)}</h2>",
                _table(pd.DataFrame([{**vars(g), "error": g.error} for g in groups])),
            ]
        if c.kind == "regression_coefficients" and c.column:
            xo, yo, feats, _, _ = regression.design(t, transformer, c.column)
            xr, yr, _, _, _ = regression.design(r, transformer, c.column)
            mo, mr = regression.ols(xo, yo, feats), regression.ols(xr, yr, feats)
            df = pd.DataFrame(
                {
                    "term": ["intercept", *feats],
                    "original (OLS)": [mo.intercept, *mo.coef],
                    "candidate (OLS)": [mr.intercept, *mr.coef],
                }
            )
            out += ["<h2>Regression coefficients (raw units)</h2>", _table(df)]
        if c.kind == "faithfulness" and c.match is not None:
            res = faithfulness.maximum_matching(t, r, transformer, c.match)
            um = t[res.unmatched_original]
            out.append(
                f"<h2>Faithfulness</h2><p>matched {res.size} of {res.n_original}; "
                f"unmatched {len(um)}</p>"
            )
            for j, name in enumerate(names):
                labels = transformer.transformations[name].labels
                cnt = np.bincount(um[:, j], minlength=len(labels))
                df = pd.DataFrame({"bin": labels, "unmatched": cnt})
                out += [f"<h3>unmatched by {html.escape(name)}</h3>", _table(df[df.unmatched > 0])]
    return "".join(out)


def render_report(
    spec: ReleaseSpec,
    transformer: Transformer,
    original: pd.DataFrame,
    candidate: pd.DataFrame,
    report: AcceptanceReport,
) -> str:
    """The HTML text of the report."""
    t = code_matrix(original, transformer, what="original")
    r = code_matrix(candidate, transformer, what="candidate")
    head = (
        EXACT_BANNER
        if report.exact
        else (
            f"DP evaluation: every value below was released with differential privacy "
            f"(epsilon {report.epsilon_total:g})."
        )
    )
    parts = [
        f"<!-- {html.escape(head)} -->",
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>synthflow evaluation: {html.escape(spec.name)}</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}"
        "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}"
        ".banner{background:#fdd;padding:8px;font-weight:bold}</style></head><body>",
        f"<p class='banner'>{html.escape(head)}</p>",
        f"<h1>Acceptance: {'PASSED' if report.passed else 'FAILED'}</h1>",
        _criteria(report),
    ]
    viol_r = int(binned_violations(candidate, spec.synthetic_constraints, transformer).sum())
    parts.append(
        f"<h2>Constraint violations</h2><p>candidate rows violating the synthetic "
        f"constraints: {viol_r}</p>"
    )
    if report.exact:
        viol_t = int(binned_violations(original, spec.synthetic_constraints, transformer).sum())
        parts.append(f"<p>original rows violating them (binned): {viol_t}</p>")
        parts.append(_exact_sections(spec, transformer, t, r))
    else:
        parts.append(
            "<p>Detailed tables are computed from the original data and shown only in exact "
            "mode (public data).</p>"
        )
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(
    path: str | Path,
    *,
    spec: ReleaseSpec,
    transformer: Transformer,
    original: pd.DataFrame,
    candidate: pd.DataFrame,
    report: AcceptanceReport,
) -> Path:
    """Write :func:`render_report` to ``path``."""
    p = Path(path)
    p.write_text(render_report(spec, transformer, original, candidate, report), encoding="utf-8")
    return p

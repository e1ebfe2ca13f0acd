"""Self-contained HTML evaluation report (plots embedded as PNG data URIs).

Two modes, chosen by ``report.exact``:

* exact (public data, methodologists): the first line says the report holds
  non-private statistics; it compares D_T and D_R in detail - criteria against
  thresholds, 1-way marginals side by side, worst k-way cells, group means and
  medians, regression coefficients, unmatched records by column, constraint
  violations.
* DP: nothing exact about D_T. It shows the DP-released criterion values (with their
  noise sd), the candidate's own statistics (D_R is public) and the public size ``n``,
  and says that the exact comparison is omitted because it would not be private.

Every table has a plot beside it where a reader would rather look than read.
"""

from __future__ import annotations

import base64
import html
import io
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthflow._html import Markup, render
from synthflow.acceptance import condmean, diagnostics, faithfulness, marginals, regression
from synthflow.acceptance._common import code_matrix
from synthflow.acceptance.evaluate import AcceptanceReport, marginal_family
from synthflow.config import CriterionSpec, ReleaseSpec
from synthflow.filtering import binned_violations
from synthflow.transform import Transformer

__all__ = ["DP_OMITTED", "EXACT_BANNER", "render_report", "write_report"]

EXACT_BANNER = (
    "NON-PRIVATE STATISTICS: this report holds exact values computed from the original data."
)
DP_OMITTED = (
    "The exact comparison with the original data (its marginals, group means, regression "
    "coefficients, unmatched records, constraint violations) is omitted: it would not be "
    "private. Only DP-released values and statistics of the candidate, which is public, "
    "are shown."
)
_ORIG, _CAND, _BAD, _GOOD = "#4c72b0", "#dd8452", "#c44e52", "#55a868"


# ------------------------------------------------------------------------- helpers


def _plt() -> Any:
    import matplotlib  # noqa: PLC0415 (heavy; only when a report is written)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    return plt


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    _plt().close(fig)
    return f'<img src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}"/>'


def _table(df: pd.DataFrame) -> str:
    if df.empty:
        return "<p class='note'>(none)</p>"
    return df.to_html(index=False, float_format=lambda v: f"{v:.6g}", escape=True, na_rep="")


def _h(level: int, text: str) -> str:
    return f"<h{level}>{html.escape(text)}</h{level}>"


def _labels(transformer: Transformer, name: str) -> list[str]:
    return list(transformer.transformations[name].labels)


def _grid(n: int, *, width: float = 12.0, row_h: float = 3.4, ncols: int = 2) -> Any:
    plt = _plt()
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, row_h * nrows), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()


def _bars(ax: Any, labels: list[str], series: list[tuple[str, np.ndarray, str]]) -> None:
    """Grouped vertical bars, one group per label."""
    x = np.arange(len(labels))
    w = 0.8 / len(series)
    for i, (name, values, color) in enumerate(series):
        ax.bar(x + (i - (len(series) - 1) / 2) * w, values, w, label=name, color=color)
    # Readable at 1280 px: at most ~24 labels per axis (every k-th bin labelled).
    step = max(1, math.ceil(len(labels) / 24))
    ax.set_xticks(x[::step], labels[::step], rotation=90 if len(labels) > 6 else 0, fontsize=9)
    ax.tick_params(axis="y", labelsize=9)
    ax.grid(axis="y", alpha=0.3)


# ------------------------------------------------------------------------ criteria


def _ratio(value: float, threshold: float) -> float:
    return value / threshold if threshold > 0 else math.nan


def _criteria_table(report: AcceptanceReport) -> str:
    rows = []
    for c in report.criteria:
        row: dict[str, Any] = {
            "criterion": c.name,
            "value": c.value,
            "threshold": c.threshold,
            "value / threshold": _ratio(c.value, c.threshold),
            "passed": "yes" if c.passed else "NO",
        }
        if not report.exact:
            row["epsilon"] = c.epsilon
            row["mechanism"] = c.mechanism
            row["sensitivity"] = c.sensitivity
            row["noise sd"] = c.noise_sd
            # The functional mechanism's noise is on the fit's statistics (standardised
            # units), not on the criterion's value: no ratio to the threshold.
            row["noise sd / threshold"] = (
                _ratio(c.noise_sd, abs(c.threshold))
                if c.mechanism == "laplace" and c.noise_sd is not None
                else math.nan
            )
        rows.append(row)
    table = _table(pd.DataFrame(rows))
    if not report.exact:
        table += (
            "<p class='note'>noise sd: the standard deviation of the Laplace noise added to "
            "the value (for the functional mechanism: of the noise on each statistic of the "
            "regression fit, in standardised units). A noise sd near or above the threshold "
            "makes the decision close to random.</p>"
        )
    return table


def noise_dominated(report: AcceptanceReport) -> list[str]:
    """Laplace-released criteria whose noise sd is at least their threshold.

    Their decision is close to a coin toss: a candidate far above the threshold passes
    often, one far below fails often. (The functional mechanism's noise is on the fit's
    statistics, not on the measure, so it is not compared here.)
    """
    return [
        c.name
        for c in report.criteria
        if c.mechanism == "laplace" and c.noise_sd is not None and c.noise_sd >= abs(c.threshold)
    ]


def _criteria_plot(report: AcceptanceReport) -> str:
    """One strip per criterion: value (dot, +-2 noise sd in DP mode) against threshold."""
    plt = _plt()
    crits = report.criteria
    fig, axes = plt.subplots(len(crits), 1, figsize=(9, 0.8 * len(crits) + 0.6), squeeze=False)
    for ax, c in zip(axes[:, 0], crits, strict=True):
        color = _GOOD if c.passed else _BAD
        sd = c.noise_sd or 0.0
        lo = min(0.0, c.value - 2 * sd, c.threshold)
        hi = max(c.value + 2 * sd, c.threshold)
        pad = 0.08 * (hi - lo or 1.0)
        ax.set_xlim(lo - pad, hi + pad)
        ax.axvline(c.threshold, color="black", lw=2)
        ax.axvspan(c.threshold, hi + pad, color=_BAD, alpha=0.07)
        if sd:
            ax.errorbar(c.value, 0, xerr=2 * sd, fmt="none", ecolor="gray", capsize=4)
        ax.plot(c.value, 0, "o", color=color, ms=9)
        ax.set_yticks([])
        ax.set_ylabel(c.name, rotation=0, ha="right", va="center", fontsize=11)
        ratio = _ratio(c.value, c.threshold)
        note = f"value {c.value:.4g} / threshold {c.threshold:.4g}"
        note += f" = {ratio:.2f}" if not math.isnan(ratio) else ""
        ax.text(1.01, 0.5, note, transform=ax.transAxes, fontsize=10, va="center", color=color)
        ax.tick_params(axis="x", labelsize=9)
    what = "DP value (dot, bar = +-2 noise sd)" if not report.exact else "exact value (dot)"
    axes[0, 0].set_title(f"{what} vs threshold (black line; fails right of it)", fontsize=12)
    fig.subplots_adjust(hspace=1.0)
    return _png(fig)


# ---------------------------------------------------------------- shared sections


def _one_way(transformer: Transformer, t: np.ndarray | None, r: np.ndarray) -> str:
    names = transformer.domain.names
    fig, axes = _grid(len(names))
    for j, (ax, name) in enumerate(zip(axes, names, strict=False)):
        size = transformer.domain.sizes[j]
        series = []
        if t is not None:
            series.append(("original", np.bincount(t[:, j], minlength=size) / len(t), _ORIG))
        series.append(("candidate", np.bincount(r[:, j], minlength=size) / len(r), _CAND))
        _bars(ax, _labels(transformer, name), series)
        ax.set_title(name, fontsize=9)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return _png(fig)


def _by(by: str | None) -> str:
    return by if by is not None else "(overall)"


def _condmean_plot(
    rows: list[condmean.GroupMean], column: str, *, with_original: bool, threshold: float
) -> str:
    """Dot plot per group-by option: means (filled) and medians (hollow) per group.

    A grey band of +-``threshold`` around each reference mean (the original's, or the
    candidate's in DP mode) gives the scale: a difference inside the band is within the
    criterion's threshold, however large it looks on a zoomed axis.
    """
    options = list(dict.fromkeys(g.by for g in rows))
    fig, axes = _grid(len(options), width=12.0, row_h=3.4, ncols=min(3, len(options)))
    for ax, by in zip(axes, options, strict=False):
        sel = [g for g in rows if g.by == by]
        x = np.arange(len(sel))
        ref = [g.mean_original if with_original else g.mean_candidate for g in sel]
        for i, m in enumerate(ref):
            ax.fill_between(
                [i - 0.35, i + 0.35],
                m - threshold,
                m + threshold,
                color="0.85",
                zorder=0,
                label="threshold band" if i == 0 else None,
            )
        series = [("candidate", 0.12, _CAND, "mean_candidate", "median_candidate")]
        if with_original:
            series.insert(0, ("original", -0.12, _ORIG, "mean_original", "median_original"))
            for i, g in enumerate(sel):  # the error the criterion measures
                ax.plot([i - 0.12, i + 0.12], [g.mean_original, g.mean_candidate], color="gray")
        for name, off, color, mean, median in series:
            ax.plot(
                x + off, [getattr(g, mean) for g in sel], "o", color=color, label=f"{name} mean"
            )
            ax.plot(
                x + off,
                [getattr(g, median) for g in sel],
                "D",
                mfc="none",
                color=color,
                ms=6,
                label=f"{name} median",
            )
        labels = [g.group if by is not None else "everyone" for g in sel]
        ax.set_xticks(x, labels, fontsize=9, rotation=30 if len(sel) > 5 else 0)
        ax.set_xlim(-0.6, len(sel) - 0.4)
        ax.tick_params(axis="y", labelsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.set_title(f"{column}: {'by ' + by if by is not None else 'overall'}", fontsize=11)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


def _condmean_section(
    c: CriterionSpec, transformer: Transformer, t: np.ndarray | None, r: np.ndarray
) -> str:
    column = c.column or ""
    exact = t is not None
    # DP mode passes the candidate twice and shows only its side.
    rows = condmean.cond_mean_table(r if t is None else t, r, transformer, column, c.group_by)
    if exact:
        df = pd.DataFrame([{**vars(g), "by": _by(g.by), "error": g.error} for g in rows])
    else:
        df = pd.DataFrame(
            [
                {
                    "by": _by(g.by),
                    "group": g.group,
                    "size_candidate": g.size_candidate,
                    "mean_candidate": g.mean_candidate,
                    "median_candidate": g.median_candidate,
                }
                for g in rows
            ]
        )
    title = f"Conditional means and medians: {column}" + ("" if exact else " (candidate only)")
    plot = _condmean_plot(rows, column, with_original=exact, threshold=c.threshold)
    return _h(2, title) + plot + _table(df)


def _regression_section(
    c: CriterionSpec,
    transformer: Transformer,
    t: np.ndarray | None,
    r: np.ndarray,
    dp_fit: dict[str, Any] | None = None,
) -> str:
    target = c.column or ""
    xr, yr, feats, _, _ = regression.design(r, transformer, target, c.features)
    models = {"candidate (OLS)": regression.ols(xr, yr, feats)}
    if t is not None:
        xo, yo, _, _, _ = regression.design(t, transformer, target, c.features)
        models = {"original (OLS)": regression.ols(xo, yo, feats), **models}
    elif dp_fit is not None:  # DP mode: the released fit of D_T (DP, so publishable)
        fit = regression.LinearModel(
            features=feats, intercept=float(dp_fit["intercept"]), coef=tuple(dp_fit["coef"])
        )
        models = {"original (DP fit)": fit, **models}
    terms = ["intercept", *feats]
    df = pd.DataFrame({"term": terms, **{k: [m.intercept, *m.coef] for k, m in models.items()}})
    if len(models) == 2:
        first, second = list(models)
        df["abs difference"] = (df[first] - df[second]).abs()
    plt = _plt()
    fig, (ax0, ax1) = plt.subplots(
        1, 2, figsize=(11, 0.45 * len(terms) + 1.2), gridspec_kw={"width_ratios": [1, 4]}
    )
    colors = [_ORIG, _CAND] if len(models) == 2 else [_CAND]
    h = 0.8 / len(models)
    for i, ((name, m), color) in enumerate(zip(models.items(), colors, strict=True)):
        off = (i - (len(models) - 1) / 2) * h
        ax0.barh([off], [m.intercept], h, color=color)
        ax1.barh(np.arange(len(feats)) + off, m.coef, h, color=color, label=name)
    ax0.set_yticks([0], ["intercept"])
    ax1.set_yticks(np.arange(len(feats)), feats)
    ax1.invert_yaxis()
    for ax in (ax0, ax1):
        ax.axvline(0, color="black", lw=0.8)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(labelsize=8)
    ax1.set_title(f"coefficients of {target} (raw units per unit of feature)", fontsize=9)
    ax1.legend(fontsize=8)
    fig.tight_layout()
    if t is not None:
        head = _h(2, "Regression coefficients (raw units)")
    elif dp_fit is not None:
        head = _h(2, "Regression coefficients (raw units; DP fit of the original vs candidate)")
        head += (
            "<p class='note'>The original's coefficients are the functional-mechanism fit "
            "released under this criterion's budget (noisy, DP); the criterion compares them "
            "with the candidate's OLS in the candidate's standardisation.</p>"
        )
    else:
        head = _h(2, "Regression coefficients (raw units; candidate)")
    return head + _png(fig) + _table(df)


def _violations(
    spec: ReleaseSpec, transformer: Transformer, frames: dict[str, pd.DataFrame]
) -> str:
    rules = spec.synthetic_constraints
    rows = [
        {"rule": f"{rule.id}: {rule.name}"}
        | {k: int(binned_violations(f, [rule], transformer).sum()) for k, f in frames.items()}
        for rule in rules
    ]
    total = {"rule": "any rule"} | {
        k: int(binned_violations(f, rules, transformer).sum()) for k, f in frames.items()
    }
    return _h(
        2, "Constraint violations (rows of the binned table each synthetic rule drops)"
    ) + _table(pd.DataFrame([*rows, total]))


# ------------------------------------------------------------------ exact sections


REPORT_MARGINALS = 2000
"""Most marginals the worst-cells section scans (wide tables: the highest orders go)."""


def _report_family(spec: ReleaseSpec, names: tuple[str, ...]) -> list[tuple[int, ...]]:
    """The marginals criterion's family (else every 1- and 2-way), capped by order."""
    crit = next((c for c in spec.criteria if c.kind == "marginals"), None)
    family = (
        marginal_family(crit, names)
        if crit is not None
        else marginals.marginal_subsets(len(names), max_order=2)
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
        _h(2, "Worst k-way cells (normalized counts)"),
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
                    _labels(transformer, names[i])[v]
                    for i, v in zip(c.columns, c.cell, strict=True)
                ),
                "original": c.original,
                "candidate": c.candidate,
                "error": c.error,
            }
            for c in cells
        ]
        out += [_h(3, f"{k}-way"), _table(pd.DataFrame(rows))]
    return "".join(out)


def _faithfulness_section(
    c: CriterionSpec, transformer: Transformer, t: np.ndarray, r: np.ndarray
) -> str:
    assert c.match is not None
    names = transformer.domain.names
    res = faithfulness.maximum_matching(t, r, transformer, c.match)
    um = t[res.unmatched_original]
    # Which column blocks matches: the matches gained if the column were ignored
    # (set equal in both tables), the rest of the rule unchanged.
    gained = []
    for j in range(len(names)):
        t0, r0 = t.copy(), r.copy()
        t0[:, j] = 0
        r0[:, j] = 0
        gained.append(faithfulness.maximum_matching(t0, r0, transformer, c.match).size - res.size)
    out = [
        _h(2, "Faithfulness: unmatched original records"),
        f"<p>matched {res.size} of {res.n_original}; unmatched {len(um)} "
        f"({res.unmatched_share:.3%}).</p>",
    ]
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 0.4 * len(names) + 1.0))
    ax.barh(names, gained, color=_BAD)
    ax.invert_yaxis()
    ax.set_xlabel("extra matches if this column were ignored", fontsize=8)
    ax.set_title("matches gained if the column were ignored (rest of the rule kept)", fontsize=9)
    ax.tick_params(labelsize=8)
    for y, g in enumerate(gained):
        ax.text(g, y, f" {g}", va="center", fontsize=8)
    fig.tight_layout()
    out += [
        _h(3, "Which column blocks matches"),
        _png(fig),
        _table(pd.DataFrame({"column": names, "extra matches if ignored": gained})),
    ]
    fig, axes = _grid(len(names))
    tables = []
    for j, (ax, name) in enumerate(zip(axes, names, strict=False)):
        labels = _labels(transformer, name)
        cnt = np.bincount(um[:, j], minlength=len(labels))
        tot = np.bincount(t[:, j], minlength=len(labels))
        share = np.divide(cnt, tot, out=np.zeros(len(labels)), where=tot > 0)
        _bars(ax, labels, [("unmatched share", share, _BAD)])
        ax.set_title(f"unmatched share by {name}", fontsize=9)
        df = pd.DataFrame({"bin": labels, "original": tot, "unmatched": cnt, "share": share})
        tables.append(_h(3, f"unmatched by {name}") + _table(df[df.unmatched > 0]))
    fig.tight_layout()
    out += [
        _h(3, "Unmatched share by bin (unmatched original records / original records in the bin)"),
        _png(fig),
        "<details><summary>tables by column</summary>",
        *tables,
        "</details>",
    ]
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
        _h(2, "Diagnostics (not acceptance criteria; exact, non-private)")
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
        + _table(shapes)
        + "<p>Lowest column pair scores:</p>"
        + _table(pairs)
    )


# --------------------------------------------------------------------------- entry


def render_report(
    spec: ReleaseSpec,
    transformer: Transformer,
    original: pd.DataFrame,
    candidate: pd.DataFrame,
    report: AcceptanceReport,
) -> str:
    """The HTML text of the report; its first line states the mode."""
    exact = report.exact
    r = code_matrix(candidate, transformer, what="candidate")
    # DP mode never reads D_T beyond its public size n.
    t = code_matrix(original, transformer, what="original") if exact else None
    if exact:
        head = EXACT_BANNER
    else:
        head = (
            f"DP evaluation: the criterion values were released with differential privacy "
            f"(epsilon {report.epsilon_total:g}); the other statistics describe the public "
            "candidate only."
        )
    sections = [
        _h(2, "Criteria against thresholds"),
        _criteria_plot(report),
        _criteria_table(report),
    ]
    if t is not None:
        sections.append(_diagnostics_section(transformer, t, r))
    frames = {"original": original, "candidate": candidate} if exact else {"candidate": candidate}
    sections.append(_violations(spec, transformer, frames))
    sections += [
        _h(2, "1-way marginals" + ("" if exact else " (candidate only)")),
        _one_way(transformer, t, r),
    ]
    if t is not None:
        sections.append(_worst_cells(spec, transformer, t, r))
    for c in spec.criteria:
        if c.kind == "conditional_mean" and c.column:
            sections.append(_condmean_section(c, transformer, t, r))
        elif c.kind == "regression_coefficients" and c.column:
            released = next((x for x in report.criteria if x.name == c.name), None)
            dp_fit = released.public.get("dp_fit") if released is not None else None
            sections.append(_regression_section(c, transformer, t, r, dp_fit))
        elif c.kind == "faithfulness" and c.match is not None and t is not None:
            sections.append(_faithfulness_section(c, transformer, t, r))
    # The first line states the mode (a reader of the raw file sees it first).
    return f"<!-- {html.escape(head)} -->\n" + render(
        "evaluation_report.html.j2",
        spec_name=spec.name,
        exact=exact,
        banner=head,
        dp_omitted=DP_OMITTED,
        passed=report.passed,
        n_passed=sum(c.passed for c in report.criteria),
        n_criteria=len(report.criteria),
        noise_dominated=[] if exact else noise_dominated(report),
        n_candidate=len(candidate),
        n_original=len(original),
        colour_original=_ORIG,
        colour_candidate=_CAND,
        # Fragments built here from escaped text and our own PNGs.
        sections=[Markup(x) for x in sections if x],
    )


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

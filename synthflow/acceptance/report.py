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

import html
import math
from pathlib import Path
from typing import Any

import pandas as pd

from synthflow._html import Markup, render
from synthflow.acceptance._common import code_matrix
from synthflow.acceptance._report_exact import (
    _diagnostics_section,
    _worst_cells,
)
from synthflow.acceptance._report_plots import (
    _BAD,
    _CAND,
    _GOOD,
    _ORIG,
    _h,
    _plt,
    _png,
    _table,
)
from synthflow.acceptance._report_sections import (
    _one_way,
    _violations,
)
from synthflow.acceptance.noise_check import (
    PERFECT_PASS_MIN,
    NoiseFigure,
    noise_figures,
    public_sample,
)
from synthflow.acceptance.results import AcceptanceReport
from synthflow.config.model import ReleaseSpec
from synthflow.transform import Transformer

__all__ = ["DP_OMITTED", "EXACT_BANNER", "render_report", "write_report"]

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


# ------------------------------------------------------------------------ criteria


def _ratio(value: float, threshold: float) -> float:
    return value / threshold if threshold > 0 else math.nan


def _criteria_table(report: AcceptanceReport, figures: dict[str, NoiseFigure]) -> str:
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
            figure = figures.get(c.name)
            row["perfect candidate passes"] = (
                f"{figure.perfect_pass:.0%}" if figure is not None else "-"
            )
        rows.append(row)
    table = _table(pd.DataFrame(rows))
    if not report.exact:
        table += (
            "<p class='note'>noise sd: the standard deviation of the Laplace noise added to "
            "the value (for the functional mechanism: of the noise on each statistic of the "
            "regression fit, in standardised units). perfect candidate passes: how often a "
            "candidate identical to the original would pass this release at this n, from "
            "public facts and the spec's public sample (the pre-flight's and the datasheet's "
            f"own figure); below {PERFECT_PASS_MIN:.0%} the decision is mostly the noise's.</p>"
        )
    return table


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
    figures = {} if exact else _figures(spec, transformer, len(original))
    sections = [
        _h(2, "Criteria against thresholds"),
        _criteria_plot(report),
        _criteria_table(report, figures),
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
        released = next((x for x in report.criteria if x.name == c.name), None)
        sections.append(c.impl.report_section(c, transformer, t, r, released))
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
        noise_dominated=[f.message() for f in figures.values() if f.dominated],
        n_candidate=len(candidate),
        n_original=len(original),
        colour_original=_ORIG,
        colour_candidate=_CAND,
        # Fragments built here from escaped text and our own PNGs.
        sections=[Markup(x) for x in sections if x],
    )


def _figures(spec: ReleaseSpec, transformer: Transformer, n: int) -> dict[str, NoiseFigure]:
    """The one noise rule's figures at the original's public size ``n``."""
    sample = public_sample(spec)
    return {f.criterion: f for f in noise_figures(spec, transformer, n, sample)}


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

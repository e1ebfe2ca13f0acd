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

from synthflow._util.html import Markup, render
from synthflow.acceptance._report_exact import (
    _diagnostics_section,
    _worst_cells,
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
from synthflow.acceptance.results import AcceptanceReport, CriterionResult
from synthflow.config.model import ReleaseSpec
from synthflow.criteria import code_matrix
from synthflow.criteria.plots import (
    BAD,
    CAND,
    GOOD,
    ORIG,
    heading,
    html_table,
    png,
    pyplot,
    sig,
    strip_limits,
)
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


# ------------------------------------------------------------------------ criteria


def _ratio(value: float, threshold: float) -> float:
    return value / threshold if threshold > 0 else math.nan


def _spec_threshold(c: CriterionResult, spec_thresholds: dict[str, float]) -> float | None:
    """The spec's threshold where the release compared with another (a pseudo-threshold)."""
    spec_t = spec_thresholds.get(c.name)
    if spec_t is None or math.isclose(spec_t, c.threshold):
        return None
    return spec_t


def _threshold_text(c: CriterionResult, spec_thresholds: dict[str, float]) -> str:
    spec_t = _spec_threshold(c, spec_thresholds)
    if spec_t is None:
        return sig(c.threshold)
    return f"{sig(c.threshold)} (pseudo; spec {sig(spec_t)})"


def _criteria_table(
    report: AcceptanceReport,
    figures: dict[str, NoiseFigure],
    spec_thresholds: dict[str, float] | None = None,
) -> str:
    """Every number to 4 significant digits (:func:`sig`), one format for the table."""
    spec_thresholds = spec_thresholds or {}
    rows = []
    for c in report.criteria:
        row: dict[str, Any] = {
            "criterion": c.name,
            "value": sig(c.value),
            "threshold": _threshold_text(c, spec_thresholds),
            "value / threshold": sig(_ratio(c.value, c.threshold), 3),
            "passed": "yes" if c.passed else "NO",
        }
        if not report.exact:
            row["epsilon"] = sig(c.epsilon)
            row["mechanism"] = c.mechanism
            row["sensitivity"] = sig(c.sensitivity)
            row["noise sd"] = sig(c.noise_sd)
            figure = figures.get(c.name)
            row["perfect candidate passes"] = (
                f"{figure.perfect_pass:.0%}" if figure is not None else "-"
            )
        rows.append(row)
    table = html_table(pd.DataFrame(rows))
    if any(_spec_threshold(c, spec_thresholds) is not None for c in report.criteria):
        table += (
            "<p class='note'>pseudo: the value was compared with a pseudo-threshold below "
            "the spec's threshold (set by the criterion's false-positive rate, so that "
            "noise alone rarely passes a candidate above the spec's threshold).</p>"
        )
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


def _criteria_plot(
    report: AcceptanceReport, spec_thresholds: dict[str, float] | None = None
) -> str:
    """One strip per criterion: value (dot, +-2 noise sd in DP mode) against threshold.

    Where the release compared the value with a pseudo-threshold, both lines are drawn
    and labelled: the pseudo-threshold (solid, the one that decided) and the spec's
    (dashed). A noise bar far wider than the strip's values is clipped, with arrows at
    the clipped ends and its full width printed beside the strip.
    """
    plt = pyplot()
    spec_thresholds = spec_thresholds or {}
    crits = report.criteria
    fig, axes = plt.subplots(len(crits), 1, figsize=(9, 0.9 * len(crits) + 0.6), squeeze=False)
    for ax, c in zip(axes[:, 0], crits, strict=True):
        color = GOOD if c.passed else BAD
        sd = c.noise_sd or 0.0
        spec_t = _spec_threshold(c, spec_thresholds)
        lines = [c.threshold] if spec_t is None else [c.threshold, spec_t]
        (x0, x1), (b0, b1), clipped = strip_limits(c.value, lines, 2 * sd)
        ax.set_xlim(x0, x1)
        ax.set_ylim(-1, 1)
        ax.axvline(c.threshold, color="black", lw=2)
        ax.axvspan(c.threshold, x1, color=BAD, alpha=0.07)
        if spec_t is not None:
            ax.axvline(spec_t, color="0.35", lw=1.5, ls="--")
            # pseudo-threshold's label on its far side from the spec's line
            left = c.threshold < spec_t
            for x, text, on_left in (
                (c.threshold, f"pseudo-threshold {sig(c.threshold, 3)}", left),
                (spec_t, f"spec {sig(spec_t, 3)}", not left),
            ):
                ax.annotate(
                    text, (x, 1), xytext=(-4 if on_left else 4, -2), textcoords="offset points",
                    ha="right" if on_left else "left", va="top", fontsize=9,
                )  # fmt: skip
        if sd:
            ax.plot([b0, b1], [0, 0], color="gray", lw=1.2)
            full = (c.value - 2 * sd, c.value + 2 * sd)
            for end, real, marker in ((b0, full[0], "<"), (b1, full[1], ">")):
                ax.plot(end, 0, marker if end != real else "|", color="gray", ms=8)
        ax.plot(c.value, 0, "o", color=color, ms=9, zorder=3)
        ax.set_yticks([])
        ax.set_ylabel(c.name, rotation=0, ha="right", va="center", fontsize=11)
        ratio = _ratio(c.value, c.threshold)
        which = "threshold" if spec_t is None else "pseudo-threshold"
        note = f"value {sig(c.value)} / {which} {sig(c.threshold)}"
        note += f" = {sig(ratio, 3)}" if not math.isnan(ratio) else ""
        if clipped:
            note += f"\nbar clipped (arrows): ±2 sd = ±{sig(2 * sd, 3)}"
        ax.text(1.01, 0.5, note, transform=ax.transAxes, fontsize=10, va="center", color=color)
        ax.tick_params(axis="x", labelsize=9)
    what = "DP value (dot, bar = ±2 noise sd)" if not report.exact else "exact value (dot)"
    axes[0, 0].set_title(f"{what} vs threshold (black line; fails right of it)", fontsize=12)
    fig.subplots_adjust(hspace=1.0)
    return png(fig)


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
    spec_thresholds = {c.name: c.threshold for c in spec.criteria}
    sections = [
        heading(2, "Criteria against thresholds"),
        _criteria_plot(report, spec_thresholds),
        _criteria_table(report, figures, spec_thresholds),
    ]
    if t is not None:
        sections.append(_diagnostics_section(transformer, t, r))
    frames = {"original": original, "candidate": candidate} if exact else {"candidate": candidate}
    sections.append(_violations(spec, transformer, frames))
    sections += [
        heading(2, "1-way marginals" + ("" if exact else " (candidate only)")),
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
        colour_original=ORIG,
        colour_candidate=CAND,
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

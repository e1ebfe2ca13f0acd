"""The text of the spec ``synthflow init`` drafts, one section after another.

Split from :mod:`synthflow.init.draft`, which drafts the columns and criteria from the
public file and renders them here: the header with its advice, the privacy budget, the
input mapping and columns, the constraints, the criteria (calibrated thresholds said
above each) and the configuration space, every drafted value marked ``# REVIEW``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from synthflow.init.columns import REVIEW, column_yaml, line, q
from synthflow.init.criteria import MARGIN, criterion_yaml, threshold

if TYPE_CHECKING:
    from synthflow.init.columns import DraftColumn
    from synthflow.init.criteria import Calibration, DraftCriterion

__all__ = ["render_draft"]

_ADVICE = (
    "#",
    "# Domains, bounds and categories must be PUBLIC FACTS (a codebook, a standard, the",
    "# documented range of a public-use file), never read from private data. Those marked",
    "# 'observed in the public file' are only the values this sample holds: widen each",
    "# domain to the documented range and list every category the private data may hold",
    "# (or give them in a codebook: 'synthflow init --domains FILE'). A private value",
    "# outside them is refused: 'synthflow validate SPEC --data PRIVATE' checks, before",
    "# any work. Narrow bounds to what is publicly plausible (narrower bounds, less",
    "# noise). Bins, budgets, criteria, thresholds and the space are defaults, not",
    "# recommendations. Check with 'synthflow validate SPEC --rows N'; every key is in",
    "# docs/spec.md.",
)
"""What the reviewer must do, under the draft's first two lines."""


def render_draft(
    label: str,
    sample: str | None,
    calibration: Calibration | None,
    *,
    nrows: int,
    name: str,
    cols: list[DraftColumn],
    criteria: list[DraftCriterion],
    all_on: bool = False,
) -> str:
    """The drafted spec's text (every criterion switched on with ``all_on``)."""
    lines = _head(label, sample, nrows=nrows, name=name, ncols=len(cols))
    lines += _columns(cols)
    lines += _constraints()
    lines += _criteria(criteria, calibration, all_on=all_on)
    lines += _space()
    return "\n".join(lines) + "\n"


def _head(label: str, sample: str | None, *, nrows: int, name: str, ncols: int) -> list[str]:
    """The header and its advice, the release's name and public sample, and the budget."""
    return [
        f"# Release spec DRAFTED by {label}",
        f"# ({nrows:,} rows, {ncols} columns): review every value marked REVIEW.",
        *_ADVICE,
        line(f"name: {q(name)}", "# REVIEW: the release's short name"),
        line("unit: record", "# REVIEW: one row (birth, person): the unit of privacy"),
        line('description: ""', "# REVIEW: what the data are, in words"),
        *(
            [line(f"public_sample: {q(sample)}", "# REVIEW: the public file of this draft")]
            if sample is not None and len(sample) <= 400
            else []
        ),
        *(
            ["# public_sample: FILE  # REVIEW: the public data saved as a file (noise figures)"]
            if sample is None
            else []
        ),
        "",
        "privacy:",
        line("  neighbouring: replace_one", "# neighbours replace one record; n is public"),
        line("  total_epsilon: 10.0", "# REVIEW: default: the dataset's whole budget"),
        line("  generator_epsilon: 4.0", "# REVIEW: default: one generator fit"),
        line("  total_delta: 1.0e-6", "# REVIEW: the Gaussian generators spend delta"),
    ]


def _columns(cols: list[DraftColumn]) -> list[str]:
    """The input mapping (dates read as months), if any, and the columns."""
    lines: list[str] = []
    dates = [c for c in cols if c.source]
    if dates:
        lines += ["", "input:", "  mapping:"]
        lines += [
            line(f"    {q(c.name)}: {{from: {q(c.source)}, parse: month}}", REVIEW) for c in dates
        ]
    lines += ["", "columns:"]
    for c in cols:
        lines += column_yaml(c)
    return lines


def _constraints() -> list[str]:
    """The (empty) constraints, and the acceptance section's opening comment."""
    return [
        "",
        "constraints:",
        line("  raw: []", "# REVIEW: rules dropping implausible rows, e.g."),
        '  #   - {id: 2, name: a rule in words, all: [[COLUMN, "<", 20], [COLUMN, ">", 6]]}',
        line("  synthetic: []", "# REVIEW: raw rules also checked on synthetic rows"),
        "",
        "# REVIEW: default criteria and budgets, not recommendations: agree them with the",
        "# data's users ('synthflow plan' helps choose budgets; 'synthflow validate SPEC",
        "# --rows N' warns of criteria whose noise alone decides pass or fail). Each",
        f"# threshold is at least {MARGIN:g} times what two samples of the private size drawn",
        "# from this public file score against each other (init --rows N), so that a good",
        "# generator can meet it: no generator beats a second real sample.",
        "acceptance:",
        "  criteria:",
    ]


def _criteria(
    criteria: list[DraftCriterion], calibration: Calibration | None, *, all_on: bool
) -> list[str]:
    """Each criterion, those switched off after a comment saying how to switch them on."""
    lines: list[str] = []
    more = False
    for k in criteria:
        if not k.active and not more and not all_on:
            lines.append(
                "    # More kinds (docs/spec.md), drafted for these columns: uncomment, "
                "then review."
            )
            more = True
        if calibration is not None:
            lines += calibration.comment(k)
            k = dataclasses.replace(k, body=calibration.kept_body(k))
        lines += criterion_yaml(k, threshold(k, calibration), active=True if all_on else None)
    return lines


def _space() -> list[str]:
    """The default configuration space, and the optional sections left to the reviewer."""
    return [
        "",
        "space:",
        line("  min_count: [1, 2]", "# REVIEW: default: every record appears this often"),
        "  models:",
        line("    - model: workload", "# REVIEW: default grids; on any table, Gaussian"),
        "      grid: {one_way_share: [0.1, 0.2], noise: gaussian, delta: 5.0e-7}",
        "    - model: privbayes",
        "      grid: {flavor: degree, epsilon_split: 0.3, degree: [1, 2]}",
        "",
        "# datasheet: {title: ..., publisher: ..., source: ..., population: ..., period: ...}",
        "# disclosure: {key_variables: [...], sensitive: COLUMN}",
    ]

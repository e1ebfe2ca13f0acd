"""``synthflow init``: a release spec drafted from a PUBLIC data file, for review.

The draft types every column (whole numbers: ``int``; text and booleans:
``categorical``; a date: the ``int`` month read from it through ``input.mapping``),
drafts public bins, domains, bounds, categories and conditional-mean groups from the
public file, and adds default budgets, criteria (more kinds commented out, drafted for
the file's columns) and a configuration space. Every drafted value carries a
``# REVIEW`` comment: a spec's domains, bounds and categories must be public facts,
never read from private data, so the command runs on files declared public only. The
draft passes ``synthflow validate`` as written.
"""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from synthflow._init_spec_columns import REVIEW, column_yaml, line, q, type_column
from synthflow.errors import DataError

if TYPE_CHECKING:
    from synthflow._init_spec_columns import DraftColumn
    from synthflow._init_spec_criteria import Calibration, DraftCriterion

__all__ = ["draft_spec", "write_draft"]


def draft_spec(
    data: str | Path,
    *,
    name: str | None = None,
    spec_dir: str | Path = ".",
    skip: tuple[str, ...] = (),
    rows: int | None = None,
) -> str:
    """The text of a release spec drafted from the PUBLIC file ``data``, for review.

    Args:
        data: A public CSV (optionally compressed) or Parquet file.
        name: The release's name (default: the file's name without its suffixes).
        spec_dir: Where the spec will be written (its ``public_sample`` is relative to it).
        skip: Columns of the file to leave out.
        rows: The private data's row count (public under ``replace_one``): the thresholds
            are set so that two samples of this many public rows pass them, with a margin
            (:mod:`synthflow._init_spec_criteria`). Default: half the public file.

    Raises:
        DataError: The file cannot be read, has no rows, or a column cannot be typed.
    """
    from synthflow._readers import read_table  # noqa: PLC0415

    if rows is not None:
        from synthflow.public.draw_sample import check_rows  # noqa: PLC0415

        check_rows(rows)  # before the file is read: a row count sizes the drafting's tables
    path = Path(data)
    frame = read_table(path)
    unknown = sorted(set(skip) - {str(c) for c in frame.columns})
    if unknown:
        raise DataError(f"--skip {unknown}: not columns of {str(path)!r}")
    if frame.empty:
        raise DataError(f"{str(path)!r} has a header but no rows; draft from a public sample")
    cols, problems = [], []
    for c in frame.columns:
        if str(c) not in skip:
            try:
                cols.append(type_column(str(c), frame[c]))
            except DataError as exc:  # every column that cannot be typed, at once
                problems.append(str(exc))
    if problems:
        many = f"{len(problems)} columns cannot be typed:\n  " if len(problems) > 1 else ""
        raise DataError(many + "\n  ".join(problems))
    if not cols:
        raise DataError("every column is skipped: nothing to draft")
    names = [c.name for c in cols]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DataError(
            f"the drafted columns {twice} would appear twice; rename the file's columns"
        )
    stem = path.name.split(".")[0]
    name = name or re.sub(r"[^A-Za-z0-9_-]+", "_", stem).strip("_") or "release"
    sample = os.path.relpath(path.resolve(), Path(spec_dir).resolve())
    if sample.startswith(f"..{os.sep}.."):  # far away: the absolute path reads better
        sample = str(path.resolve())
    from synthflow._init_spec_criteria import calibrate, drafted_criteria  # noqa: PLC0415

    criteria = drafted_criteria(cols)

    def render(sample: str, calibration: Calibration | None, all_on: bool = False) -> str:
        return _render(
            path, nrows=len(frame), name=name, sample=sample, cols=cols, criteria=criteria,
            calibration=calibration, all_on=all_on,
        )  # fmt: skip

    every = render(str(path.resolve()), None, all_on=True)  # scored, every criterion on
    return render(sample, calibrate(every, path, rows or max(1, len(frame) // 2)))


def _render(
    path: Path,
    *,
    nrows: int,
    name: str,
    sample: str,
    cols: list[DraftColumn],
    criteria: list[DraftCriterion],
    calibration: Calibration | None,
    all_on: bool = False,
) -> str:
    """The drafted spec's text (every criterion switched on with ``all_on``)."""
    # Long: one drafted section after another, in the spec's own order.
    from synthflow._init_spec_criteria import MARGIN, criterion_yaml, threshold  # noqa: PLC0415

    lines = [
        f"# Release spec DRAFTED by 'synthflow init' from the PUBLIC file {path.name}",
        f"# ({nrows:,} rows, {len(cols)} columns): review every value marked REVIEW.",
        "#",
        "# Domains, bounds and categories must be PUBLIC FACTS (a codebook, a standard, the",
        "# documented range of a public-use file), never read from private data. Those below",
        "# come from the public file only: widen each domain to the documented range (rows",
        "# of the private data outside it are refused), narrow bounds to what is publicly",
        "# plausible (narrower bounds, less noise) and list every category the private data",
        "# may hold. Bins, budgets, criteria, thresholds and the space are defaults, not",
        "# recommendations. Check with 'synthflow validate SPEC --rows N'; every key is in",
        "# docs/spec.md.",
        line(f"name: {q(name)}", "# REVIEW: the release's short name"),
        line("unit: record", "# REVIEW: one row (birth, person): the unit of privacy"),
        line('description: ""', "# REVIEW: what the data are, in words"),
        *(
            [line(f"public_sample: {q(sample)}", "# REVIEW: the public file of this draft")]
            if len(sample) <= 400
            else []
        ),
        "",
        "privacy:",
        line("  neighbouring: replace_one", "# neighbours replace one record; n is public"),
        line("  total_epsilon: 10.0", "# REVIEW: default: the dataset's whole budget"),
        line("  generator_epsilon: 4.0", "# REVIEW: default: one generator fit"),
        line("  total_delta: 1.0e-6", "# REVIEW: the Gaussian generators spend delta"),
    ]
    dates = [c for c in cols if c.source]
    if dates:
        lines += ["", "input:", "  mapping:"]
        lines += [
            line(f"    {q(c.name)}: {{from: {q(c.source)}, parse: month}}", REVIEW) for c in dates
        ]
    lines += ["", "columns:"]
    for c in cols:
        lines += column_yaml(c)
    lines += [
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
    lines += [
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
    return "\n".join(lines) + "\n"


def write_draft(
    data: str | Path, out: str | Path, *, name: str | None = None, force: bool = False,
    skip: tuple[str, ...] = (), rows: int | None = None,
) -> Path:  # fmt: skip
    """Write :func:`draft_spec` to ``out`` (refused when it exists, unless ``force``)."""
    from synthflow._outputs import check_output_file  # noqa: PLC0415

    target = check_output_file(out, force=force, option="--out", protected=(data,))
    text = draft_spec(data, name=name, spec_dir=target.parent, skip=skip, rows=rows)
    target.write_text(text, encoding="utf-8")
    return target

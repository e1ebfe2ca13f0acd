"""Reading and cleaning input data against the spec's public domain.

:func:`load_data` reads CSV or Parquet; :func:`clean_frame` (a frame given to the Python
API, and every file after reading) maps an input format onto the release columns
(``input.mapping`` of the spec), drops rows with missing values (empty fields, nulls),
refuses any value outside its column's public domain but the codes a raw rule on that
column names (``[birth_weight, "==", 9999]``), drops rows that a raw constraint on one
column removes (that column's declared cleaning), then rows that violate the raw
constraints across columns (declared rules, counted per rule). Problems
raise :class:`~synthflow.errors.DataError` naming the column and the fix; messages
never contain data values. Per-rule removal counts are private statistics: they are
reported only when the caller declares the input public.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from synthflow._cleaning import (
    as_integers,
    coerce,
    domain_fix,
    map_column,
    named_codes,
    refuse_out_of_domain,
)
from synthflow._util.readers import read_header, read_table
from synthflow.config.model import ReleaseSpec
from synthflow.errors import ConfigError, DataError
from synthflow.filtering import raw_violations

__all__ = [
    "CleaningReport",
    "LoadedData",
    "check_release_columns",
    "clean_frame",
    "load_data",
    "read_table",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class CleaningReport:
    """How many rows each cleaning rule removed (private unless the input is public)."""

    rows_read: int
    removed: tuple[tuple[str, int], ...]
    """(rule name, rows removed) in the order the rules were applied."""
    rows_kept: int
    public: bool
    """Whether the input was declared public (only then may the counts be shown)."""

    def describe(self) -> str:
        """Text for logs: counts only for public inputs."""
        if not self.public:
            return (
                "input cleaned (per-rule removal counts are private and not shown; "
                "declare the input public to see them)"
            )
        parts = [f"read {self.rows_read} rows"]
        parts += [f"rule {name!r} removed {k}" for name, k in self.removed]
        parts.append(f"kept {self.rows_kept}")
        return "; ".join(parts)

    def to_json(self) -> dict[str, object]:
        """JSON form; counts are withheld for private inputs."""
        if not self.public:
            return {"public": False}
        return {
            "public": True,
            "rows_read": self.rows_read,
            "removed": dict(self.removed),
            "rows_kept": self.rows_kept,
        }


@dataclass(frozen=True)
class LoadedData:
    """Cleaned raw release columns and the cleaning report."""

    frame: pd.DataFrame
    report: CleaningReport


def load_data(
    path: str | Path | pd.DataFrame,
    spec: ReleaseSpec | None = None,
    *,
    public: bool = False,
    extra_columns: tuple[str, ...] = (),
) -> LoadedData:
    """Read, map and clean an input file (or a DataFrame) for ``spec``.

    Args:
        path: CSV (optionally compressed) or Parquet file, or a pandas DataFrame with
            the same columns (read as it is; it is not modified).
        spec: The release spec (:func:`synthflow.load_spec`; required).
        public: Declare the input public (e.g. NVSS data); only then are per-rule
            removal counts logged and recorded.
        extra_columns: Input columns carried along unchanged after the release columns
            (e.g. a record id for cell keys); rows are dropped with the rest.

    Raises:
        DataError: Missing columns, wrong types, values outside the public domain, an
            empty file, or no rows left after cleaning.
    """
    if spec is None:
        raise ConfigError(
            "load_data needs the release spec: load_data(data, synthflow.load_spec('SPEC'))"
            " (a bundled name such as 'births', or a YAML file; 'synthflow init' drafts one)"
        )
    needed = {c.name for c in spec.columns} | set(extra_columns)
    needed |= {c.source.source for c in spec.columns if c.source is not None}
    if isinstance(path, pd.DataFrame):
        frame_in = path
        raw = frame_in[[c for c in frame_in.columns if c in needed]].copy()
        raw.columns = [str(c) for c in raw.columns]
    else:
        raw = read_table(path, columns=needed)
    missing_cols = [
        c.name
        for c in spec.columns
        if c.name not in raw.columns and (c.source is None or c.source.source not in raw.columns)
    ]
    if missing_cols:
        hints = [
            f"{c.name} (or its source {c.source.source})" if c.source else c.name
            for c in spec.columns
            if c.name in missing_cols
        ]
        # The header is shown only for public input: a file without a header row would
        # otherwise print its first record.
        header = (
            [str(c) for c in path.columns] if isinstance(path, pd.DataFrame) else read_header(path)
        )
        has = (
            f"the file has columns {header}"
            if public
            else f"the file has {len(header)} column(s) (names not shown: the input is "
            "not declared public, and a file without a header row would show a record)"
        )
        raise DataError(
            f"input lacks column(s) {', '.join(hints)}; {has}: check that the file has a "
            "header row, rename the columns or add input.mapping entries to the spec"
            + _separator_hint(header)
        )
    absent = [c for c in extra_columns if c not in raw.columns]
    if absent:
        raise DataError(f"input lacks the requested column(s) {absent}; check the option")
    held = [raw]
    del raw  # _clean frees the input once its columns are mapped
    source = "the DataFrame" if isinstance(path, pd.DataFrame) else repr(str(path))
    return _clean(held, spec, public=public, extra_columns=extra_columns, source=source)


def clean_frame(
    frame: pd.DataFrame,
    spec: ReleaseSpec,
    *,
    public: bool = False,
    extra_columns: tuple[str, ...] = (),
) -> LoadedData:
    """Clean a frame for ``spec`` exactly as :func:`load_data` cleans a file it read.

    The Python API's frames go through it (``Synthesizer.fit``, ``evaluate_candidate``),
    so they get the command line's checks before any charge. A missing value is
    pandas' (None, NaN, NA): its row is dropped, as an empty field of a file.

    Raises:
        DataError: As :func:`load_data`: wrong types, values outside the public domain,
            no rows left after cleaning.
    """
    return _clean([frame], spec, public=public, extra_columns=extra_columns, source="the frame")


def _clean(
    held: list[pd.DataFrame],
    spec: ReleaseSpec,
    *,
    public: bool,
    extra_columns: tuple[str, ...],
    source: str,
) -> LoadedData:
    """:func:`clean_frame`'s steps on ``held``'s one frame (popped: freed once mapped)."""
    raw = held.pop()
    # Column by column, so that millions of rows are held about twice, not five times.
    columns = {c.name: map_column(raw, c) for c in spec.columns}
    missing = np.zeros(len(raw), dtype=bool)
    for values in columns.values():
        missing |= values.isna().to_numpy()
    removed: list[tuple[str, int]] = [("(1) any missing value", int(missing.sum()))]
    keep = ~missing
    index = raw.index[keep]
    extras = raw.loc[index, list(extra_columns)]
    rows_read = len(raw)
    del raw  # free the input before the cleaned columns grow
    problems: dict[str, str] = {}  # every column's problem at once, not the first only
    for c in spec.columns:
        try:
            columns[c.name] = coerce(columns[c.name][keep], c)
        except DataError as exc:
            problems[c.name] = str(exc)
    mapped = pd.DataFrame(columns, index=index)
    del columns
    ints = [c for c in spec.columns if c.kind == "int"]
    # Any value out of domain is refused, before any rule: a rule drops values inside
    # the domain, and the codes a rule on one column names (9999 = unknown), no other.
    outside = []
    for col in ints:
        if col.name not in problems:
            try:
                refuse_out_of_domain(mapped, col, named_codes(spec, col), fix=False)
            except DataError as exc:
                problems[col.name] = str(exc)
                outside.append(col.name)
    if problems:  # one problem as it always read; several listed, the domains' fix once
        fix = domain_fix(outside[0] if len(problems) == 1 else "COLUMN") if outside else ""
        text = next(iter(problems.values()))
        if len(problems) > 1:  # one line, as every refusal (a log line, a CLI error)
            listed = " | ".join(problems.values())
            text = f"{len(problems)} columns {sorted(problems)} fail the checks: {listed}"
        raise DataError(text + (f"; {fix}" if fix else ""))
    # A rule on one column is that column's own declared cleaning (its codes, weights
    # above 5500 g); rules across columns run on the cast data, every code dropped.
    counts: dict[int, int] = {}
    own = [r for r in spec.raw_constraints if len({c.column for c in r.clauses}) == 1]
    for rule in own:
        drop = raw_violations(mapped, rule)
        counts[rule.id] = int(drop.sum())
        mapped = mapped.loc[~drop]
    for col in ints:
        mapped[col.name] = as_integers(mapped, col)
    for rule in spec.raw_constraints:
        if rule not in own:
            drop = raw_violations(mapped, rule)
            counts[rule.id] = int(drop.sum())
            mapped = mapped.loc[~drop]
    removed += [(f"({r.id}) {r.name}", counts[r.id]) for r in spec.raw_constraints]
    if mapped.empty:
        raise DataError(f"no rows of {source} are left after cleaning; check the input")
    report = CleaningReport(
        rows_read=rows_read, removed=tuple(removed), rows_kept=len(mapped), public=public
    )
    log.info(report.describe())
    frame = mapped.join(extras.loc[mapped.index]) if extra_columns else mapped
    return LoadedData(frame=frame.reset_index(drop=True), report=report)


def check_release_columns(frame: pd.DataFrame, spec: ReleaseSpec) -> None:
    """A frame given to the API must hold the spec's cleaned release columns.

    Raises:
        DataError: Naming the missing columns and the loader that makes them (a raw
            file's own format, e.g. NVSS's, is mapped by the spec's ``input.mapping``).
    """
    missing = [c for c in spec.column_names if c not in frame.columns]
    if missing:
        raise DataError(
            f"the frame lacks the spec's release column(s) {missing}: the API takes the "
            "cleaned release columns. Pass the data file instead (it is read, mapped by the "
            "spec's input.mapping and cleaned), or synthflow.load_data(path, spec).frame"
        )


def _separator_hint(header: list[str]) -> str:
    """A hint when one header field holds tabs or semicolons: another separator.

    Says only which character (never a name): a file read as one column whose header
    splits on it was written with that separator, not commas.
    """
    if len(header) != 1:
        return ""
    for char, name in (("\t", "tab"), (";", "semicolon"), ("|", "pipe")):
        if header[0].count(char) >= 1:
            return (
                f". The file reads as one column whose header holds {name}s: it looks "
                f"{name}-separated, and synthflow reads comma-separated CSV (or Parquet); "
                "convert it, e.g. with pandas: read_csv(f, sep=...).to_csv(new, index=False)"
            )
    return ""

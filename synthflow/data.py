"""Reading and cleaning input data against the spec's public domain.

:func:`load_data` reads CSV or Parquet, maps an input format onto the release columns
(``input.mapping`` of the spec), drops rows with missing values (empty fields only),
drops rows that a raw constraint on one column removes (that column's declared
cleaning), checks every value against the public domain (so that a value out of domain
is refused whatever another column holds), then drops rows that violate the raw
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

from synthflow._readers import read_header, read_table
from synthflow.config.model import Column, ReleaseSpec
from synthflow.errors import DataError
from synthflow.filtering import raw_violations

__all__ = [
    "CleaningReport",
    "LoadedData",
    "check_release_columns",
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


def _map_column(frame: pd.DataFrame, col: Column) -> pd.Series:
    if col.name in frame.columns:
        return frame[col.name]
    src = col.source
    assert src is not None  # load_data checked that every column can be read
    values = frame[src.source]
    if src.parse == "month":
        if pd.api.types.is_datetime64_any_dtype(values):
            parsed = values
        else:
            parsed = pd.to_datetime(values, errors="coerce", format="ISO8601")
            # Missing means empty: an entry that is present but not an ISO date (another
            # format, an impossible date) is an error, never a silently dropped row.
            if (values.notna() & parsed.isna()).any():
                raise DataError(
                    f"column {src.source!r} holds entries that are not ISO dates (YYYY-MM-DD) "
                    f"or are impossible dates; cannot derive {col.name!r}: convert every date "
                    "to YYYY-MM-DD (leave a missing date empty)"
                )
        values = parsed.dt.month.where(parsed.notna())
    if src.values:
        mapping = dict(src.values)
        # Map the distinct values, then index: a column of millions of rows holds few.
        codes, uniques = pd.factorize(values)  # missing values get code -1
        text = pd.Index(uniques).astype(str).str.lower()
        mapped_uniques = text.map(mapping)
        if pd.isna(mapped_uniques).any():
            raise DataError(
                f"column {src.source!r} holds values outside {sorted(mapping)}; cannot derive "
                f"{col.name!r}: fix the data or extend input.mapping.{col.name}.values"
            )
        taken = np.asarray(mapped_uniques, dtype=object).take(np.maximum(codes, 0))
        values = pd.Series(taken, index=values.index).where(codes >= 0)
    return values


def _coerce(values: pd.Series, col: Column) -> pd.Series:
    if col.kind == "categorical":
        # Check and convert the distinct values, then index (millions of rows, few values).
        codes, uniques = pd.factorize(values)
        text = pd.Index(uniques).astype(str)
        if not text.isin(col.categories).all():
            raise DataError(
                f"column {col.name!r} holds values outside its public categories "
                f"{list(col.categories)}; fix the data or the spec's categories"
            )
        return pd.Series(np.asarray(text, dtype=object).take(codes), index=values.index)
    numeric = pd.to_numeric(values, errors="coerce")
    if numeric.isna().any():
        raise DataError(
            f"column {col.name!r} must be integer-valued but holds non-numeric entries; "
            "fix the data (missing values are dropped, text is an error)"
        )
    arr = numeric.to_numpy(dtype=float)
    if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
        raise DataError(
            f"column {col.name!r} must hold whole numbers; round or recode the data first"
        )
    # Kept as floats until the domain is checked (load_data): a value past int64 would
    # wrap to a negative number in the cast.
    return pd.Series(arr, index=values.index)


def _check_domain(frame: pd.DataFrame, col: Column) -> pd.Series:
    """The int column's values checked against its public domain, then cast to integers.

    Raises:
        DataError: Naming the column and its domain (never a value).
    """
    assert col.domain is not None
    arr = frame[col.name].to_numpy(dtype=float)
    if ((arr < col.domain[0]) | (arr > col.domain[1])).any():
        raise DataError(
            f"column {col.name!r} holds values outside its public domain "
            f"[{col.domain[0]:g}, {col.domain[1]:g}]; fix the data, or widen "
            f"columns.{col.name}.domain in the spec if a wider range is public knowledge"
        )
    # The smallest of int32/int64 that holds the values (codes fit either; a 4M-row
    # input then takes half the memory).
    small = arr.size == 0 or (arr.min() >= -(2**31) and arr.max() < 2**31)
    return pd.Series(arr.astype(np.int32 if small else np.int64), index=frame.index)


def load_data(
    path: str | Path,
    spec: ReleaseSpec,
    *,
    public: bool = False,
    extra_columns: tuple[str, ...] = (),
) -> LoadedData:
    """Read, map and clean an input file for ``spec``.

    Args:
        path: CSV (optionally compressed) or Parquet file.
        spec: The release spec.
        public: Declare the input public (e.g. NVSS data); only then are per-rule
            removal counts logged and recorded.
        extra_columns: Input columns carried along unchanged after the release columns
            (e.g. a record id for cell keys); rows are dropped with the rest.

    Raises:
        DataError: Missing columns, wrong types, values outside the public domain, an
            empty file, or no rows left after cleaning.
    """
    # Long: read, map, clean and report: the steps every input goes through.
    needed = {c.name for c in spec.columns} | set(extra_columns)
    needed |= {c.source.source for c in spec.columns if c.source is not None}
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
        header = read_header(path)
        has = (
            f"the file has columns {header}"
            if public
            else f"the file has {len(header)} column(s) (names not shown: the input is "
            "not declared public, and a file without a header row would show a record)"
        )
        raise DataError(
            f"input lacks column(s) {', '.join(hints)}; {has}: check that the file has a "
            "header row, rename the columns or add input.mapping entries to the spec"
        )
    absent = [c for c in extra_columns if c not in raw.columns]
    if absent:
        raise DataError(f"input lacks the requested column(s) {absent}; check the option")
    # Column by column, so that millions of rows are held about twice, not five times.
    columns = {c.name: _map_column(raw, c) for c in spec.columns}
    missing = np.zeros(len(raw), dtype=bool)
    for values in columns.values():
        missing |= values.isna().to_numpy()
    removed: list[tuple[str, int]] = [("(1) any missing value", int(missing.sum()))]
    keep = ~missing
    index = raw.index[keep]
    extras = raw.loc[index, list(extra_columns)]
    rows_read = len(raw)
    del raw  # free the input before the cleaned columns grow
    for c in spec.columns:
        columns[c.name] = _coerce(columns[c.name][keep], c)
    mapped = pd.DataFrame(columns, index=index)
    del columns
    # A rule on one column is that column's own declared cleaning (e.g. weights above
    # 5500 g): it runs before the domain check, which then refuses any other value out of
    # domain whatever another column holds. Rules across columns run on checked data.
    counts: dict[int, int] = {}
    own = [r for r in spec.raw_constraints if len({c.column for c in r.clauses}) == 1]
    for rule in own:
        drop = raw_violations(mapped, rule)
        counts[rule.id] = int(drop.sum())
        mapped = mapped.loc[~drop]
    for col in spec.columns:
        if col.kind == "int":
            mapped[col.name] = _check_domain(mapped, col)
    for rule in spec.raw_constraints:
        if rule not in own:
            drop = raw_violations(mapped, rule)
            counts[rule.id] = int(drop.sum())
            mapped = mapped.loc[~drop]
    removed += [(f"({r.id}) {r.name}", counts[r.id]) for r in spec.raw_constraints]
    if mapped.empty:
        raise DataError(f"no rows of {str(path)!r} are left after cleaning; check the input")
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

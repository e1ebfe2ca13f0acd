"""Reading and cleaning input data against the spec's public domain.

:func:`load_data` reads CSV or Parquet, maps an input format onto the release columns
(``input.mapping`` of the spec), drops rows with missing values and rows that violate
the raw constraints, and then checks every value against the public domain. Problems
raise :class:`~synthflow.errors.DataError` naming the column and the fix; messages
never contain data values. Per-rule removal counts are private statistics: they are
reported only when the caller declares the input public.
"""

from __future__ import annotations

import gzip
import logging
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from synthflow.config import Column, ReleaseSpec
from synthflow.errors import DataError
from synthflow.filtering import raw_violations

__all__ = ["CleaningReport", "LoadedData", "load_data", "read_table"]

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


def read_table(path: str | Path) -> pd.DataFrame:
    """Read a CSV (optionally compressed) or Parquet file.

    Raises:
        DataError: If the file is missing, empty or unreadable.
    """
    p = Path(path)
    if p.is_dir():
        raise DataError(f"data file {str(p)!r} is a directory; pass the data file inside it")
    if not p.is_file():
        raise DataError(f"data file {str(p)!r} does not exist; check the path")
    if p.stat().st_size == 0:
        raise DataError(f"data file {str(p)!r} is empty; pass a CSV or Parquet file with a header")
    try:
        if p.suffix.lower() in (".parquet", ".pq"):
            frame = pd.read_parquet(p)
        else:
            frame = pd.read_csv(p, low_memory=False)
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{str(p)!r} is not UTF-8 text (byte {exc.start}); convert it, e.g. "
            "iconv -f latin1 -t utf-8"
        ) from exc
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise DataError(
            f"{str(p)!r} is a truncated or damaged compressed file ({type(exc).__name__}); "
            "copy it again"
        ) from exc
    except pd.errors.ParserError as exc:
        # pandas names only field counts and line numbers here, never values.
        detail = str(exc).split("C error: ")[-1].strip()
        raise DataError(
            f"{str(p)!r} has rows with different numbers of fields ({detail}); every row "
            "needs one value per header column"
        ) from exc
    except (pd.errors.EmptyDataError, OSError, ValueError) as exc:
        raise DataError(
            f"cannot read {str(p)!r} as CSV/Parquet ({type(exc).__name__}); "
            "pass a CSV (optionally .gz) or Parquet file"
        ) from exc
    if frame.shape[1] == 1 and ";" in str(frame.columns[0]):
        raise DataError(
            f"{str(p)!r} looks semicolon-separated (one column whose header holds ';'); save "
            "it with commas as separators"
        )
    if frame.empty:
        raise DataError(f"data file {str(p)!r} has no rows; it needs a header and data rows")
    return frame


def _map_column(frame: pd.DataFrame, col: Column) -> pd.Series:
    if col.name in frame.columns:
        return frame[col.name]
    src = col.source
    assert src is not None  # load_data checked that every column can be read
    values = frame[src.source]
    if src.parse == "month":
        parsed = pd.to_datetime(values, errors="coerce")
        if parsed.isna().any() and values.notna().any() and parsed.notna().sum() == 0:
            raise DataError(f"column {src.source!r} holds no ISO dates; cannot derive {col.name!r}")
        values = parsed.dt.month.where(parsed.notna())
    if src.values:
        mapping = dict(src.values)
        text = values.astype(str).str.lower().where(values.notna())
        mapped = text.map(mapping)
        if (mapped.isna() & text.notna()).any():
            raise DataError(
                f"column {src.source!r} holds values outside {sorted(mapping)}; cannot derive "
                f"{col.name!r}: fix the data or extend input.mapping.{col.name}.values"
            )
        values = mapped
    return values


def _coerce(values: pd.Series, col: Column) -> pd.Series:
    if col.kind == "categorical":
        text = values.astype(str)
        if not text.isin(col.categories).all():
            raise DataError(
                f"column {col.name!r} holds values outside its public categories "
                f"{list(col.categories)}; fix the data or the spec's categories"
            )
        return text
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
    return pd.Series(arr.astype(np.int64), index=values.index)


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
    raw = read_table(path)
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
        has = (
            f"the file has columns {list(map(str, raw.columns))}"
            if public
            else f"the file has {len(raw.columns)} column(s) (names not shown: the input is "
            "not declared public, and a file without a header row would show a record)"
        )
        raise DataError(
            f"input lacks column(s) {', '.join(hints)}; {has}: check that the file has a "
            "header row, rename the columns or add input.mapping entries to the spec"
        )
    absent = [c for c in extra_columns if c not in raw.columns]
    if absent:
        raise DataError(f"input lacks the requested column(s) {absent}; check the option")
    mapped = pd.DataFrame({c.name: _map_column(raw, c) for c in spec.columns})
    removed: list[tuple[str, int]] = []
    missing = mapped.isna().any(axis=1).to_numpy()
    removed.append(("(1) any missing value", int(missing.sum())))
    mapped = mapped.loc[~missing]
    mapped = pd.DataFrame({c.name: _coerce(mapped[c.name], c) for c in spec.columns})
    extras = raw.loc[mapped.index, list(extra_columns)]
    for rule in spec.raw_constraints:
        drop = raw_violations(mapped, rule)
        removed.append((f"({rule.id}) {rule.name}", int(drop.sum())))
        mapped = mapped.loc[~drop]
    for col in spec.columns:
        if col.kind == "int":
            assert col.domain is not None
            v = mapped[col.name].to_numpy()
            if ((v < col.domain[0]) | (v > col.domain[1])).any():
                raise DataError(
                    f"column {col.name!r} holds values outside its public domain "
                    f"[{col.domain[0]:g}, {col.domain[1]:g}]; fix the data, or widen "
                    f"columns.{col.name}.domain in the spec if a wider range is public knowledge"
                )
    if mapped.empty:
        raise DataError(f"no rows of {str(path)!r} are left after cleaning; check the input")
    report = CleaningReport(
        rows_read=len(raw), removed=tuple(removed), rows_kept=len(mapped), public=public
    )
    log.info(report.describe())
    frame = mapped.join(extras.loc[mapped.index]) if extra_columns else mapped
    return LoadedData(frame=frame.reset_index(drop=True), report=report)

"""Reading, checking and writing files in the NVSS sample format.

The NVSS sample format has one row per singleton birth and the columns
``mother_age, parity, gestation_week, is_female, birth_weight, date_of_birth``
(ints, a bool and a ``YYYY-MM-15`` date of which only the month is real), e.g.
``33,2,39,False,3490,2019-03-15``.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pandas as pd

from synthflow.errors import DataError

__all__ = ["SAMPLE_COLUMNS", "birth_months", "check_sample", "read_sample", "write_sample"]

SAMPLE_COLUMNS = (
    "mother_age",
    "parity",
    "gestation_week",
    "is_female",
    "birth_weight",
    "date_of_birth",
)
"""Columns of the NVSS sample format, in file order."""

_INT_COLUMNS = ("mother_age", "parity", "gestation_week", "birth_weight")
_BOOL_TEXT = {"true": True, "false": False, "1": True, "0": False}


def existing_file(path: str | Path, *, what: str) -> Path:
    """``path`` as a :class:`Path`, or :class:`DataError` if it is not a file."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"{what} {str(p)!r} does not exist or is not a file; check the path")
    return p


def read_csv_checked(path: str | Path, *, what: str, **kwargs: object) -> pd.DataFrame:
    """Read a (possibly gzipped) CSV file, turning empty or unreadable files into DataError."""
    p = existing_file(path, what=what)
    try:
        frame = pd.read_csv(p, **kwargs)  # type: ignore[call-overload,unused-ignore]
    except pd.errors.EmptyDataError as exc:
        raise DataError(f"{what} {str(p)!r} is empty; give a CSV file with a header row") from exc
    except (pd.errors.ParserError, UnicodeDecodeError, OSError, EOFError) as exc:
        raise DataError(f"{what} {str(p)!r} is not a readable CSV file ({exc})") from exc
    if frame.empty:
        raise DataError(f"{what} {str(p)!r} has a header but no rows; give a non-empty file")
    return frame


def read_sample(path: str | Path) -> pd.DataFrame:
    """Read and check a CSV (or ``.csv.gz``) file in the NVSS sample format."""
    frame = read_csv_checked(path, what="NVSS sample file")
    return check_sample(frame, where=str(path))


def check_sample(sample: pd.DataFrame, *, where: str = "sample") -> pd.DataFrame:
    """Check a frame in the NVSS sample format; return a copy with canonical dtypes.

    Raises:
        DataError: a column is missing, the frame is empty, or a value is missing or of
            the wrong type.
    """
    missing = [c for c in SAMPLE_COLUMNS if c not in sample.columns]
    if missing:
        raise DataError(
            f"{where}: missing column(s) {missing}; the NVSS sample format needs "
            f"{list(SAMPLE_COLUMNS)} (use load_nvss_natality for a full NVSS natality file)"
        )
    if sample.empty:
        raise DataError(f"{where}: no rows; give a non-empty NVSS sample")
    frame = sample.loc[:, list(SAMPLE_COLUMNS)].copy()
    if frame.isna().any().any():
        bad = [c for c in SAMPLE_COLUMNS if frame[c].isna().any()]
        raise DataError(f"{where}: missing values in column(s) {bad}; drop those rows first")
    for column in _INT_COLUMNS:
        values = pd.to_numeric(frame[column], errors="coerce")
        if values.isna().any() or (values != values.round()).any():
            raise DataError(f"{where}: column {column!r} must hold whole numbers only")
        frame[column] = values.astype("int64")
    frame["is_female"] = _as_bool(frame["is_female"], where=where)
    birth_months(frame, where=where)  # validates the dates
    frame["date_of_birth"] = frame["date_of_birth"].astype(str)
    return frame.reset_index(drop=True)


def birth_months(sample: pd.DataFrame, *, where: str = "sample") -> pd.Series:
    """The month (1..12) of each ``date_of_birth`` (``YYYY-MM-DD``)."""
    dates = pd.to_datetime(sample["date_of_birth"].astype(str), format="%Y-%m-%d", errors="coerce")
    if dates.isna().any():
        raise DataError(
            f"{where}: column 'date_of_birth' must hold dates written YYYY-MM-DD (e.g. 2019-03-15)"
        )
    return dates.dt.month.astype("int64")


def _as_bool(column: pd.Series, *, where: str) -> pd.Series:
    if column.dtype == bool:
        return column.astype(bool)
    mapped = column.astype(str).str.strip().str.lower().map(_BOOL_TEXT)
    if mapped.isna().any():
        raise DataError(f"{where}: column 'is_female' must hold True/False (or 1/0) only")
    return mapped.astype(bool)


def write_sample(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a frame in the NVSS sample format; ``.gz`` paths are gzipped reproducibly.

    The gzip header carries no time stamp, so the same frame always gives the same bytes.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    text = frame.loc[:, list(SAMPLE_COLUMNS)].to_csv(index=False, lineterminator="\n")
    if p.suffix == ".gz":
        with p.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", filename="", mtime=0) as gz:
            with io.TextIOWrapper(gz, encoding="utf-8", newline="") as out:
                out.write(text)
    else:
        p.write_text(text, encoding="utf-8", newline="")
    return p

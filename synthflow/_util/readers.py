"""Reading a data file into a frame: CSV (pyarrow), Parquet and Excel, with clear errors."""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Collection
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from synthflow.errors import DataError

__all__ = ["_ARROW_CSV", "_arrow_error", "_read_csv", "read_header", "read_table"]


def read_table(path: str | Path, *, columns: Collection[str] | None = None) -> pd.DataFrame:
    """Read a CSV (optionally compressed) or Parquet file.

    Args:
        path: The file.
        columns: Read only these columns (those present; the caller reports missing
            ones). A registry extract holds hundreds of columns a release never uses.

    Raises:
        DataError: If the file is missing, empty or unreadable, or a float column of a
            Parquet file holds an IEEE NaN (only a null is missing).
    """
    p = Path(path)
    if p.is_dir():
        raise DataError(f"data file {str(p)!r} is a directory; pass the data file inside it")
    if p.exists() and not p.is_file():
        raise DataError(
            f"data file {str(p)!r} is not a regular file (a pipe, socket or device); save the "
            "data to a CSV or Parquet file and pass that"
        )
    if not p.is_file():
        raise DataError(f"data file {str(p)!r} does not exist; check the path")
    if p.stat().st_size == 0:
        raise DataError(f"data file {str(p)!r} is empty; pass a CSV or Parquet file with a header")
    try:
        if p.suffix.lower() in (".parquet", ".pq"):
            wanted = None
            if columns is not None:
                names = pq.ParquetFile(p).schema_arrow.names
                wanted = [c for c in names if c in set(columns)]
            table = pq.read_table(p, columns=wanted, use_pandas_metadata=True)
            _refuse_nan_floats(table)
            frame = table.to_pandas()
        else:
            frame = _read_csv(p, columns)
    except pa.ArrowInvalid as exc:
        raise _arrow_error(p, exc) from None  # its text may quote a record: never shown
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
    except DataError:
        raise
    except (pd.errors.EmptyDataError, OSError, ValueError) as exc:
        kind = "Parquet" if p.suffix.lower() in (".parquet", ".pq") else "CSV"
        raise DataError(
            f"cannot read {str(p)!r} as {kind} ({type(exc).__name__}): the file is damaged or "
            "not of that format; pass a CSV (optionally .gz) or Parquet file"
        ) from exc
    header = [str(c) for c in frame.columns]
    if columns is not None and frame.shape[1] < len(set(columns)):
        header = read_header(p)  # some wanted columns absent: is the whole file one column?
    if len(header) == 1 and ";" in header[0]:
        raise DataError(
            f"{str(p)!r} looks semicolon-separated (one column whose header holds ';'); save "
            "it with commas as separators"
        )
    if frame.shape[1] == 0 and columns is not None:
        return frame  # none of the wanted columns: the caller names them
    if frame.empty:
        raise DataError(f"data file {str(p)!r} has no rows; it needs a header and data rows")
    return frame


_ARROW_CSV = (".csv", ".txt", ".gz", ".bz2", ".zst", ".lz4")
"""Suffixes pyarrow's CSV reader decompresses itself; others (.zip, .xz) go to pandas."""


def _read_csv(p: Path, columns: Collection[str] | None) -> pd.DataFrame:
    """A CSV through pyarrow's multi-threaded reader (3x pandas' C parser at 4M rows).

    Empty fields are missing in every column; nothing else is (``NA``, ``null`` are
    values); the types inferred (int64, float64, bool, strings as objects) are pandas'.
    Rows with too many or too few fields are an error, as in pandas.
    """
    if p.suffix.lower() not in _ARROW_CSV:
        frame = pd.read_csv(p, low_memory=False, keep_default_na=False, na_values=[""])
        return frame if columns is None else frame[[c for c in frame.columns if c in columns]]
    include = None
    if columns is not None:
        wanted = set(columns)
        include = [c for c in read_header(p) if c in wanted]
    table = pa_csv.read_csv(
        p,
        # Missing means empty: "NA", "null" or "n/a" in a private file are values (an
        # error where they do not belong), never rows silently dropped as missing.
        convert_options=pa_csv.ConvertOptions(
            include_columns=include, strings_can_be_null=True, null_values=[""]
        ),
    )
    _refuse_nan_text(p, table)
    # Dates as datetime64, not one Python object per row; the table's buffers are freed
    # column by column as the frame is built (peak memory about one copy, not two).
    return table.to_pandas(date_as_object=False, self_destruct=True, split_blocks=True)


def _refuse_nan_text(p: Path, table: pa.Table) -> None:
    """Refuse the text ``nan`` (or ``inf``) in a column pyarrow read as numbers.

    pyarrow parses "nan" as a float NaN, which would then count as missing (and the
    row be dropped) although only empty fields are missing. A float column holding a
    NaN that no empty field explains is re-read as text, and the file refused.

    Raises:
        DataError: Naming the column, never the row or its values.
    """
    import pyarrow.compute as pc  # noqa: PLC0415

    for name in table.column_names:
        column = table[name]
        if not pa.types.is_floating(column.type):
            continue
        finite = pc.is_finite(column)
        odd = int(pc.sum(pc.invert(pc.fill_null(finite, True))).as_py() or 0)
        if odd:
            raise DataError(
                f"column {name!r} holds text such as 'nan' or 'inf' where numbers belong; "
                "only an empty field means missing: leave missing values empty, or fix the "
                "data"
            )


def _refuse_nan_floats(table: pa.Table) -> None:
    """Refuse an IEEE NaN in a Parquet file's float column: only a null is missing.

    pandas reads a null and a NaN alike (NaN), and a missing value's row is dropped; a
    NaN is a value (a failed computation, a sentinel), never a silently dropped row.

    Raises:
        DataError: Naming the column and the number of rows, never a value.
    """
    import pyarrow.compute as pc  # noqa: PLC0415

    for name in table.column_names:
        column = table[name]
        if not pa.types.is_floating(column.type):
            continue
        if pc.any(pc.fill_null(pc.is_nan(column), False)).as_py():
            raise DataError(
                f"column {name!r} holds NaN (not-a-number) floats; only a null means "
                "missing: write missing values as nulls, or fix the data (how many rows is "
                "not said: a count of private rows is private)"
            )


def _arrow_error(p: Path, exc: Exception) -> DataError:
    """The reason pyarrow gave, in our words and without its text (it quotes the row)."""
    text = str(exc)
    fields = re.search(r"Expected (\d+) columns, got (\d+)", text)
    if fields:
        return DataError(
            f"{str(p)!r} has rows with different numbers of fields (expected "
            f"{fields.group(1)}, a row has {fields.group(2)}); every row needs one value per "
            "header column"
        )
    if p.suffix.lower() in (".parquet", ".pq"):
        return DataError(
            f"cannot read {str(p)!r} as Parquet (a damaged or truncated file, or not "
            "Parquet); copy it again, or pass a CSV (optionally .gz)"
        )
    if "UTF8" in text or "UTF-8" in text:
        return DataError(f"{str(p)!r} is not UTF-8 text; convert it, e.g. iconv -f latin1 -t utf-8")
    return DataError(
        f"cannot read {str(p)!r} as CSV (a malformed file: unbalanced quotes, a damaged "
        "compressed file or binary data); check the file and pass a CSV (optionally .gz) "
        "or Parquet file"
    )


def read_header(path: str | Path) -> list[str]:
    """Every column name of a file (read by :func:`read_table` before, so it reads)."""
    p = Path(path)
    if p.suffix.lower() in (".parquet", ".pq"):
        return [str(c) for c in pq.ParquetFile(p).schema_arrow.names]
    return [str(c) for c in pd.read_csv(p, nrows=0).columns]

"""The column steps of cleaning (:func:`synthflow.data.clean_frame`): map, type, domain.

A value outside an int column's public domain is refused, whatever a raw rule says:
a rule drops values inside the domain (implausible ones) and the codes it names with
``==`` on its own column (``[birth_weight, "==", 9999]``: 9999 means unknown). A range
rule names no code: weights in ounces, -5 or 99999 are errors of the data, not rows to
drop (dropping them changes n, which the release publishes, without a word).
Messages name the column, the domain and the fix, never a value nor how many rows (a
count of private rows is a statistic of the private data: :mod:`synthflow.errors`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthflow.config.model import Column, Constraint, ReleaseSpec
from synthflow.errors import DataError
from synthflow.filtering import raw_violations

__all__ = [
    "as_integers",
    "coerce",
    "domain_fix",
    "map_column",
    "named_codes",
    "refuse_out_of_domain",
]


def map_column(frame: pd.DataFrame, col: Column) -> pd.Series:
    """The release column ``col`` read from ``frame`` (as it is, or by ``input.mapping``)."""
    if col.name in frame.columns:
        return frame[col.name]
    src = col.source
    assert src is not None  # the caller checked that every column can be read
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


def coerce(values: pd.Series, col: Column) -> pd.Series:
    """Categories checked and as text; int columns as whole floats (cast after the domain)."""
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
    # Kept as floats until the domain is checked: a value past int64 would wrap to a
    # negative number in the cast.
    return pd.Series(arr, index=values.index)


def _own(rule: Constraint, column: str) -> bool:
    return {c.column for c in rule.clauses} == {column}


def named_codes(spec: ReleaseSpec, col: Column) -> np.ndarray:
    """Codes outside ``col``'s domain that a raw rule on ``col`` alone names and drops.

    A code is named by an ``==`` clause, and counts only if its rule drops it (an
    ``all`` rule whose other clauses exclude it names nothing).
    """
    assert col.domain is not None
    lo, hi = col.domain
    codes = []
    for rule in spec.raw_constraints:
        if not _own(rule, col.name):
            continue
        for clause in rule.clauses:
            v = clause.value
            if clause.op == "==" and not lo <= v <= hi:
                if raw_violations(pd.DataFrame({col.name: [v]}), rule)[0]:
                    codes.append(v)
    return np.array(sorted(set(codes)), dtype=float)


def domain_fix(name: str) -> str:
    """What to do about values outside column ``name``'s domain (``COLUMN``: any)."""
    return (
        "a raw rule drops values inside the domain "
        "and the codes it names, no other. Fix the data (e.g. convert values recorded in "
        f"another unit); widen columns.{name}.domain if a wider range is public "
        "knowledge; or, if the values are a code for a missing value (e.g. 9999 = "
        f"unknown), name that code in a raw rule on this column alone ([{name}, '==', "
        "CODE]) so that its rows are dropped as cleaning"
    )


def refuse_out_of_domain(
    frame: pd.DataFrame, col: Column, codes: np.ndarray, *, fix: bool = True
) -> None:
    """Refuse values of ``col`` outside its domain, but for the rules' ``codes``.

    Raises:
        DataError: Naming the column, its domain and (with ``fix``) the fix.
    """
    assert col.domain is not None
    arr = frame[col.name].to_numpy(dtype=float)
    out = (arr < col.domain[0]) | (arr > col.domain[1])
    if codes.size:
        out &= ~np.isin(arr, codes)
    if out.any():
        lo, hi = col.domain
        head = f"column {col.name!r} holds values outside its public domain [{lo:g}, {hi:g}]"
        raise DataError(f"{head}; {domain_fix(col.name)}" if fix else head)


def as_integers(frame: pd.DataFrame, col: Column) -> pd.Series:
    """The int column cast to integers, every value (the codes dropped) in its domain.

    Raises:
        DataError: As :func:`refuse_out_of_domain` (a named code its rule kept).
    """
    refuse_out_of_domain(frame, col, np.array([]))
    arr = frame[col.name].to_numpy(dtype=float)
    # The smallest of int32/int64 that holds the values (codes fit either; a 4M-row
    # input then takes half the memory).
    small = arr.size == 0 or (arr.min() >= -(2**31) and arr.max() < 2**31)
    return pd.Series(arr.astype(np.int32 if small else np.int64), index=frame.index)

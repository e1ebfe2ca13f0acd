"""Face privacy: the minimal-occurrence projection (SPEC sec. 7).

After projection every distinct record appears at least ``min_count`` times, so no
record is unique and every projection onto a subset of columns is k-anonymous with
k = ``min_count``. The projection only reorganises sampled (already public) rows: it is
post-processing and costs no budget. Its random choices come from the ``rng`` passed in
(a CSPRNG-backed generator in release mode).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["encode_rows", "min_count_problem", "project", "project_min_count", "rows_changed"]


def encode_rows(codes: pd.DataFrame, sizes: tuple[int, ...]) -> np.ndarray:
    """Integer key per row, equal iff the rows are equal.

    Mixed radix (column by column, cheap and exact in int64) while the domain has fewer
    than 2^63 cells; past that (e.g. 20 columns of 10 bins) the rows' rank among the
    distinct rows, so that no two different records ever share a key.
    """
    if math.prod(int(s) for s in sizes) >= 2**63:
        _, inverse = np.unique(codes.to_numpy(dtype=np.int64), axis=0, return_inverse=True)
        return inverse.ravel().astype(np.int64)
    key = np.zeros(len(codes), dtype=np.int64)
    for name, size in zip(codes.columns, sizes, strict=True):
        key *= size
        key += codes[name].to_numpy(dtype=np.int64)
    return key


def project_min_count(
    codes: pd.DataFrame, sizes: tuple[int, ...], min_count: int, rng: np.random.Generator
) -> pd.DataFrame:
    """The projected rows of :func:`project` (same random choices)."""
    return project(codes, sizes, min_count, rng)[0]


def project(
    codes: pd.DataFrame, sizes: tuple[int, ...], min_count: int, rng: np.random.Generator
) -> tuple[pd.DataFrame, int]:
    """Make every record appear at least ``min_count`` times, keeping exactly n rows.

    For j = 1 .. min_count - 1: the distinct records appearing exactly j times are
    shuffled; floor(j * m / (j + 1)) of the m such records are kept with j + 1 copies
    each, the others dropped, and the few rows this frees are refilled by one more copy
    of randomly chosen kept records (or, if none was kept, of records that already
    appear more than j times). Records appearing min_count times or more are untouched.

    Args:
        codes: Transformed rows (integer codes), one column per domain column.
        sizes: Domain size of each column, in column order.
        min_count: Required minimal occurrence (1 leaves the data unchanged).
        rng: Generator for the random choices.

    Returns:
        A new frame with the same columns and number of rows, in random order, and the
        number of rows the projection added as copies (:func:`rows_changed` of the two
        frames, read off the record counts before and after).

    Raises:
        ValueError: If ``min_count`` < 1 or there are fewer rows than ``min_count``.
    """
    n = len(codes)
    if min_count < 1:
        raise ValueError(f"min_count ({min_count}) must be >= 1")
    problem = min_count_problem(n, min_count)
    if problem:
        raise ValueError(problem)
    keys = encode_rows(codes, sizes)
    _, first, counts = np.unique(keys, return_index=True, return_counts=True)
    counts = counts.astype(np.int64)
    before = counts.copy()
    for j in range(1, min_count):
        idx = np.flatnonzero(counts == j)
        m = len(idx)
        if m == 0:
            continue
        idx = rng.permutation(idx)
        n_keep = (j * m) // (j + 1)
        keep, drop = idx[:n_keep], idx[n_keep:]
        counts[keep] = j + 1
        counts[drop] = 0
        freed = j * m - n_keep * (j + 1)
        pool = keep if n_keep > 0 else np.flatnonzero(counts > j)
        if freed:
            # freed < j + 1 <= len(pool) unless the pool is tiny; draw with replacement then.
            extra = rng.choice(pool, size=freed, replace=freed > len(pool))
            np.add.at(counts, extra, 1)
    assert counts.sum() == n, "projection must keep the number of rows"
    rows = np.repeat(first, counts)
    rows = rng.permutation(rows)
    added = int(np.maximum(counts - before, 0).sum())
    return codes.iloc[rows].reset_index(drop=True), added


def rows_changed(before: pd.DataFrame, after: pd.DataFrame, sizes: tuple[int, ...]) -> int:
    """Rows the projection added as copies (= rows it removed; n is kept).

    The multiset difference of the two tables' records: sum over records of
    ``max(0, count after - count before)``. A statistic of the sampled candidate, which
    is DP post-processing, so it may be published.
    """
    if len(before) != len(after):
        raise ValueError("the projection keeps the number of rows")
    keys = encode_rows(pd.concat([before, after], ignore_index=True), sizes)
    _, inverse = np.unique(keys, return_inverse=True)
    k = int(inverse.max()) + 1 if len(inverse) else 0
    c_before = np.bincount(inverse[: len(before)], minlength=k)
    c_after = np.bincount(inverse[len(before) :], minlength=k)
    return int(np.maximum(c_after - c_before, 0).sum())


def min_count_problem(n: int, min_count: int) -> str | None:
    """Why ``n`` rows cannot be projected to ``min_count`` (None when they can).

    The one check (``n`` is public): the flow, the Python API and the release's
    pre-flight refuse such a configuration before anything is charged.
    """
    if n >= min_count:
        return None
    return (
        f"{n} rows cannot be projected so that every record appears at least {min_count} "
        "times (min_count); give more rows or a configuration with a smaller min_count"
    )

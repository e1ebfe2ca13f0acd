"""Criterion ``conditional_mean``: error of group means of one column (SPEC sec. 5, #3-5).

For each group-by option (a column's coarse groups, or no grouping) and each group
``v``, the absolute difference between the mean of the numerified column in D_T and in
D_R; the measure is the maximum over all groups of all options. Groups empty in D_R
(a public fact) are skipped; in exact mode, so are groups empty in D_T.

The DP release uses the *resize* transformation: D_T's group is brought to the public
size ``m_v = max(s_v - margin, 1)`` (``s_v`` its D_R count, ``margin = ceil(f n) + k``)
by subsampling without replacement (the ``m_v`` rows of smallest random priority) or
by padding with the midpoint of the column's bounds, so every group mean divides by a
public size.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from synthflow.acceptance._common import feature_bounds, numbers
from synthflow.errors import ConfigError
from synthflow.transform import Transformer

__all__ = [
    "GroupMean",
    "cond_mean_error",
    "cond_mean_sensitivity",
    "cond_mean_table",
    "group_index",
    "resize_sizes",
    "resized_cond_mean_error",
]


def group_index(transformer: Transformer, by: str | None) -> tuple[np.ndarray, tuple[str, ...]]:
    """Map code -> coarse group index of column ``by`` and the group labels.

    ``None`` is one group holding everything. A categorical column groups by category;
    an int column by its spec ``groups`` (each bin must lie inside one group), or by its
    bins when it has none.

    Raises:
        ConfigError: If a bin straddles two groups.
    """
    if by is None:
        return np.zeros(1, dtype=np.int64), ("all",)
    col = transformer.spec.column(by)
    bins = transformer.transformations[by].bins
    if col.kind == "categorical" or not col.groups:
        return np.arange(len(bins), dtype=np.int64), tuple(b.label for b in bins)
    out = np.empty(len(bins), dtype=np.int64)
    for i, b in enumerate(bins):
        inside = [g for g, grp in enumerate(col.groups) if grp.lo <= b.lo and b.hi <= grp.hi]
        if len(inside) != 1:
            raise ConfigError(
                f"columns.{by}.groups: bin {b.label!r} of transformation "
                f"{transformer.transformations[by].name!r} does not lie inside exactly one group "
                f"{[g.label for g in col.groups]}; align the groups with the bins"
            )
        out[i] = inside[0]
    return out, tuple(g.label for g in col.groups)


def _groups(codes: np.ndarray, transformer: Transformer, by: str | None) -> np.ndarray:
    table, _ = group_index(transformer, by)
    if by is None:
        return np.zeros(len(codes), dtype=np.int64)
    return table[codes[:, transformer.domain.names.index(by)]]


@dataclass(frozen=True, kw_only=True)
class GroupMean:
    """Exact group statistics of one group (exact-mode reports only)."""

    by: str | None
    group: str
    size_original: int
    size_candidate: int
    mean_original: float
    mean_candidate: float
    median_original: float
    median_candidate: float

    @property
    def error(self) -> float:
        """|mean_T - mean_R| (NaN if a group is empty)."""
        return abs(self.mean_original - self.mean_candidate)


def _group_values(
    original: np.ndarray,
    candidate: np.ndarray,
    transformer: Transformer,
    column: str,
    group_by: tuple[str | None, ...],
) -> Iterator[tuple[str | None, str, np.ndarray, np.ndarray]]:
    """``(by, group label, D_T values, D_R values)`` of every group of every option."""
    x_o = numbers(original, transformer, column)
    x_c = numbers(candidate, transformer, column)
    for by in group_by:
        g_o, g_c = _groups(original, transformer, by), _groups(candidate, transformer, by)
        labels = group_index(transformer, by)[1]
        for v, label in enumerate(labels):
            yield by, label, x_o[g_o == v], x_c[g_c == v]


def cond_mean_table(
    original: np.ndarray,
    candidate: np.ndarray,
    transformer: Transformer,
    column: str,
    group_by: tuple[str | None, ...],
) -> list[GroupMean]:
    """Exact means and medians of ``column`` in every group of every group-by option."""
    return [
        GroupMean(
            by=by,
            group=label,
            size_original=len(a),
            size_candidate=len(b),
            mean_original=float(a.mean()) if len(a) else math.nan,
            mean_candidate=float(b.mean()) if len(b) else math.nan,
            median_original=float(np.median(a)) if len(a) else math.nan,
            median_candidate=float(np.median(b)) if len(b) else math.nan,
        )
        for by, label, a, b in _group_values(original, candidate, transformer, column, group_by)
    ]


def cond_mean_error(
    original: np.ndarray,
    candidate: np.ndarray,
    transformer: Transformer,
    column: str,
    group_by: tuple[str | None, ...],
) -> float:
    """Exact value: max over groups non-empty in both tables of |mean_T - mean_R|.

    The means of :func:`cond_mean_table` (same arithmetic), without its medians.
    """
    finite = [
        abs(float(a.mean()) - float(b.mean()))
        for _, _, a, b in _group_values(original, candidate, transformer, column, group_by)
        if len(a) and len(b)
    ]
    if not finite:
        raise ValueError(f"no group of {column!r} is non-empty in both tables")
    return max(finite)


def resize_sizes(
    candidate_counts: np.ndarray, *, n: int, margin_fraction: float, margin_plus: int
) -> np.ndarray:
    """Public resize targets ``m_v = max(s_v - (ceil(f n) + k), 1)``."""
    margin = math.ceil(margin_fraction * n) + margin_plus
    return np.maximum(np.asarray(candidate_counts, dtype=np.int64) - margin, 1)


def _resized_means(
    x: np.ndarray, groups: np.ndarray, sizes: np.ndarray, by_priority: np.ndarray, mid: float
) -> np.ndarray:
    """Each group's mean over its ``sizes[v]`` rows of smallest priority, padded with ``mid``.

    ``by_priority`` is the rows' stable priority order; a stable sort of the groups in
    that order is the order of ``np.lexsort((priorities, groups))`` (ties broken by row
    position in both), found by a radix sort of small integer codes instead of a
    160K-row two-key sort per grouping (1.7 ms against 25 ms at 160K rows).
    """
    k = len(sizes)
    codes = groups[by_priority].astype(np.min_scalar_type(max(k - 1, 0)), copy=False)
    order = by_priority[np.argsort(codes, kind="stable")]
    g_sorted = groups[order]
    starts = np.searchsorted(g_sorted, np.arange(k), side="left")
    rank = np.arange(len(order)) - starts[g_sorted]
    keep = rank < sizes[g_sorted]
    sums = np.bincount(g_sorted[keep], weights=x[order][keep], minlength=k)
    counts = np.bincount(groups, minlength=k)
    pad = np.maximum(sizes - counts, 0)
    return (sums + pad * mid) / sizes


def resized_cond_mean_error(
    original: np.ndarray,
    candidate: np.ndarray,
    transformer: Transformer,
    column: str,
    group_by: tuple[str | None, ...],
    *,
    priorities: np.ndarray,
    margin_fraction: float,
    margin_plus: int,
) -> tuple[float, int]:
    """The statistic released with DP: max error of the resized D_T group means.

    Args:
        original: D_T codes ``(n, d)``.
        candidate: D_R codes ``(n, d)``.
        transformer: The configuration's transformer.
        column: Measured column.
        group_by: Group-by options (``None``: no grouping).
        priorities: One random priority per D_T row (the resize randomness); the
            ``m_v`` rows of smallest priority in a group are kept.
        margin_fraction: ``f`` of the margin ``ceil(f n) + k``.
        margin_plus: ``k`` of the margin.

    Returns:
        The measure and the smallest resize size ``min_v m_v`` (for the sensitivity).
    """
    n = len(original)
    if len(candidate) != n or len(priorities) != n:
        raise ValueError("the resized conditional mean needs |D_T| = |D_R| = len(priorities)")
    lo, hi = feature_bounds(transformer.spec.column(column))
    mid = (lo + hi) / 2
    x_o = numbers(original, transformer, column)
    x_c = numbers(candidate, transformer, column)
    by_priority = np.argsort(priorities, kind="stable")  # once for every grouping
    best, min_size = -math.inf, None
    for by in group_by:
        k = len(group_index(transformer, by)[1])
        g_o, g_c = _groups(original, transformer, by), _groups(candidate, transformer, by)
        s = np.bincount(g_c, minlength=k)
        present = s > 0
        sizes = resize_sizes(s, n=n, margin_fraction=margin_fraction, margin_plus=margin_plus)
        means_o = _resized_means(x_o, g_o, sizes, by_priority, mid)
        means_c = np.bincount(g_c, weights=x_c, minlength=k)[present] / s[present]
        best = max(best, float(np.abs(means_o[present] - means_c).max()))
        m = int(sizes[present].min())
        min_size = m if min_size is None else min(min_size, m)
    assert min_size is not None
    return best, min_size


def cond_mean_sensitivity(bounds: tuple[float, float], min_size: int) -> float:
    """Sensitivity ``(U - L) / min_v m_v`` of the resized max group-mean error.

    With the resize randomness fixed (one priority per row), replacing one row of D_T
    changes at most two groups of each option, and in each only one kept value: a kept
    value changes, or one kept row leaves (the next by priority, or the midpoint pad,
    takes its place), or one row enters (displacing one kept row or one pad). Values
    lie in ``[L, U]`` and the pad is the midpoint, so each resized mean moves by at most
    ``(U - L) / m_v``; D_R is fixed, so each group error and their maximum move by at
    most ``(U - L) / min_v m_v``.
    """
    if min_size < 1:
        raise ValueError(f"min_size ({min_size}) must be >= 1")
    lo, hi = bounds
    return (hi - lo) / min_size

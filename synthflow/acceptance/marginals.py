"""Criterion ``marginals``: max absolute error over all k-way marginals (SPEC sec. 5, #1).

All ``2^d - 1`` column subsets are covered by one bincount of the full contingency cube
per table, then summing out one axis at a time from a cached larger marginal. A cell
absent from one table counts as 0 there. Counts are normalised by each table's own size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "MarginalCell",
    "cube_counts",
    "marginal_errors",
    "marginal_max_abs_error",
    "marginal_sensitivity",
    "worst_marginal_cells",
]


def cube_counts(codes: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """Counts of the full contingency cube (shape ``sizes``) of an ``(n, d)`` code matrix."""
    key = np.zeros(len(codes), dtype=np.int64)
    for j, size in enumerate(sizes):
        key *= int(size)
        key += codes[:, j]
    cells = int(np.prod(sizes, dtype=np.int64))
    return np.bincount(key, minlength=cells).reshape(tuple(sizes))


def _all_marginals(stack: np.ndarray, d: int) -> dict[int, np.ndarray]:
    """Every marginal of ``stack`` (axis 0 = table), keyed by the bit mask of kept columns."""
    full = (1 << d) - 1
    out = {full: stack}
    for mask in range(full - 1, 0, -1):
        missing = next(b for b in range(d) if not mask >> b & 1)
        parent = mask | (1 << missing)
        axis = 1 + sum(1 for b in range(missing) if parent >> b & 1)
        out[mask] = out[parent].sum(axis=axis)
    return out


def _differences(
    original: np.ndarray, candidate: np.ndarray, sizes: Sequence[int]
) -> dict[int, np.ndarray]:
    if len(original) == 0 or len(candidate) == 0:
        raise ValueError("marginals need two non-empty tables")
    stack = np.stack([cube_counts(original, sizes), cube_counts(candidate, sizes)])
    margs = _all_marginals(stack, len(sizes))
    n_o, n_c = float(len(original)), float(len(candidate))
    return {m: a[0] / n_o - a[1] / n_c for m, a in margs.items()}


def marginal_errors(
    original: np.ndarray, candidate: np.ndarray, sizes: Sequence[int]
) -> dict[tuple[int, ...], float]:
    """Max absolute error of each marginal, keyed by the tuple of its column indices."""
    diffs = _differences(original, candidate, sizes)
    d = len(sizes)
    return {
        tuple(b for b in range(d) if m >> b & 1): float(np.abs(v).max()) for m, v in diffs.items()
    }


def marginal_max_abs_error(
    original: np.ndarray, candidate: np.ndarray, sizes: Sequence[int]
) -> float:
    """Exact value: max over all 2^d - 1 marginals and their cells of |p_T - p_R|.

    >>> a = np.array([[0, 0], [1, 1]]); b = np.array([[0, 1], [1, 1]])
    >>> marginal_max_abs_error(a, b, (2, 2))
    0.5
    """
    return max(marginal_errors(original, candidate, sizes).values())


def marginal_sensitivity(n: int) -> float:
    """Sensitivity ``1/n`` of the max marginal error under replace-one on D_T.

    Replacing one row of D_T moves one unit of count from one cell to another in every
    marginal, so each normalised cell of D_T changes by at most ``1/n``; D_R is fixed,
    so every ``|p_T - p_R|`` changes by at most ``1/n``, and so does their maximum.
    """
    if n < 1:
        raise ValueError(f"n ({n}) must be >= 1")
    return 1.0 / n


@dataclass(frozen=True, kw_only=True)
class MarginalCell:
    """One cell of a marginal with its two normalised counts (exact mode reports only)."""

    columns: tuple[int, ...]
    cell: tuple[int, ...]
    original: float
    candidate: float

    @property
    def error(self) -> float:
        """Absolute difference of the two normalised counts."""
        return abs(self.original - self.candidate)


def worst_marginal_cells(
    original: np.ndarray, candidate: np.ndarray, sizes: Sequence[int], *, k: int, top: int = 10
) -> list[MarginalCell]:
    """The ``top`` cells with the largest error among the k-way marginals."""
    stack = np.stack([cube_counts(original, sizes), cube_counts(candidate, sizes)])
    margs = _all_marginals(stack, len(sizes))
    n_o, n_c = float(len(original)), float(len(candidate))
    cells: list[MarginalCell] = []
    for mask, a in margs.items():
        cols = tuple(b for b in range(len(sizes)) if mask >> b & 1)
        if len(cols) != k:
            continue
        p, q = a[0] / n_o, a[1] / n_c
        err = np.abs(p - q).ravel()
        for flat in np.argsort(-err, kind="stable")[:top]:
            idx = tuple(int(i) for i in np.unravel_index(flat, p.shape))
            cells.append(
                MarginalCell(
                    columns=cols, cell=idx, original=float(p[idx]), candidate=float(q[idx])
                )
            )
    cells.sort(key=lambda c: -c.error)
    return cells[:top]

"""Diagnostics beside the criteria: overall quality and record-level closeness.

These are **not** acceptance criteria and are **not** differentially private: they read
the original records exactly. The evaluation report shows them in exact mode only
(public data: methodologists); a DP evaluation never computes them.

* Quality, in the style of SDMetrics' quality report: per column the *column shape*
  score ``1 - TV`` of the 1-way distributions (SDMetrics ``TVComplement``), per pair of
  columns the *column pair* score ``1 - TV`` of the 2-way distributions (SDMetrics
  ``ContingencySimilarity``), where ``TV = 1/2 sum |p - q|`` is the total variation
  distance; the overall score is the mean of the two averages. 1 is a perfect copy of
  the low-order distributions, which alone says nothing about privacy.
* Closeness, on the binned columns: the share of synthetic rows identical to some
  original row (distance to closest record 0), and within one column of one (Hamming
  distance 1). A synthetic release that copies records scores high here.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

__all__ = ["Closeness", "Quality", "closeness", "quality"]


def _tv(a: np.ndarray, b: np.ndarray) -> float:
    return 0.5 * float(np.abs(a / a.sum() - b / b.sum()).sum())


@dataclass(frozen=True)
class Quality:
    """SDMetrics-style quality scores in [0, 1] (1: same low-order distributions)."""

    column_shapes: dict[str, float]
    """Per column, 1 - total variation distance of the 1-way distributions."""
    column_pairs: dict[tuple[str, str], float]
    """Per pair of columns, 1 - total variation distance of the 2-way distributions."""

    @property
    def shape_score(self) -> float:
        """Mean column shape score."""
        return float(np.mean(list(self.column_shapes.values())))

    @property
    def pair_score(self) -> float:
        """Mean column pair score (1.0 for a single column)."""
        return float(np.mean(list(self.column_pairs.values()))) if self.column_pairs else 1.0

    @property
    def overall(self) -> float:
        """Mean of the shape and pair scores (SDMetrics' overall quality score)."""
        return (self.shape_score + self.pair_score) / 2


def quality(
    original: np.ndarray, synthetic: np.ndarray, sizes: tuple[int, ...], names: tuple[str, ...]
) -> Quality:
    """Column shape and column pair scores of two code matrices (rows x columns).

    Raises:
        ValueError: If the tables are empty or their widths differ from ``sizes``.
    """
    if len(original) == 0 or len(synthetic) == 0:
        raise ValueError("quality needs non-empty tables")
    if original.shape[1] != len(sizes) or synthetic.shape[1] != len(sizes):
        raise ValueError("both tables need one column per size")
    shapes = {
        names[j]: 1.0
        - _tv(
            np.bincount(original[:, j], minlength=sizes[j]),
            np.bincount(synthetic[:, j], minlength=sizes[j]),
        )
        for j in range(len(sizes))
    }
    pairs = {}
    for i, j in itertools.combinations(range(len(sizes)), 2):
        cells = sizes[i] * sizes[j]
        a = np.bincount(original[:, i] * sizes[j] + original[:, j], minlength=cells)
        b = np.bincount(synthetic[:, i] * sizes[j] + synthetic[:, j], minlength=cells)
        pairs[(names[i], names[j])] = 1.0 - _tv(a, b)
    return Quality(column_shapes=shapes, column_pairs=pairs)


@dataclass(frozen=True)
class Closeness:
    """Distance to the closest original record (Hamming, on the binned columns)."""

    identical: float
    """Share of synthetic rows equal to some original row."""
    within_one: float
    """Share of synthetic rows at most one column away from some original row."""

    @property
    def farther(self) -> float:
        """Share of synthetic rows two or more columns away from every original row."""
        return 1.0 - self.within_one


def _keys(codes: np.ndarray) -> np.ndarray:
    """One integer per distinct row (rank of the row among all rows given)."""
    _, inverse = np.unique(codes, axis=0, return_inverse=True)
    return inverse.reshape(-1)


def closeness(original: np.ndarray, synthetic: np.ndarray) -> Closeness:
    """Shares of synthetic rows at Hamming distance 0 and <= 1 from an original row.

    Exact and memory-light: a row is within one column of an original row exactly when,
    for some column, the two agree on all the other columns (one join per column).
    """
    n = len(synthetic)
    if n == 0:
        raise ValueError("closeness needs a non-empty synthetic table")

    def matched(o: np.ndarray, s: np.ndarray) -> np.ndarray:
        keys = _keys(np.vstack([o, s]))
        return np.isin(keys[len(o) :], keys[: len(o)])

    same = matched(original, synthetic)
    near = same.copy()
    for j in range(original.shape[1]):
        keep = [k for k in range(original.shape[1]) if k != j]
        if keep:
            near |= matched(original[:, keep], synthetic[:, keep])
        else:
            near[:] = True
    return Closeness(identical=float(same.mean()), within_one=float(near.mean()))

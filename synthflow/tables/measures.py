"""Utility and risk measures of a protected table against the original (ONS, Shlomo).

Notation: F the original counts, F' the published ones, over the K cells that are not
structural zeros. A suppressed cell counts as 0 in the distances and noise totals (all
a user can put there) and as changed in the shares.

Utility:

* L1 = sum |F - F'| (also the *total absolute noise*); L2 = sqrt(sum (F - F')^2);
  mean absolute noise = L1 / K.
* Hellinger distance HD = sqrt(sum (sqrt F - sqrt F')^2 / 2) on counts (undefined,
  NaN, when a published count is negative).
* share of cells unchanged (F' = F), share suppressed.
* transition matrix: cells by band of F (rows) and of F' (columns) in the ONS bands
  0, 1, 2, 3, 4, 5-10, 11-25, 26-50, 51-100, 101-1000, 1000+ (negative published
  counts fall in band 0; suppressed cells get an extra column), and the share of
  cells on its diagonal.
* Cramér's V, V = sqrt(chi2 / (N (min(r, c) - 1))) over the non-empty rows and
  columns of a two-way table; for more dimensions, the mean over every pair of
  dimensions of V of their two-way margin. Reported for F and F' and as the change
  V(F') - V(F). Negative published counts are read as 0.

Risk (of the published table):

* entropy risk 1 - H(F'/N')/log K, H the Shannon entropy (0 log 0 = 0): 0 when the
  records spread evenly, 1 when they all sit in one cell (attribute disclosure);
* cells published as 1 or 2; uniques (original cells of 1) and uniques kept (cells of
  1 still published as 1).

>>> m = measure(np.array([[0, 1], [2, 7]]), np.array([[1.0, 1.0], [2.0, 6.0]]))
>>> m.l1, m.share_unchanged, m.ones, m.uniques_kept
(2.0, 0.5, 2, 1)
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass

import numpy as np

__all__ = [
    "BANDS",
    "Measures",
    "cramers_v",
    "entropy_risk",
    "hellinger",
    "measure",
    "transition_matrix",
]

BANDS: tuple[str, ...] = (
    "0",
    "1",
    "2",
    "3",
    "4",
    "5-10",
    "11-25",
    "26-50",
    "51-100",
    "101-1000",
    "1000+",
)
"""ONS transition-matrix bands (ONS DP pilot 2021, tables 6 and 7)."""
_UPPER = np.array([0, 1, 2, 3, 4, 10, 25, 50, 100, 1000])


def _band(values: np.ndarray) -> np.ndarray:
    """Band index of each value (values <= 0 in band 0)."""
    return np.searchsorted(_UPPER, np.asarray(values, dtype=np.float64), side="left")


def transition_matrix(
    original: np.ndarray, published: np.ndarray, structural: np.ndarray | None = None
) -> np.ndarray:
    """Cells by (band of F, band of F'); the last column counts suppressed cells.

    Returns:
        (11, 12) int64 matrix: rows and the first 11 columns follow :data:`BANDS`.
    """
    f, p = _flat(original, published, structural)
    out = np.zeros((len(BANDS), len(BANDS) + 1), dtype=np.int64)
    shown = ~np.isnan(p)
    np.add.at(out, (_band(f[shown]), _band(p[shown])), 1)
    np.add.at(out[:, -1], _band(f[~shown]), 1)
    return out


def _flat(
    original: np.ndarray, published: np.ndarray, structural: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    f = np.asarray(original, dtype=np.float64)
    p = np.asarray(published, dtype=np.float64)
    if f.shape != p.shape:
        raise ValueError(f"original shape {f.shape} differs from published shape {p.shape}")
    keep = np.ones(f.shape, bool) if structural is None else ~np.asarray(structural, bool)
    return f[keep], p[keep]


def hellinger(original: np.ndarray, published: np.ndarray) -> float:
    """HD = sqrt(sum (sqrt F - sqrt F')^2 / 2); NaN if a published count is negative.

    Suppressed (NaN) cells count as 0.
    """
    f = np.asarray(original, dtype=np.float64)
    p = np.nan_to_num(np.asarray(published, dtype=np.float64), nan=0.0)
    if (p < 0).any() or (f < 0).any():
        return math.nan
    return float(math.sqrt(np.sum((np.sqrt(f) - np.sqrt(p)) ** 2) / 2.0))


def _v2(table: np.ndarray) -> float:
    # scipy.stats.contingency.association would be the one-liner, but it accepts integer
    # tables only and the protected tables compared here hold noisy real counts: the
    # chi-square statistic comes from scipy's chi2_contingency (no continuity correction).
    from scipy.stats import chi2_contingency  # noqa: PLC0415

    t = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    r, c = t.shape
    n = t.sum()
    if min(r, c) < 2 or n <= 0:
        return math.nan
    chi2 = float(chi2_contingency(t, correction=False).statistic)
    return math.sqrt(chi2 / (n * (min(r, c) - 1)))


def cramers_v(table: np.ndarray) -> float:
    """Cramér's V of a two-way table, or its mean over the pairs of a k-way table.

    Negative and suppressed (NaN) counts are read as 0. NaN when undefined (fewer than
    two non-empty rows or columns) or for a one-way table.
    """
    t = np.maximum(np.nan_to_num(np.asarray(table, dtype=np.float64), nan=0.0), 0.0)
    if t.ndim < 2:
        return math.nan
    vs = []
    for a, b in itertools.combinations(range(t.ndim), 2):
        other = tuple(k for k in range(t.ndim) if k not in (a, b))
        vs.append(_v2(t.sum(axis=other) if other else t))
    vs = [v for v in vs if not math.isnan(v)]
    return float(np.mean(vs)) if vs else math.nan


def entropy_risk(published: np.ndarray, structural: np.ndarray | None = None) -> float:
    """1 - H(F'/N')/log K over the K non-structural cells (NaN if K < 2 or N' = 0)."""
    p = np.asarray(published, dtype=np.float64)
    if structural is not None:
        p = p[~np.asarray(structural, bool)]
    p = np.maximum(np.nan_to_num(p.ravel(), nan=0.0), 0.0)
    k, n = p.size, p.sum()
    if k < 2 or n <= 0:
        return math.nan
    q = p[p > 0] / n
    h = float(-np.sum(q * np.log(q)))
    return 1.0 - h / math.log(k)


@dataclass(frozen=True, kw_only=True)
class Measures:
    """Utility and risk of one published table (see the module docstring)."""

    cells: int
    """K: cells that are not structural zeros."""
    l1: float
    l2: float
    hellinger: float
    share_unchanged: float
    share_suppressed: float
    diagonal_share: float
    """Share of cells on the diagonal of the transition matrix."""
    cramers_v_original: float
    cramers_v: float
    cramers_v_change: float
    total_abs_noise: float
    mean_abs_noise: float
    entropy_risk: float
    ones: int
    twos: int
    uniques: int
    """Original cells equal to 1."""
    uniques_kept: int
    """Original cells of 1 published as 1."""

    def to_dict(self) -> dict[str, float | int]:
        """Plain dict (for JSON and tables)."""
        return asdict(self)


def measure(
    original: np.ndarray, published: np.ndarray, structural: np.ndarray | None = None
) -> Measures:
    """Every utility and risk measure of ``published`` against ``original``."""
    f_full = np.asarray(original, dtype=np.float64)
    p_full = np.asarray(published, dtype=np.float64)
    f, p = _flat(f_full, p_full, structural)
    shown = np.nan_to_num(p, nan=0.0)
    diff = shown - f
    l1 = float(np.abs(diff).sum())
    k = f.size
    tm = transition_matrix(f, p)
    v0, v1 = cramers_v(f_full), cramers_v(p_full)
    return Measures(
        cells=k,
        l1=l1,
        l2=float(math.sqrt(np.sum(diff**2))),
        hellinger=hellinger(f, p),
        share_unchanged=float(np.mean(p == f)) if k else math.nan,
        share_suppressed=float(np.mean(np.isnan(p))) if k else math.nan,
        diagonal_share=float(np.trace(tm[:, :-1]) / k) if k else math.nan,
        cramers_v_original=v0,
        cramers_v=v1,
        cramers_v_change=v1 - v0,
        total_abs_noise=l1,
        mean_abs_noise=l1 / k if k else math.nan,
        entropy_risk=entropy_risk(p),
        ones=int(np.sum(p == 1)),
        twos=int(np.sum(p == 2)),
        uniques=int(np.sum(f == 1)),
        uniques_kept=int(np.sum((f == 1) & (p == 1))),
    )

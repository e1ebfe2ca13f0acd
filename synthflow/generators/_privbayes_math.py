"""PrivBayes' statistics: mutual information and its sensitivity, encodings, noisy counts."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import entr

from synthflow.generators._sampling import search_in_order
from synthflow.privacy.rng import PrivacyRNG

__all__ = [
    "_encode",
    "_inverse_cdf",
    "_normalise",
    "covering_families",
    "mi_sensitivity",
    "mutual_information",
    "noisy_counts",
]


def mutual_information(joint: np.ndarray) -> float:
    """Mutual information (nats) of a 2-D count table (rows: X, columns: parents).

    ``H(X) + H(Pi) - H(X, Pi)`` from scipy's elementwise ``entr`` (``-p log p``), clipped
    at 0 against rounding. Not scikit-learn's ``mutual_info_score`` nor
    ``scipy.stats.entropy``: importing either costs 0.7-1 s per process, more than a fit
    at 160K rows (a sweep's workers pay it once each).
    """
    p = np.asarray(joint, dtype=np.float64)
    total = p.sum()
    if total <= 0:
        return 0.0
    p = p / total
    mi = entr(p.sum(axis=1)).sum() + entr(p.sum(axis=0)).sum() - entr(p).sum()
    return max(float(mi), 0.0)


def mi_sensitivity(n: int, *, binary: bool) -> float:
    """Sensitivity of I(X; Pi) when one of n rows is replaced (PrivBayes, Lemma 4.1).

    With X or Pi binary: ``(1/n) log n + ((n-1)/n) log(n/(n-1))``; otherwise
    ``(2/n) log((n+1)/2) + ((n-1)/n) log((n+1)/(n-1))``.
    """
    if n < 2:
        raise ValueError(f"mutual-information sensitivity needs n >= 2, got {n}")
    if binary:
        return math.log(n) / n + (n - 1) / n * math.log(n / (n - 1))
    return 2 / n * math.log((n + 1) / 2) + (n - 1) / n * math.log((n + 1) / (n - 1))


def _encode(columns: list[np.ndarray], sizes: list[int]) -> np.ndarray:
    if not columns:
        return np.zeros(0 if not sizes else len(columns[0]), dtype=np.int64)
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for col, size in zip(columns, sizes, strict=True):
        key *= size
        key += col
    return key


def _inverse_cdf(
    table: np.ndarray, rows: np.ndarray, u: np.ndarray, order: np.ndarray | None = None
) -> np.ndarray:
    """For each i, the value drawn from row ``rows[i]`` of ``table`` with uniform ``u[i]``.

    The value is the number of cumulative probabilities of the row below ``u[i]``
    (inverse-CDF sampling), found by one binary search over all rows at once: row r's
    CDF shifted by r is increasing across rows, so ``u + r`` falls inside row r's
    stretch. No n x k comparison matrix (which at millions of rows costs seconds and
    gigabytes). ``order``: rows in which ``u + rows`` ascends, for a faster search
    (:func:`~synthflow.generators._sampling.search_in_order`; same result).
    """
    k = table.shape[1]
    cdf = np.cumsum(table, axis=1)
    cdf[:, -1] = np.maximum(cdf[:, -1], 1.0)  # rounding: the last value takes the rest
    shifted = (cdf + np.arange(len(cdf))[:, None]).ravel()
    pos = search_in_order(shifted, u + rows, order, side="left") - rows * k
    return np.clip(pos, 0, k - 1).astype(np.int64)


def covering_families(network: list[tuple[int, tuple[int, ...]]]) -> list[tuple[int, ...]]:
    """The families (attribute and parents, sorted) whose noisy joints are released.

    A family contained in another family's variables is not released on its own: its
    conditional is derived from the larger noisy joint (PrivBayes materialises only the
    d - k tables not covered by others). Fewer tables share epsilon_2, so each gets less
    noise. The choice depends on the DP network only.

    >>> covering_families([(0, ()), (1, (0,)), (2, (0, 1)), (3, (1, 2))])
    [(0, 1, 2), (1, 2, 3)]
    """
    families = [tuple(sorted({x, *ps})) for x, ps in network]
    unique = list(dict.fromkeys(families))
    return [f for f in unique if not any(set(f) < set(g) for g in unique)]


def noisy_counts(
    counts: np.ndarray, *, n_tables: int, epsilon: float, rng: PrivacyRNG
) -> np.ndarray:
    """One of ``n_tables`` count tables with Laplace noise, sharing ``epsilon`` equally.

    Replacing one row moves one count down and one up: L1 sensitivity 2 per table, so
    each cell gets Laplace(2 * n_tables / epsilon) noise and the tables compose to
    ``epsilon``. The caller charges the ledger first.
    """
    return rng.laplace(counts.astype(float), sensitivity=2.0, epsilon=epsilon / n_tables)


def _normalise(noisy: np.ndarray) -> np.ndarray:
    """Clip negative noisy counts and normalise each parent configuration's row."""
    table = np.clip(noisy, 0.0, None)
    marginal = table.sum(axis=0)
    fallback = (
        marginal / marginal.sum()
        if marginal.sum() > 0
        else np.full(table.shape[1], 1.0 / table.shape[1])
    )
    sums = table.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        probs = np.where(sums > 0, table / np.where(sums > 0, sums, 1.0), fallback)
    return np.asarray(probs)

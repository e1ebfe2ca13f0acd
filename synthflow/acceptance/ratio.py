"""Criterion ``one_way_ratio``: max ratio of 1-way counts, clipped (SPEC sec. 5, #2).

For every bin of every column, ``max(r/s, s/r)`` with ``r``, ``s`` its (normalised)
counts in D_T and D_R, clipped to at most ``c``; a bin empty in one table only counts
as ``c``, a bin empty in both as 1. Released with Laplace noise and judged against a
pseudo-threshold that controls false positives for D_R's actual smallest count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "one_way_counts",
    "one_way_max_ratio",
    "one_way_ratio_sensitivity",
    "one_way_ratios",
    "pseudo_threshold",
    "release_threshold",
]


def one_way_counts(codes: np.ndarray, sizes: Sequence[int]) -> list[np.ndarray]:
    """Counts of every bin of every column."""
    return [np.bincount(codes[:, j], minlength=s) for j, s in enumerate(sizes)]


def one_way_ratios(
    original: np.ndarray, candidate: np.ndarray, sizes: Sequence[int], *, clip: float
) -> list[np.ndarray]:
    """Clipped ratio ``min(max(r/s, s/r), c)`` of every bin of every column."""
    if clip <= 1:
        raise ValueError(f"clip ({clip}) must be > 1")
    n_o, n_c = len(original), len(candidate)
    out = []
    for r_cnt, s_cnt in zip(
        one_way_counts(original, sizes), one_way_counts(candidate, sizes), strict=True
    ):
        # Counts scaled to the candidate's size (identical to raw counts when n_o == n_c).
        r = r_cnt.astype(float) * (n_c / n_o)
        s = s_cnt.astype(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.maximum(r / s, s / r)
        ratio = np.where((r == 0) & (s == 0), 1.0, ratio)
        out.append(np.minimum(ratio, clip))
    return out


def one_way_max_ratio(
    original: np.ndarray, candidate: np.ndarray, sizes: Sequence[int], *, clip: float
) -> float:
    """Exact value: the largest clipped 1-way ratio.

    >>> a = np.array([[0], [0], [1], [1]]); b = np.array([[0], [1], [1], [1]])
    >>> one_way_max_ratio(a, b, (2,), clip=2.0)
    2.0
    """
    return float(max(r.max() for r in one_way_ratios(original, candidate, sizes, clip=clip)))


def one_way_ratio_sensitivity(min_count: int, *, clip: float) -> float:
    """Sensitivity of the clipped max ratio, ``min(c - 1, max(1/m, c - 1/(1/c + 1/m)))``.

    ``m`` is the smallest 1-way count of D_R (public). For a bin with D_R count
    ``s >= m`` and D_T count ``r`` (replace-one moves ``r`` by at most 1): where
    ``r >= s`` the ratio ``r/s`` moves by ``1/s <= 1/m``; where ``r < s`` the ratio
    ``s/r`` is steepest at the smallest unclipped ``r``, about ``s/c``, and moving from
    the clip ``c`` to ``s/(s/c + 1) = 1/(1/c + 1/s)`` changes it by at most
    ``c - 1/(1/c + 1/m)``. Both bounds fall as ``s`` grows, so ``s = m`` is the worst
    case. The clipped ratio lies in ``[1, c]``, so no change exceeds ``c - 1`` (this
    also covers ``m = 0``).

    >>> round(one_way_ratio_sensitivity(50, clip=2.0), 4)
    0.0769
    """
    if clip <= 1:
        raise ValueError(f"clip ({clip}) must be > 1")
    if min_count < 0:
        raise ValueError(f"min_count ({min_count}) must be >= 0")
    if min_count == 0:
        return clip - 1.0
    m = float(min_count)
    return min(clip - 1.0, max(1.0 / m, clip - 1.0 / (1.0 / clip + 1.0 / m)))


def pseudo_threshold(*, clip: float, scale: float, false_positive_rate: float) -> float:
    """Threshold ``t' = c - b ln(1 / (2 p_fp))`` for a measure clipped at ``c``.

    With Laplace scale ``b``, a candidate whose true value sits at the clip ``c`` is
    accepted with probability ``P(c + Lap(b) < t') = p_fp``.

    >>> b = one_way_ratio_sensitivity(50, clip=2.0) / 0.3
    >>> round(pseudo_threshold(clip=2.0, scale=b, false_positive_rate=0.05), 2)
    1.41
    """
    if not 0 < false_positive_rate < 0.5:
        raise ValueError(f"false_positive_rate ({false_positive_rate}) must be in (0, 0.5)")
    return clip - scale * math.log(1.0 / (2.0 * false_positive_rate))


def release_threshold(
    *,
    threshold: float,
    clip: float,
    epsilon: float,
    false_positive_rate: float | None,
    assumed_min_count: int | None,
    min_count: int,
) -> float:
    """The threshold a DP ratio release is compared with (SPEC sec. 5).

    Without a false-positive rate it is the stakeholders' ``threshold``. With one, it is
    ``min(threshold, t')`` where ``t'`` is the pseudo-threshold for the noise at the
    smallest 1-way count ``m``: the release assumed m >= ``assumed_min_count`` (50,
    giving t' ~ 1.4). When D_R's actual smallest count (``min_count``, public) is below
    the assumption, the noise is larger than the assumption allowed, so ``t'`` is
    computed for the actual count instead: the false-pass control ``P(c + Lap(b) < t')
    <= p_fp`` then holds for every m, including m = 0 (a category missing from D_R),
    where t' falls far below 1 and such a candidate cannot pass. Never above the
    release's fixed threshold, so a candidate is never judged more leniently.

    >>> round(release_threshold(threshold=2.0, clip=2.0, epsilon=0.3,
    ...     false_positive_rate=0.05, assumed_min_count=50, min_count=70), 2)
    1.41
    >>> release_threshold(threshold=2.0, clip=2.0, epsilon=0.3,
    ...     false_positive_rate=0.05, assumed_min_count=50, min_count=0) < 1
    True
    """
    if false_positive_rate is None:
        return threshold
    m = min_count if assumed_min_count is None else min(assumed_min_count, min_count)
    scale = one_way_ratio_sensitivity(m, clip=clip) / epsilon
    return min(
        threshold, pseudo_threshold(clip=clip, scale=scale, false_positive_rate=false_positive_rate)
    )

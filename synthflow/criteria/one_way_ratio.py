"""``one_way_ratio``: the clipped largest 1-way count ratio (SPEC sec. 5).

The statistic: max ratio of 1-way counts, clipped (SPEC sec. 5, #2).

For every bin of every column, ``max(r/s, s/r)`` with ``r``, ``s`` its (normalised)
counts in D_T and D_R, clipped to at most ``c``; a bin empty in one table only counts
as ``c``, a bin empty in both as 1. Released with Laplace noise and judged against a
pseudo-threshold that controls false positives for D_R's actual smallest count.

Kept whole: one criterion kind, one module: its parameters, statistic, sensitivity, exact value,
DP release and report section, so that adding a kind touches its module and the registry
line only ([shape]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from synthflow.config.model import Column, CriterionParams, CriterionSpec, ReleaseSpec
from synthflow.criteria._params import COLUMNS, column_list, optional_number, param
from synthflow.criteria.protocol import CriterionKind
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from synthflow.criteria.context import Context, Released
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.transform import Transformer


__all__ = [
    "OneWayRatio",
    "OneWayRatioParams",
    "one_way_counts",
    "one_way_max_ratio",
    "one_way_ratio_sensitivity",
    "one_way_ratios",
    "pseudo_threshold",
    "ratio_min_count",
    "ratio_view",
    "release_threshold",
]


@dataclass(frozen=True, kw_only=True)
class OneWayRatioParams(CriterionParams):
    """The clip and the pseudo-threshold's inputs."""

    clip: float | None = param(None, schema={"type": ["number", "null"], "exclusiveMinimum": 1})
    """Clipping constant c of the ratio."""
    false_positive_rate: float | None = param(
        None, schema={"type": ["number", "null"], "exclusiveMinimum": 0, "exclusiveMaximum": 0.5}
    )
    """p_fp used to derive the pseudo-threshold."""
    assumed_min_count: int | None = param(None, schema={"type": ["integer", "null"], "minimum": 1})
    """Smallest 1-way count m assumed where m is not yet known (the planner, the noise
    rule); with ``threshold_at: assumed`` also a cap on the release's m (the 2024 rule)."""
    threshold_at: str = param("assumed", schema={"enum": ["assumed", "actual"]})
    """Which m the release's pseudo-threshold is derived at: ``actual``, the candidate's
    smallest 1-way count, the m its noise is scaled to (the paper's rule at the noise
    actually added); ``assumed``, ``min(assumed_min_count, m)`` (the 2024 release)."""
    columns: tuple[str, ...] = param((), schema=COLUMNS)
    """The columns covered (empty: every column)."""


class OneWayRatio(CriterionKind):
    """Clipped max ratio.

    Its sensitivity and pseudo-threshold depend on D_R's smallest 1-way count ``m``
    (public: D_R is released).
    """

    name = "one_way_ratio"
    Params = OneWayRatioParams
    perfect_value = 1.0
    pseudo_threshold = True

    def parse(
        self, where: str, raw: Mapping[str, Any], columns: Mapping[str, Column]
    ) -> OneWayRatioParams:
        """The clip (> 1), the false-positive rate (0 to 0.5), m (>= 1), the columns."""
        m = raw.get("assumed_min_count")
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 1):
            raise ConfigError(f"{where}.assumed_min_count: expected an integer >= 1, got {m!r}")
        at = raw.get("threshold_at", "assumed")
        if at not in ("assumed", "actual"):
            raise ConfigError(
                f"{where}.threshold_at: expected 'actual' (the pseudo-threshold at the "
                "candidate's smallest 1-way count) or 'assumed' (at min(assumed_min_count, "
                f"that count), the 2024 rule), got {at!r}"
            )
        return OneWayRatioParams(
            threshold_at=at,
            clip=optional_number(where, raw, "clip", lo=1, lo_open=True),
            false_positive_rate=optional_number(
                where, raw, "false_positive_rate", lo=0, lo_open=True, hi=0.5, hi_open=True
            ),
            assumed_min_count=m,
            columns=column_list(where, raw, "columns", columns),
        )

    def best_case_public(
        self,
        c: CriterionSpec,
        transformer: Transformer,
        n: int,
        public: np.ndarray | None = None,
    ) -> dict:
        """``m`` at its largest: ``n`` spread evenly over the largest covered domain.

        Capped by ``assumed_min_count``, which already stands for the smallest count a
        candidate is assumed to hold (so the public sample is not read).
        """
        cols = c.columns or transformer.domain.names
        m = n // max(transformer.domain.size(x) for x in cols)
        if c.assumed_min_count is not None:
            m = min(m, int(c.assumed_min_count))
        return {"n": n, "min_count": m}

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`_exact_ratio`)."""
        return _exact_ratio(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`_dp_ratio`)."""
        return _dp_ratio(c, ctx, ledger, rng)

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """The sensitivity at ``m`` and the pseudo-threshold at that budget.

        ``m`` is ``public["min_count"]``.
        """
        from synthflow.criteria.context import need

        clip = need(c.clip, "clip", c)
        m = int(public["min_count"])
        threshold = release_threshold(
            threshold=c.threshold,
            clip=clip,
            epsilon=epsilon,
            false_positive_rate=c.false_positive_rate,
            assumed_min_count=None if c.threshold_at == "actual" else c.assumed_min_count,
            min_count=m,
        )
        return one_way_ratio_sensitivity(m, clip=clip), threshold

    def published(
        self,
        c: CriterionSpec,
        spec: ReleaseSpec,
        transformer: Transformer,
        codes: np.ndarray,
        *,
        fit_once: bool,
    ) -> dict[str, Any]:
        """``m``, the clip, the sensitivity and the pseudo-threshold's inputs.

        The pseudo-threshold is published when the criterion has a false-positive rate.
        """
        n, m = len(codes), ratio_min_count(c, codes, transformer)
        sens, threshold = self.sensitivity_and_threshold(
            c, spec, {"n": n, "min_count": m}, c.epsilon
        )
        p: dict[str, Any] = {"n": n, "m": m, "clip": c.clip, "sensitivity": sens}
        if c.false_positive_rate is not None:
            p["pseudo_threshold"] = threshold
            p["false_positive_rate"] = c.false_positive_rate
            p["assumed_min_count"] = c.assumed_min_count
            p["threshold_at"] = c.threshold_at
        return p

    def relaxed(self, c: CriterionSpec, threshold: float) -> dict[str, float]:
        """The threshold, and the clip when the ratio is clipped at or below it.

        A ratio clipped at ``c`` never exceeds ``c``: a threshold above the clip would
        pass everything, so the clip moves to the new threshold.
        """
        fields = {"threshold": threshold}
        if c.clip is not None and c.clip <= threshold:
            fields["clip"] = threshold
        return fields

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        return (
            "Largest ratio, over every value of every column, between its count in the "
            "synthetic and in the original data, either way round"
            + (f", capped at {c.clip:g}" if c.clip else "")
            + " (1 means equal; catches rare values made many times rarer or commoner)."
        )


def ratio_view(
    c: CriterionSpec, codes: np.ndarray, transformer: Transformer
) -> tuple[np.ndarray, tuple[int, ...]]:
    """The code columns a ratio criterion covers (its ``columns``, else all) and sizes."""
    names = transformer.domain.names
    idx = [names.index(n) for n in c.columns] if c.columns else list(range(len(names)))
    return codes[:, idx], tuple(transformer.domain.sizes[j] for j in idx)


def ratio_min_count(c: CriterionSpec, candidate: np.ndarray, transformer: Transformer) -> int:
    """Smallest 1-way count of D_R over the covered columns (public: D_R is released)."""
    codes, sizes = ratio_view(c, candidate, transformer)
    return int(min(cnt.min() for cnt in one_way_counts(codes, sizes)))


def _exact_ratio(c: CriterionSpec, x: Context) -> float:
    from synthflow.criteria.context import need

    t, sizes = ratio_view(c, x.original, x.transformer)
    r, _ = ratio_view(c, x.candidate, x.transformer)
    return one_way_max_ratio(t, r, sizes, clip=need(c.clip, "clip", c))


def _dp_ratio(c: CriterionSpec, x: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
    from synthflow.criteria.context import (
        exact_of,
        laplace_release,
    )

    m = ratio_min_count(c, x.candidate, x.transformer)
    public = {"n": len(x.original), "min_count": m}
    return laplace_release(c, x.spec, exact_of(c, x), public=public, ledger=ledger, rng=rng)


# --- the statistic


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
    smallest 1-way count ``m``. ``assumed_min_count`` None (a criterion with
    ``threshold_at: actual``): ``m`` is D_R's actual smallest count, the one the noise
    is scaled to, so a candidate at the clip passes with probability exactly ``p_fp``.
    Otherwise the release assumed m >= ``assumed_min_count`` (50, giving t' ~ 1.4, the
    2024 rule). When D_R's actual smallest count (``min_count``, public) is below the
    assumption, the noise is larger than the assumption allowed, so ``t'`` is
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

"""``one_way_ratio``: the clipped largest 1-way count ratio (SPEC sec. 5)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from synthflow.config.model import Column, CriterionParams, CriterionSpec, ReleaseSpec
from synthflow.criteria._params import COLUMNS, column_list, optional_number, param
from synthflow.criteria.protocol import CriterionKind
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

    from synthflow.acceptance.dp import Released
    from synthflow.acceptance.exact import Context
    from synthflow.ledger import Ledger
    from synthflow.rng import PrivacyRNG
    from synthflow.transform import Transformer

__all__ = ["OneWayRatio", "OneWayRatioParams"]


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
    """Smallest 1-way count m assumed when deriving the pseudo-threshold."""
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
        return OneWayRatioParams(
            clip=optional_number(where, raw, "clip", lo=1, lo_open=True),
            false_positive_rate=optional_number(
                where, raw, "false_positive_rate", lo=0, lo_open=True, hi=0.5, hi_open=True
            ),
            assumed_min_count=m,
            columns=column_list(where, raw, "columns", columns),
        )

    def best_case_public(self, c: CriterionSpec, transformer: Transformer, n: int) -> dict:
        """``m`` at its largest: ``n`` spread evenly over the largest covered domain."""
        cols = c.columns or transformer.domain.names
        m = n // max(transformer.domain.size(x) for x in cols)
        if c.assumed_min_count is not None:
            m = min(m, int(c.assumed_min_count))
        return {"n": n, "min_count": m}

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`synthflow.acceptance.exact._exact_ratio`)."""
        from synthflow.acceptance import exact

        return exact._exact_ratio(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`synthflow.acceptance.dp._dp_ratio`)."""
        from synthflow.acceptance import dp

        return dp._dp_ratio(c, ctx, ledger, rng)

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """The sensitivity at ``m`` and the pseudo-threshold at that budget.

        ``m`` is ``public["min_count"]``.
        """
        from synthflow.acceptance import ratio
        from synthflow.acceptance.exact import need

        clip = need(c.clip, "clip", c)
        m = int(public["min_count"])
        threshold = ratio.release_threshold(
            threshold=c.threshold,
            clip=clip,
            epsilon=epsilon,
            false_positive_rate=c.false_positive_rate,
            assumed_min_count=c.assumed_min_count,
            min_count=m,
        )
        return ratio.one_way_ratio_sensitivity(m, clip=clip), threshold

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
        from synthflow.acceptance.exact import ratio_min_count

        n, m = len(codes), ratio_min_count(c, codes, transformer)
        sens, threshold = self.sensitivity_and_threshold(
            c, spec, {"n": n, "min_count": m}, c.epsilon
        )
        p: dict[str, Any] = {"n": n, "m": m, "clip": c.clip, "sensitivity": sens}
        if c.false_positive_rate is not None:
            p["pseudo_threshold"] = threshold
            p["false_positive_rate"] = c.false_positive_rate
            p["assumed_min_count"] = c.assumed_min_count
        return p

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        return (
            "Largest ratio, over every value of every column, between its count in the "
            "synthetic and in the original data, either way round"
            + (f", capped at {c.clip:g}" if c.clip else "")
            + " (1 means equal; catches rare values made many times rarer or commoner)."
        )

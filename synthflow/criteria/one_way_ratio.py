"""``one_way_ratio``: the clipped largest 1-way count ratio (SPEC sec. 5)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from synthflow.acceptance import dp, exact, ratio
from synthflow.acceptance.exact import need, ratio_min_count
from synthflow.config import CriterionSpec, ReleaseSpec
from synthflow.criteria.protocol import CriterionKind

if TYPE_CHECKING:
    import numpy as np

    from synthflow.acceptance.dp import Released
    from synthflow.acceptance.exact import Context
    from synthflow.ledger import Ledger
    from synthflow.rng import PrivacyRNG
    from synthflow.transform import Transformer

__all__ = ["OneWayRatio"]


class OneWayRatio(CriterionKind):
    """Clipped max ratio.

    Its sensitivity and pseudo-threshold depend on D_R's smallest 1-way count ``m``
    (public: D_R is released).
    """

    name = "one_way_ratio"

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`synthflow.acceptance.exact._exact_ratio`)."""
        return exact._exact_ratio(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`synthflow.acceptance.dp._dp_ratio`)."""
        return dp._dp_ratio(c, ctx, ledger, rng)

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """The sensitivity at ``m`` and the pseudo-threshold at that budget.

        ``m`` is ``public["min_count"]``.
        """
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

"""``conditional_mean``: the largest error of a column's mean within groups (SPEC sec. 5)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from synthflow.acceptance import condmean, dp, exact
from synthflow.acceptance.exact import need
from synthflow.config import CriterionSpec, ReleaseSpec
from synthflow.criteria.protocol import CriterionKind

if TYPE_CHECKING:
    from synthflow.acceptance.dp import Released
    from synthflow.acceptance.exact import Context
    from synthflow.ledger import Ledger
    from synthflow.rng import PrivacyRNG
    from synthflow.transform import Transformer

__all__ = ["ConditionalMean"]


class ConditionalMean(CriterionKind):
    """Max error of the resized groups' means; sensitivity ``(U - L) / min group size``."""

    name = "conditional_mean"

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`synthflow.acceptance.exact._exact_condmean`)."""
        return exact._exact_condmean(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`synthflow.acceptance.dp._dp_condmean`)."""
        return dp._dp_condmean(c, ctx, ledger, rng)

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """``(U - L) / m`` and the threshold.

        ``m`` is the smallest resized group (``public["min_group_size"]``), ``[L, U]``
        the column's public bounds.
        """
        bounds = need(spec.column(need(c.column, "column", c)).bounds, "bounds", c)
        return condmean.cond_mean_sensitivity(bounds, int(public["min_group_size"])), c.threshold

    def published(
        self,
        c: CriterionSpec,
        spec: ReleaseSpec,
        transformer: Transformer,
        codes: np.ndarray,
        *,
        fit_once: bool,
    ) -> dict[str, Any]:
        """D_R's resized group sizes, the margin, the bounds and the sensitivity.

        The sensitivity is taken at the smallest resized group of any grouping.
        """
        n = len(codes)
        col = need(c.column, "column", c)
        sizes: dict[str, list[int]] = {}
        for by in c.group_by:
            table, labels = condmean.group_index(transformer, by)
            g = (
                np.zeros(n, dtype=np.int64)
                if by is None
                else table[codes[:, transformer.domain.names.index(by)]]
            )
            s = np.bincount(g, minlength=len(labels))
            m_v = condmean.resize_sizes(
                s, n=n, margin_fraction=c.margin_fraction, margin_plus=c.margin_plus
            )
            sizes[by or "none"] = [int(x) for x in m_v[s > 0]]
        min_size = min(min(v) for v in sizes.values())
        bounds = need(spec.column(col).bounds, "bounds", c)
        sens, _ = self.sensitivity_and_threshold(
            c, spec, {"n": n, "min_group_size": min_size}, c.epsilon
        )
        return {
            "n": n,
            "resize_sizes": sizes,
            "margin": math.ceil(c.margin_fraction * n) + c.margin_plus,
            "bounds": list(bounds),
            "sensitivity": sens,
        }

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        by = ", ".join(g for g in c.group_by if g) or "no grouping"
        return (
            f"Largest difference between the synthetic and the original average of "
            f"`{c.column}` within groups (by {by}, and overall), in {self.unit(c, spec)}."
        )

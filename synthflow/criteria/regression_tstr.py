"""``regression_tstr``: train on synthetic, test on real (SPEC sec. 5)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from synthflow.acceptance import dp, exact, regression
from synthflow.acceptance._common import feature_bounds
from synthflow.acceptance.exact import need
from synthflow.config import CriterionSpec, ReleaseSpec
from synthflow.criteria.protocol import CriterionKind

if TYPE_CHECKING:
    import numpy as np

    from synthflow.acceptance.dp import Released
    from synthflow.acceptance.exact import Context
    from synthflow.ledger import Ledger
    from synthflow.rng import PrivacyRNG
    from synthflow.transform import Transformer

__all__ = ["RegressionTSTR"]


class RegressionTSTR(CriterionKind):
    """|MAE of the D_T model - MAE of the D_R model| on D_T; sensitivity 2 (U - L) / n."""

    name = "regression_tstr"

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`synthflow.acceptance.exact._exact_tstr`)."""
        return exact._exact_tstr(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`synthflow.acceptance.dp._dp_tstr`)."""
        return dp._dp_tstr(c, ctx, ledger, rng)

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """``2 (U - L) / n`` for the target's public bounds, the threshold."""
        target = spec.column(need(c.column, "column", c))
        return regression.tstr_sensitivity(feature_bounds(target), int(public["n"])), c.threshold

    def published(
        self,
        c: CriterionSpec,
        spec: ReleaseSpec,
        transformer: Transformer,
        codes: np.ndarray,
        *,
        fit_once: bool,
    ) -> dict[str, Any]:
        """The target's public bounds and the sensitivity."""
        n = len(codes)
        yb = feature_bounds(spec.column(need(c.column, "column", c)))
        sens, _ = self.sensitivity_and_threshold(c, spec, {"n": n}, c.epsilon)
        return {"n": n, "target_bounds": list(yb), "sensitivity": sens}

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        return (
            f"Train on synthetic, test on real: how much larger the mean absolute error of "
            f"predicting `{c.column}` on the original data is for a regression trained on "
            f"the synthetic data than for one trained on the original, in "
            f"{self.unit(c, spec)}."
        )

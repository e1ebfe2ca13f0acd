"""``regression_coefficients``: the coefficient error against a DP fit (SPEC sec. 5)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from synthflow.acceptance import dp, exact, regression
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

__all__ = ["RegressionCoefficients"]


class RegressionCoefficients(CriterionKind):
    """Coefficient error of the candidate's OLS against a DP fit of the original.

    The original's side is the functional mechanism's fit (once per release or per
    attempt); the candidate's OLS is public.
    """

    name = "regression_coefficients"
    mechanism = "functional"
    once_per_release = True
    release_first = True

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`synthflow.acceptance.exact._exact_coef`)."""
        return exact._exact_coef(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`synthflow.acceptance.dp._dp_coef`)."""
        return dp._dp_coef(c, ctx, ledger, rng)

    def published(
        self,
        c: CriterionSpec,
        spec: ReleaseSpec,
        transformer: Transformer,
        codes: np.ndarray,
        *,
        fit_once: bool,
    ) -> dict[str, Any]:
        """The target's bounds, the fit's standardization and its L1 sensitivity."""
        column = need(c.column, "column", c)
        x, y, _, xb, yb = regression.design(codes, transformer, column, c.features)
        std = (
            regression.Standardization.from_bounds(xb, yb)
            if fit_once
            else regression.Standardization.from_data(x, y, xb, yb)
        )
        sens = regression.functional_mechanism_sensitivity(*std.box(xb, yb)).sum()
        return {
            "n": len(codes),
            "target_bounds": list(yb),
            "standardization": "public bounds" if fit_once else "synthetic data",
            "sensitivity": float(sens),
        }

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        return (
            f"How far a linear regression of `{c.column}` on the other numeric columns, "
            "fitted to the synthetic data, is from the same regression fitted (with DP) to "
            f"the original: sum of absolute coefficient differences, in {self.unit(c, spec)} "
            "per standard deviation of each column."
        )

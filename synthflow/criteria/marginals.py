"""``marginals``: the largest error over the spec's family of marginals (SPEC sec. 5)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from synthflow.acceptance import dp, exact, marginals
from synthflow.config import CriterionSpec, ReleaseSpec
from synthflow.criteria.protocol import CriterionKind

if TYPE_CHECKING:
    from synthflow.acceptance.dp import Released
    from synthflow.acceptance.exact import Context
    from synthflow.ledger import Ledger
    from synthflow.rng import PrivacyRNG

__all__ = ["Marginals"]


class Marginals(CriterionKind):
    """Max absolute error of any cell share of any marginal; sensitivity 1/n."""

    name = "marginals"

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`synthflow.acceptance.exact._exact_marginals`)."""
        return exact._exact_marginals(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`synthflow.acceptance.dp._dp_marginals`)."""
        return dp._dp_marginals(c, ctx, ledger, rng)

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """``1/n`` (one replaced row moves any cell share by at most 1/n), the threshold."""
        return marginals.marginal_sensitivity(int(public["n"])), c.threshold

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        order = f"up to {c.max_order}" if c.max_order else "any number of"
        return (
            f"Largest difference between the synthetic and the original data in the share "
            f"of records in any cell of any table of {order} columns (a share, 0 to 1)."
        )

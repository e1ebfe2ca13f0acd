"""``faithfulness``: the share of original records left unmatched (SPEC sec. 6)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from synthflow.acceptance import dp, exact, faithfulness
from synthflow.config import CriterionSpec, ReleaseSpec
from synthflow.criteria.protocol import CriterionKind

if TYPE_CHECKING:
    from synthflow.acceptance.dp import Released
    from synthflow.acceptance.exact import Context
    from synthflow.ledger import Ledger
    from synthflow.rng import PrivacyRNG

__all__ = ["Faithfulness"]


class Faithfulness(CriterionKind):
    """Unmatched share of a maximum one-to-one matching; sensitivity 1/n."""

    name = "faithfulness"

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`synthflow.acceptance.exact._exact_faithfulness`)."""
        return exact._exact_faithfulness(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`synthflow.acceptance.dp._dp_faithfulness`)."""
        return dp._dp_faithfulness(c, ctx, ledger, rng)

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """``1/n`` (a replaced row changes the maximum matching by one pair), the threshold."""
        return faithfulness.faithfulness_sensitivity(int(public["n"])), c.threshold

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        return (
            "Share of original records that cannot be paired one-to-one with a close "
            "synthetic record (matching rule in `spec.yaml`; a share, 0 to 1)."
        )

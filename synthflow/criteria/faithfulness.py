"""``faithfulness``: the share of original records left unmatched (SPEC sec. 6)."""

from __future__ import annotations

from typing import Any

from synthflow.acceptance import faithfulness
from synthflow.config import CriterionSpec, ReleaseSpec
from synthflow.criteria.protocol import CriterionKind

__all__ = ["Faithfulness"]


class Faithfulness(CriterionKind):
    """Unmatched share of a maximum one-to-one matching; sensitivity 1/n."""

    name = "faithfulness"

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

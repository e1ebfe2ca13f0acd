"""``marginals``: the largest error over the spec's family of marginals (SPEC sec. 5)."""

from __future__ import annotations

from typing import Any

from synthflow.acceptance import marginals
from synthflow.config import CriterionSpec, ReleaseSpec
from synthflow.criteria.protocol import CriterionKind

__all__ = ["Marginals"]


class Marginals(CriterionKind):
    """Max absolute error of any cell share of any marginal; sensitivity 1/n."""

    name = "marginals"

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

"""``faithfulness``: the share of original records left unmatched (SPEC sec. 6)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from synthflow.config.columns import parse_match
from synthflow.config.model import Column, CriterionParams, CriterionSpec, MatchRule, ReleaseSpec
from synthflow.criteria._params import param
from synthflow.criteria.protocol import CriterionKind

if TYPE_CHECKING:
    import numpy as np

    from synthflow.acceptance.dp import Released
    from synthflow.acceptance.exact import Context
    from synthflow.ledger import Ledger
    from synthflow.rng import PrivacyRNG
    from synthflow.transform import Transformer

__all__ = ["Faithfulness", "FaithfulnessParams"]


@dataclass(frozen=True, kw_only=True)
class FaithfulnessParams(CriterionParams):
    """The matching rule (SPEC sec. 6)."""

    match: MatchRule = param(schema={"$ref": "#/$defs/match"})
    """When an original and a synthetic record may be matched."""


class Faithfulness(CriterionKind):
    """Unmatched share of a maximum one-to-one matching; sensitivity 1/n."""

    name = "faithfulness"
    Params = FaithfulnessParams
    reads_every_pair = True

    def parse(
        self, where: str, raw: Mapping[str, Any], columns: Mapping[str, Column]
    ) -> FaithfulnessParams:
        """The matching rule."""
        return FaithfulnessParams(match=parse_match(f"{where}.match", raw["match"], columns))

    def pairs_read(self, c: CriterionSpec, spec: ReleaseSpec) -> set[tuple[str, ...]]:
        """Every pair of the columns the rule compares (exact and near)."""
        return set(itertools.combinations(c.match.exact + c.match.near, 2))

    def report_section(
        self,
        c: CriterionSpec,
        transformer: Transformer,
        t: np.ndarray | None,
        r: np.ndarray,
        released: Released | None,
    ) -> str:
        """The unmatched records by column (exact report only: it reads the original)."""
        if t is None:
            return ""
        from synthflow.acceptance._report_exact import _faithfulness_section

        return _faithfulness_section(c, transformer, t, r)

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`synthflow.acceptance.exact._exact_faithfulness`)."""
        from synthflow.acceptance import exact

        return exact._exact_faithfulness(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`synthflow.acceptance.dp._dp_faithfulness`)."""
        from synthflow.acceptance import dp

        return dp._dp_faithfulness(c, ctx, ledger, rng)

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """``1/n`` (a replaced row changes the maximum matching by one pair), the threshold."""
        from synthflow.acceptance import faithfulness

        return faithfulness.faithfulness_sensitivity(int(public["n"])), c.threshold

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        return (
            "Share of original records that cannot be paired one-to-one with a close "
            "synthetic record (matching rule in `spec.yaml`; a share, 0 to 1)."
        )

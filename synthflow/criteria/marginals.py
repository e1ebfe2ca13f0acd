"""``marginals``: the largest error over the spec's family of marginals (SPEC sec. 5)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from synthflow.config.model import Column, CriterionParams, CriterionSpec, ReleaseSpec
from synthflow.criteria._params import COLUMNS, column_list, param
from synthflow.criteria.protocol import CriterionKind
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from synthflow.acceptance.dp import Released
    from synthflow.acceptance.exact import Context
    from synthflow.ledger import Ledger
    from synthflow.rng import PrivacyRNG

__all__ = ["Marginals", "MarginalsParams"]


@dataclass(frozen=True, kw_only=True)
class MarginalsParams(CriterionParams):
    """The family of marginals compared."""

    max_order: int | None = param(None, schema={"type": "integer", "minimum": 1})
    """Largest number of columns in a covered marginal (None: all, as in 2024)."""
    columns: tuple[str, ...] = param((), schema=COLUMNS)
    """The columns covered (empty: every column)."""


def parse_family(where: str, raw: Mapping[str, Any], columns: Mapping[str, Column]) -> dict:
    """``max_order`` and ``columns`` of a criterion over a family of marginals."""
    out: dict[str, Any] = {"columns": column_list(where, raw, "columns", columns)}
    if "max_order" in raw:
        k = raw["max_order"]
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(
                f"{where}.max_order: expected an integer >= 1 (2: every 1- and 2-way "
                f"marginal), got {k!r}"
            )
        out["max_order"] = k
    return out


def family_pairs(c: CriterionSpec, spec: ReleaseSpec) -> set[tuple[str, ...]]:
    """The pairs of a family of marginals (none when it stops at 1-way)."""
    cols = c.columns or spec.column_names
    if (c.max_order or 2) < 2:
        return set()
    return set(itertools.combinations(cols, 2))


class Marginals(CriterionKind):
    """Max absolute error of any cell share of any marginal; sensitivity 1/n."""

    name = "marginals"
    Params = MarginalsParams
    reads_every_pair = True

    def parse(
        self, where: str, raw: Mapping[str, Any], columns: Mapping[str, Column]
    ) -> MarginalsParams:
        """``max_order`` and ``columns``."""
        return MarginalsParams(**parse_family(where, raw, columns))

    def pairs_read(self, c: CriterionSpec, spec: ReleaseSpec) -> set[tuple[str, ...]]:
        """Every pair of the covered columns (when the family reaches 2-way)."""
        return family_pairs(c, spec)

    def marginal_family(
        self, c: CriterionSpec, names: tuple[str, ...]
    ) -> list[tuple[int, ...]] | None:
        """The covered subsets (:func:`synthflow.acceptance.exact.marginal_family`)."""
        from synthflow.acceptance import exact

        return exact.marginal_family(c, names)

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`synthflow.acceptance.exact._exact_marginals`)."""
        from synthflow.acceptance import exact

        return exact._exact_marginals(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`synthflow.acceptance.dp._dp_marginals`)."""
        from synthflow.acceptance import dp

        return dp._dp_marginals(c, ctx, ledger, rng)

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """``1/n`` (one replaced row moves any cell share by at most 1/n), the threshold."""
        from synthflow.acceptance import marginals

        return marginals.marginal_sensitivity(int(public["n"])), c.threshold

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        order = f"up to {c.max_order}" if c.max_order else "any number of"
        return (
            f"Largest difference between the synthetic and the original data in the share "
            f"of records in any cell of any table of {order} columns (a share, 0 to 1)."
        )

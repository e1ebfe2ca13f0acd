"""``marginal_tvd``: the mean total variation distance over a family of marginals.

The utility measure statistical offices and SDMetrics report ("column shapes" and
"column pair trends" are 1 - TVD of the 1- and 2-way marginals). For a family ``F`` of
column subsets (every 1- and 2-way marginal by default)::

    stat = (1 / |F|) * sum over S in F of  TVD_S,   TVD_S = 1/2 * sum over cells |p_T - p_R|

with ``p_T``, ``p_R`` the cell shares of the original and the candidate. 0 means every
marginal of the family is reproduced exactly; 1 means disjoint supports everywhere.

Sensitivity under replace-one on D_T (n public, D_R fixed): replacing one row moves one
unit of count from one cell to another in every marginal, so at most two shares of
``p_T`` change, each by ``1/n``; ``TVD_S`` changes by at most ``1/2 (1/n + 1/n) = 1/n``,
and so does the mean over a fixed, public family. The bound is reached (in every
marginal, a row moved out of a cell where ``p_T`` exceeds ``p_R`` into one where it falls
short by at least ``1/n``), so ``1/n`` is the sensitivity, and the release adds Laplace
noise of scale ``1 / (n epsilon)``. tests/unit/acceptance/test_marginal_tvd.py checks
both on neighbouring datasets.

This module is the whole kind: parameters, statistic, release, public parameters and
datasheet sentence; the registry lists it (docs/adding-a-criterion.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from synthflow.config.model import Column, CriterionParams, CriterionSpec, ReleaseSpec
from synthflow.criteria._params import COLUMNS, param
from synthflow.criteria.marginals import (
    family_pairs,
    marginal_shares,
    marginal_subsets,
    parse_family,
)
from synthflow.criteria.protocol import CriterionKind

if TYPE_CHECKING:
    pass
    from collections.abc import Mapping, Sequence

    from synthflow.criteria.context import Context, Released
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG


__all__ = ["MarginalTVD", "MarginalTVDParams", "mean_tvd", "tvd_sensitivity"]


@dataclass(frozen=True, kw_only=True)
class MarginalTVDParams(CriterionParams):
    """The family of marginals averaged over."""

    max_order: int | None = param(2, schema={"type": "integer", "minimum": 1})
    """Largest number of columns in an averaged marginal (default 2: every 1- and 2-way
    marginal, as SDMetrics' column shapes and pair trends)."""
    columns: tuple[str, ...] = param((), schema=COLUMNS)
    """The columns covered (empty: every column)."""


def mean_tvd(
    original: np.ndarray,
    candidate: np.ndarray,
    sizes: Sequence[int],
    family: Sequence[tuple[int, ...]],
) -> float:
    """Mean over ``family`` of the total variation distance between the two marginals.

    >>> a = np.array([[0, 0], [1, 1]]); b = np.array([[0, 1], [1, 1]])
    >>> mean_tvd(a, b, (2, 2), [(0,), (1,), (0, 1)])  # TVDs 0, 0.5, 0.5
    0.3333333333333333
    """
    if not family:
        raise ValueError("marginal_tvd needs at least one marginal")
    total = 0.0
    for subset in family:
        p, q = marginal_shares(original, candidate, sizes, subset)
        total += 0.5 * float(np.abs(p - q).sum())
    return total / len(family)


def tvd_sensitivity(n: int) -> float:
    """``1/n``: the replace-one sensitivity of the mean TVD (module docstring)."""
    if n < 1:
        raise ValueError(f"n ({n}) must be >= 1")
    return 1.0 / n


class MarginalTVD(CriterionKind):
    """Mean TVD over a family of marginals; sensitivity 1/n."""

    name = "marginal_tvd"
    Params = MarginalTVDParams
    reads_every_pair = True

    def parse(
        self, where: str, raw: Mapping[str, Any], columns: Mapping[str, Column]
    ) -> MarginalTVDParams:
        """``max_order`` (default 2) and ``columns``."""
        return MarginalTVDParams(**{"max_order": 2, **parse_family(where, raw, columns)})

    def marginal_family(
        self, c: CriterionSpec, names: tuple[str, ...]
    ) -> list[tuple[int, ...]] | None:
        """The averaged subsets."""
        cols = [names.index(x) for x in c.columns] if c.columns else None
        return marginal_subsets(len(names), max_order=c.max_order, columns=cols)

    def pairs_read(self, c: CriterionSpec, spec: ReleaseSpec) -> set[tuple[str, ...]]:
        """Every pair of the covered columns (when the family reaches 2-way)."""
        return family_pairs(c, spec)

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The mean TVD between the original and the candidate."""
        family = self.marginal_family(c, ctx.transformer.domain.names) or []
        return mean_tvd(ctx.original, ctx.candidate, ctx.sizes, family)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The statistic plus Laplace noise of scale ``1 / (n epsilon)``, charged first."""
        from synthflow.criteria.context import (
            exact_of,
            laplace_release,
        )

        stat = exact_of(c, ctx)
        public = {"n": len(ctx.original)}
        return laplace_release(c, ctx.spec, stat, public=public, ledger=ledger, rng=rng)

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """``1/n`` and the threshold."""
        return tvd_sensitivity(int(public["n"])), c.threshold

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        order = f"up to {c.max_order}" if c.max_order else "any number of"
        return (
            "Average, over every table of "
            f"{order} columns, of the total variation distance between the synthetic and "
            "the original data (half the summed absolute differences of the cell shares; "
            "0 is identical, 1 is disjoint; SDMetrics reports 1 minus it)."
        )

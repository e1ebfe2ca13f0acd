"""``conditional_mean``: the largest error of a column's mean within groups (SPEC sec. 5)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from synthflow.config._values import number
from synthflow.config.model import Column, CriterionParams, CriterionSpec, ReleaseSpec
from synthflow.criteria._params import TEXT, param, target_column
from synthflow.criteria.protocol import CriterionKind
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from synthflow.acceptance.dp import Released
    from synthflow.acceptance.exact import Context
    from synthflow.ledger import Ledger
    from synthflow.rng import PrivacyRNG
    from synthflow.transform import Transformer

__all__ = ["ConditionalMean", "ConditionalMeanParams"]


@dataclass(frozen=True, kw_only=True)
class ConditionalMeanParams(CriterionParams):
    """The measured column, its groupings and the resize margin."""

    column: str = param(schema=TEXT)
    """The measured column (public bounds required)."""
    group_by: tuple[str | None, ...] = param(
        (), schema={"type": "array", "items": {"type": ["string", "null"]}}
    )
    """Group-by columns (``None``, or ``none`` in the spec: no grouping)."""
    margin_fraction: float = param(0.01, schema={"type": "number", "minimum": 0})
    """Resize margin = ceil(margin_fraction * n) + margin_plus."""
    margin_plus: int = param(1, schema={"type": "integer", "minimum": 0})


def _groups(transformer: Transformer, by: str | None) -> int:
    """Number of groups of a grouping (its public groups, else its bins)."""
    if by is None:
        return 1
    col = transformer.spec.column(by)
    if col.kind == "int" and col.groups:
        return len(col.groups)
    return transformer.transformations[by].size


class ConditionalMean(CriterionKind):
    """Max error of the resized groups' means; sensitivity ``(U - L) / min group size``."""

    name = "conditional_mean"
    Params = ConditionalMeanParams

    def parse(
        self, where: str, raw: Mapping[str, Any], columns: Mapping[str, Column]
    ) -> ConditionalMeanParams:
        """The column (with public bounds), the groupings, the margin."""
        group_by = raw.get("group_by", [])
        if not isinstance(group_by, list):
            raise ConfigError(f"{where}.group_by: expected a list of columns (or none)")
        by = tuple(None if g in (None, "none") else str(g) for g in group_by)
        for g in by:
            if g is not None and g not in columns:
                raise ConfigError(f"{where}.group_by: unknown column {g!r}")
        plus = raw.get("margin_plus", 1)
        if isinstance(plus, bool) or not isinstance(plus, int) or plus < 0:
            raise ConfigError(f"{where}.margin_plus: expected an integer >= 0, got {plus!r}")
        return ConditionalMeanParams(
            column=target_column(where, raw, columns),
            group_by=by,
            margin_fraction=number(
                f"{where}.margin_fraction", raw.get("margin_fraction", 0.01), lo=0
            ),
            margin_plus=plus,
        )

    def check(
        self, c: CriterionSpec, criteria: tuple[CriterionSpec, ...], columns: Mapping[str, Column]
    ) -> None:
        """Every bin of every alternative of a group-by column lies inside exactly one group.

        Checked at load (public spec only) so that no configuration of the space fails on
        a worker, or after a release has charged its ledger.
        """
        for by in c.group_by:
            if by is None or not columns[by].groups:
                continue
            col = columns[by]
            for t in col.transformations:
                for b in t.bins:
                    inside = [g for g in col.groups if g.lo <= b.lo and b.hi <= g.hi]
                    if len(inside) != 1:
                        raise ConfigError(
                            f"columns.{by}.groups: bin {b.label!r} of transformation "
                            f"{t.name!r} does not lie inside exactly one group "
                            f"{[g.label for g in col.groups]} (criterion {c.name!r} groups "
                            "by it); align the groups with every alternative's bins"
                        )

    def pairs_read(self, c: CriterionSpec, spec: ReleaseSpec) -> set[tuple[str, ...]]:
        """(column, group-by column) for each grouping."""
        return {(c.column, g) for g in c.group_by if g and g != c.column}

    def best_case_public(self, c: CriterionSpec, transformer: Transformer, n: int) -> dict:
        """The smallest group at its largest: ``n`` spread evenly over the groups."""
        groups = max(_groups(transformer, b) for b in c.group_by) if c.group_by else 1
        return {"n": n, "min_group_size": max(1, n // groups)}

    def report_section(
        self,
        c: CriterionSpec,
        transformer: Transformer,
        t: np.ndarray | None,
        r: np.ndarray,
        released: Released | None,
    ) -> str:
        """The group means of the original (exact report) and the candidate."""
        from synthflow.acceptance._report_sections import _condmean_section

        return _condmean_section(c, transformer, t, r)

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`synthflow.acceptance.exact._exact_condmean`)."""
        from synthflow.acceptance import exact

        return exact._exact_condmean(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`synthflow.acceptance.dp._dp_condmean`)."""
        from synthflow.acceptance import dp

        return dp._dp_condmean(c, ctx, ledger, rng)

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """``(U - L) / m`` and the threshold.

        ``m`` is the smallest resized group (``public["min_group_size"]``), ``[L, U]``
        the column's public bounds.
        """
        from synthflow.acceptance import condmean
        from synthflow.acceptance.exact import need

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
        from synthflow.acceptance import condmean
        from synthflow.acceptance.exact import need

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

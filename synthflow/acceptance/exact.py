"""Exact (non-private) values of the acceptance criteria between two code tables.

One :class:`Context` per evaluation caches what several criteria share (the OLS fits,
regression designs, each criterion's exact value), so a sweep that evaluates a candidate
exactly and with DP computes faithfulness and the fits once. Criteria are dispatched on
``CriterionSpec.kind`` through a small registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from synthflow.acceptance import condmean, faithfulness, marginals, ratio, regression
from synthflow.acceptance._common import code_matrix
from synthflow.config.model import CriterionSpec, ReleaseSpec
from synthflow.errors import ConfigError
from synthflow.transform import Transformer

__all__ = [
    "Context",
    "context",
    "exact_of",
    "exact_value",
    "exact_values",
    "marginal_family",
    "need",
    "ols_models",
    "ratio_min_count",
    "ratio_view",
    "std_candidate",
]


@dataclass(frozen=True, kw_only=True)
class Context:
    """What one evaluation of one candidate shares between its criteria."""

    spec: ReleaseSpec
    transformer: Transformer
    original: np.ndarray
    candidate: np.ndarray
    cache: dict[str, Any] = field(default_factory=dict)

    @property
    def sizes(self) -> tuple[int, ...]:
        """Bins per column of the configuration's domain."""
        return self.transformer.domain.sizes

    def regression_design(
        self, which: str, target: str, features: tuple[str, ...] = ()
    ) -> tuple[Any, ...]:
        """The regression design of one table (cached): X, y, features, X and y bounds."""
        key = f"design:{which}:{target}:{features}"
        if key not in self.cache:
            codes = self.original if which == "original" else self.candidate
            self.cache[key] = regression.design(codes, self.transformer, target, features)
        return self.cache[key]


def need(value: Any, what: str, crit: CriterionSpec) -> Any:
    """``value``, or a ConfigError saying that criterion ``crit`` needs ``what``."""
    if value is None:
        raise ConfigError(f"criterion {crit.name!r} (kind {crit.kind!r}) needs {what!r}")
    return value


# ----------------------------------------------------------------------------- exact


def marginal_family(c: CriterionSpec, names: tuple[str, ...]) -> list[tuple[int, ...]]:
    """Column-index subsets a marginals criterion covers (from the public spec)."""
    cols = [names.index(n) for n in c.columns] if c.columns else None
    return marginals.marginal_subsets(len(names), max_order=c.max_order, columns=cols)


def _exact_marginals(c: CriterionSpec, x: Context) -> float:
    family = marginal_family(c, x.transformer.domain.names)
    return marginals.marginal_max_abs_error(x.original, x.candidate, x.sizes, family)


def ratio_view(
    c: CriterionSpec, codes: np.ndarray, transformer: Transformer
) -> tuple[np.ndarray, tuple[int, ...]]:
    """The code columns a ratio criterion covers (its ``columns``, else all) and sizes."""
    names = transformer.domain.names
    idx = [names.index(n) for n in c.columns] if c.columns else list(range(len(names)))
    return codes[:, idx], tuple(transformer.domain.sizes[j] for j in idx)


def ratio_min_count(c: CriterionSpec, candidate: np.ndarray, transformer: Transformer) -> int:
    """Smallest 1-way count of D_R over the covered columns (public: D_R is released)."""
    codes, sizes = ratio_view(c, candidate, transformer)
    return int(min(cnt.min() for cnt in ratio.one_way_counts(codes, sizes)))


def _exact_ratio(c: CriterionSpec, x: Context) -> float:
    t, sizes = ratio_view(c, x.original, x.transformer)
    r, _ = ratio_view(c, x.candidate, x.transformer)
    return ratio.one_way_max_ratio(t, r, sizes, clip=need(c.clip, "clip", c))


def _exact_condmean(c: CriterionSpec, x: Context) -> float:
    col = need(c.column, "column", c)
    return condmean.cond_mean_error(x.original, x.candidate, x.transformer, col, c.group_by)


def ols_models(c: CriterionSpec, x: Context) -> tuple[regression.LinearModel, ...]:
    """OLS of the original and of the candidate for ``c``'s target (once per context)."""
    target = need(c.column, "column", c)
    key = f"ols:{target}:{c.features}"
    if key not in x.cache:
        xo, yo, feats, _, _ = x.regression_design("original", target, c.features)
        xr, yr, _, _, _ = x.regression_design("candidate", target, c.features)
        x.cache[key] = (regression.ols(xo, yo, feats), regression.ols(xr, yr, feats))
    models: tuple[regression.LinearModel, ...] = x.cache[key]
    return models


def std_candidate(c: CriterionSpec, x: Context) -> regression.Standardization:
    """The standardisation read from the (public) candidate's moments."""
    xr, yr, _, xb, yb = x.regression_design("candidate", need(c.column, "column", c), c.features)
    return regression.Standardization.from_data(xr, yr, xb, yb)


def _exact_coef(c: CriterionSpec, x: Context) -> float:
    m_o, m_r = ols_models(c, x)
    return regression.coefficient_error(m_o, m_r, std_candidate(c, x))


def _exact_tstr(c: CriterionSpec, x: Context) -> float:
    m_o, m_r = ols_models(c, x)
    xo, yo, _, _, yb = x.regression_design("original", need(c.column, "column", c), c.features)
    return regression.tstr_error(m_o, m_r, xo, yo, yb)


def _exact_faithfulness(c: CriterionSpec, x: Context) -> float:
    rule = need(c.match, "match", c)
    return faithfulness.maximum_matching(
        x.original, x.candidate, x.transformer, rule
    ).unmatched_share


def exact_of(c: CriterionSpec, x: Context) -> float:
    """The exact value of ``c``, computed once per evaluation context.

    A sweep's exact and DP evaluations share one context, so faithfulness (a maximum
    matching), the marginals and the OLS fits are computed once, not twice.
    """
    key = f"exact:{c.name}"
    if key not in x.cache:
        x.cache[key] = c.impl.exact(c, x)
    value: float = x.cache[key]
    return value


def exact_value(
    criterion: CriterionSpec,
    transformer: Transformer,
    original: pd.DataFrame,
    candidate: pd.DataFrame,
) -> float:
    """The exact (non-private) value of one criterion between two code tables."""
    ctx = context(transformer.spec, transformer, original, candidate)
    return exact_of(criterion, ctx)


def exact_values(
    spec: ReleaseSpec, transformer: Transformer, original: pd.DataFrame, candidate: pd.DataFrame
) -> dict[str, float]:
    """Exact values of every criterion of ``spec``, by name (pure; nothing charged)."""
    ctx = context(spec, transformer, original, candidate)
    return {c.name: exact_of(c, ctx) for c in spec.criteria}


def context(
    spec: ReleaseSpec, transformer: Transformer, original: pd.DataFrame, candidate: pd.DataFrame
) -> Context:
    """A fresh evaluation context over both tables' code matrices."""
    return Context(
        spec=spec,
        transformer=transformer,
        original=code_matrix(original, transformer, what="original"),
        candidate=code_matrix(candidate, transformer, what="candidate"),
    )

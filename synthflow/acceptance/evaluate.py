"""Evaluate a release candidate against every acceptance criterion of the spec.

Two ways, one entry point :func:`evaluate`:

* ``exact=True``: the exact measures (public data, tests, methodologists); nothing is
  charged and the privacy fields are ``None``.
* ``exact=False``: each measure released with DP as SPEC sec. 5 prescribes; the ledger
  is charged *before* any noise is drawn; noise comes from :meth:`PrivacyRNG.laplace`.

The parts live by what they do: :mod:`.results` (the report objects), :mod:`.exact`
(exact values, shared per candidate), :mod:`.dp` (the DP releases and their ledger
charges). A sweep's exact and DP evaluations share one context, so each exact statistic
is computed once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from synthflow.acceptance.results import AcceptanceReport, CriterionResult
from synthflow.config.model import CriterionSpec, ReleaseSpec
from synthflow.criteria import regression
from synthflow.criteria.context import (
    RELEASED_ONCE,
    Context,
    Released,
    context,
    exact_of,
    laplace_terms,
)
from synthflow.criteria.marginals import marginal_family
from synthflow.criteria.one_way_ratio import ratio_min_count, ratio_view
from synthflow.criteria.regression.coefficients import fit_dp_regression
from synthflow.errors import BudgetExceededError
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Transformer

__all__ = [
    "AcceptanceReport",
    "CriterionResult",
    "ExactAndNoisy",
    "evaluate",
    "evaluate_exact_and_noisy",
    "exact_value",
    "exact_values",
    "fit_dp_regression",
    "laplace_terms",
    "marginal_family",
    "ratio_min_count",
    "ratio_view",
]

DPRegressionFit = regression.DPRegressionFit


def evaluate(
    spec: ReleaseSpec,
    transformer: Transformer,
    original: pd.DataFrame,
    candidate: pd.DataFrame,
    *,
    exact: bool,
    ledger: Ledger | None = None,
    rng: PrivacyRNG | None = None,
    released_once: Any = None,
) -> AcceptanceReport:
    """Evaluate every criterion of ``spec`` between D_T and D_R (both as codes).

    Args:
        spec: The release spec (criteria, thresholds, budgets, match rule).
        transformer: The configuration's transformer (public domain, bin numbers).
        original: D_T codes (private unless public data).
        candidate: D_R codes (public).
        exact: Exact values, nothing charged; otherwise DP release.
        ledger: Charged before each release (required unless ``exact``).
        rng: Noise and resize randomness (required unless ``exact``).
        released_once: What :func:`synthflow.criteria.release_once` released once for
            the whole release (births: the regression fit); the kind that made it
            reuses it and is not charged again.

    Raises:
        ValueError: If DP mode lacks a ledger or rng, or the tables differ in size.
        BudgetExceededError: If the ledger cannot afford a criterion.
    """
    ctx = context(spec, transformer, original, candidate)
    return _evaluate_in(ctx, exact=exact, ledger=ledger, rng=rng, released_once=released_once)


def _evaluate_in(
    ctx: Context,
    *,
    exact: bool,
    ledger: Ledger | None,
    rng: PrivacyRNG | None,
    released_once: Any,
) -> AcceptanceReport:
    spec = ctx.spec
    if exact:
        results = []
        for c in spec.criteria:
            v = exact_of(c, ctx)
            results.append(
                CriterionResult(
                    name=c.name, kind=c.kind, value=v, threshold=c.threshold, passed=v < c.threshold
                )
            )
        return AcceptanceReport(
            criteria=tuple(results),
            passed=all(r.passed for r in results),
            epsilon_total=0.0,
            exact=True,
        )
    if ledger is None or rng is None:
        raise ValueError("evaluate(exact=False) needs a ledger and a PrivacyRNG")
    from synthflow.criteria import released_once as is_released_once  # noqa: PLC0415  (criteria import this package)

    if len(ctx.original) != len(ctx.candidate):
        raise ValueError(
            f"DP evaluation needs |D_R| = |D_T| (n is public); got {len(ctx.candidate)} "
            f"candidate rows for {len(ctx.original)} original rows"
        )
    needed = math.fsum(
        c.epsilon
        for c in spec.criteria
        if not is_released_once(c, fit_once=released_once is not None)
    )
    if not ledger.can_afford(needed):
        raise BudgetExceededError(
            f"cannot evaluate: the criteria need epsilon {needed:g} but only "
            f"{ledger.remaining_epsilon:g} remains of the ledger's total {ledger.total_epsilon:g}; "
            "nothing was charged"
        )
    if released_once is not None:
        ctx.cache[RELEASED_ONCE] = released_once
    released: dict[str, Released] = {}
    from synthflow.criteria import kind_of  # noqa: PLC0415

    for c in sorted(spec.criteria, key=lambda c: not kind_of(c).release_first):
        released[c.name] = kind_of(c).release(c, ctx, ledger, rng)
    results = [
        CriterionResult(
            name=c.name,
            kind=c.kind,
            value=released[c.name].value,
            threshold=released[c.name].threshold,
            passed=released[c.name].value < released[c.name].threshold
            and not released[c.name].dominated,
            epsilon=released[c.name].epsilon,
            mechanism=released[c.name].mechanism,
            sensitivity=released[c.name].sensitivity,
            noise_sd=released[c.name].noise_sd,
            public=released[c.name].public,
            noise_dominated=released[c.name].dominated,
        )
        for c in spec.criteria
    ]
    ctx.cache["released"] = released
    return AcceptanceReport(
        criteria=tuple(results),
        passed=all(r.passed for r in results),
        epsilon_total=math.fsum(r.epsilon or 0.0 for r in results),
        exact=False,
        regression_fit_reused=released_once is not None,
    )


@dataclass(frozen=True, kw_only=True)
class ExactAndNoisy:
    """Both evaluations of one candidate (public-data sweeps)."""

    exact: AcceptanceReport
    noisy: AcceptanceReport
    planning: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per criterion: the statistic the noise was added to and its public parameters
    (public data only: what ``synthflow plan`` re-noises at other budgets)."""


def evaluate_exact_and_noisy(
    spec: ReleaseSpec,
    transformer: Transformer,
    original: pd.DataFrame,
    candidate: pd.DataFrame,
    *,
    rng: PrivacyRNG,
    ledger: Ledger,
    released_once: Any = None,
) -> ExactAndNoisy:
    """Exact values and the would-be DP decision, for public data only.

    ``ledger`` is charged the DP releases (a public run's own: budget eps_eval).
    """
    ctx = context(spec, transformer, original, candidate)  # shared: exact values once
    exact = _evaluate_in(ctx, exact=True, ledger=None, rng=None, released_once=None)
    noisy = _evaluate_in(ctx, exact=False, ledger=ledger, rng=rng, released_once=released_once)
    planning = {
        name: {"statistic": r.statistic, "public": r.public}
        for name, r in ctx.cache["released"].items()
    }
    for c in spec.criteria:  # what the planner needs besides the statistic
        planning[c.name].update(c.impl.planning_extra(c, ctx))
    return ExactAndNoisy(exact=exact, noisy=noisy, planning=planning)


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

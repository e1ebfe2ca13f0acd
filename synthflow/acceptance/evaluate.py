"""Evaluate a release candidate against every acceptance criterion of the spec.

Two ways, one entry point :func:`evaluate`:

* ``exact=True``: the exact measures (public data, tests, methodologists); nothing is
  charged and the privacy fields are ``None``.
* ``exact=False``: each measure released with DP as SPEC sec. 5 prescribes; the ledger
  is charged *before* any noise is drawn; noise comes from :meth:`PrivacyRNG.laplace`.

Criteria are dispatched on ``CriterionSpec.kind`` through small registries, so another
spec can name and parametrise its own criteria in YAML.
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from synthflow.acceptance import condmean, faithfulness, marginals, ratio, regression
from synthflow.acceptance._common import code_matrix, feature_bounds
from synthflow.config import CriterionSpec, ReleaseSpec
from synthflow.errors import BudgetExceededError, ConfigError
from synthflow.ledger import Ledger
from synthflow.rng import PrivacyRNG
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


@dataclass(frozen=True, kw_only=True)
class CriterionResult:
    """One criterion's measure and decision."""

    name: str
    kind: str
    value: float
    """The measure: exact, or the DP-released (noisy) value."""
    threshold: float
    """Threshold the value was compared with (the pseudo-threshold where one applies)."""
    passed: bool
    """``value < threshold``."""
    epsilon: float | None = None
    """Budget charged for this criterion in this evaluation (None in exact mode)."""
    mechanism: str | None = None
    sensitivity: float | None = None
    noise_sd: float | None = None
    public: dict[str, Any] = field(default_factory=dict)
    """Public parameters of the DP release (candidate's counts, the DP regression fit and
    D_R's OLS); never a statistic of D_T. Empty in exact mode."""

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the CLI's ``criteria`` list."""
        return {
            "name": self.name,
            "value": self.value,
            "threshold": self.threshold,
            "passed": self.passed,
            "epsilon": self.epsilon,
            "mechanism": self.mechanism,
            "sensitivity": self.sensitivity,
            "noise_sd": self.noise_sd,
        }


@dataclass(frozen=True, kw_only=True)
class AcceptanceReport:
    """All criteria of one evaluation."""

    criteria: tuple[CriterionResult, ...]
    passed: bool
    """True iff every criterion passed."""
    epsilon_total: float
    """Budget charged by this evaluation (0 in exact mode)."""
    exact: bool
    regression_fit_reused: bool = False
    """Whether a once-per-release regression fit was reused (charged elsewhere)."""

    def criterion(self, name: str) -> CriterionResult:
        """The result called ``name``."""
        for c in self.criteria:
            if c.name == name:
                return c
        raise KeyError(f"no criterion {name!r}; have {[c.name for c in self.criteria]}")

    def __repr__(self) -> str:
        mode = "exact" if self.exact else f"DP, epsilon {self.epsilon_total:g}"
        ok = sum(c.passed for c in self.criteria)
        verdict = "PASSED" if self.passed else "FAILED"
        return f"<AcceptanceReport {verdict}: {ok} of {len(self.criteria)} criteria ({mode})>"

    def to_frame(self) -> pd.DataFrame:
        """One row per criterion: value, threshold, passed, epsilon, noise sd."""
        return pd.DataFrame(
            [
                {
                    "criterion": c.name,
                    "kind": c.kind,
                    "value": c.value,
                    "threshold": c.threshold,
                    "passed": c.passed,
                    "epsilon": c.epsilon,
                    "noise_sd": c.noise_sd,
                }
                for c in self.criteria
            ]
        ).set_index("criterion")

    def _repr_html_(self) -> str:
        """A notebook's view: the verdict and the criteria table."""
        table = self.to_frame()
        if self.exact:
            table = table.drop(columns=["epsilon", "noise_sd"])
        caption = html.escape(repr(self))
        return f"<p><b>{caption}</b></p>" + table.to_html(float_format=lambda x: f"{x:.4g}")

    def to_json(self) -> dict[str, Any]:
        """``{"criteria": [...], "passed": bool, "epsilon_total": float}`` plus the mode."""
        return {
            "criteria": [c.to_json() for c in self.criteria],
            "passed": self.passed,
            "epsilon_total": self.epsilon_total,
            "exact": self.exact,
            "regression_fit_reused": self.regression_fit_reused,
        }


@dataclass(frozen=True, kw_only=True)
class _Ctx:
    spec: ReleaseSpec
    transformer: Transformer
    original: np.ndarray
    candidate: np.ndarray
    cache: dict[str, Any] = field(default_factory=dict)

    @property
    def sizes(self) -> tuple[int, ...]:
        return self.transformer.domain.sizes

    def regression_design(
        self, which: str, target: str, features: tuple[str, ...] = ()
    ) -> tuple[Any, ...]:
        key = f"design:{which}:{target}:{features}"
        if key not in self.cache:
            codes = self.original if which == "original" else self.candidate
            self.cache[key] = regression.design(codes, self.transformer, target, features)
        return self.cache[key]


def _need(value: Any, what: str, crit: CriterionSpec) -> Any:
    if value is None:
        raise ConfigError(f"criterion {crit.name!r} (kind {crit.kind!r}) needs {what!r}")
    return value


# ----------------------------------------------------------------------------- exact


def marginal_family(c: CriterionSpec, names: tuple[str, ...]) -> list[tuple[int, ...]]:
    """Column-index subsets a marginals criterion covers (from the public spec)."""
    cols = [names.index(n) for n in c.columns] if c.columns else None
    return marginals.marginal_subsets(len(names), max_order=c.max_order, columns=cols)


def _exact_marginals(c: CriterionSpec, x: _Ctx) -> float:
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


def _exact_ratio(c: CriterionSpec, x: _Ctx) -> float:
    t, sizes = ratio_view(c, x.original, x.transformer)
    r, _ = ratio_view(c, x.candidate, x.transformer)
    return ratio.one_way_max_ratio(t, r, sizes, clip=_need(c.clip, "clip", c))


def _exact_condmean(c: CriterionSpec, x: _Ctx) -> float:
    col = _need(c.column, "column", c)
    return condmean.cond_mean_error(x.original, x.candidate, x.transformer, col, c.group_by)


def _ols_models(c: CriterionSpec, x: _Ctx) -> tuple[regression.LinearModel, ...]:
    target = _need(c.column, "column", c)
    key = f"ols:{target}:{c.features}"
    if key not in x.cache:
        xo, yo, feats, _, _ = x.regression_design("original", target, c.features)
        xr, yr, _, _, _ = x.regression_design("candidate", target, c.features)
        x.cache[key] = (regression.ols(xo, yo, feats), regression.ols(xr, yr, feats))
    models: tuple[regression.LinearModel, ...] = x.cache[key]
    return models


def _std_candidate(c: CriterionSpec, x: _Ctx) -> regression.Standardization:
    xr, yr, _, xb, yb = x.regression_design("candidate", _need(c.column, "column", c), c.features)
    return regression.Standardization.from_data(xr, yr, xb, yb)


def _exact_coef(c: CriterionSpec, x: _Ctx) -> float:
    m_o, m_r = _ols_models(c, x)
    return regression.coefficient_error(m_o, m_r, _std_candidate(c, x))


def _exact_tstr(c: CriterionSpec, x: _Ctx) -> float:
    m_o, m_r = _ols_models(c, x)
    xo, yo, _, _, yb = x.regression_design("original", _need(c.column, "column", c), c.features)
    return regression.tstr_error(m_o, m_r, xo, yo, yb)


def _exact_faithfulness(c: CriterionSpec, x: _Ctx) -> float:
    rule = _need(c.match, "match", c)
    return faithfulness.maximum_matching(
        x.original, x.candidate, x.transformer, rule
    ).unmatched_share


def _exact(c: CriterionSpec, x: _Ctx) -> float:
    """The exact value of ``c``, computed once per evaluation context.

    A sweep's exact and DP evaluations share one context, so faithfulness (a maximum
    matching), the marginals and the OLS fits are computed once, not twice.
    """
    key = f"exact:{c.name}"
    if key not in x.cache:
        x.cache[key] = _EXACT[c.kind](c, x)
    value: float = x.cache[key]
    return value


_EXACT: dict[str, Callable[[CriterionSpec, _Ctx], float]] = {
    "marginals": _exact_marginals,
    "one_way_ratio": _exact_ratio,
    "conditional_mean": _exact_condmean,
    "regression_coefficients": _exact_coef,
    "regression_tstr": _exact_tstr,
    "faithfulness": _exact_faithfulness,
}


def exact_value(
    criterion: CriterionSpec,
    transformer: Transformer,
    original: pd.DataFrame,
    candidate: pd.DataFrame,
) -> float:
    """The exact (non-private) value of one criterion between two code tables."""
    ctx = _context(transformer.spec, transformer, original, candidate)
    return _exact(criterion, ctx)


def exact_values(
    spec: ReleaseSpec, transformer: Transformer, original: pd.DataFrame, candidate: pd.DataFrame
) -> dict[str, float]:
    """Exact values of every criterion of ``spec``, by name (pure; nothing charged)."""
    ctx = _context(spec, transformer, original, candidate)
    return {c.name: _exact(c, ctx) for c in spec.criteria}


def _context(
    spec: ReleaseSpec, transformer: Transformer, original: pd.DataFrame, candidate: pd.DataFrame
) -> _Ctx:
    return _Ctx(
        spec=spec,
        transformer=transformer,
        original=code_matrix(original, transformer, what="original"),
        candidate=code_matrix(candidate, transformer, what="candidate"),
    )


# ------------------------------------------------------------------------------- DP


@dataclass(frozen=True, kw_only=True)
class _Released:
    value: float
    threshold: float
    epsilon: float
    mechanism: str
    sensitivity: float
    noise_sd: float
    statistic: float | None = None
    """The statistic the noise was added to (before noise)."""
    public: dict[str, Any] = field(default_factory=dict)
    """The candidate's public parameters its sensitivity and threshold were read from."""


def laplace_terms(
    c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
) -> tuple[float, float]:
    """Sensitivity and the (pseudo-)threshold of a Laplace-released criterion.

    ``public`` holds the public parameters the evaluation recorded for the candidate
    (``n``; ``min_count`` for the 1-way ratio; ``min_group_size`` for a conditional
    mean). The one place these are computed: evaluation and ``synthflow plan`` both call
    it, so a plan simulates exactly the mechanism a release runs.

    Raises:
        ConfigError: If ``c`` is not released by the Laplace mechanism (the regression
            coefficients are released by the functional mechanism).
    """
    n = int(public["n"])
    if c.kind in ("marginals", "faithfulness"):
        sens = (
            marginals.marginal_sensitivity(n)
            if c.kind == "marginals"
            else faithfulness.faithfulness_sensitivity(n)
        )
        return sens, c.threshold
    if c.kind == "one_way_ratio":
        clip = _need(c.clip, "clip", c)
        m = int(public["min_count"])
        threshold = ratio.release_threshold(
            threshold=c.threshold,
            clip=clip,
            epsilon=epsilon,
            false_positive_rate=c.false_positive_rate,
            assumed_min_count=c.assumed_min_count,
            min_count=m,
        )
        return ratio.one_way_ratio_sensitivity(m, clip=clip), threshold
    if c.kind == "conditional_mean":
        bounds = _need(spec.column(_need(c.column, "column", c)).bounds, "bounds", c)
        return condmean.cond_mean_sensitivity(bounds, int(public["min_group_size"])), c.threshold
    if c.kind == "regression_tstr":
        target = spec.column(_need(c.column, "column", c))
        return regression.tstr_sensitivity(feature_bounds(target), n), c.threshold
    raise ConfigError(f"criterion {c.name!r} (kind {c.kind!r}) is not a Laplace release")


def _laplace_release(
    c: CriterionSpec,
    spec: ReleaseSpec,
    stat: float,
    *,
    public: dict[str, Any],
    ledger: Ledger,
    rng: PrivacyRNG,
) -> _Released:
    sens, threshold = laplace_terms(c, spec, public, c.epsilon)
    ledger.charge(f"acceptance {c.name}", epsilon=c.epsilon, mechanism="laplace", sensitivity=sens)
    noisy = float(rng.laplace(np.array([stat]), sensitivity=sens, epsilon=c.epsilon)[0])
    return _Released(
        value=noisy,
        threshold=threshold,
        epsilon=c.epsilon,
        mechanism="laplace",
        sensitivity=sens,
        noise_sd=math.sqrt(2) * sens / c.epsilon,
        statistic=stat,
        public=public,
    )


def _dp_marginals(c: CriterionSpec, x: _Ctx, ledger: Ledger, rng: PrivacyRNG) -> _Released:
    return _laplace_release(
        c, x.spec, _exact(c, x), public={"n": len(x.original)}, ledger=ledger, rng=rng
    )


def _dp_ratio(c: CriterionSpec, x: _Ctx, ledger: Ledger, rng: PrivacyRNG) -> _Released:
    m = ratio_min_count(c, x.candidate, x.transformer)
    public = {"n": len(x.original), "min_count": m}
    return _laplace_release(c, x.spec, _exact(c, x), public=public, ledger=ledger, rng=rng)


def _dp_condmean(c: CriterionSpec, x: _Ctx, ledger: Ledger, rng: PrivacyRNG) -> _Released:
    col = _need(c.column, "column", c)
    priorities = rng.generator().random(len(x.original))
    stat, min_size = condmean.resized_cond_mean_error(
        x.original,
        x.candidate,
        x.transformer,
        col,
        c.group_by,
        priorities=priorities,
        margin_fraction=c.margin_fraction,
        margin_plus=c.margin_plus,
    )
    public = {"n": len(x.original), "min_group_size": int(min_size)}
    return _laplace_release(c, x.spec, stat, public=public, ledger=ledger, rng=rng)


def _fit_for(c: CriterionSpec, x: _Ctx, ledger: Ledger, rng: PrivacyRNG) -> DPRegressionFit:
    """The DP fit of this evaluation (given, or released now under ``c``'s budget)."""
    if "fit" not in x.cache:
        target = _need(c.column, "column", c)
        xo, yo, feats, xb, yb = x.regression_design("original", target, c.features)
        std = _std_candidate(c, x)
        ledger.charge(
            f"acceptance {c.name}: functional-mechanism fit",
            epsilon=c.epsilon,
            mechanism="functional",
            sensitivity=float(regression.functional_mechanism_sensitivity(*std.box(xb, yb)).sum()),
        )
        x.cache["fit"] = regression.dp_fit(
            xo,
            yo,
            features=feats,
            std=std,
            x_bounds=xb,
            y_bounds=yb,
            epsilon=c.epsilon,
            laplace=rng.laplace,
        )
        x.cache["fit_charged_by"] = c.name
    return x.cache["fit"]


def _dp_coef(c: CriterionSpec, x: _Ctx, ledger: Ledger, rng: PrivacyRNG) -> _Released:
    fit = _fit_for(c, x, ledger, rng)
    _, m_r = _ols_models(c, x)
    std = _std_candidate(c, x)
    value = regression.coefficient_error(fit.model, m_r, std)
    charged = x.cache.get("fit_charged_by") == c.name
    return _Released(
        value=value,
        threshold=c.threshold,
        epsilon=c.epsilon if charged else 0.0,
        mechanism="functional" if charged else "functional (fit once per release)",
        sensitivity=fit.sensitivity,
        noise_sd=fit.noise_sd,
        public={
            "n": len(x.original),
            "candidate_ols": {"intercept": m_r.intercept, "coef": list(m_r.coef)},
            "candidate_standardization": dataclasses.asdict(std),
            "dp_fit": {"intercept": fit.model.intercept, "coef": list(fit.model.coef)},
        },
    )


def _dp_tstr(c: CriterionSpec, x: _Ctx, ledger: Ledger, rng: PrivacyRNG) -> _Released:
    if "fit" not in x.cache:
        raise ConfigError(
            f"criterion {c.name!r} needs the DP regression fit: list a "
            "'regression_coefficients' criterion before it, or pass regression_fit"
        )
    fit: DPRegressionFit = x.cache["fit"]
    target = _need(c.column, "column", c)
    xo, yo, _, _, yb = x.regression_design("original", target, c.features)
    _, m_r = _ols_models(c, x)
    stat = regression.tstr_error(fit.model, m_r, xo, yo, yb)
    return _laplace_release(c, x.spec, stat, public={"n": len(xo)}, ledger=ledger, rng=rng)


def _dp_faithfulness(c: CriterionSpec, x: _Ctx, ledger: Ledger, rng: PrivacyRNG) -> _Released:
    return _laplace_release(
        c, x.spec, _exact(c, x), public={"n": len(x.original)}, ledger=ledger, rng=rng
    )


_RELEASE: dict[str, Callable[[CriterionSpec, _Ctx, Ledger, PrivacyRNG], _Released]] = {
    "marginals": _dp_marginals,
    "one_way_ratio": _dp_ratio,
    "conditional_mean": _dp_condmean,
    "regression_coefficients": _dp_coef,
    "regression_tstr": _dp_tstr,
    "faithfulness": _dp_faithfulness,
}

# Regression coefficients before TSTR: the TSTR criterion reuses the fit.
_ORDER = {"regression_coefficients": 0}


def fit_dp_regression(
    spec: ReleaseSpec,
    transformer: Transformer,
    original: pd.DataFrame,
    *,
    ledger: Ledger,
    rng: PrivacyRNG,
) -> DPRegressionFit:
    """Fit the DP regression of D_T once per release (SPEC sec. 1, the improvement).

    The fit does not depend on any candidate, so it is standardised with the public
    bounds (centres at midpoints, scales at half-widths) instead of D_R's moments.
    Charges the ``regression_coefficients`` criterion's budget before any noise.
    Pass the result to :func:`evaluate` as ``regression_fit``.

    Raises:
        ConfigError: If the spec has no ``regression_coefficients`` criterion.
    """
    crits = [c for c in spec.criteria if c.kind == "regression_coefficients"]
    if not crits:
        raise ConfigError("the spec has no 'regression_coefficients' criterion to fit once")
    c = crits[0]
    target = _need(c.column, "column", c)
    codes = code_matrix(original, transformer, what="original")
    xo, yo, feats, xb, yb = regression.design(codes, transformer, target, c.features)
    std = regression.Standardization.from_bounds(xb, yb)
    sens = float(regression.functional_mechanism_sensitivity(*std.box(xb, yb)).sum())
    ledger.charge(
        f"acceptance {c.name}: functional-mechanism fit (once per release)",
        epsilon=c.epsilon,
        mechanism="functional",
        sensitivity=sens,
    )
    return regression.dp_fit(
        xo,
        yo,
        features=feats,
        std=std,
        x_bounds=xb,
        y_bounds=yb,
        epsilon=c.epsilon,
        laplace=rng.laplace,
    )


def evaluate(
    spec: ReleaseSpec,
    transformer: Transformer,
    original: pd.DataFrame,
    candidate: pd.DataFrame,
    *,
    exact: bool,
    ledger: Ledger | None = None,
    rng: PrivacyRNG | None = None,
    regression_fit: DPRegressionFit | None = None,
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
        regression_fit: A once-per-release fit from :func:`fit_dp_regression`; the
            regression criteria then reuse it and only TSTR is charged.

    Raises:
        ValueError: If DP mode lacks a ledger or rng, or the tables differ in size.
        BudgetExceededError: If the ledger cannot afford a criterion.
    """
    ctx = _context(spec, transformer, original, candidate)
    return _evaluate_in(ctx, exact=exact, ledger=ledger, rng=rng, regression_fit=regression_fit)


def _evaluate_in(
    ctx: _Ctx,
    *,
    exact: bool,
    ledger: Ledger | None,
    rng: PrivacyRNG | None,
    regression_fit: DPRegressionFit | None,
) -> AcceptanceReport:
    spec = ctx.spec
    if exact:
        results = []
        for c in spec.criteria:
            v = _exact(c, ctx)
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
    if len(ctx.original) != len(ctx.candidate):
        raise ValueError(
            f"DP evaluation needs |D_R| = |D_T| (n is public); got {len(ctx.candidate)} "
            f"candidate rows for {len(ctx.original)} original rows"
        )
    needed = math.fsum(
        c.epsilon
        for c in spec.criteria
        if not (regression_fit is not None and c.kind == "regression_coefficients")
    )
    if not ledger.can_afford(needed):
        raise BudgetExceededError(
            f"cannot evaluate: the criteria need epsilon {needed:g} but only "
            f"{ledger.remaining_epsilon:g} remains of the ledger's total {ledger.total_epsilon:g}; "
            "nothing was charged"
        )
    if regression_fit is not None:
        ctx.cache["fit"] = regression_fit
    released: dict[str, _Released] = {}
    for c in sorted(spec.criteria, key=lambda c: _ORDER.get(c.kind, 1)):
        released[c.name] = _RELEASE[c.kind](c, ctx, ledger, rng)
    results = [
        CriterionResult(
            name=c.name,
            kind=c.kind,
            value=released[c.name].value,
            threshold=released[c.name].threshold,
            passed=released[c.name].value < released[c.name].threshold,
            epsilon=released[c.name].epsilon,
            mechanism=released[c.name].mechanism,
            sensitivity=released[c.name].sensitivity,
            noise_sd=released[c.name].noise_sd,
            public=released[c.name].public,
        )
        for c in spec.criteria
    ]
    ctx.cache["released"] = released
    return AcceptanceReport(
        criteria=tuple(results),
        passed=all(r.passed for r in results),
        epsilon_total=math.fsum(r.epsilon or 0.0 for r in results),
        exact=False,
        regression_fit_reused=regression_fit is not None,
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
    ledger: Ledger | None = None,
    regression_fit: DPRegressionFit | None = None,
) -> ExactAndNoisy:
    """Exact values and the would-be DP decision, for public data only.

    Without a ``ledger`` a throwaway one sized to the evaluation budget is used.
    """
    ctx = _context(spec, transformer, original, candidate)  # shared: exact values once
    exact = _evaluate_in(ctx, exact=True, ledger=None, rng=None, regression_fit=None)
    if ledger is None:
        ledger = Ledger(total_epsilon=max(spec.evaluation_epsilon, 1e-12))
    noisy = _evaluate_in(ctx, exact=False, ledger=ledger, rng=rng, regression_fit=regression_fit)
    planning = {
        name: {"statistic": r.statistic, "public": r.public}
        for name, r in ctx.cache["released"].items()
    }
    for c in spec.criteria:  # what the planner needs to re-draw the regression fit
        if c.kind == "regression_tstr":
            xo, yo, _, _, yb = ctx.regression_design("original", str(c.column), c.features)
            _, m_r = _ols_models(c, ctx)
            planning[c.name]["candidate_mae"] = regression.mae(m_r, xo, yo, yb)
    return ExactAndNoisy(exact=exact, noisy=noisy, planning=planning)

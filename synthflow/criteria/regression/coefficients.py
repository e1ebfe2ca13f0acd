"""``regression_coefficients``: the coefficient error against a DP fit (SPEC sec. 5).

Kept whole: one criterion kind, one module: its parameters, statistic, sensitivity, exact value,
DP release and report section, so that adding a kind touches its module and the registry
line only ([shape]).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from synthflow.config.model import Column, CriterionParams, CriterionSpec, ReleaseSpec
from synthflow.criteria import noise
from synthflow.criteria._params import COLUMNS, TEXT, param, target_column
from synthflow.criteria.protocol import CriterionKind
from synthflow.criteria.regression import figures
from synthflow.criteria.regression import fit as regression
from synthflow.criteria.regression.law import fit_law
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas as pd

    from synthflow.criteria.context import Context, Released
    from synthflow.criteria.noise import NoiseFigure
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.transform import Transformer


__all__ = [
    "CoefficientParams",
    "RegressionCoefficients",
    "RegressionKind",
    "RegressionParams",
    "fit_dp_regression",
    "ols_models",
    "parse_regression",
    "std_candidate",
]


@dataclass(frozen=True, kw_only=True)
class RegressionParams(CriterionParams):
    """The regression's target and features (the coefficients and TSTR share one fit)."""

    column: str = param(schema=TEXT)
    """The regression's target (public bounds required)."""
    features: tuple[str, ...] = param((), schema=COLUMNS)
    """Features; empty: every int column but the target. A categorical feature is
    one-hot encoded over its public bins (first bin the reference)."""


@dataclass(frozen=True, kw_only=True)
class CoefficientParams(RegressionParams):
    """The coefficients criterion's parameters: the regression's, and the fit's noise."""

    noise: str = param("laplace", schema={"enum": ["laplace", "gaussian"]})
    """The functional mechanism's noise: ``laplace`` (pure epsilon-DP, the default) or
    ``gaussian`` (zCDP, charged as (epsilon, ``delta``); about 0.64 times the Laplace
    noise at the same epsilon on births' 27 coefficients, and composed with a Gaussian
    ``workload`` generator in one zCDP budget in a single-attempt selection)."""
    delta: float = param(0.0, schema={"type": "number", "minimum": 0, "exclusiveMaximum": 1})
    """Delta of a ``gaussian`` fit (0 for ``laplace``)."""
    noise_weights: str = param("uniform", schema={"enum": ["uniform", "public_sample"]})
    """How the fit's noise is spread over its coefficients: ``uniform`` (the same noise on
    each, SPEC sec. 5) or ``public_sample`` (more noise where the coefficient error is
    least sensitive to it, read off the spec's public sample: at the same epsilon the
    error of births' fit is about 28% smaller; :func:`synthflow.criteria.regression.noise_weights`,
    docs/privacy.md)."""


def parse_regression(
    where: str, raw: Mapping[str, Any], columns: Mapping[str, Column]
) -> dict[str, Any]:
    """The target (with public bounds) and the features of a regression criterion."""
    column = target_column(where, raw, columns)
    features: tuple[str, ...] = ()
    if "features" in raw:
        feats = raw["features"]
        if not isinstance(feats, list) or not feats or len(set(map(str, feats))) != len(feats):
            raise ConfigError(f"{where}.features: expected a non-empty list of distinct columns")
        for f in feats:
            if f not in columns:
                raise ConfigError(f"{where}.features: unknown column {f!r}")
            if f == column:
                raise ConfigError(f"{where}.features: {f!r} is the target, not a feature")
        features = tuple(str(f) for f in feats)
    return {"column": column, "features": features}


def check_shared_fit(c: CriterionSpec, criteria: tuple[CriterionSpec, ...]) -> None:
    """The regression criteria on one target use the same features (one DP fit)."""
    for o in criteria:
        if isinstance(o.params, RegressionParams) and o.column == c.column:
            if o.features != c.features:
                raise ConfigError(
                    f"acceptance.criteria: the regression criteria on {c.column!r} must use "
                    "the same features (they share one DP fit); give them the same 'features'"
                )


class RegressionKind(CriterionKind):
    """What the two regression kinds share: target and features, one DP fit, its pairs."""

    def parse(
        self, where: str, raw: Mapping[str, Any], columns: Mapping[str, Column]
    ) -> CriterionParams:
        """The target and the features (in the kind's own ``Params``)."""
        return self.Params(**parse_regression(where, raw, columns))

    def check(
        self, c: CriterionSpec, criteria: tuple[CriterionSpec, ...], columns: Mapping[str, Column]
    ) -> None:
        """The regression criteria on this target share its features."""
        check_shared_fit(c, criteria)

    def linear_relation(
        self, c: CriterionSpec, spec: ReleaseSpec
    ) -> tuple[str, tuple[str, ...]] | None:
        """The regression of the target on its features."""
        return str(c.column), tuple(spec.regression_features(c.column, c.features))

    def pairs_read(self, c: CriterionSpec, spec: ReleaseSpec) -> set[tuple[str, ...]]:
        """Every pair among the target and its features."""
        return set(
            itertools.combinations((c.column, *spec.regression_features(c.column, c.features)), 2)
        )


class RegressionCoefficients(RegressionKind):
    """Coefficient error of the candidate's OLS against a DP fit of the original.

    The original's side is the functional mechanism's fit (once per release or per
    attempt); the candidate's OLS is public.
    """

    name = "regression_coefficients"
    Params = CoefficientParams
    mechanism = "functional"
    once_per_release = True
    release_first = True

    def parse(
        self, where: str, raw: Mapping[str, Any], columns: Mapping[str, Column]
    ) -> CriterionParams:
        """The target and features, and the fit's noise (``laplace`` or ``gaussian``, delta)."""
        noise = raw.get("noise", "laplace")
        if noise not in ("laplace", "gaussian"):
            raise ConfigError(f"{where}.noise: expected 'laplace' or 'gaussian', got {noise!r}")
        delta = raw.get("delta", 0.0)
        if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 <= delta < 1:
            raise ConfigError(f"{where}.delta: expected a number in [0, 1), got {delta!r}")
        if noise == "gaussian" and delta == 0:
            raise ConfigError(
                f"{where}: noise 'gaussian' needs a delta > 0 (e.g. 5e-7; the criteria's and "
                "the generator's deltas must fit in privacy.total_delta)"
            )
        if noise == "laplace" and delta != 0:
            raise ConfigError(f"{where}: noise 'laplace' is pure DP: drop delta or set noise")
        weights = raw.get("noise_weights", "uniform")
        if weights not in ("uniform", "public_sample"):
            raise ConfigError(
                f"{where}.noise_weights: expected 'uniform' or 'public_sample', got {weights!r}"
            )
        return CoefficientParams(
            **parse_regression(where, raw, columns),
            noise=str(noise),
            delta=float(delta),
            noise_weights=str(weights),
        )

    def check_spec(self, c: CriterionSpec, spec: ReleaseSpec) -> None:
        """``noise_weights: public_sample`` needs the spec's ``public_sample``."""
        if c.noise_weights == "public_sample" and not spec.public_sample:
            raise ConfigError(
                f"acceptance.criteria.{c.name}: noise_weights 'public_sample' reads the "
                "spec's public_sample, and the spec names none: add 'public_sample: FILE' "
                "(public data like the private data) or set noise_weights: uniform"
            )

    def delta(self, c: CriterionSpec) -> float:
        """The fit's delta (0 for Laplace)."""
        return float(c.delta)

    def noise_figure(
        self,
        c: CriterionSpec,
        spec: ReleaseSpec,
        transformer: Transformer,
        n: int,
        public: np.ndarray | None = None,
        *,
        fit_once: bool = False,
    ) -> NoiseFigure:
        """A perfect candidate's error over simulated DP fits (the planner's simulation)."""
        if public is None:
            errors = figures.reference_errors(c, transformer, n)
        else:
            errors, _ = figures.regression_draws(spec, transformer, n, public, fit_once=fit_once)
        return noise.simulated_figure(c, errors)

    def report_section(
        self,
        c: CriterionSpec,
        transformer: Transformer,
        t: np.ndarray | None,
        r: np.ndarray,
        released: Released | None,
    ) -> str:
        """The coefficients of the candidate, the original (exact report) and the DP fit."""
        dp_fit = released.public.get("dp_fit") if released is not None else None
        return _regression_section(c, transformer, t, r, dp_fit)

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`_exact_coef`)."""
        return _exact_coef(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`_dp_coef`)."""
        return _dp_coef(c, ctx, ledger, rng)

    def published(
        self,
        c: CriterionSpec,
        spec: ReleaseSpec,
        transformer: Transformer,
        codes: np.ndarray,
        *,
        fit_once: bool,
    ) -> dict[str, Any]:
        """The target's bounds, the fit's standardization and its L1 sensitivity."""
        from synthflow.criteria.context import need

        column = need(c.column, "column", c)
        x, y, _, xb, yb = regression.design(codes, transformer, column, c.features)
        std = (
            regression.Standardization.from_bounds(xb, yb)
            if fit_once
            else regression.Standardization.from_data(x, y, xb, yb)
        )
        noise = fit_law(c, transformer, std, xb, yb)
        out = {
            "n": len(codes),
            "target_bounds": list(yb),
            "standardization": "public bounds" if fit_once else "synthetic data",
            "sensitivity": noise.sensitivity,
        }
        if noise.weights:
            out["noise_weights"] = list(noise.weights)
        return out

    def release_once(
        self,
        c: CriterionSpec,
        spec: ReleaseSpec,
        transformer: Transformer,
        original: pd.DataFrame,
        *,
        ledger: Ledger,
        rng: PrivacyRNG,
    ) -> regression.DPRegressionFit:
        """The functional-mechanism fit of D_T, once per release (:func:`fit_dp_regression`)."""
        return _fit_once(c, transformer, original, ledger=ledger, rng=rng)

    def published_noise_sd(
        self, c: CriterionSpec, sensitivity: float, *, reused: bool
    ) -> float | None:
        """The fit's noise sd, made once or per attempt, at the fit's budget and delta.

        Laplace: sqrt(2) sensitivity / epsilon; Gaussian: sensitivity / sqrt(2 rho).
        """
        if c.epsilon <= 0:
            return None
        delta = self.delta(c)
        if delta > 0:
            from synthflow.privacy.zcdp import zcdp_rho

            return sensitivity / math.sqrt(2 * zcdp_rho(c.epsilon, delta=delta))
        return math.sqrt(2.0) * sensitivity / c.epsilon

    def once_mechanisms(
        self,
        c: CriterionSpec,
        transformer: Transformer,
        epsilon: float | None = None,
        weights: Any = None,
    ) -> tuple[Any, ...]:
        """The fit once, as mechanisms: its noise law at the public bounds.

        The law :func:`~synthflow.criteria.regression.law.fit_law` makes (its weights
        from the public sample, or the published ``weights``), at ``c``'s budget or
        ``epsilon``.
        """
        empty = np.zeros((0, len(transformer.domain.names)), dtype=np.int64)
        _, _, _, xb, yb = regression.design(empty, transformer, str(c.column), c.features)
        std = regression.Standardization.from_bounds(xb, yb)
        w = None if weights is None else np.asarray(weights, dtype=float)
        noise = fit_law(c, transformer, std, xb, yb, epsilon=epsilon, weights=w)
        return noise.mechanisms(f"acceptance {c.name}: functional-mechanism fit (once per release)")

    def planned_measurement(
        self, c: CriterionSpec, spec: ReleaseSpec, frame: pd.DataFrame, planner: Any
    ) -> Any:
        """The fit, and a TSTR criterion that reads it (:mod:`.regression.plan`)."""
        from synthflow.criteria.regression.plan import RegressionMeasurement

        return RegressionMeasurement(c, spec, frame, planner)

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        return (
            f"How far a linear regression of `{c.column}` on the other numeric columns, "
            "fitted to the synthetic data, is from the same regression fitted (with DP) to "
            f"the original: sum of absolute coefficient differences, in {self.unit(c, spec)} "
            "per standard deviation of each column."
        )


def ols_models(c: CriterionSpec, x: Context) -> tuple[regression.LinearModel, ...]:
    """OLS of the original and of the candidate for ``c``'s target (once per context)."""
    from synthflow.criteria.context import need

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
    from synthflow.criteria.context import need

    xr, yr, _, xb, yb = x.regression_design("candidate", need(c.column, "column", c), c.features)
    return regression.Standardization.from_data(xr, yr, xb, yb)


def _exact_coef(c: CriterionSpec, x: Context) -> float:
    m_o, m_r = ols_models(c, x)
    return regression.coefficient_error(m_o, m_r, std_candidate(c, x))


def _charged_fit(
    what: str,
    c: CriterionSpec,
    transformer: Transformer,
    design: tuple[Any, ...],
    std: regression.Standardization,
    *,
    ledger: Ledger,
    rng: PrivacyRNG,
) -> regression.DPRegressionFit:
    """Charge ``c``'s budget for a functional-mechanism fit, then fit (the one place)."""
    xo, yo, feats, xb, yb = design
    noise = fit_law(c, transformer, std, xb, yb)  # public; may refuse: before the charge
    ledger.charge(
        f"acceptance {c.name}: functional-mechanism fit{what}"
        + (f" (discrete Gaussian, rho {noise.rho:.6g}-zCDP)" if noise.kind == "gaussian" else ""),
        epsilon=c.epsilon,
        delta=noise.delta,
        mechanism="functional" if noise.kind == "laplace" else "functional (gaussian)",
        sensitivity=noise.sensitivity,
    )
    return regression.dp_fit(
        xo, yo, features=feats, std=std, x_bounds=xb, y_bounds=yb, noise=noise, rng=rng
    )


def _fit_for(
    c: CriterionSpec, x: Context, ledger: Ledger, rng: PrivacyRNG
) -> regression.DPRegressionFit:
    """The DP fit of this evaluation (released once per release, or now under ``c``'s budget)."""
    from synthflow.criteria.context import RELEASED_ONCE, need

    if "fit" not in x.cache and x.cache.get(RELEASED_ONCE) is not None:
        x.cache["fit"] = x.cache[RELEASED_ONCE]  # reused: charged once, before the attempts
    if "fit" not in x.cache:
        design = x.regression_design("original", need(c.column, "column", c), c.features)
        x.cache["fit"] = _charged_fit(
            "", c, x.transformer, design, std_candidate(c, x), ledger=ledger, rng=rng
        )
        x.cache["fit_charged_by"] = c.name
    return x.cache["fit"]


def _dp_coef(c: CriterionSpec, x: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
    from synthflow.criteria.context import Released

    fit = _fit_for(c, x, ledger, rng)
    _, m_r = ols_models(c, x)
    std = std_candidate(c, x)
    value = regression.coefficient_error(fit.model, m_r, std)
    charged = x.cache.get("fit_charged_by") == c.name
    return Released(
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


def fit_dp_regression(
    spec: ReleaseSpec,
    transformer: Transformer,
    original: pd.DataFrame,
    *,
    ledger: Ledger,
    rng: PrivacyRNG,
) -> regression.DPRegressionFit:
    """Fit the DP regression of D_T once per release (SPEC sec. 1, the improvement).

    The fit does not depend on any candidate, so it is standardised with the public
    bounds (centres at midpoints, scales at half-widths) instead of D_R's moments.
    Charges the ``regression_coefficients`` criterion's budget before any noise.
    Pass the result to :func:`evaluate` as ``released_once``.

    Raises:
        ConfigError: If the spec has no ``regression_coefficients`` criterion.
    """
    crits = [c for c in spec.criteria if isinstance(c.impl, RegressionCoefficients)]
    if not crits:
        raise ConfigError("the spec has no 'regression_coefficients' criterion to fit once")
    return _fit_once(crits[0], transformer, original, ledger=ledger, rng=rng)


def _fit_once(
    c: CriterionSpec,
    transformer: Transformer,
    original: pd.DataFrame,
    *,
    ledger: Ledger,
    rng: PrivacyRNG,
) -> regression.DPRegressionFit:
    from synthflow.criteria._common import code_matrix
    from synthflow.criteria.context import need

    target = need(c.column, "column", c)
    codes = code_matrix(original, transformer, what="original")
    design = regression.design(codes, transformer, target, c.features)
    std = regression.Standardization.from_bounds(design[3], design[4])
    return _charged_fit(" (once per release)", c, transformer, design, std, ledger=ledger, rng=rng)


# --- the report section


def _regression_section(
    c: CriterionSpec,
    transformer: Transformer,
    t: np.ndarray | None,
    r: np.ndarray,
    dp_fit: dict[str, Any] | None = None,
) -> str:
    import pandas as pd

    from synthflow.criteria.plots import (
        CAND,
        ORIG,
        heading,
        html_table,
        png,
        pyplot,
    )

    target = c.column or ""
    xr, yr, feats, _, _ = regression.design(r, transformer, target, c.features)
    models = {"candidate (OLS)": regression.ols(xr, yr, feats)}
    if t is not None:
        xo, yo, _, _, _ = regression.design(t, transformer, target, c.features)
        models = {"original (OLS)": regression.ols(xo, yo, feats), **models}
    elif dp_fit is not None:  # DP mode: the released fit of D_T (DP, so publishable)
        fit = regression.LinearModel(
            features=feats, intercept=float(dp_fit["intercept"]), coef=tuple(dp_fit["coef"])
        )
        models = {"original (DP fit)": fit, **models}
    terms = ["intercept", *feats]
    df = pd.DataFrame({"term": terms, **{k: [m.intercept, *m.coef] for k, m in models.items()}})
    if len(models) == 2:
        first, second = list(models)
        df["abs difference"] = (df[first] - df[second]).abs()
    plt = pyplot()
    fig, (ax0, ax1) = plt.subplots(
        1, 2, figsize=(11, 0.45 * len(terms) + 1.2), gridspec_kw={"width_ratios": [1, 4]}
    )
    colors = [ORIG, CAND] if len(models) == 2 else [CAND]
    h = 0.8 / len(models)
    for i, ((name, m), color) in enumerate(zip(models.items(), colors, strict=True)):
        off = (i - (len(models) - 1) / 2) * h
        ax0.barh([off], [m.intercept], h, color=color)
        ax1.barh(np.arange(len(feats)) + off, m.coef, h, color=color, label=name)
    ax0.set_yticks([0], ["intercept"])
    ax1.set_yticks(np.arange(len(feats)), feats)
    ax1.invert_yaxis()
    for ax in (ax0, ax1):
        ax.axvline(0, color="black", lw=0.8)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(labelsize=8)
    ax1.set_title(f"coefficients of {target} (raw units per unit of feature)", fontsize=9)
    ax1.legend(fontsize=8)
    fig.tight_layout()
    if t is not None:
        head = heading(2, "Regression coefficients (raw units)")
    elif dp_fit is not None:
        head = heading(
            2, "Regression coefficients (raw units; DP fit of the original vs candidate)"
        )
        head += (
            "<p class='note'>The original's coefficients are the functional-mechanism fit "
            "released under this criterion's budget (noisy, DP); the criterion compares them "
            "with the candidate's OLS in the candidate's standardisation.</p>"
        )
    else:
        head = heading(2, "Regression coefficients (raw units; candidate)")
    return head + png(fig) + html_table(df)

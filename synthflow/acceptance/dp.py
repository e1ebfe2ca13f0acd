"""DP release of each acceptance criterion (SPEC sec. 5): the ledger first, then noise.

Laplace releases (marginals, ratio, conditional means, TSTR, faithfulness) share
:func:`laplace_terms`, the one place their sensitivity and (pseudo-)threshold are
computed, which ``synthflow plan`` also calls. The regression coefficients are released
by the functional mechanism (:func:`fit_dp_regression`, once per release).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from synthflow.acceptance import condmean, regression
from synthflow.acceptance._common import code_matrix
from synthflow.acceptance.exact import (
    Context,
    exact_of,
    need,
    ols_models,
    ratio_min_count,
    std_candidate,
)
from synthflow.config.model import CriterionSpec, ReleaseSpec
from synthflow.errors import ConfigError
from synthflow.ledger import Ledger
from synthflow.rng import PrivacyRNG
from synthflow.transform import Transformer

__all__ = ["Released", "fit_dp_regression", "laplace_release", "laplace_terms"]

DPRegressionFit = regression.DPRegressionFit


@dataclass(frozen=True, kw_only=True)
class Released:
    """One criterion's DP release: the noisy value and what it was computed from."""

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
    mean). Each kind computes them (:mod:`synthflow.criteria`): evaluation, the release's
    published parameters and ``synthflow plan`` all ask it, so a plan simulates exactly
    the mechanism a release runs and the audit checks the same numbers.

    Raises:
        ConfigError: If ``c`` is not released by the Laplace mechanism (the regression
            coefficients are released by the functional mechanism).
    """
    return c.impl.sensitivity_and_threshold(c, spec, public, epsilon)


def laplace_release(
    c: CriterionSpec,
    spec: ReleaseSpec,
    stat: float,
    *,
    public: dict[str, Any],
    ledger: Ledger,
    rng: PrivacyRNG,
) -> Released:
    """``stat`` plus Laplace noise at the criterion's sensitivity, the ledger charged first."""
    sens, threshold = laplace_terms(c, spec, public, c.epsilon)
    ledger.charge(f"acceptance {c.name}", epsilon=c.epsilon, mechanism="laplace", sensitivity=sens)
    noisy = float(rng.laplace(np.array([stat]), sensitivity=sens, epsilon=c.epsilon)[0])
    return Released(
        value=noisy,
        threshold=threshold,
        epsilon=c.epsilon,
        mechanism="laplace",
        sensitivity=sens,
        noise_sd=math.sqrt(2) * sens / c.epsilon,
        statistic=stat,
        public=public,
    )


_laplace_release = laplace_release  # the name tests written before it was public use


def _dp_marginals(c: CriterionSpec, x: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
    return laplace_release(
        c, x.spec, exact_of(c, x), public={"n": len(x.original)}, ledger=ledger, rng=rng
    )


def _dp_ratio(c: CriterionSpec, x: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
    m = ratio_min_count(c, x.candidate, x.transformer)
    public = {"n": len(x.original), "min_count": m}
    return laplace_release(c, x.spec, exact_of(c, x), public=public, ledger=ledger, rng=rng)


def _dp_condmean(c: CriterionSpec, x: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
    col = need(c.column, "column", c)
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
    return laplace_release(c, x.spec, stat, public=public, ledger=ledger, rng=rng)


def _charged_fit(
    what: str,
    c: CriterionSpec,
    design: tuple[Any, ...],
    std: regression.Standardization,
    *,
    ledger: Ledger,
    rng: PrivacyRNG,
) -> DPRegressionFit:
    """Charge ``c``'s budget for a functional-mechanism fit, then fit (the one place)."""
    xo, yo, feats, xb, yb = design
    noise = regression.fit_noise(*std.box(xb, yb), c.epsilon, kind=c.noise, delta=c.delta)
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


def _fit_for(c: CriterionSpec, x: Context, ledger: Ledger, rng: PrivacyRNG) -> DPRegressionFit:
    """The DP fit of this evaluation (given, or released now under ``c``'s budget)."""
    if "fit" not in x.cache:
        design = x.regression_design("original", need(c.column, "column", c), c.features)
        x.cache["fit"] = _charged_fit("", c, design, std_candidate(c, x), ledger=ledger, rng=rng)
        x.cache["fit_charged_by"] = c.name
    return x.cache["fit"]


def _dp_coef(c: CriterionSpec, x: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
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


def _dp_tstr(c: CriterionSpec, x: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
    if "fit" not in x.cache:
        raise ConfigError(
            f"criterion {c.name!r} needs the DP regression fit: list a "
            "'regression_coefficients' criterion before it, or pass regression_fit"
        )
    fit: DPRegressionFit = x.cache["fit"]
    target = need(c.column, "column", c)
    xo, yo, _, _, yb = x.regression_design("original", target, c.features)
    _, m_r = ols_models(c, x)
    stat = regression.tstr_error(fit.model, m_r, xo, yo, yb)
    return laplace_release(c, x.spec, stat, public={"n": len(xo)}, ledger=ledger, rng=rng)


def _dp_faithfulness(c: CriterionSpec, x: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
    return laplace_release(
        c, x.spec, exact_of(c, x), public={"n": len(x.original)}, ledger=ledger, rng=rng
    )


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
    crits = [c for c in spec.criteria if c.impl.once_per_release]
    if not crits:
        raise ConfigError("the spec has no 'regression_coefficients' criterion to fit once")
    c = crits[0]
    target = need(c.column, "column", c)
    codes = code_matrix(original, transformer, what="original")
    design = regression.design(codes, transformer, target, c.features)
    std = regression.Standardization.from_bounds(design[3], design[4])
    return _charged_fit(" (once per release)", c, design, std, ledger=ledger, rng=rng)

"""``regression_coefficients``: the coefficient error against a DP fit (SPEC sec. 5)."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from synthflow.config.model import Column, CriterionParams, CriterionSpec, ReleaseSpec
from synthflow.criteria._params import COLUMNS, TEXT, param, target_column
from synthflow.criteria.protocol import CriterionKind
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

    from synthflow.acceptance.dp import Released
    from synthflow.acceptance.exact import Context
    from synthflow.acceptance.noise_check import NoiseFigure
    from synthflow.ledger import Ledger
    from synthflow.rng import PrivacyRNG
    from synthflow.transform import Transformer

__all__ = [
    "CoefficientParams",
    "RegressionCoefficients",
    "RegressionKind",
    "RegressionParams",
    "parse_regression",
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
        return CoefficientParams(
            **parse_regression(where, raw, columns), noise=str(noise), delta=float(delta)
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
        from synthflow.acceptance import noise_check

        if public is None:
            errors = noise_check.reference_errors(c, transformer, n)
        else:
            errors, _ = noise_check.regression_draws(
                spec, transformer, n, public, fit_once=fit_once
            )
        return noise_check.simulated_figure(c, errors)

    def report_section(
        self,
        c: CriterionSpec,
        transformer: Transformer,
        t: np.ndarray | None,
        r: np.ndarray,
        released: Released | None,
    ) -> str:
        """The coefficients of the candidate, the original (exact report) and the DP fit."""
        from synthflow.acceptance._report_sections import _regression_section

        dp_fit = released.public.get("dp_fit") if released is not None else None
        return _regression_section(c, transformer, t, r, dp_fit)

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`synthflow.acceptance.exact._exact_coef`)."""
        from synthflow.acceptance import exact

        return exact._exact_coef(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`synthflow.acceptance.dp._dp_coef`)."""
        from synthflow.acceptance import dp

        return dp._dp_coef(c, ctx, ledger, rng)

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
        from synthflow.acceptance import regression
        from synthflow.acceptance.exact import need

        column = need(c.column, "column", c)
        x, y, _, xb, yb = regression.design(codes, transformer, column, c.features)
        std = (
            regression.Standardization.from_bounds(xb, yb)
            if fit_once
            else regression.Standardization.from_data(x, y, xb, yb)
        )
        noise = regression.fit_noise(*std.box(xb, yb), c.epsilon, kind=c.noise, delta=c.delta)
        return {
            "n": len(codes),
            "target_bounds": list(yb),
            "standardization": "public bounds" if fit_once else "synthetic data",
            "sensitivity": noise.sensitivity,
        }

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        return (
            f"How far a linear regression of `{c.column}` on the other numeric columns, "
            "fitted to the synthetic data, is from the same regression fitted (with DP) to "
            f"the original: sum of absolute coefficient differences, in {self.unit(c, spec)} "
            "per standard deviation of each column."
        )

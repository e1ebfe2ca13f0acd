"""``regression_tstr``: train on synthetic, test on real (SPEC sec. 5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from synthflow.criteria import noise
from synthflow.criteria.regression import figures
from synthflow.criteria.regression import fit as regression
from synthflow.criteria.regression.coefficients import RegressionKind, RegressionParams, ols_models
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

    import numpy as np

    from synthflow.config.model import Column, CriterionSpec, ReleaseSpec
    from synthflow.criteria.context import Context, Released
    from synthflow.criteria.noise import NoiseFigure
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.transform import Transformer


__all__ = ["RegressionTSTR", "RegressionTSTRParams"]


@dataclass(frozen=True, kw_only=True)
class RegressionTSTRParams(RegressionParams):
    """The regression's target and features (shared with the coefficients' fit)."""


class RegressionTSTR(RegressionKind):
    """|MAE of the D_T model - MAE of the D_R model| on D_T; sensitivity 2 (U - L) / n."""

    name = "regression_tstr"
    Params = RegressionTSTRParams
    reads_measurement = True

    def check(
        self, c: CriterionSpec, criteria: tuple[CriterionSpec, ...], columns: Mapping[str, Column]
    ) -> None:
        """It reads the DP fit that a ``regression_coefficients`` criterion on its target makes.

        Without one, the release would fail after its charge: refused when the spec loads.
        """
        super().check(c, criteria, columns)
        if not any(o.impl.mechanism == "functional" and o.column == c.column for o in criteria):
            raise ConfigError(
                f"acceptance.criteria: {c.name!r} (regression_tstr) reads the DP regression fit "
                f"of a 'regression_coefficients' criterion on {c.column!r}, and the spec has "
                "none: add one (with the same features) or remove this criterion"
            )

    def planning_extra(self, c: CriterionSpec, ctx: Context) -> dict[str, Any]:
        """The candidate model's MAE on the original (the planner re-draws the rest)."""
        from synthflow.criteria.regression.coefficients import ols_models

        xo, yo, _, _, yb = ctx.regression_design("original", c.column, c.features)
        _, m_r = ols_models(c, ctx)
        return {"candidate_mae": regression.mae(m_r, xo, yo, yb)}

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
        """A perfect candidate's |MAE gap| over simulated DP fits, plus its Laplace noise.

        Without a public sample, the Laplace term alone (the fit's share is not known).
        """
        import numpy as np

        if public is None:
            return super().noise_figure(c, spec, transformer, n, None, fit_once=fit_once)
        _, gaps = figures.regression_draws(spec, transformer, n, public, fit_once=fit_once)
        sens, _ = self.sensitivity_and_threshold(c, spec, {"n": n}, c.epsilon)
        # A simulation on public data: a seeded generator, not the release's sampler.
        laplace = np.random.default_rng(1).laplace(scale=sens / c.epsilon, size=len(gaps))
        return noise.simulated_figure(c, gaps + laplace)

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`_exact_tstr`)."""
        return _exact_tstr(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`_dp_tstr`)."""
        return _dp_tstr(c, ctx, ledger, rng)

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """``2 (U - L) / n`` for the target's public bounds, the threshold."""
        from synthflow.criteria._common import feature_bounds
        from synthflow.criteria.context import need

        target = spec.column(need(c.column, "column", c))
        return regression.tstr_sensitivity(feature_bounds(target), int(public["n"])), c.threshold

    def published(
        self,
        c: CriterionSpec,
        spec: ReleaseSpec,
        transformer: Transformer,
        codes: np.ndarray,
        *,
        fit_once: bool,
    ) -> dict[str, Any]:
        """The target's public bounds and the sensitivity."""
        from synthflow.criteria._common import feature_bounds
        from synthflow.criteria.context import need

        n = len(codes)
        yb = feature_bounds(spec.column(need(c.column, "column", c)))
        sens, _ = self.sensitivity_and_threshold(c, spec, {"n": n}, c.epsilon)
        return {"n": n, "target_bounds": list(yb), "sensitivity": sens}

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        return (
            f"Train on synthetic, test on real: how much larger the mean absolute error of "
            f"predicting `{c.column}` on the original data is for a regression trained on "
            f"the synthetic data than for one trained on the original, in "
            f"{self.unit(c, spec)}."
        )


def _exact_tstr(c: CriterionSpec, x: Context) -> float:
    from synthflow.criteria.context import need

    m_o, m_r = ols_models(c, x)
    xo, yo, _, _, yb = x.regression_design("original", need(c.column, "column", c), c.features)
    return regression.tstr_error(m_o, m_r, xo, yo, yb)


def _dp_tstr(c: CriterionSpec, x: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
    from synthflow.criteria.context import (
        laplace_release,
        need,
    )

    if "fit" not in x.cache:
        raise ConfigError(
            f"criterion {c.name!r} needs the DP regression fit: list a "
            "'regression_coefficients' criterion before it, or pass regression_fit"
        )
    fit: regression.DPRegressionFit = x.cache["fit"]
    target = need(c.column, "column", c)
    xo, yo, _, _, yb = x.regression_design("original", target, c.features)
    _, m_r = ols_models(c, x)
    stat = regression.tstr_error(fit.model, m_r, xo, yo, yb)
    return laplace_release(c, x.spec, stat, public={"n": len(xo)}, ledger=ledger, rng=rng)

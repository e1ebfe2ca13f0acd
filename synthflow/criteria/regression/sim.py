"""The DP regression fit re-drawn on public data: what ``plan`` and the noise rule share.

:class:`RegressionSim` re-draws the functional-mechanism fit of one transformation's
public D_T with the evaluation's own functions (:mod:`synthflow.criteria.regression`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from synthflow.criteria._common import code_matrix
from synthflow.criteria.regression import fit as regression
from synthflow.criteria.regression.law import fit_law
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Transformer

if TYPE_CHECKING:
    import pandas as pd

    from synthflow.config.model import CriterionSpec, ReleaseSpec

__all__ = ["FitDraws", "RegressionSim", "standardization_from_json"]


def _model(entry: dict[str, Any], features: tuple[str, ...]) -> regression.LinearModel:
    return regression.LinearModel(
        features=features, intercept=float(entry["intercept"]), coef=tuple(entry["coef"])
    )


def standardization_from_json(entry: dict[str, Any]) -> regression.Standardization:
    """A :class:`Standardization` from its stored JSON form (``dataclasses.asdict``)."""
    return regression.Standardization(
        center=tuple(entry["center"]),
        scale=tuple(entry["scale"]),
        y_center=float(entry["y_center"]),
        y_scale=float(entry["y_scale"]),
    )


@dataclass(frozen=True, kw_only=True)
class FitDraws:
    """``J`` functional-mechanism fits of D_T at one budget and their MAE on D_T."""

    intercepts: np.ndarray
    coefs: np.ndarray
    mae: np.ndarray


class RegressionSim:
    """Re-draws the DP regression fit of one transformation's public D_T."""

    def __init__(self, codes: np.ndarray, tr: Transformer, coef: CriterionSpec) -> None:
        target = str(coef.column)
        self.coef, self.tr = coef, tr
        self.noise, self.delta = str(coef.noise), float(coef.delta)
        self.x, self.y, self.features, self.xb, self.yb = regression.design(
            codes, tr, target, coef.features
        )
        self.n = len(self.x)
        rows, counts = np.unique(np.column_stack([self.x, self.y]), axis=0, return_counts=True)
        self._xu, self._yu, self._w = rows[:, :-1], rows[:, -1], counts.astype(float)
        self.ols = regression.ols(self.x, self.y, self.features)
        self.std_data = regression.Standardization.from_data(self.x, self.y, self.xb, self.yb)
        self.ols_mae = self.mae(np.array([self.ols.intercept]), np.array([self.ols.coef]))[0]
        self._stats: dict[str, np.ndarray] = {}

    @classmethod
    def from_frame(
        cls,
        spec: ReleaseSpec,
        frame: pd.DataFrame,
        transformations: dict[str, str],
        coef: CriterionSpec,
    ) -> RegressionSim:
        """The simulation of a raw public ``frame`` binned by ``transformations``."""
        tr = Transformer(spec, transformations)
        return cls(code_matrix(tr.forward(frame), tr, what="original"), tr, coef)

    def mae(self, intercepts: np.ndarray, coefs: np.ndarray) -> np.ndarray:
        """MAE on D_T of each model (the evaluation's :func:`regression.mae_many`)."""
        return regression.mae_many(intercepts, coefs, self._xu, self._yu, self.yb, weights=self._w)

    def draws(
        self, std: regression.Standardization, epsilon: float, count: int, seed: int
    ) -> FitDraws:
        """``count`` DP fits at ``epsilon`` in standardisation ``std``; seeded (public data)."""
        key = json.dumps([std.center, std.scale, std.y_center, std.y_scale])
        if key not in self._stats:
            self._stats[key] = regression.functional_mechanism_statistics(
                self.x, self.y, std, self.xb, self.yb
            )
        stats = self._stats[key]
        noise = fit_law(self.coef, self.tr, std, self.xb, self.yb, epsilon=epsilon)
        if noise.kind == "laplace":  # the release's own Laplace sampler, seeded
            noisy = noise.release(np.tile(stats, (count, 1)), PrivacyRNG.from_seed(seed))
        else:  # a normal of the discrete Gaussian's sd (sigma / g is in the thousands)
            noisy = stats + noise.simulate(np.random.default_rng(seed), (count, len(stats)))
        intercepts, coefs = regression.fits_from_noisy_statistics(
            np.asarray(noisy), std, len(self.features) + 1
        )
        return FitDraws(intercepts=intercepts, coefs=coefs, mae=self.mae(intercepts, coefs))

    def bounds_standardization(self) -> regression.Standardization:
        """The once-per-release fit's standardisation (public bounds)."""
        return regression.Standardization.from_bounds(self.xb, self.yb)

    def errors(
        self, fits: FitDraws, record: dict[str, Any], coef_name: str, tstr_name: str | None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Coefficient errors and TSTR statistics of ``fits`` against one candidate."""
        entry = record[coef_name]["public"]
        model = _model(entry["candidate_ols"], self.features)
        std = standardization_from_json(entry["candidate_standardization"])
        coef = regression.coefficient_errors(fits.intercepts, fits.coefs, model, std)
        if tstr_name is None:
            return coef, None
        return coef, np.abs(fits.mae - float(record[tstr_name]["candidate_mae"]))

    def perfect_errors(self, fits: FitDraws) -> tuple[np.ndarray, np.ndarray]:
        """Errors of ``fits`` against a perfect candidate (D_R = D_T): the fit's noise alone."""
        coef = regression.coefficient_errors(fits.intercepts, fits.coefs, self.ols, self.std_data)
        return coef, np.abs(fits.mae - self.ols_mae)

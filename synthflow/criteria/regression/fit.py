"""Criteria ``regression_coefficients`` and ``regression_tstr`` (SPEC sec. 5, #6-7).

Target: one numerified column (birth_weight); features: the criterion's ``features``
(default: the other int columns), a categorical one one-hot encoded (:func:`design`).
The DP fit on D_T is the functional mechanism (Zhang et al., "Functional Mechanism:
Regression Analysis under Differential Privacy", VLDB 2012): the least-squares
objective is a quadratic polynomial in the weights whose coefficients are sums over
rows, ``A = sum u u^T`` and ``b = sum y u`` with ``u = [1, z]``; Laplace noise on the
coefficients (or, with ``noise: gaussian``, discrete Gaussian noise calibrated to their L2
sensitivity and a zCDP budget: :class:`FitNoise`), then minimise the noisy objective.
Features and target are standardised with public centres and scales and clipped to the
standardised public bounds, so every coefficient's range over one row is known
(diffprivlib's LinearRegression gets the squared terms wrong, DEPENDENCIES.md trap 1;
this module does not use it).

Models are kept in raw units; the coefficient criterion compares them in D_R's
standardisation (mean/sd of D_R, SPEC sec. 5), intercept included, in target units.

Kept whole: the DP regression (functional mechanism), its standardisation and its
sensitivity analysis are one argument.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from synthflow.privacy.pld import Mechanism
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.transform import Transformer


__all__ = [
    "DPRegressionFit",
    "FitNoise",
    "LinearModel",
    "Standardization",
    "coefficient_error",
    "coefficient_error_noise",
    "coefficient_errors",
    "design",
    "fit_noise",
    "fits_from_noisy_statistics",
    "functional_mechanism_sensitivity",
    "functional_mechanism_statistics",
    "mae",
    "mae_many",
    "model_from_noisy_statistics",
    "noise_weights",
    "ols",
    "solve_objective",
    "solve_objectives",
    "tstr_error",
    "tstr_sensitivity",
]


@dataclass(frozen=True, kw_only=True)
class LinearModel:
    """``y = intercept + coef @ x`` in raw units of the numerified columns."""

    features: tuple[str, ...]
    intercept: float
    coef: tuple[float, ...]

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Predictions for an ``(n, k)`` feature matrix."""
        return self.intercept + x @ np.asarray(self.coef)


@dataclass(frozen=True, kw_only=True)
class Standardization:
    """Public centres and scales: ``z = (x - center) / scale``, ``y_s = (y - yc) / ys``."""

    center: tuple[float, ...]
    scale: tuple[float, ...]
    y_center: float
    y_scale: float

    @classmethod
    def from_data(
        cls, x: np.ndarray, y: np.ndarray, x_bounds: np.ndarray, y_bounds: tuple[float, float]
    ) -> Standardization:
        """Mean and sd of public data (D_R); a constant column falls back to its bounds."""
        sd = x.std(axis=0)
        half = (x_bounds[:, 1] - x_bounds[:, 0]) / 2
        y_sd = float(y.std())
        return cls(
            center=tuple(map(float, x.mean(axis=0))),
            scale=tuple(map(float, np.where(sd > 0, sd, half))),
            y_center=float(y.mean()),
            y_scale=y_sd if y_sd > 0 else (y_bounds[1] - y_bounds[0]) / 2,
        )

    @classmethod
    def from_bounds(cls, x_bounds: np.ndarray, y_bounds: tuple[float, float]) -> Standardization:
        """Centres at the bounds' midpoints, scales at their half-widths (values in [-1, 1])."""
        return cls(
            center=tuple(map(float, x_bounds.mean(axis=1))),
            scale=tuple(map(float, (x_bounds[:, 1] - x_bounds[:, 0]) / 2)),
            y_center=float(sum(y_bounds) / 2),
            y_scale=float((y_bounds[1] - y_bounds[0]) / 2),
        )

    def box(
        self, x_bounds: np.ndarray, y_bounds: tuple[float, float]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Standardised bounds of ``u = [1, z]`` (rows: lo, hi) and of ``y_s``."""
        c, s = np.asarray(self.center), np.asarray(self.scale)
        u_lo = np.concatenate([[1.0], (x_bounds[:, 0] - c) / s])
        u_hi = np.concatenate([[1.0], (x_bounds[:, 1] - c) / s])
        y_box = (np.asarray(y_bounds, dtype=float) - self.y_center) / self.y_scale
        return np.stack([u_lo, u_hi]), y_box


def design(
    codes: np.ndarray,
    transformer: Transformer,
    target: str,
    features: tuple[str, ...] = (),
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], np.ndarray, tuple[float, float]]:
    """Design matrix, target, design-column names, their bounds ``(k, 2)``, target bounds.

    ``features`` (the criterion's spec key) defaults to every int column but the target
    (:meth:`~synthflow.config.ReleaseSpec.regression_features`). An int feature enters
    numerified (one design column, its public bounds). A categorical feature is one-hot
    encoded over the configuration's public bins with the first bin as reference: one
    0/1 column per other bin, named ``column=bin`` (a two-bin column keeps its name,
    and equals its code). Nothing here depends on the data but the values.
    """
    from synthflow.criteria._common import (
        feature_bounds,
        numbers,
    )

    spec = transformer.spec
    blocks: list[np.ndarray] = []
    names: list[str] = []
    bounds: list[tuple[float, float]] = []
    for f in spec.regression_features(target, features):
        col = spec.column(f)
        if col.kind == "categorical":
            t = transformer.transformations[f]
            code = codes[:, transformer.domain.names.index(f)]
            for level in range(1, t.size):
                blocks.append((code == level).astype(float))
                names.append(f if t.size == 2 else f"{f}={t.labels[level]}")
                bounds.append((0.0, 1.0))
        else:
            blocks.append(numbers(codes, transformer, f).astype(float))
            names.append(f)
            bounds.append(feature_bounds(col))
    x = np.column_stack(blocks) if blocks else np.zeros((len(codes), 0))
    y = numbers(codes, transformer, target)
    xb = np.array(bounds, dtype=float).reshape(-1, 2)
    return x, y, tuple(names), xb, feature_bounds(spec.column(target))


def ols(x: np.ndarray, y: np.ndarray, features: tuple[str, ...]) -> LinearModel:
    """Ordinary least squares with intercept (exact; public data or exact mode)."""
    a = np.column_stack([np.ones(len(x)), x])
    w, *_ = np.linalg.lstsq(a, y, rcond=None)
    return LinearModel(features=features, intercept=float(w[0]), coef=tuple(map(float, w[1:])))


def _upper(k: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(k)


def functional_mechanism_statistics(
    x: np.ndarray,
    y: np.ndarray,
    std: Standardization,
    x_bounds: np.ndarray,
    y_bounds: tuple[float, float],
) -> np.ndarray:
    """The released coefficients: upper triangle of ``sum u u^T``, then ``sum y_s u``.

    Rows are clipped to the public box first, so each row's contribution is bounded.
    """
    xc = np.clip(x, x_bounds[:, 0], x_bounds[:, 1])
    yc = np.clip(y, *y_bounds)
    z = (xc - np.asarray(std.center)) / np.asarray(std.scale)
    u = np.column_stack([np.ones(len(z)), z])
    ys = (yc - std.y_center) / std.y_scale
    a = u.T @ u
    iu = _upper(u.shape[1])
    return np.concatenate([a[iu], u.T @ ys])


def _product_range(lo1: float, hi1: float, lo2: float, hi2: float, same: bool) -> float:
    """Max - min of ``s * t`` over ``s in [lo1, hi1]``, ``t in [lo2, hi2]`` (``s = t`` if same)."""
    if same:
        top = max(lo1 * lo1, hi1 * hi1)
        bottom = 0.0 if lo1 <= 0 <= hi1 else min(lo1 * lo1, hi1 * hi1)
        return top - bottom
    corners = [lo1 * lo2, lo1 * hi2, hi1 * lo2, hi1 * hi2]
    return max(corners) - min(corners)


def functional_mechanism_sensitivity(u_box: np.ndarray, y_box: np.ndarray) -> np.ndarray:
    """Per-coefficient sensitivities of :func:`functional_mechanism_statistics`.

    Replacing one row changes each coefficient ``sum_i g(row_i)`` by
    ``g(new) - g(old)``, at most the range of ``g`` over the public box. For
    ``u_j u_k`` (``j < k``) that is the range of a product of two intervals (extreme
    corners); for a square ``u_j^2`` it is ``max(lo^2, hi^2)`` minus ``0`` when the
    interval holds 0, else minus ``min(lo^2, hi^2)`` (the term diffprivlib gets wrong);
    for ``y_s u_j`` the product range again; the constant ``u_0 = 1`` terms have range
    0 (``sum 1 = n``) or the width of the other interval. The L1 sensitivity of the
    whole vector is the sum of these ranges.
    """
    k = u_box.shape[1]
    iu, ju = _upper(k)
    quad = [
        _product_range(u_box[0, i], u_box[1, i], u_box[0, j], u_box[1, j], i == j)
        for i, j in zip(iu, ju, strict=True)
    ]
    lin = [_product_range(y_box[0], y_box[1], u_box[0, j], u_box[1, j], False) for j in range(k)]
    return np.array(quad + lin, dtype=float)


@dataclass(frozen=True, kw_only=True)
class FitNoise:
    """The functional mechanism's noise at one budget: Laplace (pure) or Gaussian (zCDP).

    *Weights* ``w_j > 0`` (public; all 1 unless the criterion sets ``noise_weights``,
    :func:`noise_weights`) shape the noise: coefficient ``j`` gets ``w_j`` times the base
    noise. This is the plain mechanism applied to the rescaled vector ``s_j / w_j``,
    whose coordinate ``j`` moves by at most ``r_j / w_j`` between neighbours, so its
    sensitivity is taken over ``r_j / w_j`` (docs/privacy.md, "The weighted fit").

    *Laplace*: scale ``L1 / epsilon`` on every rescaled coefficient, epsilon-DP.
    *Gaussian*: the rescaled coefficients are snapped to a grid of ``granularity`` g (a
    power of 2, about 1e-3 of the L2 sensitivity per coordinate), which can move each
    coordinate of a neighbour's difference by at most g more: L2 sensitivity
    ``sqrt(sum (r_j / w_j)^2) + g sqrt(m)`` for the ``m`` coefficients of ranges ``r_j``.
    Discrete Gaussian noise (OpenDP's exact sampler in release mode) of parameter
    ``sigma / g`` on the integer grid makes it ``rho``-zCDP with ``sigma = L2 / sqrt(2
    rho)``; ``rho`` is the largest whose (epsilon, delta) conversion is at most epsilon
    (:func:`synthflow.privacy.zcdp.zcdp_rho`). The snapping keeps floating-point rounding out of
    the noise (no low-bit leak).
    """

    kind: str
    epsilon: float
    delta: float
    sensitivity: float
    """L1 (Laplace) or the snapped L2 (Gaussian) sensitivity of the rescaled coefficients."""
    rho: float = 0.0
    granularity: float = 0.0
    weights: tuple[float, ...] = ()
    """Per-coefficient noise multipliers ``w_j`` (empty: all 1)."""
    shifts: tuple[int, ...] = ()
    """Gaussian: the most a neighbour moves each snapped coefficient, in grid units
    (``floor(r_j / (w_j g) + 1e-6) + 1``: the range, the snapping's one unit, and room
    for floating-point error in the statistics); empty for Laplace."""

    def mechanisms(self, label: str) -> tuple[Mechanism, ...]:
        """This fit for exact accounting (:mod:`synthflow.privacy.pld`).

        Gaussian: one discrete Gaussian of parameter ``sd / g`` (grid units) whose
        coordinates move by at most :attr:`shifts`. Laplace: one epsilon-DP mechanism.
        """
        from synthflow.privacy.pld import Mechanism

        if self.kind == "gaussian":
            return (Mechanism.discrete_gaussian(label, self.sd / self.granularity, self.shifts),)
        return (Mechanism.pure(label, self.epsilon),)

    @property
    def sd(self) -> float:
        """Standard deviation of the base noise (a coefficient of weight 1)."""
        if self.kind == "gaussian":
            return self.sensitivity / math.sqrt(2.0 * self.rho)
        return math.sqrt(2.0) * self.sensitivity / self.epsilon

    def _w(self, m: int) -> np.ndarray:
        return np.asarray(self.weights, dtype=float) if self.weights else np.ones(m)

    def simulate(self, gen: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        """Noise of this law for a *public* simulation (seeded numpy, not a release)."""
        w = self._w(shape[-1])
        if self.kind == "gaussian":
            return gen.normal(0.0, self.sd, size=shape) * w
        return gen.laplace(0.0, self.sensitivity / self.epsilon, size=shape) * w

    def release(self, stats: np.ndarray, rng: PrivacyRNG) -> np.ndarray:
        """The noisy coefficients (the caller has charged the ledger)."""
        stats = np.asarray(stats, dtype=float)
        w = self._w(stats.shape[-1])
        if self.kind == "gaussian":
            g = self.granularity
            grid = np.round(stats / w / g).astype(np.int64)
            return rng.discrete_gaussian(grid, sigma=self.sd / g).astype(float) * g * w
        scaled = rng.laplace(stats / w, sensitivity=self.sensitivity, epsilon=self.epsilon)
        return np.asarray(scaled, dtype=float) * w


def fit_noise(
    u_box: np.ndarray,
    y_box: np.ndarray,
    epsilon: float,
    *,
    kind: str = "laplace",
    delta: float = 0,
    weights: np.ndarray | None = None,
) -> FitNoise:
    """The functional mechanism's :class:`FitNoise` for the public boxes (public).

    ``weights``: public per-coefficient noise multipliers (:func:`noise_weights`), all
    1 when None.
    """
    ranges = functional_mechanism_sensitivity(u_box, y_box)
    w = np.ones(len(ranges)) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != ranges.shape or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"weights must be {len(ranges)} finite numbers > 0")
    kept = tuple(map(float, w)) if weights is not None else ()
    scaled = ranges / w
    if kind == "laplace":
        return FitNoise(
            kind=kind, epsilon=epsilon, delta=0.0, sensitivity=float(scaled.sum()), weights=kept
        )
    if kind != "gaussian":
        raise ValueError(f"noise ({kind!r}) must be 'laplace' or 'gaussian'")
    from synthflow.privacy.zcdp import zcdp_rho

    m = len(ranges)
    l2 = float(np.sqrt((scaled**2).sum()))
    g = 2.0 ** math.floor(math.log2(1e-3 * l2 / math.sqrt(m)))
    return FitNoise(
        kind=kind,
        epsilon=epsilon,
        delta=delta,
        sensitivity=l2 + g * math.sqrt(m),
        rho=zcdp_rho(epsilon, delta=delta),
        granularity=g,
        weights=kept,
        shifts=tuple(int(k) for k in np.floor(scaled / g + 1e-6) + 1),
    )


WEIGHT_FLOOR = 1e-3
"""A coefficient's influence is floored at this share of the largest (:func:`noise_weights`):
no coefficient gets more than about 6 times the base noise, so weights made on public
data stay sound where the private data's slopes differ."""


def noise_weights(
    public_stats: np.ndarray,
    std: Standardization,
    judge: Standardization,
    ranges: np.ndarray,
    kind: str,
) -> np.ndarray:
    """Noise multipliers that minimise the fit's coefficient error at a fixed budget.

    Public inputs only: ``public_stats`` are :func:`functional_mechanism_statistics` of
    a *public* sample in the fit's standardisation ``std``; ``judge`` is the
    standardisation the error is read in (the public sample's moments); ``ranges`` the
    coefficients' ranges. Linearised at the public sample's fit ``w = A^-1 b``, noise
    ``e_j`` on coefficient ``j`` moves the error's coordinates by ``T J_j e_j``
    (``J_j`` = ``A^-1 e_j`` for ``b``, ``-A^-1 dA_j w`` for ``A``), so the error's
    variance is ``sum a_j sd_j^2`` with ``a_j = |T J_j|^2``. At a fixed budget
    (Gaussian: ``sum r_j^2 / sd_j^2``; Laplace: ``sum r_j / b_j``) the minimum is at
    ``sd_j^2 ~ r_j / sqrt(a_j)`` (Gaussian) or ``b_j ~ (r_j / a_j)^(1/3)`` (Laplace).
    The result is scaled so the rescaled sensitivity equals the unweighted one.
    """
    k = (math.isqrt(9 + 8 * len(public_stats)) - 3) // 2
    iu = _upper(k)
    m = len(iu[0])
    a = np.zeros((k, k))
    a[iu] = public_stats[:m]
    a = a + a.T - np.diag(np.diag(a))
    a_inv = np.linalg.pinv(a)
    w = a_inv @ public_stats[m:]
    c, s = np.asarray(std.center), np.asarray(std.scale)
    to_error = np.zeros((k, k))  # standardised weight change -> the error's coordinates
    to_error[0, 0] = std.y_scale
    to_error[0, 1:] = std.y_scale * (np.asarray(judge.center) - c) / s
    to_error[1:, 1:] = np.diag(std.y_scale * np.asarray(judge.scale) / s)
    jac = np.zeros((k, m + k))
    for idx, (p, q) in enumerate(zip(*iu, strict=True)):
        jac[:, idx] = -(a_inv[:, p] * w[q] + (a_inv[:, q] * w[p] if p != q else 0.0))
    jac[:, m:] = a_inv
    influence = ((to_error @ jac) ** 2).sum(axis=0)
    influence = np.maximum(influence, WEIGHT_FLOOR * influence.max())
    if kind == "gaussian":
        out = np.where(ranges > 0, np.sqrt(ranges / np.sqrt(influence)), 1.0)
        out *= math.sqrt(((ranges / out) ** 2).sum() / (ranges**2).sum())
    else:
        out = np.where(ranges > 0, np.cbrt(ranges / influence), 1.0)
        out *= (ranges / out).sum() / ranges.sum()
    return out


def solve_objective(stats: np.ndarray, k: int) -> np.ndarray:
    """Minimise ``w^T A w - 2 b^T w`` for (noisy) coefficients; returns ``w`` (length k).

    ``A`` is symmetrised and its eigenvalues floored at a small positive value (spectral
    trimming, post-processing) so the noisy objective has a unique minimum.
    """
    iu = _upper(k)
    m = len(iu[0])
    a = np.zeros((k, k))
    a[iu] = stats[:m]
    a = a + a.T - np.diag(np.diag(a))
    b = stats[m:]
    vals, vecs = np.linalg.eigh(a)
    floor = max(1e-9 * abs(a[0, 0]), 1e-9)
    vals = np.maximum(vals, floor)
    return np.asarray(vecs @ ((vecs.T @ b) / vals))


def solve_objectives(stats: np.ndarray, k: int) -> np.ndarray:
    """:func:`solve_objective` of each row of ``stats`` (J, m + k): weights (J, k).

    The same arithmetic, stacked: one batched eigendecomposition instead of J calls.
    """
    stats = np.atleast_2d(np.asarray(stats, dtype=float))
    iu = _upper(k)
    m = len(iu[0])
    a = np.zeros((len(stats), k, k))
    a[:, iu[0], iu[1]] = stats[:, :m]
    diag = np.einsum("jii->ji", a).copy()
    a = a + a.transpose(0, 2, 1)
    a[:, np.arange(k), np.arange(k)] -= diag
    b = stats[:, m:]
    vals, vecs = np.linalg.eigh(a)
    floor = np.maximum(1e-9 * np.abs(a[:, 0, 0]), 1e-9)
    vals = np.maximum(vals, floor[:, None])
    proj = (vecs.transpose(0, 2, 1) @ b[:, :, None])[:, :, 0] / vals
    return (vecs @ proj[:, :, None])[:, :, 0]


def fits_from_noisy_statistics(
    noisy: np.ndarray, std: Standardization, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Raw-unit intercepts (J,) and coefficients (J, k - 1) of J noisy objectives.

    :func:`model_from_noisy_statistics` for each row of ``noisy``, stacked (simulations
    of many releases: ``synthflow plan``, the noise checks).
    """
    w = solve_objectives(noisy, k)
    c, s = np.asarray(std.center), np.asarray(std.scale)
    slopes = std.y_scale * w[:, 1:] / s
    intercepts = std.y_center + std.y_scale * (w[:, 0] - np.sum(w[:, 1:] * c / s, axis=1))
    return intercepts, slopes


def model_from_noisy_statistics(
    noisy: np.ndarray, std: Standardization, features: tuple[str, ...]
) -> LinearModel:
    """The released model: minimise the noisy objective, back to raw units (post-processing)."""
    return model_from_standardized(solve_objective(noisy, len(features) + 1), std, features)


def model_from_standardized(
    w: np.ndarray, std: Standardization, features: tuple[str, ...]
) -> LinearModel:
    """Convert weights on ``[1, z]`` predicting ``y_s`` into a raw-unit model."""
    c, s = np.asarray(std.center), np.asarray(std.scale)
    slopes = std.y_scale * w[1:] / s
    intercept = std.y_center + std.y_scale * (w[0] - float(np.sum(w[1:] * c / s)))
    return LinearModel(
        features=features, intercept=float(intercept), coef=tuple(map(float, slopes))
    )


@dataclass(frozen=True, kw_only=True)
class DPRegressionFit:
    """A functional-mechanism fit of D_T, released once (per candidate or per release)."""

    model: LinearModel
    epsilon: float
    sensitivity: float
    """L1 (Laplace) or L2 (Gaussian) sensitivity of the released objective coefficients."""
    noise_sd: float
    """Standard deviation of the noise on each coefficient."""
    standardization: Standardization
    n: int
    delta: float = 0.0
    """0 for Laplace; the Gaussian fit's delta."""


def coefficient_error(a: LinearModel, b: LinearModel, std: Standardization) -> float:
    """Sum of |differences| of the coefficients in standardisation ``std``, intercept included.

    A raw-unit model has coefficient ``coef_j * scale_j`` on ``z_j`` and intercept
    ``intercept + sum coef_j * center_j``; the target stays in its own units.
    """
    return float(coefficient_errors(np.array([a.intercept]), np.array([a.coef]), b, std)[0])


def coefficient_errors(
    intercepts: np.ndarray, coefs: np.ndarray, b: LinearModel, std: Standardization
) -> np.ndarray:
    """:func:`coefficient_error` of ``J`` models (``intercepts`` (J,), ``coefs`` (J, k))."""
    dc = np.asarray(coefs, dtype=float) - np.asarray(b.coef)
    di = np.asarray(intercepts, dtype=float) - b.intercept + dc @ np.asarray(std.center)
    return np.abs(di) + np.abs(dc * np.asarray(std.scale)).sum(axis=1)


def mae(model: LinearModel, x: np.ndarray, y: np.ndarray, y_bounds: tuple[float, float]) -> float:
    """Mean absolute error with predictions (and targets) clipped to the target's bounds."""
    return float(mae_many(np.array([model.intercept]), np.array([model.coef]), x, y, y_bounds)[0])


def mae_many(
    intercepts: np.ndarray,
    coefs: np.ndarray,
    x: np.ndarray,
    y: np.ndarray,
    y_bounds: tuple[float, float],
    *,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """:func:`mae` of ``J`` models at once (``intercepts`` (J,), ``coefs`` (J, k)).

    ``weights`` counts repeated rows (``x``, ``y`` may be the distinct rows of a table),
    which gives the same value as the full table.
    """
    w = np.ones(len(x)) if weights is None else np.asarray(weights, dtype=float)
    yc = np.clip(y, *y_bounds)[:, None]
    out = np.empty(len(intercepts))
    step = max(1, 2_000_000 // max(len(x), 1))  # bound the (rows x models) block
    for lo in range(0, len(intercepts), step):
        pred = np.clip(intercepts[lo : lo + step] + x @ coefs[lo : lo + step].T, *y_bounds)
        out[lo : lo + step] = w @ np.abs(yc - pred) / w.sum()
    return out


def tstr_error(
    model_original: LinearModel,
    model_candidate: LinearModel,
    x: np.ndarray,
    y: np.ndarray,
    y_bounds: tuple[float, float],
) -> float:
    """|MAE on D_T of the D_T model - MAE on D_T of the D_R model|."""
    return abs(mae(model_original, x, y, y_bounds) - mae(model_candidate, x, y, y_bounds))


def tstr_sensitivity(y_bounds: tuple[float, float], n: int) -> float:
    """Sensitivity ``2 (U - L) / n`` of the TSTR error (SPEC sec. 5, corrected).

    Both models are fixed (the DP model is already released, the D_R model is public).
    Each MAE averages ``n`` terms in ``[0, U - L]`` (clipped predictions and targets),
    so replacing one row moves each MAE by at most ``(U - L) / n`` and their absolute
    difference by at most ``2 (U - L) / n``. (The release used half of this.)
    """
    if n < 1:
        raise ValueError(f"n ({n}) must be >= 1")
    return 2.0 * (y_bounds[1] - y_bounds[0]) / n


def dp_fit(
    x: np.ndarray,
    y: np.ndarray,
    *,
    features: tuple[str, ...],
    std: Standardization,
    x_bounds: np.ndarray,
    y_bounds: tuple[float, float],
    noise: FitNoise,
    rng: PrivacyRNG,
) -> DPRegressionFit:
    """Functional-mechanism fit with ``noise`` (:func:`fit_noise`; ledger charged by caller)."""
    stats = functional_mechanism_statistics(x, y, std, x_bounds, y_bounds)
    noisy = noise.release(stats, rng)
    return DPRegressionFit(
        model=model_from_noisy_statistics(np.asarray(noisy), std, features),
        epsilon=noise.epsilon,
        sensitivity=noise.sensitivity,
        noise_sd=noise.sd,
        standardization=std,
        n=len(x),
        delta=noise.delta,
    )


def coefficient_error_noise(
    x: np.ndarray,
    y: np.ndarray,
    *,
    features: tuple[str, ...],
    x_bounds: np.ndarray,
    y_bounds: tuple[float, float],
    epsilon: float,
    draws: int = 200,
    seed: int = 0,
    kind: str = "laplace",
    delta: float = 0.0,
) -> tuple[float, float]:
    """Median and robust sd of the released coefficient error of a *perfect* candidate.

    Public data only (a released file): ``(x, y)`` stands in for both D_T and D_R, the
    functional mechanism's noise at ``epsilon`` is re-drawn ``draws`` times (a seeded
    generator: this is a simulation on public data, not a release), and each noisy fit
    is compared with the OLS fit of the same data. The spread (interquartile range /
    1.349, the sd of a normal with that IQR: the noisy objective is sometimes nearly
    singular and gives a few huge errors, which a plain sd would report instead of the
    typical noise) is what the released value's noise looks like on the value's own
    scale; the median is the value a candidate equal to the original would typically
    get (the noise floor).
    """
    std = Standardization.from_data(x, y, x_bounds, y_bounds)
    law = fit_noise(*std.box(x_bounds, y_bounds), epsilon, kind=kind, delta=delta)
    stats = functional_mechanism_statistics(x, y, std, x_bounds, y_bounds)
    exact = ols(x, y, features)
    noise = law.simulate(np.random.default_rng(seed), (draws, len(stats)))
    intercepts, coefs = fits_from_noisy_statistics(stats + noise, std, len(features) + 1)
    errors = coefficient_errors(intercepts, coefs, exact, std)
    q1, median, q3 = np.percentile(errors, [25, 50, 75])
    return float(median), float((q3 - q1) / 1.349)

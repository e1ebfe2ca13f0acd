"""Warnings that save budget: criteria whose release noise alone decides pass or fail.

Before a release spends anything, the spec and the public n say how much noise each
DP criterion's release will carry. When even the *smallest* noise the mechanism can
have (best-case public parameters: every bin and group as full as n allows) is as
large as the room between a perfect candidate's value and the threshold, the decision
is close to a coin flip for every candidate, and selection burns attempts. This
module computes that floor from public facts only (spec, configuration bins, n): it
reads no data and charges nothing.

* Laplace criteria: noise sd ``sqrt(2) * sensitivity / epsilon`` from
  :func:`~synthflow.acceptance.evaluate.laplace_terms` (the evaluation's own function),
  with the 1-way ratio's smallest count and a conditional mean's smallest group at
  their best case ``n / bins`` (capped by the spec's ``assumed_min_count``); the room
  is ``threshold - 0`` (``pseudo-threshold - 1`` for the ratio, whose perfect value
  is 1).
* The regression coefficients (functional mechanism): the median coefficient error of
  the DP fit of a candidate that matches D_T exactly, from 200 simulated releases. On
  the spec's ``public_sample`` when it names one, resampled to n rows (its features
  correlated as in real data; the datasheet's simulation,
  :func:`~synthflow.acceptance.regression.coefficient_error_noise`); else on a
  reference design with independent features spread over their public bounds
  (standardised with the bounds, as the once-per-release fit is), which understates it
  (births, 167K rows: 23.6 on the public sample, 10.0 on independent features).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from synthflow.acceptance import regression
from synthflow.config.model import CriterionSpec, ReleaseSpec
from synthflow.space import Configuration
from synthflow.transform import Transformer

__all__ = ["NoiseWarning", "describe", "noise_warnings", "space_noise_warning"]

_DRAWS = 200


@dataclass(frozen=True, kw_only=True)
class NoiseWarning:
    """A criterion whose release noise is at least the room a perfect candidate has."""

    criterion: str
    noise: float
    """Noise sd (Laplace) or the median noise-only error (regression coefficients)."""
    room: float
    """Threshold minus a perfect candidate's value."""

    def message(self) -> str:
        """One line naming the criterion and the figures (public: spec and n only)."""
        return (
            f"{self.criterion}: release noise {self.noise:.3g} against room "
            f"{self.room:.3g} below the threshold; raise its epsilon or its threshold"
        )


def public_sample(spec: ReleaseSpec) -> pd.DataFrame | None:
    """The spec's ``public_sample``, cleaned (None when the spec names none).

    Raises:
        ConfigError: If the named file is neither beside the spec nor bundled.
    """
    from synthflow.data import load_data  # noqa: PLC0415
    from synthflow.resources import public_data_file  # noqa: PLC0415

    if not spec.public_sample:
        return None
    beside = Path(spec.path).parent / spec.public_sample
    path = beside if beside.is_file() else public_data_file(spec.public_sample)
    return load_data(path, spec, public=True).frame


def regression_noise(
    c: CriterionSpec, transformer: Transformer, n: int, public: np.ndarray | None = None
) -> float:
    """Median coefficient error of the DP fit alone (see the module docstring).

    ``public``: the public sample's codes (resampled to ``n`` rows, seeded: a simulation
    on public data); None: the reference design.
    """
    if public is not None and len(public):
        rows = np.random.default_rng(0).integers(0, len(public), n)
        x, y, feats, xb, yb = regression.design(public[rows], transformer, c.column, c.features)
        median, _ = regression.coefficient_error_noise(
            x, y, features=feats, x_bounds=xb, y_bounds=yb, epsilon=c.epsilon
        )
        return median
    target = str(c.column)
    empty = np.zeros((0, len(transformer.domain.names)), dtype=np.int64)
    _, _, feats, xb, yb = regression.design(empty, transformer, target, c.features)
    std = regression.Standardization.from_bounds(xb, yb)
    u_box, y_box = std.box(xb, yb)
    sens = float(regression.functional_mechanism_sensitivity(u_box, y_box).sum())
    k = len(feats) + 1
    lo, hi = u_box
    mean = (lo + hi) / 2
    second = np.outer(mean, mean)
    np.fill_diagonal(second, (lo**2 + lo * hi + hi**2) / 3)
    second[0, 0] = 1.0
    iu = np.triu_indices(k)
    exact = np.concatenate([n * second[iu], np.zeros(k)])
    truth = regression.model_from_noisy_statistics(exact, std, feats)
    # Judge in a standardisation whose scales are the sd of a uniform over the bounds
    # (the criterion uses D_R's sd; bounds' half-widths would exaggerate).
    judge = regression.Standardization(
        center=std.center,
        scale=tuple(s / math.sqrt(3) for s in std.scale),
        y_center=std.y_center,
        y_scale=std.y_scale / math.sqrt(3),
    )
    # A public simulation (no data involved): numpy's Laplace, not the release sampler
    # (whose diffprivlib import costs a second in every process that checks a spec).
    gen = np.random.default_rng(0)
    noisy = exact + gen.laplace(scale=sens / c.epsilon, size=(_DRAWS, len(exact)))
    intercepts, coefs = regression.fits_from_noisy_statistics(noisy, std, k)
    return float(np.median(regression.coefficient_errors(intercepts, coefs, truth, judge)))


def noise_warnings(
    spec: ReleaseSpec, transformer: Transformer, n: int, public: pd.DataFrame | None = None
) -> list[NoiseWarning]:
    """The DP criteria of ``spec`` that no candidate can pass reliably at ``n`` rows.

    ``public``: the spec's public sample (:func:`public_sample`), if it names one.
    """
    codes = None if public is None else transformer.forward(public).to_numpy(np.int64)
    out: list[NoiseWarning] = []
    for c in spec.criteria:
        noise, room = c.impl.noise_and_room(c, spec, transformer, n, codes)
        if noise >= room:
            out.append(NoiseWarning(criterion=c.name, noise=noise, room=room))
    return out


def describe(warnings: list[NoiseWarning], n: int) -> str:
    """A paragraph for the terminal (public figures only)."""
    lines = "\n  ".join(w.message() for w in warnings)
    return (
        f"at n = {n} rows, the DP release of {len(warnings)} criterion(s) is dominated by "
        f"its noise even for a perfect candidate (pass or fail is close to a coin flip, and "
        f"private selection would spend attempts for nothing):\n  {lines}"
    )


def space_noise_warning(spec: ReleaseSpec, configurations: Iterable[Configuration], n: int) -> str:
    """:func:`describe` for the first binning among ``configurations`` that has warnings.

    ``''`` when none has. Each distinct transformation set is checked once.
    """
    seen: set[tuple[tuple[str, str], ...]] = set()
    sample = public_sample(spec)
    for cfg in configurations:
        key = tuple(sorted(cfg.transformations.items()))
        if key in seen:
            continue
        seen.add(key)
        warnings = noise_warnings(spec, Transformer(spec, cfg.transformations), n, sample)
        if warnings:
            return describe(warnings, n)
    return ""

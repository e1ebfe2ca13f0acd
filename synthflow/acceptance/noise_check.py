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
  the DP fit of a candidate that matches D_T exactly, from 200 simulated releases on a
  reference design with independent features spread over their public bounds
  (standardised with the bounds, as the once-per-release fit is). An estimate of the
  order of magnitude, not a bound; ``synthflow plan`` simulates the real designs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

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


def regression_noise(c: CriterionSpec, transformer: Transformer, n: int) -> float:
    """Median coefficient error of the DP fit alone (reference design, see module doc)."""
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


def noise_warnings(spec: ReleaseSpec, transformer: Transformer, n: int) -> list[NoiseWarning]:
    """The DP criteria of ``spec`` that no candidate can pass reliably at ``n`` rows."""
    out: list[NoiseWarning] = []
    for c in spec.criteria:
        noise, room = c.impl.noise_and_room(c, spec, transformer, n)
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
    for cfg in configurations:
        key = tuple(sorted(cfg.transformations.items()))
        if key in seen:
            continue
        seen.add(key)
        warnings = noise_warnings(spec, Transformer(spec, cfg.transformations), n)
        if warnings:
            return describe(warnings, n)
    return ""

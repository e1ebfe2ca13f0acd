"""One noise rule: how often a *perfect* candidate passes a criterion's DP release.

Every place that judges whether a criterion's release noise decides pass or fail calls
:func:`noise_figures` (``validate --rows``, the release pre-flight, the sweep's warning,
the DP evaluation report, the datasheet and ``plan``), so they print the same figures.
For each DP criterion it gives, at ``n`` rows, from public facts only (spec, the
configuration's bins, n, the spec's ``public_sample``): the noise, the room between a
perfect candidate's value (D_R = D_T) and the (pseudo-)threshold, and the probability
that a perfect candidate passes the release, ``perfect_pass``. A criterion is
**noise-dominated** when ``perfect_pass < PERFECT_PASS_MIN`` (2/3): the noise alone fails
the best candidate possible in more than one release in three (for Laplace noise, also
when a candidate at twice the threshold passes more than one in three: noise sd above
3.5 times the room). Births at 167K rows: the regression's figure is 0.75-0.82 across
the space's binnings; ``plan`` is stricter (under 1% perfect failures for the fit, 5%
false passes at twice a threshold). It reads no private data and charges nothing.

* Laplace criteria: noise sd ``sqrt(2) b`` with ``b = sensitivity / epsilon`` from the
  kind's own ``sensitivity_and_threshold`` (the evaluation's function) at its best-case
  public parameters (the 1-way ratio's smallest count and a conditional mean's smallest
  group at ``n / bins``, capped by ``assumed_min_count``); ``perfect_pass =
  P(perfect value + Lap(b) < threshold)``, exactly.
* The regression criteria: the planner's simulation
  (:class:`synthflow.plan.simulate.RegressionSim`): the functional-mechanism fit re-drawn
  ``DRAWS`` times on the spec's ``public_sample`` resampled to n rows (its features
  correlated as in real data), in the release's standardisation (public bounds for a
  once-per-release fit, the data's otherwise); ``perfect_pass`` is the share of draws whose
  error (coefficients) or ``|MAE gap| + Lap`` (TSTR) is below the threshold; the noise
  shown is the median error. Without a public sample, the coefficients use a reference
  design with independent features spread over their public bounds (it understates the
  noise: births at 167K rows, 10.0 against 23.6 on the public sample) and TSTR its
  Laplace term alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthflow.acceptance import regression
from synthflow.config.model import CriterionSpec, ReleaseSpec
from synthflow.space import Configuration
from synthflow.transform import Transformer

__all__ = [
    "PERFECT_PASS_MIN",
    "NoiseFigure",
    "binning_figures",
    "describe",
    "laplace_perfect_pass",
    "noise_figures",
    "noise_warnings",
    "space_noise_warning",
]

DRAWS = 400
"""Simulated DP fits per regression figure (seeded: a simulation on public data)."""

PERFECT_PASS_MIN = 2 / 3
"""Below this probability that a perfect candidate passes, a criterion is noise-dominated."""


@dataclass(frozen=True, kw_only=True)
class NoiseFigure:
    """How a criterion's release noise compares with a perfect candidate's room."""

    criterion: str
    noise: float
    """Noise sd (Laplace) or a perfect candidate's median error (regression, simulated)."""
    room: float
    """Threshold minus a perfect candidate's value."""
    perfect_pass: float
    """P(a perfect candidate passes the release)."""
    simulated: bool = False

    @property
    def dominated(self) -> bool:
        """Whether the noise decides more than the candidate (see the module docstring)."""
        return self.perfect_pass < PERFECT_PASS_MIN

    def message(self) -> str:
        """One line naming the criterion and the figures (public: spec and n only)."""
        what = "median error" if self.simulated else "noise sd"
        return (
            f"{self.criterion}: a perfect candidate passes {self.perfect_pass:.0%} of releases "
            f"(release {what} {self.noise:.3g} against room {self.room:.3g} below the "
            "threshold); raise its epsilon or its threshold"
        )

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> NoiseFigure:
        """Inverse of :meth:`as_dict` (acceptance.json's ``noise_figures``)."""
        return cls(
            criterion=str(d["criterion"]),
            noise=float(d["noise"]),
            room=float(d["room"]),
            perfect_pass=float(d["perfect_pass"]),
            simulated=str(d["noise_is"]).startswith("median"),
        )

    def as_dict(self) -> dict[str, Any]:
        """The figures for JSON (plan.json, acceptance.json)."""
        return {
            "criterion": self.criterion,
            "noise": self.noise,
            "noise_is": "median error (simulated)" if self.simulated else "noise sd",
            "room": self.room,
            "perfect_pass": self.perfect_pass,
            "noise_dominated": self.dominated,
        }


def laplace_perfect_pass(room: float, scale: float) -> float:
    """``P(Lap(scale) < room)``: a perfect candidate's pass probability under Laplace noise."""
    if scale <= 0:
        return 1.0 if room > 0 else 0.0
    if room >= 0:
        return 1.0 - 0.5 * math.exp(-room / scale)
    return 0.5 * math.exp(room / scale)


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


def _resampled(public: np.ndarray, n: int) -> np.ndarray:
    """The public sample's codes resampled to ``n`` rows (seeded: public data)."""
    return public[np.random.default_rng(0).integers(0, len(public), n)]


def regression_draws(
    spec: ReleaseSpec,
    transformer: Transformer,
    n: int,
    public: np.ndarray,
    *,
    fit_once: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """A perfect candidate's coefficient and |MAE gap| errors over ``DRAWS`` DP fits.

    The planner's simulation (:class:`~synthflow.plan.simulate.RegressionSim`) of the
    spec's regression fit, on ``public`` resampled to ``n`` rows.
    """
    from synthflow.plan.simulate import RegressionSim  # noqa: PLC0415

    coef = next(c for c in spec.criteria if c.impl.mechanism == "functional")
    sim = RegressionSim(_resampled(public, n), transformer, coef)
    std = sim.bounds_standardization() if fit_once else sim.std_data
    fits = sim.draws(std, coef.epsilon, DRAWS, seed=0)
    return sim.perfect_errors(fits)


def reference_errors(c: CriterionSpec, transformer: Transformer, n: int) -> np.ndarray:
    """A perfect candidate's coefficient errors on the reference design (no public sample)."""
    empty = np.zeros((0, len(transformer.domain.names)), dtype=np.int64)
    _, _, feats, xb, yb = regression.design(empty, transformer, str(c.column), c.features)
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
    # A public simulation: numpy's Laplace (the release sampler's import costs a second).
    gen = np.random.default_rng(0)
    noisy = exact + gen.laplace(scale=sens / c.epsilon, size=(DRAWS, len(exact)))
    intercepts, coefs = regression.fits_from_noisy_statistics(noisy, std, k)
    return regression.coefficient_errors(intercepts, coefs, truth, judge)


def simulated_figure(c: CriterionSpec, errors: np.ndarray) -> NoiseFigure:
    """The figure of a criterion whose perfect-candidate errors were simulated."""
    errors = np.where(np.isfinite(errors), errors, np.inf)
    return NoiseFigure(
        criterion=c.name,
        noise=float(np.median(errors)),
        room=float(c.threshold),
        perfect_pass=float(np.mean(errors < c.threshold)),
        simulated=True,
    )


def noise_figures(
    spec: ReleaseSpec,
    transformer: Transformer,
    n: int,
    public: pd.DataFrame | None = None,
    *,
    fit_once: bool = False,
) -> list[NoiseFigure]:
    """Every DP criterion's figure at ``n`` rows (the one rule; module docstring).

    ``public``: the spec's public sample (:func:`public_sample`), if it names one;
    ``fit_once``: the regression fit is drawn once per release (public-bounds
    standardisation).
    """
    codes = None if public is None else transformer.forward(public).to_numpy(np.int64)
    return [
        c.impl.noise_figure(c, spec, transformer, n, codes, fit_once=fit_once)
        for c in spec.criteria
    ]


def noise_warnings(
    spec: ReleaseSpec,
    transformer: Transformer,
    n: int,
    public: pd.DataFrame | None = None,
    *,
    fit_once: bool = False,
) -> list[NoiseFigure]:
    """The noise-dominated criteria of ``spec`` at ``n`` rows (:func:`noise_figures`)."""
    figures = noise_figures(spec, transformer, n, public, fit_once=fit_once)
    return [f for f in figures if f.dominated]


def describe(warnings: list[NoiseFigure], n: int) -> str:
    """A paragraph for the terminal (public figures only)."""
    lines = "\n  ".join(w.message() for w in warnings)
    return (
        f"at n = {n} rows, the DP release of {len(warnings)} criterion(s) is dominated by "
        f"its noise: even a perfect candidate (identical to the original) would pass it in "
        f"fewer than two releases in three, so pass or fail says more about the "
        f"noise draw than about the candidate and private selection would spend attempts "
        f"for little:\n  {lines}"
    )


def space_noise_warning(
    spec: ReleaseSpec,
    configurations: Iterable[Configuration],
    n: int,
    *,
    fit_once: bool = False,
) -> str:
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
        tr = Transformer(spec, cfg.transformations)
        warnings = noise_warnings(spec, tr, n, sample, fit_once=fit_once)
        if warnings:
            return describe(warnings, n)
    return ""


def binning_figures(
    spec: ReleaseSpec, binnings: Iterable[dict[str, str]], n: int, *, fit_once: bool = False
) -> dict[str, Any]:
    """:func:`noise_figures` per distinct binning for JSON, and the first problem found.

    ``{"figures": [{"transformations", "n", "figures"}, ...], "problem": describe(...)}``.
    """
    sample = public_sample(spec)
    out: list[dict[str, Any]] = []
    problem = ""
    for key in sorted({tuple(sorted(b.items())) for b in binnings}):
        figs = noise_figures(spec, Transformer(spec, dict(key)), n, sample, fit_once=fit_once)
        out.append({"transformations": dict(key), "n": n, "figures": [f.as_dict() for f in figs]})
        bad = [f for f in figs if f.dominated]
        if bad and not problem:
            problem = describe(bad, n)
    return {"figures": out, "problem": problem}

"""One noise rule: how often a *perfect* candidate passes a criterion's DP release.

Every place that judges whether a criterion's release noise decides pass or fail calls
:func:`noise_figures` (``validate --rows``, the release pre-flight, the sweep's warning,
the DP evaluation report, the datasheet and ``plan``), so they print the same figures.
Per DP criterion at ``n`` rows, from public facts only (spec, bins, n, the spec's
``public_sample``): the noise, the room between a perfect candidate's value (D_R = D_T)
and the (pseudo-)threshold, and ``perfect_pass``, how often it passes. A criterion is
**noise-dominated** when ``perfect_pass < PERFECT_PASS_MIN`` (2/3): the noise alone fails
the best candidate possible in more than one release in three (for Laplace noise, also
when a candidate at twice the threshold passes more than one in three: noise sd above
3.5 times the room). Births at 167K rows: the regression's figure is 0.75-0.82 across
the space's binnings; ``plan`` is stricter (under 1% perfect failures for the fit, 5%
false passes at twice a threshold). It reads no private data and charges nothing.

* Laplace criteria: noise sd ``sqrt(2) b`` with ``b = sensitivity / epsilon`` from the
  kind's own ``sensitivity_and_threshold`` (the evaluation's function) at its best-case
  public parameters a perfect candidate would hold: the 1-way ratio's smallest count at
  ``n / bins`` capped by ``assumed_min_count``; a conditional mean's smallest group
  read off the public sample (its group shares scaled to n, less the resize margin:
  a rare group is seen here, not first at the release), or ``n / groups`` without one;
  ``perfect_pass = P(perfect value + Lap(b) < threshold)``, exactly. The evaluation
  applies the same rule at each candidate's own parameters and fails a release its
  noise decides (:func:`synthflow.criteria.context.release_dominated`).
* The regression criteria: the planner's simulation
  (:class:`synthflow.criteria.regression.sim.RegressionSim`): the fit re-drawn
  :data:`~synthflow.criteria.regression.figures.DRAWS` times on the ``public_sample``
  resampled to n rows, in the release's standardisation (public bounds when fit once);
  ``perfect_pass`` is the share of draws whose error (coefficients) or
  ``|MAE gap| + Lap`` (TSTR) is below the threshold; the noise shown is the median error.
  Without a public sample: a reference design with independent features over their public
  bounds (it understates: births, 167K rows, 10.0 against
  23.6) for the coefficients, and TSTR's Laplace term alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from synthflow.config.model import ReleaseSpec
from synthflow.criteria.noise import PERFECT_PASS_MIN, NoiseFigure, laplace_perfect_pass
from synthflow.public_sample import public_sample, public_sample_path
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
    "public_sample",
    "public_sample_path",
    "space_noise_warning",
]


def public_sample_source(spec: ReleaseSpec) -> dict[str, Any] | None:
    """The public sample the noise figures came from: its file name and SHA-256.

    With ``published: true`` when the spec declares it published before the release.
    """
    from synthflow.privacy.ledger import file_sha256  # noqa: PLC0415

    path = public_sample_path(spec)
    if path is None:
        return None
    source: dict[str, Any] = {"file": path.name, "sha256": file_sha256(path)}
    if spec.public_sample_published:  # the overlap checks were skipped on its word
        source["published"] = True
    return source


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
    needed: bool = False,
) -> str:
    """:func:`describe` for the first binning among ``configurations`` that has warnings.

    ``''`` when none has. Each distinct transformation set is checked once. With
    ``needed``, a second line gives the epsilon each would need (:func:`needed_line`).
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
            text = describe(warnings, n)
            if needed:
                from synthflow.acceptance.needed import needed_line  # noqa: PLC0415

                text += "\n  " + needed_line(spec, tr, n, sample, warnings, fit_once=fit_once)
            return text
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

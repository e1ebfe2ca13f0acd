"""The weighted functional mechanism (``noise_weights: public_sample``, [lower] lever 2).

Claims checked against the test's own arithmetic:
- with weights, the *rescaled* statistics ``s_j / w_j`` of neighbouring datasets move
  within the declared sensitivity (Gaussian L2 after snapping, Laplace L1);
- the noise drawn on coefficient ``j`` has sd ``w_j`` times the base sd, and the base sd
  is ``sensitivity / sqrt(2 rho)`` at the charged rho;
- the weights are read off public data only: the same with any private data;
- at the same epsilon, weights made on one public sample lower the coefficient error of a
  perfect candidate on *another* population (the shifted births), so they carry;
- a spec asking for weights without a public sample is refused before any charge.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_gaussian_fit import STD, XB, YB, neighbours  # the same box and neighbours

from synthflow.criteria._common import code_matrix
from synthflow.criteria.regression import fit as regression
from synthflow.criteria.regression.fit import (
    Standardization,
    fit_noise,
    functional_mechanism_sensitivity,
    functional_mechanism_statistics,
    noise_weights,
)
from synthflow.criteria.regression.law import fit_law
from synthflow.data import load_data
from synthflow.errors import ConfigError
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.public_sample import public_sample
from synthflow.resources import bundled_spec
from synthflow.transform import Transformer

RELEASE_BINS = {
    "birth_month": "a",
    "mother_age": "b",
    "parity": "a",
    "gestation_week": "a",
    "birth_sex": "a",
    "birth_weight": "a",
}


@pytest.fixture(scope="module")
def default_spec():
    """The bundled default spec (births-2024, the conftest's, keeps the uniform fit)."""
    return load_spec(bundled_spec("births"))


def _public_weights(kind: str) -> np.ndarray:
    """Weights from a public design whose target depends on the features."""
    gen = np.random.default_rng(7)
    x = gen.uniform(XB[:, 0], XB[:, 1], (5000, 3))
    y = 2000 + 600 * x[:, 0] + 20 * x[:, 1] - 30 * x[:, 2] + gen.normal(0, 300, 5000)
    stats = functional_mechanism_statistics(x, y, STD, XB, YB)
    judge = Standardization.from_data(x, y, XB, YB)
    return noise_weights(
        stats, STD, judge, functional_mechanism_sensitivity(*STD.box(XB, YB)), kind
    )


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 30),
    kind=st.sampled_from(["gaussian", "laplace"]),
)
def test_rescaled_statistics_move_within_the_weighted_sensitivity(seed, n, kind):
    w = _public_weights(kind)
    assert w.max() / w.min() > 1.5  # the weights are not all equal: the test can fail
    noise = fit_noise(
        *STD.box(XB, YB), 1.0, kind=kind, delta=1e-6 if kind == "gaussian" else 0, weights=w
    )
    x, y, x2, y2 = neighbours(seed, n)
    a = functional_mechanism_statistics(x, y, STD, XB, YB) / w
    b = functional_mechanism_statistics(x2, y2, STD, XB, YB) / w
    if kind == "gaussian":  # the release snaps the rescaled statistics to the grid
        g = noise.granularity
        a, b = np.round(a / g) * g, np.round(b / g) * g
        assert np.sqrt(((a - b) ** 2).sum()) <= noise.sensitivity + 1e-9
    else:
        assert np.abs(a - b).sum() <= noise.sensitivity + 1e-9


def test_weighted_noise_has_the_stated_sd_per_coefficient_and_spends_its_rho():
    w = _public_weights("gaussian")
    noise = fit_noise(*STD.box(XB, YB), 0.8, kind="gaussian", delta=5e-7, weights=w)
    ranges = functional_mechanism_sensitivity(*STD.box(XB, YB))
    # The weights are normalised: the rescaled L2 sensitivity equals the unweighted one.
    assert math.isclose(
        math.sqrt(((ranges / w) ** 2).sum()), math.sqrt((ranges**2).sum()), rel_tol=1e-9
    )
    assert math.isclose(noise.sd, noise.sensitivity / math.sqrt(2 * noise.rho))
    stats = np.zeros((20000, len(w)))  # the release's own sampler (discrete Gaussian)
    drawn = noise.release(stats, PrivacyRNG.from_seed(3))
    # 20,000 draws: the sd's standard error is 0.5% of it; 3% is six of them.
    assert np.allclose(drawn.std(axis=0), noise.sd * w, rtol=0.03)


def test_weights_depend_on_the_public_sample_only(default_spec, tmp_path):
    tr = Transformer(default_spec, RELEASE_BINS)
    c = default_spec.criterion("regression_coef_error")
    assert c.noise_weights == "public_sample"  # the shipped births spec uses them
    _, _, _, xb, yb = regression.design(
        np.zeros((0, 6), dtype=np.int64), tr, "birth_weight", c.features
    )
    std = Standardization.from_bounds(xb, yb)
    first = fit_law(c, tr, std, xb, yb)
    again = fit_law(c, tr, std, xb, yb)
    assert first.weights == again.weights and len(first.weights) == 27
    # Another public sample gives other weights: they are read off it.
    other = tmp_path / "other.csv"
    sample = public_sample(default_spec)
    assert sample is not None
    sample.sample(n=20000, random_state=1).assign(
        birth_weight=lambda d: d.birth_weight.clip(upper=3000)
    ).to_csv(other, index=False)
    moved = dataclasses.replace(default_spec, public_sample=str(other))
    changed = fit_law(
        moved.criterion("regression_coef_error"), Transformer(moved, RELEASE_BINS), std, xb, yb
    )
    assert changed.weights != first.weights


def _with(c, weights):
    return dataclasses.replace(c, params=dataclasses.replace(c.params, noise_weights=weights))


@pytest.mark.slow
def test_weights_made_on_public_data_lower_the_error_on_a_shifted_population(
    default_spec, nvss_160k, tmp_path
):
    """Weights from the spec's public sample, judged on NVSS rows reweighted away from it."""
    tr = Transformer(default_spec, RELEASE_BINS)
    c = default_spec.criterion("regression_coef_error")
    frame = pd.read_csv(nvss_160k)
    tilt = (
        1.5 * (frame.parity >= 3)
        + 1.3 * (frame.mother_age >= 35)
        + 1.2 * (frame.gestation_week < 37)
    )  # the shift of benchmarks/_shifted.py: parity >= 3 about +9 points
    p = np.exp(tilt - tilt.max())
    rows = np.random.default_rng(1).choice(len(frame), 100_000, replace=False, p=p / p.sum())
    frame.iloc[np.sort(rows)].to_csv(tmp_path / "shifted.csv", index=False)
    shifted = load_data(tmp_path / "shifted.csv", default_spec, public=True).frame
    codes = code_matrix(tr.forward(shifted), tr, what="original")
    x, y, feats, xb, yb = regression.design(codes, tr, "birth_weight", c.features)
    std = Standardization.from_bounds(xb, yb)
    stats = functional_mechanism_statistics(x, y, std, xb, yb)
    truth = regression.ols(x, y, feats)
    judge = Standardization.from_data(x, y, xb, yb)
    errors = {}
    for weights in ("uniform", "public_sample"):
        law = fit_law(_with(c, weights), tr, std, xb, yb, epsilon=0.4)
        noisy = stats + law.simulate(np.random.default_rng(0), (4000, len(stats)))
        i, k = regression.fits_from_noisy_statistics(noisy, std, len(feats) + 1)
        errors[weights] = float(np.median(regression.coefficient_errors(i, k, truth, judge)))
    # 4,000 draws each: the medians' standard errors are under 2% of them; the weights
    # measured 28% less error on the public sample, and must keep at least 15% here.
    assert errors["public_sample"] < 0.85 * errors["uniform"], errors


def test_weights_without_a_public_sample_are_refused_before_any_charge(
    tmp_path, default_spec, capsys
):
    text = (
        bundled_spec("births")
        .read_text()
        .replace("public_sample: nvss_like_2019.csv.gz", "public_sample: ''")
    )
    path = tmp_path / "births.yaml"
    path.write_text(text)
    # The loader refuses it: a release could otherwise fail at the fit, after its charge.
    with pytest.raises(ConfigError, match=r"noise_weights 'public_sample'.*names none"):
        load_spec(path)
    from synthflow.cli import main

    assert main(["validate", str(path)]) == 2
    assert "set noise_weights: uniform" in capsys.readouterr().err
    # The fit's own law refuses it too, should a spec reach it another way.
    spec = dataclasses.replace(default_spec, public_sample="")
    tr = Transformer(spec, RELEASE_BINS)
    c = spec.criterion("regression_coef_error")
    _, _, _, xb, yb = regression.design(
        np.zeros((0, 6), dtype=np.int64), tr, "birth_weight", c.features
    )
    ledger = Ledger(total_epsilon=2.0, path=tmp_path / "ledger.jsonl")
    refused = r"(?s)noise_weights .public_sample. reads.*Nothing was spent"
    with pytest.raises(ConfigError, match=refused):
        fit_law(c, tr, Standardization.from_bounds(xb, yb), xb, yb)
    assert ledger.spent_epsilon == 0 and not (tmp_path / "ledger.jsonl").exists()


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_any_weights_are_charged_on_the_rescaled_sums(kind):
    """Weights not normalised (all 0.5): the sensitivity doubles, and the noise on each
    sum is the unweighted noise, as it must be (the rescaled sums move twice as far)."""
    box = STD.box(XB, YB)
    delta = 1e-6 if kind == "gaussian" else 0.0
    plain = fit_noise(*box, 0.7, kind=kind, delta=delta)
    ranges = functional_mechanism_sensitivity(*box)
    halved = fit_noise(*box, 0.7, kind=kind, delta=delta, weights=np.full(len(ranges), 0.5))
    if kind == "gaussian":  # the snapping term g sqrt(m) scales with the grid, not exactly
        assert halved.sensitivity == pytest.approx(2 * plain.sensitivity, rel=2e-3)
        assert halved.sd * 0.5 == pytest.approx(plain.sd, rel=2e-3)
    else:
        assert halved.sensitivity == pytest.approx(2 * plain.sensitivity, rel=1e-12)
        assert halved.sd * 0.5 == pytest.approx(plain.sd, rel=1e-12)

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LinearRegression

from synthflow.criteria.regression.fit import (
    LinearModel,
    Standardization,
    coefficient_error,
    design,
    functional_mechanism_sensitivity,
    functional_mechanism_statistics,
    mae,
    model_from_standardized,
    ols,
    solve_objective,
    tstr_error,
    tstr_sensitivity,
)


def test_squared_terms_get_noise_with_unit_bounds():
    # diffprivlib trap 1: with bounds (0, 1) the squared terms got no sensitivity.
    u_box = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    sens = functional_mechanism_sensitivity(u_box, np.array([0.0, 1.0]))
    # upper triangle order: (0,0),(0,1),(0,2),(1,1),(1,2),(2,2); then y*u_0, y*u_1, y*u_2
    assert sens.tolist() == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    sens = functional_mechanism_sensitivity(
        np.array([[1.0, -2.0], [1.0, 3.0]]), np.array([-1.0, 2.0])
    )
    # (0,0): 0; (0,1): 5; (1,1): 9 - 0; y*1: 3; y*u1: corners {2,-3,-4,6} -> 10
    assert sens.tolist() == [0.0, 5.0, 9.0, 3.0, 10.0]


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 30), center=st.floats(-2, 2))
def test_fm_sensitivity_neighbours(seed, n, center):
    rng = np.random.default_rng(seed)
    xb = np.array([[0.0, 1.0], [17.0, 46.0], [1.0, 11.0]])
    yb = (1400.0, 4600.0)
    std = Standardization(
        center=(0.5 + center, 30.0, 3.0), scale=(0.5, 6.0, 2.0), y_center=3300.0, y_scale=550.0
    )

    def draw(k):
        # values at and beyond the bounds, to exercise clipping
        x = rng.uniform(xb[:, 0] - 2, xb[:, 1] + 2, (k, 3))
        y = rng.uniform(yb[0] - 500, yb[1] + 500, k)
        return x, y

    x, y = draw(n)
    x2, y2 = x.copy(), y.copy()
    i = rng.integers(n)
    nx, ny = draw(1)
    x2[i], y2[i] = nx[0], ny[0]
    # extreme corner rows too
    if seed % 3 == 0:
        x2[i] = np.where(rng.random(3) < 0.5, xb[:, 0], xb[:, 1])
    a = functional_mechanism_statistics(x, y, std, xb, yb)
    b = functional_mechanism_statistics(x2, y2, std, xb, yb)
    sens = functional_mechanism_sensitivity(*std.box(xb, yb))
    assert np.all(np.abs(a - b) <= sens + 1e-9)
    assert np.abs(a - b).sum() <= sens.sum() + 1e-9


def test_noiseless_functional_objective_is_ols():
    rng = np.random.default_rng(0)
    x = rng.uniform([0, 17, 1], [1, 46, 11], (500, 3))
    y = np.clip(2000 + 300 * x[:, 0] + 10 * x[:, 1] + rng.normal(0, 200, 500), 1400, 4600)
    xb = np.array([[0.0, 1.0], [17.0, 46.0], [1.0, 11.0]])
    std = Standardization.from_data(x, y, xb, (1400.0, 4600.0))
    stats = functional_mechanism_statistics(x, y, std, xb, (1400.0, 4600.0))
    model = model_from_standardized(solve_objective(stats, 4), std, ("a", "b", "c"))
    ref = LinearRegression().fit(x, y)
    assert model.intercept == pytest.approx(ref.intercept_, rel=1e-9)
    np.testing.assert_allclose(model.coef, ref.coef_, rtol=1e-8)
    mine = ols(x, y, ("a", "b", "c"))
    np.testing.assert_allclose(mine.coef, ref.coef_, rtol=1e-8)


def test_coefficient_error_hand_example():
    std = Standardization(center=(10.0,), scale=(2.0,), y_center=0.0, y_scale=1.0)
    a = LinearModel(features=("x",), intercept=1.0, coef=(3.0,))
    b = LinearModel(features=("x",), intercept=0.0, coef=(2.0,))
    # z-coefs 6 vs 4 -> 2; intercepts 1 + 30 vs 0 + 20 -> 11
    assert coefficient_error(a, b, std) == pytest.approx(13.0)


def test_tstr_hand_example():
    x = np.array([[0.0], [1.0]])
    y = np.array([2000.0, 3000.0])
    good = LinearModel(features=("x",), intercept=2000.0, coef=(1000.0,))
    off = LinearModel(features=("x",), intercept=2100.0, coef=(1000.0,))
    clipped = LinearModel(features=("x",), intercept=0.0, coef=(0.0,))  # predicts 1400 after clip
    yb = (1400.0, 4600.0)
    assert mae(good, x, y, yb) == 0.0
    assert tstr_error(good, off, x, y, yb) == pytest.approx(100.0)
    assert mae(clipped, x, y, yb) == pytest.approx((600 + 1600) / 2)
    assert tstr_sensitivity(yb, 160) == 40.0


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 40))
def test_tstr_sensitivity_neighbours(transformer, make_codes, seed, n):
    rng = np.random.default_rng(seed)
    t = make_codes(transformer, n, rng)
    t2 = t.copy()
    t2[rng.integers(n)] = make_codes(transformer, 1, rng)[0]
    x, y, feats, _, yb = design(t, transformer, "birth_weight")
    x2, y2, *_ = design(t2, transformer, "birth_weight")
    m1 = LinearModel(
        features=feats,
        intercept=float(rng.normal(3000, 800)),
        coef=tuple(rng.normal(0, 100, len(feats))),
    )
    m2 = LinearModel(
        features=feats,
        intercept=float(rng.normal(3000, 800)),
        coef=tuple(rng.normal(0, 100, len(feats))),
    )
    moved = abs(tstr_error(m1, m2, x, y, yb) - tstr_error(m1, m2, x2, y2, yb))
    assert moved <= tstr_sensitivity(yb, n) + 1e-9


def test_features_key_restricts_the_regression(spec, tmp_path, make_codes, frame):
    # A spec whose regression criteria list only two features: the exact coefficient
    # error is that of OLS on those two, and the DP evaluation charges as before.
    import yaml

    from synthflow.acceptance import evaluate, exact_values
    from synthflow.loader import load_spec
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.transform import Transformer

    raw = yaml.safe_load(open(spec.path).read())
    for c in raw["acceptance"]["criteria"]:
        if c["kind"].startswith("regression"):
            c["features"] = ["gestation_week", "parity"]
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(raw))
    s2 = load_spec(path)
    tr = Transformer(s2, {})
    g = np.random.default_rng(4)
    a = frame(tr, make_codes(tr, 3000, g))
    b = frame(tr, make_codes(tr, 3000, g))
    exact = exact_values(s2, tr, a, b)

    # By hand: OLS of weight on (gestation, parity) in each table, standardised by b.
    def ols(f):
        x = np.column_stack([tr.numbers(f, "gestation_week"), tr.numbers(f, "parity")])
        return LinearRegression().fit(x, tr.numbers(f, "birth_weight")), x

    (ma, _), (mb, xb) = ols(a), ols(b)
    sd = xb.std(axis=0)
    want = abs(
        ma.intercept_ + ma.coef_ @ xb.mean(axis=0) - mb.intercept_ - mb.coef_ @ xb.mean(axis=0)
    )
    want += float(np.abs((ma.coef_ - mb.coef_) * sd).sum())
    assert exact["regression_coef_error"] == pytest.approx(want, rel=1e-6)
    rep = evaluate(s2, tr, a, b, exact=False, ledger=Ledger(total_epsilon=1.0),
                   rng=PrivacyRNG.from_seed(0))  # fmt: skip
    assert rep.epsilon_total == pytest.approx(s2.evaluation_epsilon)


def test_categorical_features_are_one_hot_over_public_bins():
    # Example spec: region has 4 public categories, smoker 2. The design must hold one
    # 0/1 column per non-reference category (north is the reference), whatever occurs
    # in the data, and OLS on it must equal sklearn on pandas' own dummies.
    import pandas as pd

    from synthflow.loader import load_spec
    from synthflow.transform import Transformer

    spec = load_spec("configs/example_small.yaml")
    tr = Transformer(spec, {c: "a" for c in spec.column_names})
    rng = np.random.default_rng(0)
    n = 400
    raw = pd.DataFrame(
        {
            "age": rng.integers(0, 90, n),
            "visits": rng.integers(1, 20, n),
            "region": rng.choice(["north", "south", "east"], n),  # no 'west' in the data
            "smoker": rng.choice(["no", "yes"], n),
        }
    )
    codes = tr.forward(raw).to_numpy(np.int64)
    x, y, names, xb, _ = design(codes, tr, "visits", ("age", "region", "smoker"))
    assert names == ("age", "region=south", "region=east", "region=west", "smoker")
    assert x.shape == (n, 5) and (x[:, 3] == 0).all()  # west: public, absent, kept
    assert xb[1:].tolist() == [[0.0, 1.0]] * 4
    dummies = pd.get_dummies(raw["region"]).astype(float)[["south", "east"]]
    np.testing.assert_array_equal(x[:, 1:3], dummies.to_numpy())
    ref = np.column_stack([x[:, 0], dummies, (raw["smoker"] == "yes").astype(float)])
    want = LinearRegression().fit(ref, y)
    got = ols(np.delete(x, 3, axis=1), y, ("age", "south", "east", "smoker"))
    np.testing.assert_allclose(got.coef, want.coef_, rtol=1e-9, atol=1e-9)
    # default features: the int columns but the target (categoricals only when listed)
    assert design(codes, tr, "visits")[2] == ("age",)


@pytest.mark.parametrize("k", [2, 3, 6])
def test_stacked_fits_are_the_per_row_fits_bit_for_bit(k):
    """The batched solver of the simulations (plan, noise checks) is the release's own
    arithmetic, stacked: identical floats, not merely close, so no simulated pass or
    fail can differ from what the one-fit path gives. Noisy objectives of all signs
    (some indefinite: the eigenvalue floor is exercised)."""
    from synthflow.criteria.regression.fit import (
        Standardization,
        fits_from_noisy_statistics,
        model_from_noisy_statistics,
    )

    gen = np.random.default_rng(k)
    stats = gen.laplace(scale=50.0, size=(400, k * (k + 1) // 2 + k))
    std = Standardization(
        center=tuple(gen.normal(size=k - 1)),
        scale=tuple(gen.uniform(0.5, 5.0, size=k - 1)),
        y_center=3000.0,
        y_scale=500.0,
    )
    features = tuple(f"x{i}" for i in range(k - 1))
    one = [model_from_noisy_statistics(row, std, features) for row in stats]
    intercepts, coefs = fits_from_noisy_statistics(stats, std, k)
    assert np.array_equal(intercepts, [m.intercept for m in one])
    assert np.array_equal(coefs, [m.coef for m in one])

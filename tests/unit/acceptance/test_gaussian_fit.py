"""The functional mechanism with Gaussian noise, and its zCDP composition (#37 lever 4).

The claims checked against the test's own arithmetic: the snapped coefficients' L2
movement on neighbouring datasets is within the declared sensitivity; the noise drawn
has the stated sd and rho; a spec's Gaussian fit is charged (epsilon, delta); a single
attempt with a Gaussian generator and a Gaussian fit costs their joint zCDP conversion
plus the pure criteria, never more than basic composition; many attempts refuse a
Gaussian fit per attempt.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthflow.criteria.regression.fit import (
    Standardization,
    fit_noise,
    functional_mechanism_statistics,
)
from synthflow.errors import ConfigError
from synthflow.loader import load_spec
from synthflow.privacy import zcdp
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.release.cost import SINGLE_ATTEMPT, SelectionCost, joint_cost, selection_cost
from synthflow.space import expand_space

XB = np.array([[0.0, 1.0], [17.0, 46.0], [1.0, 11.0]])
YB = (1400.0, 4600.0)
STD = Standardization(
    center=(0.5, 30.0, 3.0), scale=(0.5, 6.0, 2.0), y_center=3300.0, y_scale=550.0
)


def neighbours(seed: int, n: int):
    """Two datasets of ``n`` rows (3 features, a target) that differ in one row, some
    values beyond the public box (clipped), every third time a corner row."""
    rng = np.random.default_rng(seed)

    def draw(k):
        x = rng.uniform(XB[:, 0] - 2, XB[:, 1] + 2, (k, 3))  # beyond the box: clipped
        return x, rng.uniform(YB[0] - 500, YB[1] + 500, k)

    x, y = draw(n)
    x2, y2 = x.copy(), y.copy()
    i = int(rng.integers(n))
    nx, ny = draw(1)
    x2[i], y2[i] = nx[0], ny[0]
    if seed % 3 == 0:  # a corner row
        x2[i] = np.where(rng.random(3) < 0.5, XB[:, 0], XB[:, 1])
    return x, y, x2, y2


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 30))
def test_snapped_statistics_move_within_the_l2_sensitivity(seed, n):
    noise = fit_noise(*STD.box(XB, YB), 1.0, kind="gaussian", delta=1e-6)
    x, y, x2, y2 = neighbours(seed, n)
    g = noise.granularity
    a = np.round(functional_mechanism_statistics(x, y, STD, XB, YB) / g) * g
    b = np.round(functional_mechanism_statistics(x2, y2, STD, XB, YB) / g) * g
    assert math.sqrt(float(((a - b) ** 2).sum())) <= noise.sensitivity + 1e-9


def test_gaussian_fit_noise_has_the_stated_sd_and_spends_its_rho():
    noise = fit_noise(*STD.box(XB, YB), 0.8, kind="gaussian", delta=5e-7)
    laplace = fit_noise(*STD.box(XB, YB), 0.8)
    # The test's own rho: the discrete Gaussian of parameter sd/g on the grid, L2
    # sensitivity/g there: (sens/g)^2 / (2 (sd/g)^2), within the (0.8, 5e-7) conversion.
    rho = noise.sensitivity**2 / (2 * noise.sd**2)
    assert rho == pytest.approx(zcdp.zcdp_rho(0.8, delta=5e-7), rel=1e-9)
    assert zcdp.zcdp_epsilon(rho, delta=5e-7) <= 0.8
    # Alone, it is not cheaper on this 10-coefficient box (L2 / L1 is only 0.34): its
    # gain is the composition with a Gaussian generator (the single-attempt test below).
    assert noise.sd > laplace.sd
    stats = np.full(200_000, 1234.5678)
    out = noise.release(stats, PrivacyRNG.from_seed(5))
    g = noise.granularity
    assert np.allclose(out / g, np.round(out / g))  # on the grid: no float low bits
    # 200K draws: the sample sd within 1.5% (about 9 of its own sds), the mean within 5.
    assert (out - stats).std() == pytest.approx(noise.sd, rel=0.015)
    assert abs((out - stats).mean()) < 5 * noise.sd / math.sqrt(len(out)) + g


def _spec(tmp_path, fit_line: str):
    text = open(load_spec("births-2024").path).read()
    old = "threshold: 30, epsilon: 0.43}"
    assert old in text
    text = text.replace(old, f"threshold: 30, epsilon: 0.43{fit_line}}}")
    text = text[: text.index("\nspace:")] + (
        "\nspace:\n  min_count: [2]\n  models:\n    - model: workload\n"
        "      grid: {noise: gaussian, delta: 5.0e-7}\n"
    )
    path = tmp_path / "births_gauss.yaml"
    path.write_text(text)
    return path


def test_a_gaussian_fit_needs_its_delta_within_the_total(tmp_path):
    with pytest.raises(ConfigError, match="needs a delta"):
        load_spec(_spec(tmp_path, ", noise: gaussian"))
    with pytest.raises(ConfigError, match="pure DP"):
        load_spec(_spec(tmp_path, ", delta: 1.0e-7"))
    with pytest.raises(ConfigError, match="total_delta"):
        load_spec(_spec(tmp_path, ", noise: gaussian, delta: 2.0e-6"))


def test_single_attempt_composes_generator_and_fit_in_zcdp(tmp_path):
    spec = load_spec(_spec(tmp_path, ", noise: gaussian, delta: 5.0e-7"))
    cands = [c for c in expand_space(spec) if c.letters == "abaaaa"]
    one = selection_cost(spec, fit_once=False, candidates=cands, stop_probability=1.0)
    assert one.theorem == SINGLE_ATTEMPT and one.total_delta == pytest.approx(1e-6)
    fit = spec.criterion("regression_coef_error")
    eps_gen = spec.privacy.generator_epsilon
    # The test's own arithmetic: rho of each part at its own (epsilon, delta), summed,
    # converted at the attempt's delta, plus the other criteria's epsilons.
    rho = zcdp.zcdp_rho(eps_gen, delta=5e-7) + zcdp.zcdp_rho(0.43, delta=5e-7)
    others = spec.evaluation_epsilon - fit.epsilon
    want = zcdp.zcdp_epsilon(rho, delta=1e-6) + others
    assert one.total == pytest.approx(want, rel=1e-9)
    assert one.total < eps_gen + spec.evaluation_epsilon  # cheaper than basic composition
    assert one.to_json()["joint_rho"] == pytest.approx(rho)
    # The fit once before the attempt: in zCDP the same total, the fit charged by itself;
    # its law fixed by the public bounds, every part now has a PLD and the attempt is
    # composed exactly (synthflow.privacy.pld), below the zCDP figure.
    once = selection_cost(spec, fit_once=True, candidates=cands, stop_probability=1.0)
    assert 0 < once.exact_epsilon == once.total < want
    zcdp_once = dataclasses.replace(once, exact_epsilon=0.0)
    assert zcdp_once.total == pytest.approx(want, rel=1e-9)
    assert once.selection_epsilon + once.fit_epsilon == pytest.approx(once.total, rel=1e-12)
    assert once.selection_charge_delta + once.fit_delta == pytest.approx(1e-6)
    # A pure-DP candidate in the shortlist: its worst case is basic composition.
    basic = SelectionCost(
        generator_epsilon=eps_gen,
        evaluation_epsilon=spec.evaluation_epsilon,
        fit_epsilon=0.0,
        theorem=SINGLE_ATTEMPT,
        attempt_delta=1e-6,
    )
    assert joint_cost(basic, [0.01, None], [(0.43, 5e-7)]) is basic
    # Many attempts cannot carry a Gaussian fit per attempt; once per release they can.
    with pytest.raises(ConfigError, match="single attempt"):
        selection_cost(spec, fit_once=False, candidates=cands, stop_probability=0.05, rows=9)
    pure = dataclasses.replace(spec, models=())
    lt = selection_cost(pure, fit_once=True)
    assert lt.total_delta == pytest.approx(5e-7)
    assert lt.to_json()["total_delta"] == pytest.approx(5e-7)  # published, not pure DP
    assert lt.total == pytest.approx(2 * (eps_gen + others) + 0.43)


def test_a_gaussian_fit_is_charged_epsilon_and_delta(nvss_10k, tmp_path):
    from synthflow.acceptance import fit_dp_regression
    from synthflow.data import load_data
    from synthflow.transform import Transformer

    spec = load_spec(_spec(tmp_path, ", noise: gaussian, delta: 5.0e-7"))
    raw = load_data(nvss_10k, spec, public=True).frame
    tr = Transformer(spec, {"mother_age": "b"})
    ledger = Ledger(total_epsilon=1.0, total_delta=1e-6)
    fit = fit_dp_regression(spec, tr, tr.forward(raw), ledger=ledger, rng=PrivacyRNG.from_seed(1))
    (charge,) = ledger.charges
    assert (charge.epsilon, charge.delta) == (0.43, 5e-7)
    assert charge.mechanism == "functional (gaussian)"
    assert fit.delta == 5e-7 and fit.noise_sd == pytest.approx(
        charge.sensitivity / math.sqrt(2 * zcdp.zcdp_rho(0.43, delta=5e-7))
    )
    # Without room for its delta: refused before anything is charged.
    small = Ledger(total_epsilon=1.0, total_delta=1e-7)
    with pytest.raises(Exception, match="delta"):
        fit_dp_regression(spec, tr, tr.forward(raw), ledger=small, rng=PrivacyRNG.from_seed(1))
    assert small.charges == ()


def test_a_plan_point_above_the_spec_delta_is_infeasible():
    from synthflow.plan.optimize import PlanOptions, PlanPoint

    kw = dict(
        generator_epsilon=1.0, fit_once=False, transformations=None, epsilons={},
        total_epsilon=1.0, pass_probability=1.0, release_probability=1.0,
        expected_attempts=1.0, perfect_fail=0.0, candidates={"a": 1.0}, max_delta=1e-6,
    )  # fmt: skip
    assert PlanPoint(**kw, total_delta=1e-6).feasible(PlanOptions())
    assert not PlanPoint(**kw, total_delta=1.5e-6).feasible(PlanOptions())

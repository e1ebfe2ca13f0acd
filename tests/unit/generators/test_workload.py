"""The workload generator: its workload, sensitivity, ledger, noise, zeros and sampler."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from noise_audit import assert_draws_match_charges, record_draws
from scipy import stats

from synthflow.data import load_data
from synthflow.errors import BudgetExceededError
from synthflow.filtering import binned_violations
from synthflow.generators import make_generator
from synthflow.generators._pgm_sampler import TreeSampler, _Step
from synthflow.generators._pgm_tables import _cdf
from synthflow.generators._workload_spec import structural_zeros, workload_from_spec
from synthflow.generators.workload import (
    WorkloadHyperparameters,
    discrete_laplace_sd,
    marginal_counts,
    marginal_l2_sensitivity,
    marginal_sensitivity,
    plan_measurements,
)
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Domain, Transformer

RELEASE = {"mother_age": "b"}


def _fitted(raw, tr, *, iters):
    """A workload generator fitted at epsilon 1 on ``raw`` binned by ``tr`` (seeded)."""
    gen = make_generator("workload", {"iters": iters}, epsilon=1.0, transformer=tr)
    return gen.fit(
        tr.forward(raw), domain=tr.domain, ledger=Ledger(total_epsilon=1.0),
        rng=PrivacyRNG.from_seed(1),
    )  # fmt: skip


def test_births_workload_comes_from_the_criteria(births_spec):
    w = workload_from_spec(births_spec)
    assert w.one_way == tuple((c,) for c in births_spec.column_names)
    # Synthetic rules 4, 5 (age x parity) and 7, 8 (gestation x weight) name these pairs.
    assert set(w.constrained) == {("mother_age", "parity"), ("gestation_week", "birth_weight")}
    # The regression reads every pair of the six columns; nothing is measured twice.
    assert len(w.constrained) + len(w.pairs) == math.comb(6, 2)
    assert not set(w.constrained) & set(w.pairs)


def test_plan_spends_exactly_epsilon_with_the_shares(births_spec):
    tr = Transformer(births_spec, RELEASE)
    hp = WorkloadHyperparameters(one_way_share=0.2, constrained_share=0.4)
    plan = plan_measurements(workload_from_spec(births_spec), tr.domain, hp, 4.0)
    assert math.fsum(m.epsilon for m in plan) == pytest.approx(4.0, abs=1e-12)
    families = ("one_way", "constrained", "pairs")
    by = {f: math.fsum(m.epsilon for m in plan if m.family == f) for f in families}
    assert by["one_way"] == pytest.approx(0.8)
    assert by["constrained"] == pytest.approx(1.6)
    assert by["pairs"] == pytest.approx(1.6)
    # An empty family hands its share on: no constrained pairs -> the other pairs get 0.8.
    plan = plan_measurements(
        workload_from_spec(births_spec).__class__(
            one_way=(("birth_month",),), constrained=(), pairs=(("birth_month", "parity"),)
        ),
        tr.domain,
        hp,
        1.0,
    )
    assert [round(m.epsilon, 12) for m in plan] == [0.2, 0.8]


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(st.tuples(*(st.integers(0, s - 1) for s in (3, 4, 2))), min_size=1, max_size=30),
    where=st.integers(0, 10**6),
    new=st.tuples(*(st.integers(0, s - 1) for s in (3, 4, 2))),
)
def test_marginal_sensitivity_on_replace_one_neighbours(rows, where, new):
    sizes = (3, 4, 2)
    a = np.array(rows, dtype=np.int64)
    b = a.copy()
    b[where % len(a)] = new
    for axes in [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2), (0, 1, 2)]:
        diff = marginal_counts(a, axes, sizes) - marginal_counts(b, axes, sizes)
        assert np.abs(diff).sum() <= marginal_sensitivity()  # L1: the Laplace version's
        # L2: the Gaussian version's (noise: gaussian)
        assert math.sqrt(float((diff**2).sum())) <= marginal_l2_sensitivity() + 1e-12


def test_privacy_map_of_opendp_matches_each_planned_epsilon(births_spec):
    # The guarantee recomputed by the library whose sampler adds the noise.
    import opendp.prelude as dp

    dp.enable_features("contrib")
    tr = Transformer(births_spec, RELEASE)
    plan = plan_measurements(
        workload_from_spec(births_spec), tr.domain, WorkloadHyperparameters(), 4.0
    )
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int)
    for m in plan:
        meas = space >> dp.m.then_laplace(scale=m.scale)
        assert meas.map(int(marginal_sensitivity())) <= m.epsilon * (1 + 1e-9)


@pytest.mark.parametrize("secure", [False, True])
def test_discrete_laplace_is_unbiased_with_the_stated_sd(secure):
    rng = PrivacyRNG.secure() if secure else PrivacyRNG.from_seed(3)
    scale, n = 5.0, 200_000
    counts = np.full(n, 40, dtype=np.int64)
    noise = rng.discrete_laplace(counts, scale=scale) - counts
    sd = discrete_laplace_sd(scale)
    # The mean of n draws has sd sd/sqrt(n) = 0.016: 5 of them bound a false failure
    # below 1e-6; the sample sd of 200K draws is within 2% of the truth (about 8 sd).
    assert abs(noise.mean()) < 5 * sd / math.sqrt(n)
    assert noise.std() == pytest.approx(sd, rel=0.02)
    assert np.issubdtype(noise.dtype, np.integer)


def test_fit_charges_exactly_epsilon_before_noise(nvss_10k, births_spec):
    raw = load_data(nvss_10k, births_spec, public=True).frame
    tr = Transformer(births_spec, RELEASE)
    codes = tr.forward(raw)
    gen = make_generator("workload", {"iters": 50}, epsilon=3.0, transformer=tr)
    ledger = Ledger(total_epsilon=3.0)
    with pytest.MonkeyPatch.context() as mp:
        draws = record_draws(mp)
        gen.fit(codes, domain=tr.domain, ledger=ledger, rng=PrivacyRNG.from_seed(0))
    assert ledger.spent_epsilon == pytest.approx(3.0, abs=1e-12)
    assert {c.mechanism for c in ledger.charges} == {"discrete_laplace"}
    assert {c.sensitivity for c in ledger.charges} == {2.0}
    # Through the generator: every marginal it measured got noise of the law its scale
    # says, and the scales spend exactly what was charged (count vectors: L1 2).
    assert_draws_match_charges(draws, ledger, lambda d: 2.0)
    z = np.concatenate(
        [(d.output[0] - d.values).ravel() / discrete_laplace_sd(d.scale) for d in draws]
    )
    # Thousands of cells of unit-variance noise: the mean's sd is 1/sqrt(len) < 0.03, so
    # 5 of them bound a false failure; the sample sd is within 10% (many sds at this size).
    assert len(z) > 1000
    assert abs(z.mean()) < 5 / math.sqrt(len(z))
    assert z.std() == pytest.approx(1.0, rel=0.1)
    # Not enough budget: refused before anything is charged or drawn.
    small = Ledger(total_epsilon=2.9)
    with pytest.raises(BudgetExceededError):
        make_generator("workload", {}, epsilon=3.0, transformer=tr).fit(
            codes, domain=tr.domain, ledger=small, rng=PrivacyRNG.from_seed(0)
        )
    assert small.charges == ()


def test_no_sampled_row_violates_a_synthetic_constraint(nvss_10k, births_spec):
    raw = load_data(nvss_10k, births_spec, public=True).frame
    for letters in (RELEASE, {"gestation_week": "b", "parity": "b"}):
        tr = Transformer(births_spec, letters)
        zeros = structural_zeros(tr)
        assert zeros and all(m.any() for m in zeros.values())
        gen = _fitted(raw, tr, iters=300)
        rows = gen.sample(200_000, rng=np.random.default_rng(2))
        assert not binned_violations(rows, births_spec.synthetic_constraints, tr).any()


def test_structural_zero_masks_match_the_binned_filter(births_spec):
    tr = Transformer(births_spec, RELEASE)
    zeros = structural_zeros(tr)
    gw = zeros[("gestation_week", "birth_weight")]
    labels_g = tr.transformations["gestation_week"].labels
    labels_w = tr.transformations["birth_weight"].labels
    # "<29" weeks with 3000-3099 g is forbidden (rule 7); 37-41 weeks with it is not.
    assert gw[labels_g.index("<29"), labels_w.index("3000-3099")]
    assert not gw[labels_g.index("37-41"), labels_w.index("3000-3099")]
    # "<29" with 2900-2999 g: the bin does not lie wholly above 2999, so it stays.
    assert not gw[labels_g.index("<29"), labels_w.index("2900-2999")]


def test_tree_sampler_reproduces_a_known_chain():
    # a -> b -> c with known conditionals; the sampler must reproduce the joint.
    pa = np.array([0.2, 0.8])
    pb_a = np.array([[0.9, 0.1, 0.0], [0.3, 0.3, 0.4]])
    pc_b = np.array([[1.0, 0.0], [0.5, 0.5], [0.1, 0.9]])
    steps = [
        _Step(column=0, parents=(), cdf=_cdf(pa[None, :])),
        _Step(column=1, parents=(0,), cdf=_cdf(pb_a)),
        _Step(column=2, parents=(1,), cdf=_cdf(pc_b)),
    ]
    n = 100_000
    rows = TreeSampler(steps, (2, 3, 2)).sample(n, np.random.default_rng(0))
    joint = pa[:, None, None] * pb_a[:, :, None] * pc_b[None, :, :]
    observed = np.bincount(np.ravel_multi_index(rows.T, (2, 3, 2)), minlength=12)
    expected = joint.ravel() * n
    assert observed[expected == 0].sum() == 0  # zero-probability cells never drawn
    keep = expected > 0
    assert stats.chisquare(observed[keep], expected[keep]).pvalue > 1e-3


def test_without_a_spec_every_pair_is_measured():
    domain = Domain(names=("a", "b", "c"), sizes=(2, 3, 2))
    gen = make_generator("workload", {}, epsilon=1.0)
    assert sorted(m.clique for m in gen.plan(domain)) == sorted(
        [("a",), ("b",), ("c",), ("a", "b"), ("a", "c"), ("b", "c")]
    )


def test_bad_shares_are_refused():
    with pytest.raises(ValueError, match="at most 1"):
        WorkloadHyperparameters(one_way_share=0.7, constrained_share=0.5)
    with pytest.raises(ValueError, match="one_way_share"):
        WorkloadHyperparameters(one_way_share=-0.1)


def test_sample_is_reproducible_from_a_seeded_rng(nvss_10k, births_spec):
    raw = load_data(nvss_10k, births_spec, public=True).frame
    gen = _fitted(raw, Transformer(births_spec, RELEASE), iters=100)
    a = gen.sample(1000, rng=np.random.default_rng(5))
    b = gen.sample(1000, rng=np.random.default_rng(5))
    pd.testing.assert_frame_equal(a, b)


def test_a_model_too_large_is_refused_before_any_charge():
    # 16 columns of 10 bins, every pair measured: the junction tree is the whole
    # 10^16-cell table. Refused from the public domain alone, nothing charged.
    from synthflow.errors import InfeasibleConfigurationError

    names = tuple(f"c{i}" for i in range(16))
    domain = Domain(names=names, sizes=(10,) * 16)
    data = pd.DataFrame({n: np.zeros(50, dtype=np.int16) for n in names})
    ledger = Ledger(total_epsilon=1.0)
    gen = make_generator("workload", {}, epsilon=1.0)
    with pytest.raises(InfeasibleConfigurationError, match="max_model_size") as info:
        gen.fit(data, domain=domain, ledger=ledger, rng=PrivacyRNG.from_seed(0))
    assert "(10 bins)" in str(info.value)  # names the columns that cause it
    assert ledger.charges == ()

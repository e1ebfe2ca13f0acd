"""PrivBayes: noise scale, structure rules, MI sensitivity, budget and sampling."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from synthflow.errors import BudgetExceededError, DataError
from synthflow.generators.privbayes import (
    PrivBayes,
    PrivBayesHyperparameters,
    covering_families,
    mi_sensitivity,
    mutual_information,
    noisy_counts,
)
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Domain

P_THRESHOLD = 1e-20  # see tests/unit/privacy/test_rng.py


def test_conditional_noise_scale_with_power():
    d, eps2 = 6, 3.0
    counts = np.full((100, 1000), 50.0)
    noise = (
        noisy_counts(counts, n_tables=d, epsilon=eps2, rng=PrivacyRNG.from_seed(1)) - counts
    ).ravel()
    scale = 2 * d / eps2  # L1 sensitivity 2 per table, eps2 / d per table
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > P_THRESHOLD
    for wrong in (0.7 * scale, 1.3 * scale, d / eps2):  # d / eps2: sensitivity 1 by mistake
        assert stats.kstest(noise, stats.laplace(scale=wrong).cdf).pvalue < P_THRESHOLD


def _codes(n: int, sizes: tuple[int, ...], seed: int) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    a = g.integers(0, sizes[0], n)
    cols = {"a": a}
    for i, s in enumerate(sizes[1:], start=1):
        prev = cols[list(cols)[-1]]
        cols["abcdef"[i]] = np.where(g.random(n) < 0.7, prev % s, g.integers(0, s, n))
    return pd.DataFrame({k: v.astype(np.int16) for k, v in cols.items()})


@pytest.mark.parametrize(
    "hp",
    [
        PrivBayesHyperparameters(flavor="theta", epsilon_split=0.3, theta=4),
        PrivBayesHyperparameters(flavor="degree", epsilon_split=0.5, degree=2),
    ],
)
def test_fit_charges_exactly_epsilon_and_samples_the_domain(hp):
    sizes = (4, 3, 5, 2)
    data = _codes(2000, sizes, seed=0)
    domain = Domain(names=tuple(data.columns), sizes=sizes)
    ledger = Ledger(total_epsilon=10)
    gen = PrivBayes(hp, epsilon=2.5).fit(
        data, domain=domain, ledger=ledger, rng=PrivacyRNG.from_seed(0)
    )
    assert math.isclose(math.fsum(c.epsilon for c in ledger.charges), 2.5, rel_tol=1e-12)
    assert [c.mechanism for c in ledger.charges] == ["exponential", "laplace"]
    assert all(c.delta == 0 for c in ledger.charges)
    out = gen.sample(500, rng=np.random.default_rng(3))
    assert out.shape == (500, 4) and tuple(out.columns) == domain.names
    for name, size in zip(domain.names, sizes, strict=True):
        assert out[name].between(0, size - 1).all()
    # post-processing is reproducible given the fitted model and a seeded generator
    pd.testing.assert_frame_equal(out, gen.sample(500, rng=np.random.default_rng(3)))
    # every attribute appears once in a topological order
    assert sorted(x for x, _ in gen.network_) == [0, 1, 2, 3]
    seen: set[int] = set()
    for x, parents in gen.network_:
        assert set(parents) <= seen
        seen.add(x)


def test_degree_flavor_uses_fixed_degree():
    sizes = (4, 3, 5, 2, 3)
    data = _codes(1000, sizes, seed=1)
    domain = Domain(names=tuple(data.columns), sizes=sizes)
    gen = PrivBayes(PrivBayesHyperparameters(flavor="degree", degree=2), epsilon=1.0).fit(
        data, domain=domain, ledger=Ledger(total_epsilon=1), rng=PrivacyRNG.from_seed(2)
    )
    assert [len(p) for _, p in gen.network_] == [0, 1, 2, 2, 2]


def test_theta_flavor_parent_sets_are_maximal_and_useful():
    gen = PrivBayes(PrivBayesHyperparameters(flavor="theta", theta=10), epsilon=1.0)
    sizes, n, eps2 = [10, 10, 10, 2], 100_000, 0.5
    tau = n * eps2 / (2 * len(sizes) * 10)  # = 625 cells
    sets = gen._parent_sets(0, [1, 2, 3], sizes, n, eps2)
    for s in sets:
        assert sizes[0] * math.prod(sizes[p] for p in s) <= tau
        for extra in {1, 2, 3} - set(s):  # adding any parent breaks usefulness
            assert sizes[0] * math.prod(sizes[p] for p in (*s, extra)) > tau
    assert sorted(sets) == [(1, 3), (2, 3)]
    # too little data: no parents at all
    assert gen._parent_sets(0, [1, 2], sizes, 100, eps2) == [()]


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(4, 40),
    kx=st.integers(2, 4),
    kp=st.integers(2, 4),
    data=st.data(),
)
def test_mutual_information_sensitivity_on_neighbours(n, kx, kp, data):
    """Replacing one row never moves I(X; Pi) by more than the declared sensitivity."""
    xs = data.draw(st.lists(st.integers(0, kx - 1), min_size=n, max_size=n))
    ps = data.draw(st.lists(st.integers(0, kp - 1), min_size=n, max_size=n))
    i = data.draw(st.integers(0, n - 1))
    new = (data.draw(st.integers(0, kx - 1)), data.draw(st.integers(0, kp - 1)))

    def mi(x, p):
        joint = np.zeros((kx, kp))
        np.add.at(joint, (np.array(x), np.array(p)), 1)
        return mutual_information(joint)

    x2, p2 = list(xs), list(ps)
    x2[i], p2[i] = new
    binary = kx == 2 or kp == 2
    assert abs(mi(xs, ps) - mi(x2, p2)) <= mi_sensitivity(n, binary=binary) + 1e-12


def test_mi_sensitivity_binary_is_smaller():
    for n in (10, 1000, 160_000):
        assert mi_sensitivity(n, binary=True) < mi_sensitivity(n, binary=False)


def test_mutual_information_known_values():
    assert mutual_information(np.array([[5, 0], [0, 5]])) == pytest.approx(math.log(2))
    assert mutual_information(np.array([[5, 5], [5, 5]])) == pytest.approx(0.0)


def test_structure_follows_the_data_at_high_epsilon():
    """With a huge budget the exponential mechanism picks the informative parent."""
    g = np.random.default_rng(4)
    a = g.integers(0, 4, 5000)
    data = pd.DataFrame(
        {"a": a, "noise": g.integers(0, 4, 5000), "b": (a + (g.random(5000) < 0.05)) % 4}
    ).astype(np.int16)
    domain = Domain(names=("a", "noise", "b"), sizes=(4, 4, 4))
    hits = 0
    for seed in range(10):
        gen = PrivBayes(PrivBayesHyperparameters(flavor="degree", degree=1), epsilon=1000.0).fit(
            data, domain=domain, ledger=Ledger(total_epsilon=1000), rng=PrivacyRNG.from_seed(seed)
        )
        edges = {(p, x) for x, ps in gen.network_ for p in ps}
        hits += (0, 2) in edges or (2, 0) in edges
    assert hits == 10


def test_data_outside_domain_is_rejected_before_any_charge():
    data = pd.DataFrame({"a": [0, 1, 4], "b": [0, 1, 1]}).astype(np.int16)
    ledger = Ledger(total_epsilon=1)
    gen = PrivBayes(PrivBayesHyperparameters(flavor="degree", degree=1), epsilon=1.0)
    with pytest.raises(
        DataError, match=re.escape("column 'a' holds codes outside the public domain 0..3")
    ):
        gen.fit(
            data,
            domain=Domain(names=("a", "b"), sizes=(4, 2)),
            ledger=ledger,
            rng=PrivacyRNG.secure(),
        )
    assert ledger.charges == ()


def test_overspend_is_refused_before_any_charge():
    data = _codes(100, (3, 3), seed=0)
    ledger = Ledger(total_epsilon=0.5)
    gen = PrivBayes(PrivBayesHyperparameters(flavor="degree", degree=1), epsilon=1.0)
    with pytest.raises(BudgetExceededError):
        gen.fit(
            data,
            domain=Domain(names=("a", "b"), sizes=(3, 3)),
            ledger=ledger,
            rng=PrivacyRNG.secure(),
        )
    assert ledger.charges == ()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"flavor": "theta"}, "the theta flavor needs theta > 0"),
        ({"flavor": "degree", "degree": 0}, "the degree flavor needs an integer degree >= 1"),
        ({"flavor": "degree", "degree": 2, "theta": 3}, "and no theta"),
        ({"flavor": "other"}, "flavor ('other') must be 'theta' or 'degree'"),
        (
            {"flavor": "theta", "theta": 4, "epsilon_split": 0},
            "epsilon_split (0) must be in (0, 1)",
        ),
    ],
)
def test_bad_hyperparameters(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        PrivBayesHyperparameters(**kwargs)


def test_unknown_hyperparameter_is_a_type_error():
    with pytest.raises(TypeError, match="unexpected keyword argument 'depth'"):
        PrivBayesHyperparameters(flavor="degree", degree=2, depth=3)  # type: ignore[call-arg]


def test_sampling_matches_fitted_conditionals():
    """At a huge budget the sample reproduces the data's 2-way marginals closely."""
    sizes = (3, 4)
    data = _codes(20_000, sizes, seed=5)
    domain = Domain(names=("a", "b"), sizes=sizes)
    gen = PrivBayes(PrivBayesHyperparameters(flavor="degree", degree=1), epsilon=1e4).fit(
        data, domain=domain, ledger=Ledger(total_epsilon=1e4), rng=PrivacyRNG.from_seed(0)
    )
    out = gen.sample(200_000, rng=np.random.default_rng(0))
    for i, j in itertools.product(range(3), range(4)):
        p = np.mean((data.a == i) & (data.b == j))
        q = np.mean((out.a == i) & (out.b == j))
        assert abs(p - q) < 0.006  # sampling sd <= sqrt(.25/2e5) ~ 0.0011; 5 sd margin


def test_only_uncovered_families_are_released():
    sizes = (3, 4, 2, 3)
    data = _codes(3000, sizes, seed=2)
    domain = Domain(names=tuple(data.columns), sizes=sizes)
    ledger = Ledger(total_epsilon=1)
    gen = PrivBayes(PrivBayesHyperparameters(flavor="degree", degree=2), epsilon=1.0).fit(
        data, domain=domain, ledger=ledger, rng=PrivacyRNG.from_seed(3)
    )
    families = covering_families(gen.network_)
    assert len(families) == len(sizes) - 2  # d - k tables for a degree-k network
    assert "Laplace on 2 joint count tables" in ledger.charges[-1].what
    for x, parents in gen.network_:  # every family is inside a released one
        assert any({x, *parents} <= set(f) for f in families)


def test_conditionals_come_from_the_covering_joint():
    """At a huge budget a derived conditional equals the data's conditional."""
    sizes = (3, 4)
    data = _codes(50_000, sizes, seed=6)
    domain = Domain(names=("a", "b"), sizes=sizes)
    gen = PrivBayes(PrivBayesHyperparameters(flavor="degree", degree=1), epsilon=1e6).fit(
        data, domain=domain, ledger=Ledger(total_epsilon=1e6), rng=PrivacyRNG.from_seed(0)
    )
    first, _ = gen.network_[0]
    marginal = np.bincount(data.iloc[:, first], minlength=sizes[first]) / len(data)
    np.testing.assert_allclose(gen.conditionals_[0][0], marginal, atol=1e-4)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda r: st.integers(1, 12).flatmap(
            lambda c: st.lists(st.integers(0, 40), min_size=r * c, max_size=r * c).map(
                lambda v: np.array(v).reshape(r, c)
            )
        )
    )
)
def test_mutual_information_matches_scikit_learn(joint):
    # The same quantity as sklearn's mutual_info_score on a contingency table, to
    # rounding (1e-12 nats, far below the exponential mechanism's noise scale).
    from sklearn.metrics import mutual_info_score

    expected = 0.0 if joint.sum() == 0 else mutual_info_score(None, None, contingency=joint)
    assert mutual_information(joint) == pytest.approx(expected, abs=1e-12)

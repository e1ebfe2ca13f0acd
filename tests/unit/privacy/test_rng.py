"""Randomness: secure by default, seeds reproducible, mechanisms with the right law."""

from __future__ import annotations

import numpy as np
import pytest
from randomgen import ChaCha
from scipy import stats

from synthflow.privacy.rng import PrivacyRNG

# Tumult-style thresholds: with ~1e5 samples a correct sampler gives p >> 1e-20, while a
# 30% wrong scale gives p << 1e-20; a fixed seed keeps the test deterministic.
P_THRESHOLD = 1e-20


def test_secure_is_default_and_uses_chacha():
    rng = PrivacyRNG.secure()
    assert rng.is_secure and rng.describe() == {"secure": True, "seed": None}
    assert isinstance(rng.generator().bit_generator, ChaCha)
    # two secure generators are independent streams
    assert not np.array_equal(rng.generator().random(4), rng.generator().random(4))


def test_constructor_is_not_public():
    with pytest.raises(TypeError, match=r"use PrivacyRNG\.secure"):
        PrivacyRNG(seed=1)


@pytest.mark.parametrize("seed", [-1, 1.5, True, "3"])
def test_bad_seed(seed):
    with pytest.raises(ValueError, match="must be a non-negative integer"):
        PrivacyRNG.from_seed(seed)


def test_seeded_is_reproducible():
    a, b = PrivacyRNG.from_seed(11), PrivacyRNG.from_seed(11)
    np.testing.assert_array_equal(
        a.laplace(np.zeros(5), sensitivity=1, epsilon=1),
        b.laplace(np.zeros(5), sensitivity=1, epsilon=1),
    )
    assert a.exponential_mechanism([1, 2, 3], sensitivity=1, epsilon=1) == (
        b.exponential_mechanism([1, 2, 3], sensitivity=1, epsilon=1)
    )
    np.testing.assert_array_equal(a.generator().random(3), b.generator().random(3))


@pytest.mark.parametrize("secure", [True, False])
def test_laplace_scale_and_power(secure):
    rng = PrivacyRNG.secure() if secure else PrivacyRNG.from_seed(5)
    sens, eps = 2.0, 0.5
    noise = rng.laplace(np.zeros(100_000), sensitivity=sens, epsilon=eps)
    scale = sens / eps
    assert stats.kstest(noise, stats.laplace(scale=scale).cdf).pvalue > P_THRESHOLD
    for wrong in (0.7 * scale, 1.3 * scale):
        assert stats.kstest(noise, stats.laplace(scale=wrong).cdf).pvalue < P_THRESHOLD


def test_laplace_neighbour_bound():
    """P[M(0) <= 0] <= e^eps P[M(1) <= 0] + slack (diffprivlib's neighbour check)."""
    rng = PrivacyRNG.from_seed(3)
    eps, n = 1.0, 200_000
    p0 = np.mean(rng.laplace(np.zeros(n), sensitivity=1, epsilon=eps) <= 0)
    p1 = np.mean(rng.laplace(np.ones(n), sensitivity=1, epsilon=eps) <= 0)
    # exact values 0.5 and 0.5 e^-1 = 0.184: the bound holds with equality; slack 0.01
    # covers sampling error (sd ~ 0.0011 at n = 2e5).
    assert p0 <= np.exp(eps) * p1 + 0.01
    assert p0 > np.exp(eps) * p1 - 0.01  # and the mechanism is not needlessly noisy


def test_exponential_mechanism_probabilities():
    rng = PrivacyRNG.from_seed(8)
    utilities, sens, eps = [0.0, 1.0, 3.0], 1.0, 1.0
    draws = np.array(
        [rng.exponential_mechanism(utilities, sensitivity=sens, epsilon=eps) for _ in range(20_000)]
    )
    weights = np.exp(eps * np.array(utilities) / (2 * sens))
    expected = weights / weights.sum() * len(draws)
    observed = np.bincount(draws, minlength=3)
    assert stats.chisquare(observed, expected).pvalue > 1e-6
    # power: the law exp(eps u / sens) (missing the factor 2) is rejected
    wrong = np.exp(eps * np.array(utilities) / sens)
    assert stats.chisquare(observed, wrong / wrong.sum() * len(draws)).pvalue < 1e-20


def test_uniform_index_and_bernoulli():
    rng = PrivacyRNG.from_seed(2)
    counts = np.bincount([rng.uniform_index(4) for _ in range(8000)], minlength=4)
    assert stats.chisquare(counts).pvalue > 1e-6
    assert 0.2 < np.mean([rng.bernoulli(0.25) for _ in range(8000)]) < 0.3
    with pytest.raises(ValueError, match="must be in"):
        rng.bernoulli(1.5)


def test_exponential_mechanism_survives_huge_utilities():
    rng = PrivacyRNG.from_seed(3)
    utilities = [1e7, 1e7 - 1, 0.0]  # exp(eps u / 2) overflows without the shift
    draws = [rng.exponential_mechanism(utilities, sensitivity=1, epsilon=2.0) for _ in range(2000)]
    # P(0) / P(1) = e^(eps / 2) = e: about 73% vs 27%; candidate 2 never (prob ~ e^-1e7)
    counts = np.bincount(draws, minlength=3)
    assert counts[2] == 0
    assert 0.68 < counts[0] / 2000 < 0.78


def test_samplers_equal_diffprivlibs():
    """Our restated samplers give exactly diffprivlib's output for the same randomness.

    rng.py restates diffprivlib's four-uniform Laplace and its exponential mechanism
    (importing diffprivlib loads scikit-learn in every worker); a changed formula, a
    dropped factor 2 or a different uniform stream would make these differ.
    """
    from diffprivlib.mechanisms import Exponential, Laplace

    from synthflow.privacy.rng import exponential_index, standard_laplace

    u = np.random.default_rng(0).random((4, 10_000))
    np.testing.assert_array_equal(standard_laplace(*u), Laplace._laplace_sampler(*u))

    gen = np.random.default_rng(1)
    for _ in range(300):
        k = int(gen.integers(2, 12))
        utilities = list(gen.normal(0, 5, k).round(int(gen.integers(0, 3))))
        sens, eps = float(gen.choice([0.0, 0.5, 1.0, 2.0])), float(gen.uniform(0.05, 5))
        uniform = float(gen.random())
        shifted = [x - max(utilities) for x in utilities]
        mech = Exponential(epsilon=eps, sensitivity=sens, utility=shifted)
        mech._rng = type("Fixed", (), {"random": staticmethod(lambda u=uniform: u)})()
        ours = exponential_index(shifted, sensitivity=sens, epsilon=eps, uniform=uniform)
        assert ours == mech.randomise()

    # Seeded mode draws the uniform from the same RandomState stream diffprivlib used.
    seeded = PrivacyRNG.from_seed(4)
    state = np.random.RandomState(np.random.MT19937(np.random.SeedSequence(4).spawn(1)[0]))
    utilities = [0.0, 2.0, 1.0, -3.0]
    for _ in range(200):
        ref = Exponential(epsilon=1.0, sensitivity=1.0, utility=[u - 2.0 for u in utilities],
                          random_state=state).randomise()  # fmt: skip
        assert seeded.exponential_mechanism(utilities, sensitivity=1.0, epsilon=1.0) == ref


def test_exponential_mechanism_refuses_bad_parameters():
    rng = PrivacyRNG.from_seed(1)
    with pytest.raises(ValueError, match="epsilon > 0"):
        rng.exponential_mechanism([0.0, 1.0], sensitivity=1.0, epsilon=0.0)
    with pytest.raises(ValueError, match="sensitivity >= 0"):
        rng.exponential_mechanism([0.0, 1.0], sensitivity=-1.0, epsilon=1.0)

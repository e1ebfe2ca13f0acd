"""The workload generator with discrete Gaussian noise (``noise: gaussian``, #37).

Each privacy claim is checked against the test's own knowledge, never the code's: a
marginal's count vector moves by at most sqrt(2) in L2 norm when one record is replaced
(checked on neighbours in test_workload.py), a discrete Gaussian of parameter sigma on it is
(2 / (2 sigma^2))-zCDP (Canonne, Kamath and Steinke 2020, Theorem 4; recomputed with
OpenDP's privacy map), zCDP adds up, and the (epsilon, delta) conversion is checked
against OpenDP's and against the textbook bound.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from synthflow.data import load_data
from synthflow.errors import BudgetExceededError, InfeasibleConfigurationError
from synthflow.generators import make_generator
from synthflow.generators.workload import (
    WorkloadHyperparameters,
)
from synthflow.privacy import accounting, zcdp
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Transformer

RELEASE = {"mother_age": "b"}
GAUSS = {"noise": "gaussian", "delta": 1e-6, "iters": 50}


def _exact_sd(sigma: float) -> float:
    """Standard deviation of the discrete Gaussian, from its probability mass function."""
    k = np.arange(-int(40 * sigma) - 10, int(40 * sigma) + 11)
    w = np.exp(-(k**2) / (2 * sigma**2))
    return float(np.sqrt((w * k**2).sum() / w.sum()))


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 2.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-6])
def test_zcdp_conversion_is_valid_and_tight(epsilon, delta):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    rho = zcdp.zcdp_rho(epsilon, delta=delta)
    # The conversion at rho spends at most epsilon and is within 1% of it (bisection).
    assert zcdp.zcdp_epsilon(rho, delta=delta) <= epsilon
    assert zcdp.zcdp_epsilon(rho * 1.02, delta=delta) > epsilon
    # Never looser than the textbook bound rho + 2 sqrt(rho log(1/delta)) (Bun-Steinke).
    assert epsilon <= rho + 2 * math.sqrt(rho * math.log(1 / delta))
    # OpenDP's own conversion (the optimal order, not a grid) gives at most our epsilon,
    # and ours is within 3% of it: the grid of orders costs little.
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    meas = dp.c.make_zCDP_to_approxDP(
        space >> dp.m.then_gaussian(scale=1.0 / math.sqrt(2 * rho))
    )  # sensitivity 1 at sigma 1/sqrt(2 rho): rho-zCDP
    curve = meas.map(1.0)
    theirs = curve.epsilon(delta)
    assert theirs <= epsilon * (1 + 1e-9)
    assert epsilon <= theirs * 1.03


def test_gaussian_design_spends_rho_and_keeps_the_laplace_proportions(births_spec):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    tr = Transformer(births_spec, RELEASE)
    laplace = make_generator("workload", {}, epsilon=1.0, transformer=tr).design(tr.domain)
    gauss = make_generator("workload", GAUSS, epsilon=1.0, transformer=tr).design(tr.domain)
    assert gauss.rho == pytest.approx(zcdp.zcdp_rho(1.0, delta=1e-6))
    # The test's own zCDP sum over the marginals (L2 sensitivity sqrt 2), recomputed with
    # OpenDP's map of the sampler that adds the noise (d_in 1: 1 / (2 sigma^2)).
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int)
    spent = math.fsum(2 * (space >> dp.m.then_gaussian(scale=m.sigma)).map(1) for m in gauss.plan)
    assert spent == pytest.approx(gauss.rho, rel=1e-9)
    assert zcdp.zcdp_epsilon(spent, delta=1e-6) <= 1.0
    # Same marginals; the noise keeps the Laplace plan's ratios (sigma_i * eps_i constant).
    assert [m.clique for m in gauss.plan] == [m.clique for m in laplace.plan]
    ratio = [m.sigma * m.epsilon for m in gauss.plan]
    assert max(ratio) == pytest.approx(min(ratio), rel=1e-9)
    # And about half the noise of discrete Laplace at the same epsilon on births' 21
    # marginals (measured 0.53-0.72 per marginal at these shares; < 0.8 everywhere).
    for g, lap in zip(gauss.plan, laplace.plan, strict=True):
        assert g.stddev < 0.8 * lap.stddev


@pytest.mark.parametrize("secure", [False, True])
@pytest.mark.parametrize("sigma", [0.7, 6.3, 40.0])
def test_discrete_gaussian_has_the_stated_law(secure, sigma):
    rng = PrivacyRNG.secure() if secure else PrivacyRNG.from_seed(11)
    n = 200_000
    counts = np.full(n, 17, dtype=np.int64)
    noise = rng.discrete_gaussian(counts, sigma=sigma) - counts
    sd = _exact_sd(sigma)
    assert np.issubdtype(noise.dtype, np.integer)
    # The mean of n draws has sd sd/sqrt(n): 5 of them bound a false failure below 1e-6;
    # the sample sd of 200K draws is within 1.5% (about 9 of its own sds).
    assert abs(noise.mean()) < 5 * sd / math.sqrt(n)
    assert noise.std() == pytest.approx(sd, rel=0.015)
    if sigma < 1:  # the mass function itself: P(0) and P(+-1) within 5 sds of theirs
        w = np.exp(-(np.arange(-8, 9) ** 2) / (2 * sigma**2))
        pmf = w / w.sum()
        for k in (0, 1, -1):
            p = pmf[k + 8]
            assert abs(np.mean(noise == k) - p) < 5 * math.sqrt(p * (1 - p) / n)


def test_gaussian_fit_charges_epsilon_and_delta_once_and_draws_what_it_charged(
    nvss_10k, births_spec, monkeypatch
):
    raw = load_data(nvss_10k, births_spec, public=True).frame
    tr = Transformer(births_spec, RELEASE)
    codes = tr.forward(raw)
    sigmas: list[float] = []
    real = PrivacyRNG.discrete_gaussian

    def spy(self, counts, *, sigma):
        sigmas.append(float(sigma))
        return real(self, counts, sigma=sigma)

    monkeypatch.setattr(PrivacyRNG, "discrete_gaussian", spy)
    gen = make_generator("workload", GAUSS, epsilon=0.8, transformer=tr)
    ledger = Ledger(total_epsilon=0.8, total_delta=1e-6)
    gen.fit(codes, domain=tr.domain, ledger=ledger, rng=PrivacyRNG.from_seed(0))
    (charge,) = ledger.charges
    assert (charge.epsilon, charge.delta, charge.mechanism) == (0.8, 1e-6, "discrete_gaussian")
    # What the draws really spend (each marginal: L2 sensitivity sqrt 2, so 1/sigma^2),
    # converted by the test: within the charged (epsilon, delta). Halving every sigma
    # spends 4x rho and fails here.
    assert len(sigmas) == 21
    rho = math.fsum(2.0 / (2 * s**2) for s in sigmas)
    assert zcdp.zcdp_epsilon(rho, delta=charge.delta) <= charge.epsilon
    assert zcdp.zcdp_epsilon(rho / 0.98, delta=charge.delta) > 0.98 * charge.epsilon
    assert gen.privacy_cost.delta == 1e-6
    # Its Renyi curve is rho * a (Papernot-Steinke can account it).
    a = np.asarray(accounting.RENYI_ORDERS)
    assert np.allclose(gen.renyi(len(codes)), rho * a, rtol=1e-6)
    # A ledger without the delta refuses before anything is charged or drawn.
    sigmas.clear()
    no_delta = Ledger(total_epsilon=5.0, total_delta=1e-7)
    with pytest.raises(BudgetExceededError):
        make_generator("workload", GAUSS, epsilon=0.8, transformer=tr).fit(
            codes, domain=tr.domain, ledger=no_delta, rng=PrivacyRNG.from_seed(0)
        )
    assert no_delta.charges == () and sigmas == []


def test_gaussian_noise_refuses_bad_settings(births_spec):
    with pytest.raises(ValueError, match="needs a delta"):
        WorkloadHyperparameters(noise="gaussian")
    with pytest.raises(ValueError, match="pure DP"):
        WorkloadHyperparameters(delta=1e-6)
    with pytest.raises(ValueError, match="'laplace' or 'gaussian'"):
        WorkloadHyperparameters(noise="normal", delta=1e-6)
    tr = Transformer(births_spec, RELEASE)
    gen = make_generator("workload", {**GAUSS, "max_model_size": 0.01}, epsilon=1.0, transformer=tr)
    with pytest.raises(InfeasibleConfigurationError, match="largest junction-tree clique"):
        gen.check_feasible(tr.domain, 1000)  # the fixed pairs alone do not fit: refused


@pytest.mark.parametrize("law", ["discrete_gaussian", "discrete_laplace"])
def test_release_samplers_take_counts_beyond_32_bits(law):
    # A Gaussian fit's snapped coefficients reach n / g (above 2**31 at about 2M rows);
    # OpenDP's default integer is 32-bit, which failed after the ledger was charged.
    big = np.array([3_000_000_000, 2**40], dtype=np.int64)
    kw = {"sigma": 5.0} if law == "discrete_gaussian" else {"scale": 5.0}
    out = getattr(PrivacyRNG.secure(), law)(big, **kw)
    assert np.all(np.abs(out - big) < 200)  # 40 sds of noise

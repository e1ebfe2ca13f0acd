"""Renyi DP curves and Papernot-Steinke selection accounting ([gans] item 4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from synthflow.errors import ConfigError
from synthflow.privacy import accounting as acc
from synthflow.release.cost import selection_cost
from synthflow.space import expand_space

ORDERS = np.asarray(acc.RENYI_ORDERS)


def _renyi(p: np.ndarray, q: np.ndarray, a: float) -> float:
    """Renyi divergence of order ``a`` of two discrete distributions."""
    return float(np.log(np.sum(p**a * q ** (1 - a))) / (a - 1))


def test_pure_curve_is_randomized_responses_and_below_the_textbook_bounds():
    for eps in (0.05, 0.5, 2.0, 8.0):
        curve = acc.pure_renyi(eps)
        p = np.array([math.exp(eps), 1.0]) / (1 + math.exp(eps))
        rr = np.array([_renyi(p, p[::-1], a) for a in ORDERS[:60]])
        # the divergence of binary randomized response itself (relative 1e-9: float sums)
        np.testing.assert_allclose(curve[:60], rr, rtol=1e-9)
        assert np.all(curve <= eps + 1e-12)
        assert np.all(curve <= ORDERS * eps**2 / 2 + 1e-12)


def test_pure_curve_covers_the_laplace_mechanism():
    # Any eps-DP mechanism is dominated; the Laplace mechanism's exact curve (Mironov
    # 2017, Prop. 6, as dp-accounting computes it) must lie below ours.
    for eps in (0.1, 1.0, 4.0):
        lap = rdp.RdpAccountant(orders=list(ORDERS))
        lap.compose(dp_event.LaplaceDpEvent(1 / eps))
        assert np.all(lap.rdp <= acc.pure_renyi(eps) + 1e-12)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0.01, 1.0), min_size=9, max_size=9),
    st.sampled_from([1.5, 2.0, 3.0, 7.5, 20.0]),
)
def test_weak_triangle_inequality_that_replace_one_rests_on(w, a):
    # Mironov (2017) Prop. 11 with p = q = 2: the step from add/remove to replace-one.
    p, q, r = (np.asarray(w[i : i + 3]) / sum(w[i : i + 3]) for i in (0, 3, 6))
    lhs = _renyi(p, r, a)
    rhs = (a - 0.5) / (a - 1) * _renyi(p, q, 2 * a) + _renyi(q, r, 2 * a - 1)
    assert lhs <= rhs + 1e-9


def _replace_one_mixture_divergence(q: float, sigma: float, a: float) -> float:
    """D_a between one DP-SGD step on neighbours that replace one row (1-D, clip 1).

    The replaced row's clipped gradient moves from +1 to -1: P = (1-q) N(0) + q N(1),
    Q = (1-q) N(0) + q N(-1), noise sd sigma.
    """

    def log_dens(x, mu):
        return np.logaddexp(
            math.log1p(-q) + stats.norm.logpdf(x, 0, sigma),
            math.log(q) + stats.norm.logpdf(x, mu, sigma),
        )

    # in logs: the tails' ratio overflows in floats; beyond 12 sd the mass is negligible
    val, _ = integrate.quad(
        lambda x: math.exp(a * log_dens(x, 1) + (1 - a) * log_dens(x, -1)),
        -12 * sigma - 1,
        12 * sigma + 1,
        limit=400,
        epsabs=0,
        epsrel=1e-10,
    )
    return math.log(val) / (a - 1)


@pytest.mark.parametrize(("q", "sigma"), [(0.1, 1.0), (0.5, 2.0), (0.02, 0.8)])
def test_dpsgd_curve_covers_a_replace_one_step(q, sigma):
    orders = [1.5, 2.0, 4.0, 8.0]
    ours = acc.dpsgd_renyi(sample_rate=q, noise_multiplier=sigma, steps=1, orders=orders)
    exact = [_replace_one_mixture_divergence(q, sigma, a) for a in orders]
    assert np.all(np.asarray(exact) <= ours + 1e-9)
    # and it is not vacuous at low orders (the weak triangle doubles the order, so the
    # bound loosens at high orders and small sigma; the conversion picks the best order)
    assert ours[1] <= 4 * exact[1]


def test_dpsgd_curve_is_at_least_add_remove_and_converts_above_the_pld():
    kw = {"sample_rate": 0.05, "noise_multiplier": 5.0, "steps": 1107}
    ours = acc.dpsgd_renyi(**kw)
    add_remove = rdp.RdpAccountant(orders=list(ORDERS))
    add_remove.compose(acc.dpsgd_event(**kw))
    assert np.all(ours >= add_remove.rdp)
    eps, _ = acc.renyi_epsilon(ours, delta=1e-9)
    pld = acc.dpsgd_epsilon(**kw, delta=1e-9)
    # The PLD accountant is (nearly) exact for replace-one; the Renyi route is an upper
    # bound: above it, but not far (within 25% in this setting).
    assert pld <= eps <= 1.25 * pld


@pytest.mark.parametrize("gamma", [0.01, 0.05, 0.2, 0.5])
def test_repeat_and_select_matches_dp_accounting(gamma):
    # Our Theorem 2 (geometric) against dp-accounting's RepeatAndSelectDpEvent on a
    # Gaussian base mechanism, exactly.
    ref = rdp.RdpAccountant(orders=list(ORDERS))
    ref.compose(dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(1.3), 1 / gamma, 1))
    base = acc.zcdp_renyi(1 / (2 * 1.3**2))
    np.testing.assert_allclose(acc.repeat_and_select_renyi(base, stop_probability=gamma), ref.rdp)


def test_repeat_and_select_refuses_an_unbounded_number_of_attempts():
    with pytest.raises(ValueError, match="finite mean"):
        acc.repeat_and_select_renyi(acc.pure_renyi(1.0), stop_probability=0.0)


# --- the selection's cost ----------------------------------------------------------


def test_a_pure_shortlist_keeps_liu_talwar(mixed_shortlist):
    spec, cands = mixed_shortlist
    cost = selection_cost(spec, fit_once=False, candidates=cands[:2], rows=600)
    assert cost.theorem == "liu-talwar"
    assert cost.total == pytest.approx(2 * (spec.privacy.generator_epsilon + 0.3))
    assert cost.total_delta == 0


def test_a_mixed_shortlist_costs_papernot_steinke_recomputed(mixed_shortlist):
    spec, cands = mixed_shortlist
    cost = selection_cost(spec, fit_once=False, candidates=cands, rows=600, stop_probability=0.2)
    assert cost.theorem == "papernot-steinke"
    # Recompute from the pieces: the DP-SGD candidate's steps are 2 epochs at q = 0.1,
    # plus the pure Laplace measurements of its 1-way (0.2 of epsilon) and 2-way (0.3)
    # marginals.
    steps = 20
    eps_gen = spec.privacy.generator_epsilon
    gan = acc.dpsgd_renyi(sample_rate=0.1, noise_multiplier=5.0, steps=steps)
    gan = gan + acc.pure_renyi(0.2 * eps_gen) + acc.pure_renyi(0.3 * eps_gen)
    pure = acc.pure_renyi(eps_gen)
    one = np.maximum(gan, pure) + sum(acc.pure_renyi(c.epsilon) for c in spec.criteria)
    curve = acc.repeat_and_select_renyi(one, stop_probability=0.2)
    eps, _ = acc.renyi_epsilon(curve, delta=1e-6)
    assert cost.total == pytest.approx(eps, rel=1e-12)
    assert cost.total_delta == 1e-6
    assert cost.attempt_delta == 1e-8
    # fewer attempts on average cost less
    cheaper = selection_cost(spec, fit_once=False, candidates=cands, rows=600, stop_probability=0.5)
    assert cheaper.total < cost.total
    doc = cost.to_json()
    assert doc["theorem"] == "papernot-steinke" and doc["candidates"] == [c.id for c in cands]


def test_a_mixed_shortlist_needs_a_stop_probability_and_a_delta(mixed_shortlist):
    spec, cands = mixed_shortlist
    with pytest.raises(ConfigError, match="--stop-probability in \\(0, 1\\)"):
        selection_cost(spec, fit_once=False, candidates=cands, rows=600)
    import dataclasses

    no_delta = dataclasses.replace(spec, privacy=dataclasses.replace(spec.privacy, total_delta=0.0))
    with pytest.raises(ConfigError, match=r"privacy\.total_delta is 0"):
        selection_cost(no_delta, fit_once=False, candidates=cands, rows=600, stop_probability=0.2)


def test_a_tiny_noise_multiplier_is_infeasible_not_a_memory_error(births_spec):
    # The grid's noise_multiplier 0.001: the PLD at dp-accounting's default interval
    # would allocate ~38 GiB; the coarser (still pessimistic) interval refuses the
    # configuration as infeasible before any charge.
    from synthflow.errors import InfeasibleConfigurationError
    from synthflow.generators import make_generator

    cfg = next(
        c
        for c in expand_space(births_spec)
        if c.model == "dpctgan" and c.hyperparameters["noise_multiplier"] == 0.001
    )
    gen = make_generator(cfg.model, cfg.hyperparameters, epsilon=4.0)
    with pytest.raises(InfeasibleConfigurationError, match="spend more than epsilon"):
        gen.plan_steps(10_000)
    # the interval is dp-accounting's default wherever that fits
    assert acc._pld_interval(5.0) == 1e-4

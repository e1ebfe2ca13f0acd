"""The workload generator on a wide table: tree mode (DP-selected spanning pairs)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from noise_audit import assert_draws_match_charges, record_draws

from synthflow.errors import InfeasibleConfigurationError
from synthflow.generators import make_generator
from synthflow.generators.workload import tree_score_sensitivity, tree_scores
from synthflow.ledger import Ledger
from synthflow.loader import load_spec
from synthflow.public.wide import make_wide_table
from synthflow.rng import PrivacyRNG
from synthflow.transform import Transformer

WIDE = "configs/wide_census.yaml"


@pytest.fixture(scope="module")
def wide():
    spec = load_spec(WIDE)
    tr = Transformer(spec, {c: "a" for c in spec.column_names})
    return spec, tr


def test_tree_mode_spends_exactly_epsilon_and_keeps_criteria_pairs(wide):
    _spec, tr = wide
    gen = make_generator("workload", {}, epsilon=3.0, transformer=tr)
    d = gen.design(tr.domain)
    # 15 columns: the regression/condmean/match/constraint pairs join some of them;
    # the tree adds one pair per remaining component (public: no data involved).
    assert d.tree_steps >= 1 and len(d.tree_candidates) > d.tree_steps
    assert d.total_epsilon == pytest.approx(3.0, abs=1e-12)
    fixed = {m.clique for m in d.plan}
    assert ("age", "income") in fixed and ("hours", "income") in fixed  # regression
    assert ("household", "children") in fixed  # a synthetic constraint names them
    assert not fixed & set(d.tree_candidates)


def test_births_is_not_in_tree_mode(births_spec):
    tr = Transformer(births_spec, {"mother_age": "b"})
    d = make_generator("workload", {}, epsilon=4.0, transformer=tr).design(tr.domain)
    assert d.tree_steps == 0 and d.total_epsilon == pytest.approx(4.0, abs=1e-12)


def test_refuses_before_charging_when_the_fixed_pairs_do_not_fit(wide):
    _spec, tr = wide
    gen = make_generator("workload", {"max_model_size": 0.01}, epsilon=3.0, transformer=tr)
    ledger = Ledger(total_epsilon=3.0)
    data = tr.forward(make_wide_table(500, seed=3))
    with pytest.raises(InfeasibleConfigurationError, match="largest junction-tree clique"):
        gen.fit(data, domain=tr.domain, ledger=ledger, rng=PrivacyRNG.from_seed(1))
    assert ledger.spent_epsilon == 0


@pytest.fixture(scope="module")
def fitted(wide):
    """One tree-mode fit (seeded) shared by the tests below: a fit costs ~30 s of jax."""
    _spec, tr = wide
    gen = make_generator("workload", {"iters": 100}, epsilon=3.0, transformer=tr)
    ledger = Ledger(total_epsilon=3.0)
    data = tr.forward(make_wide_table(4000, seed=3))
    with pytest.MonkeyPatch.context() as mp:
        draws = record_draws(mp)  # every sampler call, for the noise cross-check below
        gen.fit(data, domain=tr.domain, ledger=ledger, rng=PrivacyRNG.from_seed(1))
    return gen, ledger, draws


def test_tree_mode_draws_spend_what_was_charged(fitted):
    # [tests] item 1 in tree mode: pairs chosen by the exponential mechanism (a score's
    # sensitivity is 2: an L1 distance of a count table from a released product), then
    # measured with every other marginal (count vectors: L1 2).
    _gen, ledger, draws = fitted
    assert any(d.kind == "exponential" for d in draws), "tree mode drew no pair"
    spent = assert_draws_match_charges(draws, ledger, lambda d: 2.0)
    assert spent["select"] > 0 and sum(spent.values()) == pytest.approx(3.0, rel=1e-9)


def test_tree_fit_charges_exactly_epsilon_and_connects_every_column(wide, fitted):
    _spec, tr = wide
    gen, ledger, _ = fitted
    assert ledger.spent_epsilon == pytest.approx(3.0, abs=1e-9)
    assert len(gen.tree_) == gen.design(tr.domain).tree_steps
    out = gen.sample(2000, rng=np.random.default_rng(0))
    assert list(out.columns) == list(tr.domain.names) and len(out) == 2000


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 60))
def test_tree_score_sensitivity_neighbours(wide, seed, n):
    _spec, tr = wide
    rng = np.random.default_rng(seed)
    sizes = tr.domain.sizes
    codes = np.column_stack([rng.integers(0, s, n) for s in sizes])
    other = codes.copy()
    other[rng.integers(n)] = [rng.integers(0, s) for s in sizes]
    one_way = {c: rng.dirichlet(np.ones(s)) for c, s in zip(tr.domain.names, sizes, strict=True)}
    pairs = [("age", "income"), ("country", "commute"), ("sex", "disability")]
    a = tree_scores(codes, tr.domain, pairs, one_way)
    b = tree_scores(other, tr.domain, pairs, one_way)
    assert np.abs(a - b).max() <= tree_score_sensitivity() + 1e-9
    assert math.isfinite(a.sum())


def test_selected_tree_is_a_forest_joining_components(wide, fitted):
    # Every selected pair must join two components (a pair drawn twice, or one inside
    # a component, would waste budget and was a bug of the union-find).
    from synthflow.generators.workload import _Forest

    _spec, tr = wide
    gen, _, _ = fitted
    d = gen.design(tr.domain)
    forest = _Forest(tr.domain.names)
    for cl in [m.clique for m in d.plan] + list(d.zeros):
        forest.union(cl)
    assert len(set(gen.tree_)) == len(gen.tree_)
    for pair in gen.tree_:
        assert forest.union(pair), f"{pair} joins no two components"
    assert len({forest.find(c) for c in tr.domain.names}) == 1  # everything connected

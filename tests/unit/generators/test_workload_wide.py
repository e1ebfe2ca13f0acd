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
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.public.wide import make_wide_table
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


def test_the_tree_spans_the_table_whatever_columns_the_marginals_criterion_reads(tmp_path):
    """[wide]: candidates are every unmeasured pair, so the design connects every column.

    With both marginal criteria on the 5 columns the regression already joins, a tree
    over its own pairs could not reach the 10 other components (a real census table's
    (relationship, sex) stayed independent this way). The public design must plan enough
    steps to join every component of the fixed cliques, and its candidates must be able to.
    """
    import yaml

    from synthflow.generators.workload import _Forest

    raw = yaml.safe_load(open(WIDE).read())
    for crit in raw["acceptance"]["criteria"][:2]:
        assert crit["kind"] in ("marginals", "marginal_tvd")
        crit["columns"] = ["age", "education", "hours", "income", "sex"]
    path = tmp_path / "subset.yaml"
    path.write_text(yaml.safe_dump(raw))
    spec = load_spec(path)
    tr = Transformer(spec, {c: "a" for c in spec.column_names})
    # a small model limit puts this table in tree mode despite fewer criterion pairs
    d = make_generator("workload", {"max_model_size": 10.0}, epsilon=3.0, transformer=tr).design(
        tr.domain
    )
    assert d.tree_steps >= 1
    forest = _Forest(tr.domain.names)
    for cl in [m.clique for m in d.plan] + list(d.zeros):
        forest.union(cl)
    components = len({forest.find(c) for c in tr.domain.names})
    assert d.tree_steps == components - 1  # a spanning tree: one pair per join
    for pair in d.tree_candidates:
        forest.union(pair)
    assert len({forest.find(c) for c in tr.domain.names}) == 1


def test_gaussian_tree_mode_is_one_rho_split_over_its_parts(wide):
    """MST's accounting in-house: measurements, selections and tree pairs add up to rho.

    A marginal of sigma s costs 2 / (2 s**2) = 1 / s**2 (L2 sensitivity sqrt(2)); an
    exponential-mechanism step at epsilon e costs e**2 / 8 (bounded range).
    """
    from synthflow.privacy.zcdp import zcdp_rho

    _spec, tr = wide
    hp = {"noise": "gaussian", "delta": 1e-6}
    d = make_generator("workload", hp, epsilon=3.0, transformer=tr).design(tr.domain)
    assert d.tree_steps >= 1 and d.extra_steps == 6 and d.tree_sigma is not None
    rho = zcdp_rho(3.0, delta=1e-6)
    parts = (
        sum(1 / m.sigma**2 for m in d.plan)
        + d.picks * d.select_epsilon**2 / 8
        + d.picks / d.tree_sigma**2
    )
    assert d.rho == pytest.approx(rho, rel=1e-12) and parts == pytest.approx(rho, rel=1e-9)


def test_gaussian_tree_fit_charges_once_its_draws_spend_it_and_it_spans(wide):
    """A Gaussian tree-mode fit: one (epsilon, delta) charge, which its draws really spend.

    The test converts what the draws spend (each discrete Gaussian marginal 1 / sigma**2,
    L2 sensitivity sqrt(2); each exponential-mechanism step epsilon**2 / 8 at its
    declared sensitivity, 2) into (epsilon, delta): within the charge, and above 98% of
    it (halving one sigma, or an EM step at twice its epsilon, fails here).
    """
    from synthflow.generators.workload import _Forest
    from synthflow.privacy import zcdp

    _spec, tr = wide
    hp = {"noise": "gaussian", "delta": 1e-6, "iters": 50}
    gen = make_generator("workload", hp, epsilon=2.0, transformer=tr)
    ledger = Ledger(total_epsilon=2.0, total_delta=1e-6)
    data = tr.forward(make_wide_table(3000, seed=5))
    sigmas: list[float] = []
    real = PrivacyRNG.discrete_gaussian

    def spy(self, counts, *, sigma):
        sigmas.append(float(sigma))
        return real(self, counts, sigma=sigma)

    with pytest.MonkeyPatch.context() as mp:
        draws = record_draws(mp)
        mp.setattr(PrivacyRNG, "discrete_gaussian", spy)
        gen.fit(data, domain=tr.domain, ledger=ledger, rng=PrivacyRNG.from_seed(2))
    (charge,) = ledger.charges
    assert (charge.epsilon, charge.delta) == (2.0, 1e-6)
    em = [x for x in draws if x.kind == "exponential"]
    d = gen.design(tr.domain)
    assert len(em) == len(gen.tree_) == d.picks > d.tree_steps >= 1
    assert all(x.sensitivity == tree_score_sensitivity() for x in em)
    assert len(sigmas) == len(d.plan) + len(gen.tree_)
    rho = math.fsum(1 / s**2 for s in sigmas) + math.fsum(x.epsilon**2 / 8 for x in em)
    assert zcdp.zcdp_epsilon(rho, delta=1e-6) <= 2.0 * (1 + 1e-9)
    assert zcdp.zcdp_epsilon(rho, delta=1e-6) > 0.98 * 2.0  # nothing left unspent
    forest = _Forest(tr.domain.names)
    for cl in [m.clique for m in d.plan] + list(d.zeros) + list(gen.tree_):
        forest.union(cl)
    assert len({forest.find(c) for c in tr.domain.names}) == 1


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 60))
def test_extra_pair_score_sensitivity_neighbours(wide, seed, n):
    # The extra pairs' score: L1 distance of the data's pair counts from those of rows
    # drawn from a model of released measurements (fixed here): 2 under replace-one.
    from synthflow.generators.workload import model_scores

    _spec, tr = wide
    rng, codes, other = _neighbours(tr, seed, n)
    sizes = tr.domain.sizes
    synthetic = np.column_stack([rng.integers(0, s, n) for s in sizes])
    pairs = [("age", "income"), ("country", "commute"), ("sex", "disability")]
    a = model_scores(codes, tr.domain, pairs, synthetic)
    b = model_scores(other, tr.domain, pairs, synthetic)
    assert np.abs(a - b).max() <= tree_score_sensitivity() + 1e-9


def test_extra_pairs_catch_a_dependence_inside_a_component():
    """[wide] on a real table: RAND HIE's coinsurance and deductible.

    The criteria's cliques already connect the two columns (through visits and the
    deductible plan), so a spanning tree never measures them, and the model makes them
    nearly independent: the free plan (coinsurance 0) has no deductible, yet with no
    extra pair the model puts 13 points of the rows wrong in that table. With the
    default 6 extra pairs the exponential mechanism finds it (seeded; its score is the
    largest by far) and the error falls below 0.05 (two real halves: 0.011 worst pair).
    """
    pytest.importorskip("statsmodels")
    from synthflow.public.randhie import randhie_frame

    spec = load_spec("configs/randhie.yaml")
    tr = Transformer(spec, {})
    data = tr.forward(randhie_frame())
    errors = {}
    for extra in (0, 6):
        hp = {"noise": "gaussian", "delta": 1e-9, "extra_pairs": extra, "iters": 200}
        gen = make_generator("workload", hp, epsilon=4.0, transformer=tr)
        ledger = Ledger(total_epsilon=4.0, total_delta=1e-6)
        gen.fit(data, domain=tr.domain, ledger=ledger, rng=PrivacyRNG.from_seed(3))
        out = gen.sample(len(data), rng=np.random.default_rng(0))
        real = data.groupby(["coinsurance", "deductible"]).size() / len(data)
        synth = out.groupby(["coinsurance", "deductible"]).size() / len(out)
        errors[extra] = float(real.subtract(synth, fill_value=0).abs().max())
        assert len(gen.tree_) == gen.design(tr.domain).picks
    assert errors[0] > 0.1 and errors[6] < 0.05, errors


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
    assert len(gen.tree_) == gen.design(tr.domain).picks  # the tree, then the extra pairs
    out = gen.sample(2000, rng=np.random.default_rng(0))
    assert list(out.columns) == list(tr.domain.names) and len(out) == 2000


def _neighbours(tr, seed, n):
    """``n`` random rows of the wide domain and a neighbour (one row replaced)."""
    rng = np.random.default_rng(seed)
    sizes = tr.domain.sizes
    codes = np.column_stack([rng.integers(0, s, n) for s in sizes])
    other = codes.copy()
    other[rng.integers(n)] = [rng.integers(0, s) for s in sizes]
    return rng, codes, other


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 60))
def test_tree_score_sensitivity_neighbours(wide, seed, n):
    _spec, tr = wide
    rng, codes, other = _neighbours(tr, seed, n)
    sizes = tr.domain.sizes
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
    assert len({frozenset(p) for p in gen.tree_}) == len(gen.tree_)  # no pair twice
    for pair in gen.tree_[: d.tree_steps]:  # the extra pairs after them may join none
        assert forest.union(pair), f"{pair} joins no two components"
    assert len({forest.find(c) for c in tr.domain.names}) == 1  # everything connected

"""The junction-tree sampler: numpy calibration and systematic sampling (post-processing)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from synthflow.generators._pgm_sampler import TreeSampler, _Step
from synthflow.generators._pgm_tables import _cdf
from synthflow.generators._sampling import search_in_order, systematic_draw, systematic_uniforms

# a -> b, a -> c: two children of one parent (siblings), known conditionals.
PA = np.array([0.15, 0.35, 0.5])
PB_A = np.array([[0.9, 0.1, 0.0], [0.3, 0.3, 0.4], [0.2, 0.5, 0.3]])
PC_A = np.array([[0.6, 0.4], [0.5, 0.5], [0.1, 0.9]])
SIZES = (3, 3, 2)
JOINT = PA[:, None, None] * PB_A[:, :, None] * PC_A[:, None, :]


def _siblings() -> TreeSampler:
    steps = [
        _Step(column=0, parents=(), cdf=_cdf(PA[None, :])),
        _Step(column=1, parents=(0,), cdf=_cdf(PB_A)),
        _Step(column=2, parents=(0,), cdf=_cdf(PC_A)),
    ]
    return TreeSampler(steps, SIZES)


def _counts(rows: np.ndarray) -> np.ndarray:
    return np.bincount(np.ravel_multi_index(rows.T, SIZES), minlength=JOINT.size).reshape(SIZES)


def test_systematic_uniforms_are_stratified_within_each_group():
    g = np.random.default_rng(0)
    group = g.integers(0, 4, 1000)
    u = systematic_uniforms(group, 4, g)
    assert u.min() >= 0 and u.max() < 1
    for k in range(4):
        m = int((group == k).sum())
        # each interval [j/m, (j+1)/m) holds exactly one of the group's m values
        assert sorted(np.floor(u[group == k] * m).astype(int)) == list(range(m))


def test_systematic_uniforms_with_more_groups_than_16_bit_codes():
    # above 65,536 groups the order is sorted on the int64 codes (no radix sort)
    g = np.random.default_rng(3)
    groups = 70_000
    group = np.concatenate([np.full(5, groups - 1), g.integers(0, groups, 20_000)])
    u = systematic_uniforms(group, groups, g)
    m = int((group == groups - 1).sum())
    assert sorted(np.floor(u[group == groups - 1] * m).astype(int)) == list(range(m))
    assert 0 <= u.min() and u.max() < 1


def test_systematic_draw_orders_the_inverse_cdf_queries():
    # systematic_draw gives the same uniforms as systematic_uniforms for the same stream,
    # and an order in which group + u never decreases (what search_in_order relies on
    # for speed); the search itself returns np.searchsorted's answer in any order.
    group = np.random.default_rng(0).integers(0, 300, 5_000)
    u, order = systematic_draw(group, 300, np.random.default_rng(7))
    assert np.array_equal(u, systematic_uniforms(group, 300, np.random.default_rng(7)))
    assert np.all(np.diff((group + u)[order]) >= 0)
    keys = np.sort(np.random.default_rng(1).random(900) * 300)
    for side in ("left", "right"):
        want = np.searchsorted(keys, group + u, side=side)
        shuffled = np.random.default_rng(2).permutation(len(u))
        for how in (order, shuffled, None):
            assert np.array_equal(search_in_order(keys, group + u, how, side=side), want)


def test_a_rows_systematic_uniform_is_uniform():
    # Row 0 of a group of 5 (ties in rank everywhere): over 20,000 draws its uniform's
    # deciles each hold 10% (binomial sd 0.21%; 1% is about 5 sd).
    g = np.random.default_rng(4)
    group = np.array([0, 1, 0, 0, 1, 0, 0])
    draws = np.array([systematic_uniforms(group, 2, g)[0] for _ in range(20_000)])
    deciles = np.bincount(np.floor(draws * 10).astype(int), minlength=10) / len(draws)
    assert np.all(np.abs(deciles - 0.1) < 0.01), deciles


def test_systematic_counts_are_within_one_of_expected_given_the_parents():
    n = 10_007
    rows = _siblings().sample(n, np.random.default_rng(1))
    a = np.bincount(rows[:, 0], minlength=3)
    assert np.all(np.abs(a - n * PA) < 1)  # first column: systematic over all rows
    for col, table in ((1, PB_A), (2, PC_A)):
        pair = np.zeros((3, table.shape[1]))
        np.add.at(pair, (rows[:, 0], rows[:, col]), 1)
        assert np.all(np.abs(pair - a[:, None] * table) < 1)


def test_iid_counts_carry_multinomial_noise():
    # The contrast that makes the previous test meaningful: i.i.d. rows miss by ~sqrt(n p).
    n = 10_007
    rows = _siblings().sample(n, np.random.default_rng(1), systematic=False)
    a = np.bincount(rows[:, 0], minlength=3)
    assert np.abs(a - n * PA).max() > 1


def test_each_row_has_the_model_distribution():
    # Over many small samples (7 rows: strata of size < 3, so rank and offset both
    # matter) every cell's mean count is n times its probability. 4000 repetitions give
    # each cell's mean a standard error below 0.03; 5 standard errors + 0.01 is the bound.
    g = np.random.default_rng(2)
    reps, n = 4000, 7
    total = np.zeros(SIZES)
    sq = np.zeros(SIZES)
    sampler = _siblings()
    for _ in range(reps):
        c = _counts(sampler.sample(n, g))
        total += c
        sq += c**2
    mean = total / reps
    se = np.sqrt(np.maximum(sq / reps - mean**2, 1e-12) / reps)
    assert np.all(np.abs(mean - n * JOINT) <= 5 * se + 0.01)
    assert total.ravel()[JOINT.ravel() == 0].sum() == 0  # zero-probability cells never drawn


def test_siblings_stay_conditionally_independent():
    # b and c share the parent a: a fresh random order per column keeps them
    # independent given a (systematic sampling in one shared order would couple them).
    n = 200_000
    rows = _siblings().sample(n, np.random.default_rng(3))
    counts = _counts(rows)
    for a in range(3):
        table = counts[a]
        keep = table.sum(axis=1) > 0
        result = stats.chi2_contingency(table[keep])
        assert result.pvalue > 1e-3


def test_empty_and_single_row_samples():
    sampler = _siblings()
    assert sampler.sample(0, np.random.default_rng(0)).shape == (0, 3)
    row = sampler.sample(1, np.random.default_rng(0))
    assert row.shape == (1, 3) and JOINT[tuple(row[0])] > 0


mbi = pytest.importorskip("mbi")


def _fit(cliques, sizes, seed=0):
    names = tuple(sizes)
    domain = mbi.Domain(names, tuple(sizes.values()))
    g = np.random.default_rng(seed)
    measurements = [
        mbi.LinearMeasurement(
            (g.random(int(np.prod([sizes[c] for c in cl]))) * 100).astype(np.float32),
            cl,
            stddev=1.0,
        )
        for cl in cliques
    ]
    return mbi.estimation.mirror_descent(domain, measurements, known_total=700.0, iters=30)


@pytest.mark.parametrize(
    "cliques",
    [
        [("a", "b"), ("b", "c"), ("a", "c")],  # a cycle: one triangulated clique (a, b, c)
        [("a", "b"), ("b", "c"), ("c", "d")],  # a chain of three maximal cliques
        [("a", "b"), ("c", "d")],  # two components: calibrated separately
    ],
)
def test_numpy_junction_tree_marginals_match_mbi(cliques):
    from synthflow.generators._pgm_tables import _junction_tree_marginals

    names = set().union(*map(set, cliques))
    model = _fit(cliques, {k: v for k, v in {"a": 3, "b": 4, "c": 2, "d": 3}.items() if k in names})
    tables = _junction_tree_marginals(model)
    assert set().union(*(set(axes) for axes, _ in tables)) == names
    for axes, ours in tables:
        theirs = np.asarray(model.project(axes).datavector(flatten=False), dtype=np.float64)
        # float32 potentials, sums in another order: agreement to float32 precision.
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-3)
        assert ours.sum() == pytest.approx(700.0)

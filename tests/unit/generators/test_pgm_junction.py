"""The junction-tree estimator (generators/_pgm_junction.py) against the dense fit and mbi.

Both numpy estimators parameterise the same exponential family by the same clique
potentials and take the same steps, so on a model the dense fit can hold they must agree
to rounding; on a model it cannot (a three-column clique) the plain steps must be mbi's.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from synthflow.generators._pgm import Measurement, estimate, estimator
from synthflow.generators._pgm_dense import mirror_descent_dense
from synthflow.generators._pgm_junction import junction_cells, mirror_descent_junction

NAMES = ("a", "b", "c", "d", "e")
SIZES = (3, 4, 5, 2, 6)
TOTAL = 3000.0
ZERO = ("a", "b")
MASK = np.zeros((3, 4), dtype=bool)
MASK[0, 3] = MASK[2, 1] = True


def _marg(joint: np.ndarray, names: tuple[str, ...], cl: tuple[str, ...]) -> np.ndarray:
    drop = tuple(i for i, n in enumerate(names) if n not in cl)
    kept = [n for n in names if n in cl]
    return np.transpose(joint.sum(axis=drop), [kept.index(a) for a in cl])


def _problem(pairs: list[tuple[str, ...]], seed: int = 3):
    """Noisy 1-ways and ``pairs`` of a random joint with two forbidden (a, b) cells."""
    g = np.random.default_rng(seed)
    joint = g.dirichlet(np.ones(int(np.prod(SIZES)))).reshape(SIZES)
    joint[MASK] = 0.0
    joint *= TOTAL / joint.sum()
    meas = []
    for cl in [(n,) for n in NAMES] + pairs:
        true = _marg(joint, NAMES, cl)
        sd = 3.0 if len(cl) == 1 else 5.0
        meas.append((cl, true + g.normal(0, sd, true.shape), sd))
    start = {cl: np.zeros([SIZES[NAMES.index(a)] for a in cl]) for cl, _, _ in meas}
    for cl, noisy, _ in meas:
        if len(cl) == 1:
            p = np.clip(noisy, 0.5, None)
            start[cl] = np.log(p / p.sum())
    start[ZERO] = np.where(MASK, -1e9, 0.0)
    return meas, start


CHAIN = [("a", "b"), ("b", "c"), ("c", "d"), ("c", "e")]  # a tree: four nodes of two
SPLIT = [("a", "b"), ("c", "d")]  # two parts joined by no clique (and e alone)


@pytest.mark.parametrize("pairs", [CHAIN, SPLIT], ids=["chain", "disconnected"])
@pytest.mark.parametrize("momentum", [False, True])
def test_same_model_as_the_dense_fit(pairs, momentum):
    """Same start, same steps: every node's marginal equals the dense joint's.

    Tolerance 1e-9 of n: the two compute the same float64 recursion in a different
    order of sums (message passing against one joint table), rounding at 1e-16 per
    operation; a single different line-search decision would move counts by far more.
    """
    meas, start = _problem(pairs)
    joint = mirror_descent_dense(
        NAMES, SIZES, meas, start, total=TOTAL, iters=300, momentum=momentum
    )
    tables = mirror_descent_junction(
        NAMES, SIZES, meas, start, total=TOTAL, iters=300, momentum=momentum
    )
    assert len(tables) > 1  # really a tree of several nodes, not the joint again
    for node, table in tables:
        np.testing.assert_allclose(table, _marg(joint, NAMES, node), rtol=0, atol=1e-9 * TOTAL)
        assert table.sum() == pytest.approx(TOTAL, rel=1e-12)


def test_plain_steps_are_mbis_steps_on_a_three_column_clique():
    """A model the dense fit cannot place (a 3-column clique): mbi's marginals after 200 steps.

    Tolerance 1e-5 of n, as the dense test: mbi may run in float32 (6e-8 per operation).
    """
    mbi = pytest.importorskip("mbi")
    meas, start = _problem([("a", "b", "c"), ("c", "d")])
    tables = mirror_descent_junction(
        NAMES, SIZES, meas, start, total=TOTAL, iters=200, momentum=False
    )
    domain = mbi.Domain(NAMES, SIZES)
    pot = mbi.CliqueVector.zeros(domain, list(start))
    dtype = np.asarray(pot[ZERO].values).dtype
    for cl, v in start.items():
        pot[cl] = mbi.Factor(domain.project(cl), v.astype(dtype))
    lin = [mbi.LinearMeasurement(y.ravel().astype(dtype), cl, stddev=sd) for cl, y, sd in meas]
    model = mbi.estimation.mirror_descent(domain, lin, known_total=TOTAL, potentials=pot, iters=200)
    for node, table in tables:
        want = np.asarray(model.project(node).datavector(flatten=False), float)
        np.testing.assert_allclose(table, want, rtol=0, atol=1e-5 * TOTAL)


def test_structural_zeros_stay_zero_and_are_never_sampled():
    meas, start = _problem(CHAIN)
    tables = mirror_descent_junction(NAMES, SIZES, meas, start, total=TOTAL, iters=400)
    home = next(t for nd, t in tables if nd == ZERO)
    assert np.all(home[MASK] == 0.0)
    cliques = [cl for cl, _, _ in meas] + [ZERO]
    assert estimator(NAMES, SIZES, cliques) == "junction"  # so estimate() below goes there
    sampler = estimate(
        NAMES,
        SIZES,
        [Measurement(clique=cl, noisy=y, stddev=sd) for cl, y, sd in meas],
        total=int(TOTAL),
        zeros={ZERO: MASK},
        iters=400,
    )
    rows = sampler.sample(20_000, np.random.default_rng(1))
    assert not MASK[rows[:, 0], rows[:, 1]].any()
    # The sample follows the model: its (c, d) table is within sampling error of the fit.
    fitted = next(t for nd, t in tables if nd == ("c", "d")) / TOTAL
    counts = np.zeros((5, 2))
    np.add.at(counts, (rows[:, 2], rows[:, 3]), 1)
    # 20,000 rows: a cell's sd is at most 0.0036 of n; 0.02 is over five sd.
    np.testing.assert_allclose(counts / len(rows), fitted, atol=0.02)


def test_the_estimator_is_chosen_from_public_structure():
    all_pairs = list(itertools.combinations(NAMES, 2))
    # Every pair measured: one node, the joint itself; the dense products are faster.
    assert junction_cells(NAMES, SIZES, all_pairs) == int(np.prod(SIZES))
    assert estimator(NAMES, SIZES, all_pairs) == "dense"
    # A sparse model on a wide domain: the joint is 2**30 cells, the tree a few hundred.
    wide = tuple(f"x{i}" for i in range(30))
    chain = [(wide[i], wide[i + 1]) for i in range(29)]
    assert junction_cells(wide, (2,) * 30, chain) == 29 * 4
    assert estimator(wide, (2,) * 30, chain) == "junction"
    # A tree too large to hold (2**24 cells in one clique): mbi's path.
    assert estimator(wide[:3], (256, 256, 256), [tuple(wide[:3])]) == "mbi"


@pytest.mark.parametrize("seed", range(6))
def test_random_pairwise_structures_match_the_dense_fit(seed):
    """Random sets of pairs (chordal or not, connected or not): the same model as the dense
    fit after 120 accelerated steps (triangulation adds fill-in nodes of three columns).

    Tolerance as above, 1e-9 of n.
    """
    g = np.random.default_rng(100 + seed)
    pairs = list(itertools.combinations(NAMES, 2))
    chosen = [pairs[i] for i in sorted(g.choice(len(pairs), size=g.integers(2, 8), replace=False))]
    meas, start = _problem(chosen, seed=seed)
    joint = mirror_descent_dense(NAMES, SIZES, meas, start, total=TOTAL, iters=120)
    tables = mirror_descent_junction(NAMES, SIZES, meas, start, total=TOTAL, iters=120)
    for node, table in tables:
        np.testing.assert_allclose(table, _marg(joint, NAMES, node), rtol=0, atol=1e-9 * TOTAL)


def test_small_n_and_large_noise_match_the_dense_fit():
    """Potentials far apart (a sparse joint of 200 rows measured with sd 40): messages keep
    each separator slice's exact log-mass, so every node agrees with the dense fit.

    A single shift per table turned slices more than ~745 nats below the table's largest
    value into -inf: at this seed the nodes then disagreed with the dense fit by 27.8 of
    200 counts, and with each other on P(c) (found in review). Tolerance 1e-9 of n as
    above.
    """
    total, sd = 200.0, 40.0
    g = np.random.default_rng(1)
    joint = g.dirichlet(np.full(int(np.prod(SIZES)), 0.05)).reshape(SIZES) * total
    meas = []
    for cl in [(n,) for n in NAMES] + CHAIN:
        true = _marg(joint, NAMES, cl)
        meas.append((cl, true + g.normal(0, sd, true.shape), sd))
    start = {cl: np.zeros([SIZES[NAMES.index(a)] for a in cl]) for cl, _, _ in meas}
    for cl, noisy, _ in meas:
        if len(cl) == 1:
            start[cl] = np.log(np.clip(noisy, 0.5, None) / np.clip(noisy, 0.5, None).sum())
    dense = mirror_descent_dense(NAMES, SIZES, meas, start, total=total, iters=3000)
    tables = mirror_descent_junction(NAMES, SIZES, meas, start, total=total, iters=3000)
    for node, table in tables:
        np.testing.assert_allclose(table, _marg(dense, NAMES, node), rtol=0, atol=1e-9 * total)


def test_logsumexp_keeps_slices_far_below_the_largest():
    from scipy.special import logsumexp

    from synthflow.generators._pgm_junction import _logsumexp

    x = np.array([[0.0, -1.0, -2.0], [-1000.0, -1001.0, -1e9], [-1e9, -1e9, -1e9]])
    got = _logsumexp(x, (1,))
    np.testing.assert_allclose(got[:2], logsumexp(x[:2], axis=1), rtol=1e-12)
    assert got[1] < -999  # not -inf: the slice's own log-mass
    assert got[2] < -1e8 and np.isfinite(got[2])  # an all-forbidden slice: about -1e9


def test_the_sampler_never_draws_a_forbidden_bin_and_refuses_nan():
    from synthflow.generators._pgm_sampler import TreeSampler

    mask = np.array([[True, False], [False, False]])  # (A=0, B=0) forbidden
    tables = [(("A", "B"), np.array([[0.0, 0.0], [30.0, 70.0]]))]  # A=0 has no mass
    sampler = TreeSampler.from_tables(
        tables, names=("A", "B"), sizes=(2, 2), cliques=[("A", "B")], zeros={("A", "B"): mask}
    )
    step = next(s for s in sampler.steps if s.parents)
    row = step.cdf[0] if step.column == 1 else step.cdf[:, 0]
    assert step.column == 1 and row[0] == 0.0  # should a row reach A=0: B=1 only
    with pytest.raises(FloatingPointError, match="not finite"):
        TreeSampler.from_tables(
            [(("A", "B"), np.array([[np.nan, 1.0], [1.0, 1.0]]))],
            names=("A", "B"), sizes=(2, 2), cliques=[("A", "B")], zeros={},
        )  # fmt: skip


@pytest.mark.parametrize("path", ["dense", "junction", "mbi"])
def test_every_estimate_path_samples_the_same_model(path, monkeypatch):
    """estimate() through each estimator (forced): the sample follows the same fitted model
    and never falls in a forbidden cell. mbi's path is now taken only by trees above 4M
    cells, which no other unit test builds; this keeps its glue (_estimate_mbi,
    TreeSampler.from_model) exercised on a small model.

    Each path runs 3000 (plain-equivalent) iterations, near the common optimum (the dense
    test bounds the fits' gap at 0.2% of n); 20,000 sampled rows put a cell's sampling
    sd below 0.0036 of n, so 0.02 is over five sd.
    """
    if path == "mbi":
        pytest.importorskip("mbi")
    import synthflow.generators._pgm as pgm

    meas, start = _problem(CHAIN)
    reference = dict(mirror_descent_junction(NAMES, SIZES, meas, start, total=TOTAL, iters=3000))
    monkeypatch.setattr(pgm, "estimator", lambda *_: path)
    sampler = estimate(
        NAMES,
        SIZES,
        [Measurement(clique=cl, noisy=y, stddev=sd) for cl, y, sd in meas],
        total=int(TOTAL),
        zeros={ZERO: MASK},
        iters=3000,
    )
    rows = sampler.sample(20_000, np.random.default_rng(2))
    assert not MASK[rows[:, 0], rows[:, 1]].any()
    for cl in [("a", "b"), ("c", "d"), ("c", "e")]:
        i, j = NAMES.index(cl[0]), NAMES.index(cl[1])
        counts = np.zeros((SIZES[i], SIZES[j]))
        np.add.at(counts, (rows[:, i], rows[:, j]), 1)
        np.testing.assert_allclose(counts / len(rows), reference[cl] / TOTAL, atol=0.02)

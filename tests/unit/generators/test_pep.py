"""PEP (synthflow/generators/pep.py): its query pool, its relaxed projection, its ledger."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from synthflow.generators import make_generator
from synthflow.generators.mwem import RangeQueries
from synthflow.generators.pep import marginal_cell_queries
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Domain


@pytest.mark.parametrize("order", [1, 2, 3, 5])
def test_the_pool_is_cells_of_marginals_of_one_order(order):
    sizes = (3, 4, 2, 5)
    q = marginal_cell_queries(sizes, 200, order, np.random.default_rng(0))
    k = min(order, len(sizes))
    assert q.groups == list(itertools.combinations(range(len(sizes)), k))
    width = q.hi - q.lo
    for i in range(q.n_queries):
        fixed = set(np.flatnonzero(width[i] < np.array(sizes)))
        assert fixed == set(q.groups[int(q.group[i])])  # exactly its k columns ...
        assert all(width[i, a] == 1 for a in fixed)  # ... each fixed to one bin
    # Each answer is the count of one cell of that marginal (checked on a random cube).
    cube = np.random.default_rng(1).random(sizes)
    for i in range(0, q.n_queries, 17):
        box = tuple(slice(int(lo), int(hi)) for lo, hi in zip(q.lo[i], q.hi[i], strict=True))
        assert q.answer(cube)[i] == pytest.approx(cube[box].sum())


# Counts in the millions: the projection's +1 smoothing (which keeps empty cells finite)
# then moves results by about 1e-6 relatively.
N = 1_000_000.0


def _one_query(m: float) -> tuple[RangeQueries, np.ndarray]:
    # One query: the first of four cells of a 1-D cube (uniform, total N).
    q = RangeQueries((4,), [(0,)], np.array([0]), np.array([[0]]), np.array([[1]]))
    return q, np.array([m])


def test_a_query_inside_its_band_is_left_alone():
    q, target = _one_query(0.28 * N)
    cube = np.full(4, N / 4)
    q.fit_group(cube, 0, target, np.array([True]), N, band=0.05 * N)
    assert cube == pytest.approx(np.full(4, N / 4))


@pytest.mark.parametrize("m, edge", [(0.40, 0.35), (0.10, 0.15)])
def test_a_query_outside_its_band_is_projected_onto_the_nearer_edge(m, edge):
    q, target = _one_query(m * N)
    cube = np.full(4, N / 4)
    q.fit_group(cube, 0, target, np.array([True]), N, band=0.05 * N)
    assert cube[0] == pytest.approx(edge * N, rel=1e-5)
    assert cube.sum() == pytest.approx(N)
    assert cube[1:] == pytest.approx(np.full(3, (N - cube[0]) / 3))  # the rest scaled alike


def test_without_a_band_the_projection_is_mwems():
    q, target = _one_query(0.40 * N)
    cube = np.full(4, N / 4)
    q.fit_group(cube, 0, target, np.array([True]), N)
    assert cube[0] == pytest.approx(0.40 * N, rel=1e-5)


def test_ledger_charges_selection_and_measurement_halves_first():
    domain = Domain(names=("a", "b", "c"), sizes=(3, 4, 2))
    g = np.random.default_rng(0)
    import pandas as pd

    data = pd.DataFrame(
        {n: g.integers(0, s, 300) for n, s in zip(domain.names, domain.sizes, strict=True)}
    )
    gen = make_generator(
        "pep",
        {"num_query": 64, "num_iterations": 20, "num_inner_updates": 3, "marginal": 2},
        epsilon=1.0,
    )
    ledger = Ledger(total_epsilon=1.0)
    gen.fit(data.astype(np.int16), domain=domain, ledger=ledger, rng=PrivacyRNG.from_seed(0))
    charges = [(c.mechanism, c.epsilon, c.sensitivity) for c in ledger.charges]
    # 1-way marginals first (a tenth), then the rounds' selection and measurement halves
    assert charges == [
        ("laplace", pytest.approx(0.1), 2.0),
        ("exponential", pytest.approx(0.45), 1.0),
        ("laplace", pytest.approx(0.45), 1.0),
    ]
    assert sum(c.epsilon for c in ledger.charges) == pytest.approx(1.0)
    assert all(c.what.startswith("pep ") for c in ledger.charges)


def test_one_way_histograms_have_l1_sensitivity_two_on_neighbours():
    # The charged sensitivity of each 1-way histogram: replacing one row moves one count
    # of each column down and one up.
    import pandas as pd

    domain = Domain(names=("a", "b", "c"), sizes=(3, 4, 2))
    g = np.random.default_rng(6)
    for _ in range(50):
        data = pd.DataFrame(
            {n: g.integers(0, s, 60) for n, s in zip(domain.names, domain.sizes, strict=True)}
        )
        neighbour = data.copy()
        neighbour.iloc[int(g.integers(60))] = [int(g.integers(s)) for s in domain.sizes]
        for name, size in zip(domain.names, domain.sizes, strict=True):
            a = np.bincount(data[name], minlength=size)
            b = np.bincount(neighbour[name], minlength=size)
            assert np.abs(a - b).sum() <= 2


def test_one_way_marginals_start_the_model_and_stay_measured():
    # The start is the product of the noisy marginals; the Laplace scale is 2 d / epsilon.
    import pandas as pd

    from synthflow.generators.mwem import OneWayMarginals

    domain = Domain(names=("a", "b"), sizes=(3, 4))
    g = np.random.default_rng(7)
    data = pd.DataFrame({"a": g.choice(3, 5000, p=[0.7, 0.2, 0.1]), "b": g.integers(0, 4, 5000)})
    ones = OneWayMarginals.measure(data, domain, epsilon=2.0, rng=PrivacyRNG.from_seed(1))
    assert ones.scale == pytest.approx(2.0)
    cube = ones.product(5000.0)
    assert cube.sum() == pytest.approx(5000.0)
    # within 1% of n: the noise (scale 2) and the +1 smoothing are a few counts
    assert cube.sum(axis=1) / 5000 == pytest.approx([0.7, 0.2, 0.1], abs=0.01)
    flat = np.full((3, 4), 5000 / 12)
    assert ones.fit(flat, 5000.0, band=0.0) > 1000  # the uniform cube missed 70% by far
    for _ in range(20):  # each call is one sweep of cell-by-cell projections
        worst = ones.fit(flat, 5000.0, band=0.0)
    # The noisy counts of a column need not sum to n, so the cells cannot all be met
    # exactly: the misses shrink to the order of that gap (a few noise scales).
    gap = abs(ones.targets[:3].sum() - 5000) + abs(ones.targets[3:].sum() - 5000)
    assert worst <= gap + 2.0
    assert flat.sum(axis=1) / 5000 == pytest.approx(ones.targets[:3] / 5000, abs=2e-3)


def test_sensitivity_one_on_neighbouring_datasets():
    # Replace-one neighbours: every query's count, and so the exponential mechanism's
    # utility |q(A) - q(D)| for any model A, moves by at most 1 (the charged sensitivity).
    from synthflow.generators.mwem import _cube

    domain = Domain(names=("a", "b", "c"), sizes=(3, 4, 2))
    g = np.random.default_rng(5)
    import pandas as pd

    q = marginal_cell_queries(domain.sizes, 300, 2, g)
    model = g.random(domain.sizes) * 100
    for _ in range(50):
        data = pd.DataFrame(
            {n: g.integers(0, s, 80) for n, s in zip(domain.names, domain.sizes, strict=True)}
        )
        neighbour = data.copy()
        neighbour.iloc[int(g.integers(80))] = [int(g.integers(s)) for s in domain.sizes]
        a, b = q.answer(_cube(data, domain)), q.answer(_cube(neighbour, domain))
        assert np.abs(a - b).max() <= 1.0
        ua, ub = np.abs(q.answer(model) - a), np.abs(q.answer(model) - b)
        assert np.abs(ua - ub).max() <= 1.0

"""PEP (synthflow/generators/pep.py): its query pool, its relaxed projection, its ledger."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from synthflow.generators import make_generator
from synthflow.generators.mwem import RangeQueries
from synthflow.generators.pep import marginal_cell_queries
from synthflow.ledger import Ledger
from synthflow.rng import PrivacyRNG
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
    assert charges == [("exponential", 0.5, 1.0), ("laplace", 0.5, 1.0)]
    assert all(c.what.startswith("pep ") for c in ledger.charges)


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

"""The ``marginal_tvd`` criterion: its statistic, its replace-one sensitivity on
neighbouring datasets, its DP release and its parameters."""

from __future__ import annotations

import numpy as np
import pytest

from synthflow.config.model import CriterionSpec
from synthflow.criteria import KINDS
from synthflow.criteria.context import context
from synthflow.criteria.marginal_tvd import MarginalTVDParams, mean_tvd, tvd_sensitivity
from synthflow.criteria.marginals import marginal_subsets
from synthflow.criteria.registry import parse_criterion
from synthflow.errors import ConfigError
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG


def _independent_tvd(t: np.ndarray, r: np.ndarray, sizes, family) -> float:
    """The statistic by its definition, with pandas-free dictionaries (not the code's)."""
    total = 0.0
    for subset in family:
        p: dict[tuple, float] = {}
        for row in t[:, subset]:
            p[tuple(row)] = p.get(tuple(row), 0.0) + 1 / len(t)
        q: dict[tuple, float] = {}
        for row in r[:, subset]:
            q[tuple(row)] = q.get(tuple(row), 0.0) + 1 / len(r)
        total += 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q))
    return total / len(family)


def test_mean_tvd_is_its_definition():
    gen = np.random.default_rng(0)
    sizes = (3, 4, 2, 5)
    t = np.column_stack([gen.integers(0, s, 200) for s in sizes])
    r = np.column_stack([gen.integers(0, s, 200) for s in sizes])
    for family in (marginal_subsets(4, max_order=1), marginal_subsets(4, max_order=2),
                   marginal_subsets(4), [(0, 2)]):  # fmt: skip
        assert mean_tvd(t, r, sizes, family) == pytest.approx(
            _independent_tvd(t, r, sizes, family), abs=1e-12
        )
    assert mean_tvd(t, t, sizes, marginal_subsets(4)) == 0.0
    disjoint = np.zeros((10, 1), dtype=np.int64), np.ones((10, 1), dtype=np.int64)
    assert mean_tvd(*disjoint, (2,), [(0,)]) == 1.0


@pytest.mark.parametrize("max_order", [1, 2, 4])
def test_sensitivity_holds_on_every_replace_one_neighbour_and_is_reached(max_order):
    # D_T and a neighbour differing in one row (every row, replaced by every record of a
    # small domain); D_R is fixed. |stat(D_T) - stat(D_T')| <= 1/n for every pair.
    gen = np.random.default_rng(1)
    sizes, n = (2, 3, 2, 2), 40
    family = marginal_subsets(4, max_order=max_order)
    t = np.column_stack([gen.integers(0, s, n) for s in sizes])
    r = np.column_stack([gen.integers(0, s, n) for s in sizes])
    records = np.array(np.meshgrid(*[range(s) for s in sizes])).reshape(4, -1).T
    base = mean_tvd(t, r, sizes, family)
    worst = 0.0
    for i in range(n):
        for rec in records:
            u = t.copy()
            u[i] = rec
            worst = max(worst, abs(mean_tvd(u, r, sizes, family) - base))
    assert worst <= tvd_sensitivity(n) + 1e-12
    assert worst >= 0.5 * tvd_sensitivity(n)  # random tables come close
    # The bound is reached: D_R all in one cell, D_T all in another; moving one row of
    # D_T into D_R's cell lowers every marginal's TVD by 1/n.
    ones, zeros = np.ones((n, 4), dtype=np.int64), np.zeros((n, 4), dtype=np.int64)
    moved = ones.copy()
    moved[0] = 0
    change = mean_tvd(ones, zeros, sizes, family) - mean_tvd(moved, zeros, sizes, family)
    assert change == pytest.approx(tvd_sensitivity(n), rel=1e-9)


def test_the_release_charges_first_and_draws_laplace_at_one_over_n_epsilon(
    spec, transformer, tables
):
    t, r = tables
    c = CriterionSpec(name="tvd", kind="marginal_tvd", threshold=0.05, epsilon=0.2,
                      params=MarginalTVDParams())  # fmt: skip
    assert c.impl is KINDS["marginal_tvd"]
    ctx = context(spec, transformer, t, r)
    stat = c.impl.exact(c, ctx)
    names = transformer.domain.names
    family = marginal_subsets(len(names), max_order=2)
    assert stat == pytest.approx(
        _independent_tvd(t.to_numpy(), r.to_numpy(), transformer.domain.sizes, family)
    )
    n = len(t)
    ledger = Ledger(total_epsilon=0.2)
    released = c.impl.release(c, ctx, ledger, PrivacyRNG.from_seed(4))
    (charge,) = ledger.charges
    assert (charge.epsilon, charge.sensitivity, charge.mechanism) == (0.2, 1 / n, "laplace")
    assert released.sensitivity == 1 / n and released.statistic == stat
    assert released.noise_sd == pytest.approx(np.sqrt(2) / (n * 0.2))
    # The noise law: 4,000 releases of the same statistic are Laplace(1 / (n epsilon)).
    from scipy import stats

    rng = PrivacyRNG.from_seed(5)
    draws = np.array(
        [c.impl.release(c, ctx, Ledger(total_epsilon=1), rng).value - stat for _ in range(4000)]
    )
    assert stats.kstest(draws, stats.laplace(scale=1 / (n * 0.2)).cdf).pvalue > 0.001
    with pytest.raises(Exception, match=r"budget|exceed"):  # nothing left: no draw
        c.impl.release(c, ctx, ledger, PrivacyRNG.from_seed(6))


def test_parameters_are_its_own():
    columns = {"a": None, "b": None}
    raw = {"name": "x", "kind": "marginal_tvd", "threshold": 0.1, "epsilon": 0.1}
    c = parse_criterion("here", raw, columns)
    assert (c.max_order, c.columns) == (2, ())
    assert parse_criterion("here", {**raw, "max_order": 3, "columns": ["a"]}, columns).columns == (
        "a",
    )
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['clip'\]"):
        parse_criterion("here", {**raw, "clip": 2}, columns)
    with pytest.raises(ConfigError, match="max_order"):
        parse_criterion("here", {**raw, "max_order": 0}, columns)
    with pytest.raises(ConfigError, match="unknown column"):
        parse_criterion("here", {**raw, "columns": ["z"]}, columns)
    with pytest.raises(AttributeError, match="has no parameter 'clip'"):
        _ = c.clip

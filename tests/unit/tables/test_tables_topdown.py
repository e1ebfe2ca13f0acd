"""The top-down method: largest-remainder rounding, additivity at every level, budget."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from tables_support import make_births, tables_of

from synthflow.config import ReleaseSpec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.tables import (
    ONS_SPLIT,
    Microdata,
    TopDownOptions,
    default_split,
    largest_remainder,
    proportional_allocation,
    tabulate_all,
    top_down,
)


def test_largest_remainder_by_hand() -> None:
    # Shares 2.5, 1.3, 1.2 of 5: floors 2, 1, 1 leave 1 unit for the largest part (0.5).
    out = largest_remainder(np.array([[2.5, 1.3, 1.2]]), np.array([5]), rng=None)
    np.testing.assert_array_equal(out, [[3, 1, 1]])
    # Ties at random: each of two equal halves gets the unit about half the time.
    gen = np.random.default_rng(0)  # post-processing tie breaks, seeded for the test
    wins = sum(
        largest_remainder(np.array([[0.5, 0.5]]), np.array([1]), rng=gen)[0, 0] for _ in range(400)
    )
    assert 150 < wins < 250  # Binomial(400, 1/2): sd 10, so 5 sd either way


@settings(max_examples=80, deadline=None)
@given(
    arrays(
        np.float64, st.tuples(st.integers(1, 6), st.integers(1, 12)), elements=st.floats(0, 1000)
    ),
    st.integers(0, 10_000),
)
def test_allocation_keeps_totals(weights: np.ndarray, total: int) -> None:
    totals = np.full(weights.shape[0], total)
    out = proportional_allocation(weights, totals, rng=np.random.default_rng(1))
    np.testing.assert_array_equal(out.sum(axis=1), totals)
    assert (out >= 0).all()
    sums = weights.sum(axis=1, keepdims=True)
    target = np.where(
        sums > 0, weights * total / np.where(sums > 0, sums, 1), total / weights.shape[1]
    )
    assert (np.abs(out - target) < 1 + 1e-6).all()


def test_allocation_respects_eligibility() -> None:
    ok = np.array([[True, False, True]])
    out = proportional_allocation(np.array([[0.0, 5.0, 0.0]]), np.array([7]), rng=None, eligible=ok)
    assert out[0, 1] == 0 and out.sum() == 7
    with pytest.raises(ValueError, match="no eligible cell"):
        proportional_allocation(
            np.ones((1, 2)), np.array([3]), rng=None, eligible=~np.ones((1, 2), bool)
        )


def test_default_split() -> None:
    assert default_split([1, 48, 624, 15_000]) == ONS_SPLIT == (0.01, 0.05, 0.165, 0.775)
    # Otherwise 0.01 for the total and the rest in proportion to sqrt(cells).
    split = default_split([1, 4, 36])
    assert split == pytest.approx((0.01, 0.99 * 2 / 8, 0.99 * 6 / 8))


def _hierarchy(spec: ReleaseSpec, structural: bool = False) -> tuple:
    entry = {
        "name": "h",
        "columns": ["gestation_week", "birth_sex"],
        "geography": ["birth_month", "parity"],
    }
    if structural:
        entry["structural_zeros"] = [{"gestation_week": ["<29"], "parity": [">10"]}]
    return tables_of(spec, entry)


@settings(max_examples=15, deadline=None)
@given(
    st.integers(0, 10_000),
    st.sampled_from(["laplace", "geometric", "gaussian"]),
    st.sampled_from(["replace_one", "add_remove"]),
    st.floats(0.05, 20),
)
def test_top_down_is_additive_at_every_level(
    births_spec: ReleaseSpec, seed: int, mechanism: str, neighbouring: str, eps: float
) -> None:
    tables = _hierarchy(births_spec, structural=True)
    frame = make_births(300, seed=seed % 50)
    frame = frame[~((frame.gestation_week < 29) & (frame.parity > 10))]
    groups = tabulate_all(tables, Microdata(frame, births_spec))
    opts = TopDownOptions(
        epsilon=eps,
        mechanism=mechanism,  # type: ignore[arg-type]
        delta=1e-6 if mechanism == "gaussian" else 0.0,
        neighbouring=neighbouring,  # type: ignore[arg-type]
    )
    ledger = Ledger(total_epsilon=eps, total_delta=1e-6)
    national, month, parity = top_down(groups, opts, ledger=ledger, rng=PrivacyRNG.from_seed(seed))
    for t in (national, month, parity):
        assert (t.values >= 0).all() and (t.values == np.round(t.values)).all()
        assert (t.values[t.spec.structural] == 0).all()
    # Each level sums exactly into the one above (geography axes come first).
    np.testing.assert_array_equal(month.values.sum(axis=0), national.values)
    np.testing.assert_array_equal(parity.values.sum(axis=1), month.values)
    if neighbouring == "replace_one":  # n is public: the total is exact
        assert national.values.sum() == len(frame)
    assert ledger.spent_epsilon == pytest.approx(eps)


def test_top_down_ledger_split(births_spec: ReleaseSpec) -> None:
    tables = (
        *_hierarchy(births_spec),
        *tables_of(births_spec, {"name": "flat", "columns": ["parity"]}),
    )
    groups = tabulate_all(tables, Microdata(make_births(200, seed=1), births_spec))
    ledger = Ledger(total_epsilon=2.0)
    opts = TopDownOptions(epsilon=2.0, neighbouring="add_remove")
    top_down(groups, opts, ledger=ledger, rng=PrivacyRNG.from_seed(0))
    eps = [c.epsilon for c in ledger.charges]
    # Two tables get 1.0 each; the four-level one splits it 0.01, 0.05, 0.165, 0.775.
    assert eps[:4] == pytest.approx(ONS_SPLIT)
    assert eps[4:] == pytest.approx([0.01, 0.99])
    assert [c.sensitivity for c in ledger.charges[:2]] == [1.0, 1.0]
    # Under replace_one the total is public: released exactly, its share spread.
    ledger = Ledger(total_epsilon=1.0)
    top_down(groups[:1], TopDownOptions(epsilon=1.0), ledger=ledger, rng=PrivacyRNG.from_seed(0))
    eps = [c.epsilon for c in ledger.charges]
    assert eps[0] == 0.0
    assert eps[1:] == pytest.approx([s / 0.99 for s in ONS_SPLIT[1:]])
    assert [c.sensitivity for c in ledger.charges[1:]] == [2.0, 2.0, 2.0]


def test_top_down_options_are_checked() -> None:
    with pytest.raises(ValueError, match=re.escape("must be non-negative shares summing to 1")):
        TopDownOptions(epsilon=1.0, split=(0.5, 0.6))
    with pytest.raises(ValueError, match=re.escape("delta (0.0) must be in (0, 1)")):
        TopDownOptions(epsilon=1.0, mechanism="gaussian")

"""Quality scores and closeness diagnostics against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthflow.acceptance.diagnostics import closeness, quality

NAMES = ("a", "b")


def test_quality_by_hand():
    # a: original [0, 0, 1, 1], synthetic [0, 1, 1, 1] -> p (.5, .5), q (.25, .75):
    # TV = 0.5 * (0.25 + 0.25) = 0.25, shape score 0.75. b identical -> 1.0.
    o = np.array([[0, 0], [0, 1], [1, 0], [1, 1]])
    s = np.array([[0, 0], [1, 1], [1, 0], [1, 1]])
    q = quality(o, s, (2, 2), NAMES)
    assert q.column_shapes == {"a": pytest.approx(0.75), "b": pytest.approx(1.0)}
    # 2-way: original one row per cell (.25 each); synthetic (0,0) .25, (1,0) .25,
    # (1,1) .5, (0,1) 0 -> TV = 0.5 * (0 + .25 + 0 + .25) = 0.25.
    assert q.column_pairs == {("a", "b"): pytest.approx(0.75)}
    assert q.shape_score == pytest.approx(0.875)
    assert q.overall == pytest.approx((0.875 + 0.75) / 2)


def test_quality_of_a_copy_is_one_and_of_disjoint_supports_zero():
    o = np.array([[0, 1], [1, 2], [1, 0]])
    assert quality(o, o.copy(), (2, 3), NAMES).overall == pytest.approx(1.0)
    a = np.zeros((5, 2), dtype=np.int64)
    b = np.ones((5, 2), dtype=np.int64)
    assert quality(a, b, (2, 2), NAMES).overall == pytest.approx(0.0)


def test_closeness_by_hand():
    o = np.array([[0, 0, 0], [1, 1, 1]])
    s = np.array(
        [
            [0, 0, 0],  # identical
            [1, 1, 0],  # one column from [1, 1, 1]
            [0, 1, 1],  # one column from [1, 1, 1]
            [2, 2, 0],  # two columns from [0, 0, 0]
        ]
    )
    c = closeness(o, s)
    assert c.identical == pytest.approx(0.25)
    assert c.within_one == pytest.approx(0.75)
    assert c.farther == pytest.approx(0.25)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 30),
    st.integers(1, 30),
    st.integers(1, 4),
    st.integers(0, 2**32 - 1),
)
def test_closeness_agrees_with_brute_force(n_o, n_s, d, seed):
    rng = np.random.default_rng(seed)
    o = rng.integers(0, 3, size=(n_o, d))
    s = rng.integers(0, 3, size=(n_s, d))
    dist = (s[:, None, :] != o[None, :, :]).sum(axis=2).min(axis=1)
    c = closeness(o, s)
    assert c.identical == pytest.approx(np.mean(dist == 0))
    assert c.within_one == pytest.approx(np.mean(dist <= 1))

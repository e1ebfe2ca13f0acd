"""Every measure against values computed by hand on small tables."""

from __future__ import annotations

import math

import numpy as np
import pytest

from synthflow.tables import BANDS, cramers_v, entropy_risk, hellinger, measure, transition_matrix

F = np.array([[0, 1], [2, 7]])
P = np.array([[1.0, 1.0], [2.0, 6.0]])


def test_distances_by_hand() -> None:
    m = measure(F, P)
    # |0-1| + |1-1| + |2-2| + |7-6| = 2; sqrt(1 + 0 + 0 + 1).
    assert m.l1 == 2.0
    assert m.total_abs_noise == 2.0
    assert m.mean_abs_noise == 0.5
    assert m.l2 == pytest.approx(math.sqrt(2))
    # HD = sqrt(((0 - 1)^2 + (sqrt 7 - sqrt 6)^2) / 2); (sqrt 7 - sqrt 6)^2 = 13 - 2 sqrt 42.
    assert m.hellinger == pytest.approx(math.sqrt((1 + 13 - 2 * math.sqrt(42)) / 2))
    assert m.hellinger == pytest.approx(0.7205965, abs=1e-6)
    assert m.share_unchanged == 0.5
    assert m.share_suppressed == 0.0
    assert m.cells == 4


def test_transition_matrix_by_hand() -> None:
    tm = transition_matrix(F, P)
    assert tm.shape == (11, 12)
    expected = np.zeros((11, 12), int)
    expected[0, 1] = 1  # 0 -> 1
    expected[1, 1] = 1  # 1 -> 1
    expected[2, 2] = 1  # 2 -> 2
    expected[5, 5] = 1  # 7 -> 6, both in band 5-10
    np.testing.assert_array_equal(tm, expected)
    assert measure(F, P).diagonal_share == 0.75
    assert BANDS[5] == "5-10"


def test_transition_band_edges() -> None:
    f = np.array([0, 4, 5, 10, 11, 25, 26, 50, 51, 100, 101, 1000, 1001])
    tm = transition_matrix(f, f.astype(float))
    assert np.trace(tm) == 13
    np.testing.assert_array_equal(tm.diagonal(), [1, 0, 0, 0, 1, 2, 2, 2, 2, 2, 1])
    # Negative published counts fall in band 0.
    assert transition_matrix(np.array([0]), np.array([-3.0]))[0, 0] == 1


def test_cramers_v_two_way_by_hand() -> None:
    # 2x2: V = |ad - bc| / sqrt(r1 r2 c1 c2).
    assert cramers_v(F) == pytest.approx(2 / math.sqrt(1 * 9 * 2 * 8))  # = 1/6
    assert cramers_v(P) == pytest.approx(4 / math.sqrt(2 * 8 * 3 * 7))
    m = measure(F, P)
    assert m.cramers_v_original == pytest.approx(1 / 6)
    assert m.cramers_v_change == pytest.approx(4 / math.sqrt(336) - 1 / 6)
    # 2x3 by the chi-square formula: rows (10, 10), columns (5, 5, 10), N = 20;
    # expected 2.5, 2.5, 5 per row; chi2 = 4 * (2.5^2 / 2.5) + 0 = 10; V = sqrt(10 / 20).
    assert cramers_v(np.array([[5, 0, 5], [0, 5, 5]])) == pytest.approx(math.sqrt(0.5))
    # Empty rows are dropped: one non-empty row leaves V undefined.
    assert math.isnan(cramers_v(np.array([[0, 0], [3, 4]])))


def test_cramers_v_three_way_is_the_mean_over_pairs() -> None:
    t = np.zeros((2, 2, 2))
    t[0, 0, :] = 2
    t[1, 1, :] = 2
    # a-b margin [[4, 0], [0, 4]] has V = 1; a-c and b-c margins are [[2, 2], [2, 2]], V = 0.
    assert cramers_v(t) == pytest.approx(1 / 3)


def test_entropy_risk_by_hand() -> None:
    # p = (0.1, 0.1, 0.2, 0.6): H = -(2 * 0.1 ln 0.1 + 0.2 ln 0.2 + 0.6 ln 0.6) = 1.0889;
    # 1 - H / ln 4 = 0.21452.
    h = -(2 * 0.1 * math.log(0.1) + 0.2 * math.log(0.2) + 0.6 * math.log(0.6))
    assert entropy_risk(P) == pytest.approx(1 - h / math.log(4))
    assert entropy_risk(P) == pytest.approx(0.214525, abs=1e-6)
    assert entropy_risk(np.array([5.0, 5.0, 5.0])) == pytest.approx(0.0)
    assert entropy_risk(np.array([0.0, 9.0, 0.0])) == pytest.approx(1.0)
    # Structural zeros do not count in K: two open cells, evenly filled.
    structural = np.array([False, False, True, True])
    assert entropy_risk(np.array([4.0, 4.0, 0.0, 0.0]), structural) == pytest.approx(0.0)


def test_risk_counts_by_hand() -> None:
    m = measure(F, P)
    assert (m.ones, m.twos, m.uniques, m.uniques_kept) == (2, 1, 1, 1)
    m2 = measure(np.array([1, 1, 2]), np.array([1.0, 0.0, 2.0]))
    assert (m2.ones, m2.twos, m2.uniques, m2.uniques_kept) == (1, 1, 2, 1)


def test_suppressed_cells_by_hand() -> None:
    f = np.array([5, 12, 0])
    p = np.array([np.nan, 10.0, np.nan])  # the 10-5 rule
    m = measure(f, p)
    assert m.l1 == 5 + 2 + 0
    assert m.share_unchanged == 0.0
    assert m.share_suppressed == pytest.approx(2 / 3)
    assert m.hellinger == pytest.approx(math.sqrt((5 + (math.sqrt(12) - math.sqrt(10)) ** 2) / 2))
    tm = transition_matrix(f, p)
    assert tm[5, 11] == 1 and tm[0, 11] == 1 and tm[6, 5] == 1
    assert m.diagonal_share == 0.0


def test_structural_cells_are_left_out_of_shares() -> None:
    f = np.array([3, 0, 0])
    p = np.array([4.0, 0.0, 0.0])
    s = np.array([False, False, True])
    m = measure(f, p, s)
    assert m.cells == 2
    assert m.share_unchanged == 0.5
    assert m.mean_abs_noise == 0.5


def test_hellinger_is_undefined_for_negative_counts() -> None:
    assert math.isnan(hellinger(np.array([0, 1]), np.array([-1.0, 1.0])))
    assert math.isnan(measure(np.array([0, 1]), np.array([-1.0, 1.0])).hellinger)
    assert hellinger(F, F) == 0.0

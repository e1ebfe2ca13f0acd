"""The 10-5 rule, threshold suppression and rounding to a base."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from synthflow.tables import RoundingOptions, round_to_base, suppress, ten_five

COUNTS = arrays(np.int64, st.integers(1, 40), elements=st.integers(0, 10_000))


def test_ten_five_by_hand() -> None:
    out = ten_five(np.array([0, 1, 9, 10, 12, 13, 17, 18, 102]))
    np.testing.assert_array_equal(out, [np.nan, np.nan, np.nan, 10, 10, 15, 15, 20, 100])


def test_suppress_and_round_by_hand() -> None:
    np.testing.assert_array_equal(
        suppress(np.array([0, 2, 3, 7]), threshold=3), [np.nan, np.nan, 3, 7]
    )
    # Base 4: halves (2, 6) go up.
    np.testing.assert_array_equal(
        round_to_base(np.array([0, 1, 2, 5, 6, 9]), base=4), [0, 0, 4, 4, 8, 8]
    )
    np.testing.assert_array_equal(round_to_base(np.array([7, 8]), base=1), [7, 8])


def test_structural_zeros_stay_published() -> None:
    s = np.array([True, False])
    np.testing.assert_array_equal(ten_five(np.array([0, 0]), structural=s), [0, np.nan])
    np.testing.assert_array_equal(suppress(np.array([0, 0]), structural=s), [0, np.nan])


@given(COUNTS, st.integers(1, 20))
def test_round_to_base_properties(counts: np.ndarray, base: int) -> None:
    out = round_to_base(counts, base=base)
    assert np.all(out % base == 0)
    assert np.all(np.abs(out - counts) <= base / 2)
    assert np.all(out >= 0)


@given(COUNTS, st.integers(0, 30), st.integers(1, 10))
def test_ten_five_properties(counts: np.ndarray, threshold: int, base: int) -> None:
    out = ten_five(counts, threshold=threshold, base=base)
    shown = ~np.isnan(out)
    np.testing.assert_array_equal(shown, counts >= threshold)
    assert np.all(out[shown] % base == 0)
    assert np.all(np.abs(out[shown] - counts[shown]) <= base / 2)


def test_bad_options() -> None:
    with pytest.raises(ValueError, match=re.escape("base (0) must be an integer >= 1")):
        RoundingOptions(rule="round", base=0)
    with pytest.raises(ValueError, match=re.escape("rule ('floor') must be one of")):
        RoundingOptions(rule="floor")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=re.escape("threshold (-1) must be an integer >= 0")):
        suppress(np.array([1]), threshold=-1)

"""Disclosure-risk measures against hand-computed values."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthflow.release.risk import risk_measures

# Six records on keys (a, b) and a sensitive column s:
#   row  a  b  s
#   0    x  1  p     (x, 1) twice: rows 0, 1
#   1    x  1  p
#   2    x  2  q     (x, 2) once  -> a sample unique on (a, b)
#   3    y  1  p     (y, 1) three times: rows 3, 4, 5
#   4    y  1  q
#   5    y  1  r
FRAME = pd.DataFrame(
    {
        "a": ["x", "x", "x", "y", "y", "y"],
        "b": [1, 1, 2, 1, 1, 1],
        "s": ["p", "p", "q", "p", "q", "r"],
    }
)


def test_measures_by_hand():
    m = risk_measures(FRAME, ("a", "b"), sensitive="s", max_msu_size=2)
    assert m.sample_uniques == 1  # row 2
    assert m.k_anonymity == 1  # the group (x, 2)
    # groups: (x,1) {p} -> 1, (x,2) {q} -> 1, (y,1) {p,q,r} -> 3: l = 1
    assert m.l_diversity == 1
    # MSUs: a alone never unique (3 x, 3 y); b alone: b = 2 only in row 2 -> MSU {b} for
    # row 2; (a, b) is unique for row 2 only, but {b} already is: not minimal.
    assert m.msu_count == 1 and m.records_with_msu == 1


def test_a_projected_table_has_no_uniques():
    doubled = pd.concat([FRAME, FRAME], ignore_index=True)
    m = risk_measures(doubled, ("a", "b"), sensitive="s")
    assert m.sample_uniques == 0 and m.k_anonymity == 2 and m.records_with_msu == 0


def test_bad_columns_are_named():
    with pytest.raises(ValueError, match=r"\['zz'\]"):
        risk_measures(FRAME, ("a", "zz"))
    with pytest.raises(ValueError, match="at least one key variable"):
        risk_measures(FRAME, ())


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 25), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_msus_agree_with_brute_force(n, d, seed):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.integers(0, 3, size=(n, d)), columns=[f"k{j}" for j in range(d)])
    keys = tuple(frame.columns)
    m = risk_measures(frame, keys, max_msu_size=3)
    rows = [tuple(r) for r in frame.to_numpy()]

    def unique(i, subset):
        return sum(all(r[j] == rows[i][j] for j in subset) for r in rows) == 1

    count, records = 0, 0
    for i in range(n):
        found = 0
        for size in range(1, min(3, d) + 1):
            for subset in itertools.combinations(range(d), size):
                smaller = itertools.combinations(subset, size - 1) if size > 1 else []
                if unique(i, subset) and not any(unique(i, s) for s in smaller):
                    found += 1
        count += found
        records += found > 0
    assert (m.msu_count, m.records_with_msu) == (count, records)
    assert m.sample_uniques == sum(unique(i, range(d)) for i in range(n))

"""Binning, labels and the bins-to-numbers rule."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthflow._bins import parse_bin
from synthflow.errors import DataError
from synthflow.transform import Transformer


@pytest.mark.parametrize(
    ("label", "number"),
    [("7", 7.0), ("18-19", 18.5), ("35-39", 37.0), ("<18", 18.0), (">44", 44.0), ("<1500", 1500.0)],
)
def test_bins_to_numbers_rule(label, number):
    assert parse_bin(label).number() == number


def _raw_strategy(spec):
    cols = {}
    for c in spec.columns:
        if c.kind == "int":
            cols[c.name] = st.integers(int(c.domain[0]), int(c.domain[1]))
        else:
            cols[c.name] = st.sampled_from(list(c.categories))
    return st.lists(st.fixed_dictionaries(cols), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), letters=st.sampled_from(["a", "b", "c"]))
def test_forward_puts_every_value_in_its_bin_and_labels_round_trip(births_spec, data, letters):
    rows = data.draw(_raw_strategy(births_spec))
    raw = pd.DataFrame(rows)
    choice = {
        c.name: letters if letters in [t.name for t in c.transformations] else "a"
        for c in births_spec.columns
    }
    tr = Transformer(births_spec, choice)
    codes = tr.forward(raw)
    assert tuple(codes.columns) == tr.domain.names
    for c in births_spec.columns:
        t = tr.transformations[c.name]
        assert codes[c.name].between(0, t.size - 1).all()
        if c.kind == "int":
            lo = np.array([t.bins[k].lo for k in codes[c.name]])
            hi = np.array([t.bins[k].hi for k in codes[c.name]])
            assert ((raw[c.name] >= lo) & (raw[c.name] <= hi)).all()
    labels = tr.to_labels(codes)
    pd.testing.assert_frame_equal(tr.from_labels(labels), codes)


def test_release_binning_domain_size(births_spec):
    tr = Transformer(births_spec, {"mother_age": "b"})
    assert tr.domain.sizes == (12, 10, 5, 6, 2, 32)
    assert tr.domain.cells == 230_400


def test_numbers_use_the_rule(births_spec):
    tr = Transformer(births_spec, {"mother_age": "b"})
    raw = pd.DataFrame(
        {
            "birth_month": [3],
            "mother_age": [36],
            "parity": [12],
            "gestation_week": [30],
            "birth_sex": ["F"],
            "birth_weight": [1200],
        }
    )
    codes = tr.forward(raw)
    assert tr.numbers(codes, "mother_age")[0] == 35.5
    assert tr.numbers(codes, "parity")[0] == 10.0  # ">10" -> its edge
    assert tr.numbers(codes, "gestation_week")[0] == 30.0  # "29-31"
    assert tr.numbers(codes, "birth_weight")[0] == 1500.0  # "<1500" -> its edge
    assert tr.numbers(codes, "birth_sex")[0] == 1.0  # category index: M=0, F=1


def test_unknown_label_is_rejected(births_spec):
    tr = Transformer(births_spec, {})
    labels = tr.to_labels(
        tr.forward(
            pd.DataFrame(
                {
                    "birth_month": [1],
                    "mother_age": [30],
                    "parity": [1],
                    "gestation_week": [39],
                    "birth_sex": ["M"],
                    "birth_weight": [3000],
                }
            )
        )
    )
    labels.loc[0, "mother_age"] = "35-36"  # a bin of alternative b, not a
    with pytest.raises(DataError, match="check that --config matches the candidate"):
        tr.from_labels(labels)

"""The API cleans a frame as the command line cleans a file: same checks, before any charge.

Audit #58 (5): ``Synthesizer.fit`` and ``evaluate_candidate`` took a raw frame's age -5,
29.5 or int64's largest and charged the ledger; a text value in an int column raised
``ValueError: could not convert string to float: '<the value>'``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import synthflow
from synthflow.errors import DataError
from synthflow.privacy.ledger import dataset_ledger
from synthflow.space import expand_space
from synthflow.transform import Transformer

SECRET = "secret-77123"
BAD_AGES = [
    (-5, "outside its public domain [0, 99];"),
    (29.5, "must hold whole numbers"),
    (int(np.iinfo(np.int64).max), "outside its public domain [0, 99];"),
    (SECRET, "must be integer-valued but holds non-numeric entries"),
]


@pytest.fixture()
def setup(small_spec, make_frame):
    config = next(c for c in expand_space(small_spec) if c.model == "privbayes")
    return small_spec, config, make_frame(300, seed=11)


def _with_age(frame, value):
    bad = frame.astype({"age": object})
    bad.loc[7, "age"] = value
    return bad


@pytest.mark.parametrize(("value", "message"), BAD_AGES, ids=["neg", "half", "int64", "text"])
def test_fit_refuses_a_bad_value_before_the_charge(setup, tmp_path, value, message):
    spec, config, frame = setup
    bad = _with_age(frame, value)
    for public in (True, False):
        ledger = (
            synthflow.Ledger(total_epsilon=spec.privacy.total_epsilon)
            if public
            else dataset_ledger(tmp_path / f"l{public}.jsonl", bad, total_epsilon=5.0)
        )
        s = synthflow.Synthesizer(spec, config)
        with pytest.raises(DataError, match=re.escape(message)) as info:
            s.fit(bad, ledger=ledger, public=public)
        assert str(value) not in str(info.value) and "77123" not in str(info.value)
        assert ledger.spent_epsilon == 0 and s.generator_ is None


@pytest.mark.parametrize(("value", "message"), BAD_AGES, ids=["neg", "half", "int64", "text"])
def test_evaluate_candidate_refuses_a_bad_value_before_the_charge(setup, tmp_path, value, message):
    spec, config, frame = setup
    candidate = Transformer(spec, config.transformations).forward(frame)
    bad = _with_age(frame, value)
    ledger = dataset_ledger(tmp_path / "l.jsonl", bad, total_epsilon=5.0)
    with pytest.raises(DataError, match=re.escape(message)) as info:
        synthflow.evaluate_candidate(spec, config, bad, candidate, exact=False, ledger=ledger)
    assert str(value) not in str(info.value) and "77123" not in str(info.value)
    assert ledger.spent_epsilon == 0
    with pytest.raises(DataError, match=re.escape(message)):
        synthflow.evaluate_candidate(spec, config, bad, candidate, exact=True, public=True)


def test_a_clean_frame_still_fits_and_evaluates(setup, tmp_path):
    # The cleaned frame is the dataset: its ledger (made from the same frame) is accepted.
    spec, config, frame = setup
    ledger = dataset_ledger(tmp_path / "l.jsonl", frame, total_epsilon=5.0)
    s = synthflow.Synthesizer(spec, config).fit(frame, ledger=ledger)
    assert s.n_ == len(frame)
    candidate = s.sample(codes=True)
    report = synthflow.evaluate_candidate(
        spec, config, frame, candidate, exact=False, ledger=ledger
    )
    assert len(report.criteria) == len(spec.criteria)

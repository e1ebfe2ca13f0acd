"""#61 item 5 and 8: a raw DataFrame into the API, and a datasheet year written as a number."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

import synthflow
from synthflow.errors import ConfigError, DataError

REPO = Path(__file__).resolve().parents[3]


def test_load_data_takes_a_dataframe_as_it_takes_its_file(small_spec, small_csv):
    frame = pd.read_csv(small_csv)
    before = frame.copy()
    from_frame = synthflow.load_data(frame, small_spec, public=True).frame
    from_file = synthflow.load_data(small_csv, small_spec, public=True).frame
    pd.testing.assert_frame_equal(from_frame, from_file)
    pd.testing.assert_frame_equal(frame, before)  # the caller's frame is not modified


def test_load_data_names_what_is_missing(small_spec, small_csv):
    frame = pd.read_csv(small_csv)
    with pytest.raises(ConfigError, match=r"load_data needs the release spec"):
        synthflow.load_data(frame)
    with pytest.raises(DataError, match=r"input lacks column"):
        synthflow.load_data(frame.drop(columns=[frame.columns[0]]), small_spec, public=True)


def test_a_datasheet_year_may_be_a_number(tmp_path):
    raw = yaml.safe_load((REPO / "configs" / "example_small.yaml").read_text())
    raw["datasheet"] = {"title": "A clinic", "period": 1994}
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(raw))
    assert synthflow.load_spec(path).datasheet.period == "1994"

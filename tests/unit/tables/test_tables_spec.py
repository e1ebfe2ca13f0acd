"""The tables file, structural zeros, tabulation and CSV output."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tables_support import TABLES_BIRTHS, make_births, tables_of

from synthflow.config import ReleaseSpec
from synthflow.errors import ConfigError, DataError
from synthflow.tables import Microdata, ReleasedTable, load_tables, tabulate, tabulate_all
from synthflow.transform import Transformer


def test_shipped_tables_file(births_spec: ReleaseSpec) -> None:
    tables = load_tables(TABLES_BIRTHS, births_spec)
    assert [t.name for t in tables] == [
        "age_by_parity",
        "gestation_by_weight_by_sex",
        "sex_by_gestation_by_month",
    ]
    assert [len(t.columns) + len(t.geography) for t in tables] == [2, 3, 3]
    age, gest, month = tables
    # mother_age alternative b has 10 bins, parity a has 5.
    assert age.levels[0].shape == (10, 5)
    # Rule 5 (age < 20 and parity > 3): bins <18 and 18-19 by 4-6, 7-10 and >10.
    assert age.levels[0].structural.sum() == 6
    assert age.levels[0].structural[:2, 2:].all()
    # Rule 7: gestation <29 by the 16 weight bins 3000-3099 .. 4400-4499 and >4499;
    # rule 8: gestation 29-31 and 32-33 (and <29, already in) by the 6 bins from
    # 4000-4099 up. Both sexes.
    assert gest.levels[0].structural.sum() == 2 * (16 + 2 * 6)
    assert [lv.name for lv in month.levels] == [
        "sex_by_gestation_by_month.national",
        "sex_by_gestation_by_month.birth_month",
    ]
    assert month.levels[1].columns == ("birth_month", "birth_sex", "gestation_week")
    assert month.levels[1].depth == 1


def test_structural_zeros_by_labels_and_geography(births_spec: ReleaseSpec) -> None:
    (t,) = tables_of(
        births_spec,
        {
            "name": "t",
            "columns": ["birth_sex", "parity"],
            "geography": ["birth_month"],
            "structural_zeros": [
                {"birth_month": [2], "birth_sex": "M", "parity": [">10"]},
                {"birth_sex": "F", "parity": ["7-10", ">10"]},
            ],
        },
    )
    national, month = t.levels
    # National: a cell is structural only if it is structural in every month.
    expected = np.zeros((2, 5), bool)
    expected[1, 3:] = True
    np.testing.assert_array_equal(national.structural, expected)
    assert month.structural.sum() == 12 * 2 + 1
    assert month.structural[1, 0, 4]  # February (code 1), M, >10


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"columns": ["nope"]}, "unknown column 'nope'"),
        ({"columns": []}, "a table needs at least one column"),
        ({"columns": ["parity"], "colour": 1}, "unknown key(s) ['colour']"),
        ({"columns": ["parity"], "transformations": {"parity": "z"}}, "has no transformation 'z'"),
        (
            {"columns": ["parity"], "structural_zeros": [{"parity": ["12"]}]},
            "labels ['12'] are not bins of the column",
        ),
        (
            {"columns": ["birth_sex"], "structural_zeros": [{"all": [["birth_sex", "<", 1]]}]},
            "column 'birth_sex' is categorical; name its labels instead",
        ),
        (
            {"columns": ["parity"], "structural_zeros": [{"all": [["parity", ">", 0]]}]},
            "every cell would be a structural zero",
        ),
        ({"columns": ["parity"], "geography": ["parity"]}, "must be distinct"),
    ],
)
def test_bad_tables_are_rejected(births_spec: ReleaseSpec, entry: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        tables_of(births_spec, {"name": "t", **entry})


def test_duplicate_names_and_missing_file(births_spec: ReleaseSpec, tmp_path: Path) -> None:
    t = {"name": "t", "columns": ["parity"]}
    with pytest.raises(ConfigError, match=re.escape("repeated: ['t']")):
        tables_of(births_spec, t, t)
    with pytest.raises(ConfigError, match="does not exist"):
        load_tables(tmp_path / "none.yaml", births_spec)


def test_tabulate_hand_example(births_spec: ReleaseSpec) -> None:
    frame = make_births(6, seed=0).assign(
        parity=[1, 1, 2, 3, 5, 11], birth_sex=["M", "F", "M", "M", "F", "F"], mother_age=30
    )
    (t,) = tables_of(births_spec, {"name": "t", "columns": ["parity", "birth_sex"]})
    keys = np.array([10, 20, 30, 40, 50, 60])
    ct = tabulate(t.levels[0], Microdata(frame, births_spec), record_keys=keys)
    # parity a: 1, 2-3, 4-6, 7-10, >10; sex: M, F.
    np.testing.assert_array_equal(ct.counts, [[1, 1], [2, 0], [0, 1], [0, 0], [0, 1]])
    np.testing.assert_array_equal(ct.key_sums, [[10, 20], [70, 0], [0, 50], [0, 0], [0, 60]])
    assert ct.total == 6


def test_structural_violation_is_an_error(births_spec: ReleaseSpec) -> None:
    frame = make_births(5, seed=0).assign(mother_age=17, parity=5)  # violates rule 5
    tables = load_tables(TABLES_BIRTHS, births_spec)
    with pytest.raises(DataError, match="structural zeros"):
        tabulate_all(tables[:1], Microdata(frame, births_spec))


def test_release_labels_map_to_coarser_bins(births_spec: ReleaseSpec) -> None:
    frame = make_births(300, seed=1)
    letters = {"mother_age": "b", "parity": "b", "gestation_week": "b"}
    tr = Transformer(births_spec, letters)
    labels = tr.to_labels(tr.forward(frame))
    (t,) = tables_of(
        births_spec,
        {"name": "t", "columns": ["mother_age", "parity", "gestation_week", "birth_sex"]},
    )
    raw = tabulate(t.levels[0], Microdata(frame, births_spec))
    rel = tabulate(t.levels[0], Microdata(labels, births_spec, labelled=True))
    np.testing.assert_array_equal(raw.counts, rel.counts)


def test_release_bins_that_straddle_are_rejected(births_spec: ReleaseSpec) -> None:
    labels = pd.DataFrame({"mother_age": ["35-39", "20-24"]})  # alternative a
    (t,) = tables_of(
        births_spec,
        {"name": "t", "columns": ["mother_age"], "transformations": {"mother_age": "b"}},
    )
    with pytest.raises(DataError, match="straddle"):
        tabulate(t.levels[0], Microdata(labels, births_spec, labelled=True))
    with pytest.raises(DataError, match="not bins of the spec"):
        tabulate(
            t.levels[0],
            Microdata(pd.DataFrame({"mother_age": ["old"]}), births_spec, labelled=True),
        )


def test_csv_one_row_per_cell_suppressed_empty(births_spec: ReleaseSpec, tmp_path: Path) -> None:
    (t,) = tables_of(births_spec, {"name": "t", "columns": ["birth_sex", "parity"]})
    values = np.arange(10, dtype=float).reshape(2, 5)
    values[0, 1] = np.nan
    path = ReleasedTable(spec=t.levels[0], values=values, method="x").write_csv(tmp_path / "t.csv")
    lines = path.read_text().splitlines()
    assert lines[0] == "birth_sex,parity,count"
    assert lines[1:4] == ["M,1,0", "M,2-3,", "M,4-6,2"]
    assert lines[-1] == "F,>10,9"
    assert len(lines) == 11

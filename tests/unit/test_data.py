"""Reading and cleaning input: mapping, cleaning counts, and bad-input errors."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from synthflow.data import load_data
from synthflow.errors import DataError

NVSS_ROWS = """mother_age,parity,gestation_week,is_female,birth_weight,date_of_birth
33,2,39,False,3490,2019-03-15
34,3,31,True,1055,2019-07-15
19,5,39,True,3000,2019-07-15
30,1,20,True,400,2019-01-15
28,1,40,,3300,2019-02-15
"""


def test_nvss_format_is_mapped_and_cleaned(tmp_path, births_spec):
    path = tmp_path / "nvss.csv"
    path.write_text(NVSS_ROWS)
    loaded = load_data(path, births_spec, public=True)
    df = loaded.frame
    assert list(df.columns) == list(births_spec.column_names)
    assert df.birth_sex.tolist() == ["M", "F"]
    assert df.birth_month.tolist() == [3, 7]
    removed = dict(loaded.report.removed)
    assert removed["(1) any missing value"] == 1
    assert removed["(2) birth weight below 500 g or above 5500 g"] == 1
    assert removed["(5) mother younger than 20 with parity above 3"] == 1
    assert "removed 1" in loaded.report.describe()


def test_private_counts_are_not_shown(tmp_path, births_spec):
    path = tmp_path / "nvss.csv"
    path.write_text(NVSS_ROWS)
    report = load_data(path, births_spec).report
    assert "removed" not in report.describe()
    assert report.to_json() == {"public": False}


def test_parquet_and_release_columns(tmp_path, births_spec):
    df = pd.DataFrame(
        {
            "birth_month": [1, 2],
            "mother_age": [30, 31],
            "parity": [1, 2],
            "gestation_week": [39, 40],
            "birth_sex": ["M", "F"],
            "birth_weight": [3000, 3100],
        }
    )
    path = tmp_path / "d.parquet"
    df.to_parquet(path)
    pd.testing.assert_frame_equal(load_data(path, births_spec).frame, df, check_dtype=False)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "is empty"),
        ("mother_age,parity\n", "has no rows"),
        (
            "mother_age,parity\n30,1\n",
            "input lacks column(s) birth_month (or its source date_of_birth), gestation_week",
        ),
        (
            NVSS_ROWS.replace("33,2,39", "33,two,39"),
            "column 'parity' must be integer-valued but holds non-numeric entries",
        ),
        (NVSS_ROWS.replace("3490", "3490.5"), "column 'birth_weight' must hold whole numbers"),
        (
            NVSS_ROWS.replace("33,2,39", "33,31,39"),
            "column 'parity' holds values outside its public domain [1, 30]",
        ),
        (NVSS_ROWS.replace("False", "maybe"), "column 'is_female' holds values outside"),
    ],
)
def test_bad_input_errors(tmp_path, births_spec, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(DataError, match=re.escape(message)):
        load_data(path, births_spec)


def test_errors_do_not_leak_values(tmp_path, births_spec):
    path = tmp_path / "bad.csv"
    path.write_text(NVSS_ROWS.replace("33,2,39", "33,27777,39"))
    with pytest.raises(DataError) as info:
        load_data(path, births_spec)
    assert "27777" not in str(info.value)


def test_missing_file(tmp_path, births_spec):
    with pytest.raises(DataError, match="does not exist"):
        load_data(tmp_path / "nope.csv", births_spec)


def test_everything_cleaned_away(tmp_path, births_spec):
    path = tmp_path / "all_bad.csv"
    path.write_text(
        "mother_age,parity,gestation_week,is_female,birth_weight,date_of_birth\n30,1,20,True,3000,2019-01-15\n"
    )
    with pytest.raises(DataError, match="are left after cleaning"):
        load_data(path, births_spec)


def test_extra_columns_follow_cleaning(tmp_path, births_spec):
    path = tmp_path / "nvss.csv"
    lines = NVSS_ROWS.strip().splitlines()
    path.write_text("\n".join([lines[0] + ",id"] + [f"{x},{i}" for i, x in enumerate(lines[1:])]))
    df = load_data(path, births_spec, extra_columns=("id",)).frame
    assert df["id"].tolist() == [0, 1]  # rows 2-4 were cleaned away, ids stay aligned
    assert df.columns[-1] == "id"
    with pytest.raises(DataError, match=re.escape("input lacks the requested column(s) ['key']")):
        load_data(path, births_spec, extra_columns=("key",))


def test_only_the_spec_columns_are_read(tmp_path, births_spec):
    # A registry extract carries columns the release never uses, here one that pandas
    # would read as text and one of unparseable junk: neither is read, the result is
    # the same as without them.
    extra = NVSS_ROWS.splitlines()
    extra = [extra[0] + ",notes,id"] + [
        r + f',"free, text {i}",X{i}' for i, r in enumerate(extra[1:])
    ]
    plain, wide = tmp_path / "plain.csv", tmp_path / "wide.csv"
    plain.write_text(NVSS_ROWS)
    wide.write_text("\n".join(extra) + "\n")
    pd.testing.assert_frame_equal(
        load_data(wide, births_spec).frame, load_data(plain, births_spec).frame
    )
    # The same for Parquet, and a missing column is still named.
    pq = tmp_path / "wide.parquet"
    pd.read_csv(wide).to_parquet(pq)
    pd.testing.assert_frame_equal(
        load_data(pq, births_spec).frame, load_data(plain, births_spec).frame
    )
    pd.read_csv(wide).drop(columns="parity").to_parquet(pq)
    with pytest.raises(DataError, match=re.escape("input lacks column(s) parity")):
        load_data(pq, births_spec, public=True)


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".csv.zip"])
def test_ragged_rows_are_refused_without_showing_the_row(tmp_path, births_spec, suffix):
    path = tmp_path / f"ragged{suffix}"
    text = NVSS_ROWS.replace("34,3,31,True,1055,2019-07-15", "34,3,31,True,1055,2019-07-15,77123")
    if suffix == ".csv":
        path.write_text(text)
    else:
        import gzip
        import zipfile

        if suffix == ".csv.gz":
            path.write_bytes(gzip.compress(text.encode()))
        else:
            with zipfile.ZipFile(path, "w") as z:
                z.writestr("ragged.csv", text)
    with pytest.raises(DataError, match="different numbers of fields") as info:
        load_data(path, births_spec)
    assert "77123" not in str(info.value) and "1055" not in str(info.value)


def test_an_integer_past_int64_is_out_of_domain_without_a_warning(tmp_path, small_spec):
    # #45: 99999999999999999999 wrapped to the most negative int64 in the cast, and
    # numpy's RuntimeWarning (with a source path) reached stderr before the refusal.
    import warnings

    path = tmp_path / "d.csv"
    path.write_text("age,visits,region,smoker\n99999999999999999999,3,north,no\n30,2,south,yes\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DataError, match="outside its public domain"):
            load_data(path, small_spec, public=True)

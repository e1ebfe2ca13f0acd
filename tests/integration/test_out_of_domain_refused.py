"""Values outside a column's public domain are refused before any charge, through the CLI.

Audit #58 (4): a raw rule on one column (births: weights below 500 g or above 5500 g)
dropped any value beyond it, in or out of the domain: weights in ounces, -5, 99999 or
int64's largest vanished, the run exited 0 and charged the ledger with n reduced. A rule
drops the values inside the domain, and the codes it names with ``==`` (9999 = unknown);
any other value out of domain is refused with the column, the count and the fix. A real
IEEE NaN in a Parquet file is a value, not a missing one (a null): refused too.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synthflow.cli import main
from synthflow.data import load_data
from synthflow.errors import DataError
from synthflow.loader import load_spec
from synthflow.space import expand_space

INT64_MAX = str(np.iinfo(np.int64).max)


def _births_rows(n: int, seed: int) -> pd.DataFrame:
    """Made-up births in the release columns, every value inside the rules."""
    g = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "birth_month": g.integers(1, 13, n),
            "mother_age": g.integers(25, 40, n),
            "parity": g.integers(1, 4, n),
            "gestation_week": g.integers(37, 42, n),
            "birth_sex": g.choice(["M", "F"], n),
            "birth_weight": g.integers(2600, 4200, n),
        }
    )


def _run(tmp_path, spec, data) -> int:
    cfg = next(c for c in expand_space(spec) if c.model == "privbayes")
    argv = ["run", spec.path, "--data", str(data), "--config", cfg.id,
            "--out", str(tmp_path / "r"), "--ledger", str(tmp_path / "budget.jsonl")]  # fmt: skip
    return main(argv)


@pytest.mark.parametrize(
    "case",
    [
        ("birth_weight", "-5", "[227, 8165]"),
        ("birth_weight", "100", "[227, 8165]"),
        ("birth_weight", "99999", "[227, 8165]"),
        ("birth_weight", INT64_MAX, "[227, 8165]"),
        ("gestation_week", "99", "[17, 47]"),
        ("gestation_week", "-1", "[17, 47]"),
    ],
)
def test_a_value_a_rule_would_drop_is_refused(tmp_path, births_spec, capsys, case):
    column, value, domain = case
    frame = _births_rows(40, seed=1).astype({column: object})
    frame.loc[[3, 17], column] = value
    data = tmp_path / "births.csv"
    frame.to_csv(data, index=False)
    code = _run(tmp_path, births_spec, data)
    err = capsys.readouterr()
    assert code == 2, err.err
    text = err.out + err.err
    assert f"column {column!r} holds values outside its public domain {domain}" in text
    assert "2 rows" not in text and "name that code" in text  # the fix, never the count
    assert not re.search(rf"(?<!\d){re.escape(value)}(?!\d)", text)  # never the value
    assert not (tmp_path / "budget.jsonl").exists()  # nothing charged: no ledger at all


def test_weights_partly_in_ounces_are_refused_without_their_count(tmp_path, births_spec, capsys):
    # 3% of the weights in ounces (100-160 oz): every one was dropped by rule 2.
    frame = _births_rows(600, seed=2)
    ounces = frame.index[::33]
    frame.loc[ounces, "birth_weight"] = (frame.loc[ounces, "birth_weight"] / 28.35).round()
    data = tmp_path / "births.csv"
    frame.to_csv(data, index=False)
    code = _run(tmp_path, births_spec, data)
    text = "".join(capsys.readouterr())
    assert code == 2
    assert "'birth_weight' holds values outside its public domain [227, 8165]" in text
    # How many rows is a statistic of the private data: never said (synthflow.errors).
    assert f"{len(ounces)} row" not in text and "another unit" in text
    assert not (tmp_path / "budget.jsonl").exists()


def test_a_nan_in_parquet_is_refused_a_null_is_missing(tmp_path, small_spec, capsys):
    table = pa.table(
        {
            "age": pa.array([30.0, float("nan"), 41.0, 12.0], pa.float64()),
            "visits": [2, 3, 4, 1],
            "region": ["north", "south", "east", "west"],
            "smoker": ["no", "yes", "no", "no"],
        }
    )
    data = tmp_path / "d.parquet"
    pq.write_table(table, data)
    code = _run(tmp_path, small_spec, data)
    text = "".join(capsys.readouterr())
    assert code == 2
    assert "column 'age' holds NaN" in text and "1 row" not in text
    assert not (tmp_path / "budget.jsonl").exists()
    # A null is a missing value (an empty field): its row is dropped, as documented.
    nulls = table.set_column(0, "age", pa.array([30.0, None, 41.0, 12.0], pa.float64()))
    pq.write_table(nulls, data)
    loaded = load_data(data, small_spec, public=True)
    assert len(loaded.frame) == 3
    assert dict(loaded.report.removed)["(1) any missing value"] == 1


def test_a_code_a_rule_names_is_cleaning(tmp_path, births_spec):
    # A rule on one column naming a code (9999 = unknown) drops that code's rows; another
    # value out of domain is still refused, and a range rule names no code.
    spec_text = Path(births_spec.path).read_text()
    rule = (
        '    - {id: 11, name: weight unknown, any: [[birth_weight, "==", 9999]]}\n'
        '    - {id: 12, name: far too heavy, any: [[birth_weight, ">=", 9000]]}\n'
    )
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(spec_text.replace("  raw:\n", "  raw:\n" + rule, 1))
    spec = load_spec(spec_path)
    frame = _births_rows(30, seed=3)
    frame.loc[[4, 9], "birth_weight"] = 9999
    data = tmp_path / "births.csv"
    frame.to_csv(data, index=False)
    loaded = load_data(data, spec, public=True)
    assert len(loaded.frame) == 28
    assert dict(loaded.report.removed)["(11) weight unknown"] == 2
    frame.loc[5, "birth_weight"] = 9998
    frame.to_csv(data, index=False)
    with pytest.raises(DataError, match=re.escape("outside its public domain [227, 8165];")):
        load_data(data, spec, public=True)

"""Every output is proven writable before the first charge (#45, catalogue).

`evaluate --report/--json` into a read-only directory charged 0.69 and lost the result
(exit 4); `tables protect --out` on a read-only path charged 1 and lost the tables. A
permission bit says nothing to root: here the directory is a real read-only mount, and
both commands are refused with nothing charged. Through the real CLI.
"""

from __future__ import annotations

import pytest
import yaml

from synthflow.cli import main
from synthflow.privacy.ledger import Ledger
from synthflow.space import expand_space


@pytest.fixture()
def read_only(tmpfs):
    """A real tmpfs (ro,size=64k): the conftest's ``tmpfs`` fixture."""
    return tmpfs("ro,size=64k")


@pytest.mark.parametrize("option", ["--report", "--json"])
def test_evaluate_into_a_read_only_directory_charges_nothing(  # noqa: PLR0917
    read_only, tmp_path, small_spec, small_csv, capsys, option
):
    ledger = tmp_path / "budget.jsonl"
    config = expand_space(small_spec)[0].id
    argv = ["evaluate", small_spec.path, "--original", str(small_csv), "--candidate",
            str(small_csv), "--config", config, "--ledger", str(ledger),
            option, str(read_only / "out.file")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "cannot be written" in err and "Nothing was spent" in err
    assert not ledger.exists() or Ledger(total_epsilon=100, path=ledger).charges == ()


def test_tables_protect_into_a_read_only_directory_charges_nothing(
    read_only, tmp_path, small_csv, capsys
):
    tables = tmp_path / "tables.yaml"
    tables.write_text(yaml.safe_dump({"tables": [{"name": "r", "columns": ["region", "smoker"]}]}))
    ledger = tmp_path / "budget.jsonl"
    argv = ["tables", "protect", "example_small", "--data", str(small_csv), "--tables",
            str(tables), "--method", "laplace", "--epsilon", "1", "--out",
            str(read_only / "t"), "--ledger", str(ledger)]  # fmt: skip
    assert main(argv) == 2
    assert "cannot be written" in capsys.readouterr().err
    assert not ledger.exists() or Ledger(total_epsilon=100, path=ledger).charges == ()

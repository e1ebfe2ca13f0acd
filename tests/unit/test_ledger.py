"""The ledger charges before release, refuses overspend and survives restarts."""

from __future__ import annotations

import json
import re

import pytest

from synthflow.errors import BudgetExceededError, ConfigError
from synthflow.ledger import Ledger


def test_charges_add_up_and_are_written(tmp_path):
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(total_epsilon=1.0, path=path)
    ledger.charge("a", epsilon=0.3, mechanism="laplace", sensitivity=1.0)
    ledger.charge("b", epsilon=0.7)
    assert ledger.spent_epsilon == 1.0
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [(x["what"], x["epsilon"], x["delta"]) for x in lines] == [
        ("a", 0.3, 0.0),
        ("b", 0.7, 0.0),
    ]


def test_overspend_is_refused_and_not_recorded(tmp_path):
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(total_epsilon=1.0, path=path)
    ledger.charge("a", epsilon=0.9)
    msg = "cannot charge 'b': requested epsilon 0.2 (delta 0) but only epsilon 0.1"
    with pytest.raises(BudgetExceededError, match=re.escape(msg)):
        ledger.charge("b", epsilon=0.2)
    assert len(path.read_text().splitlines()) == 1
    assert ledger.spent_epsilon == 0.9


def test_split_budget_composes_exactly():
    eps, split = 4.0, 0.1
    ledger = Ledger(total_epsilon=eps)
    ledger.charge("structure", epsilon=eps * split)
    ledger.charge("conditionals", epsilon=eps - eps * split)
    assert ledger.remaining_epsilon == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(BudgetExceededError):
        ledger.charge("more", epsilon=1e-6)


def test_restart_continues_the_same_ledger(tmp_path):
    path = tmp_path / "ledger.jsonl"
    Ledger(total_epsilon=1.0, path=path).charge("first run", epsilon=0.6)
    again = Ledger(total_epsilon=1.0, path=path)
    assert again.spent_epsilon == 0.6
    with pytest.raises(BudgetExceededError):
        again.charge("second run", epsilon=0.6)


def test_delta_is_tracked():
    ledger = Ledger(total_epsilon=1.0, total_delta=1e-6)
    ledger.charge("gauss", epsilon=0.5, delta=1e-6)
    with pytest.raises(BudgetExceededError):
        ledger.charge("more delta", epsilon=0.1, delta=1e-7)


@pytest.mark.parametrize("eps", [-0.1, float("nan"), float("inf")])
def test_invalid_epsilon(eps):
    with pytest.raises(ValueError, match="must be finite and >= 0"):
        Ledger(total_epsilon=1.0).charge("x", epsilon=eps)


def test_corrupt_ledger_file_is_an_error(tmp_path):
    path = tmp_path / "ledger.jsonl"
    path.write_text("not json\n")
    with pytest.raises(ValueError, match="is not a synthflow ledger line"):
        Ledger(total_epsilon=1.0, path=path)


def test_torn_last_line_is_recognised(tmp_path):
    # A crash while writing leaves a partial last line (no newline): named as such,
    # with advice that does not spend again.
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(total_epsilon=1.0, path=path)
    ledger.charge("a", epsilon=0.25)
    path.write_text(path.read_text() + '{"what": "b", "epsi')
    with pytest.raises(ConfigError, match="last ledger line is incomplete") as info:
        Ledger(total_epsilon=1.0, path=path)
    assert "do not start a new ledger" in str(info.value)

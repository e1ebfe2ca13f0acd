"""Errors never print values read from private input (hardening: canary values)."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthflow.cli import main
from synthflow.space import expand_space

CANARY_AGE = "31337"
CANARY_WEIGHT = "27182"


def _headerless(tmp_path: Path) -> Path:
    # A births-like file without its header row: its first record would become the
    # column names. Canary values make a leak findable by grep.
    path = tmp_path / "private.csv"
    rows = [f"2019-03-15,{CANARY_AGE},2,39,true,{CANARY_WEIGHT}"] * 20
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("command", ["run", "release", "evaluate", "tables"])
def test_canaries_never_printed(tmp_path, births_spec, command, capsys):
    data = _headerless(tmp_path)
    cfg = next(c for c in expand_space(births_spec) if c.model == "privbayes")
    ledger = ["--ledger", str(tmp_path / "budget.jsonl")]
    if command == "run":
        argv = ["run", births_spec.path, "--data", str(data), "--config", cfg.id,
                "--out", str(tmp_path / "r"), *ledger]  # fmt: skip
    elif command == "release":
        cands = tmp_path / "c.yaml"
        cands.write_text(f"spec_sha256: {births_spec.sha256}\nconfigurations:\n- id: {cfg.id}\n")
        argv = ["release", births_spec.path, "--data", str(data), "--candidates", str(cands),
                "--out", str(tmp_path / "rel"), "--private-dir", str(tmp_path / "enc"),
                *ledger]  # fmt: skip
    elif command == "evaluate":
        argv = ["evaluate", births_spec.path, "--original", str(data), "--candidate", str(data),
                "--config", cfg.id, "--json", str(tmp_path / "e.json"), *ledger]  # fmt: skip
    else:
        argv = ["tables", "protect", births_spec.path, "--data", str(data),
                "--tables", str(Path(births_spec.path).parent / "tables_births.yaml"),
                "--method", "ten-five", "--out", str(tmp_path / "t")]  # fmt: skip
    assert main(argv) == 2
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "header row" in text
    assert CANARY_AGE not in text and CANARY_WEIGHT not in text

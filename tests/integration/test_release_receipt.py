"""#61 item 3 and 4: a receipt after a release, the options after a failure, a ledger's balance.

A release used to end with a path and nothing else; a failed one with "spent epsilon
1.0045 ... 8.9955 left". Now a release says what it spent and what is left on the
dataset ledger, what to publish and what to keep in the enclave; a selection that
released nothing lists the steward's options with their cost; and ``synthflow ledger
show LEDGER`` prints a ledger's balance and history. Real releases of the clinic spec
(a single attempt each, epsilon 2.3 of the dataset's 5), real ledger files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from synthflow.cli import main
from synthflow.loader import load_spec
from synthflow.space import expand_space

REPO = Path(__file__).resolve().parents[2]


def _release(tmp_path: Path, spec_path: Path, csv: Path, ledger: Path, i: int) -> int:
    spec = load_spec(spec_path)
    cands = tmp_path / f"candidates{i}.yaml"
    configs = [c.to_json() for c in expand_space(spec) if c.letters == "aaaa"]
    cands.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configs}))
    return main(["release", str(spec_path), "--data", str(csv), "--candidates", str(cands),
                 "--out", str(tmp_path / f"release{i}"), "--private-dir",
                 str(tmp_path / f"enclave{i}"), "--ledger", str(ledger), "--seed", str(i),
                 "--public", "--quiet", "--stop-probability", "1"])  # fmt: skip


def _said(err: str) -> str:
    return " ".join(err.split())


def test_a_release_ends_with_its_receipt_and_the_ledger_shows_it(tmp_path, small_csv, capsys):
    spec_path = REPO / "configs" / "example_small.yaml"
    for i in range(1, 9):  # the clinic spec passes most single attempts (seeded)
        ledger = tmp_path / f"budget{i}.jsonl"
        if _release(tmp_path, spec_path, small_csv, ledger, i) == 0:
            break
    else:
        pytest.fail("none of 8 seeded single attempts released")
    err = _said(capsys.readouterr().err)
    out, enclave = (tmp_path / f"release{i}").resolve(), (tmp_path / f"enclave{i}").resolve()
    assert "released: spent epsilon 2.3 (delta 0) of the total 5; 2.7 left" in err
    assert f"publish: {out}" in err
    assert f"keep in the enclave, never publish: {enclave}" in err
    assert f"synthflow audit {out}" in err
    # The ledger's balance and history, as text and as JSON.
    assert main(["ledger", "show", str(ledger)]) == 0
    text = capsys.readouterr().out
    assert "total    epsilon 5, delta 0" in text
    assert "spent    epsilon 2.3, delta 0" in text and "left     epsilon 2.7" in text
    assert "1 charge(s), oldest first:" in text
    assert main(["ledger", "show", str(ledger), "--json", "-"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["spent_epsilon"] == pytest.approx(2.3) and doc["left_epsilon"] == pytest.approx(2.7)
    assert [c["epsilon"] for c in doc["charges"]] == [pytest.approx(2.3)]
    # Reading it charged nothing and wrote nothing: the header and one charge.
    assert len(ledger.read_text().splitlines()) == 2


def test_a_failed_release_lists_the_options_and_their_cost(tmp_path, small_csv, capsys):
    # Seed 0's single attempt of the clinic spec fails its checks and spends its 2.3.
    ledger = tmp_path / "budget.jsonl"
    assert _release(tmp_path, REPO / "configs" / "example_small.yaml", small_csv, ledger, 0) == 1
    err = _said(capsys.readouterr().err)
    assert "spent epsilon 2.3 (delta 0) of the total 5; 2.7 left" in err
    assert "what next:" in err and "1. stop: nothing is published" in err
    assert "it charges epsilon 2.3 again; the ledger has 2.7 left, room for 1 more" in err
    assert "--release-probability 0.99" in err


def test_ledger_show_refuses_a_missing_file_by_name(tmp_path, capsys):
    assert main(["ledger", "show", str(tmp_path / "nope.jsonl")]) == 2
    assert "no ledger at" in capsys.readouterr().err

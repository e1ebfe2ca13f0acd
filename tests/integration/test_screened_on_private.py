"""Nothing made from exact statistics of a file runs on it without --public (#58, 9).

``ship-plan births --data PRIVATE`` swept and planned on the private rows, and
``public-data draw --from PRIVATE`` drew rows from a model of them (sharing 1.1% of the
private rows, then accepted as a public_sample), both without a ``--public``
declaration, which ``sweep`` and ``plan`` require. And ``release`` never compared a
shortlist's or plan's ``public_data_sha256`` with ``--data``. Through the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from synthflow.cli import main
from synthflow.privacy.ledger import Ledger, file_sha256
from synthflow.space import expand_space

REPO = Path(__file__).resolve().parents[2]


def test_ship_plan_on_data_not_declared_public_is_refused(tmp_path, small_csv, capsys):
    out = tmp_path / "plan"
    assert main(["ship-plan", "births", "--data", str(small_csv), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "add --public" in err and "exact statistics" in err
    assert not out.exists()


def test_a_draw_from_data_not_declared_public_is_refused(tmp_path, small_spec, small_csv, capsys):
    out = tmp_path / "drawn.csv"
    argv = ["public-data", "draw", small_spec.path, "--from", str(small_csv), "--rows", "100",
            "--seed", "1", "--out", str(out)]  # fmt: skip
    assert main(argv) == 2
    assert "add --public" in capsys.readouterr().err
    assert not out.exists()
    assert main([*argv, "--public"]) == 0 and out.exists()


def _release(tmp_path, spec, data, candidates, *extra):
    ledger = tmp_path / "budget.jsonl"
    argv = ["release", str(spec), "--data", str(data), "--candidates", str(candidates),
            "--out", str(tmp_path / "r"), "--private-dir", str(tmp_path / "e"), "--ledger",
            str(ledger), "--quiet", "--force", *extra]  # fmt: skip
    code = main(argv)
    assert not ledger.exists() or Ledger(total_epsilon=100, path=ledger).charges == ()
    return code


def test_a_release_on_the_file_its_shortlist_was_made_from_is_refused(
    tmp_path, small_spec, small_csv, capsys
):
    candidates = tmp_path / "candidates.yaml"
    configurations = [c.to_json() for c in expand_space(small_spec) if c.letters == "aaaa"]
    doc = {"spec_sha256": small_spec.sha256, "configurations": configurations}
    candidates.write_text(yaml.safe_dump(doc | {"public_data_sha256": file_sha256(small_csv)}))
    assert _release(tmp_path, small_spec.path, small_csv, candidates) == 2
    assert "the --candidates file was made from --data itself" in capsys.readouterr().err


def test_a_release_on_the_file_its_plan_was_made_from_is_refused(tmp_path, capsys):
    # The shipped births plan, as if it had been made from the file released here.
    data = REPO / "public_data" / "nvss_like_2019.csv.gz"
    plan = json.loads((REPO / "public_data" / "births.plan.json").read_text())
    plan["public_data_sha256"] = file_sha256(data)
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    spec = REPO / "public_data" / "births.plan.spec.yaml"
    candidates = REPO / "public_data" / "births.plan.candidates.yaml"
    assert _release(tmp_path, spec, data, candidates, "--plan", str(tmp_path / "plan.json")) == 2
    assert "the --plan file was made from --data itself" in capsys.readouterr().err

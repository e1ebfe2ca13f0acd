"""#61 item 4: a release's datasheet states what its data's ledger holds in all.

A second selection on the same data said only its own cost ("had it failed a check,
nothing would have been published") while the dataset's ledger held twice that. Now
acceptance.json and the datasheet state the ledger's cumulative spend when earlier work
spent on the same data, and the audit regenerates and checks it.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from synthflow.cli import main
from synthflow.loader import load_spec
from synthflow.privacy.ledger import read_ledger
from synthflow.release import audit_release
from synthflow.release.publish import sha256_file
from synthflow.space import expand_space


def _release(tmp_path: Path, spec, data: Path, ledger: Path, tag: str) -> tuple[int, Path]:
    cands = tmp_path / "candidates.yaml"
    configs = [c.to_json() for c in expand_space(spec) if c.letters == "aaaa"]
    cands.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configs}))
    out = tmp_path / f"release_{tag}"
    code = main(["release", str(spec.path), "--data", str(data), "--candidates", str(cands),
                 "--out", str(out), "--private-dir", str(tmp_path / f"enclave_{tag}"),
                 "--seed", "3", "--public", "--ledger", str(ledger), "--quiet",
                 "--max-attempts", "200"])  # fmt: skip
    return code, out


def test_a_second_release_states_the_datas_cumulative_spend(tmp_path, small_spec, small_csv):
    # example_small with room for two releases (4.6 each) on one dataset ledger
    doc = yaml.safe_load(Path(small_spec.path).read_text())
    doc["privacy"]["total_epsilon"] = 10.0
    (tmp_path / "small10.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    small_spec = load_spec(tmp_path / "small10.yaml")
    ledger = tmp_path / "dataset_ledger.jsonl"
    code, first = _release(tmp_path, small_spec, small_csv, ledger, "1")
    assert code == 0
    acc1 = json.loads((first / "acceptance.json").read_text())
    assert "dataset_ledger_spent" not in acc1  # nothing earlier: its own cost is all
    assert "What these data have spent in all" not in (first / "README.md").read_text()
    code, second = _release(tmp_path, small_spec, small_csv, ledger, "2")
    assert code == 0
    held = read_ledger(ledger)
    acc2 = json.loads((second / "acceptance.json").read_text())
    stated = acc2["dataset_ledger_spent"]
    assert abs(stated["epsilon"] - held.spent_epsilon) < 1e-12
    assert stated["epsilon"] > acc2["budget"]["total_epsilon"] * 1.5  # two releases' worth
    readme = (second / "README.md").read_text()
    assert f"records epsilon\n  {stated['epsilon']:.6g}" in readme
    assert audit_release(second).ok, audit_release(second).failures
    # the stated total is part of what the audit regenerates: lowering it fails the audit
    acc2["dataset_ledger_spent"]["epsilon"] = acc2["budget"]["total_epsilon"] / 2
    (second / "acceptance.json").write_text(json.dumps(acc2))
    files = sorted(p.name for p in second.iterdir() if p.name != "MANIFEST.json")
    (second / "MANIFEST.json").write_text(
        json.dumps({"files": {f: sha256_file(second / f) for f in files}})
    )
    assert any("datasheet regenerated" in f for f in audit_release(second).failures)

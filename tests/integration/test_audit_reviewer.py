"""The audit a reviewer runs, in the forms the README gives (#58, finding 11).

An independent audit found that a reviewer could not run it:

- ``synthflow audit REL births`` of a package made by ``synthflow release births`` (the
  steward's one command, which releases with the shipped plan's spec) failed 25
  checks: it compared the package with births.yaml, not with
  ``public_data/births.plan.spec.yaml``. The audit now recognises the shipped planned
  spec by its SHA-256, audits against it and says so.
- A release whose relative ``public_sample`` the package does not carry ended in
  exit 2 ("neither beside the spec") with nothing checked. The checks that read the
  sample are now listed as not checkable, naming it, and the rest run; the audit is
  then incomplete (exit 1, "audit INCOMPLETE"), never "passed".
- ``--key steward.key`` (the private key) and ``--key DIR`` said what they are not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from synthflow.cli import main
from synthflow.loader import load_spec
from synthflow.resources import public_data_file
from synthflow.space import expand_space

REPO = Path(__file__).resolve().parents[2]

COEF = {
    "name": "coef",
    "kind": "regression_coefficients",
    "column": "visits",
    "features": ["age", "smoker"],
    "threshold": 1000.0,
    "epsilon": 0.5,
    "noise_weights": "public_sample",
}
"""A criterion whose sensitivity reads the public sample (births' regression_coef_error)."""


@pytest.fixture(scope="module")
def sample_release(tmp_path_factory, make_frame):
    """A release of example_small + COEF whose public_sample lies beside the spec only.

    Returns (the package, the publisher's spec beside its sample).
    """
    tmp = tmp_path_factory.mktemp("sample")
    make_frame(600, seed=7).to_csv(tmp / "clinic.csv", index=False)
    publisher = tmp / "publisher"
    publisher.mkdir()
    make_frame(600, seed=8).to_csv(publisher / "sample.csv", index=False)  # independent
    doc = yaml.safe_load((REPO / "configs" / "example_small.yaml").read_text())
    doc["public_sample"] = "sample.csv"
    doc["acceptance"]["criteria"].append(COEF)
    (publisher / "spec.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    spec = load_spec(publisher / "spec.yaml")
    configurations = [c.to_json() for c in expand_space(spec) if c.letters == "aaaa"]
    cands = tmp / "candidates.yaml"
    cands.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configurations}))
    for seed in range(40):
        out = tmp / f"r{seed}"
        argv = ["release", str(publisher / "spec.yaml"), "--data", str(tmp / "clinic.csv"),
                "--candidates", str(cands), "--out", str(out), "--private-dir",
                str(tmp / f"e{seed}"), "--public", "--seed", str(seed), "--quiet", "--force",
                "--stop-probability", "1"]  # fmt: skip
        if main(argv) == 0:
            return out, publisher / "spec.yaml"
    pytest.fail("no release in 40 single attempts")


def test_a_public_sample_the_package_lacks_leaves_those_checks_listed_not_run(
    sample_release, tmp_path, capsys
):
    out, publisher_spec = sample_release
    capsys.readouterr()
    report = tmp_path / "audit.json"
    assert main(["audit", str(out), "--json", str(report)]) == 1  # was 2, nothing checked
    text = capsys.readouterr().out
    # The checks that read the sample are named, with the file and its hash ...
    sha = json.loads((out / "acceptance.json").read_text())["public_sample"]["sha256"]
    for check in ("sensitivity coef", "public parameters coef", "noise figures", "public sample"):
        assert f"NOT CHECKED  {check}\n" in text
    assert f"not checkable without the public sample 'sample.csv', SHA-256 {sha}" in text
    assert f"synthflow audit {out} DIR/spec.yaml" in text  # how to run them
    # ... and every other check ran: the other criteria's sensitivities, the decisions.
    for check in ("sensitivity marginals", "sensitivity mean_visits", "decision coef",
                  "noise sd coef", "datasheet regenerated", "budget total"):  # fmt: skip
        assert f"PASS  {check}" in text
    assert "FAIL" not in text
    assert "audit passed" not in text
    assert text.rstrip().endswith("could not be run (listed above as NOT CHECKED)")
    assert "audit INCOMPLETE: the " in text
    doc = json.loads(report.read_text())
    assert doc["passed"] is False and doc["complete"] is False
    assert {c["check"] for c in doc["not_checkable"]} >= {"sensitivity coef", "noise figures"}
    # With the publisher's spec beside the sample, every check runs and passes.
    assert main(["audit", str(out), str(publisher_spec)]) == 0
    text = capsys.readouterr().out
    assert "NOT CHECKED" not in text and text.rstrip().endswith("audit passed")


def test_an_incomplete_audit_with_a_failed_check_says_failed(sample_release, tmp_path, capsys):
    import shutil

    out, _ = sample_release
    copy = tmp_path / "pkg"
    shutil.copytree(out, copy)
    (copy / "extra.txt").write_text("added")  # fails the file set
    assert main(["audit", str(copy)]) == 1
    text = capsys.readouterr().out
    assert "FAIL  file set" in text and "NOT CHECKED  sensitivity coef" in text
    assert "audit FAILED: 2 check(s); 5 more not run" in text  # file set, its hash


def test_audit_key_says_a_private_key_and_a_directory_are_not_the_public_key(
    sample_release, tmp_path, capsys
):
    out, spec = sample_release  # with the publisher's spec every check runs
    keys = tmp_path / "keys"
    keys.mkdir()
    assert main(["keygen", "--out", str(keys / "steward")]) == 0
    capsys.readouterr()
    assert main(["audit", str(out), str(spec), "--key", str(keys / "steward.key")]) == 2
    err = capsys.readouterr().err
    assert "that is the private signing key; give the public key steward.pub" in err
    assert main(["audit", str(out), str(spec), "--key", str(keys)]) == 2
    err = capsys.readouterr().err
    assert "is a directory" in err and "does not exist" not in err
    # the public key itself goes on to the audit (the package is not signed: it fails)
    assert main(["audit", str(out), str(spec), "--key", str(keys / "steward.pub")]) == 1
    assert "the package is not signed" in capsys.readouterr().out


@pytest.mark.slow
def test_audit_births_of_the_stewards_release_uses_the_shipped_plans_spec(tmp_path, capsys):
    # The steward's one command (no --candidates, no --plan) releases with the shipped
    # plan's spec; the reviewer names the bundled spec, as the README says.
    out = tmp_path / "release"
    argv = ["release", "births", "--data", str(public_data_file("nvss_like_2019.csv.gz")),
            "--ledger", str(tmp_path / "ledger.jsonl"), "--out", str(out), "--private-dir",
            str(tmp_path / "enclave"), "--quiet", "--public", "--seed", "7"]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    said = "audited against the shipped plan's spec for births, public_data/births.plan.spec.yaml"
    for i, spec in enumerate(("births", str(REPO / "configs" / "births.yaml"))):  # or a copy
        report = tmp_path / f"audit{i}.json"
        assert main(["audit", str(out), spec, "--json", str(report)]) == 0, spec
        text = capsys.readouterr().out
        assert text.startswith(said) and text.rstrip().endswith("audit passed")
        assert "PASS  release spec.yaml equals the reviewer's spec" in text
        assert json.loads(report.read_text())["audited_against"].startswith("the shipped plan")
    # Another bundled spec is not taken for it; the package's own spec says nothing.
    assert main(["audit", str(out), "births-pure"]) == 1
    assert "audited against" not in capsys.readouterr().out
    assert main(["audit", str(out)]) == 0
    assert "audited against" not in capsys.readouterr().out

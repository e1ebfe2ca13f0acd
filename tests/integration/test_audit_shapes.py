"""A tampered package's wrong shapes are one line (exit 2), never a traceback (#45).

The reliability catalogue: `audit` of a package whose acceptance.json lacks `budget` or
`spec`, holds a value as text, or holds its criteria as a mapping ended in a traceback
(exit 1, which reads as "the audit failed"); `audit --json` could write into the package
it audits (every later audit then failed on the file set).
"""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from synthflow.cli import main
from synthflow.loader import load_spec
from synthflow.space import expand_space

REPO_SMALL = "example_small"


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pkg")
    spec = load_spec(REPO_SMALL)
    # The suite's small made-up frame, from the top conftest by path (a bare 'import
    # conftest' may find another directory's conftest first).
    import importlib.util
    from pathlib import Path

    top = Path(__file__).resolve().parents[1] / "conftest.py"
    loader = importlib.util.spec_from_file_location("synthflow_tests_conftest", top)
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    module.make_small_frame(600, seed=7).to_csv(tmp / "clinic.csv", index=False)
    cands = tmp / "candidates.yaml"
    configs = [c.to_json() for c in expand_space(spec) if c.letters == "aaaa"]
    cands.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configs}))
    for seed in range(40):
        out = tmp / f"r{seed}"
        argv = ["release", spec.path, "--data", str(tmp / "clinic.csv"), "--candidates",
                str(cands), "--out", str(out), "--private-dir", str(tmp / f"e{seed}"),
                "--public", "--seed", str(seed), "--quiet", "--stop-probability", "1"]  # fmt: skip
        if main(argv) == 0:
            return out
    pytest.fail("no release in 40 single attempts")


def _edit_budget(a):
    del a["budget"]


def _edit_spec(a):
    del a["spec"]


def _rows_text(a):
    a["rows"] = str(a["rows"])


def _criteria_mapping(a):
    a["criteria"] = {"x": 1}


def _total_text(a):
    a["budget"]["total_epsilon"] = str(a["budget"]["total_epsilon"])


@pytest.mark.parametrize(
    "edit", [_edit_budget, _edit_spec, _rows_text, _criteria_mapping, _total_text]
)
def test_a_misshapen_acceptance_json_is_one_line(package, tmp_path, capsys, edit):
    copy = tmp_path / "pkg"
    shutil.copytree(package, copy)
    acc = json.loads((copy / "acceptance.json").read_text())
    edit(acc)
    (copy / "acceptance.json").write_text(json.dumps(acc))
    assert main(["audit", str(copy)]) == 2
    err = capsys.readouterr().err
    assert "is not shaped as synthflow writes it" in err and "Traceback" not in err
    assert err.count("\n") == 1


def test_a_non_ascii_signature_fails_the_audit(package, tmp_path, capsys):
    copy = tmp_path / "pkg"
    shutil.copytree(package, copy)
    (copy / "SIGNATURE").write_bytes(b"\xff\xfe not base64 \xe9")
    assert main(["audit", str(copy)]) in (1, 2)
    assert "Traceback" not in capsys.readouterr().err


def test_audit_json_never_writes_into_the_package(package, capsys):
    before = sorted(p.name for p in package.iterdir())
    assert main(["audit", str(package), "--json", str(package / "audit.json")]) == 2
    assert "inside the package it audits" in capsys.readouterr().err
    assert sorted(p.name for p in package.iterdir()) == before
    assert main(["audit", str(package)]) == 0

"""A command refused before it does anything (exit 2) leaves no output behind (#38 item 8).

Each case names an output in a directory that does not exist yet; after the refusal
neither it nor any directory made for it exists. And ``audit`` of a path that does not
exist says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from synthflow._util.outputs import removed_if_refused
from synthflow.cli import main
from synthflow.config import ReleaseSpec
from synthflow.data import load_data
from synthflow.privacy.ledger import dataset_ledger
from synthflow.space import expand_space

REPO = Path(__file__).resolve().parents[2]
SMALL = str(REPO / "configs" / "example_small.yaml")


def _left(root: Path, before: set[Path]) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in set(root.rglob("*")) - before)


def test_audit_of_a_missing_path_says_so(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    missing = tmp_path / "no" / "release"
    report = tmp_path / "audit.json"
    assert main(["audit", str(missing), "--json", str(report)]) == 2
    err = capsys.readouterr().err
    assert f"release directory {str(missing)!r} does not exist; check the path" in err
    assert "Traceback" not in err and not report.exists()


def test_run_refused_leaves_no_output_directory(
    small_spec: ReleaseSpec, small_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    before = set(tmp_path.rglob("*"))
    config = expand_space(small_spec)[0].id
    out = tmp_path / "new" / "run"
    # private data without --ledger: refused after the data are read
    assert (
        main(["run", SMALL, "--data", str(small_csv), "--config", config, "--out", str(out)]) == 2
    )
    assert "need --ledger FILE" in capsys.readouterr().err
    assert _left(tmp_path, before) == []


def test_sweep_refused_leaves_no_store(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    before = set(tmp_path.rglob("*"))
    store = tmp_path / "new" / "sweep.db"
    args = ["sweep", SMALL, "--data", str(bad), "--public", "--store", str(store)]
    assert main([*args, "--repeats", "1", "--workers", "1"]) == 2
    assert "input lacks column(s)" in capsys.readouterr().err
    assert _left(tmp_path, before) == []  # no store (a retry is not "a store of other data")


def test_release_refused_by_the_dataset_ledger_makes_no_enclave(
    small_spec: ReleaseSpec, small_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    ledger = tmp_path / "budget.jsonl"
    frame = load_data(small_csv, small_spec, public=False).frame
    total = small_spec.privacy.total_epsilon
    dataset_ledger(ledger, frame, total_epsilon=total).charge("earlier work", epsilon=0.9 * total)
    cands = tmp_path / "candidates.yaml"
    configurations = [c.to_json() for c in expand_space(small_spec)[:2]]
    cands.write_text(
        yaml.safe_dump({"spec_sha256": small_spec.sha256, "configurations": configurations})
    )
    before = set(tmp_path.rglob("*"))
    rc = main(
        [
            "release", SMALL, "--data", str(small_csv), "--candidates", str(cands),
            "--out", str(tmp_path / "new" / "release"),
            "--private-dir", str(tmp_path / "new" / "enclave"),
            "--ledger", str(ledger), "--force",
        ]
    )  # fmt: skip
    assert rc == 2
    err = capsys.readouterr().err
    assert "has 0.1 left" in err or "left of its total" in err
    assert "nothing was spent" in err
    assert _left(tmp_path, before) == []  # no enclave with a start record and no charge


def test_tables_protect_refused_leaves_no_output_directory(
    nvss_10k: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    spec = str(REPO / "configs" / "births-2024.yaml")
    base = ["tables", "protect", spec, "--data", str(nvss_10k),
            "--tables", str(REPO / "configs" / "tables_births.yaml"), "--public",
            "--out", str(tmp_path / "new" / "t")]  # fmt: skip
    assert main([*base, "--method", "top-down", "--epsilon", "1", "--split", "0.5,0.7"]) == 2
    assert main([*base, "--method", "cell-key", "--record-key-column", "nope"]) == 2
    capsys.readouterr()
    assert list(tmp_path.iterdir()) == []


def test_removed_if_refused_removes_only_what_it_made_and_only_empty(tmp_path: Path) -> None:
    kept = tmp_path / "kept"
    kept.mkdir()
    with pytest.raises(RuntimeError), removed_if_refused(kept / "a" / "b", tmp_path / "c"):
        (kept / "a" / "b").mkdir(parents=True)
        (tmp_path / "c").mkdir()
        (tmp_path / "c" / "ledger.jsonl").write_text(json.dumps({}))  # written: stays
        raise RuntimeError
    assert kept.is_dir() and not (kept / "a").exists()
    assert (tmp_path / "c" / "ledger.jsonl").is_file()
    with removed_if_refused(tmp_path / "d"):  # no refusal: kept
        (tmp_path / "d").mkdir()
    assert (tmp_path / "d").is_dir()

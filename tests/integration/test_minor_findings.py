"""The minor findings of the [guarantees] audit (#58), each through the real CLI.

A traceback on deeply nested JSON or YAML; a plan.json whose total is NaN; a draw whose
--out is a hard link to its input; options no sweep can use, found only after minutes
or as a numpy allocation error; a public_sample that is no table; and messages that
named the wrong cause (free space for a directory, "does not exist" for a datasheet
directory, a data file as --datasheet, a race's loser told what is left instead of that
a selection is running, a tab-separated file with no hint).
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest
import yaml

from synthflow.cli import main
from synthflow.data import load_data
from synthflow.privacy.ledger import dataset_ledger
from synthflow.space import expand_space

REPO = Path(__file__).resolve().parents[2]
DEEP = "[" * 50_000 + "]" * 50_000  # past Python's recursion limit in json and yaml


def _candidates(tmp_path: Path, spec) -> Path:
    path = tmp_path / "candidates.yaml"
    configurations = [c.to_json() for c in expand_space(spec) if c.letters == "aaaa"]
    path.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configurations}))
    return path


def _release(tmp_path: Path, spec, data: Path, *extra: str) -> int:
    return main(["release", str(spec), "--data", str(data), "--out", str(tmp_path / "r"),
                 "--private-dir", str(tmp_path / "e"), "--ledger", str(tmp_path / "l.jsonl"),
                 "--quiet", *extra])  # fmt: skip


def test_deeply_nested_candidates_and_plan_are_refused_in_one_line(
    tmp_path, small_spec, small_csv, capsys
):
    deep = tmp_path / "deep.yaml"
    deep.write_text(DEEP)
    assert _release(tmp_path, small_spec.path, small_csv, "--candidates", str(deep)) == 2
    err = capsys.readouterr().err
    assert "nested too deeply" in err and "Traceback" not in err
    plan_spec = REPO / "public_data" / "births.plan.spec.yaml"
    shipped = REPO / "public_data" / "births.plan.candidates.yaml"
    births = REPO / "public_data" / "nvss_like_2019.csv.gz"
    argv = ["--candidates", str(shipped), "--public", "--plan", str(deep)]
    assert _release(tmp_path, plan_spec, births, *argv) == 2
    err = capsys.readouterr().err
    assert "is not a plan.json (nested too deeply)" in err and "Traceback" not in err
    assert not (tmp_path / "l.jsonl").exists() and not (tmp_path / "e").exists()


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_a_plan_whose_total_is_not_finite_is_refused(tmp_path, value, capsys):
    shipped = json.loads((REPO / "public_data" / "births.plan.json").read_text())
    text = json.dumps(shipped | {"total_epsilon": 0.123}).replace("0.123", value)
    plan = tmp_path / "plan.json"
    plan.write_text(text)
    argv = ["--candidates", str(REPO / "public_data" / "births.plan.candidates.yaml"),
            "--public", "--plan", str(plan)]  # fmt: skip
    births = REPO / "public_data" / "nvss_like_2019.csv.gz"
    assert _release(tmp_path, REPO / "public_data" / "births.plan.spec.yaml", births, *argv) == 2
    assert "total_epsilon (a number) expected" in capsys.readouterr().err
    assert not (tmp_path / "l.jsonl").exists()


def test_an_audit_of_deeply_nested_release_files_is_refused(tmp_path, capsys):
    release = tmp_path / "release"
    release.mkdir()
    (release / "MANIFEST.json").write_text(DEEP)
    (release / "acceptance.json").write_text(DEEP)
    assert main(["audit", str(release)]) == 2
    err = capsys.readouterr().err
    assert "nested too deeply" in err and "Traceback" not in err


def test_a_draw_never_writes_over_its_input_through_a_hard_link(
    tmp_path, small_spec, small_csv, capsys
):
    link = tmp_path / "link.csv"
    os.link(small_csv, link)
    before = small_csv.read_bytes()
    argv = ["public-data", "draw", small_spec.path, "--from", str(small_csv), "--public",
            "--rows", "50", "--seed", "1", "--out", str(link), "--force"]  # fmt: skip
    assert main(argv) == 2
    assert "also an input of this command" in capsys.readouterr().err
    assert small_csv.read_bytes() == before


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--release-probability", "1.5"], "--release-probability (1.5) must be in (0, 1]"),
        (["--release-probability", "0"], "--release-probability (0.0) must be in (0, 1]"),
        (["--repeats", "0"], "--repeats (0) must be at least 1"),
        (["--workers", "0"], "--workers (0) must be at least 1"),
        (["--rows", "1000000000000"], "--rows must be between 1,000 and 100,000,000"),
    ],
)
def test_ship_plan_refuses_unusable_options_before_its_sweep(tmp_path, option, message, capsys):
    # Before: each ran the sweep's minutes first (or a 7 TiB allocation for --rows).
    assert main(["ship-plan", "births", "--out", str(tmp_path / "p"), *option]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


def test_init_refuses_a_row_count_no_register_has(tmp_path, nvss_10k, capsys):
    out = tmp_path / "spec.yaml"
    code = main(["init", "--data", str(nvss_10k), "--public", "--out", str(out),
                 "--rows", "1000000000000"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "--rows must be between 1 and 100,000,000" in err and "Traceback" not in err
    assert not out.exists()


def test_validate_refuses_a_public_sample_that_is_no_table_of_the_spec(tmp_path, capsys):
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/bash\nbin:x:1:1\n")
    spec = yaml.safe_load((REPO / "configs" / "births.yaml").read_text())
    spec["public_sample"] = "../etc/passwd"
    (tmp_path / "specs").mkdir()
    path = tmp_path / "specs" / "births.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "public_sample '../etc/passwd' cannot be read as the spec's data" in err
    assert "valid;" not in err


def test_a_datasheet_that_is_a_data_file_or_a_directory_says_so(
    tmp_path, small_spec, small_csv, capsys
):
    big = tmp_path / "big.csv"
    big.write_text("age,visits\n" + "31,2\n" * 60_000)  # 360 KB of rows
    cands = _candidates(tmp_path, small_spec)
    base = ["--candidates", str(cands), "--public", "--datasheet"]
    assert _release(tmp_path, small_spec.path, small_csv, *base, str(big)) == 2
    err = capsys.readouterr().err
    assert "more than a datasheet's 200,000" in err and "is this the data file?" in err
    assert _release(tmp_path, small_spec.path, small_csv, *base, str(small_csv)) == 2
    err = capsys.readouterr().err
    assert "holds no mapping of datasheet keys" in err and "31," not in err
    assert _release(tmp_path, small_spec.path, small_csv, *base, str(tmp_path)) == 2
    assert "is a directory" in capsys.readouterr().err
    assert not (tmp_path / "l.jsonl").exists()


def test_the_loser_of_a_race_is_told_a_selection_is_running(
    tmp_path, small_spec, small_csv, capsys
):
    # The dataset's ledger holds 4 of its 5 spent (a release of 2.3 was charged by the
    # winner); the winner still holds the enclave's lock: the loser is told it runs.
    frame = load_data(small_csv, small_spec).frame
    ledger = dataset_ledger(tmp_path / "l.jsonl", frame, total_epsilon=5.0)
    ledger.charge("the winner's selection", epsilon=4.0)
    cands = _candidates(tmp_path, small_spec)
    argv = ["--candidates", str(cands), "--stop-probability", "1"]
    (tmp_path / "e").mkdir()
    with (tmp_path / "e" / ".lock").open("a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert _release(tmp_path, small_spec.path, small_csv, *argv) == 2
        err = capsys.readouterr().err
    assert "a selection is running in --private-dir" in err and "left" not in err
    # Once it has ended (the lock is free), what is left is said, as before.
    assert _release(tmp_path, small_spec.path, small_csv, *argv) == 2
    assert "selection is running" not in capsys.readouterr().err


def test_a_tab_separated_file_gets_a_hint(tmp_path, small_spec, small_csv, capsys):
    tabbed = tmp_path / "clinic.tsv"
    tabbed.write_text(small_csv.read_text().replace(",", "\t"))
    assert _release(tmp_path, small_spec.path, tabbed, "--candidates",
                    str(_candidates(tmp_path, small_spec))) == 2  # fmt: skip
    err = capsys.readouterr().err
    error = next(line for line in err.splitlines() if "error:" in line)  # not the warnings
    assert "looks tab-separated" in error and "age" not in error.split("lacks column(s)")[0]


def test_an_os_error_names_its_own_cause(tmp_path):
    # The CLI's last word on an OSError said "free space or choose another path" for any
    # cause: a directory where a file is expected among them. Real errors of the OS:
    from synthflow.cli import _os_advice

    (tmp_path / "afile").write_text("x")
    errors = {}
    for name, act in {
        "directory": lambda: open(tmp_path, "rb"),
        "under a file": lambda: (tmp_path / "afile" / "x").write_text("y"),
        "exists": (tmp_path / "afile").mkdir,
        "missing": (tmp_path / "none" / "x").read_text,
    }.items():
        with pytest.raises(OSError) as info:
            act()
        errors[name] = _os_advice(info.value)
    assert "is a directory where a file is expected" in errors["directory"]
    assert "is a file, not a directory" in errors["under a file"]
    assert "already there" in errors["exists"]
    assert "does not exist" in errors["missing"]
    assert not any("free space" in advice for advice in errors.values())
    full = OSError(28, "No space left on device")  # ENOSPC: the one cause to free space for
    assert "free space" in _os_advice(full)

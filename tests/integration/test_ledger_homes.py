"""A dataset ledger is anchored to its head record under ``SYNTHFLOW_HOME`` (issue 58, 10).

The head record (synthflow/privacy/head.py) is per user: a ledger that holds charges
but has no record under the current home (another user's home, a fresh home, a ledger
moved or restored from a backup) was accepted silently. Two users on one ledger: after
a rollback, user B's charge was accepted, and every later command of user A was
refused for good; a fresh home and an older backup spent 6 against a total of 5. Now
such a ledger is refused, naming what it holds, until the steward adopts it
(``synthflow ledger adopt LEDGER``): adopting is recorded as a line of the ledger, and
adopting a ledger that forgot part of the head recorded here charges what it forgot,
so user A recovers without losing a spend. Also: a damaged head record is refused, a
relative ``SYNTHFLOW_HOME`` is made absolute once per process, and "charged now" is not
said before a refused ledger. Real processes, real files, each with its own home.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from synthflow.loader import load_spec
from synthflow.space import expand_space


def _cli(*argv: str, home: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "synthflow", *argv],
        env={**os.environ, "SYNTHFLOW_HOME": str(home)},
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


class _Steward:
    """``synthflow run`` of one spec on one ledger, under a given home."""

    def __init__(self, tmp_path: Path, spec_path: str, csv: Path) -> None:
        self.tmp, self.spec, self.csv = tmp_path, spec_path, csv
        self.ledger = tmp_path / "budget.jsonl"
        self.config = next(c.id for c in expand_space(load_spec(spec_path)))
        self.runs = 0

    def run(self, home: str | Path, *, cwd: Path | None = None) -> subprocess.CompletedProcess:
        self.runs += 1
        out = self.tmp / f"r{self.runs}"
        return _cli("run", self.spec, "--data", str(self.csv), "--config", self.config,
                    "--out", str(out), "--ledger", str(self.ledger), "--quiet",
                    home=home, cwd=cwd)  # fmt: skip

    def adopt(self, home: str | Path) -> subprocess.CompletedProcess:
        return _cli("ledger", "adopt", str(self.ledger), home=home)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _spent(path: Path) -> float:
    """The epsilon a ledger file records (read here: this process's home has no record)."""
    return sum(line.get("epsilon", 0.0) for line in _lines(path)[1:])


def _ok(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, done.stderr


def _refused(done: subprocess.CompletedProcess, *needles: str) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr)
    for needle in needles:
        assert needle in " ".join(done.stderr.split()), (needle, done.stderr)
    return done.stderr


@pytest.fixture()
def steward(tmp_path, small_spec, small_csv) -> _Steward:
    return _Steward(tmp_path, small_spec.path, small_csv)  # total 5, each run spends 2


@pytest.fixture()
def roomy(tmp_path, small_spec, small_csv) -> _Steward:
    text = Path(small_spec.path).read_text()
    assert "total_epsilon: 5.0" in text
    spec = tmp_path / "roomy.yaml"
    spec.write_text(text.replace("total_epsilon: 5.0", "total_epsilon: 10.0"))
    return _Steward(tmp_path, str(spec), small_csv)  # total 10, each run spends 2


def test_a_ledger_with_charges_and_no_record_here_is_refused_naming_what_it_holds(
    tmp_path, steward
):
    _ok(steward.run(tmp_path / "home-a"))
    before = steward.ledger.read_bytes()
    err = _refused(
        steward.run(tmp_path / "home-b"),
        "holds 2 charge(s), epsilon 2 spent of the total 5",
        f"synthflow ledger adopt {steward.ledger}",
        str(tmp_path / "home-b"),
        "Nothing was spent",
    )
    assert "Traceback" not in err
    assert steward.ledger.read_bytes() == before
    assert not (tmp_path / "r2").exists() or not any((tmp_path / "r2").iterdir())


def test_a_fresh_home_and_an_older_backup_cannot_overspend(tmp_path, steward):
    # The audit's case: a fresh home plus a restored older backup spent more than the
    # total (here: 2, backup, 4, restore the backup in a new home, 6 of 5 accepted).
    _ok(steward.run(tmp_path / "home"))
    backup = steward.ledger.read_bytes()
    _ok(steward.run(tmp_path / "home"))
    steward.ledger.write_bytes(backup)
    _refused(steward.run(tmp_path / "fresh-home"), "synthflow ledger adopt", "Nothing was spent")
    assert steward.ledger.read_bytes() == backup


def test_a_new_or_empty_ledger_needs_no_adoption(tmp_path, steward):
    _ok(steward.run(tmp_path / "home-a"))
    # Only its header (no charge) under another home: nothing can have been forgotten.
    header = steward.ledger.read_text().splitlines()[0]
    steward.ledger = tmp_path / "other" / "budget.jsonl"
    steward.ledger.parent.mkdir()
    steward.ledger.write_text(header + "\n")
    _ok(steward.run(tmp_path / "home-b"))
    # A ledger that does not exist yet is created without adoption.
    steward.ledger = tmp_path / "new.jsonl"
    _ok(steward.run(tmp_path / "home-b"))
    _ok(steward.run(tmp_path / "home-b"))
    assert _spent(steward.ledger) == pytest.approx(4.0)


def test_two_homes_recover_from_a_rollback_by_adopting(tmp_path, roomy):
    # The audit's case: user A and user B, one ledger, each with their own home.
    home_a, home_b = tmp_path / "home-a", tmp_path / "home-b"
    _ok(roomy.run(home_a))  # A: 2
    backup = roomy.ledger.read_bytes()
    _ok(roomy.run(home_a))  # A: 4
    roomy.ledger.write_bytes(backup)  # rolled back: the file forgets A's second run
    # B's charge on it is not accepted silently (it was, and then A was refused for good).
    _refused(roomy.run(home_b), "holds 2 charge(s), epsilon 2 spent of the total 10")
    assert roomy.ledger.read_bytes() == backup
    # B adopts it explicitly: said, and recorded as a line of the ledger.
    done = roomy.adopt(home_b)
    _ok(done)
    said = " ".join(done.stdout.split())
    assert "adopted" in said and "2 charge(s), epsilon 2 spent of the total 10" in said, said
    assert _lines(roomy.ledger)[-1]["mechanism"] == "adopt"
    assert _lines(roomy.ledger)[-1]["epsilon"] == 0.0
    _ok(roomy.run(home_b))  # B: 2
    # A's record shows the rollback: refused, naming the way out.
    _refused(roomy.run(home_a), "not the line synthflow wrote", "synthflow ledger adopt")
    # A adopts: the spend the file forgot (A's second run) is charged again.
    done = roomy.adopt(home_a)
    _ok(done)
    said = " ".join(done.stdout.split())
    assert "forgot" in said and "epsilon 2" in said, said
    carried = _lines(roomy.ledger)[-1]
    assert carried["mechanism"] == "adopt" and carried["epsilon"] == pytest.approx(2.0)
    # Both go on; the file records every run: A 3, B 2, each 2.
    _ok(roomy.run(home_a))
    _ok(roomy.run(home_b))
    assert _spent(roomy.ledger) == pytest.approx(5 * 2.0)
    _refused(roomy.run(home_a), "cannot charge")  # the total is reached, for both
    _refused(roomy.run(home_b), "cannot charge")


def test_adopting_a_ledger_recorded_here_changes_nothing(tmp_path, steward):
    _ok(steward.run(tmp_path / "home"))
    before = steward.ledger.read_bytes()
    done = steward.adopt(tmp_path / "home")
    _ok(done)
    assert "nothing to adopt" in done.stdout
    assert steward.ledger.read_bytes() == before


def test_adopt_refuses_what_is_not_a_dataset_ledger(tmp_path):
    missing = _cli("ledger", "adopt", str(tmp_path / "none.jsonl"), home=tmp_path / "h")
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    own = tmp_path / "run-ledger.jsonl"
    own.write_text("")
    assert _cli("ledger", "adopt", str(own), home=tmp_path / "h").returncode == 2


def test_a_damaged_head_record_is_refused_until_adopted(tmp_path, steward):
    home = tmp_path / "home"
    _ok(steward.run(home))
    (record,) = (home / "ledger-heads").glob("*.json")
    record.write_text('{"lines": "three"')  # damaged: it was ignored, as if absent
    before = steward.ledger.read_bytes()
    _refused(steward.run(home), str(record), "cannot be read", "synthflow ledger adopt")
    assert steward.ledger.read_bytes() == before
    done = steward.adopt(home)
    _ok(done)
    assert "unreadable" in done.stdout
    _ok(steward.run(home))


def test_a_relative_home_is_made_absolute_and_named(tmp_path, steward):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    _ok(steward.run("home", cwd=tmp_path / "a"))
    assert list((tmp_path / "a" / "home" / "ledger-heads").glob("*.json"))
    # From another directory the same relative value is another home: refused, naming
    # the absolute directory it looked in (it was accepted silently).
    _refused(steward.run("home", cwd=tmp_path / "b"), str(tmp_path / "b" / "home"))


_CHDIR = """
import os, sys
from synthflow.data import load_data
from synthflow.errors import ConfigError
from synthflow.privacy.ledger import dataset_ledger
from synthflow.loader import load_spec

spec_path, csv, path, elsewhere = sys.argv[1:]
spec = load_spec(spec_path)
frame = load_data(csv, spec).frame
ledger = dataset_ledger(path, frame, total_epsilon=spec.privacy.total_epsilon)
ledger.charge("one", epsilon=1.0)
ledger.charge("two", epsilon=1.0)
os.chdir(elsewhere)  # a notebook changes directory
lines = open(path).read().splitlines()
open(path, "w").write("\\n".join(lines[:-1]) + "\\n")  # the last charge rolled back
try:
    dataset_ledger(path, frame, total_epsilon=spec.privacy.total_epsilon)
except ConfigError as exc:
    print("refused:", exc)
else:
    print("accepted")
"""


def test_a_relative_home_stays_one_home_in_a_process_that_changes_directory(
    tmp_path, small_spec, small_csv
):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    done = subprocess.run(
        [sys.executable, "-c", _CHDIR, small_spec.path, str(small_csv),
         str(tmp_path / "budget.jsonl"), str(tmp_path / "b")],
        env={**os.environ, "SYNTHFLOW_HOME": "home"}, cwd=tmp_path / "a",
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "refused:" in done.stdout and "cut short" in done.stdout, done.stdout
    assert "SYNTHFLOW_HOME is relative" in done.stderr


def test_charged_now_is_not_said_before_a_refused_ledger(tmp_path, steward, small_spec):
    import yaml

    _ok(steward.run(tmp_path / "home"))
    lines = steward.ledger.read_text().splitlines()
    steward.ledger.write_text("\n".join(lines[:-1]) + "\n")  # rolled back
    cands = tmp_path / "candidates.yaml"
    configs = [c.to_json() for c in expand_space(small_spec) if c.letters == "aaaa"]
    cands.write_text(yaml.safe_dump({"spec_sha256": small_spec.sha256, "configurations": configs}))
    for home in (tmp_path / "home", tmp_path / "other-home"):  # rolled back; not adopted
        done = _cli("release", small_spec.path, "--data", str(steward.csv),
                    "--candidates", str(cands), "--out", str(tmp_path / "release"),
                    "--private-dir", str(tmp_path / "enclave"), "--ledger", str(steward.ledger),
                    "--public", "--quiet", "--stop-probability", "1", home=home)  # fmt: skip
        err = _refused(done, "Nothing was spent")
        assert "charged now" not in err, err

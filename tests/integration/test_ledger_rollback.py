"""A dataset ledger that was edited, cut short or emptied is refused (#45, catalogue).

After a completed command, setting its last charge's epsilon to 0, deleting its last
line, or truncating the file to 0 bytes each let a second command through: the hash
chain covered every line but the last, and nothing remembered the file's length. The
ledger's head is now recorded outside the file (synthflow/privacy/head.py), and a
ledger that does not extend it is refused before any charge. Through the real CLI.
"""

from __future__ import annotations

import json

import pytest

from synthflow.cli import main
from synthflow.privacy.ledger import Ledger
from synthflow.space import expand_space


def _run(tmp_path, spec, csv, out: str) -> list[str]:
    config = next(c.id for c in expand_space(spec))
    return ["run", spec.path, "--data", str(csv), "--config", config, "--out",
            str(tmp_path / out), "--ledger", str(tmp_path / "budget.jsonl"),
            "--quiet"]  # fmt: skip


def _zero_last_epsilon(path):
    lines = path.read_text().splitlines()
    last = json.loads(lines[-1])
    last["epsilon"] = 0.0
    lines[-1] = json.dumps(last)
    path.write_text("\n".join(lines) + "\n")


def _drop_last_line(path):
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")


def _swap_last_two(path):
    lines = path.read_text().splitlines()
    lines[-1], lines[-2] = lines[-2], lines[-1]
    path.write_text("\n".join(lines) + "\n")


EDITS = {
    "last-epsilon-zeroed": (_zero_last_epsilon, "not the line synthflow wrote"),
    "last-line-deleted": (_drop_last_line, "was cut short, emptied or replaced"),
    "truncated-to-0-bytes": (lambda p: p.write_bytes(b""), "was cut short, emptied"),
    "deleted": (lambda p: p.unlink(), "was cut short, emptied"),
    "last-two-reordered": (_swap_last_two, "line"),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_rolled_back_ledger_is_refused_before_any_charge(
    tmp_path, small_spec, small_csv, capsys, edit
):
    ledger = tmp_path / "budget.jsonl"
    assert main(_run(tmp_path, small_spec, small_csv, "r1")) == 0
    change, message = EDITS[edit]
    change(ledger)
    before = ledger.read_bytes() if ledger.exists() else None
    capsys.readouterr()
    assert main(_run(tmp_path, small_spec, small_csv, "r2")) == 2
    err = capsys.readouterr().err
    assert (message in err and "Nothing was spent" in err) or "damaged" in err, err
    assert (ledger.read_bytes() if ledger.exists() else None) == before
    assert not (tmp_path / "r2").exists() or not any((tmp_path / "r2").iterdir())


def test_an_untouched_ledger_goes_on(tmp_path, small_spec, small_csv):
    assert main(_run(tmp_path, small_spec, small_csv, "r1")) == 0
    assert main(_run(tmp_path, small_spec, small_csv, "r2")) == 0
    spent = Ledger(total_epsilon=100, path=tmp_path / "budget.jsonl").spent_epsilon
    assert spent == pytest.approx(2 * small_spec.privacy.generator_epsilon)


def test_a_restored_latest_copy_is_accepted(tmp_path, small_spec, small_csv):
    # The refusal says: restore the latest copy. A copy of the file as synthflow last
    # wrote it extends the recorded head, and is accepted.
    ledger = tmp_path / "budget.jsonl"
    assert main(_run(tmp_path, small_spec, small_csv, "r1")) == 0
    backup = ledger.read_bytes()
    ledger.write_bytes(b"")
    assert main(_run(tmp_path, small_spec, small_csv, "r2")) == 2
    ledger.write_bytes(backup)
    assert main(_run(tmp_path, small_spec, small_csv, "r3")) == 0

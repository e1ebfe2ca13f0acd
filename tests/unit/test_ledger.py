"""The ledger charges before release, refuses overspend and survives restarts."""

from __future__ import annotations

import json
import re

import pytest

from synthflow.errors import BudgetExceededError, ConfigError
from synthflow.ledger import Ledger


def test_charges_add_up_and_are_written(tmp_path):
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(total_epsilon=1.0, path=path)
    ledger.charge("a", epsilon=0.3, mechanism="laplace", sensitivity=1.0)
    ledger.charge("b", epsilon=0.7)
    assert ledger.spent_epsilon == 1.0
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [(x["what"], x["epsilon"], x["delta"]) for x in lines] == [
        ("a", 0.3, 0.0),
        ("b", 0.7, 0.0),
    ]


def test_overspend_is_refused_and_not_recorded(tmp_path):
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(total_epsilon=1.0, path=path)
    ledger.charge("a", epsilon=0.9)
    msg = "cannot charge 'b': requested epsilon 0.2 (delta 0) but only epsilon 0.1"
    with pytest.raises(BudgetExceededError, match=re.escape(msg)):
        ledger.charge("b", epsilon=0.2)
    assert len(path.read_text().splitlines()) == 1
    assert ledger.spent_epsilon == 0.9


def test_split_budget_composes_exactly():
    eps, split = 4.0, 0.1
    ledger = Ledger(total_epsilon=eps)
    ledger.charge("structure", epsilon=eps * split)
    ledger.charge("conditionals", epsilon=eps - eps * split)
    assert ledger.remaining_epsilon == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(BudgetExceededError):
        ledger.charge("more", epsilon=1e-6)


def test_restart_continues_the_same_ledger(tmp_path):
    path = tmp_path / "ledger.jsonl"
    Ledger(total_epsilon=1.0, path=path).charge("first run", epsilon=0.6)
    again = Ledger(total_epsilon=1.0, path=path)
    assert again.spent_epsilon == 0.6
    with pytest.raises(BudgetExceededError):
        again.charge("second run", epsilon=0.6)


def test_delta_is_tracked():
    ledger = Ledger(total_epsilon=1.0, total_delta=1e-6)
    ledger.charge("gauss", epsilon=0.5, delta=1e-6)
    with pytest.raises(BudgetExceededError):
        ledger.charge("more delta", epsilon=0.1, delta=1e-7)


@pytest.mark.parametrize("eps", [-0.1, float("nan"), float("inf")])
def test_invalid_epsilon(eps):
    with pytest.raises(ValueError, match="must be finite and >= 0"):
        Ledger(total_epsilon=1.0).charge("x", epsilon=eps)


def test_corrupt_ledger_file_is_an_error(tmp_path):
    path = tmp_path / "ledger.jsonl"
    path.write_text("not json\n")
    with pytest.raises(ValueError, match="is not a valid synthflow ledger line"):
        Ledger(total_epsilon=1.0, path=path)


def test_torn_last_line_is_recognised(tmp_path):
    # A crash while writing leaves a partial last line (no newline): named as such,
    # with advice that does not spend again.
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(total_epsilon=1.0, path=path)
    ledger.charge("a", epsilon=0.25)
    path.write_text(path.read_text() + '{"what": "b", "epsi')
    with pytest.raises(ConfigError, match="last ledger line is incomplete") as info:
        Ledger(total_epsilon=1.0, path=path)
    assert "do not start a new ledger" in str(info.value)


# -- [ledger] items 9, 10 and 12: validated, chained lines; one lock across processes ----


def _chained(tmp_path, n=3):
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(total_epsilon=10.0, path=path)
    for i in range(n):
        ledger.charge(f"stat {i}", epsilon=1.0 + i)
    return path


def _edit(path, lineno, **changes):
    lines = path.read_text().splitlines()
    obj = json.loads(lines[lineno - 1])
    obj.update(changes)
    lines[lineno - 1] = json.dumps(obj)
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(
    ("lineno", "changes", "why"),
    [
        (2, {"epsilon": 0.38}, None),  # an edited charge: line 3's hash no longer matches
        (1, {"epsilon": -1.0}, "must be finite and >= 0"),  # a refund
        (1, {"epsilon": float("nan")}, "must be finite and >= 0"),  # json writes NaN
        (1, {"epsilon": "1.0"}, "must be finite and >= 0"),
        (1, {"delta": 1.5}, "must be in [0, 1)"),
        (1, {"sensitivity": -2}, "sensitivity"),
        (1, {"bonus": 1}, "unknown field"),
        (1, {"what": "renamed"}, None),
    ],
)
def test_an_edited_ledger_line_is_refused_with_the_line_named(tmp_path, lineno, changes, why):
    path = _chained(tmp_path)
    _edit(path, lineno, **changes)
    if why is None:
        # A well-formed edit changes the line's hash: the next line's 'prev' no longer matches.
        lineno, why = lineno + 1, "does not match the line before"
    with pytest.raises(ConfigError, match=re.escape(why)) as info:
        Ledger(total_epsilon=10.0, path=path)
    assert f"ledger.jsonl:{lineno} " in str(info.value)


def test_a_deleted_or_inserted_line_is_refused(tmp_path):
    path = _chained(tmp_path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[2]]) + "\n")  # line 2 deleted
    with pytest.raises(ConfigError, match=r"ledger.jsonl:2 .*edited, inserted or deleted"):
        Ledger(total_epsilon=10.0, path=path)
    path.write_text("\n".join([lines[0], lines[0], *lines[1:]]) + "\n")  # a duplicated line
    with pytest.raises(ConfigError, match=r"ledger.jsonl:2 "):
        Ledger(total_epsilon=10.0, path=path)
    path.write_text("\n".join(lines) + "\n")  # restored: accepted again
    assert Ledger(total_epsilon=10.0, path=path).spent_epsilon == 6.0


def test_an_unchained_line_written_by_hand_is_refused(tmp_path):
    path = tmp_path / "ledger.jsonl"
    path.write_text(json.dumps({"what": "x", "epsilon": 0.1}) + "\n")
    with pytest.raises(ConfigError, match="no 'prev' hash"):
        Ledger(total_epsilon=1.0, path=path)
    # and a charge is refused too: the check runs under the lock, on the file's lines
    ledger = Ledger(total_epsilon=1.0)
    ledger.path = path
    with pytest.raises(ConfigError, match="no 'prev' hash"):
        ledger.charge("y", epsilon=0.1)
    assert len(path.read_text().splitlines()) == 1


def test_a_charge_checks_what_other_processes_wrote_since(tmp_path):
    path = tmp_path / "ledger.jsonl"
    first = Ledger(total_epsilon=1.0, path=path)
    second = Ledger(total_epsilon=1.0, path=path)  # opened before first charges
    first.charge("a", epsilon=0.7)
    with pytest.raises(BudgetExceededError):
        second.charge("b", epsilon=0.7)  # its in-memory view said 1.0 remained
    assert Ledger(total_epsilon=1.0, path=path).spent_epsilon == 0.7


_RACER = """
import sys
from synthflow.errors import BudgetExceededError
from synthflow.ledger import Ledger
ledger = Ledger(total_epsilon=10.0, path=sys.argv[1])
sys.stdin.readline()  # all start together
try:
    ledger.charge("run", epsilon=float(sys.argv[2]))
    print("charged")
except BudgetExceededError:
    print("refused")
"""


def test_processes_racing_on_one_ledger_never_exceed_its_total(tmp_path):
    # DP audit [ledger] 10: three runs at once on a ledger at 4 of 10 all succeeded
    # (16 recorded). Now each charge re-reads the file under an exclusive lock.
    import subprocess
    import sys

    path = tmp_path / "ledger.jsonl"
    Ledger(total_epsilon=10.0, path=path).charge("earlier", epsilon=4.0)
    charged = 0
    for _round in range(3):
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _RACER, str(path), "3.0"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(6)
        ]
        outs = [p.communicate("go\n", timeout=120)[0].strip() for p in procs]
        ledger = Ledger(total_epsilon=10.0, path=path)
        assert ledger.spent_epsilon <= 10.0
        charged += outs.count("charged")
        assert charged == len(ledger.charges) - 1  # every accepted charge is on file
    assert ledger.spent_epsilon == 10.0  # 4 + 3 + 3: exactly two of the first six


def test_dataset_fingerprint_ignores_file_form_not_content(tmp_path, small_spec, small_frame):
    # [ledger] 9: a gzip, CRLF or re-ordered copy of the data is the same dataset and
    # draws on the same ledger; one changed value is another dataset.
    from synthflow.data import load_data
    from synthflow.ledger import data_fingerprint, dataset_ledger

    frame = small_frame
    plain = tmp_path / "d.csv"
    frame.to_csv(plain, index=False)
    gz = tmp_path / "d.csv.gz"
    frame.sample(frac=1.0, random_state=1).to_csv(gz, index=False)
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(plain.read_bytes().replace(b"\n", b"\r\n"))
    other = frame.copy()
    other.loc[0, "age"] = (other.loc[0, "age"] + 1) % 100
    changed = tmp_path / "other.csv"
    other.to_csv(changed, index=False)

    def fp(p):
        return data_fingerprint(load_data(p, small_spec, public=True).frame)

    assert fp(plain) == fp(gz) == fp(crlf)
    assert fp(changed) != fp(plain)
    ledger_path = tmp_path / "budget.jsonl"
    kwargs = dict(total_epsilon=small_spec.privacy.total_epsilon)
    dataset_ledger(ledger_path, load_data(plain, small_spec, public=True).frame, **kwargs)
    dataset_ledger(ledger_path, load_data(gz, small_spec, public=True).frame, **kwargs)
    with pytest.raises(ConfigError, match="belongs to another dataset"):
        dataset_ledger(ledger_path, load_data(changed, small_spec, public=True).frame, **kwargs)


def test_a_charge_waits_for_the_ledger_lock(tmp_path):
    # The lock is what makes the race test pass: while another process holds the
    # file's lock, a charge waits, then checks against what that process wrote.
    import fcntl
    import subprocess
    import sys
    import time

    path = tmp_path / "ledger.jsonl"
    Ledger(total_epsilon=10.0, path=path).charge("earlier", epsilon=4.0)
    with path.open("a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        proc = subprocess.Popen(
            [sys.executable, "-c", _RACER, str(path), "3.0"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        proc.stdin.write("go\n")
        proc.stdin.flush()
        time.sleep(1.5)
        assert proc.poll() is None  # waiting for the lock
        assert len(path.read_text().splitlines()) == 1
        # what the holder writes while holding the lock is seen by the waiting charge
        holder = Ledger(total_epsilon=10.0)
        holder.path = path
        holder._load(path.read_text())
        line = json.dumps({"what": "holder", "epsilon": 5.0, "delta": 0.0, "mechanism": "",
                           "sensitivity": None, "time": 0.0, "ref": None,
                           "prev": holder._tip})  # fmt: skip
        held.write(line + "\n")
        held.flush()
    out, _ = proc.communicate(timeout=60)
    assert out.strip() == "refused"  # 4 + 5 + 3 > 10
    assert Ledger(total_epsilon=10.0, path=path).spent_epsilon == 9.0

"""The ledger charges before release, refuses overspend and survives restarts."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from synthflow.errors import BudgetExceededError, ConfigError
from synthflow.privacy.ledger import Ledger


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
from synthflow.privacy.ledger import Ledger
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
    from synthflow.privacy.ledger import data_fingerprint, dataset_ledger

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


# -- gaps the mutmut run found (benchmarks/mutmut_report.md) ------------------------------


def test_deltas_compose():
    ledger = Ledger(total_epsilon=1.0, total_delta=1e-6)
    ledger.charge("a", epsilon=0.1, delta=4e-7)
    ledger.charge("b", epsilon=0.1, delta=4e-7)
    assert ledger.spent_delta == pytest.approx(8e-7)
    with pytest.raises(BudgetExceededError):
        ledger.charge("c", epsilon=0.1, delta=4e-7)


@pytest.mark.parametrize(("total", "delta"), [(0.0, 0.0), (-1.0, 0.0), (1.0, 1.0)])
def test_invalid_totals_are_refused(total, delta):
    with pytest.raises(ValueError, match="must be"):
        Ledger(total_epsilon=total, total_delta=delta)


def test_a_free_charge_and_a_delta_of_one(tmp_path):
    ledger = Ledger(total_epsilon=1.0, total_delta=0.5, path=tmp_path / "l.jsonl")
    ledger.charge("free", epsilon=0.0, sensitivity=0.0)
    assert ledger.spent_epsilon == 0.0
    with pytest.raises(ValueError, match=re.escape("must be in [0, 1)")):
        ledger.charge("x", epsilon=0.1, delta=1.0)
    assert Ledger(total_epsilon=1.0, path=tmp_path / "l.jsonl").charges[0].sensitivity == 0.0


def test_recorded_fields_summary_repr_and_refresh(tmp_path):
    path = tmp_path / "l.jsonl"
    ledger = Ledger(total_epsilon=1.0, total_delta=1e-6, path=path)
    ledger.charge("x", epsilon=0.25, delta=1e-7, mechanism="laplace", sensitivity=2)
    line = json.loads(path.read_text().splitlines()[0])
    assert (line["mechanism"], line["sensitivity"]) == ("laplace", 2.0)
    assert Ledger(total_epsilon=1.0).charges == () and repr(Ledger(total_epsilon=1.0)) == (
        "Ledger(total_epsilon=1, spent_epsilon=0, charges=0)"
    )
    assert (
        repr(ledger)
        == f"Ledger(total_epsilon=1, spent_epsilon=0.25, charges=1, path={str(path)!r})"
    )
    s = ledger.summary()
    assert (s["total_epsilon"], s["total_delta"], s["spent_epsilon"], s["spent_delta"]) == (
        1.0, 1e-6, 0.25, pytest.approx(1e-7),
    )  # fmt: skip
    assert s["charges"][0]["what"] == "x" and s["charges"][0]["sensitivity"] == 2.0
    other = Ledger(total_epsilon=1.0, total_delta=1e-6, path=path)
    ledger.charge("y", epsilon=0.4)
    other.refresh()
    assert other.spent_epsilon == pytest.approx(0.65)
    Ledger(total_epsilon=1.0).refresh()  # no file: nothing to re-read


def _header(**fields):
    base = {"header": "synthflow dataset ledger", "dataset_sha256": "a" * 64,
            "fingerprint": "cleaned-rows-v1", "total_epsilon": 1.0, "total_delta": 0.0}  # fmt: skip
    base.update(fields)
    return {k: v for k, v in base.items() if v is not _GONE}


_GONE = object()


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"extra": 1}, "unknown header field"),
        ({"dataset_sha256": "abc"}, "not a SHA-256"),
        ({"total_epsilon": -1.0}, "not a valid budget"),
        ({"total_epsilon": 0.0}, "not a valid budget"),
        ({"total_epsilon": "1.0"}, "not a valid budget"),
        ({"total_delta": 1.0}, "not a valid budget"),
        ({"total_delta": -0.1}, "not a valid budget"),
    ],
)
def test_a_damaged_header_is_refused(tmp_path, fields, why):
    path = tmp_path / "l.jsonl"
    path.write_text(json.dumps(_header(**fields)) + "\n")
    with pytest.raises(ConfigError, match=why):
        Ledger(total_epsilon=1.0, path=path)


def test_a_valid_header_without_total_delta_and_a_small_total_load(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_text(json.dumps(_header(total_delta=_GONE, total_epsilon=0.5)) + "\n")
    assert Ledger(total_epsilon=0.5, path=path).header["total_epsilon"] == 0.5


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[1, 2]\n", "not a JSON object"),
        ('{"header": "other"}\n', "a dataset header after the first line"),
        ('{"what": "b", "epsi', "last ledger line is incomplete"),
    ],
)
def test_lines_that_are_not_charges(tmp_path, text, why):
    path = tmp_path / "l.jsonl"
    path.write_text(text)
    with pytest.raises(ConfigError, match=why):
        Ledger(total_epsilon=1.0, path=path)


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"what": 5}, "'what' is missing"),
        ({"mechanism": 5}, "'mechanism' must be text"),
        ({"time": "noon"}, "'mechanism' must be text and 'time' a number"),
        ({"ref": 5}, "'ref' must be text"),
        ({"delta": 1.0}, re.escape("must be in [0, 1)")),
    ],
)
def test_a_charge_line_with_a_bad_field_is_refused(tmp_path, changes, why):
    path = _chained(tmp_path)
    _edit(path, 3, **changes)  # the last line: no later 'prev' breaks
    with pytest.raises(ConfigError, match=why) as info:
        Ledger(total_epsilon=10.0, path=path)
    assert "ledger.jsonl:3 " in str(info.value)


def test_a_hand_written_minimal_first_line_loads(tmp_path):
    path = tmp_path / "l.jsonl"
    path.write_text(json.dumps({"what": "x", "epsilon": 0.1, "prev": None}) + "\n")
    ledger = Ledger(total_epsilon=1.0, path=path)
    assert ledger.spent_delta == 0.0 and ledger.spent_epsilon == 0.1


def test_file_sha256_and_fingerprint_inputs(tmp_path):
    import hashlib

    import pandas as pd

    from synthflow.privacy.ledger import data_fingerprint, file_sha256

    p = tmp_path / "blob"
    p.write_bytes(np.random.default_rng(0).bytes(3 << 20))
    assert file_sha256(p) == hashlib.sha256(p.read_bytes()).hexdigest()
    f1 = pd.DataFrame({"a": [1, 2]})
    assert data_fingerprint(f1) != data_fingerprint(f1.rename(columns={"a": "b"}))


def test_dataset_and_command_ledgers_keep_their_delta(tmp_path, small_frame):
    from synthflow.privacy.ledger import command_ledger, dataset_ledger

    led = dataset_ledger(tmp_path / "d.jsonl", small_frame, total_epsilon=1.0, total_delta=1e-6)
    assert led.total_delta == 1e-6
    led.charge("x", epsilon=0.1, delta=1e-7)
    again = command_ledger(data=small_frame, public=False, ledger_path=tmp_path / "d.jsonl",
                           total_epsilon=1.0, total_delta=1e-6)  # fmt: skip
    assert again.total_delta == 1e-6 and again.spent_delta == pytest.approx(1e-7)
    with pytest.raises(ConfigError, match="need --ledger FILE"):
        command_ledger(data=small_frame, public=False, ledger_path=None, total_epsilon=1.0)
    public = command_ledger(data=None, public=True, ledger_path=None, total_epsilon=2.0,
                            total_delta=1e-6, fallback=tmp_path / "p.jsonl")  # fmt: skip
    expected = (2.0, 1e-6, tmp_path / "p.jsonl")
    assert (public.total_epsilon, public.total_delta, public.path) == expected
    assert (
        command_ledger(data=None, public=True, ledger_path=None, total_epsilon=1.0).total_delta
        == 0.0
    )

"""A command reserves its whole cost before its first charge (#45 item 6).

Three concurrent ``run``s on one ledger never exceeded its total, but the loser had
charged PrivBayes' structure step (0.6), was then refused, and exited 4 with nothing
released. Now each command holds its whole cost under the ledger's lock first: one
that cannot afford it is refused with nothing charged (exit 2). Real processes, a real
ledger file.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import subprocess
import sys

import pytest
import yaml

from synthflow.cli import main
from synthflow.data import load_data
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger, dataset_ledger
from synthflow.space import expand_space


def _hold(paths, epsilon, ready, release) -> None:
    """A child process: reserve ``epsilon`` on the dataset ledger, wait, then let go."""
    ledger_path, spec_path, csv = paths
    spec = load_spec(spec_path)
    frame = load_data(csv, spec).frame
    ledger = dataset_ledger(
        ledger_path, frame, total_epsilon=spec.privacy.total_epsilon, total_delta=0.0
    )
    with ledger.reserve(epsilon, what="a long command"):
        ready.set()
        release.wait(60)


def _run_argv(tmp_path, small_spec, small_csv, out: str) -> list[str]:
    config = next(c.id for c in expand_space(small_spec))
    return ["run", small_spec.path, "--data", str(small_csv), "--config", config,
            "--out", str(tmp_path / out), "--ledger", str(tmp_path / "budget.jsonl"),
            "--quiet"]  # fmt: skip


def test_a_command_that_cannot_afford_its_whole_cost_charges_nothing(
    tmp_path, small_spec, small_csv, capsys
):
    ctx = mp.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    holder = ctx.Process(
        target=_hold,
        args=(
            (str(tmp_path / "budget.jsonl"), small_spec.path, str(small_csv)),
            4.0,
            ready,
            release,
        ),
    )
    holder.start()
    try:
        assert ready.wait(60)
        # The spec's total is 5; 4 is held by the other process; the run costs 2.
        assert main(_run_argv(tmp_path, small_spec, small_csv, "r1")) == 2
        err = capsys.readouterr().err
        assert "reserved by another command running on this ledger" in err
        assert Ledger(total_epsilon=100, path=tmp_path / "budget.jsonl").charges == ()
        assert not (tmp_path / "r1").exists() or not any((tmp_path / "r1").iterdir())
    finally:
        release.set()
        holder.join(60)
    # The holder is gone and its reservation with it: the run now goes through.
    assert main(_run_argv(tmp_path, small_spec, small_csv, "r2")) == 0
    spent = Ledger(total_epsilon=100, path=tmp_path / "budget.jsonl").spent_epsilon
    assert spent == pytest.approx(small_spec.privacy.generator_epsilon)
    assert not (tmp_path / "budget.jsonl.reserved").exists()


def test_a_dead_process_holds_nothing(tmp_path, small_spec, small_csv):
    # A reservation whose process died (kill -9) is dropped when read.
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    pid = int(dead.stdout)
    (tmp_path / "budget.jsonl.reserved").write_text(
        json.dumps({f"{pid}:1": {"epsilon": 5.0, "delta": 0.0, "what": "killed"}})
    )
    assert main(_run_argv(tmp_path, small_spec, small_csv, "r")) == 0


def test_three_racing_runs_never_leave_a_partial_charge(tmp_path, small_spec, small_csv):
    # The audit's race: three runs of 2 on a total of 5. Two fit; the third is refused
    # before any charge, so every charge in the ledger belongs to a finished run.
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "synthflow",
                *_run_argv(tmp_path, small_spec, small_csv, f"r{i}"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    codes = [p.wait(300) for p in procs]
    assert sorted(codes) == [0, 0, 2], [p.stderr.read() for p in procs if p.stderr]
    ledger = Ledger(total_epsilon=100, path=tmp_path / "budget.jsonl")
    assert ledger.spent_epsilon == pytest.approx(2 * small_spec.privacy.generator_epsilon)
    finished = sum(
        (tmp_path / f"r{i}" / "candidate.csv").exists() or any((tmp_path / f"r{i}").glob("*.csv"))
        for i in range(3)
        if (tmp_path / f"r{i}").exists()
    )
    assert finished == 2


def test_tables_protect_over_the_ledger_charges_nothing(tmp_path, small_csv, capsys):
    # The catalogue: 'tables protect --epsilon 11' on a ledger of 10 charged 8.25 table
    # by table, then exited 4 with no output. Now it is refused before the first table.
    tables = tmp_path / "tables.yaml"
    tables.write_text(
        yaml.safe_dump(
            {
                "tables": [
                    {"name": "r", "columns": ["region", "smoker"]},
                    {"name": "s", "columns": ["smoker"]},
                ]
            }
        )
    )
    argv = ["tables", "protect", "example_small", "--data", str(small_csv), "--tables",
            str(tables), "--method", "laplace", "--epsilon", "6", "--out",
            str(tmp_path / "t"), "--ledger", str(tmp_path / "budget.jsonl")]  # fmt: skip
    assert main(argv) == 2  # example_small's total is 5
    assert "requested epsilon 6" in capsys.readouterr().err
    assert Ledger(total_epsilon=100, path=tmp_path / "budget.jsonl").charges == ()
    assert not (tmp_path / "t").exists() or not any((tmp_path / "t").iterdir())


def _start_time(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[-1].split()[19]


@pytest.mark.parametrize(
    "held",
    [
        {"epsilon": -100.0, "delta": 0.0},  # the audit's overspend: 5.1 charged of 2
        {"epsilon": float("nan"), "delta": 0.0},  # was an internal ValueError
        {"epsilon": 0.0, "delta": -1.0},
        {"epsilon": True, "delta": 0.0},
        {"epsilon": "1", "delta": 0.0},
        "not a reservation",
    ],
)
def test_a_hand_edited_reservation_never_raises_what_can_be_spent(
    tmp_path, small_csv, capsys, held
):
    # #58 (2): a '<ledger>.reserved' line keyed to a live process (pid 1 and its real
    # start time) with epsilon -100 let 'tables protect --epsilon 5' charge on a total
    # of 5 (example_small) after a charge of 4 below. Now the sidecar is held to the
    # ledger's standard: refused, naming the file and the fix, with nothing charged.
    ledger = tmp_path / "budget.jsonl"
    tables = tmp_path / "tables.yaml"
    tables.write_text(yaml.safe_dump({"tables": [{"name": "s", "columns": ["smoker"]}]}))

    def protect(epsilon: str, out: str) -> int:
        argv = ["tables", "protect", "example_small", "--data", str(small_csv), "--tables",
                str(tables), "--method", "laplace", "--epsilon", epsilon, "--out",
                str(tmp_path / out), "--ledger", str(ledger), "--quiet"]  # fmt: skip
        return main(argv)

    assert protect("4", "t1") == 0
    before = Ledger(total_epsilon=100, path=ledger).spent_epsilon
    assert before == pytest.approx(4.0)
    sidecar = tmp_path / "budget.jsonl.reserved"
    sidecar.write_text(json.dumps({f"1:{_start_time(1)}": held}))
    capsys.readouterr()
    assert protect("4", "t2") == 2
    err = capsys.readouterr().err
    assert "budget.jsonl.reserved" in err and "delete that file" in err
    assert "Traceback" not in err
    assert Ledger(total_epsilon=100, path=ledger).spent_epsilon == pytest.approx(before)
    sidecar.write_text("{not json")
    assert protect("0.5", "t3") == 2
    assert "is not valid JSON" in capsys.readouterr().err
    sidecar.unlink()  # the fix the message names
    assert protect("0.5", "t4") == 0

"""Kill a real ``synthflow sweep`` mid-way, re-run it, and count the stored pairs."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STANDIN_DIR = REPO / "tests" / "unit" / "sweep"
sys.path.insert(0, str(STANDIN_DIR))

from standin import small_data_file, tiny_spec_file  # noqa: E402


def _stored(store: Path) -> list[tuple[str, int]]:
    if not store.exists():
        return []
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT config_id, repeat FROM runs").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_killed_sweep_resumes_each_pair_exactly_once(tmp_path: Path, sig: signal.Signals) -> None:
    spec = tiny_spec_file(tmp_path)
    data = small_data_file(tmp_path, rows=800)
    store = tmp_path / "results.db"
    cmd = [
        sys.executable,
        "-m",
        "synthflow",
        "sweep",
        str(spec),
        "--data",
        str(data),
        "--public",
        "--repeats",
        "3",
        "--store",
        str(store),
        "--workers",
        "2",
        "--seed",
        "11",
        "--evaluator",
        "standin:StandInEvaluator",
        "--quiet",
        "--json",
        str(tmp_path / "summary.json"),
    ]
    env = {**os.environ, "PYTHONPATH": str(STANDIN_DIR), "SWEEP_STANDIN_DELAY": "0.4"}
    proc = subprocess.Popen(
        cmd,
        env=env,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while len(_stored(store)) < 4:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "sweep stored no runs in 120 s"
        time.sleep(0.1)
    if sig == signal.SIGKILL:
        os.killpg(proc.pid, sig)  # driver and workers die at once
    else:
        os.kill(proc.pid, sig)  # Ctrl-C to the driver
    _, err = proc.communicate(timeout=60)
    if sig == signal.SIGINT:  # Ctrl-C: a message, no tracebacks from the driver or workers
        assert "Traceback" not in err, err
        assert proc.returncode == 130
    first = _stored(store)
    assert 4 <= len(first) < 36, "the sweep was not interrupted mid-way"

    done = subprocess.run(
        cmd,
        env={**env, "SWEEP_STANDIN_DELAY": "0"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == str(store.resolve())  # stdout: the store
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary == {
        "configurations": 12,
        "repeats": 3,
        "runs_stored": 36,
        "runs_new": 36 - len(first),
        "runs_crashed": 0,
    }
    pairs = _stored(store)
    assert len(pairs) == len(set(pairs)) == 36
    assert set(first) <= set(pairs)


def test_a_killed_worker_is_a_clear_error_and_the_sweep_resumes(tmp_path: Path) -> None:
    """A worker process killed mid-run (as by the out-of-memory killer): exit 2 and one
    line naming the run and how to resume, no traceback; re-running completes the store."""
    from synthflow.loader import load_spec
    from synthflow.sweep.job import select_configurations

    spec = tiny_spec_file(tmp_path)
    data = small_data_file(tmp_path, rows=800)
    store = tmp_path / "results.db"
    bad = select_configurations(load_spec(spec))[5].id
    cmd = [
        sys.executable, "-m", "synthflow", "sweep", str(spec), "--data", str(data), "--public",
        "--repeats", "1", "--store", str(store), "--workers", "2", "--seed", "11", "--quiet",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(STANDIN_DIR), "SWEEP_STANDIN_DIE": bad}
    out = subprocess.run(
        [*cmd, "--evaluator", "standin:DyingEvaluator"],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert out.returncode == 2, out.stderr
    # The run is named; which one is a race: when a worker dies, its process pool breaks
    # and every run in flight fails with it, so the first failure the driver sees may be
    # another run's (2 of 6 full-suite runs under load named another).
    assert "synthflow sweep: error: a sweep worker failed during a run of " in out.stderr
    named = out.stderr.split("failed during a run of ")[1].split()[0]
    assert named in {c.id for c in select_configurations(load_spec(spec))}
    assert "re-run the same command to resume" in out.stderr
    assert "Traceback" not in out.stderr and "leaked" not in out.stderr, out.stderr
    assert bad not in {c for c, _ in _stored(store)}
    again = subprocess.run(
        [*cmd, "--evaluator", "standin:StandInEvaluator"],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert len(_stored(store)) == 12 == len(set(_stored(store)))


def test_a_crashed_run_exits_non_zero_and_a_resumed_sweep_retries_it(tmp_path: Path) -> None:
    """#61 item 2: 'runs_new 24' with 12 runs crashed, exit 0, and a re-run that did
    nothing. Now the sweep exits 1 naming the cause, and the same command, re-run once
    the cause is fixed, runs the crashed runs again and keeps the others."""
    from synthflow.loader import load_spec
    from synthflow.sweep.job import select_configurations

    spec = tiny_spec_file(tmp_path)
    data = small_data_file(tmp_path, rows=800)
    store = tmp_path / "results.db"
    bad = select_configurations(load_spec(spec))[2].id
    cmd = [
        sys.executable, "-m", "synthflow", "sweep", str(spec), "--data", str(data), "--public",
        "--repeats", "2", "--store", str(store), "--workers", "1", "--seed", "11", "--quiet",
        "--json", "-",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(STANDIN_DIR), "SWEEP_STANDIN_CRASH": bad}
    out = subprocess.run([*cmd, "--evaluator", "standin:CrashingEvaluator"], env=env,
                         capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert out.returncode == 1, out.stderr
    assert json.loads(out.stdout)["runs_crashed"] == 2
    said = " ".join(out.stderr.split())
    assert "2 run(s) crashed" in said and "MemoryError: simulated" in said
    assert "re-run the same command: it runs the crashed runs again" in said
    again = subprocess.run([*cmd, "--evaluator", "standin:StandInEvaluator"], env=env,
                           capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert (summary["runs_new"], summary["runs_crashed"], summary["runs_stored"]) == (2, 0, 24)

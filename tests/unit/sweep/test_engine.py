import re
import shutil
from pathlib import Path

import pytest
from standin import StandInEvaluator, Swept

from synthflow.errors import ConfigError
from synthflow.loader import load_spec
from synthflow.space import expand_space
from synthflow.sweep.job import run_seed, run_sweep, select_configurations
from synthflow.sweep.store import SweepStore

REPO = Path(__file__).resolve().parents[3]


def test_selection_models_and_sample() -> None:
    spec = load_spec(REPO / "configs" / "births-2024.yaml")
    space = expand_space(spec)
    assert select_configurations(spec) == space
    privbayes = select_configurations(spec, models=["privbayes"])
    assert privbayes == [c for c in space if c.model == "privbayes"] and privbayes
    a = select_configurations(spec, sample=40, seed=5)
    assert len(a) == 40 == len({c.id for c in a})
    assert a == select_configurations(spec, sample=40, seed=5)
    assert a != select_configurations(spec, sample=40, seed=6)
    with pytest.raises(
        ConfigError,
        match=re.escape("--models: ['gan9000'] not in the spec's space; families there: ["),
    ):
        select_configurations(spec, models=["gan9000"])
    with pytest.raises(ConfigError, match=re.escape("--sample (0) must be at least 1")):
        select_configurations(spec, sample=0)


def test_run_seed_is_deterministic_and_distinct() -> None:
    assert run_seed(0, "privbayes-a", 1) == run_seed(0, "privbayes-a", 1)
    seeds = {run_seed(s, c, r) for s in (0, 1) for c in ("a", "b") for r in range(3)}
    assert len(seeds) == 12
    assert all(0 <= s < 2**63 for s in seeds)


def test_sweep_stores_every_pair_once(swept: Swept) -> None:
    assert swept.summary.to_json() == {
        "configurations": 12,
        "repeats": 3,
        "runs_stored": 36,
        "runs_new": 36,
        "runs_crashed": 0,
    }
    with SweepStore.open_existing(swept.store) as db:
        runs = db.runs()
        crit = db.criteria()
    assert len(runs) == 36
    assert not runs.duplicated(["config_id", "repeat"]).any()
    assert set(runs["status"]) == {"ok"}
    assert len(crit) == 72
    assert set(crit["name"]) == {"one_way_max_abs_error", "mean_code_gap"}


def test_resume_adds_only_missing_pairs_reproducibly(swept: Swept, tmp_path: Path) -> None:
    store = tmp_path / "copy.db"
    shutil.copy(swept.store, store)
    summary = run_sweep(
        swept.spec,
        swept.data,
        store,
        repeats=4,
        workers=2,
        seed=3,
        evaluator=StandInEvaluator(),
        show_progress=False,
    )
    assert summary.to_json() == {
        "configurations": 12,
        "repeats": 4,
        "runs_stored": 48,
        "runs_new": 12,
        "runs_crashed": 0,
    }
    # a fresh store with the same seed reproduces every stored run (seeded per pair)
    fresh = tmp_path / "fresh.db"
    run_sweep(
        swept.spec,
        swept.data,
        fresh,
        repeats=4,
        workers=1,
        seed=3,
        evaluator=StandInEvaluator(),
        show_progress=False,
    )
    with SweepStore.open_existing(store) as a, SweepStore.open_existing(fresh) as b:
        cols = ["config_id", "repeat", "seed", "passed_exact", "passed_dp"]
        assert a.runs()[cols].equals(b.runs()[cols])
        ca = a.criteria().sort_values(["config_id", "repeat", "name"]).reset_index(drop=True)
        cb = b.criteria().sort_values(["config_id", "repeat", "name"]).reset_index(drop=True)
        assert ca.equals(cb)


def test_nothing_to_do_starts_no_cluster(swept: Swept, tmp_path: Path) -> None:
    store = tmp_path / "copy.db"
    shutil.copy(swept.store, store)
    summary = run_sweep(
        swept.spec,
        swept.data,
        store,
        repeats=2,
        address="tcp://127.0.0.1:1",
        seed=3,
        evaluator=StandInEvaluator(),
        show_progress=False,
    )
    assert summary.to_json() == {
        "configurations": 12,
        "repeats": 2,
        "runs_stored": 24,
        "runs_new": 0,
        "runs_crashed": 0,
    }


def test_bad_options(swept: Swept) -> None:
    with pytest.raises(ConfigError, match=re.escape("--repeats (0) must be at least 1")):
        run_sweep(swept.spec, swept.data, swept.store, repeats=0)
    with pytest.raises(
        ConfigError,
        match=re.escape("give --workers (local cluster) or --address (running cluster), not both"),
    ):
        run_sweep(swept.spec, swept.data, swept.store, repeats=1, workers=1, address="tcp://x:1")


def test_address_joins_a_running_cluster(swept: Swept, tmp_path: Path) -> None:
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        summary = run_sweep(
            swept.spec,
            swept.data,
            tmp_path / "a.db",
            repeats=1,
            seed=3,
            address=cluster.scheduler_address,
            evaluator=StandInEvaluator(),
            show_progress=False,
        )
    assert summary.to_json() == {
        "configurations": 12,
        "repeats": 1,
        "runs_stored": 12,
        "runs_new": 12,
        "runs_crashed": 0,
    }
    # the same runs, seeds and results as the local workers' (repeat 0 of the fixture)
    cols = ["config_id", "repeat", "seed", "passed_exact", "passed_dp"]
    with (
        SweepStore.open_existing(tmp_path / "a.db") as a,
        SweepStore.open_existing(swept.store) as b,
    ):
        ours = a.runs()[cols].sort_values("config_id").reset_index(drop=True)
        local = b.runs()[cols]
        local = local[local["repeat"] == 0].sort_values("config_id").reset_index(drop=True)
        assert ours.equals(local)
        ca, cb = a.criteria(), b.criteria()
        cb = cb[cb["repeat"] == 0]
        key = ["config_id", "name"]
        ca = ca.sort_values(key).reset_index(drop=True)
        cb = cb.sort_values(key).reset_index(drop=True)
        assert ca.equals(cb)


def test_a_failing_configuration_is_recorded_and_the_sweep_goes_on(
    swept: Swept, tmp_path: Path
) -> None:
    from standin import FailingEvaluator, StandInEvaluator

    from synthflow.sweep.job import select_configurations

    bad = select_configurations(swept.spec)[0].id
    store = tmp_path / "failing.db"
    summary = run_sweep(
        swept.spec,
        swept.data,
        store,
        repeats=2,
        workers=1,
        seed=3,
        evaluator=FailingEvaluator(bad),
        show_progress=False,
    )
    assert summary.runs_stored == 24
    with SweepStore.open_existing(store) as db:
        runs = db.runs()
    failed = runs[runs.status != "ok"]
    assert set(failed.config_id) == {bad} and len(failed) == 2
    assert failed.error.str.startswith("MemoryError").all()
    # #61 item 2: the crashes are counted and named, not hidden behind "runs_new 24" ...
    assert summary.runs_crashed == 2 and summary.to_json()["runs_crashed"] == 2
    assert summary.crash_causes == ("MemoryError: simulated: the configuration does not fit in "
                                    "memory",)  # fmt: skip
    # ... and a resumed sweep runs them again (the cause fixed), keeping the others.
    again = run_sweep(swept.spec, swept.data, store, repeats=2, workers=1, seed=3,
                      evaluator=StandInEvaluator(), show_progress=False)  # fmt: skip
    assert (again.runs_new, again.runs_crashed, again.runs_stored) == (2, 0, 24)
    with SweepStore.open_existing(store) as db:
        after = db.runs()
    assert (after.status == "ok").all() and len(after) == 24
    kept = runs[runs.status == "ok"].set_index(["config_id", "repeat"])["seconds"]
    assert after.set_index(["config_id", "repeat"])["seconds"].loc[kept.index].equals(kept)


_WORKER_ENV = """
import json, os, threadpoolctl
from synthflow.sweep.workers.runs import LocalWorkers

def probe():
    blas = max(p["num_threads"] for p in threadpoolctl.threadpool_info())
    env = os.environ.get("MALLOC_TRIM_THRESHOLD_"), os.environ.get("OMP_NUM_THREADS")
    return *env, blas, os.getpid()

if __name__ == "__main__":
    workers = LocalWorkers(2, None, None, None)
    try:
        # two probes at once, each on its own process (both processes start for them)
        futures = [workers.call(probe) for _ in range(8)]
        print(json.dumps(sorted({tuple(f.result()) for f in futures})))
    finally:
        workers.close()
"""


def test_workers_keep_glibc_malloc_and_one_blas_thread(tmp_path: Path) -> None:
    """Local workers boot without Dask's MALLOC_TRIM_THRESHOLD_ (it disabled glibc's
    dynamic mmap threshold: every numpy temporary page-faulted in, runs 1.5x slower)
    and run one BLAS/OpenMP thread each (one run per core).

    A fresh process (the fork server is one per process) whose environment already
    holds the variable, as Dask's nanny leaves it in a process that started a default
    cluster before, and with more BLAS threads asked for than one."""
    import json
    import os
    import subprocess
    import sys

    script = tmp_path / "probe.py"
    script.write_text(_WORKER_ENV)
    env = {**os.environ, "MALLOC_TRIM_THRESHOLD_": "65536", "OPENBLAS_NUM_THREADS": "2"}
    env.pop("OMP_NUM_THREADS", None)
    out = subprocess.run(
        [sys.executable, str(script)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert {tuple(w[:3]) for w in seen} == {(None, "1", 1)}, seen
    assert 1 <= len({w[3] for w in seen}) <= 2  # at most the two worker processes


def test_a_dead_worker_ends_the_sweep_with_a_clear_error_and_keeps_finished_runs(
    swept: Swept, tmp_path: Path
) -> None:
    """A worker killed mid-run (the kernel's OOM killer, say) is a SweepWorkerError
    naming the run and the way to resume, not a traceback or a hang; the runs that
    finished before are in the store, and re-running resumes from them."""
    from standin import DyingEvaluator

    from synthflow.errors import SweepWorkerError

    configs = select_configurations(swept.spec)
    bad = configs[-1].id  # submitted last: the runs before it finish on one worker
    store = tmp_path / "dying.db"
    with pytest.raises(SweepWorkerError) as info:
        run_sweep(
            swept.spec,
            swept.data,
            store,
            repeats=1,
            workers=1,
            seed=3,
            evaluator=DyingEvaluator(bad),
            show_progress=False,
        )
    message = str(info.value)
    assert f"during a run of {bad}" in message
    assert "try fewer --workers" in message and "re-run the same command to resume" in message
    with SweepStore.open_existing(store) as db:
        stored = set(db.runs().config_id)
    assert stored == {c.id for c in configs[:-1]}
    summary = run_sweep(
        swept.spec,
        swept.data,
        store,
        repeats=1,
        workers=1,
        seed=3,
        evaluator=StandInEvaluator(),
        show_progress=False,
    )
    assert summary.runs_new == 1 and summary.runs_stored == len(configs)


def test_bad_data_while_the_cluster_starts_closes_it(swept: Swept, tmp_path: Path) -> None:
    """An unreadable file gives its clear error before any worker process starts, and
    none is left behind."""
    import multiprocessing
    import threading

    from synthflow.errors import DataError

    bad = tmp_path / "bad.csv"
    bad.write_text("not,the,columns\n1,2,3\n")
    with pytest.raises(DataError):
        run_sweep(
            swept.spec,
            bad,
            tmp_path / "bad.db",
            repeats=1,
            workers=1,
            seed=3,
            evaluator=StandInEvaluator(),
            show_progress=False,
        )
    assert not [t for t in threading.enumerate() if t.name == "synthflow-cluster"]
    assert not multiprocessing.active_children()


def test_a_cluster_that_cannot_start_raises_in_the_driver(swept: Swept, tmp_path: Path) -> None:
    """An error in the start thread (here: no scheduler at the address) reaches the
    caller, after the data were read, instead of hanging or being lost."""
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}), pytest.raises(OSError):
        run_sweep(
            swept.spec,
            swept.data,
            tmp_path / "none.db",
            repeats=1,
            address="tcp://127.0.0.1:1",
            seed=3,
            evaluator=StandInEvaluator(),
            show_progress=False,
        )


def test_sweep_workers_pad_the_heap_where_glibc_allows() -> None:
    """The heap padding (fewer page faults per run; benchmarks/cli.py --only sweep) is
    accepted by glibc's mallopt; elsewhere it is skipped, not an error."""
    import platform

    from synthflow.sweep.workers.forkserver import pad_heap

    if platform.system() == "Linux" and platform.libc_ver()[0] == "glibc":
        assert pad_heap() is True
    else:
        assert pad_heap() in (True, False)

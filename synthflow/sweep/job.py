"""Run the configuration space on public data, in parallel worker processes.

The driver plans the (configuration, repeat) pairs not yet in the store, sends the spec
and the cleaned public frame to every worker once, submits one task per pair and stores
each result as it completes (``as_completed``); only the driver writes the store. By
default a pool of local worker processes, forked from a warm fork server, runs them
(:class:`~synthflow.sweep.workers.runs.LocalWorkers`); ``address`` joins a running Dask
scheduler instead (:class:`~synthflow.sweep.workers.runs.DaskWorkers`). Every run's
randomness derives from the base seed, the configuration id and the repeat, so a resumed
sweep reproduces the runs it skips.
"""

from __future__ import annotations

import logging
import os
import time
from concurrent.futures import as_completed
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from synthflow._util.outputs import removed_if_refused
from synthflow._util.progress import tqdm
from synthflow.config.model import ReleaseSpec
from synthflow.data import load_data
from synthflow.errors import ConfigError
from synthflow.loader import with_generator_epsilon
from synthflow.privacy.ledger import file_sha256
from synthflow.space import Configuration
from synthflow.sweep import run_seed, select_configurations
from synthflow.sweep.evaluation import Evaluator, load_evaluator
from synthflow.sweep.store import SweepStore
from synthflow.sweep.workers.cluster import (
    _ClusterConnect,
    _finished_runs,
    _worker_failure,
)
from synthflow.sweep.workers.forkserver import start_fork_server
from synthflow.sweep.workers.runs import DaskWorkers, LocalWorkers, RunWorkers

__all__ = ["SweepSummary", "file_sha256", "run_seed", "run_sweep", "select_configurations"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class SweepSummary:
    """What a sweep did; ``to_json`` is the CLI's last line."""

    configurations: int
    repeats: int
    runs_stored: int
    """Runs of the selected configurations in the store after the sweep."""
    runs_new: int
    """Runs stored by this invocation."""
    passed_dp_new: int = 0
    seconds: float = 0.0
    runs_crashed: int = 0
    """Runs of the selected configurations whose last try crashed (a resumed sweep runs
    them again)."""
    crash_causes: tuple[str, ...] = ()
    """The distinct first lines of their errors (public data: they may be shown)."""

    def to_json(self) -> dict[str, int]:
        """The summary line of ``synthflow sweep``."""
        return {
            "configurations": self.configurations,
            "repeats": self.repeats,
            "runs_stored": self.runs_stored,
            "runs_new": self.runs_new,
            "runs_crashed": self.runs_crashed,
        }


def run_sweep(
    spec: ReleaseSpec,
    data: str | Path,
    store: str | Path,
    *,
    repeats: int,
    workers: int | None = None,
    address: str | None = None,
    models: list[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
    evaluator: Evaluator | None = None,
    show_progress: bool = True,
    generator_epsilons: list[float] | None = None,
    ids: list[str] | None = None,
    letters: list[str] | None = None,
) -> SweepSummary:
    """Run every selected configuration ``repeats`` times and store each run as it ends.

    Args:
        spec: The release spec.
        data: Public data file (never private data: runs are seeded).
        store: SQLite store; created, or resumed when it holds runs of this spec,
            data and seed.
        repeats: Runs per configuration.
        workers: Local worker processes (default: CPU count).
        address: Join this running Dask scheduler instead (``tcp://host:port``).
        models: Only these generator families.
        ids: Only these configuration ids.
        letters: Only these binnings (one letter per column, as ``synthflow space``).
        sample: A seeded random sample of this many configurations.
        seed: Base seed of the sample and of every run.
        evaluator: Measures a candidate (default: the release's acceptance criteria).
        show_progress: Show a progress bar with pass rate and time left.
        generator_epsilons: Sweep these generator budgets (one more axis of the space;
            stored per run); default: the spec's ``privacy.generator_epsilon`` only.

    Raises:
        ConfigError: Bad options. StoreError: a foreign or corrupt store (untouched).
        DataError: Unreadable public data.
    """
    # Long: checks, resume and dispatch of one sweep, with its progress and store.
    if repeats < 1:
        raise ConfigError(f"--repeats ({repeats}) must be at least 1")
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers ({workers}) must be at least 1")
    if workers is not None and address:
        raise ConfigError("give --workers (local cluster) or --address (running cluster), not both")
    evaluator = evaluator if evaluator is not None else load_evaluator(None)
    own = spec.privacy.generator_epsilon
    epsilons = sorted(set(generator_epsilons)) if generator_epsilons else [own]
    for e in epsilons:
        with_generator_epsilon(spec, e)  # validates before anything is written
    if not address:
        start_fork_server()  # its imports overlap planning and reading the data (idempotent)
    configs = select_configurations(
        spec, models=models, sample=sample, seed=seed, ids=ids, letters=letters
    )
    t_start = time.perf_counter()
    # A store this sweep creates is removed again if the sweep is refused before any run
    # is stored (data without the spec's columns, say), with the directories made for it:
    # a refused command leaves nothing behind, and the next try is not refused as "a
    # store of other data".
    new_store = not Path(store).exists()
    with removed_if_refused(Path(store).parent):
        try:
            with SweepStore.open(
                store,
                spec_sha256=spec.sha256,
                data_sha256=file_sha256(data),
                seed=seed,
                spec_generator_epsilon=own,
            ) as db:
                wanted = {
                    (c.id, float(e), r) for c in configs for e in epsilons for r in range(repeats)
                }
                retry = set(db.crashed()) & wanted  # a crash is retried, a refusal is not
                if retry:
                    log.warning("running %d crashed run(s) again", len(retry))
                    db.forget(retry)
                done = db.finished()
                todo = [
                    (c, float(e), r)
                    for c in configs
                    for e in epsilons
                    for r in range(repeats)
                    if (c.id, float(e), r) not in done
                ]
                new = passed = 0
                with ExitStack() as stack:
                    connect = None
                    if todo and address:
                        connect = _ClusterConnect(address)  # connects while the data are read
                        stack.callback(connect.close)
                    frame = load_data(data, spec, public=True).frame
                    db.add_configurations(configs)
                    runners: RunWorkers | None = None
                    if connect is not None:
                        client, warm = connect.client()
                        stack.callback(client.cancel, warm)
                        runners = DaskWorkers(client, spec, frame, evaluator)
                    elif todo:
                        n = min(workers or os.cpu_count() or 1, len(todo))
                        runners = LocalWorkers(n, spec, frame, evaluator)
                    if runners is not None:
                        stack.callback(runners.close)
                        new, passed = _execute(
                            db,
                            runners=runners,
                            spec=spec,
                            configs=configs,
                            n=len(frame),
                            todo=todo,
                            seed=seed,
                            show_progress=show_progress,
                        )
                    else:
                        _warn_noise(space_noise_warning(spec, configs, len(frame)))
                stored = len(wanted & db.finished())
                crashed = {k: v for k, v in db.crashed().items() if k in wanted}
        except BaseException:
            if new_store:
                _drop_unused_store(Path(store))
            raise
    return SweepSummary(
        configurations=len(configs) * len(epsilons),
        repeats=repeats,
        runs_stored=stored,
        runs_new=new,
        passed_dp_new=passed,
        seconds=time.perf_counter() - t_start,
        runs_crashed=len(crashed),
        crash_causes=tuple(
            sorted({(e.strip().splitlines() or ["unknown"])[0][:200] for e in crashed.values()})
        ),
    )


def _drop_unused_store(path: Path) -> None:
    """Remove a store that holds no finished run (this sweep made it, then was refused)."""
    try:
        with SweepStore.open_existing(path) as db:
            if db.finished():
                return
    except Exception:  # unreadable: leave it for the user to see
        return
    for suffix in ("", "-journal", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def space_noise_warning(spec: ReleaseSpec, configs: list[Configuration], n: int) -> str | None:
    """The criteria whose release noise decides pass or fail at this public ``n``, if any."""
    from synthflow.acceptance import noise_check  # noqa: PLC0415  (scipy: run on a worker)

    return noise_check.space_noise_warning(spec, configs, n)


def _warn_noise(text: str | None) -> None:
    """Log the noise warning, if there is one."""
    if text:
        log.warning(
            "%s; the sweep's DP pass rates will be near 0 for every configuration "
            "(the release, at its own n, refuses such a spec without --force)",
            text,
        )


def _execute(
    db: SweepStore,
    *,
    runners: RunWorkers,
    spec: ReleaseSpec,
    configs: list[Configuration],
    n: int,
    todo: list[tuple[Configuration, float, int]],
    seed: int,
    show_progress: bool,
) -> tuple[int, int]:
    """Submit every run, then store each record as it arrives (only the driver writes).

    The noise check goes first, to a worker: workers have its modules (scipy) imported,
    and the driver would spend about 0.25 s of CPU importing them beside the runs.
    """
    # Finished before any run is submitted: a run that kills its worker cannot then break
    # the pool under the check, and the failure names the run.
    warning = runners.call(space_noise_warning, spec, configs, n)
    broken = warning.exception()
    if broken is not None:
        raise _worker_failure("the noise check", broken, stored=0)
    _warn_noise(warning.result())
    own = spec.privacy.generator_epsilon
    futures = {
        runners.submit(
            cfg,
            repeat=r,
            seed=run_seed(seed, cfg.id, r, None if eps == own else eps),
            generator_epsilon=eps,
        ): cfg.id
        for cfg, eps, r in todo
    }
    new = passed = passed_exact = 0
    try:
        with tqdm(total=len(todo), desc="sweep", unit="run", disable=not show_progress) as bar:
            for future in as_completed(futures):
                exc = future.exception()
                if exc is not None:
                    # A dead worker breaks a process pool: keep what other workers finished.
                    new += sum(db.add_run(f.result()) for f in _finished_runs(futures))
                    raise _worker_failure(f"a run of {futures[future]}", exc, stored=new)
                record = future.result()
                if db.add_run(record):
                    new += 1
                    passed += record.passed_dp
                    passed_exact += record.passed_exact
                bar.update()
                bar.set_postfix(
                    pass_dp=f"{passed / max(new, 1):.1%}",
                    pass_exact=f"{passed_exact / max(new, 1):.1%}",
                )
    finally:
        for future in futures:
            future.cancel()
    return new, passed

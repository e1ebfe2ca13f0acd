"""Run the configuration space on public data, in parallel worker processes.

The driver plans the (configuration, repeat) pairs not yet in the store, sends the spec
and the cleaned public frame to every worker once, submits one task per pair and stores
each result as it completes (``as_completed``); only the driver writes the store. By
default a pool of local worker processes, forked from a warm fork server, runs them
(:class:`~synthflow.sweep._workers.LocalWorkers`); ``address`` joins a running Dask
scheduler instead (:class:`~synthflow.sweep._workers.DaskWorkers`). Every run's
randomness derives from the base seed, the configuration id and the repeat, so a resumed
sweep reproduces the runs it skips.
"""

from __future__ import annotations

import contextvars
import hashlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, as_completed
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from synthflow._progress import tqdm
from synthflow.config.load import with_generator_epsilon
from synthflow.config.model import ReleaseSpec
from synthflow.data import load_data
from synthflow.errors import ConfigError, SweepWorkerError
from synthflow.ledger import file_sha256
from synthflow.space import Configuration, expand_space
from synthflow.sweep._forkserver import start_fork_server
from synthflow.sweep._workers import DaskWorkers, LocalWorkers, RunWorkers, warm_imports
from synthflow.sweep.evaluation import Evaluator, load_evaluator
from synthflow.sweep.store import RunRecord, SweepStore

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

    def to_json(self) -> dict[str, int]:
        """The summary line of ``synthflow sweep``."""
        return {
            "configurations": self.configurations,
            "repeats": self.repeats,
            "runs_stored": self.runs_stored,
            "runs_new": self.runs_new,
        }


def run_seed(seed: int, config_id: str, repeat: int, generator_epsilon: float | None = None) -> int:
    """Deterministic per-run seed from the base seed, configuration id and repeat.

    A swept generator epsilon other than the spec's enters the seed too (runs at the
    spec's own epsilon keep the seeds they had before the axis existed).
    """
    suffix = "" if generator_epsilon is None else f":eps={generator_epsilon!r}"
    blob = f"{seed}:{config_id}:{repeat}{suffix}".encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big") >> 1


def select_configurations(
    spec: ReleaseSpec,
    *,
    models: list[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
    ids: list[str] | None = None,
    letters: list[str] | None = None,
) -> list[Configuration]:
    """The spec's space, optionally only some families, ids or binnings, or a sample.

    ``letters`` are binnings as ``synthflow space`` prints them (one letter per column);
    ``sample`` draws a seeded random sample of the remaining configurations.

    Raises:
        ConfigError: For an unknown family, id or binning, or a sample size below 1.
    """
    space = expand_space(spec)
    if letters:
        known_letters = sorted({c.letters for c in space})
        unknown = sorted(set(letters) - set(known_letters))
        if unknown:
            raise ConfigError(
                f"--letters: {unknown} are not binnings of this spec's space (one letter per "
                f"column, {', '.join(spec.column_names)}; e.g. {known_letters[0]})"
            )
        space = [c for c in space if c.letters in set(letters)]
    if ids:
        by_id = {c.id: c for c in space}
        unknown = sorted(set(ids) - set(by_id))
        if unknown:
            raise ConfigError(
                f"--ids: {unknown} are not configurations of this spec's space "
                "(list them with 'synthflow space')"
            )
        space = [c for c in space if c.id in set(ids)]
    if models:
        known = sorted({c.model for c in space})
        unknown = sorted(set(models) - set(known))
        if unknown:
            raise ConfigError(
                f"--models: {unknown} not in the spec's space; families there: {known}"
            )
        space = [c for c in space if c.model in set(models)]
    if sample is not None:
        if sample < 1:
            raise ConfigError(f"--sample ({sample}) must be at least 1")
        if sample < len(space):
            # Post-processing choice on public data: a seeded generator is fine here.
            pick = np.random.default_rng(seed).choice(len(space), size=sample, replace=False)
            space = [space[i] for i in sorted(pick)]
    return space


@contextmanager
def _dask_client(address: str) -> Iterator[Any]:
    """A Dask client of the running scheduler at ``address``."""
    from distributed import Client  # noqa: PLC0415  (heavy import: --address only)

    # Dask logs at INFO in this process and prints comm tracebacks when a client
    # disconnects: keep the user's terminal for the progress bar.
    for name in ("distributed", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    with Client(address) as client:
        yield client


class _ClusterConnect:
    """The driver connects to a running Dask cluster in a thread while it reads the data.

    Its workers import the flow meanwhile (:func:`_warm_workers`). :meth:`client` waits
    for the connection (and re-raises its error); :meth:`close` disconnects, also when the
    driver failed before it asked for the client.
    """

    def __init__(self, address: str) -> None:
        self._stack = ExitStack()
        self._client: Any = None
        self._warm: list[Any] = []
        self._error: BaseException | None = None
        # Dask's Client keeps the current client in a context variable: enter and exit
        # it in one Context (the thread's start and close() run in this copy).
        self._context = contextvars.copy_context()
        self._thread = threading.Thread(
            target=self._context.run,
            args=(self._start, address),
            name="synthflow-cluster",
            daemon=True,
        )
        self._thread.start()

    def _start(self, address: str) -> None:
        try:
            self._client = self._stack.enter_context(_dask_client(address))
            self._warm = _warm_workers(self._client)
        except BaseException as exc:  # re-raised in the driver's thread by client()
            self._error = exc

    def client(self) -> tuple[Any, list[Any]]:
        """The connected client and the workers' warm-up futures."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._client, self._warm

    def close(self) -> None:
        """Disconnect (after the connection attempt has finished)."""
        self._thread.join()
        self._context.run(self._stack.close)


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
    with SweepStore.open(
        store,
        spec_sha256=spec.sha256,
        data_sha256=file_sha256(data),
        seed=seed,
        spec_generator_epsilon=own,
    ) as db:
        done = db.finished()
        wanted = {(c.id, float(e), r) for c in configs for e in epsilons for r in range(repeats)}
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
    return SweepSummary(
        configurations=len(configs) * len(epsilons),
        repeats=repeats,
        runs_stored=stored,
        runs_new=new,
        passed_dp_new=passed,
        seconds=time.perf_counter() - t_start,
    )


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


def _warm_workers(client: Any) -> list[Any]:
    """One import task per worker, started at once (futures: nothing waits for them).

    A spawned worker (a cluster joined by ``--address``, or a platform without a fork
    server) spends about a second importing before its first run; this overlaps that
    with the driver reading the data. Workers forked from the fork server have these
    modules already, and the task returns at once.
    """
    addresses = list(client.scheduler_info().get("workers", {}))
    return [
        client.submit(warm_imports, pure=False, workers=[a], allow_other_workers=True)
        for a in addresses
    ]


def _finished_runs(futures: dict[Future[RunRecord], str]) -> list[Future[RunRecord]]:
    """The futures that hold a run's record (finished, not failed or cancelled)."""
    return [f for f in futures if f.done() and not f.cancelled() and f.exception() is None]


def _worker_failure(task: str, exc: BaseException, *, stored: int) -> SweepWorkerError:
    """The error that ends a sweep whose worker died (or could not run ``task``)."""
    error = SweepWorkerError(
        f"a sweep worker failed during {task} ({type(exc).__name__}: {exc}); a process "
        "killed by the system is often out of memory: try fewer --workers. The "
        f"{stored} runs finished are stored; re-run the same command to resume"
    )
    error.__cause__ = exc
    return error


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
    warning = runners.call(space_noise_warning, spec, configs, n)
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
        broken = warning.exception()
        if broken is not None:  # the pool broke: keep any run that finished all the same
            new = sum(db.add_run(f.result()) for f in _finished_runs(futures))
            raise _worker_failure("the noise check", broken, stored=new)
        _warn_noise(warning.result())
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

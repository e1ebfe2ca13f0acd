"""Run the configuration space on public data, in parallel on Dask distributed.

The driver plans the (configuration, repeat) pairs not yet in the store, scatters the
spec and the cleaned public frame to every worker once, submits one task per pair and
stores each result as it completes (``as_completed``); only the driver writes the
store. By default a local cluster of worker processes starts by itself; ``address``
joins a running scheduler instead. Every run's randomness derives from the base seed,
the configuration id and the repeat, so a resumed sweep reproduces the runs it skips.
"""

from __future__ import annotations

import contextvars
import hashlib
import logging
import os
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthflow._progress import tqdm
from synthflow.config import ReleaseSpec, with_generator_epsilon
from synthflow.data import load_data
from synthflow.errors import ConfigError, InfeasibleConfigurationError, NotEnoughRowsError
from synthflow.ledger import Ledger, file_sha256
from synthflow.rng import PrivacyRNG
from synthflow.space import Configuration, expand_space
from synthflow.sweep._forkserver import start_fork_server
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


def _public_compilation_cache() -> None:
    """Let jax reuse compiled programs across sweep runs and worker processes.

    The ``workload`` generator's Private-PGM saves about 8 s of a 35 s fit at 160K rows.
    Sweeps run on public data only, so nothing private can reach the cache; flows on
    private data never enable it.
    """
    path = str(Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "synthflow" / "jax")
    if "jax" in sys.modules:
        sys.modules["jax"].config.update("jax_compilation_cache_dir", path)
    else:
        os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", path)


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


def _run_one(
    spec: ReleaseSpec,
    frame: pd.DataFrame,
    *,
    configuration: Configuration,
    repeat: int,
    seed: int,
    evaluator: Evaluator,
    generator_epsilon: float | None = None,
) -> RunRecord:
    """One flow + evaluation on a worker; a failed flow is a (stored) failed run.

    ``generator_epsilon`` replaces the spec's eps_gen for this run (a swept budget).
    """
    from synthflow.flow import run_flow  # noqa: PLC0415  (workers only: the driver starts fast)

    t0 = time.perf_counter()
    eps = spec.privacy.generator_epsilon if generator_epsilon is None else generator_epsilon
    spec = with_generator_epsilon(spec, eps)
    _public_compilation_cache()
    rng = PrivacyRNG.from_seed(seed)
    ledger = Ledger(total_epsilon=spec.privacy.total_epsilon, total_delta=spec.privacy.total_delta)
    try:
        result = run_flow(
            spec, configuration, frame, ledger=ledger, rng=rng, public=True, show_progress=False
        )
        evaluation = evaluator(spec, result, rng=rng)
    except (NotEnoughRowsError, InfeasibleConfigurationError) as exc:
        return _failed(configuration, repeat, seed, t0, exc, generator_epsilon=eps)
    except Exception as exc:  # a MemoryError or a bug in one configuration
        # One failing configuration must not end the sweep: the run is stored as failed
        # (error class and message; sweeps run on public data only) and the sweep goes on.
        log.warning("run %s/%d failed: %s", configuration.id, repeat, type(exc).__name__)
        return _failed(configuration, repeat, seed, t0, exc, generator_epsilon=eps)
    return RunRecord(
        config_id=configuration.id,
        generator_epsilon=eps,
        repeat=repeat,
        seed=seed,
        seconds=time.perf_counter() - t0,
        evaluation=evaluation,
    )


def _failed(
    configuration: Configuration,
    repeat: int,
    seed: int,
    t0: float,
    exc: BaseException,
    *,
    generator_epsilon: float,
) -> RunRecord:
    return RunRecord(
        config_id=configuration.id,
        generator_epsilon=generator_epsilon,
        repeat=repeat,
        seed=seed,
        seconds=time.perf_counter() - t0,
        error=f"{type(exc).__name__}: {exc}"[:500],
    )


@contextmanager
def _client(workers: int | None, address: str | None) -> Iterator[Any]:
    """A Dask client: of ``address``, or of a local cluster of worker processes."""
    import dask  # noqa: PLC0415  (heavy import)
    from distributed import Client, LocalCluster  # noqa: PLC0415

    # Dask's scheduler and nanny log at INFO in this process and print comm tracebacks
    # when a local cluster shuts down: keep the user's terminal for the progress bar.
    for name in ("distributed", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    if address:
        with Client(address) as client:
            yield client
        return
    n = workers or os.cpu_count() or 1
    # Workers are forked from one fork server that imported Dask, pandas and the flow
    # once (synthflow/sweep/_boot.py), not spawned as fresh interpreters that each import
    # them (about 1.3 s of CPU per worker, all at once); a forked worker also exits
    # without tearing its interpreter down (cluster close 0.33 -> 0.04 s).
    method = "forkserver" if start_fork_server() else "spawn"
    # Dask's nanny sets MALLOC_TRIM_THRESHOLD_ in every worker it spawns. Setting it
    # turns off glibc's dynamic mmap threshold, so each numpy temporary above 128 KiB
    # (a 160K-row column is 1.3 MB) is a fresh mmap that page-faults in: a PrivBayes run
    # took 1.19 s in a worker against 0.77 s in a plain process
    # (benchmarks/cli.py --only sweep). Workers keep glibc's default; OMP_NUM_THREADS and
    # the BLAS thread limits of 1 stay (one run per core; the fork server sets them before
    # it imports numpy).
    with (
        dask.config.set(
            {
                "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None,
                "distributed.worker.multiprocessing-method": method,
            }
        ),
        LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # a free port: never clash with a running one
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


class _ClusterStart:
    """The cluster starts (and its workers import) in a thread while the driver reads data.

    Starting a local cluster is mostly waiting for worker processes to boot; the driver
    meanwhile reads and checks the data. :meth:`client` waits for the start (and
    re-raises its error); :meth:`close` shuts the cluster down, also when the driver
    failed before it asked for the client.
    """

    def __init__(self, workers: int | None, address: str | None) -> None:
        self._stack = ExitStack()
        self._client: Any = None
        self._warm: list[Any] = []
        self._error: BaseException | None = None
        # Dask's Client keeps the current client in a context variable: enter and exit
        # it in one Context (the thread's start and close() run in this copy).
        self._context = contextvars.copy_context()
        self._thread = threading.Thread(
            target=self._context.run,
            args=(self._start, workers, address),
            name="synthflow-cluster",
            daemon=True,
        )
        self._thread.start()

    def _start(self, workers: int | None, address: str | None) -> None:
        try:
            self._client = self._stack.enter_context(_client(workers, address))
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
        """Shut the cluster down (after its start has finished)."""
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
        workers: Worker processes of the local cluster (default: CPU count).
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
            start = None
            if todo:
                start = _ClusterStart(workers, address)
                stack.callback(start.close)
            # The cluster starts and its workers import while this process reads the data.
            frame = load_data(data, spec, public=True).frame
            _warn_noise(spec, configs, len(frame))
            db.add_configurations(configs)
            if start is not None:
                client, warm = start.client()
                new, passed = _execute(
                    db,
                    client=client,
                    spec=spec,
                    frame=frame,
                    todo=todo,
                    seed=seed,
                    evaluator=evaluator,
                    show_progress=show_progress,
                    warm=warm,
                )
        stored = len(wanted & db.finished())
    return SweepSummary(
        configurations=len(configs) * len(epsilons),
        repeats=repeats,
        runs_stored=stored,
        runs_new=new,
        passed_dp_new=passed,
        seconds=time.perf_counter() - t_start,
    )


def _warn_noise(spec: ReleaseSpec, configs: list[Configuration], n: int) -> None:
    """Warn when a criterion's release noise decides pass or fail (public n)."""
    from synthflow.acceptance.noise_check import space_noise_warning  # noqa: PLC0415

    text = space_noise_warning(spec, configs, n)
    if text:
        log.warning(
            "%s; the sweep's DP pass rates will be near 0 for every configuration "
            "(the release, at its own n, refuses such a spec without --force)",
            text,
        )


def _warm_imports() -> None:
    """What every run imports (flows, generators, criteria, samplers), done up front."""
    import synthflow.acceptance.evaluate  # noqa: PLC0415
    import synthflow.flow  # noqa: PLC0415
    import synthflow.generators.registry  # noqa: F401, PLC0415


def _warm_workers(client: Any) -> list[Any]:
    """One import task per worker, started at once (futures: nothing waits for them).

    A spawned worker (a cluster joined by ``--address``, or a platform without a fork
    server) spends about a second importing before its first run; this overlaps that
    with the driver reading the data. Workers forked from the fork server have these
    modules already, and the task returns at once.
    """
    addresses = list(client.scheduler_info().get("workers", {}))
    return [
        client.submit(_warm_imports, pure=False, workers=[a], allow_other_workers=True)
        for a in addresses
    ]


def _execute(
    db: SweepStore,
    *,
    client: Any,
    spec: ReleaseSpec,
    frame: pd.DataFrame,
    todo: list[tuple[Configuration, float, int]],
    seed: int,
    evaluator: Evaluator,
    show_progress: bool,
    warm: list[Any],
) -> tuple[int, int]:
    from distributed import as_completed  # noqa: PLC0415

    new = passed = passed_exact = 0
    with tqdm(total=len(todo), desc="sweep", unit="run", disable=not show_progress) as bar:
        spec_f = client.scatter(spec, broadcast=True)
        frame_f = client.scatter(frame, broadcast=True)
        own = spec.privacy.generator_epsilon
        futures = [
            client.submit(
                _run_one,
                spec_f,
                frame_f,
                configuration=cfg,
                repeat=r,
                seed=run_seed(seed, cfg.id, r, None if eps == own else eps),
                evaluator=evaluator,
                generator_epsilon=eps,
                key=f"sweep-{cfg.id}-{eps!r}-{r}-{seed}",
                pure=False,
            )
            for cfg, eps, r in todo
        ]
        try:
            for future in as_completed(futures):
                if future.status == "error":
                    exc = future.exception()
                    tb = "".join(traceback.format_tb(future.traceback()))
                    raise RuntimeError(f"a sweep run failed on a worker: {exc!r}\n{tb}") from exc
                record: RunRecord = future.result()
                future.release()
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
            client.cancel([f for f in futures + warm if not f.done()])
    return new, passed

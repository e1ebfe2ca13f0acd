"""Where sweep runs execute: a local pool of worker processes, or a running Dask cluster.

Both give the engine one interface (:class:`RunWorkers`): ``submit`` one (configuration,
repeat) run and get a :class:`concurrent.futures.Future` of its
:class:`~synthflow.sweep.store.RunRecord`; ``close`` when done. The spec, the cleaned
public frame and the evaluator reach every worker once, not with every run.

* :class:`LocalWorkers` (the default): a :class:`~concurrent.futures.ProcessPoolExecutor`
  whose processes are forked from the sweep's fork server (:mod:`synthflow.sweep.workers.boot`
  imported the flow there once). The spec, frame and evaluator travel as the pool's
  initializer arguments. It replaced a local Dask cluster, whose scheduler, nannies and
  heartbeats shared the two cores with the runs: on the benchmark sweep (16 PrivBayes
  runs at 160K, ``python benchmarks/cli.py --only sweep``) the first run started at
  1.5-1.6 s instead of 0.9-1.1 s, and two workers spent 11% more time per run than one
  (3-9% here: the cores' shared cache and memory bandwidth).
* :class:`DaskWorkers` (``--address``): a client of a running Dask scheduler; the
  command's plug-ins are loaded on every worker (:mod:`synthflow.sweep.workers.cluster_plugins`),
  the data are scattered to its workers once and runs go through
  ``client.get_executor()``.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import sys
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from synthflow._extras import has
from synthflow.config.model import ReleaseSpec
from synthflow.errors import InfeasibleConfigurationError, NotEnoughRowsError
from synthflow.loader import with_generator_epsilon
from synthflow.plugins import LOADED, load_plugins
from synthflow.sweep.store import RunRecord
from synthflow.sweep.workers.forkserver import pad_heap, start_fork_server

if TYPE_CHECKING:
    import pandas as pd

    from synthflow.space import Configuration
    from synthflow.sweep.evaluation import Evaluator

__all__ = ["DaskWorkers", "LocalWorkers", "RunWorkers", "run_one", "warm_imports"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class RunWorkers(Protocol):
    """Runs sweep runs somewhere; the engine submits and collects."""

    def submit(
        self, configuration: Configuration, *, repeat: int, seed: int, generator_epsilon: float
    ) -> Future[RunRecord]:
        """Start one run; its future holds the run's record (a failed run is a record)."""
        ...

    def call(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``fn(*args)`` on a worker (where the flow's modules are imported)."""
        ...

    def close(self) -> None:
        """Stop the workers; runs not started are cancelled."""
        ...


def warm_imports() -> None:
    """What every run imports (flows, generators, criteria, samplers), done up front."""
    import synthflow.acceptance.evaluate  # noqa: PLC0415
    import synthflow.flow  # noqa: PLC0415
    import synthflow.generators.registry  # noqa: F401, PLC0415


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


def run_one(
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
    from synthflow._job_open import open_job  # noqa: PLC0415
    from synthflow.flow import run_flow  # noqa: PLC0415  (workers only: the driver starts fast)

    t0 = time.perf_counter()
    eps = spec.privacy.generator_epsilon if generator_epsilon is None else generator_epsilon
    spec = with_generator_epsilon(spec, eps)
    _public_compilation_cache()
    # A public-data run: seeded randomness, a ledger of its own (the spec's total, the
    # generator's budget swept) and one for the evaluation's DP releases (eps_eval).
    job = open_job(spec, frame, public=True, seed=seed, models=(configuration.model,))
    assert job.ledger is not None
    evaluation_ledger = job.open_ledger(
        budget=(max(spec.evaluation_epsilon, 1e-12), spec.privacy.total_delta)
    )
    try:
        result = run_flow(
            spec,
            configuration,
            frame,
            ledger=job.ledger,
            rng=job.rng,
            public=True,
            show_progress=False,
        )
        evaluation = evaluator(spec, result, rng=job.rng, ledger=evaluation_ledger)
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


# A local worker's copy of the spec, frame and evaluator (set once, by the initializer).
_WORKER: dict[str, Any] = {}


def _init_local_worker(payload: bytes, limit_threads: bool, plugins: tuple[str, ...] = ()) -> None:
    # The plug-ins the command loaded (--plugin, entry points): the worker was forked
    # from a fork server started before them. The spec may hold a plug-in's classes (a
    # criterion kind's Params), so it arrives pickled and is read only once they load:
    # as a plain initializer argument it was unpickled before, and the worker died.
    load_plugins(plugins)
    spec, frame, evaluator = pickle.loads(payload)
    if limit_threads:
        # A spawned worker (no fork server) imported numpy before it got here: one BLAS
        # and OpenMP thread per run (one run per core) is set through threadpoolctl
        # (scikit-learn's dependency: absent from the base install, then left as is), and
        # the heap's padding here (forked workers have the fork server's).
        if has("threadpoolctl"):
            import threadpoolctl  # noqa: PLC0415

            threadpoolctl.threadpool_limits(1)
        pad_heap()
    # tqdm's default lock is a multiprocessing one, a named semaphore that a worker killed
    # mid-run (out of memory) never unlinks: the resource tracker then warns of "leaked
    # semaphore objects" after the sweep's own error. A worker's bars (disabled) need a
    # thread lock only.
    import threading  # noqa: PLC0415

    from tqdm.std import tqdm  # noqa: PLC0415

    tqdm.set_lock(threading.RLock())
    _WORKER.update(spec=spec, frame=frame, evaluator=evaluator)


def _run_local(
    configuration: Configuration, repeat: int, seed: int, generator_epsilon: float
) -> RunRecord:
    return run_one(
        _WORKER["spec"],
        _WORKER["frame"],
        configuration=configuration,
        repeat=repeat,
        seed=seed,
        evaluator=_WORKER["evaluator"],
        generator_epsilon=generator_epsilon,
    )


class LocalWorkers:
    """``workers`` processes on this machine, forked from the fork server where there is one.

    The processes start with the first runs submitted (a fork of the warm fork server
    takes milliseconds); each receives the spec, frame and evaluator once.
    """

    def __init__(
        self, workers: int, spec: ReleaseSpec, frame: pd.DataFrame, evaluator: Evaluator
    ) -> None:
        forked = start_fork_server()  # idempotent: normally started by the CLI already
        context = multiprocessing.get_context("forkserver" if forked else "spawn")
        self._pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_init_local_worker,
            initargs=(pickle.dumps((spec, frame, evaluator)), not forked, tuple(LOADED)),
        )

    def submit(
        self, configuration: Configuration, *, repeat: int, seed: int, generator_epsilon: float
    ) -> Future[RunRecord]:
        """One run, on a worker."""
        return self._pool.submit(_run_local, configuration, repeat, seed, generator_epsilon)

    def call(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Any picklable function on a worker (the noise check)."""
        return self._pool.submit(fn, *args)

    def close(self) -> None:
        """Cancel what has not run and wait for the workers to end."""
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskWorkers:
    """The workers of a running Dask cluster (``--address``)."""

    def __init__(
        self, client: Any, spec: ReleaseSpec, frame: pd.DataFrame, evaluator: Evaluator
    ) -> None:
        from synthflow.sweep.workers.cluster_plugins import load_on_cluster  # noqa: PLC0415

        load_on_cluster(client, tuple(LOADED))  # before the spec that may name them
        self._spec = client.scatter(spec, broadcast=True)
        self._frame = client.scatter(frame, broadcast=True)
        self._evaluator = evaluator
        self._executor = client.get_executor(pure=False)

    def submit(
        self, configuration: Configuration, *, repeat: int, seed: int, generator_epsilon: float
    ) -> Future[RunRecord]:
        """One run, on a cluster worker."""
        future: Future[RunRecord] = self._executor.submit(
            run_one,
            self._spec,
            self._frame,
            configuration=configuration,
            repeat=repeat,
            seed=seed,
            evaluator=self._evaluator,
            generator_epsilon=generator_epsilon,
        )
        return future

    def call(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Any picklable function on a cluster worker (the noise check)."""
        result: Future[T] = self._executor.submit(fn, *args)
        return result

    def close(self) -> None:
        """Cancel what has not run; the cluster's client stays open."""
        self._executor.shutdown(wait=False)  # cancels what has not run; the client stays

"""The sweep's Dask side: the cluster connection, worker warm-up, finished futures and failures."""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import ExitStack, contextmanager
from typing import Any

from synthflow.errors import ConfigError, SweepWorkerError
from synthflow.sweep.store import RunRecord
from synthflow.sweep.workers.runs import warm_imports

__all__ = ["_ClusterConnect", "_dask_client", "_finished_runs", "_warm_workers", "_worker_failure"]


@contextmanager
def _dask_client(address: str) -> Iterator[Any]:
    """A Dask client of the running scheduler at ``address``."""
    try:
        from distributed import Client  # noqa: PLC0415  (heavy import: --address only)
    except ImportError:
        raise ConfigError(
            "--address needs Dask's distributed scheduler, an optional extra: pip install "
            "'synthflow-dp[cluster]' (local sweeps with --workers N need nothing more)"
        ) from None

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

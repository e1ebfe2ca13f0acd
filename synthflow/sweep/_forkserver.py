"""Start the fork server that local sweep workers are forked from; imports nothing heavy.

The server imports Dask, pandas and the flow once (:mod:`synthflow.sweep._boot`), which
takes about a second of CPU. ``synthflow sweep`` starts it before it imports the engine
itself, so that the two imports run side by side on two cores.
"""

from __future__ import annotations

import multiprocessing
import os

__all__ = ["start_fork_server"]


def start_fork_server() -> bool:
    """Start the fork server (it imports in the background); idempotent.

    Returns False where the platform has no fork server (workers are then spawned).
    Dask's pre-spawn variable ``MALLOC_TRIM_THRESHOLD_`` (see
    :func:`synthflow.sweep.engine._client`), which a default Dask cluster may have left in
    this process's environment, is kept out of the server's: glibc reads it once, when a
    process starts.
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    from multiprocessing import forkserver  # noqa: PLC0415

    forkserver.set_forkserver_preload(["synthflow.sweep._boot"])
    trim = os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    try:
        forkserver.ensure_running()
    finally:
        if trim is not None:
            os.environ["MALLOC_TRIM_THRESHOLD_"] = trim
    return True

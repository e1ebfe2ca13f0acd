"""Start the fork server that local sweep workers are forked from; imports nothing heavy.

The server imports pandas and the flow once (:mod:`synthflow.sweep._boot`), which
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
    Dask's pre-spawn variable ``MALLOC_TRIM_THRESHOLD_``, which a default Dask cluster
    (one started in this process before, in a notebook say) may have left in this
    process's environment, is kept out of the server's: glibc reads it once, when a
    process starts, and setting it turns off glibc's dynamic mmap threshold, so that each
    numpy temporary above 128 KiB (a 160K-row column is 1.3 MB) is a fresh mmap that
    page-faults in (a PrivBayes run took 1.19 s against 0.77 s).
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

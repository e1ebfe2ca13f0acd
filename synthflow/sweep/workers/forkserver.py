"""Start the fork server that local sweep workers are forked from; imports nothing heavy.

The server imports pandas and the flow once (:mod:`synthflow.sweep.workers.boot`), which
takes about a second of CPU. ``synthflow sweep`` starts it before it imports the engine
itself, so that the two imports run side by side on two cores.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os

__all__ = ["pad_heap", "start_fork_server"]

_M_TOP_PAD = -2  # glibc's malloc.h
HEAP_PAD = 256 << 20
"""Bytes glibc's heap grows (and keeps) beyond each request, in a sweep worker."""


def pad_heap() -> bool:
    """Let glibc grow and shrink this process's heap 256 MiB at a time (``M_TOP_PAD``).

    A run allocates and frees many arrays of a few MB; with glibc's default padding
    (128 KiB) the heap is given back to the system and faulted in again page by page,
    run after run, and page faults on two workers contend for the kernel and memory
    bandwidth. Eight PrivBayes runs at 160K in one process: 4.67 -> 4.28 s, minor page
    faults 145K -> 40K, peak memory 360 MB either way (``benchmarks/heap_pad.py``).
    False where the C library has no ``mallopt`` (not glibc).
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(_M_TOP_PAD, HEAP_PAD))


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

    forkserver.set_forkserver_preload(["synthflow.sweep.workers.boot"])
    trim = os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)
    try:
        forkserver.ensure_running()
    finally:
        if trim is not None:
            os.environ["MALLOC_TRIM_THRESHOLD_"] = trim
    return True

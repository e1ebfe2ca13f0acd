"""Writing a line so that a crash or a full disk never leaves half of it."""

from __future__ import annotations

import os

__all__ = ["append_whole"]


def append_whole(fd: int, line: str) -> None:
    """Append ``line`` and a newline to the open file ``fd``, fsynced, whole or not at all.

    A write cut short (disk full, a file-size limit, a signal) is cut back off before the
    error propagates, so the file never keeps a partial line (which a re-run would have
    to be told to delete by hand).
    """
    end = os.lseek(fd, 0, os.SEEK_END)
    view = memoryview((line + "\n").encode("utf-8"))
    try:
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.ftruncate(fd, end)  # frees what the cut write took
        raise

"""Writing files so that a crash or a full disk never leaves half of one.

:func:`append_whole` appends a line, whole or not at all; :func:`replaced_atomically`
and :func:`write_atomic` replace a file, whole or not at all (a temporary file beside it,
fsynced, then renamed over it): the one atomic write every module uses.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["append_whole", "replaced_atomically", "write_atomic"]


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


@contextmanager
def replaced_atomically(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on leaving, it replaces ``path``, fsynced.

    Write the new content to the yielded path (any writer: ``write_text``, pandas). If
    the block raises (a check on the content, a full disk), the temporary file is removed
    and ``path`` is left as it was. The temporary name carries the process id, so that
    processes writing the same file do not write into one temporary file.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Replace ``path`` by ``data`` (text as UTF-8), whole or not at all; returns the path."""
    with replaced_atomically(path) as tmp:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data, encoding="utf-8")
    return Path(path)

"""The enclave directory of a private selection: its lock, transcript and saved results.

Everything here stays in the enclave (never published): the transcript of draws and
released values, the regression fit made once per release, the passing attempt's
result and the outcome record.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from synthflow._util.files import append_whole
from synthflow.errors import ConfigError

__all__ = ["Enclave", "append_line", "enclave_busy", "read_outcome"]


def append_line(path: Path, line: str) -> None:
    """Append ``line`` and a newline to ``path``, fsynced; on failure nothing is left of it."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        append_whole(fd, line)
    finally:
        os.close(fd)


def read_outcome(enclave: Enclave) -> dict[str, Any]:
    """The enclave's outcome record.

    Raises:
        ConfigError: If it is damaged (restore it; never start a new selection).
    """
    try:
        doc = json.loads(enclave.outcome.read_text("utf-8"))
        if not isinstance(doc, dict) or "selected" not in doc:
            raise ValueError("not an outcome record")
        return doc
    except (ValueError, OSError, RecursionError) as exc:
        raise ConfigError(
            f"{str(enclave.outcome)!r} is damaged ({exc}); the selection's result cannot be "
            "read. Do not start a new selection on these data to replace it (that spends "
            "again): restore the file from a backup"
        ) from exc


class Enclave:
    """An enclave directory: its files, its lock and its transcript."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.transcript = root / "transcript.jsonl"
        self.fit_path = root / "regression_fit.pkl"
        self.outcome = root / "outcome.json"
        self.selected = root / "selected.pkl"

    def lock(self) -> Any:
        """Hold an exclusive OS lock on the enclave (released when the process dies).

        Raises:
            ConfigError: If another process holds it (a selection is running there).
        """
        import fcntl  # noqa: PLC0415  (POSIX only; enclaves run on Linux)

        fh = (self.root / ".lock").open("a+")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise ConfigError(
                f"another synthflow release holds the lock {str(self.root / '.lock')!r}: one "
                "selection per enclave at a time; wait for it to finish (or stop it), then "
                "re-run to continue the same selection"
            ) from None
        return fh

    def log(self, event: dict[str, Any]) -> None:
        """Append one event to the transcript (fsynced), whole or not at all.

        A write cut short (disk full, a file-size limit) is cut back off before the
        error is raised, so the transcript never keeps half a line.
        """
        append_line(self.transcript, json.dumps(event, default=str))

    def events(self) -> list[dict[str, Any]]:
        """Every transcript event, in order.

        Raises:
            ConfigError: For a torn last line or a damaged transcript (what to do).
        """
        if not self.transcript.exists():
            return []
        text = self.transcript.read_text("utf-8")
        lines = text.splitlines()
        out = []
        for lineno, line in enumerate(lines, start=1):
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                torn = lineno == len(lines) and not text.endswith("\n")
                raise ConfigError(
                    f"{self.transcript}:{lineno}: "
                    + (
                        "the last line is incomplete (the process stopped while writing it). "
                        "Keep a copy of the file, delete that partial last line, and re-run the "
                        "same command: the selection continues without a new charge"
                        if torn
                        else "is not a transcript line; the enclave is damaged: restore "
                        "transcript.jsonl from a backup (a new selection would spend again)"
                    )
                ) from exc
        return out


def enclave_busy(root: Path) -> bool:
    """Whether another process holds ``root``'s enclave lock now (a selection is running).

    A probe: the lock is taken and let go at once; nothing is created.
    """
    import fcntl  # noqa: PLC0415  (POSIX only; enclaves run on Linux)

    path = root / ".lock"
    if not path.is_file():
        return False
    with path.open("a+") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
    return False

"""Where a dataset ledger's head is anchored, so that a rollback shows (#45).

Each line of a dataset ledger holds the hash of the line before it, so an edit of any
line but the last is detected from the file alone. The last line, and a file cut short
or emptied, can only be detected against a record kept elsewhere: after every line it
writes, synthflow records the ledger's head (its number of lines, the hash of its last
line, the epsilon spent) in a per-user record keyed by the dataset's fingerprint and the
ledger's path, outside the ledger's directory. Opening that ledger again requires the
file to extend the recorded head: a last line edited, deleted or reordered, or a file
truncated, emptied or deleted and recreated at the same path, is refused before any
charge. (Why this record and not another: docs/privacy.md, "What the ledger cannot see".)

The record lives in ``$SYNTHFLOW_HOME/ledger-heads`` (default ``~/.synthflow``). It holds
no data: a fingerprint, a path and budget figures.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from synthflow._files import write_atomic
from synthflow.errors import ConfigError

__all__ = ["check", "forget", "record"]

log = logging.getLogger(__name__)


def _home() -> Path:
    root = os.environ.get("SYNTHFLOW_HOME") or str(Path.home() / ".synthflow")
    return Path(root) / "ledger-heads"


def _record_path(digest: str, ledger: Path) -> Path:
    key = hashlib.sha256(f"{digest}\0{ledger.resolve()}".encode()).hexdigest()
    return _home() / f"{key}.json"


def _read(digest: str, ledger: Path) -> dict[str, Any] | None:
    try:
        doc = json.loads(_record_path(digest, ledger).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(doc, dict) and isinstance(doc.get("lines"), int)):
        return None
    return doc


def check(digest: str, ledger: Path, hashes: list[str]) -> None:
    """Refuse ``ledger`` (its lines' hashes, in order) unless it extends its recorded head.

    Raises:
        ConfigError: Naming what was found and what to restore.
    """
    head = _read(digest, ledger)
    if head is None or head["lines"] == 0:
        return
    lines, spent = head["lines"], head.get("spent_epsilon")
    if len(hashes) < lines:
        raise ConfigError(
            f"the ledger {str(ledger)!r} has {len(hashes)} line(s), but it had {lines} (epsilon "
            f"{spent} spent) when synthflow last wrote it: it was cut short, emptied or "
            "replaced (a restore from an old backup, a sync tool, an edit). A ledger that "
            "forgets a spend is refused: restore its latest copy. Nothing was spent"
        )
    if hashes[lines - 1] != head.get("head"):
        raise ConfigError(
            f"the ledger {str(ledger)!r}: line {lines} is not the line synthflow wrote there "
            "(it was edited, or lines were reordered or replaced); restore the ledger's "
            "latest copy. Nothing was spent"
        )


def record(digest: str, ledger: Path, hashes: list[str], spent_epsilon: float) -> None:
    """Record ``ledger``'s head after a write (best effort: never fails the charge)."""
    path = _record_path(digest, ledger)
    doc = {
        "dataset_sha256": digest,
        "ledger": str(ledger.resolve()),
        "lines": len(hashes),
        "head": hashes[-1] if hashes else None,
        "spent_epsilon": spent_epsilon,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(doc))
    except OSError as exc:
        # The ledger line is written (and fsynced) first: a record left behind is only
        # shorter than the file, which the check accepts. Said, not raised: the charge
        # stands; only the rollback check is weaker until the record can be written.
        log.warning(
            "cannot record the ledger's head in %s (%s): a rollback of %s would not be "
            "detected; set SYNTHFLOW_HOME to a writable directory",
            path.parent,
            exc.strerror or type(exc).__name__,
            ledger,
        )


def forget(ledger: Path) -> None:
    """Drop every recorded head of a ledger at ``ledger``'s path (whatever its data).

    Only for a ledger that a command itself makes in a directory it has just created
    (the demo's): nothing there can be a rollback of an earlier spend.
    """
    where = str(ledger.resolve())
    home = _home()
    if not home.is_dir():
        return
    for path in home.glob("*.json"):
        try:
            if json.loads(path.read_text("utf-8")).get("ledger") == where:
                path.unlink()
        except (OSError, ValueError, AttributeError):
            continue

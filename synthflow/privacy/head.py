"""Where a dataset ledger's head is anchored, so that a rollback shows (#45, #58).

Each line of a dataset ledger holds the hash of the line before it, so an edit of any
line but the last is detected from the file alone. The last line, and a file cut short
or emptied, can only be detected against a record kept elsewhere: after every line it
writes, synthflow records the ledger's head (its number of lines, the hash of each
line, the epsilon and delta spent) in a per-user record keyed by the dataset's
fingerprint and the ledger's path, outside the ledger's directory. Opening that ledger
again requires the file to extend the recorded head: a last line edited, deleted or
reordered, or a file truncated, emptied or deleted and recreated at the same path, is
refused before any charge. (Why this record and not another: docs/privacy.md, "What the
ledger cannot see".)

A ledger that holds charges but has no record here (written under another home, by
another user, moved, or restored from a backup into a fresh home) may be an older copy
that forgets a spend: it is refused until the steward adopts it (``synthflow ledger
adopt``, :func:`synthflow.privacy.ledger.adopt_ledger`), which is recorded in the ledger. A
record that cannot be read is refused as well, never taken as absent.

The record lives in ``$SYNTHFLOW_HOME/ledger-heads`` (default ``~/.synthflow``; a
relative value is made absolute from the directory where this process first reads it).
It holds no data: a fingerprint, a path, line hashes and budget figures.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
from pathlib import Path
from typing import Any

from synthflow._util.files import write_atomic
from synthflow.errors import ConfigError

__all__ = ["check", "check_writable", "forget", "home", "inspect", "record", "record_path"]

log = logging.getLogger(__name__)

_homes: dict[str, Path] = {}
"""Each value of SYNTHFLOW_HOME this process has read, made absolute when first read."""


def home() -> Path:
    """``$SYNTHFLOW_HOME`` (default ``~/.synthflow``), absolute.

    A relative value is taken from the current directory the first time this process
    reads it, and kept: a process that changes directory (a notebook) keeps one record.
    """
    raw = os.environ.get("SYNTHFLOW_HOME") or str(Path.home() / ".synthflow")
    if raw not in _homes:
        path = Path(raw).expanduser()
        _homes[raw] = Path(os.path.abspath(path))
        if not path.is_absolute():
            log.warning(
                "SYNTHFLOW_HOME is relative (%s): taken as %s; a command run from another "
                "directory reads another record of ledger heads (set an absolute path)",
                raw,
                _homes[raw],
            )
    return _homes[raw]


def _heads() -> Path:
    return home() / "ledger-heads"


def record_path(digest: str, ledger: Path) -> Path:
    """The file holding the head of ``ledger`` (of the data ``digest``) under this home."""
    key = hashlib.sha256(f"{digest}\0{ledger.resolve()}".encode()).hexdigest()
    return _heads() / f"{key}.json"


def _figure(value: Any, upper: float = math.inf) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < upper


def _problem(doc: Any) -> str | None:
    """What is wrong with a record's content (None: a valid record)."""
    if not isinstance(doc, dict):
        return "not a JSON object"
    lines, head, hashes = doc.get("lines"), doc.get("head"), doc.get("hashes")
    if not (isinstance(lines, int) and _figure(lines)):
        return "'lines' is not a count"
    wrong = [
        why
        for ok, why in (
            (head is None if lines == 0 else isinstance(head, str), "'head' is not a hash"),
            (_figure(doc.get("spent_epsilon")), "'spent_epsilon' is not an epsilon"),
            (_figure(doc.get("spent_delta", 0.0), 1.0), "'spent_delta' is not a delta"),
            (
                hashes is None
                or (
                    isinstance(hashes, list)
                    and len(hashes) == lines
                    and all(isinstance(h, str) for h in hashes)
                    and (not hashes or hashes[-1] == head)
                ),
                "'hashes' does not end at its head",
            ),
        )
        if not ok
    ]
    return wrong[0] if wrong else None


def inspect(digest: str, ledger: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The recorded head of ``ledger`` (None: no record), or why its record is unreadable."""
    path = record_path(digest, ledger)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, exc.strerror or type(exc).__name__
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return None, "not JSON"
    why = _problem(doc)
    return (None, why) if why else (doc, None)


def check(digest: str, ledger: Path, hashes: list[str], *, holds: str = "") -> None:
    """Refuse ``ledger`` (its lines' hashes, in order) unless it extends its recorded head.

    ``holds`` says what the file holds ("2 charge(s), epsilon 2 spent of the total 5"),
    for the refusal of a ledger with charges that has no record under this home.

    Raises:
        ConfigError: Naming what was found and how to go on.
    """
    head, unreadable = inspect(digest, ledger)
    adopt = f"synthflow ledger adopt {ledger}"
    if unreadable:
        raise ConfigError(
            f"the record of the ledger {str(ledger)!r}'s head, {record_path(digest, ledger)}, "
            f"cannot be read ({unreadable}): it was damaged or edited, and without it a "
            "rollback of the ledger goes unseen. Restore that record from a backup; or, if "
            f"the ledger is its dataset's latest copy, adopt it ('{adopt}', which replaces "
            "the record). Nothing was spent"
        )
    if head is None:
        if len(hashes) > 1:  # a header and charges, and no record of them here
            raise ConfigError(
                f"the ledger {str(ledger)!r} holds {holds or 'charges'}, but synthflow has "
                f"no record of its head under SYNTHFLOW_HOME {home()}: it was written under "
                "another home (another user's), moved or copied here, or restored from a "
                "backup, and it may be an older copy that forgets a spend. A ledger with "
                "charges is never taken on silently: if it is this dataset's latest ledger, "
                f"adopt it with '{adopt}' (recorded in the ledger), then run the command "
                "again. Nothing was spent"
            )
        return
    lines, spent = head["lines"], head.get("spent_epsilon")
    if lines == 0:
        return
    # A file that still has its header can be adopted: the spend it forgot is charged.
    way_out = (
        f"; if there is none (another home charged it since the rollback), '{adopt}' keeps "
        "it and charges the epsilon it forgot"
        if hashes
        else ""
    )
    if len(hashes) < lines:
        raise ConfigError(
            f"the ledger {str(ledger)!r} has {len(hashes)} line(s), but it had {lines} (epsilon "
            f"{spent} spent) when synthflow last wrote it: it was cut short, emptied or "
            "replaced (a restore from an old backup, a sync tool, an edit). A ledger that "
            f"forgets a spend is refused: restore its latest copy{way_out}. Nothing was spent"
        )
    if hashes[lines - 1] != head.get("head"):
        raise ConfigError(
            f"the ledger {str(ledger)!r}: line {lines} is not the line synthflow wrote there "
            "(it was edited, or lines were reordered or replaced, or another home charged a "
            f"rolled-back copy); restore the ledger's latest copy{way_out}. Nothing was spent"
        )


def check_writable() -> None:
    """Refuse a home where no record can be written (before an adoption writes its line).

    Raises:
        ConfigError: Naming the directory.
    """
    where = _heads()
    try:
        where.mkdir(parents=True, exist_ok=True)
        ok = os.access(where, os.W_OK | os.X_OK)
    except OSError:
        ok = False
    if not ok:
        raise ConfigError(
            f"cannot write the record of ledger heads in {where}: set SYNTHFLOW_HOME to a "
            "writable directory. Nothing was written"
        )


def record(
    digest: str,
    ledger: Path,
    hashes: list[str],
    spent_epsilon: float,
    spent_delta: float = 0.0,
    *,
    strict: bool = False,
) -> None:
    """Record ``ledger``'s head after a write.

    Best effort (``strict=False``): never fails the charge, says so. ``strict``: raises.
    """
    path = record_path(digest, ledger)
    doc = {
        "dataset_sha256": digest,
        "ledger": str(ledger.resolve()),
        "lines": len(hashes),
        "head": hashes[-1] if hashes else None,
        "hashes": hashes,
        "spent_epsilon": spent_epsilon,
        "spent_delta": spent_delta,
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(doc))
    except OSError as exc:
        if strict:
            raise
        # The ledger line is written (and fsynced) first: a record left behind is only
        # shorter than the file, which the check accepts. Said, not raised: the charge
        # stands; only the rollback check is weaker until the record can be written (a
        # ledger with charges and no record at all is refused until adopted).
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
    heads = _heads()
    if not heads.is_dir():
        return
    for path in heads.glob("*.json"):
        try:
            if json.loads(path.read_text("utf-8")).get("ledger") == where:
                path.unlink()
        except (OSError, ValueError, AttributeError):
            continue

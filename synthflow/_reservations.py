"""Budget reservations on a dataset ledger: a command holds its whole cost before charging.

A command that charges a dataset ledger several times (a generator's structure step and
its counts, one criterion after another, one table after another) first reserves its
whole cost under the ledger's lock (:meth:`synthflow.ledger.Ledger.reserve`). Other
processes count what is reserved as spent, so a command that cannot afford its whole
cost is refused with nothing charged, instead of charging its first steps and then
being refused (a losing racer's spend, #45).

The reservations live beside the ledger in ``<ledger>.reserved`` (JSON), written only
under the ledger's lock. Each names its process (pid and start time): the reservation of
a process that has died is dropped when read, so a crash never holds budget for good.
Reservations are not charges: the ledger file alone records what was spent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from synthflow._files import write_atomic

__all__ = ["add", "consume", "others", "remove", "token"]


def _sidecar(ledger: Path) -> Path:
    return ledger.with_name(f"{ledger.name}.reserved")


def _start_time(pid: int) -> str:
    """The process's start time (Linux: /proc/PID/stat field 22); '' if unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[19]


def token() -> str:
    """This process's reservation key: its pid and start time (a reused pid differs)."""
    return f"{os.getpid()}:{_start_time(os.getpid())}"


def _alive(key: str) -> bool:
    pid_text, _, start = key.partition(":")
    try:
        pid = int(pid_text)
        os.kill(pid, 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:  # another user's live process
        return True
    return _start_time(pid) == start


def _read(ledger: Path) -> dict[str, dict[str, Any]]:
    path = _sidecar(ledger)
    try:
        doc = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        doc = {}  # a damaged sidecar holds nothing: the ledger itself is the record
    if not isinstance(doc, dict):
        return {}
    return {
        k: v
        for k, v in doc.items()
        if isinstance(v, dict)
        and isinstance(v.get("epsilon"), (int, float))
        and isinstance(v.get("delta"), (int, float))
        and _alive(k)
    }


def _write(ledger: Path, held: dict[str, dict[str, Any]]) -> None:
    path = _sidecar(ledger)
    if not held:
        path.unlink(missing_ok=True)
        return
    write_atomic(path, json.dumps(held, indent=1))


def others(ledger: Path, key: str | None) -> tuple[float, float]:
    """Epsilon and delta reserved by live processes other than ``key`` (under the lock)."""
    held = _read(ledger)
    rest = [v for k, v in held.items() if k != key]
    return sum(float(v["epsilon"]) for v in rest), sum(float(v["delta"]) for v in rest)


def add(ledger: Path, key: str, epsilon: float, delta: float, what: str) -> None:
    """Reserve ``epsilon`` and ``delta`` for ``key`` (under the lock, after the check)."""
    held = _read(ledger)
    held[key] = {"epsilon": float(epsilon), "delta": float(delta), "what": what}
    _write(ledger, held)


def consume(ledger: Path, key: str, epsilon: float, delta: float) -> None:
    """A charge made under ``key``'s reservation: that much is now spent, not reserved."""
    held = _read(ledger)
    if key in held:
        held[key]["epsilon"] = max(float(held[key]["epsilon"]) - epsilon, 0.0)
        held[key]["delta"] = max(float(held[key]["delta"]) - delta, 0.0)
        _write(ledger, held)


def remove(ledger: Path, key: str) -> None:
    """Release ``key``'s reservation (what it did not charge is free again)."""
    held = _read(ledger)
    if held.pop(key, None) is not None or _sidecar(ledger).exists():
        _write(ledger, held)

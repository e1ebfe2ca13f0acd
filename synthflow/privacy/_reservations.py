"""Budget reservations on a dataset ledger: a command holds its whole cost before charging.

A command that charges a dataset ledger several times (a generator's structure step and
its counts, one criterion after another, one table after another) first reserves its
whole cost under the ledger's lock (:meth:`synthflow.privacy.ledger.Ledger.reserve`). Other
processes count what is reserved as spent, so a command that cannot afford its whole
cost is refused with nothing charged, instead of charging its first steps and then
being refused (a losing racer's spend, #45).

The reservations live beside the ledger in ``<ledger>.reserved`` (JSON), written only
under the ledger's lock. Each names its process (pid and start time): the reservation of
a process that has died is dropped when read, so a crash never holds budget for good.
Reservations are not charges: the ledger file alone records what was spent.

The sidecar is held to the ledger's standard (#58): a reservation only ever lowers what
can be spent, so one that is not a finite, non-negative epsilon and delta (a hand edit:
``"epsilon": -100`` once let a command charge 5.1 on a total of 2), or a sidecar that
is not the JSON synthflow writes, is refused with the fix, never read as nothing.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from synthflow._util.files import write_atomic
from synthflow.errors import ConfigError

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


def _damaged(path: Path, what: str) -> ConfigError:
    return ConfigError(
        f"the ledger's reservation file {str(path)!r} {what}: it is written only by "
        "synthflow, under the ledger's lock, and a reservation can only lower what may be "
        "spent. Once no synthflow command is running on this ledger, delete that file "
        "(reservations are not charges: the ledger alone records what was spent) and run "
        "the command again. Nothing was charged"
    )


def _amount(value: Any) -> bool:
    """A reservation's epsilon or delta: a finite, non-negative number (not a bool)."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def _read(ledger: Path) -> dict[str, dict[str, Any]]:
    """The live processes' reservations.

    Raises:
        ConfigError: If the sidecar is not what synthflow writes (damaged or edited).
    """
    path = _sidecar(ledger)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise _damaged(path, f"cannot be read ({type(exc).__name__})") from None
    try:
        doc = json.loads(text, parse_constant=lambda name: None)  # no NaN or Infinity
    except (ValueError, RecursionError):
        raise _damaged(path, "is not valid JSON") from None
    if not isinstance(doc, dict):
        raise _damaged(path, "is not a JSON object of reservations")
    for v in doc.values():
        if not (isinstance(v, dict) and _amount(v.get("epsilon")) and _amount(v.get("delta"))):
            raise _damaged(
                path, "holds a reservation whose epsilon or delta is not a finite number >= 0"
            )
    return {k: v for k, v in doc.items() if _alive(k)}


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

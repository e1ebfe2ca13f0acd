"""The one privacy accountant of a run.

A :class:`Ledger` is created from the spec's total budget and passed explicitly to every
stage that touches private data. Stages call :meth:`Ledger.charge` *before* they release
anything; the ledger refuses a charge that would overspend and appends every accepted
charge as one JSON line to its file (if it has one), so a crash never loses what was
spent.

Budget arithmetic is exact: epsilons are summed as :class:`fractions.Fraction` of the
floats given, and a charge is accepted only if the exact sum stays within the total plus
a slack of ``1e-12`` (so that ``eps * split + eps * (1 - split)`` composes to ``eps``
despite float rounding; the slack is far below any meaningful privacy loss).

Composition is basic (sequential): epsilons add and deltas add.

**One budget per private dataset.** :func:`dataset_ledger` opens a ledger file bound to
one dataset: its first line records the SHA-256 of the data file and the dataset's total
budget, and every command that computes on those data (``run``, ``evaluate``, ``tables
protect``, ``release``) charges the same file (``--ledger``), so their spends add up
against one total. Opening it for other data, or with another total, is refused. Every
line is flushed and fsynced before the statistic is released.

>>> ledger = Ledger(total_epsilon=1.0)
>>> ledger.charge("a count", epsilon=0.25, mechanism="laplace", sensitivity=1.0)
>>> ledger.spent_epsilon
0.25
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from synthflow.errors import BudgetExceededError, ConfigError

__all__ = ["Charge", "Ledger", "dataset_ledger", "file_sha256"]

HEADER = "synthflow dataset ledger"

_SLACK = Fraction(1, 10**12)


@dataclass(frozen=True, kw_only=True)
class Charge:
    """One accepted spend of privacy budget."""

    what: str
    """Human-readable name of the released statistic or model."""
    epsilon: float
    """Pure-DP epsilon (or the epsilon of an (epsilon, delta) guarantee)."""
    delta: float = 0.0
    """Delta of an approximate-DP guarantee; 0 for pure DP."""
    mechanism: str = ""
    """Name of the mechanism (laplace, exponential, functional, ...)."""
    sensitivity: float | None = None
    """Declared sensitivity the noise was calibrated to, if a single number."""
    time: float = field(default_factory=time.time)
    """Unix time of the charge."""


class Ledger:
    """Append-only privacy ledger with a hard total.

    Args:
        total_epsilon: Total epsilon this run may spend.
        total_delta: Total delta this run may spend.
        path: Optional JSON-lines file. Existing charges in it are loaded first, so a
            restarted run continues the same ledger instead of spending twice.
    """

    def __init__(
        self, *, total_epsilon: float, total_delta: float = 0.0, path: str | Path | None = None
    ) -> None:
        if not total_epsilon > 0:
            raise ValueError(f"total_epsilon ({total_epsilon}) must be > 0")
        if not 0 <= total_delta < 1:
            raise ValueError(f"total_delta ({total_delta}) must be in [0, 1)")
        self.total_epsilon = float(total_epsilon)
        self.total_delta = float(total_delta)
        self.path = Path(path) if path is not None else None
        self._charges: list[Charge] = []
        self._eps = Fraction(0)
        self._delta = Fraction(0)
        self.header: dict[str, Any] | None = None
        if self.path is not None and self.path.exists():
            for c in _read_charges(self.path, self):
                self._append(c)
            if self._exact_eps() > Fraction(self.total_epsilon) + _SLACK:
                raise BudgetExceededError(
                    f"ledger file {self.path} already records epsilon {self.spent_epsilon}, more "
                    f"than the total {self.total_epsilon}; use a new output directory"
                )

    def _append(self, c: Charge) -> None:
        self._charges.append(c)
        self._eps += Fraction(c.epsilon)
        self._delta += Fraction(c.delta)

    def _exact_eps(self) -> Fraction:
        return self._eps

    def _exact_delta(self) -> Fraction:
        return self._delta

    @property
    def charges(self) -> tuple[Charge, ...]:
        """All accepted charges, oldest first."""
        return tuple(self._charges)

    def __repr__(self) -> str:
        where = f", path={str(self.path)!r}" if self.path is not None else ""
        return (
            f"Ledger(total_epsilon={self.total_epsilon:g}, spent_epsilon={self.spent_epsilon:g}, "
            f"charges={len(self._charges)}{where})"
        )

    @property
    def spent_epsilon(self) -> float:
        """Epsilon spent so far (exact sum rounded to float)."""
        return float(self._exact_eps())

    @property
    def spent_delta(self) -> float:
        """Delta spent so far."""
        return float(self._exact_delta())

    @property
    def remaining_epsilon(self) -> float:
        """Epsilon still available."""
        return float(max(Fraction(self.total_epsilon) - self._exact_eps(), Fraction(0)))

    def can_afford(self, epsilon: float, delta: float = 0.0) -> bool:
        """Whether a charge of ``epsilon`` (and ``delta``) would be accepted."""
        eps_ok = self._exact_eps() + Fraction(epsilon) <= Fraction(self.total_epsilon) + _SLACK
        delta_ok = self._exact_delta() + Fraction(delta) <= Fraction(self.total_delta) + _SLACK
        return eps_ok and delta_ok

    def charge(
        self,
        what: str,
        *,
        epsilon: float,
        delta: float = 0.0,
        mechanism: str = "",
        sensitivity: float | None = None,
    ) -> None:
        """Record a spend; call this before releasing the statistic.

        Raises:
            ValueError: If epsilon or delta is negative or not finite.
            BudgetExceededError: If the charge would exceed the total budget.
        """
        if not (epsilon >= 0 and epsilon < float("inf")):
            raise ValueError(f"epsilon ({epsilon}) for {what!r} must be finite and >= 0")
        if not 0 <= delta < 1:
            raise ValueError(f"delta ({delta}) for {what!r} must be in [0, 1)")
        if not self.can_afford(epsilon, delta):
            raise BudgetExceededError(
                f"cannot charge {what!r}: requested epsilon {epsilon:g} (delta {delta:g}) but "
                f"only epsilon {self.remaining_epsilon:g} (delta "
                f"{max(self.total_delta - self.spent_delta, 0.0):g}) remains of the total "
                f"{self.total_epsilon:g}; lower the stage's budget or raise the spec's total"
            )
        entry = Charge(
            what=what,
            epsilon=float(epsilon),
            delta=float(delta),
            mechanism=mechanism,
            sensitivity=None if sensitivity is None else float(sensitivity),
        )
        if self.path is not None:
            self._write_line(asdict(entry))
        self._append(entry)

    def _write_line(self, obj: dict[str, Any]) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def summary(self) -> dict[str, Any]:
        """JSON-ready totals and the list of charges."""
        return {
            "total_epsilon": self.total_epsilon,
            "total_delta": self.total_delta,
            "spent_epsilon": self.spent_epsilon,
            "spent_delta": self.spent_delta,
            "charges": [asdict(c) for c in self._charges],
        }


def _read_charges(path: Path, ledger: Ledger) -> Iterator[Charge]:
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if lineno == 1 and isinstance(obj, dict) and obj.get("header") == HEADER:
                ledger.header = obj
                continue
            yield Charge(**obj)
        except (json.JSONDecodeError, TypeError) as exc:
            if lineno == len(lines) and not text.endswith("\n"):
                # Each charge is written as one line ending in a newline before anything
                # it covers is released: a last line without its newline is a write cut
                # short by a crash, so nothing after it was released.
                raise ConfigError(
                    f"{path}:{lineno}: the last ledger line is incomplete (the process stopped "
                    "while writing it, before releasing what it covers). Keep a copy of the "
                    "file, then delete that partial last line to continue; do not start a "
                    "new ledger, which would forget what was spent"
                ) from exc
            raise ConfigError(
                f"{path}:{lineno} is not a synthflow ledger line ({exc}); the ledger is "
                "damaged: restore it from a backup (a new ledger would forget what was spent)"
            ) from exc


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (read in blocks)."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def dataset_ledger(
    path: str | Path, data: str | Path, *, total_epsilon: float, total_delta: float = 0.0
) -> Ledger:
    """The persistent ledger of the dataset in file ``data`` (created on first use).

    Raises:
        ConfigError: If the file is the ledger of other data, holds another total, or is
            not a dataset ledger (e.g. a run's own ledger).
    """
    path = Path(path)
    digest = file_sha256(data)
    if path.is_dir():
        raise ConfigError(f"--ledger {str(path)!r} is a directory; give a ledger file path")
    ledger = Ledger(total_epsilon=total_epsilon, total_delta=total_delta, path=path)
    if ledger.header is None:
        if ledger.charges:
            raise ConfigError(
                f"{str(path)!r} is a ledger without a dataset header (a run's own ledger?); "
                "give the dataset's ledger file, or a new path to start one"
            )
        ledger.header = {
            "header": HEADER,
            "dataset_sha256": digest,
            "total_epsilon": float(total_epsilon),
            "total_delta": float(total_delta),
        }
        ledger._write_line(ledger.header)
        return ledger
    if ledger.header.get("dataset_sha256") != digest:
        raise ConfigError(
            f"the ledger {str(path)!r} belongs to another dataset (its SHA-256 differs from "
            f"{str(data)!r}); each private dataset has one ledger: pass that dataset's ledger"
        )
    if (ledger.header.get("total_epsilon"), ledger.header.get("total_delta")) != (
        float(total_epsilon),
        float(total_delta),
    ):
        raise ConfigError(
            f"the ledger {str(path)!r} was created with total epsilon "
            f"{ledger.header.get('total_epsilon')} and delta {ledger.header.get('total_delta')}; "
            f"this spec gives {total_epsilon} and {total_delta}: a dataset's total budget is "
            "fixed when its ledger is created"
        )
    return ledger


def command_ledger(
    *,
    data: str | Path,
    public: bool,
    ledger_path: str | Path | None,
    total_epsilon: float,
    total_delta: float = 0.0,
    fallback: str | Path | None = None,
) -> Ledger:
    """The ledger a command charges for DP computations on ``data``.

    ``--ledger`` names the dataset's persistent ledger (:func:`dataset_ledger`); data
    not declared public require it, so that every command on a private dataset draws on
    one budget. Public data without ``--ledger`` get a ledger at ``fallback`` (or in
    memory), as experiments on public data spend nothing real.

    Raises:
        ConfigError: Private data without ``--ledger``, or a ledger of other data.
    """
    if ledger_path is not None:
        return dataset_ledger(
            ledger_path, data, total_epsilon=total_epsilon, total_delta=total_delta
        )
    if not public:
        raise ConfigError(
            "DP computations on data not declared public need --ledger FILE: the dataset's "
            "persistent privacy ledger, shared by run, evaluate, tables protect and release "
            "(one file per private dataset, kept in the enclave; created on first use). "
            "Add --public only if the data are public"
        )
    return Ledger(total_epsilon=total_epsilon, total_delta=total_delta, path=fallback)

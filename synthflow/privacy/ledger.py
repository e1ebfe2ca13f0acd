"""The one privacy accountant of a run, and the one ledger of a private dataset.

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
one dataset: its first line records a SHA-256 of the dataset as the flow reads it (the
cleaned release columns, independent of row order, compression and line endings:
:func:`data_fingerprint`) and the dataset's total budget, and every command that
computes on those data (``run``, ``evaluate``, ``tables protect``, ``release``) charges
the same file (``--ledger``), so their spends add up against one total. Opening it for
other data, or with another total, is refused.

**Safe across processes.** A charge to a file takes an exclusive lock on the file
(``flock``), re-reads it, checks the total against what the *file* holds (other
processes may have charged since this one opened it), appends the line, fsyncs it and
only then releases the lock: N processes charging one ledger at once never exceed its
total.

**Checked as read.** Every line is validated as :meth:`Ledger.charge` validates its
arguments (finite, non-negative epsilon; delta in [0, 1); no unknown field), and every
line holds the SHA-256 of the line before it (``prev``), so an edited, inserted or
deleted line (other than the last) is detected and named. A dataset ledger must also
extend the head recorded under ``$SYNTHFLOW_HOME`` (:mod:`synthflow.privacy.head`); one
holding charges that this home has no record of is refused until the steward adopts it
(:func:`adopt_ledger`, ``synthflow ledger adopt``), which is recorded as a line of it.
The chain is tamper-evidence against edits by hand, not a signature: see
docs/privacy.md, "What the ledger cannot see".

>>> ledger = Ledger(total_epsilon=1.0)
>>> ledger.charge("a count", epsilon=0.25, mechanism="laplace", sensitivity=1.0)
>>> ledger.spent_epsilon
0.25

Kept whole: the ledger's file format, lock and checks are one accounting record, audited
together.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from synthflow._util.files import append_whole
from synthflow.errors import BudgetExceededError, ConfigError
from synthflow.privacy import _reservations
from synthflow.privacy import head as ledger_head

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Adoption",
    "Charge",
    "Ledger",
    "adopt_ledger",
    "charged_by_ledger",
    "charged_to_datasets",
    "data_fingerprint",
    "dataset_ledger",
    "file_sha256",
    "read_ledger",
    "spend_line",
    "spend_lines",
]

HEADER = "synthflow dataset ledger"
FINGERPRINT = "cleaned-rows-v1"
"""How the header's ``dataset_sha256`` is computed (:func:`data_fingerprint`)."""

_SLACK = Fraction(1, 10**12)

_charged_to_datasets = 0.0
"""Epsilon this process has charged to dataset ledgers (files with a dataset header)."""

_charged_ledgers: dict[str, tuple[Ledger, float, float]] = {}
"""Each dataset ledger this process charged: the ledger, and the epsilon and delta charged."""


def charged_to_datasets() -> float:
    """Epsilon this process has charged to dataset ledgers so far.

    The CLI compares it before and after a command: an error after a charge is not
    "nothing spent" (exit 2) but an error after spending (exit 4).
    """
    return _charged_to_datasets


def charged_by_ledger() -> dict[str, tuple[float, float]]:
    """Epsilon and delta this process has charged so far, per dataset ledger (by path)."""
    return {key: (eps, delta) for key, (_, eps, delta) in _charged_ledgers.items()}


def spend_lines(before: dict[str, tuple[float, float]] | None = None) -> list[str]:
    """One line per dataset ledger charged since ``before``: what, what is left, where.

    ``before``: :func:`charged_by_ledger` when the command started (None: the whole
    process), so that a process running several commands (a notebook, the API) reports
    each command's own spend. Public figures only (budgets, the ledger's path), never data.
    """
    lines = []
    for key, (ledger, eps, delta) in _charged_ledgers.items():
        eps0, delta0 = (before or {}).get(key, (0.0, 0.0))
        if eps > eps0 or delta > delta0:
            lines.append(spend_line(ledger, eps - eps0, delta - delta0))
    return lines


def spend_line(ledger: Ledger, epsilon: float, delta: float) -> str:
    """The line "spent epsilon X (delta D) of Y; Z left; ledger PATH" for one ledger."""
    return (
        f"spent epsilon {epsilon:.6g} (delta {delta:.3g}) of the total {ledger.total_epsilon:g}; "
        f"{ledger.remaining_epsilon:.6g} left (delta "
        f"{max(ledger.total_delta - ledger.spent_delta, 0.0):.3g}); ledger {ledger.path}"
    )


_CHARGE_KEYS = frozenset({"what", "epsilon", "delta", "mechanism", "sensitivity", "time", "ref"})
_HEADER_KEYS = frozenset(
    {"header", "dataset_sha256", "fingerprint", "total_epsilon", "total_delta"}
)


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
    ref: str | None = None
    """A structured reference (e.g. ``selection:<id>``) that code matches, never ``what``."""


def _line_hash(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8")).hexdigest()


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_epsilon_delta(epsilon: Any, delta: Any, what: str) -> None:
    if not (_number(epsilon) and math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon ({epsilon}) for {what!r} must be finite and >= 0")
    if not (_number(delta) and 0 <= delta < 1):
        raise ValueError(f"delta ({delta}) for {what!r} must be in [0, 1)")


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
        self._tip: str | None = None
        self._hashes: list[str] = []
        """Each line's hash, in order (the file's chain, checked against its recorded head)."""
        self._held = (Fraction(0), Fraction(0))
        """Epsilon and delta other live commands have reserved on this file (last read)."""
        self.header: dict[str, Any] | None = None
        if self.path is not None and self.path.exists():
            if self.path.is_dir():
                raise ConfigError(f"ledger {str(self.path)!r} is a directory; give a file path")
            self._load(self.path.read_text(encoding="utf-8"))
            self._check_within_total()

    def _check_within_total(self) -> None:
        if self._eps > Fraction(self.total_epsilon) + _SLACK:
            where = (
                "the dataset's budget is spent (a new ledger for these data would forget it)"
                if self.header is not None
                else "use a new output directory"
            )
            raise BudgetExceededError(
                f"ledger file {self.path} already records epsilon {self.spent_epsilon}, more "
                f"than the total {self.total_epsilon}; {where}"
            )

    def _load(self, text: str) -> None:
        """Replace the in-memory state with the file's (validated, chain checked)."""
        self._charges, self._eps, self._delta = [], Fraction(0), Fraction(0)
        self._tip, self.header, self._hashes = None, None, []
        assert self.path is not None
        for lineno, line, obj in _parse_lines(self.path, text):
            if lineno == 1 and obj.get("header") == HEADER:
                self.header = _check_header(self.path, lineno, obj)
            else:
                self._append(_check_charge(self.path, lineno, obj, self._tip))
            self._tip = _line_hash(line)
            self._hashes.append(self._tip)
        if self.header is not None:  # a dataset ledger: it must extend its recorded head
            self._check_head()

    def _check_head(self) -> None:
        """Refuse a file that does not extend its recorded head (or has none, with charges)."""
        assert self.path is not None and self.header is not None
        ledger_head.check(
            self.header["dataset_sha256"], self.path, self._hashes, holds=self._holds()
        )

    def _holds(self) -> str:
        """What a dataset ledger's file holds: "N charge(s), epsilon X spent of the total T"."""
        header = self.header or {}
        total, total_delta = header.get("total_epsilon"), header.get("total_delta", 0.0)
        delta = (
            f" (delta {self.spent_delta:.3g} of {total_delta:.3g})"
            if self.spent_delta or total_delta
            else ""
        )
        return (
            f"{len(self._charges)} charge(s), epsilon {self.spent_epsilon:.6g} spent of the "
            f"total {total:g}{delta}"
        )

    @contextmanager
    def _locked(self) -> Iterator[IO[str]]:
        """The file, exclusively locked and re-read; released when the block ends."""
        import fcntl  # noqa: PLC0415  (POSIX only; enclaves run on Linux)

        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a+", encoding="utf-8") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # released when fh closes
            fh.seek(0)
            self._load(fh.read())
            if self.header is not None:  # a dataset ledger: others' reservations count
                eps, delta = _reservations.others(self.path, _reservations.token())
                self._held = (Fraction(eps), Fraction(delta))
            yield fh

    def _append(self, c: Charge) -> None:
        self._charges.append(c)
        self._eps += Fraction(c.epsilon)
        self._delta += Fraction(c.delta)

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
        return float(self._eps)

    @property
    def spent_delta(self) -> float:
        """Delta spent so far."""
        return float(self._delta)

    @property
    def remaining_epsilon(self) -> float:
        """Epsilon still available."""
        return float(max(Fraction(self.total_epsilon) - self._eps, Fraction(0)))

    def child(self, *, total_epsilon: float, total_delta: float, path: str | Path) -> Ledger:
        """A ledger for one part of what this ledger already holds (a selection's attempt).

        Its own file and total: the part's charges are recorded there, item by item,
        within what this ledger was charged for the whole (the selection charges its
        whole cost up front, then each attempt spends within its own ledger).
        """
        return Ledger(total_epsilon=total_epsilon, total_delta=total_delta, path=path)

    def refresh(self) -> None:
        """Re-read the file (other processes may have charged it since it was opened)."""
        if self.path is not None and self.path.exists():
            with self._locked():
                pass

    def can_afford(self, epsilon: float, delta: float = 0.0) -> bool:
        """Whether a charge of ``epsilon`` (and ``delta``) would be accepted now.

        For a ledger file this answers from the last read; :meth:`charge` checks again
        under the file's lock.
        """
        held_eps, held_delta = self._held
        eps_ok = self._eps + held_eps + Fraction(epsilon) <= Fraction(self.total_epsilon) + _SLACK
        delta_ok = self._delta + held_delta + Fraction(delta) <= Fraction(self.total_delta) + _SLACK
        return eps_ok and delta_ok

    @contextmanager
    def reserve(self, epsilon: float, delta: float = 0.0, *, what: str) -> Iterator[None]:
        """Hold a command's whole cost on this dataset ledger while the block runs.

        Checked under the file's lock against what is spent and what other live
        commands hold: a command that cannot afford its whole cost is refused here,
        before its first charge. Its charges inside the block draw on the reservation;
        what it did not charge is released when the block ends (or its process dies).
        A ledger without a file or header (a run's own) only checks.

        Raises:
            BudgetExceededError: If the whole cost cannot be afforded now.
        """
        _check_epsilon_delta(epsilon, delta, what)
        if self.path is None or self.header is None:
            self._refuse_unaffordable(what, epsilon, delta)
            yield
            return
        key = _reservations.token()
        with self._locked():
            self._refuse_unaffordable(what, epsilon, delta)
            _reservations.add(self.path, key, epsilon, delta, what)
        try:
            yield
        finally:
            with self._locked():
                _reservations.remove(self.path, key)

    def charge(
        self,
        what: str,
        *,
        epsilon: float,
        delta: float = 0.0,
        mechanism: str = "",
        sensitivity: float | None = None,
        ref: str | None = None,
    ) -> None:
        """Record a spend; call this before releasing the statistic.

        For a ledger file the check and the fsynced line happen under one exclusive
        lock, against what the file holds at that moment.

        Raises:
            ValueError: If epsilon or delta is negative or not finite.
            BudgetExceededError: If the charge would exceed the total budget.
        """
        _check_epsilon_delta(epsilon, delta, what)
        entry = Charge(
            what=what,
            epsilon=float(epsilon),
            delta=float(delta),
            mechanism=mechanism,
            sensitivity=None if sensitivity is None else float(sensitivity),
            ref=ref,
        )
        if self.path is None:
            self._refuse_unaffordable(what, epsilon, delta)
            self._append(entry)
            return
        with self._locked() as fh:
            self._refuse_unaffordable(what, epsilon, delta)
            self._write_charge(fh, entry)
            if self.header is not None:
                _reservations.consume(self.path, _reservations.token(), epsilon, delta)
                self._record_head()
                global _charged_to_datasets  # noqa: PLW0603  (one process-wide figure)
                _charged_to_datasets += float(epsilon)
                key = str(self.path.resolve())
                _, eps0, delta0 = _charged_ledgers.get(key, (self, 0.0, 0.0))
                _charged_ledgers[key] = (self, eps0 + float(epsilon), delta0 + float(delta))

    def _write_charge(self, fh: IO[str], entry: Charge) -> None:
        """Append ``entry`` as the file's next line (under the lock), chained to the last."""
        line = json.dumps({**asdict(entry), "prev": self._tip})
        _write(fh, line)
        self._append(entry)
        self._tip = _line_hash(line)
        self._hashes.append(self._tip)

    def _record_head(self, *, strict: bool = False) -> None:
        assert self.path is not None and self.header is not None
        ledger_head.record(
            self.header["dataset_sha256"],
            self.path,
            self._hashes,
            self.spent_epsilon,
            self.spent_delta,
            strict=strict,
        )

    def _refuse_unaffordable(self, what: str, epsilon: float, delta: float) -> None:
        if not self.can_afford(epsilon, delta):
            held = float(self._held[0])
            others = (
                f" ({held:g} of it is reserved by another command running on this ledger: "
                "wait for it to finish)"
                if held > 0
                else ""
            )
            raise BudgetExceededError(
                f"cannot charge {what!r}: requested epsilon {epsilon:g} (delta {delta:g}) but "
                f"only epsilon {self.remaining_epsilon:g} (delta "
                f"{max(self.total_delta - self.spent_delta, 0.0):g}) remains of the total "
                f"{self.total_epsilon:g}{others}; lower the stage's budget or raise the "
                "spec's total"
            )

    def _bind_header(self, header: dict[str, Any]) -> None:
        """Write ``header`` as the first line of a new file, or check the file's own."""
        assert self.path is not None
        with self._locked() as fh:
            if self.header is None:
                if self._charges:
                    raise ConfigError(
                        f"{str(self.path)!r} is a ledger without a dataset header (a run's own "
                        "ledger?); give the dataset's ledger file, or a new path to start one"
                    )
                # An emptied or deleted-and-recreated ledger of these data at this path is
                # refused against its recorded head before a new header is written.
                ledger_head.check(header["dataset_sha256"], self.path, [])
                line = json.dumps(header)
                _write(fh, line)
                self.header, self._tip = dict(header), _line_hash(line)
                self._hashes = [self._tip]
                self._record_head()
            elif not self._charges and ledger_head.inspect(
                self.header["dataset_sha256"], self.path
            ) == (None, None):  # a crash between the header and its record: nothing to forget
                self._record_head()

    def summary(self) -> dict[str, Any]:
        """JSON-ready totals and the list of charges."""
        return {
            "total_epsilon": self.total_epsilon,
            "total_delta": self.total_delta,
            "spent_epsilon": self.spent_epsilon,
            "spent_delta": self.spent_delta,
            "charges": [asdict(c) for c in self._charges],
        }


def _write(fh: IO[str], line: str) -> None:
    """Append one line, fsynced, whole or not at all (a cut write is cut back off)."""
    fh.flush()
    append_whole(fh.fileno(), line)


def _parse_lines(path: Path, text: str) -> Iterator[tuple[int, str, dict[str, Any]]]:
    lines = text.split("\n")
    torn = lines[-1] != ""
    body = lines if torn else lines[:-1]
    for lineno, line in enumerate(body, start=1):
        if torn and lineno == len(body):
            # Each charge is written as one line ending in a newline before anything it
            # covers is released: a last line without its newline is a write cut short
            # by a crash, so nothing after it was released.
            raise ConfigError(
                f"{path}:{lineno}: the last ledger line is incomplete (the process stopped "
                "while writing it, before releasing what it covers). Keep a copy of the "
                "file, then delete that partial last line to continue; do not start a "
                "new ledger, which would forget what was spent"
            )
        try:
            obj = json.loads(line)
        except ValueError as exc:
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else type(exc).__name__
            raise _damaged(path, lineno, f"not JSON ({why})") from None
        if not isinstance(obj, dict):
            raise _damaged(path, lineno, "not a JSON object")
        yield lineno, line, obj


def _damaged(path: Path, lineno: int, why: str) -> ConfigError:
    return ConfigError(
        f"{path}:{lineno} is not a valid synthflow ledger line: {why}. The ledger is "
        "damaged or was edited by hand: restore it from a backup (a new ledger would "
        "forget what was spent)"
    )


def _check_header(path: Path, lineno: int, obj: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(obj) - _HEADER_KEYS)
    if unknown:
        raise _damaged(path, lineno, f"unknown header field(s) {unknown}")
    digest = obj.get("dataset_sha256")
    if not (isinstance(digest, str) and len(digest) == 64):
        raise _damaged(path, lineno, "the header's dataset_sha256 is not a SHA-256")
    eps, delta = obj.get("total_epsilon"), obj.get("total_delta", 0.0)
    if not (
        isinstance(eps, (int, float))
        and _number(eps)
        and math.isfinite(eps)
        and eps > 0
        and isinstance(delta, (int, float))
        and _number(delta)
        and 0 <= delta < 1
    ):
        raise _damaged(path, lineno, "the header's total budget is not a valid budget")
    return obj


def _check_charge(path: Path, lineno: int, obj: dict[str, Any], tip: str | None) -> Charge:
    if obj.get("header") is not None:
        raise _damaged(path, lineno, "a dataset header after the first line")
    unknown = sorted(set(obj) - _CHARGE_KEYS - {"prev"})
    if unknown:
        raise _damaged(path, lineno, f"unknown field(s) {unknown}")
    if "prev" not in obj:
        raise _damaged(path, lineno, "no 'prev' hash (written by hand or by an old synthflow)")
    if obj["prev"] != tip:
        raise _damaged(
            path,
            lineno,
            "its 'prev' hash does not match the line before it (a line was edited, "
            "inserted or deleted)",
        )
    what = obj.get("what")
    if not isinstance(what, str):
        raise _damaged(path, lineno, "'what' is missing or not text")
    try:
        _check_epsilon_delta(obj.get("epsilon"), obj.get("delta", 0.0), what)
    except ValueError as exc:
        raise _damaged(path, lineno, str(exc)) from None
    sens = obj.get("sensitivity")
    if sens is not None and not (_number(sens) and math.isfinite(sens) and sens >= 0):
        raise _damaged(path, lineno, f"sensitivity ({sens}) must be finite and >= 0")
    if not isinstance(obj.get("mechanism", ""), str) or not _number(obj.get("time", 0.0)):
        raise _damaged(path, lineno, "'mechanism' must be text and 'time' a number")
    if obj.get("ref") is not None and not isinstance(obj["ref"], str):
        raise _damaged(path, lineno, "'ref' must be text")
    return Charge(**{k: v for k, v in obj.items() if k in _CHARGE_KEYS})


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (read in blocks)."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def data_fingerprint(frame: pd.DataFrame) -> str:
    """SHA-256 of a cleaned dataset as the flow reads it, whatever file it came from.

    The columns (sorted by name) and one 64-bit hash per row (pandas'
    ``hash_pandas_object`` of the row's cleaned values, typed by the spec), the row
    hashes sorted: a gzip or
    CRLF copy of a file, or its rows in another order, give the same fingerprint, so
    they draw on the same dataset ledger. Different data give different fingerprints
    (up to hash collisions).
    """
    import numpy as np  # noqa: PLC0415
    import pandas as pd  # noqa: PLC0415

    cols = sorted(frame.columns)
    rows = np.sort(pd.util.hash_pandas_object(frame[cols], index=False).to_numpy(np.uint64))
    h = hashlib.sha256(json.dumps([FINGERPRINT, cols, len(frame)]).encode())
    h.update(rows.tobytes())
    return h.hexdigest()


def dataset_ledger(
    path: str | Path,
    data: pd.DataFrame,
    *,
    total_epsilon: float,
    total_delta: float = 0.0,
) -> Ledger:
    """The persistent ledger of the cleaned dataset ``data`` (created on first use).

    Raises:
        ConfigError: If the file is the ledger of other data, holds another total, is
            not a dataset ledger (e.g. a run's own ledger), or is damaged.
    """
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"--ledger {str(path)!r} is a directory; give a ledger file path")
    if path.exists() and not path.is_file():  # a FIFO or a device would block or lie
        raise ConfigError(f"--ledger {str(path)!r} is not a regular file; give a ledger file path")
    digest = data_fingerprint(data)
    if not path.exists():  # deleted since synthflow last wrote it: refused, not recreated
        ledger_head.check(digest, path, [])
    ledger = Ledger(total_epsilon=total_epsilon, total_delta=total_delta, path=path)
    ledger._bind_header(
        {
            "header": HEADER,
            "dataset_sha256": digest,
            "fingerprint": FINGERPRINT,
            "total_epsilon": float(total_epsilon),
            "total_delta": float(total_delta),
        }
    )
    header = ledger.header or {}
    if header.get("dataset_sha256") != digest:
        raise ConfigError(
            f"the ledger {str(path)!r} belongs to another dataset (the cleaned data's "
            "SHA-256 differs from the one it was created for); each private dataset has one "
            "ledger: pass that dataset's ledger"
        )
    if (header.get("total_epsilon"), header.get("total_delta")) != (
        float(total_epsilon),
        float(total_delta),
    ):
        raise ConfigError(
            f"the ledger {str(path)!r} was created with total epsilon "
            f"{header.get('total_epsilon')} and delta {header.get('total_delta')}; "
            f"this spec gives {total_epsilon} and {total_delta}: a dataset's total budget is "
            "fixed when its ledger is created"
        )
    return ledger


class _LedgerView(Ledger):
    """A ledger file read for what it records: charging or reserving through it is a bug."""

    def charge(self, what: str, **_: Any) -> None:
        raise RuntimeError(f"a ledger read for its figures cannot be charged ({what!r})")

    def reserve(self, epsilon: float, delta: float = 0.0, *, what: str) -> Iterator[None]:  # type: ignore[override]
        raise RuntimeError(f"a ledger read for its figures cannot hold a reservation ({what!r})")


def read_ledger(path: str | Path) -> Ledger:
    """The ledger file at ``path`` read for its figures (spent epsilon and delta, charges).

    Never charged: jobs open the ledgers they charge (:func:`synthflow.jobs.open_job`);
    this is for reports of what a file records (a release's spend line, the demo's
    summary). A missing file reads as empty.

    Raises:
        ConfigError: A damaged file.
    """
    return _LedgerView(total_epsilon=1e300, total_delta=0.999, path=path)


@dataclass(frozen=True, kw_only=True)
class Adoption:
    """What :func:`adopt_ledger` found and did (budget figures and paths, never data)."""

    path: Path
    home: Path
    """The absolute ``SYNTHFLOW_HOME`` whose record now holds the ledger's head."""
    holds: str
    """What the file held before: "N charge(s), epsilon X spent of the total T"."""
    adopted: bool
    """False: the file already extends its record under this home; nothing was written."""
    line: int = 0
    """The ledger's line that records the adoption (and charges what was forgotten)."""
    recorded: tuple[int, float] | None = None
    """The record this home had: its number of lines and the epsilon then spent."""
    agreed_lines: int = 0
    """The file's first lines that the record this home had agrees with."""
    carried_epsilon: float = 0.0
    carried_delta: float = 0.0
    unreadable: str | None = None
    """Why this home's record could not be read (it is replaced)."""
    over_total: bool = False


class _Adopting(Ledger):
    """A dataset ledger read without its head check: only :func:`adopt_ledger` reads so."""

    def _check_head(self) -> None:
        return


def adopt_ledger(path: str | Path) -> Adoption:
    """Take on the dataset ledger at ``path`` under this ``SYNTHFLOW_HOME``: explicit.

    A ledger holding charges with no record of its head here (another user's, moved,
    restored into a fresh home) is refused by every command until it is adopted; so is
    one whose record here cannot be read. Adopting appends one line to the ledger, in
    its chain, that records the adoption, and records the new head here. A ledger that
    does not extend the head recorded here (a rollback, then another home charged it)
    is adopted with the spend it forgot: what the record had spent beyond the lines it
    agrees with (all of it for a record without line hashes) is charged on that line.
    A file that extends its record here is left as it is.

    Raises:
        ConfigError: Not an existing dataset ledger, a damaged file, or a home where
            the record cannot be written.
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(
            f"the ledger {str(path)!r} does not exist or is not a regular file: give the "
            "path of the dataset's ledger (a new ledger needs no adoption)"
        )
    ledger_head.check_writable()
    ledger = _Adopting(total_epsilon=1e300, total_delta=0.999, path=path)
    with ledger._locked() as fh:
        if ledger.header is None:
            raise ConfigError(
                f"{str(path)!r} is not a dataset ledger (it has no dataset header): nothing "
                "to adopt"
            )
        head, unreadable = ledger_head.inspect(ledger.header["dataset_sha256"], path)
        holds, home = ledger._holds(), ledger_head.home()
        recorded = None if head is None else (head["lines"], float(head["spent_epsilon"]))
        if head is not None and _extends(ledger._hashes, head):
            return Adoption(path=path, home=home, holds=holds, adopted=False, recorded=recorded)
        agreed = _agreed(ledger._hashes, head)
        eps, delta = _forgotten(ledger.charges, head, agreed)
        what = f"adopted with 'synthflow ledger adopt' under SYNTHFLOW_HOME {home}: {holds}"
        if head is not None:
            what += (
                f"; charges the epsilon {eps:.6g} (delta {delta:.3g}) it forgot: the record "
                f"there had {head['lines']} line(s), epsilon {head['spent_epsilon']:.6g} "
                f"spent, and agreed with its first {agreed} line(s)"
            )
        if unreadable:
            what += f"; the record there could not be read ({unreadable}) and is replaced"
        entry = Charge(what=what, epsilon=eps, delta=delta, mechanism="adopt", ref="adopt")
        ledger._write_charge(fh, entry)
        ledger._record_head(strict=True)
        header = ledger.header
    return Adoption(
        path=path,
        home=home,
        holds=holds,
        adopted=True,
        line=len(ledger._hashes),
        recorded=recorded,
        agreed_lines=agreed,
        carried_epsilon=eps,
        carried_delta=delta,
        unreadable=unreadable,
        over_total=ledger._eps > Fraction(header["total_epsilon"]) + _SLACK
        or ledger._delta > Fraction(header.get("total_delta", 0.0)) + _SLACK,
    )


def _extends(hashes: list[str], head: dict[str, Any]) -> bool:
    lines = head["lines"]
    return len(hashes) >= lines and (lines == 0 or hashes[lines - 1] == head["head"])


def _agreed(hashes: list[str], head: dict[str, Any] | None) -> int:
    """How many first lines of the file the record holds (0 without its line hashes)."""
    recorded = (head or {}).get("hashes") or []
    agreed = 0
    for mine, theirs in zip(hashes, recorded, strict=False):
        if mine != theirs:
            break
        agreed += 1
    return agreed


def _forgotten(
    charges: tuple[Charge, ...], head: dict[str, Any] | None, agreed: int
) -> tuple[float, float]:
    """What the record spent beyond the file's first ``agreed`` lines (line 1: the header)."""
    if head is None:
        return 0.0, 0.0
    shared = charges[: max(agreed - 1, 0)]
    eps = Fraction(head["spent_epsilon"]) - sum((Fraction(c.epsilon) for c in shared), Fraction(0))
    delta = Fraction(head.get("spent_delta", 0.0)) - sum(
        (Fraction(c.delta) for c in shared), Fraction(0)
    )
    return float(max(eps, Fraction(0))), float(max(delta, Fraction(0)))


def command_ledger(
    *,
    data: pd.DataFrame | None,
    public: bool,
    ledger_path: str | Path | None,
    total_epsilon: float,
    total_delta: float = 0.0,
    fallback: str | Path | None = None,
) -> Ledger:
    """The ledger a command charges for DP computations on the cleaned ``data``.

    ``--ledger`` names the dataset's persistent ledger (:func:`dataset_ledger`); data
    not declared public require it, so that every command on a private dataset draws on
    one budget. Public data without ``--ledger`` get a ledger at ``fallback`` (or in
    memory), as experiments on public data spend nothing real.

    Raises:
        ConfigError: Private data without ``--ledger``, or a ledger of other data.
    """
    if ledger_path is not None:
        if data is None:
            raise ValueError("a dataset ledger needs the cleaned data (its fingerprint)")
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

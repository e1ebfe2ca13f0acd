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

>>> ledger = Ledger(total_epsilon=1.0)
>>> ledger.charge("a count", epsilon=0.25, mechanism="laplace", sensitivity=1.0)
>>> ledger.spent_epsilon
0.25
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from synthflow.errors import BudgetExceededError

__all__ = ["Charge", "Ledger"]

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
        if self.path is not None and self.path.exists():
            for c in _read_charges(self.path):
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
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(asdict(entry)) + "\n")
                fh.flush()
        self._append(entry)

    def summary(self) -> dict[str, Any]:
        """JSON-ready totals and the list of charges."""
        return {
            "total_epsilon": self.total_epsilon,
            "total_delta": self.total_delta,
            "spent_epsilon": self.spent_epsilon,
            "spent_delta": self.spent_delta,
            "charges": [asdict(c) for c in self._charges],
        }


def _read_charges(path: Path) -> Iterator[Charge]:
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield Charge(**json.loads(line))
        except (json.JSONDecodeError, TypeError) as exc:
            raise ValueError(
                f"{path}:{lineno} is not a synthflow ledger line ({exc}); "
                "point the run at a fresh output directory"
            ) from exc

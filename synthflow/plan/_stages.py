"""Progress of ``synthflow plan``'s stages: plain lines, each 10% of a stage, with an ETA.

The planner's stages (the Laplace tables, the regression fits, the search over modes)
take from seconds to many minutes. Each reports, through the planner's ``progress``
callback (one ``plan: ...`` line on stderr per call), its start, every tenth of its
work with the time it has run and an estimate of the time left, and its end. Plain
lines read the same in a terminal, a notebook and a log file (no carriage returns).
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Stage"]


def _clock(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


class Stage:
    """One stage of ``total`` steps; :meth:`step` after each, :meth:`done` at the end."""

    def __init__(
        self,
        progress: Callable[[str], None],
        label: str,
        total: int,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.progress, self.label, self.total, self.clock = progress, label, max(total, 0), clock
        self.count, self.tenths, self.start = 0, 0, clock()
        progress(f"{label}: started ({total} steps)")

    def step(self, n: int = 1) -> None:
        """Count ``n`` steps; report each tenth reached, with the time left at this pace."""
        self.count += n
        if self.total == 0:
            return
        tenths = min(10, self.count * 10 // self.total)
        if tenths <= self.tenths or tenths == 10:  # the end is done()'s line
            return
        self.tenths = tenths
        spent = self.clock() - self.start
        left = spent * (self.total - self.count) / self.count
        self.progress(
            f"{self.label}: {10 * tenths}% ({self.count}/{self.total}), {_clock(spent)} so "
            f"far, about {_clock(left)} left"
        )

    def done(self) -> None:
        """The stage's last line, with its time."""
        self.progress(f"{self.label}: done in {_clock(self.clock() - self.start)}")

"""Rounding rules: the 10-5 rule, threshold suppression and rounding to a base.

These are the classic post-tabular rules (not differentially private). A suppressed
cell is NaN (an empty count in the CSV). Every count below the threshold is
suppressed, zeros included (publishing zeros next to suppressed cells would tell that
the suppressed ones are not empty); declared structural zeros are public and stay 0.
Rounding goes to the nearest multiple of the base, halves upwards.

>>> ten_five(np.array([0, 3, 9, 10, 12, 13, 27])).tolist()
[nan, nan, nan, 10.0, 10.0, 15.0, 25.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from synthflow.tables.tabulate import CountTable, ReleasedTable

__all__ = ["RoundingOptions", "apply_rounding", "round_to_base", "suppress", "ten_five"]

Rule = Literal["ten-five", "suppress", "round"]
RULES: tuple[Rule, ...] = ("ten-five", "suppress", "round")


def _check(threshold: int, base: int) -> None:
    if not (isinstance(threshold, (int, np.integer)) and threshold >= 0):
        raise ValueError(f"threshold ({threshold!r}) must be an integer >= 0")
    if not (isinstance(base, (int, np.integer)) and base >= 1):
        raise ValueError(f"base ({base!r}) must be an integer >= 1")


def round_to_base(
    values: np.ndarray, *, base: int = 5, structural: np.ndarray | None = None
) -> np.ndarray:
    """Round every count to the nearest multiple of ``base`` (halves up)."""
    _check(0, base)
    v = np.asarray(values, dtype=np.float64)
    out = base * np.floor(v / base + 0.5)
    if structural is not None:
        out[structural] = 0.0
    return out


def suppress(
    values: np.ndarray, *, threshold: int = 10, structural: np.ndarray | None = None
) -> np.ndarray:
    """Suppress (NaN) every count below ``threshold``; others are kept as they are."""
    _check(threshold, 1)
    v = np.asarray(values, dtype=np.float64).copy()
    hide = v < threshold
    if structural is not None:
        hide &= ~structural
        v[structural] = 0.0
    v[hide] = np.nan
    return v


def ten_five(
    values: np.ndarray,
    *,
    threshold: int = 10,
    base: int = 5,
    structural: np.ndarray | None = None,
) -> np.ndarray:
    """The 10-5 rule: suppress counts below ``threshold``, round the rest to ``base``."""
    _check(threshold, base)
    v = np.asarray(values, dtype=np.float64)
    hide = v < threshold
    out = round_to_base(v, base=base)
    if structural is not None:
        hide &= ~structural
        out[structural] = 0.0
    out[hide] = np.nan
    return out


@dataclass(frozen=True, kw_only=True)
class RoundingOptions:
    """Which rule, with its threshold and base."""

    rule: Rule
    """``ten-five``, ``suppress`` or ``round``."""
    threshold: int = 10
    """Counts below this are suppressed (``ten-five``, ``suppress``)."""
    base: int = 5
    """Rounding base (``ten-five``, ``round``)."""

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"rule ({self.rule!r}) must be one of {RULES}")
        _check(self.threshold, self.base)

    @property
    def label(self) -> str:
        """Display name, e.g. ``ten-five`` or ``round 3``."""
        if self.rule == "ten-five":
            default = self.threshold == 10 and self.base == 5
            return "ten-five" if default else f"ten-five {self.threshold}/{self.base}"
        if self.rule == "suppress":
            return f"suppress <{self.threshold}"
        return f"round {self.base}"


def apply_rounding(
    groups: Sequence[Sequence[CountTable]], options: RoundingOptions
) -> list[ReleasedTable]:
    """Apply one rounding rule to every level of every table."""
    out = []
    for lv in (lv for g in groups for lv in g):
        s = lv.spec.structural
        if options.rule == "ten-five":
            values = ten_five(
                lv.counts, threshold=options.threshold, base=options.base, structural=s
            )
        elif options.rule == "suppress":
            values = suppress(lv.counts, threshold=options.threshold, structural=s)
        else:
            values = round_to_base(lv.counts, base=options.base, structural=s)
        out.append(
            ReleasedTable(spec=lv.spec, values=values, method=options.rule, label=options.label)
        )
    return out

"""Bins of a column's transformation, parsed from the compact strings of the spec.

A bin is written the way the SPEC writes it: ``"7"`` (one value), ``"18-19"`` (closed
range), ``"<18"`` (everything below 18) or ``">44"`` (everything above 44); a category
name for a categorical column; or a shorthand mapping ``{from: 1500, to: 4499, width:
100}`` that expands to ``"1500-1599", ..., "4400-4499"``.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from typing import Any

from synthflow.errors import ConfigError

__all__ = ["Bin", "expand_bins", "parse_bin"]

_RANGE = re.compile(r"^(-?\d+)\s*-\s*(-?\d+)$")
_BELOW = re.compile(r"^<\s*(-?\d+)$")
_ABOVE = re.compile(r"^>\s*(-?\d+)$")
_SINGLE = re.compile(r"^-?\d+$")


@dataclass(frozen=True, kw_only=True)
class Bin:
    """One bin of an integer column (inclusive bounds), or one category."""

    label: str
    """Label used in candidate files and reports."""
    lo: float
    """Smallest raw value in the bin (``-inf`` for an open lower bin)."""
    hi: float
    """Largest raw value in the bin (``inf`` for an open upper bin)."""

    @property
    def open_below(self) -> bool:
        """``<a`` bin."""
        return math.isinf(self.lo)

    @property
    def open_above(self) -> bool:
        """``>b`` bin."""
        return math.isinf(self.hi)

    def number(self) -> float:
        """Bins-to-numbers rule (SPEC sec. 5).

        Single value -> the value; bounded ``a-b`` -> ``(a + b) / 2``; open bin -> its
        edge (``<a`` -> ``a``, ``>b`` -> ``b``).

        >>> parse_bin("18-19").number(), parse_bin("<18").number(), parse_bin(">44").number()
        (18.5, 18.0, 44.0)
        """
        if self.open_below:
            return self.hi + 1
        if self.open_above:
            return self.lo - 1
        return (self.lo + self.hi) / 2


def parse_bin(text: str, *, where: str = "bin") -> Bin:
    """Parse one integer bin label such as ``"<18"``, ``"18-19"``, ``"7"`` or ``">44"``."""
    s = str(text).strip()
    if m := _BELOW.match(s):
        return Bin(label=f"<{m[1]}", lo=-math.inf, hi=int(m[1]) - 1)
    if m := _ABOVE.match(s):
        return Bin(label=f">{m[1]}", lo=int(m[1]) + 1, hi=math.inf)
    if m := _RANGE.match(s):
        lo, hi = int(m[1]), int(m[2])
        if lo > hi:
            raise ConfigError(f"{where}: bin {s!r} has its lower end above its upper end")
        return Bin(label=s if lo < hi else str(lo), lo=lo, hi=hi)
    if _SINGLE.match(s):
        return Bin(label=s, lo=int(s), hi=int(s))
    raise ConfigError(
        f"{where}: cannot read bin {s!r}; write '7', '18-19', '<18' or '>44', "
        "or {from: A, to: B, width: W}"
    )


MAX_BINS = 10_000
"""Bins of one transformation (a column's public domain size after binning)."""


def expand_bins(items: list[Any], *, where: str) -> list[Bin]:
    """Expand the YAML list of a transformation into sorted, contiguous bins.

    Raises:
        ConfigError: If bins overlap, leave gaps, or an entry cannot be read.
    """
    if not isinstance(items, list) or not items:
        raise ConfigError(f"{where}: bins must be a non-empty list, got {type(items).__name__}")
    if len(items) > MAX_BINS:
        raise ConfigError(
            f"{where}: {len(items):,} bins; a transformation has at most {MAX_BINS:,}"
        )
    bins: list[Bin] = []
    for item in items:
        if isinstance(item, dict):
            unknown = set(item) - {"from", "to", "width"}
            if unknown or not {"from", "to"} <= set(item):
                raise ConfigError(
                    f"{where}: range shorthand {item!r} needs keys from, to and optional width"
                )
            try:
                lo, hi, width = int(item["from"]), int(item["to"]), int(item.get("width", 1))
            except (TypeError, ValueError, OverflowError):
                raise ConfigError(
                    f"{where}: range shorthand needs whole numbers for from, to and width"
                ) from None
            if width < 1 or (hi - lo + 1) % width:
                raise ConfigError(
                    f"{where}: range {item!r} must split into whole bins of width {width}"
                )
            if (hi - lo + 1) // width + len(bins) > MAX_BINS:
                raise ConfigError(
                    f"{where}: range {item!r} makes {(hi - lo + 1) // width:,} bins; a "
                    f"transformation has at most {MAX_BINS:,} (use a wider width)"
                )
            for a in range(lo, hi + 1, width):
                b = a + width - 1
                bins.append(Bin(label=str(a) if a == b else f"{a}-{b}", lo=a, hi=b))
        else:
            bins.append(parse_bin(item, where=where))
    for prev, cur in itertools.pairwise(bins):
        if prev.open_above or cur.open_below or cur.lo != prev.hi + 1:
            raise ConfigError(
                f"{where}: bins {prev.label!r} and {cur.label!r} are not contiguous and "
                "ascending; list bins from lowest to highest without gaps or overlaps"
            )
    return bins

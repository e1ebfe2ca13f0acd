"""Groups of an integer variable, written as labels: ``"<18"``, ``"18-19"``, ``"7"``, ``">44"``.

The calibration tables condition on groups of values rather than on single values where
rows are few; the groups are chosen from 1-way counts (:func:`pooled_groups`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from synthflow.errors import ConfigError

__all__ = ["group_bounds", "group_index", "pooled_groups"]

_GROUP = re.compile(r"^(?:<(-?\d+)|>(-?\d+)|(-?\d+)-(-?\d+)|(-?\d+))$")


def group_bounds(label: str) -> tuple[float, float]:
    """Inclusive bounds of a group label.

    >>> group_bounds("<18"), group_bounds("18-19"), group_bounds("7"), group_bounds(">44")
    ((-inf, 17), (18, 19), (7, 7), (45, inf))
    """
    m = _GROUP.match(str(label).strip())
    if not m:
        raise ConfigError(f"group label {label!r} must look like '<18', '18-19', '7' or '>44'")
    below, above, lo, hi, single = m.groups()
    if below is not None:
        return -math.inf, int(below) - 1
    if above is not None:
        return int(above) + 1, math.inf
    if single is not None:
        return int(single), int(single)
    return int(lo), int(hi)


def group_index(values: np.ndarray, groups: Sequence[str], *, variable: str) -> np.ndarray:
    """Index into ``groups`` of each value; ConfigError if a value is in no group."""
    out = np.full(len(values), -1, dtype=np.int64)
    for i, label in enumerate(groups):
        lo, hi = group_bounds(label)
        out[(values >= lo) & (values <= hi)] = i
    if (out < 0).any():
        raise ConfigError(
            f"{variable}: value {int(values[out < 0][0])} is in none of the groups {list(groups)}"
        )
    return out


def pooled_groups(column: pd.Series, min_rows: int) -> tuple[str, ...]:
    """Group labels pooling adjacent values of ``column`` until each has ``min_rows`` rows.

    Values are pooled from the smallest up; a short last group joins the one before. The
    first group is open below and the last open above.

    >>> pooled_groups(pd.Series([1, 1, 2, 3, 3, 3, 4, 5]), 2)
    ('<2', '2-3', '>3')
    """
    counts = column.value_counts().sort_index()
    spans: list[list[int]] = []  # [first value, last value, rows]
    current: list[int] | None = None
    for value, rows in zip(
        counts.index.to_numpy(dtype=int), counts.to_numpy(dtype=int), strict=True
    ):
        if current is None:
            current = [int(value), int(value), 0]
        current[1], current[2] = int(value), current[2] + int(rows)
        if current[2] >= min_rows:
            spans.append(current)
            current = None
    if current is not None:
        if spans:
            spans[-1][1], spans[-1][2] = current[1], spans[-1][2] + current[2]
        else:
            spans.append(current)
    labels = []
    for i, (lo, hi, _) in enumerate(spans):
        if len(spans) == 1:
            labels.append(f">{lo - 1}")
        elif i == 0:
            labels.append(f"<{hi + 1}")
        elif i == len(spans) - 1:
            labels.append(f">{lo - 1}")
        else:
            labels.append(str(lo) if lo == hi else f"{lo}-{hi}")
    return tuple(labels)

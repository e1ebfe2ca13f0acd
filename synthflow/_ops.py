"""The comparison operators specs may use (constraints, exclusion rules, tables)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

__all__ = ["COMPARATORS"]

COMPARATORS: dict[str, Callable[[Any, Any], Any]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
"""Operator symbol -> function; works on scalars and numpy arrays alike."""

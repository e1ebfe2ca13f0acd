"""Checks shared by the generators' hyperparameter classes (each names the value and the rule)."""

from __future__ import annotations

import numbers

__all__ = ["_check_delta", "_positive", "_positive_int", "_share"]


def _positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} ({value!r}) must be an integer >= 1")


def _positive(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{name} ({value!r}) must be a number > 0")


def _check_delta(delta: object) -> None:
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise ValueError(f"delta ({delta!r}) must be a number in (0, 1)")


def _share(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"{name} ({value!r}) must be a number in [0, 1]")
    return float(value)

"""Plausibility constraints on raw values and on bins (SPEC sec. 4).

A :class:`~synthflow.config.Constraint` describes rows to *drop*. On raw data a clause
``x < a`` compares the value. On binned data a clause holds only when it holds for the
whole bin ("x < a" when the bin's largest value is below a), so a binned row is dropped
only when the rule certainly applies to every raw row it could stand for.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from synthflow._ops import COMPARATORS
from synthflow.config.model import Clause, Constraint
from synthflow.transform import Transformer

__all__ = ["binned_violations", "raw_violations"]


def _combine(masks: list[np.ndarray], mode: str) -> np.ndarray:
    out = masks[0].copy()
    for m in masks[1:]:
        out = out & m if mode == "all" else out | m
    return out


def raw_violations(frame: pd.DataFrame, rule: Constraint) -> np.ndarray:
    """Boolean mask of rows of raw data that ``rule`` drops."""
    masks = [
        np.asarray(COMPARATORS[c.op](frame[c.column].to_numpy(dtype=float), c.value))
        for c in rule.clauses
    ]
    return _combine(masks, rule.mode)


def _bin_holds(lo: np.ndarray, hi: np.ndarray, clause: Clause) -> np.ndarray:
    """Whether the clause holds for every value of each bin [lo, hi]."""
    a = clause.value
    if clause.op == "<":
        return hi < a
    if clause.op == "<=":
        return hi <= a
    if clause.op == ">":
        return lo > a
    if clause.op == ">=":
        return lo >= a
    if clause.op == "==":
        return (lo == a) & (hi == a)
    return (hi < a) | (lo > a)  # "!=": a is outside the bin


def binned_violations(
    codes: pd.DataFrame, rules: Sequence[Constraint], transformer: Transformer
) -> np.ndarray:
    """Boolean mask of binned rows that any of ``rules`` drops."""
    drop = np.zeros(len(codes), dtype=bool)
    for rule in rules:
        masks = []
        for clause in rule.clauses:
            t = transformer.transformations[clause.column]
            holds = _bin_holds(
                np.array([b.lo for b in t.bins]), np.array([b.hi for b in t.bins]), clause
            )
            masks.append(holds[codes[clause.column].to_numpy()])
        drop |= _combine(masks, rule.mode)
    return drop

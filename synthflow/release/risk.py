"""Disclosure-risk measures on released microdata, as statistical offices compute them.

The released synthetic file is public, so these spend no budget and may be computed by
anyone (the datasheet and ``synthflow audit`` show them). They follow sdcMicro's
vocabulary for *key variables* (quasi-identifiers an intruder may know):

* **sample uniques**: records whose combination of key variables occurs once;
* **k-anonymity level**: the size of the smallest group of records sharing one
  combination of key variables (the min-count projection guarantees at least
  ``min_count`` on all columns, hence on any subset of them);
* **l-diversity** of a sensitive column: the fewest distinct sensitive values within
  one such group (1: some group reveals its sensitive value to anyone who knows the
  keys);
* **SUDA-style special uniques**: minimal sample uniques (MSUs; Elliot et al.'s SUDA)
  are subsets of key variables on which a record is unique while no smaller subset is;
  the count of records with at least one MSU of at most ``max_msu_size`` variables.

No Python package kept up to date computes these (sdcMicro is R; pycanon covers
k-anonymity and l-diversity but not MSUs), so they are small functions here, tested
against hand-computed values.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["RiskMeasures", "risk_measures"]


@dataclass(frozen=True)
class RiskMeasures:
    """Disclosure-risk measures of one released table."""

    key_variables: tuple[str, ...]
    rows: int
    sample_uniques: int
    """Records unique on the key variables."""
    k_anonymity: int
    """Smallest number of records sharing one combination of key variables."""
    sensitive: str | None
    l_diversity: int | None
    """Fewest distinct values of ``sensitive`` in one key-variable group (None: no column)."""
    max_msu_size: int
    records_with_msu: int
    """Records with at least one minimal sample unique of at most ``max_msu_size`` keys."""
    msu_count: int
    """Minimal sample uniques found (over all records)."""

    def to_json(self) -> dict[str, object]:
        """The measures as a JSON-ready dict."""
        return {
            "key_variables": list(self.key_variables),
            "rows": self.rows,
            "sample_uniques": self.sample_uniques,
            "k_anonymity": self.k_anonymity,
            "sensitive": self.sensitive,
            "l_diversity": self.l_diversity,
            "max_msu_size": self.max_msu_size,
            "records_with_msu": self.records_with_msu,
            "msu_count": self.msu_count,
        }


def _group_sizes(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """For each row, how many rows share its values on ``columns``."""
    if not columns:
        return np.full(len(frame), len(frame), dtype=np.int64)
    return frame.groupby(columns, sort=False, dropna=False)[columns[0]].transform("size").to_numpy()


def risk_measures(
    frame: pd.DataFrame,
    key_variables: tuple[str, ...],
    *,
    sensitive: str | None = None,
    max_msu_size: int = 3,
) -> RiskMeasures:
    """The measures of ``frame`` (released values: bin labels or codes) on the keys.

    Raises:
        ValueError: If a key variable or the sensitive column is not in ``frame``, or
            there are no key variables.
    """
    missing = sorted(set(key_variables) - set(frame.columns))
    if sensitive is not None and sensitive not in frame.columns:
        missing.append(sensitive)
    if missing:
        raise ValueError(f"columns {missing} are not in the released table")
    if not key_variables:
        raise ValueError("risk measures need at least one key variable")
    keys = list(key_variables)
    data = frame[keys + ([sensitive] if sensitive else [])].astype(str)
    sizes = _group_sizes(data, keys)
    l_div = None
    if sensitive is not None:
        l_div = int(data.groupby(keys, sort=False)[sensitive].nunique().min())
    # Minimal sample uniques: subsets S (|S| <= m) on which a record is unique and no
    # proper subset of S is. A subset's uniques are found by one group-by.
    unique_on: dict[tuple[str, ...], np.ndarray] = {}
    has_msu = np.zeros(len(data), dtype=bool)
    msus = 0
    for size in range(1, min(max_msu_size, len(keys)) + 1):
        for subset in itertools.combinations(keys, size):
            unique = _group_sizes(data, list(subset)) == 1
            unique_on[subset] = unique
            minimal = unique.copy()
            for smaller in itertools.combinations(subset, size - 1):
                if smaller:
                    minimal &= ~unique_on[smaller]
            msus += int(minimal.sum())
            has_msu |= minimal
    return RiskMeasures(
        key_variables=tuple(keys),
        rows=len(data),
        sample_uniques=int((sizes == 1).sum()),
        k_anonymity=int(sizes.min()) if len(sizes) else 0,
        sensitive=sensitive,
        l_diversity=l_div,
        max_msu_size=max_msu_size,
        records_with_msu=int(has_msu.sum()),
        msu_count=msus,
    )

"""Cell key perturbation (ONS Census 2021 and its Laplace-shaped successor).

Every record carries a record key, uniform on ``0..K-1`` (K = 256 for Census 2021,
4,096 now), drawn at random or taken as an ID number modulo K. A cell's key is the sum
of its records' keys modulo K, and its perturbation is read from a p-table at (cell
value, cell key). The same records always form the same cell value and key, so the same
cell gets the same noise in every table that contains it.

The p-table is generated from a few parameters (:mod:`synthflow.tables.ptable`).

Zero cells are optional: a share ``zero_rate`` of them is perturbed upwards, chosen by a
*category* cell key (the sum modulo K of a random key per category of each dimension),
and declared structural zeros are never perturbed.

References:
    Office for National Statistics, "Comparison of post-tabular statistical disclosure
    control methods", 2024; "Statistical disclosure control update and differential
    privacy suitability assessment", 2024.
    Fraser & Wooton, "A proposed method for confidentialising tabular output to
    protect against differencing", UNECE work session on SDC, 2005.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from synthflow.config.model import ReleaseSpec
from synthflow.errors import DataError
from synthflow.privacy.rng import PrivacyRNG
from synthflow.tables.ptable import PTable
from synthflow.tables.tabulate import CountTable, ReleasedTable

__all__ = [
    "cell_key_perturbation",
    "draw_category_keys",
    "draw_record_keys",
    "record_keys_from_ids",
]


def draw_record_keys(n: int, keys: int, rng: PrivacyRNG) -> np.ndarray:
    """Uniform record keys in ``0..keys-1`` (CSPRNG in release mode)."""
    return rng.generator().integers(0, keys, size=n, dtype=np.int64)


def record_keys_from_ids(ids: pd.Series | np.ndarray, keys: int) -> np.ndarray:
    """Record keys from an integer ID column: ``id mod keys`` (ONS 2024).

    Raises:
        DataError: If the IDs are missing or not whole numbers.
    """
    s = pd.Series(ids)
    num = pd.to_numeric(s, errors="coerce")
    arr = num.to_numpy(dtype=np.float64)
    if num.isna().any() or not np.all(arr == np.round(arr)):
        raise DataError("the record key column must hold whole numbers without gaps")
    return np.mod(num.to_numpy().astype(np.int64), keys)


def draw_category_keys(spec: ReleaseSpec, keys: int, rng: PrivacyRNG) -> dict[str, dict[str, int]]:
    """A random key per bin label of every column (all transformations), for zero cells.

    A label shared by two transformations (e.g. ``25-29``) gets one key, so the same
    zero cell gets the same category cell key in every table.
    """
    gen = rng.generator()
    out: dict[str, dict[str, int]] = {}
    for col in spec.columns:
        labels: list[str] = []
        for t in col.transformations:
            labels += [lab for lab in t.labels if lab not in labels]
        out[col.name] = dict(
            zip(labels, gen.integers(0, keys, size=len(labels)).tolist(), strict=True)
        )
    return out


def _category_cell_keys(
    lv: CountTable, category_keys: Mapping[str, Mapping[str, int]], keys: int
) -> np.ndarray:
    total = np.zeros(lv.spec.shape, dtype=np.int64)
    for axis, (col, labels) in enumerate(zip(lv.spec.columns, lv.spec.labels, strict=True)):
        per = np.array([category_keys[col][lab] for lab in labels], dtype=np.int64)
        shape = [1] * len(lv.spec.shape)
        shape[axis] = len(labels)
        total = total + per.reshape(shape)
    return np.mod(total, keys)


def cell_key_perturbation(
    groups: Sequence[Sequence[CountTable]],
    ptable: PTable,
    *,
    category_keys: Mapping[str, Mapping[str, int]] | None = None,
    threshold: int = 0,
) -> list[ReleasedTable]:
    """Perturb every level of every table with ``ptable``.

    Args:
        groups: True counts with record-key sums (see :func:`tabulate`).
        ptable: The p-table; its key range must match the record keys'.
        category_keys: Keys per category label (:func:`draw_category_keys`); needed
            when the p-table perturbs zeros.
        threshold: Suppress perturbed counts below this (0: publish all).

    Raises:
        ValueError: If the tables carry no record-key sums, or zeros are to be
            perturbed without category keys.
    """
    zero_rows = ptable.params.zero_rate > 0
    if zero_rows and category_keys is None:
        raise ValueError("the p-table perturbs zeros: pass category_keys")
    out = []
    for lv in (lv for g in groups for lv in g):
        if lv.key_sums is None:
            raise ValueError(f"table {lv.spec.name!r} has no record-key sums; tabulate with keys")
        ckeys = np.mod(lv.key_sums, ptable.keys)
        if zero_rows:
            assert category_keys is not None
            zero = lv.counts == 0
            ckeys = np.where(zero, _category_cell_keys(lv, category_keys, ptable.keys), ckeys)
        values = (lv.counts + ptable.perturbation(lv.counts, ckeys)).astype(np.float64)
        values[lv.spec.structural] = 0.0
        if threshold > 0:
            values[(values < threshold) & ~lv.spec.structural] = np.nan
        label = f"cell-key {ptable.keys}" + (f" t{threshold}" if threshold else "")
        out.append(ReleasedTable(spec=lv.spec, values=values, method="cell-key", label=label))
    return out

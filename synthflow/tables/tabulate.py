"""Microdata to frequency tables over the spec's public bins, and tables to CSV.

:class:`Microdata` holds the rows to count: either cleaned raw release columns (binned
with :class:`~synthflow.transform.Transformer`) or bin labels as written in a synthetic
release (each label is placed in the table's bin that contains it, so a release made
with finer bins, e.g. ``mother_age`` alternative ``b``, can be tabulated with coarser
ones such as ``a``). :func:`tabulate` counts the rows of every cell, zero cells
included, and sums the record keys of each cell for cell key perturbation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from synthflow._bins import parse_bin
from synthflow.config.model import ReleaseSpec
from synthflow.errors import ConfigError, DataError
from synthflow.tables._spec import LevelSpec, TableSpec
from synthflow.transform import Transformer

__all__ = ["CountTable", "Microdata", "ReleasedTable", "tabulate", "tabulate_all"]


class Microdata:
    """Rows to tabulate, binned lazily per (column, transformation letter).

    Args:
        frame: Cleaned raw release columns (as :func:`synthflow.data.load_data` returns
            them) or, with ``labelled=True``, bin labels (a synthetic release).
        spec: The release spec (public bins).
        labelled: Whether ``frame`` holds bin labels instead of raw values.
    """

    def __init__(self, frame: pd.DataFrame, spec: ReleaseSpec, *, labelled: bool = False) -> None:
        self.frame = frame
        self.spec = spec
        self.labelled = labelled
        self._codes: dict[tuple[str, str], np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.frame)

    def codes(self, column: str, letter: str) -> np.ndarray:
        """Bin codes of ``column`` under transformation ``letter``.

        Raises:
            DataError: If the column is missing or a value/label fits no bin.
        """
        key = (column, letter)
        if key not in self._codes:
            if column not in self.frame.columns:
                raise DataError(
                    f"data lack column {column!r} needed by a table; columns present: "
                    f"{list(map(str, self.frame.columns))}"
                )
            if self.labelled:
                self._codes[key] = self._codes_from_labels(column, letter)
            else:
                sub = dataclasses.replace(self.spec, columns=(self.spec.column(column),))
                transformer = Transformer(sub, {column: letter})
                codes = transformer.forward(self.frame[[column]])
                self._codes[key] = codes[column].to_numpy(dtype=np.int64)
        return self._codes[key]

    def _codes_from_labels(self, column: str, letter: str) -> np.ndarray:
        col = self.spec.column(column)
        t = col.transformation(letter)
        values = self.frame[column].astype(str).str.strip()
        cat = pd.Categorical(values)
        uniques = [str(u) for u in cat.categories]
        if col.kind == "categorical":
            target = {lab: i for i, lab in enumerate(t.labels)}
            mapping = [target.get(u, -1) for u in uniques]
        else:
            mapping = []
            for u in uniques:
                try:
                    b = parse_bin(u)
                except ConfigError:
                    mapping.append(-1)
                    continue
                inside = [i for i, tb in enumerate(t.bins) if tb.lo <= b.lo and b.hi <= tb.hi]
                mapping.append(inside[0] if inside else -2)
        lookup = np.asarray(mapping, dtype=np.int64)
        if (lookup == -2).any():
            raise DataError(
                f"release column {column!r} holds bins that straddle the bins of transformation "
                f"{letter!r} ({list(t.labels)}); tabulate it with the release's own "
                "transformation or a coarser one"
            )
        if (lookup == -1).any():
            raise DataError(
                f"release column {column!r} holds labels that are not bins of the spec; check "
                "that --spec matches the release"
            )
        return lookup[cat.codes]


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class CountTable:
    """True counts of one table level (private)."""

    spec: LevelSpec
    counts: np.ndarray
    """int64 counts, one per cell, shaped like ``spec.shape``."""
    key_sums: np.ndarray | None = None
    """Sum of the record keys in each cell (int64), if record keys were given."""

    @property
    def total(self) -> int:
        """Number of records in the table."""
        return int(self.counts.sum())


@dataclasses.dataclass(frozen=True, kw_only=True, eq=False)
class ReleasedTable:
    """A protected table: what a statistical office would publish."""

    spec: LevelSpec
    values: np.ndarray
    """float64 published counts shaped like ``spec.shape``; NaN marks a suppressed cell."""
    method: str
    """Method that produced it (``cell-key``, ``laplace``, ``dp-synthetic`` ...)."""
    epsilon: float | None = None
    """Total epsilon of the run that produced it (None for non-DP methods)."""
    label: str = ""
    """Display name in reports (defaults to the method)."""

    def __post_init__(self) -> None:
        if self.values.shape != self.spec.shape:
            raise ValueError(
                f"values of {self.spec.name!r} have shape {self.values.shape}, "
                f"expected {self.spec.shape}"
            )

    @property
    def display(self) -> str:
        """Label used in reports."""
        if self.label:
            return self.label
        return self.method if self.epsilon is None else f"{self.method} ε={self.epsilon:g}"

    def to_frame(self) -> pd.DataFrame:
        """One row per cell: the table's columns (labels), then ``count`` (NA if suppressed)."""
        grids = np.meshgrid(*[np.arange(n) for n in self.spec.shape], indexing="ij")
        data: dict[str, object] = {
            c: np.asarray(self.spec.labels[i], dtype=object)[grids[i].ravel()]
            for i, c in enumerate(self.spec.columns)
        }
        flat = self.values.ravel()
        if np.all(np.isnan(flat) | (flat == np.round(flat))):
            data["count"] = pd.Series(flat).astype("Int64").array  # NaN -> <NA>
        else:
            data["count"] = flat
        return pd.DataFrame(data)

    def write_csv(self, path: str | Path) -> Path:
        """Write :meth:`to_frame` as CSV (a suppressed count is left empty)."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        self.to_frame().to_csv(p, index=False, na_rep="")
        return p


def tabulate(
    level: LevelSpec,
    data: Microdata,
    *,
    record_keys: np.ndarray | None = None,
    check_structural: bool = True,
) -> CountTable:
    """Count the rows of ``data`` in every cell of ``level``.

    Args:
        level: The table level (dimensions and public bins).
        data: Rows to count.
        record_keys: Optional integer key per row; their per-cell sums are kept for cell
            key perturbation.
        check_structural: Raise if a row falls in a declared structural zero.

    Raises:
        DataError: If a row falls in a structural zero (``check_structural``), or a
            column is missing or out of its bins.
    """
    codes = [data.codes(c, letter) for c, letter in zip(level.columns, level.letters, strict=True)]
    shape = level.shape
    flat = np.ravel_multi_index(tuple(codes), shape) if codes else np.zeros(len(data), np.int64)
    counts = np.bincount(flat, minlength=level.cells).reshape(shape).astype(np.int64)
    if check_structural and counts[level.structural].any():
        raise DataError(
            f"table {level.name!r}: some records fall in cells declared structural zeros; clean "
            "the data against the spec's constraints or fix the table's structural_zeros"
        )
    key_sums = None
    if record_keys is not None:
        keys = np.asarray(record_keys)
        if keys.shape != (len(data),):
            raise ValueError(f"record_keys has shape {keys.shape}, expected ({len(data)},)")
        # Each sum is an integer below 2**53, so float64 bincount is exact.
        sums = np.bincount(flat, weights=keys.astype(np.float64), minlength=level.cells)
        key_sums = np.rint(sums).astype(np.int64).reshape(shape)
    return CountTable(spec=level, counts=counts, key_sums=key_sums)


def tabulate_all(
    tables: Sequence[TableSpec],
    data: Microdata,
    *,
    record_keys: np.ndarray | None = None,
    check_structural: bool = True,
) -> list[tuple[CountTable, ...]]:
    """:func:`tabulate` every level of every table (levels coarsest first)."""
    return [
        tuple(
            tabulate(lv, data, record_keys=record_keys, check_structural=check_structural)
            for lv in t.levels
        )
        for t in tables
    ]

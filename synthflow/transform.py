"""Forward binning, labels and the bins-to-numbers rule.

Transformed data are integer codes (one column per release column, values
``0..size-1``) with a :class:`Domain` that holds the public domain sizes. The domain is
built from the spec only, never from the data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pa_csv

from synthflow.config.model import Column, ReleaseSpec, Transformation
from synthflow.errors import DataError

__all__ = ["Domain", "Transformer"]


@dataclass(frozen=True, kw_only=True)
class Domain:
    """Public domain of transformed data: column names and numbers of bins."""

    names: tuple[str, ...]
    sizes: tuple[int, ...]

    def size(self, name: str) -> int:
        """Number of bins of ``name``."""
        return self.sizes[self.names.index(name)]

    @property
    def cells(self) -> int:
        """Number of cells of the full contingency cube."""
        return math.prod(int(s) for s in self.sizes)  # exact: 10^20 cells must not wrap


class Transformer:
    """Bins raw columns according to a configuration's transformation letters.

    Args:
        spec: The release spec.
        letters: Column name -> transformation letter (e.g. ``{"mother_age": "b"}``);
            columns left out use ``a``.
    """

    def __init__(self, spec: ReleaseSpec, letters: Mapping[str, str]) -> None:
        unknown = set(letters) - set(spec.column_names)
        if unknown:
            raise DataError(f"transformations name unknown columns {sorted(unknown)}")
        self.spec = spec
        self.columns: tuple[Column, ...] = spec.columns
        self.transformations: dict[str, Transformation] = {
            c.name: c.transformation(letters.get(c.name, "a")) for c in spec.columns
        }
        self.domain = Domain(
            names=spec.column_names,
            sizes=tuple(self.transformations[c].size for c in spec.column_names),
        )

    def forward(self, raw: pd.DataFrame) -> pd.DataFrame:
        """Raw (cleaned) release columns -> integer codes."""
        out = {}
        for col in self.columns:
            t = self.transformations[col.name]
            values = raw[col.name]
            if col.kind == "categorical":
                codes = pd.Categorical(values.astype(str), categories=list(col.categories)).codes
                if (codes < 0).any():
                    raise DataError(
                        f"column {col.name!r} holds values outside its categories "
                        f"{list(col.categories)}; clean the data first (synthflow.data.load_data)"
                    )
            else:
                his = np.array([b.hi for b in t.bins], dtype=float)
                codes = np.searchsorted(his, values.to_numpy(dtype=float), side="left")
                if (codes >= len(his)).any():
                    raise DataError(
                        f"column {col.name!r} holds values above its last bin; clean the data first"
                    )
            out[col.name] = np.asarray(codes, dtype=np.int16)
        return pd.DataFrame(out, index=raw.index).reset_index(drop=True)

    def to_labels(self, codes: pd.DataFrame) -> pd.DataFrame:
        """Codes -> bin labels (the form written to candidate files)."""
        return pd.DataFrame(
            {
                name: np.asarray(self.transformations[name].labels, dtype=object)[
                    codes[name].to_numpy()
                ]
                for name in self.domain.names
            }
        )

    def to_values(self, codes: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
        """Codes -> values: a category stays itself; an int bin becomes a whole number.

        Each int code is replaced by an integer drawn uniformly, from ``rng``, among the
        values of its bin that lie in the column's public domain (an open bin ``<18``:
        from the domain's low end); a bin wholly outside the domain gives the domain's
        nearest end. Post-processing of the codes: nothing is charged.
        """
        out = {}
        for col in self.columns:
            t = self.transformations[col.name]
            idx = codes[col.name].to_numpy()
            if col.kind == "categorical":
                out[col.name] = np.asarray(t.labels, dtype=object)[idx]
                continue
            assert col.domain is not None  # the loader requires one of every int column
            d_lo, d_hi = math.ceil(col.domain[0]), math.floor(col.domain[1])
            lo = np.array([min(max(b.lo, d_lo), d_hi) for b in t.bins], dtype=float)
            hi = np.array([max(min(b.hi, d_hi), d_lo) for b in t.bins], dtype=float)
            lo, hi = np.ceil(lo).astype(np.int64), np.floor(hi).astype(np.int64)
            hi = np.maximum(hi, lo)
            out[col.name] = rng.integers(lo[idx], hi[idx], endpoint=True, dtype=np.int64)
        return pd.DataFrame(out)

    def write_labels_csv(self, codes: pd.DataFrame, path: str | Path) -> None:
        """Write codes as a CSV of bin labels (what :meth:`to_labels` gives, as text).

        Each column goes to pyarrow as a dictionary array (the codes index the labels),
        so no per-row label strings are built: at 4M rows this is about 7x faster than
        ``to_labels(codes).to_csv(path)``. pyarrow quotes every label; readers parse
        the values the same (``read_table(path)`` equals reading the unquoted form).
        """
        table = pa.table(
            {
                name: pa.DictionaryArray.from_arrays(
                    pa.array(codes[name].to_numpy(dtype=np.int32)),
                    pa.array([str(x) for x in self.transformations[name].labels]),
                )
                for name in self.domain.names
            }
        )
        pa_csv.write_csv(table, str(path))

    def from_labels(self, labels: pd.DataFrame) -> pd.DataFrame:
        """Bin labels (as read from a candidate file) -> codes.

        Raises:
            DataError: If a column is missing or holds a label that is not a bin of the
                configuration's transformation.
        """
        missing = [n for n in self.domain.names if n not in labels.columns]
        if missing:
            raise DataError(
                f"candidate file lacks columns {missing}; was it written by 'synthflow run'?"
            )
        out = {}
        for name in self.domain.names:
            t = self.transformations[name]
            codes = pd.Categorical(labels[name].astype(str), categories=list(t.labels)).codes
            if (codes < 0).any():
                raise DataError(
                    f"column {name!r} holds labels that are not bins of transformation {t.name!r} "
                    f"({list(t.labels)}); check that --config matches the candidate"
                )
            out[name] = codes.astype(np.int16)
        return pd.DataFrame(out)

    def numbers(self, codes: pd.DataFrame, name: str) -> np.ndarray:
        """Numerified values of column ``name`` (SPEC sec. 5 bins-to-numbers rule)."""
        return self.transformations[name].numbers()[codes[name].to_numpy()]

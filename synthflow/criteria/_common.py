"""Shared helpers of the acceptance criteria: code matrices and numerified columns."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from synthflow.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

    from synthflow.config.model import Column
    from synthflow.transform import Transformer

__all__ = ["code_matrix", "feature_bounds", "numbers"]


def code_matrix(codes: pd.DataFrame, transformer: Transformer, *, what: str) -> np.ndarray:
    """Codes of every release column as an ``(n, d)`` int64 matrix, checked against the domain.

    Raises:
        DataError: If a column is missing or a code lies outside the public domain.
    """
    names = transformer.domain.names
    missing = [c for c in names if c not in codes.columns]
    if missing:
        raise DataError(f"{what} lacks columns {missing}; pass transformed codes (Transformer)")
    mat = np.empty((len(codes), len(names)), dtype=np.int64)
    for j, (name, size) in enumerate(zip(names, transformer.domain.sizes, strict=True)):
        col = codes[name].to_numpy()
        if len(col) and (col.min() < 0 or col.max() >= size):
            raise DataError(
                f"{what}: column {name!r} holds codes outside 0..{size - 1}; "
                "check that the transformer matches the data"
            )
        mat[:, j] = col
    return mat


def feature_bounds(column: Column) -> tuple[float, float]:
    """Public bounds [L, U] of a numerified column.

    The spec's ``bounds`` if given, else the public ``domain`` of an int column, else
    ``[0, k - 1]`` for a categorical column with ``k`` categories (codes as numbers).
    """
    if column.bounds is not None:
        return column.bounds
    if column.domain is not None:
        return column.domain
    return (0.0, float(len(column.categories) - 1))


def numbers(codes: np.ndarray, transformer: Transformer, name: str) -> np.ndarray:
    """Numerified values of column ``name`` (bins-to-numbers rule), clipped to its bounds."""
    j = transformer.domain.names.index(name)
    lo, hi = feature_bounds(transformer.spec.column(name))
    table = np.clip(transformer.transformations[name].numbers(), lo, hi)
    return table[codes[:, j]]

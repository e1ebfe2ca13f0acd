"""``marginals``: the largest error over the spec's family of marginals (SPEC sec. 5).

The statistic: max absolute error over k-way marginals (SPEC sec. 5, #1).

The 2024 release covers all ``2^d - 1`` column subsets; a spec may restrict the family
to subsets of ``columns`` with at most ``max_order`` columns (wide tables: all subsets of
15 columns are 32,767 marginals). A cell absent from one table counts as 0 there; counts
are normalised by each table's own size.

Memory is bounded by the rows and by :data:`DENSE_CELLS`, never by the whole domain.
Three paths give the same numbers:

* **cube**: when the family is every subset of its columns (the 2024 release) and their
  contingency cube has at most :data:`DENSE_CELLS` cells: one bincount per table, then
  every marginal by summing out one axis at a time from a cached larger marginal (the
  6-column births table: 63 marginals from a 207K-cell cube);
* **dense per marginal**: otherwise, a marginal of at most :data:`DENSE_CELLS` cells is
  one bincount per table;
* **sparse**: a larger marginal is computed from the rows' cell keys: the keys of both
  tables are made dense with ``np.unique``; only cells holding a row are visited (every
  other cell has error 0).

Kept whole: one criterion kind, one module: its parameters, statistic, sensitivity, exact value,
DP release and report section, so that adding a kind touches its module and the registry
line only ([shape]).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from synthflow.config.model import Column, CriterionParams, CriterionSpec, ReleaseSpec
from synthflow.criteria._params import COLUMNS, column_list, param
from synthflow.criteria.protocol import CriterionKind
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

    from synthflow.criteria.context import Context, Released
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG


__all__ = [
    "DENSE_CELLS",
    "MarginalCell",
    "Marginals",
    "MarginalsParams",
    "cube_counts",
    "marginal_errors",
    "marginal_family",
    "marginal_max_abs_error",
    "marginal_sensitivity",
    "marginal_shares",
    "marginal_subsets",
    "worst_marginal_cells",
]


@dataclass(frozen=True, kw_only=True)
class MarginalsParams(CriterionParams):
    """The family of marginals compared."""

    max_order: int | None = param(None, schema={"type": "integer", "minimum": 1})
    """Largest number of columns in a covered marginal (None: all, as in 2024)."""
    columns: tuple[str, ...] = param((), schema=COLUMNS)
    """The columns covered (empty: every column)."""


def parse_family(where: str, raw: Mapping[str, Any], columns: Mapping[str, Column]) -> dict:
    """``max_order`` and ``columns`` of a criterion over a family of marginals."""
    out: dict[str, Any] = {"columns": column_list(where, raw, "columns", columns)}
    if "max_order" in raw:
        k = raw["max_order"]
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(
                f"{where}.max_order: expected an integer >= 1 (2: every 1- and 2-way "
                f"marginal), got {k!r}"
            )
        out["max_order"] = k
    return out


def family_pairs(c: CriterionSpec, spec: ReleaseSpec) -> set[tuple[str, ...]]:
    """The pairs of a family of marginals (none when it stops at 1-way)."""
    cols = c.columns or spec.column_names
    if (c.max_order or 2) < 2:
        return set()
    return set(itertools.combinations(cols, 2))


class Marginals(CriterionKind):
    """Max absolute error of any cell share of any marginal; sensitivity 1/n."""

    name = "marginals"
    Params = MarginalsParams
    reads_every_pair = True

    def parse(
        self, where: str, raw: Mapping[str, Any], columns: Mapping[str, Column]
    ) -> MarginalsParams:
        """``max_order`` and ``columns``."""
        return MarginalsParams(**parse_family(where, raw, columns))

    def pairs_read(self, c: CriterionSpec, spec: ReleaseSpec) -> set[tuple[str, ...]]:
        """Every pair of the covered columns (when the family reaches 2-way)."""
        return family_pairs(c, spec)

    def marginal_family(
        self, c: CriterionSpec, names: tuple[str, ...]
    ) -> list[tuple[int, ...]] | None:
        """The covered subsets (:func:`marginal_family`)."""
        return marginal_family(c, names)

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact value (:func:`_exact_marginals`)."""
        return _exact_marginals(c, ctx)

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release (:func:`_dp_marginals`)."""
        return _dp_marginals(c, ctx, ledger, rng)

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """``1/n`` (one replaced row moves any cell share by at most 1/n), the threshold."""
        return marginal_sensitivity(int(public["n"])), c.threshold

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The datasheet sentence."""
        order = f"up to {c.max_order}" if c.max_order else "any number of"
        return (
            f"Largest difference between the synthetic and the original data in the share "
            f"of records in any cell of any table of {order} columns (a share, 0 to 1)."
        )


def marginal_family(c: CriterionSpec, names: tuple[str, ...]) -> list[tuple[int, ...]]:
    """Column-index subsets a marginals criterion covers (from the public spec)."""
    cols = [names.index(n) for n in c.columns] if c.columns else None
    return marginal_subsets(len(names), max_order=c.max_order, columns=cols)


def _exact_marginals(c: CriterionSpec, x: Context) -> float:
    family = marginal_family(c, x.transformer.domain.names)
    return marginal_max_abs_error(x.original, x.candidate, x.sizes, family)


def _dp_marginals(c: CriterionSpec, x: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
    from synthflow.criteria.context import (
        exact_of,
        laplace_release,
    )

    return laplace_release(
        c, x.spec, exact_of(c, x), public={"n": len(x.original)}, ledger=ledger, rng=rng
    )


# --- the statistic


DENSE_CELLS = 1 << 22
"""Largest contingency cube (cells) built densely; larger families go sparse."""


Subset = tuple[int, ...]


def cube_counts(codes: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """Counts of the full contingency cube (shape ``sizes``) of an ``(n, d)`` code matrix."""
    key = np.zeros(len(codes), dtype=np.int64)
    for j, size in enumerate(sizes):
        key *= int(size)
        key += codes[:, j]
    cells = math.prod(int(s) for s in sizes)
    return np.bincount(key, minlength=cells).reshape(tuple(sizes))


def marginal_subsets(
    d: int, *, max_order: int | None = None, columns: Sequence[int] | None = None
) -> list[Subset]:
    """The column subsets the criterion covers, smallest first.

    >>> marginal_subsets(3, max_order=2)
    [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2)]
    >>> len(marginal_subsets(6))
    63
    """
    cols = sorted(range(d) if columns is None else set(columns))
    top = len(cols) if max_order is None else min(max_order, len(cols))
    return [s for k in range(1, top + 1) for s in itertools.combinations(cols, k)]


def _check(original: np.ndarray, candidate: np.ndarray) -> None:
    if len(original) == 0 or len(candidate) == 0:
        raise ValueError("marginals need two non-empty tables")


def _union(subsets: Sequence[Subset]) -> Subset:
    return tuple(sorted(set().union(*subsets))) if subsets else ()


def _whole_lattice(subsets: Sequence[Subset]) -> bool:
    """True when ``subsets`` is every non-empty subset of their union (the 2024 family)."""
    return len(set(subsets)) == 2 ** len(_union(subsets)) - 1


def _cube_differences(
    original: np.ndarray, candidate: np.ndarray, sizes: Sequence[int], subsets: Sequence[Subset]
) -> Iterator[tuple[Subset, np.ndarray]]:
    """(subset, p_T - p_R over its dense marginal) for each subset, via one cube."""
    union = _union(subsets)
    sub_sizes = [int(sizes[j]) for j in union]
    stack = np.stack(
        [cube_counts(original[:, union], sub_sizes), cube_counts(candidate[:, union], sub_sizes)]
    )
    d = len(union)
    full = (1 << d) - 1
    wanted = {sum(1 << union.index(j) for j in s): s for s in subsets}
    cache = {full: stack}
    for mask in range(full, 0, -1):  # parents (more bits) come before their children
        if mask not in cache:
            missing = next(b for b in range(d) if not mask >> b & 1)
            parent = mask | (1 << missing)
            axis = 1 + sum(1 for b in range(missing) if parent >> b & 1)
            cache[mask] = cache[parent].sum(axis=axis)
        if mask in wanted:
            a = cache[mask]
            yield wanted[mask], a[0] / len(original) - a[1] / len(candidate)


def _subset_table(
    original: np.ndarray, candidate: np.ndarray, sizes: Sequence[int], subset: Subset
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """p_T and p_R over one marginal, and the occupied cells' codes (None: dense, all cells)."""
    sub_sizes = [int(sizes[j]) for j in subset]
    if math.prod(sub_sizes) <= DENSE_CELLS:
        n_cells = math.prod(sub_sizes)
        p = np.bincount(_cell_keys(original, sizes, subset), minlength=n_cells) / len(original)
        q = np.bincount(_cell_keys(candidate, sizes, subset), minlength=n_cells) / len(candidate)
        return p, q, None
    occupied, p, q = _sparse_difference(original, candidate, sizes, subset)
    return p, q, occupied


def _cell_keys(codes: np.ndarray, sizes: Sequence[int], subset: Subset) -> np.ndarray:
    """One integer per row identifying its cell of the marginal over ``subset``."""
    if math.prod(int(sizes[j]) for j in subset) < 2**62:
        key = np.zeros(len(codes), dtype=np.int64)
        for j in subset:
            key *= int(sizes[j])
            key += codes[:, j]
        return key
    # A domain past int64 (e.g. 20 columns of 10 bins): rows of the subset as cells.
    _, inverse = np.unique(codes[:, subset], axis=0, return_inverse=True)
    return inverse.ravel().astype(np.int64)


def _sparse_difference(
    original: np.ndarray, candidate: np.ndarray, sizes: Sequence[int], subset: Subset
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Occupied cells of the marginal (one row index each), p_T and p_R there."""
    both = np.concatenate([original[:, subset], candidate[:, subset]])
    keys = _cell_keys(both, [sizes[j] for j in subset], tuple(range(len(subset))))
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    n_o = len(original)
    p = np.bincount(inverse[:n_o], minlength=len(first)) / n_o
    q = np.bincount(inverse[n_o:], minlength=len(first)) / len(candidate)
    return both[first], p, q


def marginal_shares(
    original: np.ndarray, candidate: np.ndarray, sizes: Sequence[int], subset: Subset
) -> tuple[np.ndarray, np.ndarray]:
    """p_T and p_R over the marginal on ``subset`` (the same cells, in the same order).

    Dense when the marginal has at most :data:`DENSE_CELLS` cells, else the cells that
    hold a row of either table (every other cell has share 0 in both).
    """
    _check(original, candidate)
    p, q, _ = _subset_table(original, candidate, sizes, subset)
    return p, q


def marginal_errors(
    original: np.ndarray,
    candidate: np.ndarray,
    sizes: Sequence[int],
    subsets: Sequence[Subset] | None = None,
) -> dict[Subset, float]:
    """Max absolute error of each marginal, keyed by the tuple of its column indices.

    ``subsets``: the marginals to cover (default: all ``2^d - 1``).
    """
    _check(original, candidate)
    subsets = marginal_subsets(len(sizes)) if subsets is None else list(subsets)
    union = _union(subsets)
    if _whole_lattice(subsets) and math.prod(int(sizes[j]) for j in union) <= DENSE_CELLS:
        diffs = _cube_differences(original, candidate, sizes, subsets)
        return {s: float(np.abs(v).max()) for s, v in diffs}
    out = {}
    for s in subsets:
        p, q, _ = _subset_table(original, candidate, sizes, s)
        out[s] = float(np.abs(p - q).max())
    return out


def marginal_max_abs_error(
    original: np.ndarray,
    candidate: np.ndarray,
    sizes: Sequence[int],
    subsets: Sequence[Subset] | None = None,
) -> float:
    """Exact value: max over the marginals and their cells of |p_T - p_R|.

    >>> a = np.array([[0, 0], [1, 1]]); b = np.array([[0, 1], [1, 1]])
    >>> marginal_max_abs_error(a, b, (2, 2))
    0.5
    """
    return max(marginal_errors(original, candidate, sizes, subsets).values())


def marginal_sensitivity(n: int) -> float:
    """Sensitivity ``1/n`` of the max marginal error under replace-one on D_T.

    Replacing one row of D_T moves one unit of count from one cell to another in every
    marginal, so each normalised cell of D_T changes by at most ``1/n``; D_R is fixed,
    so every ``|p_T - p_R|`` changes by at most ``1/n``, and so does their maximum (over
    any fixed, public family of marginals).
    """
    if n < 1:
        raise ValueError(f"n ({n}) must be >= 1")
    return 1.0 / n


@dataclass(frozen=True, kw_only=True)
class MarginalCell:
    """One cell of a marginal with its two normalised counts (exact mode reports only)."""

    columns: tuple[int, ...]
    cell: tuple[int, ...]
    original: float
    candidate: float

    @property
    def error(self) -> float:
        """Absolute difference of the two normalised counts."""
        return abs(self.original - self.candidate)


def worst_marginal_cells(
    original: np.ndarray,
    candidate: np.ndarray,
    sizes: Sequence[int],
    *,
    k: int,
    top: int = 10,
    subsets: Sequence[Subset] | None = None,
) -> list[MarginalCell]:
    """The ``top`` cells with the largest error among the k-way marginals.

    ``subsets``: restrict to these marginals (default: every k-way marginal).
    """
    _check(original, candidate)
    family = [
        s for s in (marginal_subsets(len(sizes)) if subsets is None else subsets) if len(s) == k
    ]
    cells: list[MarginalCell] = []
    for s in family:
        p, q, occupied = _subset_table(original, candidate, sizes, s)
        best = np.argsort(-np.abs(p - q), kind="stable")[:top]
        if occupied is None:
            idx = np.stack(np.unravel_index(best, [int(sizes[j]) for j in s]), axis=1)
        else:
            idx = occupied[best]
        o, r = p[best], q[best]
        cells += [
            MarginalCell(
                columns=s,
                cell=tuple(int(v) for v in i),
                original=float(a),
                candidate=float(b),
            )
            for i, a, b in zip(idx, o, r, strict=True)
        ]
    cells.sort(key=lambda c: -c.error)
    return cells[:top]

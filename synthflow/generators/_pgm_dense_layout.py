"""The dense estimator's model structure: which models, first step size, parameter layout.

:func:`fits_dense` decides whether a model goes to :mod:`synthflow.generators._pgm_dense`
(cliques of one or two columns, joint of at most :data:`DENSE_CELLS` cells);
:func:`lipschitz` is mbi's Lipschitz constant of the loss (the first step size); and
:class:`_Layout` maps clique tables into the (other columns' cells) x (widest column)
parameterisation: ``w`` (pairs with the widest column), ``b`` (1-ways and pairs of the
other columns, over the one-hot design ``E``) and ``v`` (the widest column's 1-way).

Only the public domain, the cliques and the noise sd enter here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

Clique = tuple[str, ...]

__all__ = ["DENSE_CELLS", "Clique", "fits_dense", "lipschitz"]

DENSE_CELLS = 2**22
"""Largest joint table (cells) the dense estimator holds: 32 MB per float64 copy."""


def fits_dense(sizes: Sequence[int], cliques: Sequence[Clique]) -> bool:
    """Whether the dense estimator handles this model: cliques of <= 2 columns, joint small."""
    return (
        len(sizes) >= 1
        and all(1 <= len(cl) <= 2 and len(set(cl)) == len(cl) for cl in cliques)
        and math.prod(int(s) for s in sizes) <= DENSE_CELLS
    )


def _maximal(cliques: Sequence[Clique]) -> list[Clique]:
    """Like mbi's ``maximal_subset``: longest first, dropping cliques nested in a kept one."""
    result: list[Clique] = []
    for cl in sorted(cliques, key=len, reverse=True):
        if not any(set(cl) <= set(other) for other in result):
            result.append(cl)
    return result


def lipschitz(
    sizes: Mapping[str, int], cliques: Sequence[Clique], stddevs: Sequence[float]
) -> float:
    """As mbi's ``calculate_l2_lipschitz``: largest Hessian eigenvalue, 50 power steps.

    The Hessian of the loss over the maximal cliques' marginal vector: a measurement
    reads the first maximal clique that contains it (mbi's ``CliqueVector.project``).
    """
    maximal = _maximal(cliques)
    parent = [next(m for m in maximal if set(cl) <= set(m)) for cl in cliques]
    v = {m: np.ones([sizes[a] for a in m]) for m in maximal}
    norm = math.sqrt(sum(float((x * x).sum()) for x in v.values()))
    v = {m: x / norm for m, x in v.items()}
    estimate = 0.0
    for _ in range(50):
        hv = {m: np.zeros_like(x) for m, x in v.items()}
        for cl, par, sd in zip(cliques, parent, stddevs, strict=True):
            drop = tuple(i for i, a in enumerate(par) if a not in cl)
            kept = [a for a in par if a in cl]
            proj = v[par].sum(axis=drop)
            proj = np.transpose(proj, [kept.index(a) for a in cl])
            w = 1.0 / max(float(sd), 1e-12) ** 2
            back = np.transpose(proj * w, [cl.index(a) for a in kept])
            hv[par] += np.expand_dims(back, drop)
        estimate = math.sqrt(sum(float((x * x).sum()) for x in hv.values()))
        v = {m: x / (estimate + 1e-12) for m, x in hv.items()}
    return estimate


@dataclass
class _Layout:
    """Where each clique's table lives in the (others x widest) parameterisation."""

    names: tuple[str, ...]
    sizes: dict[str, int]
    wide: str
    """The widest column: the table's second axis."""
    rest: tuple[str, ...]
    """The other columns, in domain order: the table's rows are their cells (C order)."""
    offset: dict[str, int]
    """Each other column's first row in the one-hot design ``E``."""

    @classmethod
    def of(cls, names: Sequence[str], sizes: Sequence[int]) -> _Layout:
        size = {n: int(s) for n, s in zip(names, sizes, strict=True)}
        wide = max(reversed(names), key=size.__getitem__)
        rest = tuple(n for n in names if n != wide)
        offset, k = {}, 0
        for n in rest:
            offset[n], k = k, k + size[n]
        return cls(tuple(names), size, wide, rest, offset)

    @property
    def k(self) -> int:
        return sum(self.sizes[n] for n in self.rest)

    def design(self) -> np.ndarray:
        """One-hot ``E``: one row per cell of the other columns, one 1 per column block."""
        shape = [self.sizes[n] for n in self.rest]
        rows = math.prod(shape)
        e = np.zeros((rows, self.k))
        codes = np.indices(shape).reshape(len(shape), rows) if shape else np.zeros((0, 1), int)
        for i, n in enumerate(self.rest):
            e[np.arange(rows), self.offset[n] + codes[i]] = 1.0
        return e

    def place(
        self, clique: Clique, table: np.ndarray, w: np.ndarray, b: np.ndarray, v: np.ndarray
    ) -> None:
        """Add ``table`` (over ``clique``, C order) into the parameter arrays ``w, b, v``."""
        table = np.asarray(table, dtype=np.float64).reshape([self.sizes[a] for a in clique])
        t: np.ndarray
        if clique == (self.wide,):
            v += table
        elif len(clique) == 1:
            o = self.offset[clique[0]]
            idx = np.arange(o, o + table.size)
            b[idx, idx] += table
        elif self.wide in clique:
            other = clique[0] if clique[1] == self.wide else clique[1]
            t = table if clique[1] == self.wide else table.T
            o = self.offset[other]
            w[o : o + self.sizes[other]] += t
        else:
            x, y = sorted(clique, key=self.rest.index)
            t = table if clique == (x, y) else table.T
            ox, oy = self.offset[x], self.offset[y]
            b[ox : ox + self.sizes[x], oy : oy + self.sizes[y]] += t

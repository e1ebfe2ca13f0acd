"""Our sampler of a fitted graphical model (post-processing), split from :mod:`._pgm`.

:class:`TreeSampler` holds, for each column in reverse elimination order, the
conditional distribution given the already-sampled columns it shares a junction-tree
clique with (a perfect elimination order makes that set a clique, so the column is
conditionally independent of the rest given it), as plain numpy tables. They are made
from an mbi model (message passing on its junction tree in numpy, :class:`_Projector`),
from a whole joint table (the dense estimator) or from calibrated junction-tree
marginals (the junction estimator). Sampling is inverse-CDF with our
``numpy.random.Generator``; mbi's ``synthetic_data`` is never used.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from synthflow.generators._junction import junction_tree
from synthflow.generators._pgm_tables import (
    Clique,
    _broadcast,
    _cdf,
    _junction_tree_marginals,
)
from synthflow.generators._sampling import search_in_order, systematic_draw

__all__ = ["TreeSampler"]


@dataclass(frozen=True, kw_only=True)
class _Step:
    column: int
    parents: tuple[int, ...]
    cdf: np.ndarray
    """Rows: parents' cells (C order); columns: the column's bins; each row ends at 1."""


class TreeSampler:
    """Draws rows from a fitted graphical model (numpy only, nothing private)."""

    def __init__(self, steps: Sequence[_Step], sizes: Sequence[int]) -> None:
        self.steps = tuple(steps)
        self.sizes = tuple(int(s) for s in sizes)

    @classmethod
    def from_model(
        cls,
        model: object,
        *,
        names: tuple[str, ...],
        sizes: tuple[int, ...],
        zeros: Mapping[Clique, np.ndarray],
    ) -> TreeSampler:
        """Conditional tables of an mbi ``MarkovRandomField`` along its junction tree."""
        potentials = model.potentials  # type: ignore[attr-defined]
        cliques = [tuple(cl) for cl in potentials.cliques]
        return cls._along_tree(_Projector(model), cliques, names=names, sizes=sizes, zeros=zeros)

    @classmethod
    def from_joint(
        cls,
        joint: np.ndarray,
        *,
        names: tuple[str, ...],
        cliques: Sequence[Clique],
        zeros: Mapping[Clique, np.ndarray],
    ) -> TreeSampler:
        """Conditional tables of a model held as its whole joint table (axes: ``names``).

        The same steps as :meth:`from_model` (the junction tree of ``cliques`` decides
        the order and each column's parents); the marginals are sums of ``joint``.
        """
        sizes = tuple(int(s) for s in joint.shape)

        def project(attrs: tuple[str, ...]) -> np.ndarray:
            drop = tuple(i for i, a in enumerate(names) if a not in attrs)
            kept = [a for a in names if a in attrs]
            return np.transpose(joint.sum(axis=drop), [kept.index(a) for a in attrs])

        return cls._along_tree(project, list(cliques), names=names, sizes=sizes, zeros=zeros)

    @classmethod
    def from_tables(
        cls,
        tables: Sequence[tuple[Clique, np.ndarray]],
        *,
        names: tuple[str, ...],
        sizes: tuple[int, ...],
        cliques: Sequence[Clique],
        zeros: Mapping[Clique, np.ndarray],
    ) -> TreeSampler:
        """Conditional tables of a model held as its junction tree's calibrated marginals.

        Each step's attributes lie in one node of the junction tree of ``cliques`` (the
        same tree :meth:`from_joint` walks), whose table is summed.
        """

        def project(attrs: tuple[str, ...]) -> np.ndarray:
            found = _from_tables(tables, attrs)
            if found is None:  # pragma: no cover - a perfect elimination order forbids it
                raise AssertionError(f"no junction-tree node holds {attrs}")
            return found

        return cls._along_tree(project, list(cliques), names=names, sizes=sizes, zeros=zeros)

    @classmethod
    def _along_tree(
        cls,
        projector: Callable[[tuple[str, ...]], np.ndarray],
        cliques: list[Clique],
        *,
        names: tuple[str, ...],
        sizes: tuple[int, ...],
        zeros: Mapping[Clique, np.ndarray],
    ) -> TreeSampler:
        nodes, order = junction_tree(names, sizes, cliques)
        index = {n: i for i, n in enumerate(names)}
        steps: list[_Step] = []
        used: list[str] = []
        for col in reversed(list(order)):
            near = set().union(*(set(n) for n in nodes if col in n)) & set(used)
            parents = tuple(sorted(near, key=index.__getitem__))
            attrs = (*parents, col)
            marg = np.asarray(projector(attrs), dtype=np.float64)
            if not np.isfinite(marg).all():
                raise FloatingPointError(
                    f"the fitted model's marginal on {attrs} is not finite (an estimator "
                    "fault, not a property of the data); nothing was sampled from it"
                )
            marg = np.clip(marg, 0.0, None)
            allowed = np.ones(marg.shape, dtype=bool)
            for cl, mask in zeros.items():
                if set(cl) <= set(attrs):
                    allowed &= ~_broadcast(mask, cl, attrs)
            marg = np.where(allowed, marg, 0.0)
            k = sizes[index[col]]
            table = marg.reshape(-1, k)
            # A parent cell the model gives no mass draws uniformly among its allowed
            # bins (never a forbidden one), should a row ever reach it.
            empty = table.sum(axis=1) <= 0
            table[empty] = allowed.reshape(-1, k)[empty]
            steps.append(
                _Step(column=index[col], parents=tuple(index[p] for p in parents), cdf=_cdf(table))
            )
            used.append(col)
        return cls(steps, sizes)

    def sample(self, n: int, rng: np.random.Generator, *, systematic: bool = True) -> np.ndarray:
        """``n`` rows of codes, shape (n, columns), dtype int64.

        Every row's value of each column is drawn from the model's conditional given the
        row's already-sampled neighbours, with all randomness from ``rng``.
        ``systematic`` (the default) draws the rows of one parent cell jointly, by
        systematic sampling over a uniformly random order of those rows: each row still
        gets exactly the model's conditional distribution, but a cell's count is within
        one of its expected count given the parents' counts, so the sample's marginals
        carry far less sampling noise than i.i.d. rows (whose error on a cell of
        probability p is sqrt(p (1 - p) / n): about 0.001 at 160K rows, the same size as
        the model's own error). The random order is drawn afresh for each column, so two
        columns that share parents are not coupled. ``systematic=False``: i.i.d. rows.
        """
        out = np.zeros((n, len(self.sizes)), dtype=np.int64)
        for step in self.steps:
            k = step.cdf.shape[1]
            groups = step.cdf.shape[0]
            if step.parents:
                shape = tuple(self.sizes[p] for p in step.parents)
                row = np.ravel_multi_index(tuple(out[:, p] for p in step.parents), shape)
            else:
                row = np.zeros(n, dtype=np.int64)
            keys = (np.arange(groups)[:, None] + step.cdf).ravel()
            u, order = systematic_draw(row, groups, rng) if systematic else (rng.random(n), None)
            pos = search_in_order(keys, row + u, order, side="right")
            out[:, step.column] = np.minimum(pos - row * k, k - 1)
        return out


class _Projector:
    """Marginals of a fitted model on attribute tuples, computed in numpy.

    The model's log-potentials are summed into the maximal cliques of its junction tree
    and calibrated there by sum-product message passing in numpy (log space): each
    sampling step's attributes (a column and its sampled neighbours, a clique of the
    triangulated graph) lie inside one of those cliques, so its marginal is a numpy sum
    and transpose. mbi's ``model.project`` would run the same computation as eager jax
    operations, each compiled for its shapes on first use (about 14 s of a 160K-row
    fit); it remains the fallback for attributes that no clique contains.
    """

    def __init__(self, model: object) -> None:
        self.model = model
        self.tables = _junction_tree_marginals(model)

    def __call__(self, attrs: tuple[str, ...]) -> np.ndarray:
        found = _from_tables(self.tables, attrs)
        if found is not None:
            return found
        projected = self.model.project(attrs)  # type: ignore[attr-defined]
        return np.asarray(projected.datavector(flatten=False), dtype=np.float64)


def _from_tables(
    tables: Sequence[tuple[Clique, np.ndarray]], attrs: tuple[str, ...]
) -> np.ndarray | None:
    """The marginal on ``attrs`` of the first table whose axes hold them (None: none does)."""
    for axes, values in tables:
        if set(attrs) <= set(axes):
            summed = values.sum(axis=tuple(i for i, a in enumerate(axes) if a not in attrs))
            kept = [a for a in axes if a in attrs]
            return np.transpose(summed, [kept.index(a) for a in attrs])
    return None

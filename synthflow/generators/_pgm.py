"""Private-PGM estimation from noisy marginals, and our own sampler (post-processing).

McKenna, Sheldon, Miklau. "Graphical-model based estimation and inference for
differential privacy." ICML 2019. The estimation is ``mbi`` (Private-PGM, version 1.x,
jax): :func:`estimate` finds the graphical model whose marginals best fit the noisy
measurements (mirror descent over the marginal polytope, the public n as known total).
Only noisy measurements, their cliques and their noise sd cross into it: everything
here is post-processing. The mirror-descent loop is ours (:mod:`._pgm_jax`, mbi's
algorithm with a step compiled once per model structure, not once per fit).

**Structural zeros.** A clique's forbidden cells (public rules) start with potential
``-1e9`` (probability ``exp(-1e9) = 0`` in float32 and float64), which mirror descent's
bounded steps cannot lift; the sampler also zeroes them exactly, so no sampled row
falls in a forbidden cell.

**Sampling** never uses mbi's ``synthetic_data`` (its ``round`` method makes siblings
comonotone, ``shared/DEPENDENCIES.md`` trap 2, and both methods draw from numpy's
global RNG). :class:`TreeSampler` holds, for each column in reverse elimination order,
the conditional distribution given the already-sampled columns it shares a junction-tree
clique with (a perfect elimination order makes that set a clique, so the column is
conditionally independent of the rest given it), as plain numpy tables, computed from the
model's potentials by message passing on the junction tree in numpy. Sampling is
inverse-CDF with our ``numpy.random.Generator``: one ``searchsorted`` per column, memory
linear in the rows. By default the uniforms are *systematic* within each parent cell
(:meth:`TreeSampler.sample`): every row keeps the model's distribution, and the sample's
marginals carry almost no sampling noise on top of the model's error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from synthflow.generators._junction import junction_tree
from synthflow.generators._pgm_dense import fits_dense, mirror_descent_dense
from synthflow.generators._pgm_tables import (
    Clique,
    _broadcast,
    _cdf,
    _junction_tree_marginals,
    _mbi,
)
from synthflow.generators._sampling import search_in_order, systematic_draw

__all__ = ["Measurement", "TreeSampler", "estimate", "model_size"]


_FORBIDDEN = -1e9


@dataclass(frozen=True, kw_only=True)
class Measurement:
    """A noisy marginal: counts over ``clique`` (C order) with noise of sd ``stddev``."""

    clique: Clique
    noisy: np.ndarray
    stddev: float


def model_size(
    names: Sequence[str], sizes: Sequence[int], cliques: Sequence[Clique]
) -> tuple[float, Clique]:
    """Megabytes of the graphical model over ``cliques`` and its largest clique (public).

    The junction tree of the measured cliques decides memory and time; computed from
    the public domain only, so a generator can refuse *before* charging the ledger.
    """
    size = dict(zip(names, (int(s) for s in sizes), strict=True))
    nodes, _ = junction_tree(names, sizes, cliques)
    cells = [math.prod(size[a] for a in n) for n in nodes]
    largest = nodes[cells.index(max(cells))] if nodes else ()
    return float(sum(cells) * 8 / 2**20), largest


def estimate(
    names: Sequence[str],
    sizes: Sequence[int],
    measurements: Sequence[Measurement],
    *,
    total: int,
    zeros: Mapping[Clique, np.ndarray] | None = None,
    iters: int = 3000,
) -> TreeSampler:
    """Fit a graphical model to ``measurements`` and return its sampler.

    Args:
        names: Column names (the domain's order).
        sizes: Number of bins per column.
        measurements: Noisy marginals (post-processing: already released).
        total: Known number of records (public n).
        zeros: Clique -> boolean mask of forbidden cells (public rules).
        iters: Plain mirror-descent iterations (dense fit: a quarter as many, accelerated).
    """
    zeros = dict(zeros or {})
    cliques: list[Clique] = []
    for cl in [m.clique for m in measurements] + list(zeros):
        if cl not in cliques:
            cliques.append(cl)
    sizes = tuple(int(s) for s in sizes)
    index = {n: i for i, n in enumerate(names)}
    # Start from the independent model of the noisy 1-way marginals (post-processing of
    # released values) rather than the uniform one: mirror descent then converges in far
    # fewer iterations. Forbidden cells start (and stay) at probability zero.
    start = {cl: np.zeros([sizes[index[a]] for a in cl]) for cl in cliques}
    for m in measurements:
        if len(m.clique) == 1:
            p = np.clip(np.asarray(m.noisy, dtype=float), 0.5, None)
            start[m.clique] = np.log(p / p.sum())
    for cl, mask in zeros.items():
        start[cl] = np.where(mask, _FORBIDDEN, 0.0)
    if fits_dense(sizes, cliques):
        joint = mirror_descent_dense(
            names,
            sizes,
            [(m.clique, np.asarray(m.noisy), float(m.stddev)) for m in measurements],
            start,
            total=float(total),
            iters=iters,
        )
        return TreeSampler.from_joint(joint, names=tuple(names), cliques=cliques, zeros=zeros)
    return _estimate_mbi(names, sizes, measurements, start, total=total, zeros=zeros, iters=iters)


def _estimate_mbi(
    names: Sequence[str],
    sizes: Sequence[int],
    measurements: Sequence[Measurement],
    start: Mapping[Clique, np.ndarray],
    *,
    total: int,
    zeros: Mapping[Clique, np.ndarray],
    iters: int,
) -> TreeSampler:
    """Estimate with mbi's mirror descent in jax: models whose joint table is too large to hold.

    The loop is :func:`synthflow.generators._pgm_jax.mirror_descent` (mbi's algorithm, its
    step compiled once per model structure, the measurements traced arguments).
    """
    from synthflow.generators._pgm_jax import mirror_descent  # noqa: PLC0415  (imports jax)

    mbi = _mbi()
    domain = mbi.Domain(tuple(names), tuple(int(s) for s in sizes))  # type: ignore[attr-defined]
    cliques = list(start)
    potentials = mbi.CliqueVector.zeros(domain, cliques)  # type: ignore[attr-defined]
    dtype = np.asarray(potentials[cliques[0]].values).dtype  # float32, or float64 with jax x64
    for cl, values in start.items():
        potentials[cl] = mbi.Factor(domain.project(cl), np.asarray(values).astype(dtype))  # type: ignore[attr-defined]
    model = mirror_descent(
        potentials,
        [(m.clique, np.asarray(m.noisy, dtype=dtype), float(m.stddev)) for m in measurements],
        total=float(total),
        iters=iters,
    )
    return TreeSampler.from_model(model, names=tuple(names), sizes=tuple(sizes), zeros=zeros)


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
            marg = np.clip(projector(attrs), 0.0, None)
            for cl, mask in zeros.items():
                if set(cl) <= set(attrs):
                    marg = np.where(_broadcast(mask, cl, attrs), 0.0, marg)
            k = sizes[index[col]]
            table = marg.reshape(-1, k)
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
        for axes, values in self.tables:
            if set(attrs) <= set(axes):
                summed = values.sum(axis=tuple(i for i, a in enumerate(axes) if a not in attrs))
                kept = [a for a in axes if a in attrs]
                return np.transpose(summed, [kept.index(a) for a in attrs])
        projected = self.model.project(attrs)  # type: ignore[attr-defined]
        return np.asarray(projected.datavector(flatten=False), dtype=np.float64)

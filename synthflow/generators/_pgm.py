"""Private-PGM estimation from noisy marginals, and our own sampler (post-processing).

McKenna, Sheldon, Miklau. "Graphical-model based estimation and inference for
differential privacy." ICML 2019. :func:`estimate` finds the graphical model whose
marginals best fit the noisy measurements (mbi 1.x's mirror descent over the marginal
polytope, the public n as known total), by one of three estimators that
:func:`estimator` picks from public structure alone (the domain and the cliques):

* ``dense`` (:mod:`._pgm_dense`): the whole joint table in numpy, for pairwise models
  whose joint is small and not much larger than their junction tree (the release's);
* ``junction`` (:mod:`._pgm_junction`): message passing on the junction tree in numpy,
  for sparse models (tree mode on a wide table) whose tree fits in memory;
* ``mbi`` (:mod:`._pgm_jax`): mbi's jax algorithm, its step compiled once per model
  structure, for what neither holds.

Only noisy measurements, their cliques and their noise sd cross into them: everything
here is post-processing.

**Structural zeros.** A clique's forbidden cells (public rules) start with potential
``-1e9`` (probability ``exp(-1e9) = 0`` in float32 and float64), which mirror descent's
bounded steps cannot lift; the sampler also zeroes them exactly, so no sampled row
falls in a forbidden cell.

**Sampling** never uses mbi's ``synthetic_data`` (its ``round`` method makes siblings
comonotone, ``shared/DEPENDENCIES.md`` trap 2, and both methods draw from numpy's
global RNG): every estimator returns our ``TreeSampler`` (:mod:`._pgm_sampler`), which
draws each column from its conditional given its sampled junction-tree neighbours, by
inverse CDF with our ``numpy.random.Generator`` (systematic within each parent cell by
default, so the sample's marginals carry almost no sampling noise on top of the model's).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from synthflow.generators._junction import junction_tree
from synthflow.generators._pgm_dense import DENSE_CELLS, fits_dense, mirror_descent_dense
from synthflow.generators._pgm_junction import junction_cells, mirror_descent_junction
from synthflow.generators._pgm_sampler import TreeSampler
from synthflow.generators._pgm_tables import Clique, _mbi

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


JUNCTION_GAIN = 4
"""The junction tree is fitted in place of the joint when the joint has this many times
its cells or more. Per cell the dense fit's BLAS products are about 2.5 times faster
(``python benchmarks/pgm_estimators.py``: births' all-pairs model, whose tree is one
node, the joint itself, fits in 1.8 s dense and 4.5 s on the tree); affairs' tree-mode
model (a joint 36 times its tree) fits in 8.4 s on the tree, 72 s dense and 20 s in mbi."""


def estimator(names: Sequence[str], sizes: Sequence[int], cliques: Sequence[Clique]) -> str:
    """Which estimator fits this model: ``dense``, ``junction`` or ``mbi`` (public inputs).

    ``dense`` holds the whole joint (pairwise cliques, at most ``DENSE_CELLS`` cells);
    ``junction`` the junction tree's nodes (at most ``DENSE_CELLS`` cells together),
    chosen when the joint is ``JUNCTION_GAIN`` times larger or too large to hold; ``mbi``
    (jax) what neither holds.
    """
    tree = junction_cells(names, sizes, cliques)
    joint = math.prod(int(s) for s in sizes)
    if fits_dense(sizes, cliques) and joint < JUNCTION_GAIN * tree:
        return "dense"
    if tree <= DENSE_CELLS:
        return "junction"
    return "dense" if fits_dense(sizes, cliques) else "mbi"


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
    path = estimator(names, sizes, cliques)
    triples = [(m.clique, np.asarray(m.noisy), float(m.stddev)) for m in measurements]
    if path == "junction":
        tables = mirror_descent_junction(
            names, sizes, triples, start, total=float(total), iters=iters
        )
        return TreeSampler.from_tables(
            tables, names=tuple(names), sizes=sizes, cliques=cliques, zeros=zeros
        )
    if path == "dense":
        joint = mirror_descent_dense(names, sizes, triples, start, total=float(total), iters=iters)
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

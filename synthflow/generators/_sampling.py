"""Systematic sampling of conditional tables: each row keeps its law, counts lose their noise.

The generators that sample column by column from conditional tables (``workload``,
MST/AIM through :class:`~synthflow.generators._pgm_sampler.TreeSampler`, PrivBayes) draw one
uniform per row and invert the row's conditional CDF. With i.i.d. uniforms a cell's
count carries multinomial noise, sqrt(n p (1 - p)): about 0.001 of n at 160K rows on a
cell of probability 1/4, as large as a good model's own error. Systematic uniforms
(:func:`systematic_uniforms`) give every row exactly the same marginal law, but the rows
of one parent cell jointly hit every stratum once, so each child's count is within one
of its expected count given the parents. The GANs (:class:`~synthflow.generators.gan._GAN`)
give each row its own softmax; they stratify within the rows of one top category.
Post-processing of the fitted model: no privacy cost.
"""

from __future__ import annotations

import numpy as np

__all__ = ["search_in_order", "systematic_draw", "systematic_uniforms"]


def systematic_uniforms(group: np.ndarray, groups: int, rng: np.random.Generator) -> np.ndarray:
    """One uniform per row, stratified within each group (systematic sampling).

    The m rows of a group are put in a uniformly random order; the row of rank r gets
    ``(r + o) / m`` with one uniform offset o per group. Each value is uniform on
    [0, 1) (a uniform rank plus a uniform offset), and the m values of a group hit every
    interval [j/m, (j+1)/m) once.

    The random order is a uniform permutation of all rows, stably sorted by group (a
    radix sort on 16-bit group codes): 0.3 s at 4M rows, where sorting by group plus a
    random float took 0.9 s.
    """
    return systematic_draw(group, groups, rng)[0]


def systematic_draw(
    group: np.ndarray, groups: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Systematic uniforms ``u`` and an order of the rows in which ``group + u`` ascends.

    The order is the draw's own: by group, then by rank within the group. Same random
    draws as :func:`systematic_uniforms`, so either gives the same ``u``.
    """
    n = len(group)
    if n == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    perm = rng.permutation(n)
    key = group.astype(np.uint16)[perm] if groups <= 1 << 16 else group[perm]
    order = perm[np.argsort(key, kind="stable")]  # by group; uniformly random within
    counts = np.bincount(group, minlength=groups)
    starts = np.cumsum(counts) - counts
    offset = rng.random(groups)
    # in group order, row j of the sorted rows has rank j - starts[g] within its group g
    ranked = (np.arange(n) - np.repeat(starts - offset, counts)) / np.repeat(counts, counts)
    u = np.empty(n)
    u[order] = np.minimum(ranked, np.nextafter(1.0, 0.0))
    return u, order


def search_in_order(
    keys: np.ndarray, queries: np.ndarray, order: np.ndarray | None, *, side: str
) -> np.ndarray:
    """``np.searchsorted(keys, queries, side=side)``, asking the queries in ``order``.

    The result does not depend on ``order``; the time does. The inverse-CDF samplers
    look each row's ``parent cell + u`` up in one long array of shifted CDFs; asked in
    random row order every binary search misses the cache, asked in ascending order (the
    order :func:`systematic_draw` returns) each starts where the last ended: 23 -> 6 ms
    per column at 160K rows and 90K CDF entries.
    """
    if order is None:
        return np.searchsorted(keys, queries, side=side)  # type: ignore[call-overload]
    out = np.empty(len(queries), dtype=np.intp)
    out[order] = np.searchsorted(keys, queries[order], side=side)  # type: ignore[call-overload]
    return out

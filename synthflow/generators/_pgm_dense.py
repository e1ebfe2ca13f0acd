"""Private-PGM's estimation in numpy, for pairwise models whose joint fits in memory.

The objective, start and step rule of ``mbi.estimation.mirror_descent`` (mbi 1.1.0,
McKenna et al. 2019, Algorithm 1), specialised to what the workload generator builds:
cliques of one or two columns over a domain small enough to hold the whole joint table
(the release's six columns: 230,400 cells).

* Loss ``sum_i ||mu_{c_i} - y_i||^2 / (2 sd_i^2)`` over the noisy marginals, the model's
  marginals ``mu`` scaled to the known (public) total.
* Log-potentials on every measured (and structural-zero) clique, started by the caller
  (log of the clipped noisy 1-way marginals; forbidden cells at ``-1e9``, whose
  probability ``exp(-1e9)`` is exactly 0.0 and which the result zeroes again).
* Mirror-descent step ``theta - alpha * grad_mu``, with mbi's Armijo test
  (``loss - loss' >= alpha / 2 * grad . (mu - mu')``; ``alpha * 1.01`` on success, else
  ``alpha / 2``), ``alpha`` starting at ``2 / (L n)`` with ``L`` the loss's Lipschitz
  constant by mbi's 50-step power iteration (:func:`lipschitz`).
* On top, Nesterov momentum on the potentials (FISTA weights) with a restart whenever a
  step raises the loss (O'Donoghue and Candes 2015). The plain method crawls once the
  step size settles (loss 804 after 1000 iterations, 383 after 3000 on the release's
  model); the momentum reaches 365 in 750 marginal evaluations (:data:`ORACLES_PER_ITER`).
  The loss is convex in the marginals and every iterate stays in the same exponential
  family, so both converge to the same model; with ``momentum=False`` the steps are
  mbi's plain ones (tests compare the two with mbi).

Why not mbi: mbi 1.1.0 defines its jitted update inside ``mirror_descent``, so every fit
compiles it afresh (about 19 s of a 34 s cold fit at 160K rows) and evaluates the
marginals twice per iteration. Here each evaluation is two BLAS products on the table of
(the other columns' cells) x (the widest column): with ``E`` the one-hot design of the
other columns, the log-joint is ``[E | z | 1] [W; 1; v]`` and the marginals with the
widest column are ``E^T P``; the other pairs' potentials ``z`` and marginals are one
gather and one ``bincount`` over the rows. Which models qualify (:func:`fits_dense`), the
Lipschitz constant and where each clique's table lives in ``[W; 1; v]`` and ``z`` are in
:mod:`synthflow.generators._pgm_dense_layout`.

Everything here is post-processing of released values: only the noisy marginals, their
cliques and noise sd, the public total and the public structural zeros enter.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping, Sequence

import numpy as np

from synthflow.generators._pgm_dense_layout import (
    DENSE_CELLS,
    Clique,
    _Layout,
    fits_dense,
    lipschitz,
)
from synthflow.generators._pgm_descent import ITERS_PER_EVALUATION, descend, evaluations

__all__ = [
    "DENSE_CELLS",
    "ITERS_PER_EVALUATION",
    "fits_dense",
    "lipschitz",
    "mirror_descent_dense",
]

_FORBIDDEN = -1e9


def mirror_descent_dense(
    names: Sequence[str],
    sizes: Sequence[int],
    measurements: Sequence[tuple[Clique, np.ndarray, float]],
    potentials: Mapping[Clique, np.ndarray],
    *,
    total: float,
    iters: int,
    momentum: bool = True,
) -> np.ndarray:
    """Fitted joint table (counts summing to ``total``), axes in ``names`` order.

    Args:
        names: Column names (the domain's order).
        sizes: Number of bins per column.
        measurements: ``(clique, noisy counts (C order), noise sd)``: released values.
        potentials: Starting log-potential of each clique (every measured clique must
            be among them); ``-1e9`` marks a forbidden cell, which stays at zero.
        total: Known (public) number of records.
        iters: Plain mirror-descent iterations this fit stands for: exactly that many
            mbi steps with ``momentum=False``, else ``iters / ITERS_PER_EVALUATION``
            marginal evaluations of the accelerated steps.
        momentum: Nesterov momentum with restarts (the default; see the module).
    """
    with _one_blas_thread():
        return _fit(
            names, sizes, measurements, potentials, total=total, iters=iters, momentum=momentum
        )


def _one_blas_thread() -> contextlib.AbstractContextManager[object]:
    """One BLAS thread for the fit.

    The products are small, and extra threads on a shared 2-core machine spin against
    other processes (a 0.35 ms product took 5 ms).
    """
    try:
        from threadpoolctl import threadpool_limits  # noqa: PLC0415
    except ImportError:  # pragma: no cover - scikit-learn (a dependency) brings it
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _fit(
    names: Sequence[str],
    sizes: Sequence[int],
    measurements: Sequence[tuple[Clique, np.ndarray, float]],
    potentials: Mapping[Clique, np.ndarray],
    *,
    total: float,
    iters: int,
    momentum: bool,
) -> np.ndarray:
    lay = _Layout.of(names, sizes)
    e = lay.design()
    rows, k, s = e.shape[0], lay.k, lay.sizes[lay.wide]
    w, b, v, forbidden = _start(lay, e, potentials)
    yw, yb, yv, sw, sb, sv = _targets(lay, measurements)
    shape = [lay.sizes[n] for n in lay.rest]
    blocks, flat_codes, cells = _blocks(lay, shape, b, sb)
    vals = np.zeros(cells)

    design = np.empty((rows, k + 2))  # [E | z | 1]: one product, the log-joint
    design[:, :k] = e
    design[:, k + 1] = 1.0
    et = np.ascontiguousarray(e.T)
    coef = np.empty((k + 2, s))
    coef[k] = 1.0
    ones = np.ones(s)

    def oracle(theta: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        tw, tb, tv = theta
        for key, span in blocks:
            vals[span] = tb[key].ravel()
        design[:, k] = vals[flat_codes].reshape(len(blocks), rows).sum(axis=0) if blocks else 0.0
        coef[:k] = tw
        coef[k + 1] = tv
        p = design @ coef
        p -= p.max()
        np.exp(p, out=p)  # forbidden cells: exp(-1e9) == 0.0 exactly
        q = p @ ones
        scale = total / q.sum()
        mw = (et @ p) * scale
        mb = np.zeros((k, k))
        if blocks:
            sums = np.bincount(flat_codes, np.tile(q, len(blocks)), minlength=cells) * scale
            for key, span in blocks:
                mb[key] = sums[span].reshape(tb[key].shape)
        mv = mw[: lay.sizes[lay.rest[0]]].sum(axis=0) if k else p.sum(axis=0) * scale
        return p, mw, mb, mv, scale

    def loss_grad(mu: tuple[np.ndarray, ...]) -> tuple[float, tuple[np.ndarray, ...]]:
        grads = (sw * (mu[1] - yw), sb * (mu[2] - yb), sv * (mu[3] - yv))
        loss = 0.5 * sum(
            float((g * (m - y)).sum()) for g, m, y in zip(grads, mu[1:4], (yw, yb, yv), strict=True)
        )
        return loss, grads

    cliques = [cl for cl, _, _ in measurements]
    lip = lipschitz(lay.sizes, cliques, [sd for _, _, sd in measurements]) or 1.0
    alpha = 2.0 / (lip * total)
    mu = descend(
        oracle,
        loss_grad,
        lambda m: m[1:4],
        (w, b, v),
        alpha=alpha,
        budget=evaluations(iters, momentum=momentum),
        momentum=momentum,
    )
    joint = (mu[0] * mu[4]).reshape([*shape, s])
    joint[forbidden.reshape(joint.shape)] = 0.0
    order = [*lay.rest, lay.wide]
    return np.transpose(joint, [order.index(n) for n in names])


def _start(
    lay: _Layout, e: np.ndarray, potentials: Mapping[Clique, np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The starting potentials in the layout (``w``, ``b``, ``v``) and the forbidden cells.

    ``forbidden``: per row of the design and value of the widest column, whether a
    structural zero rules the cell out (it is zeroed in the joint).
    """
    rows, k, s = e.shape[0], lay.k, lay.sizes[lay.wide]
    w, b, v = np.zeros((k, s)), np.zeros((k, k)), np.zeros(s)
    forbidden = np.zeros((rows, s), dtype=bool)
    for cl, table in potentials.items():
        lay.place(cl, table, w, b, v)
        fw, fb, fv = np.zeros((k, s)), np.zeros((k, k)), np.zeros(s)
        lay.place(cl, np.asarray(table) <= _FORBIDDEN / 10, fw, fb, fv)
        if fw.any() or fb.any() or fv.any():  # structural zeros: exact zeros in the joint
            z = ((e @ fb) * e).sum(axis=1)
            forbidden |= (e @ fw + z[:, None] + fv[None, :]) > 0
    return w, b, v, forbidden


def _targets(
    lay: _Layout, measurements: Sequence[tuple[Clique, np.ndarray, float]]
) -> tuple[np.ndarray, ...]:
    """Weighted targets in the marginals' layout (``yw, yb, yv``) and their precisions.

    Several measurements of one clique combine into their precision-weighted mean (same
    gradient, loss up to a constant).
    """
    k, s = lay.k, lay.sizes[lay.wide]
    yw, yb, yv = np.zeros((k, s)), np.zeros((k, k)), np.zeros(s)
    sw, sb, sv = np.zeros((k, s)), np.zeros((k, k)), np.zeros(s)
    for cl, noisy, sd in measurements:
        prec = 1.0 / max(float(sd), 1e-12) ** 2
        lay.place(cl, np.asarray(noisy, dtype=np.float64) * prec, yw, yb, yv)
        lay.place(cl, np.full(np.shape(noisy), prec), sw, sb, sv)
    yw, yb, yv = (
        np.divide(y, p, out=np.zeros_like(y), where=p > 0)
        for y, p in ((yw, sw), (yb, sb), (yv, sv))
    )
    return yw, yb, yv, sw, sb, sv


def _blocks(
    lay: _Layout, shape: list[int], b: np.ndarray, sb: np.ndarray
) -> tuple[list[tuple[tuple, slice]], np.ndarray, int]:
    """The live blocks of ``b``, every row's cell code in each, and their cells together.

    Blocks of ``b`` over pairs (and 1-ways, on the diagonal) of the other columns: their
    potentials add into ``z`` (one value per row) and their marginals are sums of the row
    totals, both by one flat gather / bincount over every live block's cell codes; only
    blocks holding a potential or a measurement are visited.
    """
    rows = math.prod(shape)  # as the design's: e.shape[0]
    codes = np.indices(shape).reshape(len(shape), rows) if shape else np.zeros((0, 1), int)
    blocks: list[tuple[tuple, slice]] = []
    flat: list[np.ndarray] = []
    cells = 0
    for i, col in enumerate(lay.rest):
        for j, other in enumerate(lay.rest[i:], start=i):
            ox, oy = lay.offset[col], lay.offset[other]
            if col == other:
                idx = np.arange(ox, ox + lay.sizes[col])
                key: tuple = (idx, idx)
                code = codes[i]
            else:
                key = (slice(ox, ox + lay.sizes[col]), slice(oy, oy + lay.sizes[other]))
                code = codes[i] * lay.sizes[other] + codes[j]
            if b[key].any() or sb[key].any():
                size = lay.sizes[col] * (lay.sizes[other] if col != other else 1)
                blocks.append((key, slice(cells, cells + size)))
                flat.append(code + cells)
                cells += size
    flat_codes = np.concatenate(flat) if flat else np.zeros(0, dtype=np.int64)
    return blocks, flat_codes, cells

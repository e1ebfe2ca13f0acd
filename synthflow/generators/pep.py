"""PEP (Private Entropy Projection) over the dense contingency cube, pure epsilon-DP.

Liu, Vietri, Steinke, Ullman, Wu. "Leveraging Public Data for Practical Private Query
Release" / "Iterative Methods for Private Synthetic Data: Unifying Framework and New
Methods." NeurIPS 2021.

PEP is an iterative select-measure-update method like MWEM, with two differences the
2024 release's configuration space names:

* **the workload** is ``num_query`` cells of ``marginal``-way marginals, drawn from the
  public domain independently of the data (a column subset of that order uniformly, then
  one cell of it uniformly);
* **the update** is an entropy projection: the new distribution is the one of largest
  entropy relative to the uniform prior whose answers lie within ``gamma`` of every
  noisy measurement so far (``|q(A) - m_q| <= gamma``), not one multiplicative step.
  It is computed by cyclic KL (I-)projections onto the measured constraints
  (``num_inner_updates`` sweeps after each round, over the selected query's marginal,
  then over all measured marginals at the end), warm-started from the previous round's
  distribution: for equality constraints the I-projection of the previous projection
  onto a smaller set is the projection of the prior (Csiszar's Pythagorean identity);
  with the gamma band it is the usual practical approximation. gamma is half the Laplace
  scale of one measurement.

One addition to the paper's loop: **every 1-way marginal is measured first**, with a
tenth of epsilon (Laplace on each of the d histograms, ``epsilon / 10d`` each, L1
sensitivity 2 under replace-one), as AIM starts (McKenna et al. 2022). The
largest-entropy distribution with those marginals, their product, is the start of the
rounds, and their cells are constraints of every projection (with the same gamma band,
half their Laplace scale). Uniform is PEP's start in the paper; single-cell rounds then
spend most of the budget finding the 1-way marginals. At 10K NVSS rows, epsilon 4,
(num_query 4096, T 100, 25 sweeps, 2-way), the max marginal error went from 0.047 (3
seeds) to 0.028 (6 seeds, all below 0.032), below independent columns' 0.029-0.033.

Privacy is MWEM's code path plus that measurement: each of ``num_iterations`` rounds
spends ``0.9 epsilon / T``, half on the exponential mechanism over the queries' errors
(sensitivity 1 on counts under replace-one) and half on the Laplace measurement of the
selected count (sensitivity 1); basic composition gives pure epsilon-DP for the fit.
The paper's zCDP variant (Gaussian measurements) is not used: a pure-DP shortlist keeps
Liu-Talwar's selection (twice one attempt), cheaper than Papernot-Steinke's.
"""

from __future__ import annotations

import itertools
from typing import ClassVar

import numpy as np

from synthflow.generators.hyperparameters import PEPHyperparameters
from synthflow.generators.mwem import MWEM, RangeQueries
from synthflow.transform import Domain

__all__ = ["PEP", "PEPHyperparameters", "marginal_cell_queries"]


def marginal_cell_queries(
    sizes: tuple[int, ...], num_query: int, order: int, rng: np.random.Generator
) -> RangeQueries:
    """A data-independent pool of ``order``-way marginal cells (duplicates allowed).

    Each query picks a column subset of size ``min(order, d)`` uniformly and a cell of
    that marginal uniformly; its answer is the cell's count.

    >>> q = marginal_cell_queries((2, 3, 4), 5, 2, np.random.default_rng(0))
    >>> q.n_queries, all(len(g) == 2 for g in q.groups)
    (5, True)
    """
    d = len(sizes)
    k = min(order, d)
    groups = list(itertools.combinations(range(d), k))
    lo = np.zeros((num_query, d), dtype=np.int64)
    hi = np.tile(np.array(sizes, dtype=np.int64), (num_query, 1))
    group = rng.integers(len(groups), size=num_query).astype(np.int64)
    for q in range(num_query):
        for axis in groups[int(group[q])]:
            cell = int(rng.integers(sizes[axis]))
            lo[q, axis], hi[q, axis] = cell, cell + 1
    return RangeQueries(sizes, groups, group, lo, hi)


class PEP(MWEM):
    """PEP (pure epsilon-DP): marginal-cell queries and gamma-relaxed entropy projections.

    Started from the measured 1-way marginals; MWEM's rounds, ledger charges and
    sampling; see the module docstring.

    Args:
        hyperparameters: Pool size, rounds, projection sweeps and marginal order.
        epsilon: Total budget of the fit.
    """

    name: ClassVar[str] = "pep"
    Hyperparameters: ClassVar[type] = PEPHyperparameters
    band_scales: ClassVar[float] = 0.5
    one_way_share: ClassVar[float] = 0.1

    def _queries(self, domain: Domain, rng: np.random.Generator) -> RangeQueries:
        hp = self.hyperparameters
        return marginal_cell_queries(domain.sizes, hp.num_query, hp.marginal, rng)

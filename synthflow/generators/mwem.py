"""MWEM over the dense contingency cube, vectorised (numpy only), pure epsilon-DP.

Hardt, Ligett, McSherry. "A Simple and Practical Algorithm for Differentially Private
Data Release." NeurIPS 2012.

The model is a distribution ``A`` over every cell of the public domain's cube (230,400
cells for the release binning), started uniform with total n (n is public). The
workload is ``num_query`` random *range queries* drawn independently of the data: each
constrains 1 to ``max_query_columns`` columns to a random interval of codes (like
smartnoise's random slices, but of low order so that they target the marginals the
release is judged on). Each of ``num_iterations`` rounds spends ``epsilon / T``:

* **select** (``epsilon / 2T``): the exponential mechanism picks the query with the
  largest error ``|q(A) - q(D)|``; replacing one row changes a count by at most one, so
  the utility has sensitivity 1;
* **measure** (``epsilon / 2T``): the Laplace mechanism adds noise of scale ``2T /
  epsilon`` to the selected count (sensitivity 1); repeated measurements of one query
  are averaged;
* **update**: ``num_inner_updates`` passes of multiplicative weights over all measured
  queries. A pass updates them simultaneously, ``A <- A * exp(sum_q 1_q (m_q - q(A)) /
  (2 n k))`` with k the number of measured queries, then renormalises to n.

Basic composition gives epsilon in total (pure DP). Everything after the noise is
post-processing.

Vectorisation: every query is a hyper-rectangle, so all answers come from one
prefix-sum (summed-area) table of ``A`` and 2^d corner look-ups per query, and the
weighted sum of query indicators is the prefix sum of a difference array with the same
corners. One pass costs a few sweeps over the cube instead of a Python loop per query.

Kept whole: MWEM's selection, measurement and multiplicative-weights update are one DP
mechanism.
"""

from __future__ import annotations

import itertools
import math
from typing import ClassVar

import numpy as np
import pandas as pd

from synthflow.generators.hyperparameters import MWEMHyperparameters
from synthflow.generators.protocol import GeneratorBase, check_codes, refuse_dense_domain
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Domain

__all__ = ["MWEM", "MWEMHyperparameters", "OneWayMarginals", "RangeQueries"]


class RangeQueries:
    """A batch of hyper-rectangle counting queries over a cube of shape ``sizes``.

    Query ``q`` counts the cells with ``lo[q, i] <= x_i < hi[q, i]`` on the axes of its
    group ``groups[group[q]]`` (a tuple of axes) and is unconstrained elsewhere. Answers
    come from the group's marginal (one reduction of the cube per group), its
    summed-area table and 2^k corner look-ups; the adjoint (a weighted sum of
    indicators) is a difference array per group, prefix-summed and broadcast.

    >>> rq = RangeQueries((2, 3), [(0, 1)], np.array([0]), np.array([[0, 1]]), np.array([[2, 3]]))
    >>> float(rq.answer(np.ones((2, 3)))[0])
    4.0
    """

    def __init__(
        self,
        sizes: tuple[int, ...],
        groups: list[tuple[int, ...]],
        group: np.ndarray,
        lo: np.ndarray,
        hi: np.ndarray,
    ) -> None:
        self.sizes = tuple(int(s) for s in sizes)
        self.groups = [tuple(g) for g in groups]
        self.n_queries = int(lo.shape[0])
        self.lo, self.hi, self.group = lo, hi, group
        self._members: list[np.ndarray] = []
        self._corners: list[np.ndarray] = []
        self._signs: list[np.ndarray] = []
        for g, axes in enumerate(self.groups):
            members = np.flatnonzero(group == g)
            padded = tuple(self.sizes[a] + 1 for a in axes)
            k = len(axes)
            bits = np.array(list(np.ndindex(*(2,) * k)), dtype=np.int64)  # (2^k, k)
            strides = np.array([math.prod(padded[i + 1 :]) for i in range(k)], dtype=np.int64)
            cols = np.asarray(axes, dtype=np.int64)
            glo, ghi = lo[np.ix_(members, cols)], hi[np.ix_(members, cols)]
            corners = np.where(bits[None, :, :] == 1, ghi[:, None, :], glo[:, None, :])
            self._members.append(members)
            self._corners.append((corners * strides).sum(axis=2))  # (members, 2^k)
            self._signs.append(np.where(bits.sum(axis=1) % 2 == 0, 1.0, -1.0))  # (-1)^|s|

    def _padded(self, axes: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(self.sizes[a] + 1 for a in axes)

    def answer(self, cube: np.ndarray) -> np.ndarray:
        """All query answers on ``cube``."""
        out = np.zeros(self.n_queries)
        d = len(self.sizes)
        for axes, members, corners, signs in zip(
            self.groups, self._members, self._corners, self._signs, strict=True
        ):
            if not len(members):
                continue
            other = tuple(i for i in range(d) if i not in axes)
            table = np.zeros(self._padded(axes))
            table[tuple(slice(1, None) for _ in axes)] = cube.sum(axis=other)
            for axis in range(table.ndim):
                table = table.cumsum(axis=axis)
            sign = signs * (-1.0) ** len(axes)  # (-1)^(k - |s|)
            out[members] = table.ravel()[corners] @ sign
        return out

    def fit_group(
        self,
        cube: np.ndarray,
        g: int,
        targets: np.ndarray,
        measured: np.ndarray,
        total: float,
        *,
        sweeps: int = 1,
        band: float = 0.0,
    ) -> float:
        """IPF sweeps over group ``g``'s measured queries, applied to ``cube`` in place.

        Works on the group's marginal: each query in turn is matched exactly (cells inside
        scaled by ``m / q``, outside by ``(total - m) / (total - q)``, the KL projection
        onto ``q = m``); the marginal's change is then broadcast onto the cube. With
        ``band > 0`` the constraint is ``|q - m| <= band`` (PEP's relaxation): a query
        inside its band is left alone, one outside is projected onto the nearer edge.

        Returns:
            The largest ``|m - q|`` seen before each query's step in the first sweep.
        """
        axes = self.groups[g]
        members = self._members[g][measured[self._members[g]]]
        if not len(members):
            return 0.0
        d = len(self.sizes)
        old = cube.sum(axis=tuple(i for i in range(d) if i not in axes))
        new = old.copy()
        worst = 0.0
        boxes = [tuple(slice(self.lo[q, a], self.hi[q, a]) for a in axes) for q in members]
        for sweep, (q, box) in itertools.product(range(sweeps), zip(members, boxes, strict=True)):
            new *= total / new.sum()
            inside, m = min(float(new[box].sum()), total), float(targets[q])
            if sweep == 0:
                worst = max(worst, abs(m - inside))
            if band > 0:
                if abs(m - inside) <= band:
                    continue
                m = min(max(m + band if inside > m else m - band, 0.0), total)
            new *= (total - m + 1.0) / (total - inside + 1.0)
            new[box] *= (m + 1.0) / (inside + 1.0) * (total - inside + 1.0) / (total - m + 1.0)
        new *= total / new.sum()
        ratio = np.divide(new, old, out=np.ones_like(new), where=old > 0)
        cube *= ratio.reshape([self.sizes[i] if i in axes else 1 for i in range(d)])
        return worst


def _renormalise(cube: np.ndarray, total: float, floor: float) -> None:
    """Floor every cell, then scale the cube to ``total`` (in place)."""
    np.maximum(cube, floor, out=cube)
    cube *= total / cube.sum()


def random_range_queries(
    sizes: tuple[int, ...], num_query: int, max_columns: int, rng: np.random.Generator
) -> RangeQueries:
    """Draw a data-independent workload of low-order range queries.

    Each query constrains k columns (k uniform in 1..max_columns) to a random non-empty
    interval of codes; queries are grouped by a canonical set of ``max_columns`` axes
    that contains their constrained ones.
    """
    d = len(sizes)
    width = min(max_columns, d)
    groups = list(itertools.combinations(range(d), width))
    lo = np.zeros((num_query, d), dtype=np.int64)
    hi = np.tile(np.array(sizes, dtype=np.int64), (num_query, 1))
    group = np.zeros(num_query, dtype=np.int64)
    for q in range(num_query):
        g = int(rng.integers(len(groups)))
        k = int(rng.integers(1, width + 1))
        group[q] = g
        for axis in rng.choice(groups[g], size=k, replace=False):
            a, b = sorted(int(x) for x in rng.integers(0, sizes[axis] + 1, size=2))
            if a == b:  # a non-empty interval: one bin
                a, b = (a, a + 1) if a < sizes[axis] else (a - 1, a)
            lo[q, axis], hi[q, axis] = a, b
    return RangeQueries(sizes, groups, group, lo, hi)


class OneWayMarginals:
    """Every 1-way marginal, measured once with Laplace noise, as cell constraints.

    Each of the d histograms gets ``epsilon / d``; replacing one row moves one count down
    and one up (L1 sensitivity 2), so each cell's noise has scale ``2 d / epsilon``
    (:attr:`scale`) and the d histograms compose to ``epsilon``. Everything after the
    noise is post-processing.
    """

    def __init__(self, sizes: tuple[int, ...], targets: np.ndarray, scale: float) -> None:
        d = len(sizes)
        k = sum(sizes)
        lo = np.zeros((k, d), dtype=np.int64)
        hi = np.tile(np.array(sizes, dtype=np.int64), (k, 1))
        axis = np.repeat(np.arange(d), sizes)
        cell = np.concatenate([np.arange(s) for s in sizes])
        lo[np.arange(k), axis], hi[np.arange(k), axis] = cell, cell + 1
        self.queries = RangeQueries(sizes, [(i,) for i in range(d)], axis, lo, hi)
        self.targets = targets
        self.scale = scale

    @classmethod
    def measure(
        cls, data: pd.DataFrame, domain: Domain, *, epsilon: float, rng: PrivacyRNG
    ) -> OneWayMarginals:
        """Measure the d histograms of ``data`` (the caller has charged ``epsilon``)."""
        d = len(domain.sizes)
        counts = np.concatenate(
            [
                np.bincount(data[name].to_numpy(dtype=np.int64), minlength=size)
                for name, size in zip(domain.names, domain.sizes, strict=True)
            ]
        ).astype(float)
        noisy = rng.laplace(counts, sensitivity=2.0, epsilon=epsilon / d)
        return cls(domain.sizes, np.clip(noisy, 0.0, len(data)), 2.0 * d / epsilon)

    def product(self, total: float) -> np.ndarray:
        """The product of the measured marginals, scaled to ``total`` (each smoothed by 1)."""
        cube = np.full(self.queries.sizes, total)
        for i, size in enumerate(self.queries.sizes):
            m = self.targets[self.queries.group == i] + 1.0
            cube *= (m / m.sum()).reshape([size if j == i else 1 for j in range(cube.ndim)])
        return cube

    def fit(self, cube: np.ndarray, total: float, *, band: float) -> float:
        """One projection sweep onto every measured cell (in place); the largest miss."""
        measured = np.ones(self.queries.n_queries, dtype=bool)
        return max(
            self.queries.fit_group(cube, i, self.targets, measured, total, band=band)
            for i in range(len(self.queries.sizes))
        )


def _cube(data: pd.DataFrame, domain: Domain) -> np.ndarray:
    key = np.zeros(len(data), dtype=np.int64)
    for name, size in zip(domain.names, domain.sizes, strict=True):
        key *= size
        key += data[name].to_numpy(dtype=np.int64)
    return np.bincount(key, minlength=domain.cells).astype(float).reshape(domain.sizes)


class MWEM(GeneratorBase):
    """Vectorised MWEM (pure epsilon-DP). See the module docstring.

    Args:
        hyperparameters: Workload size, rounds and inner updates.
        epsilon: Total budget of the fit.
    """

    name: ClassVar[str] = "mwem"
    Hyperparameters: ClassVar[type] = MWEMHyperparameters
    max_cells: ClassVar[int] = 1 << 22
    """Largest cube MWEM holds (4.2M cells, 32 MiB a copy; the births cube is 207K)."""

    band_scales: ClassVar[float] = 0.0
    """Half-width of each measured constraint, in Laplace scales of one measurement (0:
    equality constraints, as MWEM; PEP relaxes them)."""

    one_way_share: ClassVar[float] = 0.0
    """Share of epsilon spent up front on every 1-way marginal (0: none, as MWEM; PEP
    measures them first, see :class:`~synthflow.generators.pep.PEP`)."""

    def check_feasible(self, domain: Domain, n: int) -> None:
        """Refuse a cube above ``max_cells`` (every round rescans all of it)."""
        refuse_dense_domain(self.name, domain, self.max_cells)

    def _queries(self, domain: Domain, rng: np.random.Generator) -> RangeQueries:
        """The data-independent workload (drawn from the public domain only)."""
        hp = self.hyperparameters
        return random_range_queries(domain.sizes, hp.num_query, hp.max_query_columns, rng)

    def fit(self, data: pd.DataFrame, *, domain: Domain, ledger: Ledger, rng: PrivacyRNG) -> MWEM:
        """Run MWEM; charges ``epsilon`` first.

        Charged: the 1-way marginals' share (:attr:`one_way_share`, PEP only), then the
        rounds' selection and measurement halves.

        Raises:
            DataError: If the data fall outside the public domain.
            BudgetExceededError: If the ledger cannot afford ``epsilon``.
        """
        check_codes(data, domain)
        self.check_feasible(domain, len(data))
        hp = self.hyperparameters
        n, t_max = len(data), hp.num_iterations
        queries = self._queries(domain, rng.generator())
        true = queries.answer(_cube(data, domain))
        eps_one = self.epsilon * self.one_way_share
        eps_rounds = self.epsilon - eps_one
        eps_round = eps_rounds / t_max
        ones = self._charge_and_measure_ones(data, domain, ledger, rng, eps_one=eps_one)
        noisy_offsets = rng.laplace(np.zeros(t_max), sensitivity=1.0, epsilon=eps_round / 2)
        tolerance = 0.5 / (eps_round / 2)  # half the Laplace scale of one measurement
        band = self.band_scales / (eps_round / 2)
        if ones is None:
            cube = np.full(domain.sizes, n / domain.cells)
        else:  # the largest-entropy cube with these marginals: their product
            cube = ones.product(float(n))
            one_band = self.band_scales * ones.scale
        # Multiplicative updates can drive cells to denormals, whose ratios then overflow;
        # a floor of 1e-9 of the uniform cell count keeps them finite (adds <= 1e-9 n).
        floor = 1e-9 * n / domain.cells
        sums = np.zeros(hp.num_query)
        counts = np.zeros(hp.num_query)
        for t in range(t_max):
            answers = queries.answer(cube)
            q = rng.exponential_mechanism(
                np.abs(answers - true), sensitivity=1.0, epsilon=eps_round / 2
            )
            sums[q] += true[q] + noisy_offsets[t]
            counts[q] += 1
            # post-processing of the noisy measurements only from here on
            measured = counts > 0
            target = np.clip(np.divide(sums, counts, where=measured, out=np.zeros_like(sums)), 0, n)
            queries.fit_group(
                cube,
                int(queries.group[q]),
                target,
                measured,
                float(n),
                sweeps=hp.num_inner_updates,
                band=band,
            )
            if ones is not None:
                ones.fit(cube, float(n), band=one_band)
            _renormalise(cube, n, floor)
        for _ in range(hp.num_inner_updates):  # final sweeps over every group
            worst = max(
                queries.fit_group(cube, int(g), target, measured, float(n), band=band)
                for g in np.unique(queries.group[measured])
            )
            done = worst <= tolerance + band
            if ones is not None:
                worst_one = ones.fit(cube, float(n), band=one_band)
                done = done and worst_one <= (0.5 + self.band_scales) * ones.scale
            _renormalise(cube, n, floor)
            if done:
                break
        del true, sums, noisy_offsets
        self.domain_ = domain
        self.probabilities_ = (cube / cube.sum()).ravel()
        return self

    def _charge_and_measure_ones(
        self,
        data: pd.DataFrame,
        domain: Domain,
        ledger: Ledger,
        rng: PrivacyRNG,
        *,
        eps_one: float,
    ) -> OneWayMarginals | None:
        """Charge the fit's budget; the 1-way marginals measured with ``eps_one`` (if > 0).

        Charged in turn: the 1-way marginals' share (PEP only), then the rounds' selection
        and measurement halves of the rest; refused first if ``epsilon`` is unaffordable.
        """
        t_max = self.hyperparameters.num_iterations
        eps_rounds = self.epsilon - eps_one
        if not ledger.can_afford(self.epsilon):
            ledger.charge(f"{self.name} (total)", epsilon=self.epsilon)  # raises with amounts
        ones = None
        if eps_one > 0:
            ledger.charge(
                f"{self.name} 1-way marginals: Laplace on each of {len(domain.sizes)} "
                "histograms (replace-one L1 sensitivity 2 each)",
                epsilon=eps_one,
                mechanism="laplace",
                sensitivity=2.0,
            )
            ones = OneWayMarginals.measure(data, domain, epsilon=eps_one, rng=rng)
        ledger.charge(
            f"{self.name} selection: exponential mechanism x {t_max} on query errors",
            epsilon=eps_rounds / 2,
            mechanism="exponential",
            sensitivity=1.0,
        )
        ledger.charge(
            f"{self.name} measurement: Laplace x {t_max} on selected counts",
            epsilon=eps_rounds - eps_rounds / 2,
            mechanism="laplace",
            sensitivity=1.0,
        )
        return ones

    def sample(self, n: int, *, rng: np.random.Generator) -> pd.DataFrame:
        """Draw ``n`` rows from the learned cube (post-processing only)."""
        if not hasattr(self, "probabilities_"):
            raise RuntimeError("call fit() before sample()")
        if n < 0:
            raise ValueError(f"n ({n}) must be >= 0")
        flat = rng.choice(self.probabilities_.size, size=n, p=self.probabilities_)
        codes = np.unravel_index(flat, self.domain_.sizes)
        return pd.DataFrame(
            {name: c.astype(np.int16) for name, c in zip(self.domain_.names, codes, strict=True)}
        )

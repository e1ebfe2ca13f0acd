"""P-tables for cell key perturbation, generated from a few parameters.

A p-table says, for each cell value ``i`` and each of the K cell keys, which
perturbation the cell gets; with uniform cell keys, the share of keys giving ``j`` is
the probability ``P(i -> i + j)``. :func:`make_ptable` builds one from
:class:`PTableParams`:

* the perturbation *rate* (share of keys that change a count ``i``) falls smoothly
  from ``rate_small`` at ``i = 1`` towards ``rate_large``:
  ``rate(i) = rate_large + (rate_small - rate_large) * exp(-(i - 1) / decay)``;
* the non-zero perturbations are Laplace-shaped, ``P(j) ~ a**|j|`` with the discrete
  Laplace ratio ``a = rate / (2 - rate)``, capped at ``max_perturbation``;
* never a negative result: row ``i`` has no perturbation below ``-i``;
* unbiased (zero mean) rows for ``i >= 1``: the truncated rows of small counts are
  exponentially tilted so that their mean is 0, and the quantised key counts are then
  moved one key at a time until the mean is exactly 0;
* probabilities are multiples of 1/K (one key: 0.4% for K = 256, 0.02% for 4,096); the
  last row applies to every larger count;
* row 0 (zero cells, when ``zero_rate > 0``) only moves upwards.

References:
    Office for National Statistics, "Statistical disclosure control update and
    differential privacy suitability assessment", 2024 (Laplace-shaped 4,096-key
    p-tables, smoothed rates).
    Gießing, "Computational issues in the design of transition probabilities and
    disclosure risk estimation for additive noise", PSD 2016 (p-table design).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from synthflow.tables.topdown import largest_remainder

__all__ = ["PRESETS", "PTable", "PTableParams", "make_ptable"]


@dataclass(frozen=True, kw_only=True)
class PTableParams:
    """Parameters a p-table is generated from."""

    keys: int = 4096
    """Key range K (256 as in Census 2021, or 4,096)."""
    max_perturbation: int = 5
    """Largest absolute perturbation D."""
    rate_small: float = 0.5
    """Share of keys that change a count of 1."""
    rate_large: float = 0.25
    """Share of keys that change a large count (the limit of the rate)."""
    decay: float = 10.0
    """Counts over which the excess rate ``rate_small - rate_large`` falls by 1/e."""
    zero_rate: float = 0.0
    """Share of non-structural zero cells perturbed (upwards); 0 leaves zeros alone."""
    unbiased: bool = True
    """Make every row of counts >= 1 zero-mean (exactly, in whole keys)."""

    def __post_init__(self) -> None:
        if not (isinstance(self.keys, int) and self.keys >= 16):
            raise ValueError(f"keys ({self.keys!r}) must be an integer >= 16, e.g. 256 or 4096")
        d = self.max_perturbation
        if not (isinstance(d, int) and 1 <= d < self.keys // 4):
            raise ValueError(f"max_perturbation ({d!r}) must be an integer in [1, keys / 4)")
        if not 0 <= self.rate_large <= self.rate_small < 1:
            raise ValueError(
                f"rates must satisfy 0 <= rate_large ({self.rate_large}) <= rate_small "
                f"({self.rate_small}) < 1"
            )
        if not (self.decay > 0 and math.isfinite(self.decay)):
            raise ValueError(f"decay ({self.decay}) must be finite and > 0")
        if not 0 <= self.zero_rate < 1:
            raise ValueError(f"zero_rate ({self.zero_rate}) must be in [0, 1)")

    def rate(self, count: int) -> float:
        """Target perturbation rate of a count (``zero_rate`` for 0)."""
        if count <= 0:
            return self.zero_rate
        excess = self.rate_small - self.rate_large
        return self.rate_large + excess * math.exp(-(count - 1) / self.decay)

    @property
    def last_row(self) -> int:
        """First count from which every row is the same (at least ``max_perturbation``)."""
        excess = self.rate_small - self.rate_large
        # Beyond this count the excess rate is under half a key: rows quantise alike.
        tail = 1 + self.decay * math.log(2 * self.keys * excess) if excess > 0 else 1
        return max(self.max_perturbation, math.ceil(tail), 1)


PRESETS: dict[str, PTableParams] = {
    "256": PTableParams(keys=256, max_perturbation=3, rate_small=0.4, rate_large=0.15, decay=10),
    "4096": PTableParams(keys=4096, max_perturbation=6, rate_small=0.5, rate_large=0.25, decay=10),
}
"""Example p-tables: a Census-2021-like 256-key table and a higher-rate 4,096-key one."""


@dataclass(frozen=True, kw_only=True, eq=False)
class PTable:
    """A p-table: how many of the K keys give each perturbation, per cell value."""

    params: PTableParams
    outcomes: np.ndarray
    """Perturbation values ``-D..D``."""
    key_counts: np.ndarray
    """(rows, 2D + 1) int64; row ``i`` is for count ``i``, the last row for all larger."""
    lookup: np.ndarray = field(init=False)
    """(rows, K) perturbation per (count row, cell key)."""

    def __post_init__(self) -> None:
        rows = [np.repeat(self.outcomes, c) for c in self.key_counts]
        object.__setattr__(self, "lookup", np.asarray(rows, dtype=np.int64))

    @property
    def keys(self) -> int:
        """Key range K."""
        return self.params.keys

    @property
    def probabilities(self) -> np.ndarray:
        """(rows, 2D + 1) transition probabilities ``P(i -> i + j)``."""
        return self.key_counts / self.params.keys

    def rates(self) -> np.ndarray:
        """Perturbation rate of each row (1 - P(no change))."""
        zero = int(np.flatnonzero(self.outcomes == 0)[0])
        return 1.0 - self.probabilities[:, zero]

    def means(self) -> np.ndarray:
        """Mean perturbation of each row."""
        return self.probabilities @ self.outcomes

    def perturbation(self, values: np.ndarray, cell_keys: np.ndarray) -> np.ndarray:
        """Perturbation of cells with ``values`` (>= 0) and ``cell_keys`` (0..K-1)."""
        v = np.asarray(values, dtype=np.int64)
        k = np.asarray(cell_keys, dtype=np.int64)
        if (v < 0).any() or (k < 0).any() or (k >= self.keys).any():
            raise ValueError("values must be >= 0 and cell keys in [0, keys)")
        row = np.minimum(v, self.lookup.shape[0] - 1)
        return self.lookup[row, k]

    def to_frame(self) -> pd.DataFrame:
        """Published form: one row per (count, perturbation) with its key range."""
        recs = []
        last = self.key_counts.shape[0] - 1
        for i, counts in enumerate(self.key_counts):
            start = 0
            for j, c in zip(self.outcomes, counts, strict=True):
                if c:
                    recs.append(
                        {
                            "pcv": f"{i}+" if i == last else str(i),
                            "pvalue": int(j),
                            "probability": c / self.keys,
                            "ckey_from": start,
                            "ckey_to": start + int(c) - 1,
                        }
                    )
                    start += int(c)
        return pd.DataFrame(recs)


def _tilt(support: np.ndarray, ratio: float, unbiased: bool) -> np.ndarray:
    """Laplace-shaped weights over ``support``, tilted to mean 0 if required."""
    base = np.abs(support) * math.log(ratio)

    def weights(theta: float) -> np.ndarray:
        z = base + theta * support
        w = np.exp(z - z.max())
        return w / w.sum()

    if not unbiased or support.min() >= 0 or -support.min() == support.max():
        return weights(0.0)
    theta = brentq(lambda t: float(weights(t) @ support), -60.0, 60.0, xtol=1e-14)
    return weights(theta)


def _moves(
    counts: np.ndarray, outcomes: np.ndarray, allowed: np.ndarray, pool: Sequence[int]
) -> list[tuple[int, int, int]]:
    """Single-key moves (from, to, change of the key sum) between nearby outcomes."""
    return [
        (a, b, int(outcomes[b] - outcomes[a]))
        for a in pool
        if counts[a] > 0
        for b in pool
        if b != a and allowed[b] and abs(int(outcomes[b] - outcomes[a])) <= 2
    ]


def _fix_mean(counts: np.ndarray, target: np.ndarray, outcomes: np.ndarray) -> None:
    """Move keys between outcomes (in place) until the row's key sum is exactly 0.

    Moves between non-zero outcomes come first (they keep the rate): the cheapest single
    move that brings the sum closer to 0, else the cheapest pair of moves. Only if no
    such move exists does a key move to or from the no-change outcome.
    """
    zero = int(np.flatnonzero(outcomes == 0)[0])
    nonzero = [k for k in range(len(outcomes)) if k != zero]
    allowed = np.asarray(target > 0)
    allowed[zero] = True

    def cost(a: int, b: int) -> float:  # growth of the squared distance to the target
        return float(2 * (target[a] - counts[a]) + 2 * (counts[b] - target[b]) + 2)

    for _ in range(10_000):
        r = int(counts @ outcomes)
        if r == 0:
            return
        plan: list[tuple[int, int]] = []
        for pool in (nonzero, list(range(len(outcomes)))):
            moves = _moves(counts, outcomes, allowed, pool)
            single = [(cost(a, b), a, b) for a, b, st in moves if abs(r + st) < abs(r)]
            if single:
                plan = [min(single)[1:]]
                break
            pairs = [
                (cost(a, b) + cost(c, e), (a, b), (c, e))
                for a, b, s1 in moves
                for c, e, s2 in moves
                if abs(r + s1 + s2) < abs(r) and (c != a or counts[a] > 1)
            ]
            if pairs:
                best = min(pairs)
                plan = [best[1], best[2]]
                break
        if not plan:
            raise ValueError("cannot make a p-table row zero-mean; raise keys or max_perturbation")
        for a, b in plan:
            counts[a] -= 1
            counts[b] += 1
    raise ValueError("p-table row did not reach zero mean")  # pragma: no cover


def make_ptable(params: PTableParams) -> PTable:
    """Generate a p-table from its parameters (see the module docstring).

    >>> pt = make_ptable(PTableParams(keys=256, max_perturbation=2, rate_small=0.3,
    ...                               rate_large=0.1, decay=5))
    >>> bool((pt.key_counts.sum(axis=1) == 256).all()), pt.means()[1:].tolist()[:3]
    (True, [0.0, 0.0, 0.0])
    """
    d, k = params.max_perturbation, params.keys
    outcomes = np.arange(-d, d + 1)
    zero = d
    rows = []
    last = params.last_row
    for i in range(last + 1):
        rate = params.rate(i) if i < last else params.rate_large
        stay = round(k * (1.0 - rate))
        if i >= 1 and params.unbiased:
            if d == 1:  # a zero-mean +-1 row needs an even number of moving keys
                stay = 2 * round(k * (1.0 - rate) / 2)
            elif stay == k - 1:  # one moving key cannot have mean 0: use 0 or 2
                stay = k - 2 if k * rate >= 1 else k
        counts = np.zeros(len(outcomes), dtype=np.int64)
        counts[zero] = stay
        moving = k - stay
        lo = 1 if i == 0 else -min(i, d)
        support = np.array([j for j in range(lo, d + 1) if j != 0])
        target = np.zeros(len(outcomes))
        if moving > 0:
            ratio = rate / (2.0 - rate)
            q = _tilt(support, ratio, params.unbiased and i >= 1)
            idx = support + d
            share = largest_remainder((moving * q)[None, :], np.array([moving]), rng=None)[0]
            counts[idx] = share
            target[idx] = moving * q
            target[zero] = stay
            if params.unbiased and i >= 1:
                _fix_mean(counts, target, outcomes)
        rows.append(counts)
    return PTable(params=params, outcomes=outcomes, key_counts=np.asarray(rows))

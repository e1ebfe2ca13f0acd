"""The top-down DP method (ONS DP pilot 2021, method 2).

For each table: a noisy grand total (rounded, at least 0), then the national table with
noise, negatives set to 0, scaled to the total and integerised by largest-remainder
rounding; then each geography level with noise, split within each parent cell in
proportion to its noisy children and integerised the same way. Every level is
therefore additive: the children of a cell sum exactly to it, and the national table
sums to the total. The budget of a table is split over its levels top to bottom; the
pilot's four-level split is 0.01, 0.05, 0.165, 0.775 (0.01 for the total, the rest in
proportion to the square root of the number of cells), and the same rule is used for
other depths. Under ``replace_one`` the total n is public: it is released exactly and
its share goes to the other levels in proportion.

Largest-remainder rounding (Hamilton's method) floors every share and gives the units
still missing to the largest fractional parts, ties broken at random.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from synthflow.errors import ConfigError
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.tables._noise import (
    MECHANISMS,
    NEIGHBOURINGS,
    Mechanism,
    Neighbouring,
    add_noise,
    charged_noise,
    total_sensitivity,
)
from synthflow.tables.tabulate import CountTable, ReleasedTable

__all__ = [
    "ONS_SPLIT",
    "TopDownOptions",
    "default_split",
    "largest_remainder",
    "proportional_allocation",
    "top_down",
]

ONS_SPLIT = (0.01, 0.05, 0.165, 0.775)
"""The pilot's split over total, national, region and lower geography."""


def default_split(cells: Sequence[int]) -> tuple[float, ...]:
    """Budget shares of the levels (total first) of a table.

    Four levels get the pilot's :data:`ONS_SPLIT`; otherwise the total gets 0.01 (or
    everything if it is the only level) and the other levels share the rest in
    proportion to the square root of their number of cells, the pilot's rule.

    >>> default_split([1, 12])
    (0.01, 0.99)
    """
    if len(cells) == 4:
        return ONS_SPLIT
    if len(cells) == 1:
        return (1.0,)
    roots = [math.sqrt(c) for c in cells[1:]]
    return (0.01, *(0.99 * r / math.fsum(roots) for r in roots))


@dataclass(frozen=True, kw_only=True)
class TopDownOptions:
    """Options of the top-down method."""

    epsilon: float
    """Total epsilon, split equally over tables, then over levels by ``split``."""
    mechanism: Mechanism = "laplace"
    """Noise of every level."""
    delta: float = 0.0
    """Total delta (Gaussian only)."""
    split: tuple[float, ...] | None = None
    """Shares of the levels, total first (default :func:`default_split`)."""
    neighbouring: Neighbouring = "replace_one"
    """Neighbouring relation for the sensitivities."""

    def __post_init__(self) -> None:
        if not (self.epsilon > 0 and math.isfinite(self.epsilon)):
            raise ValueError(f"epsilon ({self.epsilon}) must be finite and > 0")
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"mechanism ({self.mechanism!r}) must be one of {MECHANISMS}")
        if self.neighbouring not in NEIGHBOURINGS:
            raise ValueError(f"neighbouring ({self.neighbouring!r}) must be one of {NEIGHBOURINGS}")
        if self.mechanism == "gaussian" and not 0 < self.delta < 1:
            raise ValueError(f"delta ({self.delta}) must be in (0, 1) for Gaussian noise")
        if self.mechanism != "gaussian" and self.delta != 0:
            raise ValueError(f"delta ({self.delta}) must be 0 for the {self.mechanism} mechanism")
        if self.split is not None and (
            any(not (s >= 0) for s in self.split) or not math.isclose(math.fsum(self.split), 1.0)
        ):
            raise ValueError(f"split ({self.split}) must be non-negative shares summing to 1")


def largest_remainder(
    targets: np.ndarray,
    totals: np.ndarray,
    *,
    rng: np.random.Generator | None,
    eligible: np.ndarray | None = None,
) -> np.ndarray:
    """Integerise each row of ``targets`` so that it sums to ``totals`` (Hamilton).

    Args:
        targets: (rows, m) non-negative shares; each row sums to its total.
        totals: (rows,) non-negative integers.
        rng: Breaks ties between equal remainders at random (post-processing
            randomness); None breaks them by position (for public artefacts).
        eligible: Optional (rows, m) mask; ineligible cells never receive a unit.

    Returns:
        (rows, m) int64 array with ``floor(t) <= x <= floor(t) + 1`` and row sums
        equal to ``totals``.
    """
    t = np.asarray(targets, dtype=np.float64)
    if t.ndim != 2:
        raise ValueError(f"targets must be 2-D (rows, cells), got shape {t.shape}")
    tot = np.asarray(totals, dtype=np.int64)
    base = np.floor(t + 1e-9)  # a share of 2.9999999999 from float error counts as 3
    deficit = tot - base.sum(axis=1).astype(np.int64)
    rem = t - base
    if not np.isfinite(t).all() or (np.abs(deficit) > t.shape[1]).any():
        raise ValueError("targets must be finite and each row must sum to its total")
    if eligible is not None:
        rem = np.where(eligible, rem, -np.inf)
    while (deficit < 0).any():  # only from float error: take a unit back from the largest
        rows = deficit < 0
        idx = np.argmax(np.where(base[rows] > 0, base[rows], -1), axis=1)
        base[np.flatnonzero(rows), idx] -= 1
        deficit[rows] += 1
    tie = rng.random(t.shape) if rng is not None else np.zeros(t.shape)
    order = np.lexsort((tie, -rem), axis=1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(t.shape[1])[None, :].repeat(t.shape[0], 0), axis=1)
    return (base + (rank < deficit[:, None])).astype(np.int64)


def proportional_allocation(
    weights: np.ndarray,
    totals: np.ndarray,
    *,
    rng: np.random.Generator,
    eligible: np.ndarray | None = None,
) -> np.ndarray:
    """Split each integer total over its row in proportion to non-negative ``weights``.

    A row whose weights are all zero is split evenly over its eligible cells.

    Raises:
        ValueError: If a positive total has no eligible cell.
    """
    w = np.maximum(np.asarray(weights, dtype=np.float64), 0.0)
    tot = np.asarray(totals, dtype=np.int64)
    ok = np.ones_like(w, dtype=bool) if eligible is None else np.asarray(eligible, dtype=bool)
    w = np.where(ok, w, 0.0)
    if ((tot > 0) & ~ok.any(axis=1)).any():
        raise ValueError("a positive total has no eligible cell to go to")
    sums = w.sum(axis=1)
    w = np.where((sums == 0)[:, None], ok.astype(np.float64), w)
    sums = w.sum(axis=1)
    safe = np.where(sums > 0, sums, 1.0)
    targets = (w / safe[:, None]) * tot[:, None]  # shares first: no overflow for tiny w
    return largest_remainder(targets, tot, rng=rng, eligible=ok)


def _shares(options: TopDownOptions, group: Sequence[CountTable]) -> list[float]:
    cells = [1, *(lv.spec.cells for lv in group)]
    shares = list(options.split) if options.split is not None else list(default_split(cells))
    if len(shares) != len(cells):
        raise ConfigError(
            f"split has {len(shares)} shares but table {group[0].spec.table!r} has "
            f"{len(cells)} levels (total, national, geography...); give one share per level "
            "or leave the split to its default"
        )
    if total_sensitivity(options.neighbouring) == 0:
        rest = math.fsum(shares[1:])
        if rest <= 0:
            raise ValueError(f"split ({shares}) leaves nothing for the table levels")
        shares = [0.0, *(s / rest for s in shares[1:])]
    return shares


def top_down(
    groups: Sequence[Sequence[CountTable]],
    options: TopDownOptions,
    *,
    ledger: Ledger,
    rng: PrivacyRNG,
) -> list[ReleasedTable]:
    """Release every table top-down; each level is additive into the one above.

    Args:
        groups: True counts, one sequence of levels (coarsest first) per table.
        options: Mechanism, budget and split.
        ledger: Charged once per noisy level before its noise is drawn.
        rng: Source of randomness (noise and tie breaks).

    Raises:
        ConfigError: If ``options.split`` does not give one share per level of a table
            (checked for every table before anything is charged).
        BudgetExceededError: If the ledger cannot afford a level.
    """
    if not groups:
        return []
    eps_table = options.epsilon / len(groups)
    delta_table = options.delta / len(groups)
    post = rng.generator()
    out: list[ReleasedTable] = []
    all_shares = [_shares(options, group) for group in groups]  # check all before charging
    for group, shares in zip(groups, all_shares, strict=True):
        total = _total(group[0], options, eps_table, delta_table, shares[0], ledger, rng)
        parent: np.ndarray = np.array([total], dtype=np.int64)
        for lv, share in zip(group, shares[1:], strict=True):
            eps, delta = eps_table * share, delta_table * share
            noisy = charged_noise(
                lv.counts,
                what=f"table {lv.spec.name} (top-down)",
                ledger=ledger,
                mechanism=options.mechanism,
                epsilon=eps,
                delta=delta,
                neighbouring=options.neighbouring,
                rng=rng,
            )
            values = _split_parents(lv, noisy, parent, post)
            out.append(
                ReleasedTable(
                    spec=lv.spec,
                    values=values.astype(np.float64),
                    method="top-down",
                    epsilon=options.epsilon,
                )
            )
            parent = values
    return out


def _total(  # noqa: PLR0917  (one table's budget and sources)
    national: CountTable,
    options: TopDownOptions,
    eps_table: float,
    delta_table: float,
    share: float,
    ledger: Ledger,
    rng: PrivacyRNG,
) -> int:
    """A table's released grand total: n itself when public (share 0), else noisy (>= 0)."""
    name, n = national.spec.table, national.total
    if share == 0:
        ledger.charge(f"table {name} total (public n)", epsilon=0.0, mechanism="none")
        return n
    ledger.charge(
        f"table {name} total (top-down)",
        epsilon=eps_table * share,
        delta=delta_table * share,
        mechanism=options.mechanism,
        sensitivity=total_sensitivity(options.neighbouring),
    )
    noisy_total = add_noise(
        np.array([float(n)]),
        mechanism=options.mechanism,
        epsilon=eps_table * share,
        delta=delta_table * share,
        neighbouring="add_remove",
        rng=rng,
    )
    return max(int(np.rint(noisy_total[0])), 0)


def _split_parents(
    lv: CountTable, noisy: np.ndarray, parent: np.ndarray, post: np.random.Generator
) -> np.ndarray:
    """A level's counts: each parent cell split over its children as their noisy counts."""
    d = lv.spec.depth
    ok = ~lv.spec.structural
    w2: np.ndarray
    ok2: np.ndarray
    if d == 0:
        w2, ok2 = noisy.reshape(1, -1), ok.reshape(1, -1)
    else:
        w2 = np.moveaxis(noisy, d - 1, -1).reshape(-1, lv.spec.shape[d - 1])
        ok2 = np.moveaxis(ok, d - 1, -1).reshape(w2.shape)
    alloc = proportional_allocation(w2, parent.reshape(-1), rng=post, eligible=ok2)
    shape = lv.spec.shape
    if d == 0:
        return alloc.reshape(shape)
    moved = (*shape[: d - 1], *shape[d:], shape[d - 1])
    return np.moveaxis(alloc.reshape(moved), -1, d - 1)

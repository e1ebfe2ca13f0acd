"""DP noise on tables, the independent method (ONS DP pilot 2021, method 1).

Every released table level gets its own noise; the total budget is split equally over
all released levels (sequential composition). Each noisy count is rounded to the
nearest integer, which is post-processing: with Laplace(1/ε) noise a cell is
unchanged with probability P(-1/2 < Y < 1/2) = 1 - exp(-ε/2) (0.0488 at ε = 0.1,
0.9933 at ε = 10; under synthflow's ``replace_one`` relation the scale is 2/ε and the
probability 1 - exp(-ε/4)). Zero cells get noise like every other cell, except declared
structural zeros, which are public and stay 0. Clipping negatives to 0 is optional
(``nonnegative``): it keeps DP but biases rare categories upward.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.tables._noise import (
    MECHANISMS,
    NEIGHBOURINGS,
    Mechanism,
    Neighbouring,
    charged_noise,
)
from synthflow.tables.tabulate import CountTable, ReleasedTable

__all__ = ["NoiseOptions", "independent_noise"]


@dataclass(frozen=True, kw_only=True)
class NoiseOptions:
    """Options of the independent DP method."""

    mechanism: Mechanism = "laplace"
    """``laplace``, ``geometric`` or ``gaussian``."""
    epsilon: float
    """Total epsilon over every released table level (split equally)."""
    delta: float = 0.0
    """Total delta (Gaussian only), split like epsilon."""
    neighbouring: Neighbouring = "replace_one"
    """Neighbouring relation for the sensitivities (``add_remove``: the ONS setting)."""
    nonnegative: bool = False
    """Clip negative published counts to 0 (post-processing; biased upward)."""

    def __post_init__(self) -> None:
        if self.mechanism not in MECHANISMS:
            raise ValueError(f"mechanism ({self.mechanism!r}) must be one of {MECHANISMS}")
        if not (self.epsilon > 0 and math.isfinite(self.epsilon)):
            raise ValueError(f"epsilon ({self.epsilon}) must be finite and > 0")
        if self.neighbouring not in NEIGHBOURINGS:
            raise ValueError(f"neighbouring ({self.neighbouring!r}) must be one of {NEIGHBOURINGS}")
        if self.mechanism == "gaussian":
            if not 0 < self.delta < 1:
                raise ValueError(
                    f"delta ({self.delta}) must be in (0, 1) for Gaussian noise; pass e.g. 1e-6"
                )
        elif self.delta != 0:
            raise ValueError(f"delta ({self.delta}) must be 0 for the {self.mechanism} mechanism")


def independent_noise(
    groups: Sequence[Sequence[CountTable]],
    options: NoiseOptions,
    *,
    ledger: Ledger,
    rng: PrivacyRNG,
) -> list[ReleasedTable]:
    """Add independent noise to every level of every table and round to integers.

    Args:
        groups: True counts, one sequence of levels per table.
        options: Mechanism, total budget and post-processing.
        ledger: Charged once per level, before its noise is drawn.
        rng: Source of randomness.

    Raises:
        BudgetExceededError: If the ledger cannot afford a level.
    """
    levels = [lv for g in groups for lv in g]
    if not levels:
        return []
    eps = options.epsilon / len(levels)
    delta = options.delta / len(levels)
    out = []
    for lv in levels:
        noisy = charged_noise(
            lv.counts,
            what=f"table {lv.spec.name} ({options.mechanism}, independent)",
            ledger=ledger,
            mechanism=options.mechanism,
            epsilon=eps,
            delta=delta,
            neighbouring=options.neighbouring,
            rng=rng,
        )
        values = np.rint(noisy)
        values[lv.spec.structural] = 0.0
        if options.nonnegative:
            values = np.maximum(values, 0.0)
        out.append(
            ReleasedTable(
                spec=lv.spec, values=values, method=options.mechanism, epsilon=options.epsilon
            )
        )
    return out

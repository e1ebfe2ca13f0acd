"""The epsilon a noise-dominated criterion would need ([ux] 3).

``validate --rows N``, ``space --rows N`` and the release's pre-flight name, for each
criterion the noise rule (:mod:`synthflow.acceptance.noise_check`) flags, the least
epsilon at which a perfect candidate passes its release in two of three, the other
budgets as they are. Public figures only (the spec, n and its public sample).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

from synthflow.criteria.noise import PERFECT_PASS_MIN

if TYPE_CHECKING:
    import pandas as pd

    from synthflow.config.model import ReleaseSpec
    from synthflow.criteria.noise import NoiseFigure
    from synthflow.transform import Transformer

__all__ = ["needed_epsilon", "needed_line"]


def needed_epsilon(
    spec: ReleaseSpec,
    transformer: Transformer,
    n: int,
    public: pd.DataFrame | None,
    name: str,
    *,
    fit_once: bool = False,
    limit: float = 100.0,
) -> float | None:
    """The least epsilon of criterion ``name`` at which the rule is met at ``n`` rows.

    That is, a perfect candidate passes its release in at least two of three, the other
    budgets as they are. None when even ``limit`` times its epsilon does not: another
    part's noise decides (TSTR's includes the regression fit's), or the threshold is out
    of reach. A geometric search, then bisection to about 1%: public figures only.
    """
    codes = None if public is None else transformer.forward(public).to_numpy(np.int64)
    start = spec.criterion(name).epsilon

    def met(epsilon: float) -> bool:
        criteria = tuple(
            dataclasses.replace(c, epsilon=epsilon) if c.name == name else c for c in spec.criteria
        )
        changed = dataclasses.replace(spec, criteria=criteria)
        c = changed.criterion(name)
        figure = c.impl.noise_figure(c, changed, transformer, n, codes, fit_once=fit_once)
        return figure.perfect_pass >= PERFECT_PASS_MIN

    low, high = start, start
    while not met(high):
        low, high = high, high * 2
        if high > start * limit:
            return None
    for _ in range(8):  # (high / low) <= 2: eight halvings of the log-ratio, under 0.3%
        mid = math.sqrt(low * high)
        low, high = (low, mid) if met(mid) else (mid, high)
    return high


def needed_line(
    spec: ReleaseSpec,
    transformer: Transformer,
    n: int,
    public: pd.DataFrame | None,
    warnings: list[NoiseFigure],
    *,
    fit_once: bool = False,
) -> str:
    """One line: :func:`needed_epsilon` of each noise-dominated criterion in ``warnings``."""
    needs = []
    for w in warnings:
        e = needed_epsilon(spec, transformer, n, public, w.criterion, fit_once=fit_once)
        now = spec.criterion(w.criterion).epsilon
        needs.append(
            f"{w.criterion} {e:.3g} (now {now:g})"
            if e is not None
            else f"{w.criterion}: not by its own epsilon (up to 100 times {now:g})"
        )
    return (
        "the epsilon each would need for a perfect candidate to pass two releases in three "
        f"(the other budgets as they are): {'; '.join(needs)}"
    )

"""Whether a criterion can pass at n rows even without noise ([ux] 3).

Two samples of the same population differ: at small n, even two independent samples of
the spec's public sample may score above a threshold (births at 20,000 rows:
faithfulness about 0.17 unmatched against 0.05). No epsilon makes such a criterion
pass, and a noise check cannot say so. :func:`without_noise` scores two disjoint
samples of ``n`` rows of the public sample against each other, exactly: public data
only, seeded, nothing charged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from synthflow.acceptance.evaluate import exact_values

if TYPE_CHECKING:
    import pandas as pd

    from synthflow.config.model import ReleaseSpec
    from synthflow.transform import Transformer

__all__ = ["unattainable", "without_noise"]


def without_noise(
    spec: ReleaseSpec, transformer: Transformer, n: int, public: pd.DataFrame, *, seed: int = 0
) -> dict[str, float]:
    """Each criterion's exact value between two samples of ``n`` rows of ``public``.

    Disjoint samples without replacement when the public sample holds ``2 n`` rows or
    more, else two samples with replacement (rows may then repeat across the two, which
    flatters faithfulness: the figure is then a lower bound).
    """
    codes = transformer.forward(public)
    gen = np.random.default_rng(seed)  # a public computation: seeded
    m = len(codes)
    if m >= 2 * n:
        order = gen.permutation(m)
        a, b = order[:n], order[n : 2 * n]
    else:
        a, b = gen.integers(0, m, n), gen.integers(0, m, n)
    first = codes.iloc[a].reset_index(drop=True)
    second = codes.iloc[b].reset_index(drop=True)
    return exact_values(spec, transformer, first, second)


def unattainable(spec: ReleaseSpec, scores: dict[str, float]) -> dict[str, float]:
    """The criteria that two samples already fail (value at or above the threshold)."""
    return {c.name: scores[c.name] for c in spec.criteria if scores[c.name] >= c.threshold}

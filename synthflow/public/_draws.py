"""Drawing from published probabilities (the public summaries' sampler)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from synthflow.errors import ConfigError

__all__ = ["_draw", "_probabilities"]


def _probabilities(p: Sequence[float], *, where: str) -> np.ndarray:
    arr = np.asarray(p, dtype=float)
    if arr.ndim != 1 or arr.size == 0 or (arr < 0).any() or not np.isfinite(arr).all():
        raise ConfigError(f"{where}: probabilities must be a non-empty list of numbers >= 0")
    total = arr.sum()
    if abs(total - 1.0) > 1e-3:
        raise ConfigError(f"{where}: probabilities sum to {total:.6f}, not 1")
    return arr / total


def _draw(values: np.ndarray, probabilities: np.ndarray, u: np.ndarray) -> np.ndarray:
    cdf = np.cumsum(probabilities)
    idx = np.searchsorted(cdf, u * cdf[-1], side="right")
    return values[np.minimum(idx, len(values) - 1)]

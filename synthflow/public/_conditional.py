"""Conditional quantiles and means of the public summaries."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synthflow.errors import ConfigError
from synthflow.public._groups import group_bounds, group_index

__all__ = ["ConditionalMeans", "ConditionalQuantiles"]


@dataclass(frozen=True, kw_only=True)
class ConditionalQuantiles:
    """Quantiles of ``target`` within each group of ``given`` (a 2-way summary).

    Draws invert the piecewise-linear quantile function through the stored points and
    extend its first and last pieces linearly below the lowest and above the highest level.
    """

    given: str
    """Conditioning variable."""
    target: str
    """Variable whose quantiles are stored."""
    groups: tuple[str, ...]
    """Group labels of ``given``."""
    levels: tuple[float, ...]
    """Quantile levels, strictly increasing in (0, 1)."""
    quantiles: tuple[tuple[float, ...], ...]
    """One row of quantiles (at ``levels``) per group."""

    def __post_init__(self) -> None:
        lv = np.asarray(self.levels, dtype=float)
        if lv.size < 2 or (np.diff(lv) <= 0).any() or lv[0] <= 0 or lv[-1] >= 1:
            raise ConfigError(f"{self.target} quantiles: levels must increase strictly in (0, 1)")
        if len(self.groups) != len(self.quantiles):
            raise ConfigError(f"{self.target} by {self.given}: one row of quantiles per group")
        for label, row in zip(self.groups, self.quantiles, strict=True):
            group_bounds(label)
            if len(row) != lv.size or (np.diff(np.asarray(row, dtype=float)) < 0).any():
                raise ConfigError(
                    f"{self.target} given {self.given} {label}: need {lv.size} "
                    "non-decreasing quantiles"
                )

    @classmethod
    def estimate(
        cls,
        given: str,
        target: str,
        frame: pd.DataFrame,
        groups: Sequence[str],
        levels: Sequence[float],
        *,
        digits: int = 1,
    ) -> ConditionalQuantiles:
        """Quantiles of ``frame[target]`` within each group of ``frame[given]``."""
        gi = group_index(frame[given].to_numpy(), groups, variable=given)
        y = frame[target].to_numpy(dtype=float)
        rows = []
        for i, label in enumerate(groups):
            if not (gi == i).any():
                raise ConfigError(f"{target} by {given}: no rows in group {label}; merge groups")
            q = np.quantile(y[gi == i], levels)
            rows.append(tuple(round(float(v), digits) for v in np.maximum.accumulate(q)))
        return cls(
            given=given, target=target, groups=tuple(groups), levels=tuple(levels),
            quantiles=tuple(rows),
        )  # fmt: skip

    def _inverse(self, i: int, u: np.ndarray) -> np.ndarray:
        lv, q = np.asarray(self.levels, dtype=float), np.asarray(self.quantiles[i], dtype=float)
        val = np.interp(u, lv, q)
        lo_slope = (q[1] - q[0]) / (lv[1] - lv[0])
        hi_slope = (q[-1] - q[-2]) / (lv[-1] - lv[-2])
        val = np.where(u < lv[0], q[0] - lo_slope * (lv[0] - u), val)
        return np.where(u > lv[-1], q[-1] + hi_slope * (u - lv[-1]), val)

    def draw(self, given_values: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Values of ``target`` (floats) for the ``given`` values and uniforms ``u``."""
        gi = group_index(given_values, self.groups, variable=self.given)
        out = np.empty(len(u), dtype=float)
        for i in range(len(self.groups)):
            out[gi == i] = self._inverse(i, u[gi == i])
        return out

    def means(self) -> np.ndarray:
        """Mean of the distribution drawn from, per group."""
        u = (np.arange(20_000) + 0.5) / 20_000
        return np.array([self._inverse(i, u).mean() for i in range(len(self.groups))])

    def to_dict(self) -> dict[str, Any]:
        """YAML-ready mapping."""
        return {
            "variables": [self.given, self.target],
            "groups": list(self.groups),
            "levels": list(self.levels),
            "quantiles": [list(row) for row in self.quantiles],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ConditionalQuantiles:
        """Inverse of :meth:`to_dict`."""
        given, target = d["variables"]
        return cls(
            given=given,
            target=target,
            groups=tuple(str(g) for g in d["groups"]),
            levels=tuple(float(v) for v in d["levels"]),
            quantiles=tuple(tuple(float(v) for v in row) for row in d["quantiles"]),
        )


@dataclass(frozen=True, kw_only=True)
class ConditionalMeans:
    """Mean of ``target`` within each group of ``given`` (a 2-way summary)."""

    given: str
    """Conditioning variable."""
    target: str
    """Variable whose means are stored."""
    groups: tuple[str, ...]
    """Group labels of ``given``."""
    means: tuple[float, ...]
    """Mean of ``target`` per group."""

    def __post_init__(self) -> None:
        for label in self.groups:
            group_bounds(label)
        if len(self.groups) != len(self.means) or not all(np.isfinite(self.means)):
            raise ConfigError(f"{self.target} by {self.given}: one finite mean per group")

    @classmethod
    def estimate(
        cls, given: str, target: str, frame: pd.DataFrame, groups: Sequence[str], *, digits: int = 2
    ) -> ConditionalMeans:
        """Means of ``frame[target]`` within each group of ``frame[given]``."""
        gi = group_index(frame[given].to_numpy(), groups, variable=given)
        y = frame[target].to_numpy(dtype=float)
        means = []
        for i, label in enumerate(groups):
            if not (gi == i).any():
                raise ConfigError(f"{target} by {given}: no rows in group {label}; merge groups")
            means.append(round(float(y[gi == i].mean()), digits))
        return cls(given=given, target=target, groups=tuple(groups), means=tuple(means))

    def to_dict(self) -> dict[str, Any]:
        """YAML-ready mapping."""
        return {
            "variables": [self.given, self.target],
            "groups": list(self.groups),
            "means": list(self.means),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ConditionalMeans:
        """Inverse of :meth:`to_dict`."""
        given, target = d["variables"]
        return cls(
            given=given,
            target=target,
            groups=tuple(str(g) for g in d["groups"]),
            means=tuple(float(v) for v in d["means"]),
        )

"""The low-order summaries the NVSS-like simulator is calibrated from, and how to draw.

Three shapes only, each over one or two variables:

* :class:`Distribution`: a 1-way distribution of an integer variable.
* :class:`ConditionalDistribution`: a 2-way table, the distribution of ``target`` within
  each group of ``given`` (groups are labels such as ``"<18"``, ``"18-19"``, ``"7"``,
  ``">44"``).
* :class:`ConditionalQuantiles`: quantiles of ``target`` within each group of ``given``
  (a 2-way summary).
* :class:`ConditionalMeans`: the mean of ``target`` within each group of ``given``
  (a 2-way summary).

Each converts to and from plain YAML-ready mappings and can draw values given uniforms,
so that all randomness stays with the caller's generator.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synthflow.errors import ConfigError
from synthflow.public._conditional import ConditionalMeans, ConditionalQuantiles
from synthflow.public._draws import _draw, _probabilities
from synthflow.public._groups import group_bounds, group_index

__all__ = [
    "ConditionalDistribution",
    "ConditionalMeans",
    "ConditionalQuantiles",
    "Distribution",
]


@dataclass(frozen=True, kw_only=True)
class Distribution:
    """1-way distribution of an integer variable."""

    variable: str
    """Name of the variable (a column of the NVSS sample format, or ``birth_month``)."""
    values: tuple[int, ...]
    """Support, ascending."""
    probabilities: tuple[float, ...]
    """Probability of each value."""

    def __post_init__(self) -> None:
        if len(self.values) != len(self.probabilities):
            raise ConfigError(f"{self.variable}: values and probabilities differ in length")
        _probabilities(self.probabilities, where=self.variable)

    @classmethod
    def estimate(cls, variable: str, column: pd.Series, *, digits: int = 7) -> Distribution:
        """Relative frequencies of ``column``."""
        freq = column.value_counts(normalize=True).sort_index()
        return cls(
            variable=variable,
            values=tuple(int(v) for v in freq.index),
            probabilities=tuple(round(float(p), digits) for p in freq.to_numpy()),
        )

    def draw(self, u: np.ndarray) -> np.ndarray:
        """Values for uniforms ``u`` in [0, 1)."""
        p = _probabilities(self.probabilities, where=self.variable)
        return _draw(np.asarray(self.values, dtype=np.int64), p, u)

    def to_dict(self) -> dict[str, Any]:
        """YAML-ready mapping."""
        return {
            "variables": [self.variable],
            "values": list(self.values),
            "probabilities": list(self.probabilities),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Distribution:
        """Inverse of :meth:`to_dict`."""
        (variable,) = d["variables"]
        return cls(
            variable=variable,
            values=tuple(int(v) for v in d["values"]),
            probabilities=tuple(float(p) for p in d["probabilities"]),
        )


@dataclass(frozen=True, kw_only=True)
class ConditionalDistribution:
    """Distribution of ``target`` within each group of ``given`` (a 2-way table)."""

    given: str
    """Conditioning variable."""
    target: str
    """Variable whose distribution is tabulated."""
    groups: tuple[str, ...]
    """Group labels of ``given`` (``"<18"``, ``"18-19"``, ``"7"``, ``">44"``)."""
    values: tuple[int, ...]
    """Support of ``target``, ascending."""
    probabilities: tuple[tuple[float, ...], ...]
    """One row of probabilities over ``values`` per group."""

    def __post_init__(self) -> None:
        if len(self.groups) != len(self.probabilities):
            raise ConfigError(f"{self.target} by {self.given}: one row per group is needed")
        for label, row in zip(self.groups, self.probabilities, strict=True):
            group_bounds(label)
            where = f"{self.target} given {self.given} {label}"
            if len(row) != len(self.values):
                raise ConfigError(
                    f"{where}: {len(row)} probabilities for {len(self.values)} values"
                )
            _probabilities(row, where=where)

    @classmethod
    def estimate(
        cls, given: str, target: str, frame: pd.DataFrame, groups: Sequence[str], *, digits: int = 7
    ) -> ConditionalDistribution:
        """Relative frequencies of ``frame[target]`` within each group of ``frame[given]``."""
        gi = group_index(frame[given].to_numpy(), groups, variable=given)
        table = pd.crosstab(gi, frame[target].to_numpy())
        table = table.reindex(range(len(groups)), fill_value=0)
        if (table.sum(axis=1) == 0).any():
            empty = [groups[int(i)] for i in np.flatnonzero(table.sum(axis=1).to_numpy() == 0)]
            raise ConfigError(f"{target} by {given}: no rows in group(s) {empty}; merge groups")
        rows = table.to_numpy() / table.to_numpy().sum(axis=1, keepdims=True)
        return cls(
            given=given,
            target=target,
            groups=tuple(groups),
            values=tuple(int(v) for v in table.columns),
            probabilities=tuple(tuple(round(float(p), digits) for p in row) for row in rows),
        )

    def draw(self, given_values: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Values of ``target`` for the ``given`` values and uniforms ``u``."""
        gi = group_index(given_values, self.groups, variable=self.given)
        out = np.empty(len(u), dtype=np.int64)
        values = np.asarray(self.values, dtype=np.int64)
        for i, row in enumerate(self.probabilities):
            mask = gi == i
            out[mask] = _draw(values, _probabilities(row, where=self.target), u[mask])
        return out

    def to_dict(self) -> dict[str, Any]:
        """YAML-ready mapping."""
        return {
            "variables": [self.given, self.target],
            "groups": list(self.groups),
            "values": list(self.values),
            "probabilities": [list(row) for row in self.probabilities],
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ConditionalDistribution:
        """Inverse of :meth:`to_dict`."""
        given, target = d["variables"]
        return cls(
            given=given,
            target=target,
            groups=tuple(str(g) for g in d["groups"]),
            values=tuple(int(v) for v in d["values"]),
            probabilities=tuple(tuple(float(p) for p in row) for row in d["probabilities"]),
        )

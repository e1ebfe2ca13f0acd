"""Hyperparameter grids of the spec's space: their points and their validation.

Kept apart from :mod:`synthflow.space` so that the spec loader (:mod:`synthflow.config`)
can check the grids at load without importing the space (which imports the loader).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from synthflow._ops import COMPARATORS
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from synthflow.config.model import ModelGrid, ReleaseSpec

__all__ = ["grid_points", "validate_grids"]


def grid_points(grid: ModelGrid) -> Iterator[dict[str, Any]]:
    """The grid's hyperparameter points that satisfy its ``require`` rules, in order."""
    names = [k for k, _ in grid.grid]
    for values in itertools.product(*(v for _, v in grid.grid)):
        point = dict(zip(names, values, strict=True))
        keep = True
        for left, op, right in grid.require:
            rhs = point[right] if isinstance(right, str) and right in point else right
            if not COMPARATORS[op](point[left], rhs):
                keep = False
                break
        if keep:
            yield point


def validate_grids(spec: ReleaseSpec) -> None:
    """Check every model name and hyperparameter point of the spec's grids.

    What :func:`synthflow.space.expand_space` checks, without building the
    configurations (the grids times the transformations times ``min_count``: thousands).

    Raises:
        ConfigError: For an unknown model or invalid hyperparameters.
    """
    # The light module: checking the space needs no generator (nor pandas or torch).
    from synthflow.generators.hyperparameters import HYPERPARAMETERS  # noqa: PLC0415

    for i, grid in enumerate(spec.models):
        if grid.model not in HYPERPARAMETERS:
            raise ConfigError(
                f"space.models[{i}].model: unknown generator {grid.model!r}; registered: "
                f"{sorted(HYPERPARAMETERS)}"
            )
        for point in grid_points(grid):
            try:
                HYPERPARAMETERS[grid.model](**point)
            except (TypeError, ValueError) as exc:
                raise ConfigError(f"space.models[{i}] ({grid.model}): {exc}") from exc

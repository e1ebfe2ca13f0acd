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

__all__ = ["MAX_SPACE", "check_space_size", "grid_points", "validate_grids"]

MAX_SPACE = 100_000
"""The most configurations a spec's space may expand to (births' 2024 space: 6,384)."""


def check_space_size(spec: ReleaseSpec) -> None:
    """Refuse a space larger than :data:`MAX_SPACE`, from its sizes, before expanding it.

    The bound is the product of the grid's value counts (before ``require`` rules),
    the transformation choices and ``min_count``: counted, never enumerated, so a 16 KB
    spec whose grids multiply to 1e9 is refused at once instead of hanging.

    Raises:
        ConfigError: Naming the size and the fix.
    """
    from math import prod  # noqa: PLC0415

    per_point = prod(len(c.transformations) for c in spec.columns) * len(spec.min_count)
    size = sum(prod(len(v) for _, v in grid.grid) for grid in spec.models) * per_point
    if size > MAX_SPACE:
        raise ConfigError(
            f"space: the grids, transformations and min_count multiply to {size:,} "
            f"configurations, more than {MAX_SPACE:,}; a sweep could not screen them. Narrow "
            "the grids (fewer values per hyperparameter) or the transformation choices"
        )


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
    from synthflow.generators.table import HYPERPARAMETERS  # noqa: PLC0415

    check_space_size(spec)

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

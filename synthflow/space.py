"""The configuration space: transformations x generator hyperparameters x min_count.

Each configuration gets a stable id derived from its content (model, hyperparameters,
transformation letters, min_count), so reordering the spec never renames one.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from synthflow._grids import grid_points, validate_grids
from synthflow.config.model import ReleaseSpec
from synthflow.errors import ConfigError

__all__ = [
    "Configuration",
    "expand_space",
    "find_configuration",
    "match_configuration",
    "summarise_space",
    "validate_grids",
]


@dataclass(frozen=True, kw_only=True)
class Configuration:
    """One point of the configuration space."""

    model: str
    """Registered generator name."""
    hyperparameters_items: tuple[tuple[str, Any], ...]
    """Hyperparameters as sorted (name, value) pairs."""
    transformations_items: tuple[tuple[str, str], ...]
    """(column, letter) pairs in spec column order."""
    min_count: int
    """Minimal occurrence of every record after projection."""

    @property
    def hyperparameters(self) -> dict[str, Any]:
        """Hyperparameters as a fresh dict."""
        return dict(self.hyperparameters_items)

    @property
    def transformations(self) -> dict[str, str]:
        """Column -> transformation letter."""
        return dict(self.transformations_items)

    @functools.cached_property
    def id(self) -> str:
        """Stable content-derived id, e.g. ``privbayes-3f2a91c04b`` (computed once)."""
        blob = json.dumps(
            [
                self.model,
                self.hyperparameters_items,
                sorted(self.transformations_items),
                self.min_count,
            ],
            sort_keys=True,
            default=str,
        )
        return f"{self.model}-{hashlib.sha256(blob.encode()).hexdigest()[:10]}"

    @property
    def letters(self) -> str:
        """Transformation letters in column order, e.g. ``abaaaa``."""
        return "".join(letter for _, letter in self.transformations_items)

    def __repr__(self) -> str:
        return (
            f"Configuration({self.id!r}: {self.model} {self.hyperparameters}, letters "
            f"{self.letters!r}, min_count {self.min_count})"
        )

    def to_json(self) -> dict[str, Any]:
        """JSON form used by ``synthflow space --json`` and run metadata."""
        return {
            "id": self.id,
            "model": self.model,
            "hyperparameters": self.hyperparameters,
            "transformations": self.transformations,
            "min_count": self.min_count,
        }


def expand_space(
    spec: ReleaseSpec, *, models: Collection[str] | None = None
) -> list[Configuration]:
    """All configurations of the spec, in a deterministic order.

    Hyperparameters are validated against each generator's hyperparameter class.
    ``models`` keeps only those families (the others are not expanded at all).

    Raises:
        ConfigError: For an unknown model or invalid hyperparameters.
    """
    validate_grids(spec)
    transform_choices = [[(c.name, t.name) for t in c.transformations] for c in spec.columns]
    out: list[Configuration] = []
    seen: set[str] = set()
    for grid in spec.models:
        if models is not None and grid.model not in models:
            continue
        for point in grid_points(grid):
            hp_items = tuple(sorted(point.items()))
            for trans in itertools.product(*transform_choices):
                for mc in spec.min_count:
                    cfg = Configuration(
                        model=grid.model,
                        hyperparameters_items=hp_items,
                        transformations_items=tuple(trans),
                        min_count=mc,
                    )
                    if cfg.id not in seen:
                        seen.add(cfg.id)
                        out.append(cfg)
    return out


def find_configuration(spec: ReleaseSpec, config_id: str) -> Configuration:
    """The configuration with id ``config_id``.

    Raises:
        ConfigError: If no configuration has that id.
    """
    family = config_id.rsplit("-", 1)[0]  # ids start with their model's name
    for cfg in expand_space(spec, models={family}):
        if cfg.id == config_id:
            return cfg
    space = expand_space(spec)
    examples = ", ".join(c.id for c in space[:3])
    raise ConfigError(
        f"no configuration with id {config_id!r} in spec {spec.name!r}; list them with "
        f"'synthflow space {spec.path}' (e.g. {examples})"
    )


def match_configuration(
    spec: ReleaseSpec,
    *,
    model: str,
    hyperparameters: dict[str, Any],
    transformations: dict[str, str],
    min_count: int,
) -> Configuration:
    """The configuration with these settings (columns left out use alternative ``a``).

    Raises:
        ConfigError: If the spec's space holds no such configuration.
    """
    letters = {c: transformations.get(c, "a") for c in spec.column_names}
    for cfg in expand_space(spec):
        if (
            cfg.model == model
            and cfg.hyperparameters == hyperparameters
            and cfg.transformations == letters
            and cfg.min_count == min_count
        ):
            return cfg
    raise ConfigError(
        f"spec {spec.path!r} has no configuration with model {model!r}, hyperparameters "
        f"{hyperparameters}, transformations {letters} and min_count {min_count}"
    )


def _values(values: set[Any]) -> str:
    """Distinct values, numbers in numeric order, then text."""

    def key(v: Any) -> tuple[int, float, str]:
        return (0, float(v), "") if isinstance(v, int | float) else (1, 0.0, str(v))

    return ", ".join(str(v) for v in sorted(values, key=key))


def _n(k: int, noun: str) -> str:
    return f"{k:,} {noun}{'' if k == 1 else 's'}"


def _default_noise(model: str) -> str | None:
    """The default ``noise`` of a generator family that has one (``workload``), else None."""
    import dataclasses  # noqa: PLC0415

    from synthflow.generators.table import HYPERPARAMETERS  # noqa: PLC0415

    cls = HYPERPARAMETERS.get(model)
    fields = {f.name: f.default for f in dataclasses.fields(cls)} if cls else {}
    return str(fields["noise"]) if "noise" in fields else None


def summarise_space(spec: ReleaseSpec, configs: list[Configuration]) -> str:
    """What ``synthflow space`` prints without ``--all`` (a summary of ``configs``).

    Per generator its number of configurations and its grid's values, then the total,
    min_count and the letters of each column.
    """
    lines = []
    by_model: dict[str, list[Configuration]] = {}
    for c in configs:
        by_model.setdefault(c.model, []).append(c)
    for model, group in by_model.items():
        settings = {c.hyperparameters_items for c in group}
        letters = {c.letters for c in group}
        counts = {c.min_count for c in group}
        lines.append(
            f"{model}: {len(group):,} configurations ({_n(len(settings), 'hyperparameter setting')}"
            f" x {_n(len(letters), 'transformation')} x {len(counts)} min_count)"
        )
        grid: dict[str, set[Any]] = {}
        for items in settings:
            for k, v in items:
                grid.setdefault(k, set()).add(str(v) if isinstance(v, list | dict) else v)
        shown = {k: _values(vs) for k, vs in grid.items()}
        default = _default_noise(model)
        if default is not None and "noise" not in shown:  # what the generator adds, always
            shown["noise"] = f"{default} (default)"
        width = max((len(k) for k in shown), default=0)
        lines += [f"  {k:<{width}}  {v}" for k, v in sorted(shown.items())]
    lines.append(f"{len(configs):,} configurations in all ({_n(len(by_model), 'generator')})")
    letters = {c.letters for c in configs}
    lines.append(f"min_count: {_values({c.min_count for c in configs})}")
    lines.append(
        f"transformations: {len(letters)} combinations of a letter per column "
        f"(SPEC sec. 3); per column:"
    )
    width = max(len(n) for n in spec.column_names)
    for i, name in enumerate(spec.column_names):
        lines.append(f"  {name:<{width}}  {_values({x[i] for x in letters})}")
    lines.append("Every configuration (id, model, min_count, letters, hyperparameters): --all")
    return "\n".join(lines)

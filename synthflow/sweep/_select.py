"""Which runs a sweep makes: the configurations selected, and each run's public seed."""

from __future__ import annotations

import hashlib

import numpy as np

from synthflow.config.model import ReleaseSpec
from synthflow.errors import ConfigError
from synthflow.space import Configuration, expand_space

__all__ = ["run_seed", "select_configurations"]


def run_seed(seed: int, config_id: str, repeat: int, generator_epsilon: float | None = None) -> int:
    """Deterministic per-run seed from the base seed, configuration id and repeat.

    A swept generator epsilon other than the spec's enters the seed too (runs at the
    spec's own epsilon keep the seeds they had before the axis existed).
    """
    suffix = "" if generator_epsilon is None else f":eps={generator_epsilon!r}"
    blob = f"{seed}:{config_id}:{repeat}{suffix}".encode()
    return int.from_bytes(hashlib.sha256(blob).digest()[:8], "big") >> 1


def select_configurations(
    spec: ReleaseSpec,
    *,
    models: list[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
    ids: list[str] | None = None,
    letters: list[str] | None = None,
) -> list[Configuration]:
    """The spec's space, optionally only some families, ids or binnings, or a sample.

    ``letters`` are binnings as ``synthflow space`` prints them (one letter per column);
    ``sample`` draws a seeded random sample of the remaining configurations.

    Raises:
        ConfigError: For an unknown family, id or binning, or a sample size below 1.
    """
    space = expand_space(spec)
    if letters:
        known_letters = sorted({c.letters for c in space})
        unknown = sorted(set(letters) - set(known_letters))
        if unknown:
            raise ConfigError(
                f"--letters: {unknown} are not binnings of this spec's space (one letter per "
                f"column, {', '.join(spec.column_names)}; e.g. {known_letters[0]})"
            )
        space = [c for c in space if c.letters in set(letters)]
    if ids:
        by_id = {c.id: c for c in space}
        unknown = sorted(set(ids) - set(by_id))
        if unknown:
            raise ConfigError(
                f"--ids: {unknown} are not configurations of this spec's space "
                "(list them with 'synthflow space')"
            )
        space = [c for c in space if c.id in set(ids)]
    if models:
        known = sorted({c.model for c in space})
        unknown = sorted(set(models) - set(known))
        if unknown:
            raise ConfigError(
                f"--models: {unknown} not in the spec's space; families there: {known}"
            )
        space = [c for c in space if c.model in set(models)]
    if sample is not None:
        if sample < 1:
            raise ConfigError(f"--sample ({sample}) must be at least 1")
        if sample < len(space):
            # Post-processing choice on public data: a seeded generator is fine here.
            pick = np.random.default_rng(seed).choice(len(space), size=sample, replace=False)
            space = [space[i] for i in sorted(pick)]
    return space

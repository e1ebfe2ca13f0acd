"""A real public table split into a public and a private share, for demonstrations.

The real tables synthflow ships specs for (``affairs``, ``randhie``) are public, so a
release on them needs a stand-in for the private rows: :func:`write_split` splits the
rows at random with a fixed seed into ``public.csv`` (the share a methodologist sweeps
on) and ``private.csv`` (the share a steward releases). Both come from the same
population, as the NVSS samples and a national registry do.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from synthflow.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["statsmodels_table", "write_split"]


def statsmodels_table(name: str, what: str) -> pd.DataFrame:
    """The rows of ``statsmodels.datasets.<name>`` (ConfigError naming the install if absent)."""
    import importlib  # noqa: PLC0415

    try:
        module = importlib.import_module(f"statsmodels.datasets.{name}")
    except ImportError as exc:
        raise ConfigError(
            f"the {what} dataset ships with statsmodels: pip install statsmodels (or the dev extra)"
        ) from exc
    return module.load_pandas().data


def write_split(
    frame: pd.DataFrame, directory: str | Path, *, public_share: float, seed: int
) -> tuple[Path, Path]:
    """Write ``public.csv`` and ``private.csv`` (a seeded random split) into ``directory``.

    Never overwrites: an existing file is an error, checked before anything is written.

    Raises:
        ConfigError: If a file exists or the share is outside (0, 1).
    """
    import numpy as np  # noqa: PLC0415

    if not 0 < public_share < 1:
        raise ConfigError(f"public_share ({public_share}) must be in (0, 1)")
    d = Path(directory)
    public, private = d / "public.csv", d / "private.csv"
    for p in (public, private):
        if p.exists():
            raise ConfigError(f"{str(p)!r} exists; it is never overwritten: choose a new --out")
    rng = np.random.default_rng(seed)
    is_public = np.zeros(len(frame), dtype=bool)
    is_public[rng.permutation(len(frame))[: round(public_share * len(frame))]] = True
    d.mkdir(parents=True, exist_ok=True)
    frame[is_public].to_csv(public, index=False)
    frame[~is_public].to_csv(private, index=False)
    return public, private

"""A second real dataset: Fair's 1974 survey of married women (statsmodels ``fair``).

Ray Fair, "A Theory of Extramarital Affairs", Journal of Political Economy 86 (1978),
45-61: 6,366 respondents to a 1974 *Redbook* magazine survey, one row per woman (the
unit of privacy). The table ships with statsmodels (``statsmodels.datasets.fair``,
"included with permission of the author"); install it with the ``dev`` extra or
``pip install statsmodels``.

What :func:`affairs_frame` changes, so that the spec (``configs/affairs.yaml``) can
describe it with integer and categorical columns: the survey's interval midpoints
become integers (age 17.5 -> 17, years married 0.5/2.5/16.5 -> 0/2/16, children 5.5 ->
5) and the continuous ``affairs`` measure becomes ``had_affair`` (yes when above 0).

**Public/private split** (a demonstration, not a real disclosure setting): the rows
are split at random with a fixed seed into a *public* share (default 30%, 1,910 rows:
the part a methodologist sweeps on) and a *private* share (4,456 rows: the part a
steward releases). Both halves come from the same survey, as the NVSS samples and a
national registry do.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["AFFAIRS_COLUMNS", "affairs_frame", "write_affairs"]

AFFAIRS_COLUMNS = (
    "rate_marriage",
    "age",
    "yrs_married",
    "children",
    "religious",
    "educ",
    "occupation",
    "occupation_husb",
    "had_affair",
)


def affairs_frame() -> pd.DataFrame:
    """The 6,366 rows of Fair's survey as release columns (see the module docstring).

    Raises:
        ConfigError: If statsmodels is not installed.
    """
    from synthflow.public.split import statsmodels_table  # noqa: PLC0415

    raw = statsmodels_table("fair", "affairs")
    out = pd.DataFrame({c: np.floor(raw[c]).astype(int) for c in AFFAIRS_COLUMNS[:-1]})
    out["had_affair"] = np.where(raw["affairs"] > 0, "yes", "no")
    return out


def write_affairs(
    directory: str | Path, *, public_share: float = 0.3, seed: int = 1978
) -> tuple[Path, Path]:
    """Write ``public.csv`` and ``private.csv`` (a seeded random split) into ``directory``.

    Never overwrites: an existing file is an error.

    Raises:
        ConfigError: If a file exists, the share is outside (0, 1) or statsmodels is
            missing.
    """
    from synthflow.public.split import write_split  # noqa: PLC0415

    return write_split(affairs_frame(), directory, public_share=public_share, seed=seed)

"""Loader for a full NVSS natality public-use CSV file (as redistributed by NBER).

The US National Vital Statistics System publishes one natality file per year (CDC/NCHS,
public domain); NBER redistributes it as CSV with lower-case column names. This module
turns such a file into the NVSS sample format used everywhere else in synthflow.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from synthflow.errors import ConfigError, DataError
from synthflow.public._io import SAMPLE_COLUMNS, read_csv_checked

__all__ = ["NATALITY_COLUMNS", "UNKNOWN_CODES", "load_nvss_natality"]

logger = logging.getLogger(__name__)

NATALITY_COLUMNS = (
    "dob_mm",
    "mager",
    "priorlive",
    "priordead",
    "combgest",
    "sex",
    "dbwt",
    "dplural",
)
"""Columns read from the natality file (``dob_yy`` is read too when present)."""

UNKNOWN_CODES = {"priorlive": 99, "priordead": 99, "combgest": 99, "dbwt": 9999}
"""'Unknown or not stated' codes of the natality file; rows holding one are dropped."""

DEFAULT_YEAR = 2019
"""Year written into ``date_of_birth`` when the file has no ``dob_yy`` column."""


def load_nvss_natality(
    path: str | Path, *, n_rows: int | None = None, rng: np.random.Generator | None = None
) -> pd.DataFrame:
    """Read an NVSS natality public-use CSV file into the NVSS sample format.

    Columns used (names are matched case-insensitively; all others are ignored):

    * ``dob_yy`` (optional, year of birth; :data:`DEFAULT_YEAR` if absent) and ``dob_mm``
      (month 1..12) -> ``date_of_birth`` = ``YYYY-MM-15`` (the day is not public).
    * ``mager`` (mother's age in years, 12..50; NCHS codes 10-12 as 12 and 50-64 as 50)
      -> ``mother_age``.
    * ``priorlive`` (prior births now living) and ``priordead`` (prior births now dead)
      -> ``parity = priorlive + priordead + 1``, the live births so far including this
      one. This is the live-birth order without a top code; ``lbo_rec`` gives the same
      number but top-coded at 8, and ``tbo_rec`` also counts fetal deaths and
      terminations, so neither is used.
    * ``combgest`` (combined gestation, completed weeks) -> ``gestation_week``.
    * ``sex`` (``M``/``F``) -> ``is_female``.
    * ``dbwt`` (birth weight, grams) -> ``birth_weight``.
    * ``dplural`` (plurality): only singletons (``dplural == 1``) are kept.

    Rows holding an unknown code (:data:`UNKNOWN_CODES`: 99 in ``priorlive``,
    ``priordead`` and ``combgest``, 9999 in ``dbwt``), a blank, or a sex other than
    ``M``/``F`` are dropped. No other plausibility rule is applied (see SPEC sec. 4).

    Args:
        path: the CSV file (``.csv`` or ``.csv.gz``).
        n_rows: if given, keep a simple random sample (without replacement) of this many
            of the remaining rows, in file order.
        rng: generator for that sample; required when ``n_rows`` is given.

    Returns:
        A frame in the NVSS sample format (int64 numbers, bool ``is_female``, string
        ``date_of_birth``).

    Raises:
        DataError: the file is missing or empty, lacks a column, or has fewer usable
            rows than ``n_rows``.
        ConfigError: ``n_rows`` is not a positive integer or ``rng`` is missing.
    """
    if n_rows is not None:
        if isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) or n_rows < 1:
            raise ConfigError(f"n_rows ({n_rows!r}) must be a positive integer or None")
        if not isinstance(rng, np.random.Generator):
            raise ConfigError(
                "n_rows needs rng, a numpy Generator: pass rng=np.random.default_rng(seed)"
            )
    raw = _read_natality(path)
    num, sex, keep = _usable_rows(path, raw)
    idx = np.flatnonzero(keep.to_numpy())
    if n_rows is not None:
        if n_rows > idx.size:
            raise DataError(
                f"NVSS natality file {str(path)!r}: n_rows ({n_rows}) exceeds the {idx.size} "
                "usable singleton rows; ask for fewer rows"
            )
        assert rng is not None  # checked above
        idx = np.sort(rng.choice(idx, size=int(n_rows), replace=False))
    return _sample_format(num, sex, idx)


def _read_natality(path: str | Path) -> pd.DataFrame:
    """The file's columns of :data:`NATALITY_COLUMNS` (and ``dob_yy``), as text, lower-cased."""
    wanted = {*NATALITY_COLUMNS, "dob_yy"}
    raw = read_csv_checked(
        path,
        what="NVSS natality file",
        usecols=lambda c: str(c).strip().lower() in wanted,
        dtype=str,
    )
    raw.columns = [str(c).strip().lower() for c in raw.columns]
    missing = [c for c in NATALITY_COLUMNS if c not in raw.columns]
    if missing:
        raise DataError(
            f"NVSS natality file {str(path)!r}: missing column(s) {missing}; expected the "
            f"NBER CSV layout with lower-case columns {list(NATALITY_COLUMNS)}"
        )
    return raw


def _usable_rows(
    path: str | Path, raw: pd.DataFrame
) -> tuple[dict[str, pd.Series], pd.Series, pd.Series]:
    """The numeric columns, the sex, and which rows are usable singletons.

    Raises:
        DataError: No row is a singleton birth with known values.
    """
    num = {
        c: pd.to_numeric(raw[c].str.strip(), errors="coerce")
        for c in (*NATALITY_COLUMNS, "dob_yy")
        if c in raw.columns and c != "sex"
    }
    sex = raw["sex"].str.strip().str.upper()
    keep = (num["dplural"] == 1) & sex.isin(["M", "F"])
    for column, values in num.items():
        keep &= values.notna()
        if column in UNKNOWN_CODES:
            keep &= values != UNKNOWN_CODES[column]
    keep &= num["dob_mm"].between(1, 12)
    n_single = int((num["dplural"] == 1).sum())
    logger.info(
        "%s: %d rows, %d singletons, %d kept after dropping unknown codes",
        path,
        len(raw),
        n_single,
        int(keep.sum()),
    )
    if not keep.any():
        raise DataError(
            f"NVSS natality file {str(path)!r}: no singleton birth (dplural == 1) with known "
            "values; check that it is a natality public-use file"
        )
    return num, sex, keep


def _sample_format(num: dict[str, pd.Series], sex: pd.Series, idx: np.ndarray) -> pd.DataFrame:
    """Rows ``idx`` in the NVSS sample format."""
    year = num["dob_yy"].iloc[idx].astype(int) if "dob_yy" in num else DEFAULT_YEAR
    month = num["dob_mm"].iloc[idx].astype(int)
    frame = pd.DataFrame(
        {
            "mother_age": num["mager"].iloc[idx].astype("int64"),
            "parity": (num["priorlive"].iloc[idx] + num["priordead"].iloc[idx] + 1).astype("int64"),
            "gestation_week": num["combgest"].iloc[idx].astype("int64"),
            "is_female": (sex.iloc[idx] == "F").astype(bool),
            "birth_weight": num["dbwt"].iloc[idx].astype("int64"),
            "date_of_birth": (
                pd.Series(year, index=month.index).astype(str)
                + "-"
                + month.map("{:02d}".format)
                + "-15"
            ),
        }
    )
    return frame.loc[:, list(SAMPLE_COLUMNS)].reset_index(drop=True)

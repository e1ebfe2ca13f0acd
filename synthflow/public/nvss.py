"""NVSS-like simulator: synthetic births calibrated from low-order summaries only.

The simulator draws each birth factor by factor; every figure it uses is a 1-way
distribution or a 2-way summary of a real NVSS sample. No rows and no table over three or
more variables are kept:

==============  ===========================================================
factor          calibration summaries
==============  ===========================================================
birth month     1-way distribution
sex             share of girls (1-way)
mother's age    1-way distribution (single years)
parity          distribution by mother's age group (2-way)
gestation week  distributions by mother's age group and by parity group
                (2-way each), combined into P(week | age group, parity group)
                by iterative proportional fitting (:mod:`._model`)
birth weight    quantiles by gestation-week group (2-way), times factors by
                mother's age group and parity group fitted to the mean
                weight by age group and by parity group (2-way each), times
                the ratio of the mean weight by sex to the overall mean
                (2-way); then recorded in whole ounces or to 10 g with the
                observed 1-way shares (US weights reported in lb/oz are
                heaped on the ounce grid)
==============  ===========================================================

Everything else is not reproduced: e.g. sex is independent of all other columns, month of
everything, and within a gestation group the shape (not the mean) of the weight
distribution is the same for all mothers.

>>> import numpy as np
>>> cal = Calibration.from_yaml(default_calibration_path())  # doctest: +SKIP
>>> simulate(cal, 5, np.random.default_rng(0)).columns.tolist()  # doctest: +SKIP
['mother_age', 'parity', 'gestation_week', 'is_female', 'birth_weight', 'date_of_birth']
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from synthflow.errors import ConfigError
from synthflow.public._calibration import Calibration
from synthflow.public._groups import group_index, pooled_groups
from synthflow.public._io import SAMPLE_COLUMNS, birth_months, check_sample
from synthflow.public._model import draw_gestation, gestation_given_age_parity, weight_factors
from synthflow.public._summaries import (
    ConditionalDistribution,
    ConditionalMeans,
    ConditionalQuantiles,
    Distribution,
)

__all__ = ["Calibration", "calibrate", "default_calibration_path", "simulate"]

logger = logging.getLogger(__name__)

MIN_AGE_GROUP_ROWS = 200
"""Adjacent mother's ages are pooled until each group of the parity and gestation tables
has this many rows (single years 16..44 in the 160K sample)."""
MIN_PARITY_GROUP_ROWS = 500
"""Adjacent parities are pooled until each group of the gestation table has this many rows."""
PARITY_TOP_CODE = 15
"""Parities above this are recorded as this (a handful of rows per 100K)."""
MIN_WEEK_GROUP_ROWS = 500
"""Adjacent gestation weeks are pooled until each weight group has this many rows."""
WEIGHT_LEVELS = (
    *(0.005, 0.01, 0.02, 0.03, 0.04),
    *(round(0.05 + 0.025 * i, 3) for i in range(37)),  # 0.05, 0.075, ..., 0.95
    *(0.96, 0.97, 0.98, 0.99, 0.995),
)
"""Quantile levels of the birth-weight quantiles by gestation group."""
GRAMS_PER_OUNCE = 28.349523125
WEIGHT_RANGE = (227, 8165)
"""The NVSS public-use file's documented birth weights in grams (``dbwt``; 9999 unknown):
a simulated weight is kept inside it, as the births specs' domain is (a value outside
is refused by ``load_data``)."""


def default_calibration_path() -> Path:
    """``public_data/nvss2019_calibration.yaml``, shipped in the package."""
    from synthflow.resources import public_data_file  # noqa: PLC0415

    return public_data_file("nvss2019_calibration.yaml")


def calibrate(sample: pd.DataFrame, *, source: str = "unnamed NVSS sample") -> Calibration:
    """Compute the simulator's figures from a sample in the NVSS sample format.

    Only the 1-way and 2-way summaries listed in the module docstring are computed.

    Args:
        sample: rows in the NVSS sample format (see :data:`SAMPLE_COLUMNS`).
        source: description of the sample recorded in the calibration (e.g. its file name).

    Raises:
        DataError: the sample lacks a column, is empty or holds malformed values.
    """
    frame = check_sample(sample, where=source)
    frame["birth_month"] = birth_months(frame, where=source)
    frame["parity"] = frame["parity"].clip(upper=PARITY_TOP_CODE)
    years = pd.to_datetime(frame["date_of_birth"], format="%Y-%m-%d").dt.year
    w = frame["birth_weight"].to_numpy()
    chance = 1 / GRAMS_PER_OUNCE
    on_oz = w == np.round(np.round(w / GRAMS_PER_OUNCE) * GRAMS_PER_OUNCE)
    ten = (w[~on_oz] % 10 == 0).mean() if (~on_oz).any() else 0.0
    mean_w = float(w.mean())
    by_sex = frame.groupby("is_female")["birth_weight"].mean()
    ages = pooled_groups(frame["mother_age"], MIN_AGE_GROUP_ROWS)
    parities = pooled_groups(frame["parity"], MIN_PARITY_GROUP_ROWS)
    weeks = pooled_groups(frame["gestation_week"], MIN_WEEK_GROUP_ROWS)
    cal = Calibration(
        source=source,
        created=dt.date.today().isoformat(),
        sample_rows=len(frame),
        year=int(years.mode().iloc[0]),
        birth_month=Distribution.estimate("birth_month", frame["birth_month"]),
        female_share=round(float(frame["is_female"].mean()), 6),
        mother_age=Distribution.estimate("mother_age", frame["mother_age"]),
        parity_by_age=ConditionalDistribution.estimate("mother_age", "parity", frame, ages),
        gestation_by_age=ConditionalDistribution.estimate(
            "mother_age", "gestation_week", frame, ages
        ),
        gestation_by_parity=ConditionalDistribution.estimate(
            "parity", "gestation_week", frame, parities
        ),
        weight_by_gestation=ConditionalQuantiles.estimate(
            "gestation_week", "birth_weight", frame, weeks, WEIGHT_LEVELS
        ),
        weight_mean_by_age=ConditionalMeans.estimate("mother_age", "birth_weight", frame, ages),
        weight_mean_by_parity=ConditionalMeans.estimate("parity", "birth_weight", frame, parities),
        weight_ratio_male=round(float(by_sex.get(False, mean_w)) / mean_w, 6),
        weight_ratio_female=round(float(by_sex.get(True, mean_w)) / mean_w, 6),
        ounce_share=round(max(0.0, (float(on_oz.mean()) - chance) / (1 - chance)), 6),
        round10_share=round(max(0.0, (float(ten) - 0.1) / 0.9), 6),
    )
    logger.info("calibrated from %s (%d rows)", source, len(frame))
    return cal


def simulate(calibration: Calibration, n_rows: int, rng: np.random.Generator) -> pd.DataFrame:
    """Draw ``n_rows`` births in the NVSS sample format.

    Args:
        calibration: the figures (see :func:`calibrate`, :meth:`Calibration.from_yaml`).
        n_rows: number of rows, at least 1.
        rng: the only source of randomness (e.g. ``np.random.default_rng(2019)``).

    Returns:
        Columns :data:`SAMPLE_COLUMNS` with int64 numbers, a bool ``is_female`` and
        ``date_of_birth`` strings ``YYYY-MM-15``.
    """
    if isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) or n_rows < 1:
        raise ConfigError(f"n_rows ({n_rows!r}) must be a positive integer")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator (np.random.default_rng(seed)), got {rng!r}")
    c = calibration
    n = int(n_rows)
    month = c.birth_month.draw(rng.random(n))
    is_female = rng.random(n) < c.female_share
    age = c.mother_age.draw(rng.random(n))
    parity = c.parity_by_age.draw(age, rng.random(n))
    ai = group_index(age, c.parity_by_age.groups, variable="mother_age")
    pi = group_index(parity, c.gestation_by_parity.groups, variable="parity")
    table = gestation_given_age_parity(c)
    gestation = draw_gestation(c, table, ai, pi, rng.random(n))
    r_age, r_parity = weight_factors(c, table)
    weight = c.weight_by_gestation.draw(gestation, rng.random(n)) * r_age[ai] * r_parity[pi]
    weight *= np.where(is_female, c.weight_ratio_female, c.weight_ratio_male)
    v = rng.random(n)
    ounce = v < c.ounce_share
    ten = ~ounce & (v < c.ounce_share + (1 - c.ounce_share) * c.round10_share)
    weight = np.where(ounce, np.round(weight / GRAMS_PER_OUNCE) * GRAMS_PER_OUNCE, weight)
    weight = np.where(ten, np.round(weight / 10) * 10, weight)
    weight = np.clip(np.round(weight), *WEIGHT_RANGE).astype(np.int64)
    dates = np.array([f"{c.year}-{m:02d}-15" for m in range(1, 13)], dtype=object)
    frame = pd.DataFrame(
        {
            "mother_age": age.astype(np.int64),
            "parity": parity.astype(np.int64),
            "gestation_week": gestation.astype(np.int64),
            "is_female": is_female.astype(bool),
            "birth_weight": weight,
            "date_of_birth": dates[month - 1],
        }
    )
    return frame.loc[:, list(SAMPLE_COLUMNS)]

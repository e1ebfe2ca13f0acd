"""A generated 15-column census-like table for wide-data tests and benchmarks (public).

Real census extracts cannot ship with the package; this generator makes a table with
the shape that breaks dense code: 15 columns (int and categorical, one with 42 sparse
categories), a binned domain of about 10^16 cells under ``configs/wide_census.yaml``,
and real structure for the criteria to check: each column depends on one or two
parents along a tree (age -> marital -> household -> children, education -> occupation
-> industry, ...) and income is linear in age, education, hours and sex plus noise, so
2-way marginals, conditional means and the regression all differ from independence.

Rows are drawn with the caller's seeded ``numpy.random.Generator``: the data are
synthetic and public by construction (``--public`` is honest for them).

>>> frame = make_wide_table(1000, seed=1)
>>> frame.shape
(1000, 15)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["COUNTRIES", "WIDE_COLUMNS", "make_wide_table", "write_wide_table"]

COUNTRIES = tuple(f"c{i:02d}" for i in range(42))
"""Country of birth: 42 categories, a few common and many rare (Zipf-like)."""

WIDE_COLUMNS = (
    "age",
    "sex",
    "country",
    "marital",
    "education",
    "occupation",
    "industry",
    "hours",
    "income",
    "household",
    "children",
    "tenure",
    "commute",
    "health",
    "disability",
)

_MARITAL = ("single", "married", "divorced", "widowed", "separated", "partnered")
_TENURE = ("own", "mortgage", "rent", "other")


def _pick(rng: np.random.Generator, probs: np.ndarray) -> np.ndarray:
    """One draw per row from each row's categorical distribution (rows of ``probs``)."""
    cdf = np.cumsum(probs / probs.sum(axis=1, keepdims=True), axis=1)
    u = rng.random(len(probs))[:, None]
    return np.minimum((u > cdf).sum(axis=1), probs.shape[1] - 1)


def _table(rng: np.random.Generator, parents: int, k: int, concentration: float) -> np.ndarray:
    """A fixed conditional table: one Dirichlet row per parent value (strong dependence)."""
    return rng.dirichlet(np.full(k, concentration), size=parents)


def make_wide_table(n: int, *, seed: int) -> pd.DataFrame:
    """``n`` rows of the generated census-like table (raw values, spec columns)."""
    if n < 1:
        raise ValueError(f"n ({n}) must be >= 1")
    structure = np.random.default_rng(20240)  # the model is fixed; only rows vary
    rng = np.random.default_rng(seed)
    age = np.clip(np.round(rng.gamma(4.0, 6.0, n) + 16), 16, 95).astype(int)
    sex = rng.integers(0, 2, n)
    zipf = 1.0 / np.arange(1, 43) ** 1.3
    country = rng.choice(42, size=n, p=zipf / zipf.sum())
    age_group = np.minimum((age - 16) // 10, 7)
    marital = _pick(rng, _table(structure, 8, 6, 0.6)[age_group])
    edu_mean = 11 + 2.5 * (country < 5) + 1.5 * (age_group > 0) - 1.0 * (age_group > 4)
    education = np.clip(np.round(rng.normal(edu_mean, 2.5)), 0, 20).astype(int)
    occupation = _pick(rng, _table(structure, 21, 25, 0.4)[education])
    industry = _pick(rng, _table(structure, 25, 14, 0.3)[occupation])
    hours_mean = 28 + occupation * 0.8 + 6 * sex
    hours = np.clip(np.round(rng.normal(hours_mean, 9)), 0, 99).astype(int)
    income = 2.0 + 0.5 * (age - 16) + 4.0 * education + 0.8 * hours + 8.0 * sex
    income = np.clip(np.round(income + rng.normal(0, 15, n)), 0, 299).astype(int)
    household = np.clip(1 + _pick(rng, _table(structure, 6, 12, 0.7)[marital]), 1, 12)
    children = np.clip(np.round(rng.binomial(household - 1, 0.55)), 0, 10).astype(int)
    income_band = np.minimum(income // 40, 7)
    tenure = _pick(rng, _table(structure, 8, 4, 1.0)[income_band])
    commute = np.clip(np.round(rng.gamma(2.0 + (country % 6), 6.0)), 0, 179).astype(int)
    health = np.clip(1 + np.round(rng.normal(1.0 + (age - 16) / 25, 0.9)), 1, 5).astype(int)
    disability = (rng.random(n) < 0.02 + 0.09 * (health - 1)).astype(int)
    return pd.DataFrame(
        {
            "age": age,
            "sex": np.where(sex == 1, "M", "F"),
            "country": np.asarray(COUNTRIES)[country],
            "marital": np.asarray(_MARITAL)[marital],
            "education": education,
            "occupation": occupation + 1,
            "industry": np.asarray([f"i{i:02d}" for i in range(14)])[industry],
            "hours": hours,
            "income": income,
            "household": household,
            "children": children,
            "tenure": np.asarray(_TENURE)[tenure],
            "commute": commute,
            "health": health,
            "disability": np.where(disability == 1, "yes", "no"),
        },
        columns=list(WIDE_COLUMNS),
    )


def write_wide_table(path: str, n: int, *, seed: int) -> None:
    """Write :func:`make_wide_table` as CSV (never over an existing file)."""
    with open(path, "x", encoding="utf-8", newline="") as fh:
        make_wide_table(n, seed=seed).to_csv(fh, index=False)

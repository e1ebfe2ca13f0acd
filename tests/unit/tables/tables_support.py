"""Helpers for the tables tests (a uniquely named module: ``conftest`` is ambiguous
when several test directories are collected together)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthflow.config import ReleaseSpec
from synthflow.tables import TableSpec, parse_tables

REPO = Path(__file__).resolve().parents[3]
TABLES_BIRTHS = REPO / "configs" / "tables_births.yaml"


def make_births(n: int, seed: int) -> pd.DataFrame:
    """Made-up births in the release columns that satisfy every raw constraint."""
    g = np.random.default_rng(seed)
    age = g.integers(16, 47, n)
    top = np.where(age < 20, 4, np.where(age < 23, 7, 12))
    parity = np.minimum(g.integers(1, 12, n), top - 1)
    gestation = np.where(g.random(n) < 0.1, g.integers(30, 37, n), g.integers(37, 43, n))
    weight = np.where(gestation < 34, g.integers(1500, 2900, n), g.integers(2500, 4700, n))
    return pd.DataFrame(
        {
            "birth_month": g.integers(1, 13, n),
            "mother_age": age,
            "parity": parity,
            "gestation_week": gestation,
            "birth_sex": g.choice(["M", "F"], n),
            "birth_weight": weight,
        }
    )


def tables_of(spec: ReleaseSpec, *items: dict[str, Any]) -> tuple[TableSpec, ...]:
    """Parse tables given as dicts (the YAML's ``tables`` list)."""
    return parse_tables({"tables": list(items)}, spec)

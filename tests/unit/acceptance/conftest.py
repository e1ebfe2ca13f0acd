from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthflow.config import ReleaseSpec
from synthflow.loader import load_spec
from synthflow.transform import Transformer

SPEC_PATH = Path(__file__).resolve().parents[3] / "configs" / "births-2024.yaml"


@pytest.fixture(scope="session")
def spec() -> ReleaseSpec:
    return load_spec(SPEC_PATH)


@pytest.fixture(scope="session")
def transformer(spec: ReleaseSpec) -> Transformer:
    return Transformer(spec, {"mother_age": "a", "parity": "a", "gestation_week": "a"})


def random_codes(
    transformer: Transformer, n: int, rng: np.random.Generator, *, spread: int | None = None
) -> np.ndarray:
    """Random code matrix; ``spread`` limits each column to a few neighbouring codes."""
    cols = []
    for size in transformer.domain.sizes:
        if spread is None or spread >= size:
            cols.append(rng.integers(0, size, n))
        else:
            start = size // 2 - spread // 2
            cols.append(rng.integers(start, start + spread, n))
    return np.column_stack(cols).astype(np.int64)


def to_frame(transformer: Transformer, codes: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(
        {name: codes[:, j].astype(np.int16) for j, name in enumerate(transformer.domain.names)}
    )


@pytest.fixture(scope="session")
def make_codes():
    return random_codes


@pytest.fixture(scope="session")
def frame():
    return to_frame


@pytest.fixture(scope="module")
def tables(transformer, make_codes, frame):
    """(D_T, D_R): 400 rows of births codes; D_R replaces 40 of them."""
    rng = np.random.default_rng(11)
    t = make_codes(transformer, 400, rng, spread=3)
    r = t.copy()
    r[:40] = make_codes(transformer, 40, rng, spread=3)
    return frame(transformer, t), frame(transformer, r)

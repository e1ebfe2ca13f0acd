"""Generators refuse what they cannot run before any charge, naming the cause (#15)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthflow.errors import InfeasibleConfigurationError
from synthflow.generators import make_generator
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Domain

WIDE = Domain(names=tuple(f"c{i}" for i in range(15)), sizes=(40, *(10,) * 14))


def _data(domain: Domain, n: int = 50) -> pd.DataFrame:
    return pd.DataFrame({c: np.zeros(n, dtype=np.int16) for c in domain.names})


def test_mwem_refuses_a_cube_past_its_limit_naming_the_columns():
    gen = make_generator("mwem", {"num_query": 64, "num_iterations": 10}, epsilon=1.0)
    ledger = Ledger(total_epsilon=1.0)
    with pytest.raises(InfeasibleConfigurationError, match=r"4e\+15 cells") as info:
        gen.fit(_data(WIDE), domain=WIDE, ledger=ledger, rng=PrivacyRNG.from_seed(0))
    assert "c0 (40 bins)" in str(info.value)  # the largest column comes first
    assert ledger.charges == ()
    small = Domain(names=("a", "b"), sizes=(3, 4))
    gen.check_feasible(small, 50)  # a small cube is fine


def test_aim_refuses_fewer_rounds_than_columns():
    gen = make_generator("aim", {"delta": 1e-9, "rounds": 12}, epsilon=1.0)
    with pytest.raises(InfeasibleConfigurationError, match=r"rounds \(12\) must exceed"):
        gen.check_feasible(WIDE, 1000)
    make_generator("aim", {"delta": 1e-9, "rounds": 16}, epsilon=1.0).check_feasible(WIDE, 1000)


def test_domain_cells_do_not_wrap_past_int64():
    huge = Domain(names=tuple(f"c{i}" for i in range(20)), sizes=(10,) * 20)
    assert huge.cells == 10**20

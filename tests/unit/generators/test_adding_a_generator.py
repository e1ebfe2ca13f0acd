"""docs/adding-a-generator.md works as written: its generator registers, charges its budget
before any noise, and samples rows in the public domain."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthflow.errors import BudgetExceededError
from synthflow.generators import registry
from synthflow.generators.table import GENERATORS, HYPERPARAMETERS
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[3]
PAGE = REPO / "docs" / "adding-a-generator.md"


@pytest.fixture
def independent(monkeypatch):
    code = re.search(r"```python\n(.*?)```", PAGE.read_text(), re.S).group(1)
    module = types.ModuleType("independent_from_docs")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # dataclasses look it up
    # The page registers into the one table: undone after the test.
    monkeypatch.setattr(GENERATORS, "_entries", dict(GENERATORS._entries))
    exec(compile(code, str(PAGE), "exec"), module.__dict__)
    assert registry.REGISTRY["independent"] is module.Independent
    assert HYPERPARAMETERS["independent"] is module.Independent.Hyperparameters  # one table
    return module


@pytest.fixture(scope="module")
def transformer():
    spec = load_spec(REPO / "configs" / "births-2024.yaml")
    return Transformer(spec, {"mother_age": "a", "parity": "a", "gestation_week": "a"})


def test_the_pages_generator_fits_samples_and_charges(independent, transformer):
    domain = transformer.domain
    gen = np.random.default_rng(0)
    data = pd.DataFrame(
        {n: gen.integers(0, s, 2000) for n, s in zip(domain.names, domain.sizes, strict=True)}
    )
    model = registry.make_generator("independent", {}, epsilon=1.0)
    ledger = Ledger(total_epsilon=1.0)
    model.fit(data, domain=domain, ledger=ledger, rng=PrivacyRNG.from_seed(1))
    assert ledger.spent_epsilon == pytest.approx(1.0)
    assert len(ledger.charges) == len(domain.names)
    rows = model.sample(5000, rng=np.random.default_rng(2))
    assert list(rows.columns) == list(domain.names)
    for name, size in zip(domain.names, domain.sizes, strict=True):
        assert rows[name].between(0, size - 1).all()
        # 2000 uniform rows, noise sd 2*sqrt(2)*d/eps ~ 17 counts per cell: shares stay
        # within 0.1 of the data's (a generous bound, > 5 sd for the smallest domain).
        share = np.bincount(rows[name], minlength=size) / 5000
        truth = np.bincount(data[name], minlength=size) / 2000
        assert np.abs(share - truth).max() < 0.1


def test_the_pages_generator_charges_before_any_noise(independent, transformer):
    domain = transformer.domain
    data = pd.DataFrame({n: np.zeros(10, dtype=np.int64) for n in domain.names})
    model = registry.make_generator("independent", {}, epsilon=1.0)
    with pytest.raises(BudgetExceededError):
        model.fit(
            data, domain=domain, ledger=Ledger(total_epsilon=0.5), rng=PrivacyRNG.from_seed(1)
        )
    assert not hasattr(model, "shares")  # nothing was released

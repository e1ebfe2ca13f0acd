"""docs/adding-a-criterion.md works as written: its code adds a kind that loads, evaluates,
releases with DP and states a sensitivity that holds on neighbouring datasets."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthflow.acceptance.evaluate import evaluate
from synthflow.criteria import registry
from synthflow.errors import ConfigError
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[3]
PAGE = REPO / "docs" / "adding-a-criterion.md"


def page_code(page: Path) -> str:
    """The page's first python block (the whole kind)."""
    return re.search(r"```python\n(.*?)```", page.read_text(), re.S).group(1)


@pytest.fixture
def column_mean(monkeypatch):
    monkeypatch.setattr(registry, "KINDS", dict(registry.KINDS))  # undone after the test
    module = types.ModuleType("column_mean_from_docs")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # dataclasses look it up
    exec(compile(page_code(PAGE), str(PAGE), "exec"), module.__dict__)
    return module


def _spec(tmp_path: Path, **extra):
    raw = yaml.safe_load((REPO / "configs" / "births-2024.yaml").read_text())
    criterion = {
        "name": "mean_birth_weight",
        "kind": "column_mean",
        "column": "birth_weight",
        "threshold": 20,
        "epsilon": 0.05,
        **extra,
    }
    raw["acceptance"]["criteria"].append(criterion)
    raw["privacy"]["total_epsilon"] += 0.05
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_spec(path)


def _codes(transformer: Transformer, n: int, seed: int) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            name: gen.integers(0, size, n)
            for name, size in zip(transformer.domain.names, transformer.domain.sizes, strict=True)
        }
    )


def test_the_pages_kind_loads_evaluates_and_releases(column_mean, tmp_path):
    spec = _spec(tmp_path)
    c = spec.criterion("mean_birth_weight")
    assert c.impl is registry.KINDS["column_mean"] and c.column == "birth_weight"
    transformer = Transformer(spec, {"mother_age": "a", "parity": "a", "gestation_week": "a"})
    t, r = _codes(transformer, 500, 1), _codes(transformer, 500, 2)
    numbers = transformer.transformations["birth_weight"].numbers()
    expected = abs(numbers[t["birth_weight"]].mean() - numbers[r["birth_weight"]].mean())
    exact = evaluate(spec, transformer, t, r, exact=True)
    assert next(x for x in exact.criteria if x.name == c.name).value == pytest.approx(expected)
    ledger = Ledger(total_epsilon=spec.evaluation_epsilon)
    report = evaluate(
        spec, transformer, t, r, exact=False, ledger=ledger, rng=PrivacyRNG.from_seed(3)
    )
    charged = [x for x in ledger.charges if x.what == f"acceptance {c.name}"]
    assert [x.epsilon for x in charged] == [0.05]
    lo, hi = spec.column("birth_weight").bounds
    assert charged[0].sensitivity == pytest.approx((hi - lo) / 500)
    released = next(x for x in report.criteria if x.name == c.name)
    assert released.value != pytest.approx(expected, abs=1e-12)  # noise was added
    assert "birth_weight" in c.impl.meaning(c, spec)


def test_the_pages_sensitivity_holds_on_neighbours(column_mean, tmp_path):
    spec = _spec(tmp_path)
    c = spec.criterion("mean_birth_weight")
    transformer = Transformer(spec, {"mother_age": "a", "parity": "a", "gestation_week": "a"})
    n = 300
    t, r = _codes(transformer, n, 5), _codes(transformer, n, 6)
    from synthflow.criteria.context import context

    def stat(original):
        return c.impl.exact(c, context(spec, transformer, original, r))

    sens, _ = c.impl.sensitivity_and_threshold(c, spec, {"n": n}, c.epsilon)
    numbers = transformer.transformations["birth_weight"].numbers()
    low, high = int(np.argmin(numbers)), int(np.argmax(numbers))
    base = stat(t)
    worst = 0.0
    for i in range(n):  # every replace-one neighbour towards each extreme bin
        for code in (low, high):
            u = t.copy()
            u.loc[i, "birth_weight"] = code
            change = abs(stat(u) - base)
            assert change <= sens + 1e-12
            worst = max(worst, change)
    # The bound is reached up to the bins' span inside the public bounds.
    assert worst == pytest.approx((numbers.max() - numbers.min()) / n)
    assert worst >= 0.5 * sens


def test_the_pages_kind_refuses_another_kinds_key(column_mean, tmp_path):
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['group_by'\] for a column_mean"):
        _spec(tmp_path, group_by=["parity"])
    with pytest.raises(ConfigError, match="column_mean"):  # already registered
        registry.register(
            type(
                "ColumnMean2",
                (column_mean.ColumnMean,),
                {
                    "name": "column_mean",
                    "Params": type("P2", (column_mean.ColumnMeanParams,), {"__module__": __name__}),
                },
            )
        )

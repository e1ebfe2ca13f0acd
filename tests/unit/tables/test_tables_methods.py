"""The table methods' shape ([stages] 4): one class per method, one registry by name.

Each class declares its name, flags and (DP) privacy; the CLI and ``tables compare`` read
the registry only. The run metadata each method writes is pinned here by its keys.
"""

from __future__ import annotations

import ast
import inspect

import pytest
from tables_support import make_births, tables_of

from synthflow.config import ReleaseSpec
from synthflow.errors import ConfigError
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.tables import Microdata, protect
from synthflow.tables.methods import FLAGS, METHODS, DPMethod, TableMethod, build_method

DP = ("laplace", "geometric", "gaussian", "top-down")

DESCRIBED = {  # tables.json's "method": its keys, as before the classes ([stages] 4)
    "cell-key": ["method", "ptable", "threshold", "record_key_column", "name"],
    "ten-five": ["method", "rule", "threshold", "base"],
    "suppress": ["method", "rule", "threshold", "base"],
    "round": ["method", "rule", "threshold", "base"],
    "laplace": ["method", "mechanism", "epsilon", "delta", "neighbouring", "nonnegative"],
    "geometric": ["method", "mechanism", "epsilon", "delta", "neighbouring", "nonnegative"],
    "gaussian": ["method", "mechanism", "epsilon", "delta", "neighbouring", "nonnegative"],
    "top-down": ["method", "epsilon", "mechanism", "delta", "split", "neighbouring"],
}


def _settings(name: str, spec: ReleaseSpec) -> dict[str, object]:
    flags = {dest: flag.get("default") for dest, flag in FLAGS.items()}
    return METHODS[name].settings(flags | {"epsilon": 1.0}, spec)


def test_one_class_per_name_in_its_own_module_and_no_builder_strings():
    assert sorted(METHODS) == sorted(DESCRIBED)
    for name, cls in METHODS.items():
        assert issubclass(cls, TableMethod) and cls.name == name
        assert cls.__module__.startswith("synthflow.tables.methods.")
        assert issubclass(cls, DPMethod) == cls.is_dp == (name in DP), name
        assert set(cls.flags) <= set(FLAGS), name
    # The registry and the methods name classes: no "module:attr" string, no lambda.
    modules = {inspect.getmodule(c) for c in (*METHODS.values(), TableMethod, build_method)}
    for module in modules:
        nodes = list(ast.walk(ast.parse(inspect.getsource(module))))
        assert not any(isinstance(n, ast.Lambda) for n in nodes), module
        strings = [n.value for n in nodes if isinstance(n, ast.Constant)]
        assert not [v for v in strings if isinstance(v, str) and v.startswith("synthflow.")]


def test_a_flag_several_methods_read_is_declared_once():
    assert METHODS["cell-key"].flags["threshold"] is METHODS["suppress"].flags["threshold"]
    assert METHODS["top-down"].flags["epsilon"] is METHODS["laplace"].flags["epsilon"]
    assert list(FLAGS)[:5] == ["epsilon", "delta", "nonnegative", "noise", "split"]


@pytest.mark.parametrize("name", sorted(DESCRIBED))
def test_each_method_describes_itself_as_before(name, births_spec):
    method = METHODS[name].build(**_settings(name, births_spec))
    assert type(method) is METHODS[name]
    assert list(method.describe()) == DESCRIBED[name]
    assert method.describe()["method"] == name
    assert (method.budget is not None) == method.is_dp


def test_invalid_settings_name_the_method():
    with pytest.raises(ConfigError, match=r"method 'round': .*base"):
        build_method("round", base=0)
    with pytest.raises(ConfigError, match="method 'laplace': "):
        build_method("laplace", epsilon=1.0, bogus=1)
    with pytest.raises(ConfigError, match="unknown method 'nope'"):
        build_method("nope")


@pytest.mark.parametrize("name", DP)
@pytest.mark.parametrize("neighbouring", ["replace_one", "add_remove"])
def test_dp_methods_declare_the_budget_and_sensitivity_they_charge(name, neighbouring, births_spec):
    settings = _settings(name, births_spec) | {"neighbouring": neighbouring}
    method = METHODS[name].build(**settings)
    assert isinstance(method, DPMethod)
    epsilon, delta = method.budget
    tables = tables_of(births_spec, {"name": "t", "columns": ["mother_age", "parity"]})
    ledger = Ledger(total_epsilon=epsilon, total_delta=delta)
    data = Microdata(make_births(200, seed=1), births_spec)
    protect(data, tables, method, rng=PrivacyRNG.from_seed(0), ledger=ledger)
    assert ledger.spent_epsilon == pytest.approx(epsilon)
    levels = [c for c in ledger.summary()["charges"] if c["mechanism"] != "none"]
    levels = [c for c in levels if "total" not in c["what"]]
    assert levels and {c["sensitivity"] for c in levels} == {method.sensitivity}

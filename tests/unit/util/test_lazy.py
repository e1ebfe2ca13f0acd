"""Lazy package exports (synthflow/_util/lazy.py): same names and objects as eager imports."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

PACKAGES = ("acceptance", "generators", "public", "release", "sweep", "tables")


@pytest.mark.parametrize("name", PACKAGES)
def test_every_export_resolves_to_its_submodule_object(name):
    import importlib

    package = importlib.import_module(f"synthflow.{name}")
    for export in package.__all__:
        value = getattr(package, export)
        module, attr = package._lazy_exports[export]
        assert value is getattr(importlib.import_module(module), attr), export
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        package.nope  # noqa: B018


def test_an_export_keeps_precedence_over_its_namesake_submodule():
    # 'evaluate' is both a function and a submodule of synthflow.acceptance: loading the
    # submodule first (any 'from synthflow.acceptance.evaluate import ...') must not turn
    # 'from synthflow.acceptance import evaluate' into the module. A fresh interpreter.
    code = textwrap.dedent(
        """
        import types
        from synthflow.acceptance.evaluate import AcceptanceReport
        from synthflow.acceptance import evaluate
        from synthflow.tables.compare import Comparison
        from synthflow.tables import compare
        print(isinstance(evaluate, types.ModuleType), isinstance(compare, types.ModuleType))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_all_and_the_type_checking_block_must_agree(tmp_path, monkeypatch):
    pkg = tmp_path / "lazypkg"
    pkg.mkdir()
    (pkg / "mod.py").write_text("A = 1\nB = 2\n")
    (pkg / "__init__.py").write_text(
        "from typing import TYPE_CHECKING\nfrom synthflow._util.lazy import lazy_package\n"
        "if TYPE_CHECKING:\n    from lazypkg.mod import A, B\n"
        "__all__ = ['A']\nlazy_package(__name__)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError, match=r"lazypkg: __all__ and .* differ: \['B'\]"):
        import lazypkg  # noqa: F401
    sys.modules.pop("lazypkg", None)


def test_generator_hyperparameters_match_the_registry():
    from synthflow.generators import REGISTRY
    from synthflow.generators.table import HYPERPARAMETERS

    # Two views of one table: each class's own Hyperparameters is the loader's.
    assert {m: c.Hyperparameters for m, c in REGISTRY.items()} == dict(HYPERPARAMETERS)


def test_the_registry_imports_no_generator_until_one_is_asked_for():
    code = (
        "import sys; from synthflow.generators.registry import REGISTRY; "
        "import synthflow.loader; names = sorted(REGISTRY); "
        "print([m for m in ('synthflow.generators.gan', 'synthflow.generators.workload', "
        "'synthflow.generators._smartnoise', 'torch') if m in sys.modules]); "
        "REGISTRY['workload']; print('synthflow.generators.workload' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "[]" and out[1] == "True"


def test_the_spec_loader_does_not_import_the_space():
    # config -> space -> generators -> transform -> config was the one import circle: the
    # loader checks grids through synthflow._grids, which imports neither. A fresh
    # interpreter, so that nothing imported by another test hides it.
    code = textwrap.dedent(
        """
        import sys
        from synthflow.loader import load_spec
        load_spec("births-2024")
        print(sorted(m for m in sys.modules if m in {"synthflow.space", "synthflow.transform"}))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

"""Lazy package exports (PEP 562), so that importing a package costs nothing until used.

``synthflow.acceptance`` exports ``evaluate`` from its submodule ``evaluate``; importing
it eagerly would load pandas, scipy and networkx whenever any module of the package is
imported (the CLI's ``synthflow.cli.evaluate`` among them). :func:`lazy_package` turns
a package's exports into attributes resolved on first access.

One subtlety: after loading a submodule, Python's import system binds it to the
package attribute of the same name (``synthflow.acceptance.evaluate`` = the module).
With eager imports the package's ``from .evaluate import evaluate`` ran afterwards and
the function won; :class:`_LazyPackage` keeps that precedence by not letting a
submodule replace an export of the same name.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["lazy_package"]


class _LazyPackage(ModuleType):
    _lazy_exports: dict[str, tuple[str, str]]

    def __getattr__(self, name: str) -> Any:  # called only when normal lookup fails
        where = self.__dict__.get("_lazy_exports", {})
        if name not in where:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        module, attr = where[name]
        value = getattr(importlib.import_module(module), attr)
        ModuleType.__setattr__(self, name, value)  # cached: the next access is plain
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if (
            isinstance(value, ModuleType)
            and value.__name__ == f"{self.__name__}.{name}"
            and name in self.__dict__.get("_lazy_exports", {})
        ):
            return  # the import system binding a submodule over an export of its name
        ModuleType.__setattr__(self, name, value)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.__dict__.get("_lazy_exports", {})))


def lazy_package(package: str) -> None:
    """Make ``package`` import its exports on first access.

    The exports are the ``from ... import`` statements of the package's
    ``if TYPE_CHECKING:`` block (what type checkers and readers see), read from its
    ``__init__.py``; call this at its end, after ``__all__``.

    Args:
        package: The package's ``__name__``.

    Raises:
        ImportError: If ``__all__`` and the imports of the block differ (a name added to
            one and not the other).
    """
    module = sys.modules[package]
    where: dict[str, tuple[str, str]] = {}
    tree = ast.parse(Path(str(module.__file__)).read_text("utf-8"))
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module:
                    where.update((a.asname or a.name, (stmt.module, a.name)) for a in stmt.names)
    declared = set(getattr(module, "__all__", ())) - set(vars(module))  # minus eager names
    if declared != set(where):
        raise ImportError(
            f"{package}: __all__ and the TYPE_CHECKING imports differ: "
            f"{sorted(declared.symmetric_difference(where))}"
        )
    module.__class__ = _LazyPackage
    ModuleType.__setattr__(module, "_lazy_exports", where)

"""Plug-ins: a statistical office's own generators and criterion kinds, on the CLI too.

A plug-in is a Python module that registers what it defines when imported
(:func:`synthflow.generators.register`, :func:`synthflow.criteria.register`). Two ways
to load one:

* ``synthflow --plugin MODULE_OR_FILE COMMAND ...``: an importable module name
  (``my_office.measures``) or a ``.py`` file (``./independent.py``), repeatable;
* an installed distribution's entry point in the group ``synthflow.plugins``
  (``[project.entry-points."synthflow.plugins"]`` in its ``pyproject.toml``), loaded by
  every command.

A sweep's workers load the same plug-ins (:data:`LOADED`): a local sweep's in their
initializer, a Dask cluster's through a worker plug-in
(:mod:`synthflow.sweep.workers.cluster_plugins`; a ``.py`` file must then be at the same
path on the workers).

docs/adding-a-generator.md and docs/adding-a-criterion.md build one each, run as
written by the tests through the CLI.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from synthflow.errors import ConfigError

__all__ = ["ENTRY_POINT_GROUP", "LOADED", "load_plugin", "load_plugins"]

ENTRY_POINT_GROUP = "synthflow.plugins"

LOADED: list[str] = []
"""The plug-ins named so far in this process (module names, files as absolute paths):
a local sweep's workers, forked before they were loaded, load them too."""


def load_plugin(name: str) -> ModuleType:
    """Import one plug-in: a module name, or the path of a ``.py`` file.

    Raises:
        ConfigError: A module that cannot be found or whose import fails.
    """
    path = Path(name)
    try:
        if path.suffix == ".py":
            if not path.is_file():
                raise ConfigError(f"--plugin {name!r}: no such file")
            stem = f"synthflow_plugin_{path.stem}"
            if stem in sys.modules:
                return sys.modules[stem]
            _remember(str(path.resolve()))
            spec = importlib.util.spec_from_file_location(stem, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[stem] = module  # dataclasses look their module up while it runs
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[stem]
                raise
            return module
        module = importlib.import_module(name)
        _remember(name)
        return module
    except ConfigError:
        raise
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"--plugin {name!r}: no module {exc.name!r}; give an importable module name or "
            "the path of a .py file"
        ) from exc
    except Exception as exc:  # the plug-in's own error, named
        raise ConfigError(f"--plugin {name!r} failed to load: {type(exc).__name__}: {exc}") from exc


def load_plugins(names: Iterable[str] = (), *, entry_points: bool = True) -> list[ModuleType]:
    """Load the installed plug-ins (entry points) and then ``names``, in order."""
    loaded = []
    if entry_points:
        from importlib.metadata import entry_points as found  # noqa: PLC0415

        for ep in found(group=ENTRY_POINT_GROUP):
            try:
                loaded.append(ep.load())
            except Exception as exc:
                raise ConfigError(
                    f"the installed plug-in {ep.name!r} ({ep.value}) failed to load: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
    loaded += [load_plugin(n) for n in names]
    return loaded


def _remember(name: str) -> None:
    if name not in LOADED:
        LOADED.append(name)

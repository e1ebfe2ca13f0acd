"""The one generator registry: each family's name, hyperparameters and class.

The spec loader and ``synthflow space`` need a family's hyperparameters without
importing its generator (pandas, scipy, torch, jax): the table, :data:`GENERATORS`, holds
the hyperparameter class and where the generator class lives (``"module:Class"``),
imported the first time it is asked for. :data:`~synthflow.generators.registry.REGISTRY`
(name -> class) and :data:`HYPERPARAMETERS` (name -> hyperparameters) are two views of
this one table, so they cannot disagree;
:func:`~synthflow.generators.registry.register` adds a plug-in's class to it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

from synthflow.generators.hyperparameters import (
    AIMHyperparameters,
    DPCTGANHyperparameters,
    MSTHyperparameters,
    MWEMHyperparameters,
    PATECTGANHyperparameters,
    PEPHyperparameters,
    PrivBayesHyperparameters,
    WorkloadHyperparameters,
)

__all__ = ["GENERATORS", "HYPERPARAMETERS", "GeneratorTable"]


class GeneratorTable:
    """Family name -> (hyperparameter class, generator class or ``"module:Class"``)."""

    def __init__(self, entries: Mapping[str, tuple[type, str | type]]) -> None:
        self._entries: dict[str, tuple[type, str | type]] = dict(entries)
        self.hyperparameters: Mapping[str, type] = _Hyperparameters(self)
        """Name -> hyperparameter class (imports no generator)."""
        self.classes: MutableMapping[str, Any] = _Classes(self)
        """Name -> generator class (imported on first use)."""

    def names(self) -> list[str]:
        """The registered family names, in registration order."""
        return list(self._entries)

    def hyperparameters_of(self, name: str) -> type:
        """The hyperparameter class of ``name`` (KeyError if unknown)."""
        return self._entries[name][0]

    def class_of(self, name: str) -> Any:
        """The generator class of ``name``, importing its module the first time."""
        hp, target = self._entries[name]
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            target = getattr(importlib.import_module(module), attr)
            self._entries[name] = (hp, target)
        return target

    def add(self, name: str, cls: Any) -> None:
        """Register (or replace) ``name`` with generator class ``cls``."""
        self._entries[name] = (cls.Hyperparameters, cls)

    def remove(self, name: str) -> None:
        """Unregister ``name``."""
        del self._entries[name]


class _Hyperparameters(Mapping[str, type]):
    def __init__(self, table: GeneratorTable) -> None:
        self._table = table

    def __getitem__(self, name: str) -> type:
        return self._table.hyperparameters_of(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.names())

    def __len__(self) -> int:
        return len(self._table.names())


class _Classes(MutableMapping[str, Any]):
    def __init__(self, table: GeneratorTable) -> None:
        self._table = table

    def __getitem__(self, name: str) -> Any:
        return self._table.class_of(name)

    def __setitem__(self, name: str, cls: Any) -> None:
        self._table.add(name, cls)

    def __delitem__(self, name: str) -> None:
        self._table.remove(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._table.names())

    def __len__(self) -> int:
        return len(self._table.names())


GENERATORS = GeneratorTable(
    {
        "privbayes": (PrivBayesHyperparameters, "synthflow.generators.privbayes:PrivBayes"),
        "workload": (WorkloadHyperparameters, "synthflow.generators.workload:WorkloadGenerator"),
        "mwem": (MWEMHyperparameters, "synthflow.generators.mwem:MWEM"),
        "pep": (PEPHyperparameters, "synthflow.generators.pep:PEP"),
        "mst": (MSTHyperparameters, "synthflow.generators._smartnoise:MST"),
        "aim": (AIMHyperparameters, "synthflow.generators._smartnoise:AIM"),
        "dpctgan": (DPCTGANHyperparameters, "synthflow.generators.gan:DPCTGAN"),
        "patectgan": (PATECTGANHyperparameters, "synthflow.generators.gan:PATECTGAN"),
    }
)
"""The one generator registry: classes import lazily (the generators' modules import
:mod:`~synthflow.generators.hyperparameters`, so the table lives here, not there)."""

HYPERPARAMETERS = GENERATORS.hyperparameters
"""Generator family -> its hyperparameter class (a view of :data:`GENERATORS`)."""

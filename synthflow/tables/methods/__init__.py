"""The table protection methods: one registry, name -> class.

Each method is a class in a module of its own (:mod:`.cell_key`, :mod:`.rules`,
:mod:`.independent`, :mod:`.top_down`) that declares its name, its command-line flags,
how it builds from them and how it protects a table (:class:`~.base.TableMethod`).
``tables protect`` adds every flag of :data:`FLAGS` once, grouped by the methods that
read it, and asks the chosen method for the rest; ``tables compare`` builds its methods
by name. Adding a method is a class and one entry in :data:`METHODS`.

Light on purpose (no numpy, no pandas): the CLI builds its parser from this package.
"""

from __future__ import annotations

from typing import Any

from synthflow.errors import ConfigError
from synthflow.tables.methods.base import DPMethod, Flag, TableMethod, floats
from synthflow.tables.methods.cell_key import CellKey
from synthflow.tables.methods.independent import Gaussian, Geometric, IndependentNoise, Laplace
from synthflow.tables.methods.rules import Round, Rounding, Suppress, TenFive
from synthflow.tables.methods.top_down import TopDown

__all__ = [
    "FLAGS",
    "METHODS",
    "CellKey",
    "DPMethod",
    "Gaussian",
    "Geometric",
    "IndependentNoise",
    "Laplace",
    "Round",
    "Rounding",
    "Suppress",
    "TableMethod",
    "TenFive",
    "TopDown",
    "build_method",
    "floats",
]

# In this order the help lists the flags as it always has: each where a method first
# declares it (--epsilon, ... --split, then cell-key's, then --threshold, --base).
METHODS: dict[str, type[TableMethod]] = {
    m.name: m for m in (Laplace, Geometric, Gaussian, TopDown, CellKey, TenFive, Suppress, Round)
}
"""Method name (as on the command line) -> its class."""


def _flags() -> dict[str, Flag]:
    out: dict[str, Flag] = {}
    for method in METHODS.values():
        for dest, flag in method.flags.items():
            if out.setdefault(dest, flag) != flag:
                raise AssertionError(f"{method.name} declares --{dest} unlike another method")
    return out


FLAGS: dict[str, Flag] = _flags()
"""Every method-specific flag, by destination (``--rate-small`` is ``rate_small``)."""


def build_method(name: str, **settings: Any) -> TableMethod:
    """Build a method by name (see :data:`METHODS`).

    Raises:
        ConfigError: For an unknown method or invalid settings.
    """
    if name not in METHODS:
        raise ConfigError(f"unknown method {name!r}; use one of {sorted(METHODS)}")
    return METHODS[name].build(**settings)

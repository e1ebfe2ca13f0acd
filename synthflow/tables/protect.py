"""One protection method applied to every table: the library behind ``tables protect``.

Methods are classes (:class:`synthflow.tables.methods.base.TableMethod`) built by name
from the registry :data:`synthflow.tables.methods.METHODS`; :func:`protect` tabulates the
microdata (with record keys when the method needs them), applies the method and returns
the published tables. :func:`write_tables` writes them as CSV, one row per cell.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.tables._spec import TableSpec
from synthflow.tables.tabulate import CountTable, Microdata, ReleasedTable, tabulate_all

if TYPE_CHECKING:
    from synthflow.tables.methods.base import TableMethod

__all__ = ["protect", "write_metadata", "write_tables"]


def protect(
    data: Microdata,
    tables: Sequence[TableSpec],
    method: TableMethod,
    *,
    rng: PrivacyRNG,
    ledger: Ledger | None = None,
    groups: Sequence[Sequence[CountTable]] | None = None,
) -> list[ReleasedTable]:
    """Tabulate ``data`` and protect every table with ``method``.

    Args:
        data: Microdata to tabulate.
        tables: Tables (with their levels) to release.
        method: The protection method.
        rng: Source of randomness (record keys, noise).
        ledger: Required for DP methods; charged before any noise is drawn.
        groups: Tabulated counts to reuse (only for methods that need no record keys).
    """
    keys = method.record_keys(data, rng)
    if groups is None or keys is not None:
        groups = tabulate_all(tables, data, record_keys=keys)
    return method.apply(groups, spec=data.spec, ledger=ledger, rng=rng)


def write_tables(tables: Sequence[ReleasedTable], out: Path) -> list[Path]:
    """Write each table as ``<name>.csv`` in ``out``; returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    return [t.write_csv(out / f"{t.spec.name}.csv") for t in tables]


def write_metadata(path: Path, meta: dict[str, Any]) -> None:
    """Write run metadata as indented JSON."""
    path.write_text(json.dumps(meta, indent=2, default=str) + "\n", encoding="utf-8")

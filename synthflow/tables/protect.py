"""One protection method applied to every table: the library behind ``tables protect``.

Methods share one small protocol (:class:`TableMethod`) and are built by name from the
registry :data:`synthflow.tables.methods.METHODS`, where each names its CLI options;
:func:`protect` tabulates the microdata (with record keys when the method needs them),
applies the method and returns the published tables. :func:`write_tables` writes them as
CSV, one row per cell.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

import numpy as np

from synthflow.config.model import ReleaseSpec
from synthflow.errors import ConfigError
from synthflow.ledger import Ledger
from synthflow.rng import PrivacyRNG
from synthflow.tables._spec import TableSpec
from synthflow.tables.cellkey import (
    cell_key_perturbation,
    draw_category_keys,
    draw_record_keys,
    record_keys_from_ids,
)
from synthflow.tables.dpnoise import NoiseOptions, independent_noise
from synthflow.tables.ptable import PTable, PTableParams, make_ptable
from synthflow.tables.rounding import RoundingOptions, apply_rounding
from synthflow.tables.tabulate import CountTable, Microdata, ReleasedTable, tabulate_all
from synthflow.tables.topdown import TopDownOptions, top_down

__all__ = [
    "CellKey",
    "IndependentNoise",
    "Rounding",
    "TableMethod",
    "TopDown",
    "protect",
    "write_tables",
]


class TableMethod(Protocol):
    """A table protection method."""

    is_dp: ClassVar[bool]

    @property
    def name(self) -> str:
        """Method name, as on the command line."""

    @property
    def record_key_range(self) -> int | None:
        """Key range of the record keys the method needs (None: no keys)."""

    def apply(
        self,
        groups: Sequence[Sequence[CountTable]],
        *,
        spec: ReleaseSpec,
        ledger: Ledger | None,
        rng: PrivacyRNG,
    ) -> list[ReleasedTable]:
        """Protect every level of every table."""

    def describe(self) -> dict[str, Any]:
        """Options, for run metadata."""


@dataclass(frozen=True, kw_only=True)
class CellKey:
    """Cell key perturbation with a generated p-table."""

    ptable: PTableParams = field(default_factory=PTableParams)
    threshold: int = 0
    """Suppress perturbed counts below this (0: none)."""
    record_key_column: str | None = None
    """Take record keys as this ID column modulo the key range (default: uniform)."""
    name: str = "cell-key"
    is_dp: ClassVar[bool] = False

    @classmethod
    def make(cls, variant: str, **settings: Any) -> CellKey:
        """The method from its settings (``variant``: its name, unused)."""
        return cls(**settings)

    @property
    def record_key_range(self) -> int | None:
        """The p-table's key range."""
        return self.ptable.keys

    def table(self) -> PTable:
        """The generated p-table."""
        return make_ptable(self.ptable)

    def apply(
        self,
        groups: Sequence[Sequence[CountTable]],
        *,
        spec: ReleaseSpec,
        ledger: Ledger | None,
        rng: PrivacyRNG,
    ) -> list[ReleasedTable]:
        """Perturb every cell from the p-table."""
        pt = self.table()
        cat = draw_category_keys(spec, pt.keys, rng) if self.ptable.zero_rate > 0 else None
        return cell_key_perturbation(groups, pt, category_keys=cat, threshold=self.threshold)

    def describe(self) -> dict[str, Any]:
        """Options, for run metadata."""
        return {"method": self.name, **asdict(self)}


@dataclass(frozen=True, kw_only=True)
class Rounding:
    """The 10-5 rule, threshold suppression or rounding to a base."""

    options: RoundingOptions
    is_dp: ClassVar[bool] = False

    @classmethod
    def make(cls, variant: str, **settings: Any) -> Rounding:
        """The rule ``variant`` (ten-five, suppress, round) with its settings."""
        return cls(options=RoundingOptions(rule=variant, **settings))  # type: ignore[arg-type]

    @property
    def name(self) -> str:
        """Method name (the rule)."""
        return self.options.rule

    @property
    def record_key_range(self) -> int | None:
        """No record keys needed."""
        return None

    def apply(
        self,
        groups: Sequence[Sequence[CountTable]],
        *,
        spec: ReleaseSpec,
        ledger: Ledger | None,
        rng: PrivacyRNG,
    ) -> list[ReleasedTable]:
        """Apply the rule."""
        return apply_rounding(groups, self.options)

    def describe(self) -> dict[str, Any]:
        """Options, for run metadata."""
        return {"method": self.name, **asdict(self.options)}


def _need_ledger(ledger: Ledger | None, name: str) -> Ledger:
    if ledger is None:
        raise ValueError(f"the {name} method is DP and needs a ledger to charge")
    return ledger


@dataclass(frozen=True, kw_only=True)
class IndependentNoise:
    """Laplace, geometric or Gaussian noise on every table independently."""

    options: NoiseOptions
    is_dp: ClassVar[bool] = True

    @classmethod
    def make(cls, variant: str, **settings: Any) -> IndependentNoise:
        """The mechanism ``variant`` (laplace, geometric, gaussian) with its settings."""
        return cls(options=NoiseOptions(mechanism=variant, **settings))  # type: ignore[arg-type]

    @property
    def name(self) -> str:
        """Method name (the mechanism)."""
        return self.options.mechanism

    @property
    def record_key_range(self) -> int | None:
        """No record keys needed."""
        return None

    def apply(
        self,
        groups: Sequence[Sequence[CountTable]],
        *,
        spec: ReleaseSpec,
        ledger: Ledger | None,
        rng: PrivacyRNG,
    ) -> list[ReleasedTable]:
        """Charge the ledger and add noise."""
        return independent_noise(
            groups, self.options, ledger=_need_ledger(ledger, self.name), rng=rng
        )

    def describe(self) -> dict[str, Any]:
        """Options, for run metadata."""
        return {"method": self.name, **asdict(self.options)}


@dataclass(frozen=True, kw_only=True)
class TopDown:
    """The top-down method (additive at every level)."""

    options: TopDownOptions
    name: str = "top-down"
    is_dp: ClassVar[bool] = True

    @classmethod
    def make(cls, variant: str, **settings: Any) -> TopDown:
        """The top-down method with its settings (``variant``: its name, unused)."""
        return cls(options=TopDownOptions(**settings))

    @property
    def record_key_range(self) -> int | None:
        """No record keys needed."""
        return None

    def apply(
        self,
        groups: Sequence[Sequence[CountTable]],
        *,
        spec: ReleaseSpec,
        ledger: Ledger | None,
        rng: PrivacyRNG,
    ) -> list[ReleasedTable]:
        """Charge the ledger and release top-down."""
        return top_down(groups, self.options, ledger=_need_ledger(ledger, self.name), rng=rng)

    def describe(self) -> dict[str, Any]:
        """Options, for run metadata."""
        return {"method": self.name, **asdict(self.options)}


def record_keys_for(method: TableMethod, data: Microdata, rng: PrivacyRNG) -> np.ndarray | None:
    """Record keys for ``method``: an ID column modulo the key range, or uniform draws."""
    keys = method.record_key_range
    if keys is None:
        return None
    column = getattr(method, "record_key_column", None)
    if column is not None:
        if column not in data.frame.columns:
            raise ConfigError(
                f"record key column {column!r} is not in the data; drop --record-key-column "
                "to draw uniform keys"
            )
        return record_keys_from_ids(data.frame[column].to_numpy(), keys)
    return draw_record_keys(len(data), keys, rng)


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
    keys = record_keys_for(method, data, rng)
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

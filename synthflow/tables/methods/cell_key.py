"""Cell key perturbation with a generated p-table (``--method cell-key``; not DP).

The algorithm is :mod:`synthflow.tables.cellkey`, the p-table :mod:`synthflow.tables.ptable`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from synthflow.errors import ConfigError
from synthflow.tables.methods.base import THRESHOLD, Flag, Options, TableMethod, or_default

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np

    from synthflow.config.model import ReleaseSpec
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.tables.ptable import PTable, PTableParams
    from synthflow.tables.tabulate import CountTable, Microdata, ReleasedTable

__all__ = ["CellKey"]


def _default_ptable() -> PTableParams:
    from synthflow.tables.ptable import PTableParams  # noqa: PLC0415

    return PTableParams()


@dataclass(frozen=True, kw_only=True)
class CellKey(TableMethod):
    """Cell key perturbation with a generated p-table."""

    name: ClassVar[str] = "cell-key"
    flags: ClassVar[Mapping[str, Flag]] = {
        "keys": {"type": int, "choices": (256, 4096), "default": 4096, "help": "key range"},
        "max_perturbation": {"type": int, "help": "largest absolute perturbation"},
        "rate_small": {"type": float, "help": "perturbation rate of a count of 1"},
        "rate_large": {"type": float, "help": "perturbation rate of large counts"},
        "decay": {"type": float, "help": "counts over which the rate falls by 1/e"},
        "zero_rate": {"type": float, "help": "share of zero cells perturbed"},
        "record_key_column": {"help": "ID column: record key = ID mod keys"},
        "threshold": THRESHOLD,
    }

    ptable: PTableParams = field(default_factory=_default_ptable)
    threshold: int = 0
    """Suppress perturbed counts below this (0: none)."""
    record_key_column: str | None = None
    """Take record keys as this ID column modulo the key range (default: uniform)."""

    @classmethod
    def settings(cls, options: Options, spec: ReleaseSpec) -> dict[str, Any]:
        """The p-table (a preset with the flags given changed), threshold and ID column."""
        from synthflow.tables.ptable import PRESETS  # noqa: PLC0415

        names = ("max_perturbation", "rate_small", "rate_large", "decay", "zero_rate")
        changed = {k: options[k] for k in names if options.get(k) is not None}
        try:
            params = dataclasses.replace(PRESETS[str(options["keys"])], **changed)
        except ValueError as exc:
            raise ConfigError(f"p-table: {exc}") from exc
        return {
            "ptable": params,
            "threshold": or_default(options.get("threshold"), 0),
            "record_key_column": options.get("record_key_column"),
        }

    @classmethod
    def degenerate(cls, settings: Mapping[str, Any]) -> str:
        """A p-table that never perturbs a count of 1."""
        text = "--rate-small 0 perturbs no count; use a rate > 0"
        return text * (settings["ptable"].rate_small == 0)

    @property
    def extra_columns(self) -> tuple[str, ...]:
        """The ID column of the record keys, if one is named."""
        return () if self.record_key_column is None else (self.record_key_column,)

    def record_keys(self, data: Microdata, rng: PrivacyRNG) -> np.ndarray:
        """The ID column modulo the key range, or uniform draws."""
        from synthflow.tables.cellkey import (  # noqa: PLC0415
            draw_record_keys,
            record_keys_from_ids,
        )

        keys = self.ptable.keys
        column = self.record_key_column
        if column is not None:
            if column not in data.frame.columns:
                raise ConfigError(
                    f"record key column {column!r} is not in the data; drop "
                    "--record-key-column to draw uniform keys"
                )
            return record_keys_from_ids(data.frame[column].to_numpy(), keys)
        return draw_record_keys(len(data), keys, rng)

    def table(self) -> PTable:
        """The generated p-table."""
        from synthflow.tables.ptable import make_ptable  # noqa: PLC0415

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
        from synthflow.tables.cellkey import (  # noqa: PLC0415
            cell_key_perturbation,
            draw_category_keys,
        )

        pt = self.table()
        cat = draw_category_keys(spec, pt.keys, rng) if self.ptable.zero_rate > 0 else None
        return cell_key_perturbation(groups, pt, category_keys=cat, threshold=self.threshold)

    def describe(self) -> dict[str, Any]:
        """Options, for run metadata (``name`` too, as tables.json always held it)."""
        return {"method": self.name, **asdict(self), "name": self.name}

    def write_public_files(self, out: Path) -> list[Path]:
        """The p-table, published with the tables as ``ptable.csv``."""
        path = out / "ptable.csv"
        self.table().to_frame().to_csv(path, index=False)
        return [path]

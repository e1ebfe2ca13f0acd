"""The list of tables to protect (``TABLES.yaml``), loaded once into frozen objects.

A tables file names frequency tables over the binned release columns::

    tables:
      - name: age_by_parity
        columns: [mother_age, parity]
        transformations: {mother_age: b}      # letter per column; default a
        structural_zeros:                     # optional; cells that are impossible
          - {mother_age: ["<18", "18-19"], parity: ["4-6", "7-10", ">10"]}
          - all: [[gestation_week, "<", 29], [birth_weight, ">", 2999]]
      - name: sex_by_gestation_by_month
        columns: [birth_sex, gestation_week]
        geography: [birth_month]              # optional hierarchy, coarsest first

Categories always come from the spec's public bins, never from the data. A structural
zero is written either as labels per column (a column left out means every label) or
as clauses ``[column, op, value]`` that hold for a bin when they hold for every value
in it (the same reading as the spec's synthetic constraints). A table with a geography
hierarchy ``[g1, g2, ...]`` is released at every level: ``national`` (the columns
alone), then ``g1`` x columns, then ``g1`` x ``g2`` x columns, and so on; each level
is nested in the one before.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from synthflow._bins import Bin
from synthflow._ops import COMPARATORS
from synthflow.config.model import ReleaseSpec
from synthflow.errors import ConfigError

__all__ = ["LevelSpec", "TableSpec", "load_tables", "parse_tables"]

_NAME = re.compile(r"^[A-Za-z0-9_\-]+$")
_OPS = COMPARATORS


@dataclass(frozen=True, kw_only=True)
class LevelSpec:
    """One released level of a table: its columns (geography first) and public bins."""

    table: str
    """Name of the table this level belongs to."""
    level: str
    """``national`` for the columns alone, else the finest geography column."""
    name: str
    """File stem: the table name, or ``<table>.<level>`` for a table with geography."""
    columns: tuple[str, ...]
    """Dimensions in array order: geography levels (coarsest first), then the columns."""
    letters: tuple[str, ...]
    """Transformation letter of each dimension."""
    labels: tuple[tuple[str, ...], ...]
    """Public bin labels of each dimension, in code order."""
    structural: np.ndarray
    """Boolean array over the cells, True where the cell is a structural zero."""
    depth: int
    """Number of geography dimensions in front (0 for ``national``)."""

    @property
    def shape(self) -> tuple[int, ...]:
        """Number of bins of each dimension."""
        return tuple(len(lab) for lab in self.labels)

    @property
    def cells(self) -> int:
        """Number of cells."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def description(self) -> str:
        """Its dimensions, cells and structural zeros, as the comparison's report says."""
        dims = " x ".join(
            f"{c} ({len(lab)})" for c, lab in zip(self.columns, self.labels, strict=True)
        )
        return f"{dims}: {self.cells} cells, {int(self.structural.sum())} structural zeros"


@dataclass(frozen=True, kw_only=True)
class TableSpec:
    """One table of the tables file, with all its levels."""

    name: str
    """Table name (used in file names and reports)."""
    columns: tuple[str, ...]
    """Release columns crossed by the table."""
    geography: tuple[str, ...]
    """Geography hierarchy, coarsest first (empty: no geography)."""
    levels: tuple[LevelSpec, ...]
    """Released levels, coarsest first (``national`` first)."""

    def __post_init__(self) -> None:
        if not self.levels or self.levels[0].level != "national":
            raise ValueError(f"table {self.name!r} needs its national level first")


def _as_list(where: str, value: Any) -> list[Any]:
    if isinstance(value, (str, int, float)):
        return [value]
    if isinstance(value, list) and value:
        return value
    raise ConfigError(f"{where}: expected a label or a non-empty list of labels, got {value!r}")


def _bin_holds(b: Bin, op: str, a: float) -> bool:
    """Whether ``x op a`` holds for every value x of bin ``b``."""
    if op == "!=":
        return b.hi < a or b.lo > a
    if op == "==":
        return b.lo == a and b.hi == a
    edge = b.hi if op in ("<", "<=") else b.lo
    return bool(_OPS[op](edge, a))


def _structural_mask(
    where: str,
    raw: Any,
    dims: Sequence[str],
    bins: Sequence[Sequence[Bin]],
    kinds: Sequence[str],
) -> np.ndarray:
    """Boolean cell mask of one structural-zero entry (labels or clauses)."""
    shape = tuple(len(b) for b in bins)
    if not isinstance(raw, dict) or not raw:
        raise ConfigError(f"{where}: expected a mapping column -> labels, or {{all: [clauses]}}")
    per_dim = [np.ones(n, dtype=bool) for n in shape]
    if set(raw) == {"all"}:
        clauses = raw["all"]
        if not isinstance(clauses, list) or not clauses:
            raise ConfigError(f"{where}.all: expected a list of [column, op, value] clauses")
        for clause in clauses:
            if not (isinstance(clause, list) and len(clause) == 3):
                raise ConfigError(f"{where}.all: a clause is [column, op, value], got {clause!r}")
            col, op, value = clause
            if col not in dims:
                raise ConfigError(f"{where}.all: column {col!r} is not a dimension of the table")
            if op not in _OPS:
                raise ConfigError(
                    f"{where}.all: unknown operator {op!r}; use one of {sorted(_OPS)}"
                )
            i = dims.index(col)
            if kinds[i] != "int":
                raise ConfigError(
                    f"{where}.all: column {col!r} is categorical; name its labels instead"
                )
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{where}.all: clause value must be a number, got {value!r}")
            holds = np.array([_bin_holds(b, op, float(value)) for b in bins[i]])
            per_dim[i] &= holds
    else:
        for col, labels in raw.items():
            if col not in dims:
                raise ConfigError(
                    f"{where}: column {col!r} is not a dimension of the table {list(dims)}"
                )
            i = dims.index(col)
            known = [b.label for b in bins[i]]
            wanted = [str(x) for x in _as_list(f"{where}.{col}", labels)]
            unknown = [x for x in wanted if x not in known]
            if unknown:
                raise ConfigError(
                    f"{where}.{col}: labels {unknown} are not bins of the column; bins: {known}"
                )
            per_dim[i] = np.isin(np.array(known, dtype=object), wanted)
    mask = per_dim[0]
    for m in per_dim[1:]:
        mask = np.multiply.outer(mask, m)
    return np.asarray(mask, dtype=bool).reshape(shape)


def _parse_table(where: str, raw: Any, spec: ReleaseSpec) -> TableSpec:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping with name and columns, got {raw!r}")
    allowed = {"name", "columns", "transformations", "geography", "structural_zeros"}
    unknown = set(raw) - allowed
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(allowed)}")
    for key in ("name", "columns"):
        if key not in raw:
            raise ConfigError(f"{where}: missing required key {key!r}")
    name = str(raw["name"])
    if not _NAME.match(name):
        raise ConfigError(
            f"{where}.name: {name!r} must be letters, digits, '_' or '-' (it names files)"
        )
    columns = raw["columns"]
    geography = raw.get("geography") or []
    for key, value in (("columns", columns), ("geography", geography)):
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            raise ConfigError(f"{where}.{key}: expected a list of column names, got {value!r}")
    if not columns:
        raise ConfigError(f"{where}.columns: a table needs at least one column")
    dims = [*geography, *columns]
    if len(set(dims)) != len(dims):
        raise ConfigError(f"{where}: columns and geography must be distinct, got {dims}")
    for c in dims:
        if c not in spec.column_names:
            raise ConfigError(f"{where}: unknown column {c!r}; spec columns: {spec.column_names}")
    letters_raw = raw.get("transformations") or {}
    if not isinstance(letters_raw, dict):
        raise ConfigError(f"{where}.transformations: expected a mapping column -> letter")
    extra = set(letters_raw) - set(dims)
    if extra:
        raise ConfigError(
            f"{where}.transformations: {sorted(extra)} are not columns or geography of the table"
        )
    letters = {c: str(letters_raw.get(c, "a")) for c in dims}
    trans = {c: spec.column(c).transformation(letters[c]) for c in dims}
    kinds = [spec.column(c).kind for c in dims]
    bins = [trans[c].bins for c in dims]
    zeros_raw = raw.get("structural_zeros") or []
    if not isinstance(zeros_raw, list):
        raise ConfigError(f"{where}.structural_zeros: expected a list of entries")
    full_shape = tuple(len(b) for b in bins)
    full_mask = np.zeros(full_shape, dtype=bool)
    for k, entry in enumerate(zeros_raw):
        full_mask |= _structural_mask(f"{where}.structural_zeros[{k}]", entry, dims, bins, kinds)
    if full_mask.all():
        raise ConfigError(f"{where}.structural_zeros: every cell would be a structural zero")
    levels = []
    g = len(geography)
    for depth in range(g + 1):
        # A coarser level is a structural zero only where every finer cell is one.
        mask = full_mask.all(axis=tuple(range(depth, g))) if depth < g else full_mask
        level_dims = dims[:depth] + dims[g:]
        level = "national" if depth == 0 else geography[depth - 1]
        levels.append(
            LevelSpec(
                table=name,
                level=level,
                name=name if g == 0 else f"{name}.{level}",
                columns=tuple(level_dims),
                letters=tuple(letters[c] for c in level_dims),
                labels=tuple(trans[c].labels for c in level_dims),
                structural=np.asarray(mask, dtype=bool),
                depth=depth,
            )
        )
    return TableSpec(
        name=name, columns=tuple(columns), geography=tuple(geography), levels=tuple(levels)
    )


def parse_tables(raw: Any, spec: ReleaseSpec, *, where: str = "tables") -> tuple[TableSpec, ...]:
    """Validate the parsed YAML of a tables file against ``spec``.

    Raises:
        ConfigError: With the offending key, its value and how to fix it.
    """
    if not isinstance(raw, dict) or set(raw) - {"tables", "description"} or "tables" not in raw:
        raise ConfigError(f"{where}: expected a mapping with a 'tables' list (and a description)")
    items = raw["tables"]
    if not isinstance(items, list) or not items:
        raise ConfigError(f"{where}.tables: expected a non-empty list of tables")
    tables = tuple(_parse_table(f"{where}.tables[{i}]", t, spec) for i, t in enumerate(items))
    names = [t.name for t in tables]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"{where}.tables: table names must be unique; repeated: {dupes}")
    return tables


def load_tables(path: str | Path, spec: ReleaseSpec) -> tuple[TableSpec, ...]:
    """Read and validate a tables file (see the module docstring for its format).

    Raises:
        ConfigError: If the file is missing, not YAML, or names unknown columns, letters
            or labels.
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(
            f"tables file {str(p)!r} does not exist; pass e.g. configs/tables_births.yaml"
        )
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"tables file {str(p)!r} is not valid YAML: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"tables file {str(p)!r} is nested too deeply") from None
    return parse_tables(raw, spec, where=str(p))

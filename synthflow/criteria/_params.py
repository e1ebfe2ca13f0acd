"""Reading a criterion's parameters from the spec: the checks every kind's ``Params`` uses.

A kind declares its parameters as a frozen, keyword-only dataclass whose fields carry
their JSON Schema in ``metadata["schema"]`` (:func:`param`); :func:`check_keys` refuses a
key no field names, and :func:`params_schema` gives the schema's properties, so that the
shipped ``spec.schema.json`` is generated from the same fields the loader accepts.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from synthflow.config.values import brief, number
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from synthflow.config.model import Column, CriterionParams

__all__ = [
    "COMMON_KEYS",
    "check_keys",
    "column_list",
    "param",
    "param_names",
    "params_schema",
    "target_column",
]

COMMON_KEYS = ("name", "kind", "threshold", "epsilon")
"""The keys of every criterion (:class:`~synthflow.config.model.CriterionSpec`'s own)."""

TEXT: dict[str, Any] = {"type": "string"}
COLUMNS: dict[str, Any] = {"type": "array", "items": TEXT, "minItems": 1, "uniqueItems": True}


def param(default: Any = dataclasses.MISSING, *, schema: dict[str, Any]) -> Any:
    """A ``Params`` field with its JSON Schema (``default`` omitted: a required key)."""
    if isinstance(default, tuple | list | dict) and default:
        raise TypeError("a mutable or non-empty default needs default_factory")
    return dataclasses.field(default=default, metadata={"schema": schema})


def param_names(params: type[CriterionParams]) -> tuple[str, ...]:
    """The keys a kind's parameters accept, in declaration order."""
    return tuple(f.name for f in dataclasses.fields(params))


def params_schema(params: type[CriterionParams]) -> tuple[dict[str, Any], list[str]]:
    """JSON Schema properties of a kind's parameters, and the required ones."""
    props, required = {}, []
    for f in dataclasses.fields(params):
        props[f.name] = f.metadata["schema"]
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    return props, required


def check_keys(where: str, kind: str, raw: Mapping[str, Any], params: type[CriterionParams]):
    """Refuse a key the kind's parameters do not name, or a missing required one."""
    allowed = param_names(params)
    unknown = sorted(str(k) for k in raw if k not in allowed and k not in COMMON_KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {unknown} for a {kind} criterion; its own keys are "
            f"{list(allowed) or 'none'} besides {list(COMMON_KEYS)} (docs/spec.md)"
        )
    _, required = params_schema(params)
    missing = [k for k in required if k not in raw]
    if missing:
        raise ConfigError(f"{where}: a {kind} criterion needs {missing}")


def target_column(where: str, raw: Mapping[str, Any], columns: Mapping[str, Column]) -> str:
    """The criterion's ``column``: a column of the spec with public bounds."""
    col = raw["column"]
    if col not in columns:
        raise ConfigError(f"{where}.column: unknown column {brief(col)}; columns: {list(columns)}")
    if columns[col].bounds is None:
        raise ConfigError(f"{where}: column {col!r} needs public 'bounds' for its sensitivity")
    return str(col)


def column_list(
    where: str, raw: Mapping[str, Any], key: str, columns: Mapping[str, Column]
) -> tuple[str, ...]:
    """A non-empty list of distinct columns of the spec (empty tuple when absent)."""
    if key not in raw:
        return ()
    cols = raw[key]
    if not isinstance(cols, list) or not cols or len(set(map(str, cols))) != len(cols):
        raise ConfigError(f"{where}.{key}: expected a non-empty list of distinct columns")
    for col in cols:
        if col not in columns:
            raise ConfigError(
                f"{where}.{key}: unknown column {brief(col)}; columns: {list(columns)}"
            )
    return tuple(str(col) for col in cols)


def optional_number(where: str, raw: Mapping[str, Any], key: str, **bounds: Any) -> float | None:
    """An optional number (absent or null: None)."""
    value = raw.get(key)
    return None if value is None else number(f"{where}.{key}", value, **bounds)

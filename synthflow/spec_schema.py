"""The release spec's structure as a JSON Schema: one description, two uses.

:data:`SPEC_SCHEMA` says which keys each section of a spec has, which are required and
what type each value takes. The loader (:func:`synthflow.config.load_spec`) reads every
section's allowed and required keys from it (:func:`section_keys`), so the schema cannot
drift from what is accepted; the loader then makes the checks a schema cannot (bins
contiguous and covering the domain, groups aligned with bins, budgets adding up,
hyperparameter grids valid), with messages naming the key, the value and the fix.

The schema ships in the package as ``spec.schema.json`` (:func:`schema_path`), so an
editor can validate a spec while it is typed: with the YAML language server, put
``# yaml-language-server: $schema=<that path>`` on a spec's first line (``synthflow
schema`` prints the path). ``python -m synthflow.spec_schema`` rewrites the file; a test
fails when it differs from :data:`SPEC_SCHEMA`.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "CRITERION_KINDS",
    "SPEC_SCHEMA",
    "schema_errors",
    "schema_json",
    "schema_path",
    "section_keys",
]

CRITERION_KINDS = (
    "marginals",
    "one_way_ratio",
    "conditional_mean",
    "regression_coefficients",
    "regression_tstr",
    "faithfulness",
)
"""Every acceptance criterion kind (``CriterionSpec.kind``'s Literal; a test keeps them equal)."""

_NUMBER = {"type": "number"}
_INT = {"type": "integer"}
_TEXT = {"type": "string"}
_COLUMNS = {"type": "array", "items": _TEXT, "minItems": 1, "uniqueItems": True}
_PAIR = {"type": "array", "items": _NUMBER, "minItems": 2, "maxItems": 2}
_SCALAR = {"type": ["string", "number", "boolean"]}
_OP = {"enum": ["<", "<=", ">", ">=", "==", "!="]}
_CLAUSE = {
    "type": "array",
    "description": "[column, operator, value]",
    "prefixItems": [_TEXT, _OP, _NUMBER],
    "minItems": 3,
    "maxItems": 3,
}
_BIN = {
    "description": "a bin label ('7', '18-19', '<18', '>44') or a range of bins",
    "anyOf": [
        {"type": ["string", "integer"]},
        {
            "type": "object",
            "properties": {"from": _INT, "to": _INT, "width": {"type": "integer", "minimum": 1}},
            "required": ["from", "to"],
            "additionalProperties": False,
        },
    ],
}
_BINS = {"type": "array", "items": _BIN, "minItems": 1}


def _section(
    description: str, required: dict[str, Any], optional: dict[str, Any]
) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "properties": {**required, **optional},
        "required": sorted(required),
        "additionalProperties": False,
    }


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{name}"}


_DEFS: dict[str, dict[str, Any]] = {
    "column": _section(
        "one column: its public domain and its binning alternatives",
        {
            "type": {"enum": ["int", "categorical"]},
            "transformations": {
                "type": "object",
                "description": "letter (a, b, c) -> bins, or 'identity' for a categorical",
                "propertyNames": {"pattern": "^[a-z]$"},
                "additionalProperties": {"anyOf": [{"const": "identity"}, _BINS]},
                "minProperties": 1,
            },
        },
        {
            "domain": {**_PAIR, "description": "[lo, hi] of an int column (public)"},
            "categories": {"type": "array", "items": _SCALAR, "minItems": 2},
            "bounds": {**_PAIR, "description": "[L, U], public, for sensitivities"},
            "groups": {**_BINS, "description": "groups of the conditional means"},
            "description": {"type": "string", "maxLength": 400},
            "unit": {"type": "string", "maxLength": 40},
        },
    ),
    "source": _section(
        "where a column comes from in the input file",
        {"from": _TEXT},
        {
            "values": {"type": "object", "additionalProperties": _SCALAR},
            "parse": {"enum": ["month"]},
        },
    ),
    "input": _section(
        "how input columns map to the spec's columns",
        {},
        {"mapping": {"type": "object", "additionalProperties": _ref("source")}},
    ),
    "rule": _section(
        "a raw constraint: rows matching it are implausible",
        {"id": _INT, "name": _TEXT},
        {
            "all": {"type": "array", "items": _CLAUSE, "minItems": 1},
            "any": {"type": "array", "items": _CLAUSE, "minItems": 1},
        },
    ),
    "constraints": _section(
        "raw rules (cleaning) and the ids also applied to synthetic rows",
        {"raw": {"type": ["array", "null"], "items": _ref("rule")}},
        {"synthetic": {"type": ["array", "null"], "items": _INT}},
    ),
    "exception": _section(
        "a bin of one alternative excluded from near matching",
        {"column": _TEXT, "transformation": _TEXT, "bin": {"type": ["string", "integer"]}},
        {},
    ),
    "match": _section(
        "the faithfulness matching rule (SPEC sec. 6)",
        {"exact": _COLUMNS, "near": {"type": "array", "items": _TEXT}},
        {
            "max_near_differences": {"type": "integer", "minimum": 0},
            "max_bin_distance": {"type": "integer", "minimum": 0},
            "exceptions": {"type": ["array", "null"], "items": _ref("exception")},
            "ignore": {"type": ["array", "null"], "items": _TEXT},
        },
    ),
    "criterion": _section(
        "one acceptance criterion with its threshold and DP budget",
        {
            "name": _TEXT,
            "kind": {"enum": list(CRITERION_KINDS)},
            "threshold": _NUMBER,
            "epsilon": {"type": "number", "exclusiveMinimum": 0},
        },
        {
            "column": _TEXT,
            "group_by": {"type": "array", "items": {"type": ["string", "null"]}},
            "clip": {"type": ["number", "null"], "exclusiveMinimum": 1},
            "false_positive_rate": {"type": ["number", "null"]},
            "assumed_min_count": {"type": ["integer", "null"]},
            "margin_fraction": _NUMBER,
            "margin_plus": _INT,
            "match": _ref("match"),
            "features": _COLUMNS,
            "max_order": {"type": "integer", "minimum": 1},
            "columns": _COLUMNS,
        },
    ),
    "acceptance": _section(
        "the acceptance criteria",
        {"criteria": {"type": "array", "items": _ref("criterion"), "minItems": 1}},
        {},
    ),
    "privacy": _section(
        "the privacy budget (replace-one neighbours: n is public)",
        {
            "total_epsilon": {"type": "number", "exclusiveMinimum": 0},
            "generator_epsilon": {"type": "number", "exclusiveMinimum": 0},
        },
        {
            "total_delta": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
            "neighbouring": {"enum": ["replace_one"]},
        },
    ),
    "model": _section(
        "one generator family and its hyperparameter grid",
        {
            "model": _TEXT,
            "grid": {
                "type": "object",
                "description": "hyperparameter -> list of values (or one value)",
            },
        },
        {
            "require": {
                "type": ["array", "null"],
                "items": {"type": "array", "minItems": 3, "maxItems": 3},
                "description": "[hyperparameter, op, value or hyperparameter] rules",
            }
        },
    ),
    "space": _section(
        "the configuration space",
        {
            "models": {"type": "array", "items": _ref("model"), "minItems": 1},
            "min_count": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1},
                "minItems": 1,
            },
        },
        {},
    ),
    "sampling": _section(
        "rejection sampling of the generator's rows",
        {},
        {"max_rounds": {"type": "integer", "minimum": 1}, "oversample": {"type": "number"}},
    ),
    "datasheet": _section(
        "what the release's datasheet says about provenance (one-line texts)",
        {},
        {
            key: {"type": "string", "maxLength": 1000}
            for key in (
                "title",
                "publisher",
                "contact",
                "licence",
                "citation",
                "source",
                "population",
                "period",
                "motivation",
                "maintenance",
            )
        },
    ),
    "disclosure": _section(
        "disclosure-risk measures on the released microdata",
        {},
        {
            "key_variables": {"type": "array", "items": _TEXT},
            "sensitive": {"type": ["string", "null"]},
            "max_msu_size": {"type": "integer", "minimum": 1, "maximum": 6},
        },
    ),
}

_ROOT = _section(
    "a synthflow release spec",
    {
        "name": _TEXT,
        "privacy": _ref("privacy"),
        "columns": {
            "type": "object",
            "additionalProperties": _ref("column"),
            "minProperties": 1,
        },
        "constraints": _ref("constraints"),
        "acceptance": _ref("acceptance"),
        "space": _ref("space"),
    },
    {
        "description": {"type": "string", "maxLength": 2000},
        "input": {"anyOf": [_ref("input"), {"type": "null"}]},
        "sampling": {"anyOf": [_ref("sampling"), {"type": "null"}]},
        "unit": {"type": "string", "maxLength": 40},
        "datasheet": {"anyOf": [_ref("datasheet"), {"type": "null"}]},
        "disclosure": {"anyOf": [_ref("disclosure"), {"type": "null"}]},
    },
)

SPEC_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://synthflow.invalid/spec.schema.json",
    "title": "synthflow release spec",
    **_ROOT,
    "$defs": _DEFS,
}
"""The JSON Schema (draft 2020-12) of a release spec."""


def section_keys(name: str) -> tuple[set[str], set[str]]:
    """Required and optional keys of one section (``"root"`` for the top level).

    >>> sorted(section_keys("privacy")[0])
    ['generator_epsilon', 'total_epsilon']
    """
    section = _ROOT if name == "root" else _DEFS[name]
    required = set(section["required"])
    return required, set(section["properties"]) - required


def schema_json() -> str:
    """:data:`SPEC_SCHEMA` as the text of the shipped ``spec.schema.json``."""
    return json.dumps(SPEC_SCHEMA, indent=2, sort_keys=False) + "\n"


def schema_path() -> Path:
    """Where the installed package keeps ``spec.schema.json``."""
    return Path(str(resources.files("synthflow").joinpath("spec.schema.json")))


def schema_errors(raw: Any) -> list[str]:
    """Every schema violation of a parsed spec, as ``where: message`` lines.

    Empty when the spec's structure is valid (the loader still makes its own checks).
    Uses ``jsonschema`` (draft 2020-12).
    """
    import jsonschema  # noqa: PLC0415 (only ``validate`` and tests need it)

    validator = jsonschema.Draft202012Validator(SPEC_SCHEMA)
    out = []
    for error in sorted(validator.iter_errors(raw), key=lambda e: list(map(str, e.path))):
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.path)
        message = error.message
        shown = repr(error.instance)
        if len(shown) > 40:  # never echo a large value (a data file passed as the spec)
            from synthflow.config import brief  # noqa: PLC0415

            message = message.replace(shown, brief(error.instance))[:300]
        out.append(f"{where.lstrip('.') or '(top level)'}: {message}")
    return out


if __name__ == "__main__":  # python -m synthflow.spec_schema > synthflow/spec.schema.json
    print(schema_json(), end="")

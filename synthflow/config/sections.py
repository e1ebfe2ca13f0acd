"""The spec's sections as JSON Schema fragments, and each section's keys.

The acceptance criteria's keys are not here: each criterion kind declares its own
parameters (:mod:`synthflow.criteria`), and :mod:`synthflow.spec_schema` assembles the
whole schema from both.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFS", "ROOT", "ref", "section", "section_keys"]

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


def section(description: str, required: dict[str, Any], optional: dict[str, Any]) -> dict[str, Any]:
    """An object with required and optional properties and no others."""
    return {
        "type": "object",
        "description": description,
        "properties": {**required, **optional},
        "required": sorted(required),
        "additionalProperties": False,
    }


def ref(name: str) -> dict[str, str]:
    """A reference to a section of ``$defs``."""
    return {"$ref": f"#/$defs/{name}"}


DEFS: dict[str, dict[str, Any]] = {
    "column": section(
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
    "source": section(
        "where a column comes from in the input file",
        {"from": _TEXT},
        {
            "values": {"type": "object", "additionalProperties": _SCALAR},
            "parse": {"enum": ["month"]},
        },
    ),
    "input": section(
        "how input columns map to the spec's columns",
        {},
        {"mapping": {"type": "object", "additionalProperties": ref("source")}},
    ),
    "rule": section(
        "a raw constraint: rows matching it are implausible",
        {"id": _INT, "name": _TEXT},
        {
            "all": {"type": "array", "items": _CLAUSE, "minItems": 1},
            "any": {"type": "array", "items": _CLAUSE, "minItems": 1},
        },
    ),
    "constraints": section(
        "raw rules (cleaning) and the ids also applied to synthetic rows",
        {"raw": {"type": ["array", "null"], "items": ref("rule")}},
        {"synthetic": {"type": ["array", "null"], "items": _INT}},
    ),
    "exception": section(
        "a bin of one alternative excluded from near matching",
        {"column": _TEXT, "transformation": _TEXT, "bin": {"type": ["string", "integer"]}},
        {},
    ),
    "match": section(
        "the faithfulness matching rule (SPEC sec. 6)",
        {"exact": _COLUMNS, "near": {"type": "array", "items": _TEXT}},
        {
            "max_near_differences": {"type": "integer", "minimum": 0},
            "max_bin_distance": {"type": "integer", "minimum": 0},
            "exceptions": {"type": ["array", "null"], "items": ref("exception")},
            "ignore": {"type": ["array", "null"], "items": _TEXT},
        },
    ),
    "acceptance": section(
        "the acceptance criteria",
        {"criteria": {"type": "array", "items": ref("criterion"), "minItems": 1}},
        {},
    ),
    "privacy": section(
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
    "model": section(
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
    "space": section(
        "the configuration space",
        {
            "models": {"type": "array", "items": ref("model"), "minItems": 1},
            "min_count": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1},
                "minItems": 1,
            },
        },
        {},
    ),
    "sampling": section(
        "rejection sampling of the generator's rows",
        {},
        {"max_rounds": {"type": "integer", "minimum": 1}, "oversample": {"type": "number"}},
    ),
    "datasheet": section(
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
    "disclosure": section(
        "disclosure-risk measures on the released microdata",
        {},
        {
            "key_variables": {"type": "array", "items": _TEXT},
            "sensitive": {"type": ["string", "null"]},
            "max_msu_size": {"type": "integer", "minimum": 1, "maximum": 6},
        },
    ),
}

ROOT = section(
    "a synthflow release spec",
    {
        "name": _TEXT,
        "privacy": ref("privacy"),
        "columns": {
            "type": "object",
            "additionalProperties": ref("column"),
            "minProperties": 1,
        },
        "constraints": ref("constraints"),
        "acceptance": ref("acceptance"),
        "space": ref("space"),
    },
    {
        "description": {"type": "string", "maxLength": 2000},
        "public_sample": {"type": "string", "maxLength": 400},
        "public_sample_published": {"type": "boolean"},
        "input": {"anyOf": [ref("input"), {"type": "null"}]},
        "sampling": {"anyOf": [ref("sampling"), {"type": "null"}]},
        "unit": {"type": "string", "maxLength": 40},
        "datasheet": {"anyOf": [ref("datasheet"), {"type": "null"}]},
        "disclosure": {"anyOf": [ref("disclosure"), {"type": "null"}]},
    },
)


def section_keys(name: str) -> tuple[set[str], set[str]]:
    """Required and optional keys of one section (``"root"`` for the top level).

    >>> sorted(section_keys("privacy")[0])
    ['generator_epsilon', 'total_epsilon']
    """
    s = ROOT if name == "root" else DEFS[name]
    required = set(s["required"])
    return required, set(s["properties"]) - required

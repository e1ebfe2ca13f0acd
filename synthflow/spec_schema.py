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

from synthflow.config.sections import DEFS, ROOT
from synthflow.criteria import COMMON_KEYS, params_schema
from synthflow.criteria.registry import KINDS

__all__ = [
    "CRITERION_KINDS",
    "SPEC_SCHEMA",
    "schema_errors",
    "schema_json",
    "schema_path",
    "section_keys",
]

CRITERION_KINDS = tuple(KINDS)
"""Every acceptance criterion kind (the registry's names)."""


def _criterion_schema() -> dict[str, Any]:
    """One criterion: the common keys, then each kind's own (from its ``Params``).

    ``properties`` lists every kind's keys (so that an editor completes them); one
    ``if kind == ...`` clause per kind restricts a criterion to its kind's keys (an
    unknown key is named once, by that clause) and requires the kind's required ones.
    """
    common = {
        "name": {"type": "string"},
        "kind": {"enum": list(KINDS)},
        "threshold": {"type": "number"},
        "epsilon": {"type": "number", "exclusiveMinimum": 0},
    }
    props: dict[str, Any] = dict(common)
    clauses = []
    for name, kind in KINDS.items():
        own, required = params_schema(kind.Params)
        for key, schema in own.items():
            props.setdefault(key, schema)
        clauses.append(
            {
                "if": {"properties": {"kind": {"const": name}}, "required": ["kind"]},
                "then": {
                    "propertyNames": {"enum": [*COMMON_KEYS, *own]},
                    "required": required,
                },
            }
        )
    return {
        "type": "object",
        "description": "one acceptance criterion with its threshold and DP budget; its "
        "kind's own keys (docs/spec.md)",
        "properties": props,
        "required": sorted(common),
        "allOf": clauses,
    }


SPEC_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://synthflow.invalid/spec.schema.json",
    "title": "synthflow release spec",
    **ROOT,
    "$defs": {**DEFS, "criterion": _criterion_schema()},
}
"""The JSON Schema (draft 2020-12) of a release spec."""


def section_keys(name: str) -> tuple[set[str], set[str]]:
    """Required and optional keys of one section (``"root"`` for the top level).

    A criterion's optional keys are every kind's parameters (each kind accepts its own).

    >>> sorted(section_keys("privacy")[0])
    ['generator_epsilon', 'total_epsilon']
    """
    s = ROOT if name == "root" else SPEC_SCHEMA["$defs"][name]
    required = set(s["required"])
    return required, set(s["properties"]) - required


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
        while error.context:  # "not valid under any of the given schemas": the deepest part
            error = max(error.context, key=lambda e: (len(e.absolute_path), -len(e.context)))
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        message = error.message
        shown = repr(error.instance)
        if len(shown) > 40:  # never echo a large value (a data file passed as the spec)
            from synthflow.config.values import brief  # noqa: PLC0415

            message = message.replace(shown, brief(error.instance))[:300]
        out.append(f"{where.lstrip('.') or '(top level)'}: {message}")
    return out


if __name__ == "__main__":  # python -m synthflow.spec_schema > synthflow/spec.schema.json
    print(schema_json(), end="")

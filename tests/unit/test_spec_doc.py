"""docs/spec.md documents every key the spec loader accepts (it cannot drift).

The loader reads each section's keys from synthflow.spec_schema (tests/unit/test_schema.py
checks the two agree on every shipped spec)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _loader_keys() -> set[str]:
    """Every key of the spec schema, from which the loader reads each section's keys."""
    from synthflow.spec_schema import SPEC_SCHEMA

    keys: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            keys.update(node.get("properties", {}))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(SPEC_SCHEMA)
    return keys


def test_every_loader_key_is_documented():
    keys = _loader_keys()
    assert len(keys) > 30  # the parse found the loader's keys
    doc = (REPO / "docs" / "spec.md").read_text()
    missing = sorted(k for k in keys if f"`{k}`" not in doc)
    assert not missing, f"docs/spec.md lacks {missing}"


def test_the_datasheet_section_matches_its_dataclass():
    # The loader builds DatasheetSpec(**keys): the schema's keys are its fields.
    import dataclasses

    from synthflow.config import DatasheetSpec
    from synthflow.spec_schema import section_keys

    assert set().union(*section_keys("datasheet")) == {
        f.name for f in dataclasses.fields(DatasheetSpec)
    }

"""docs/spec.md documents every key the spec loader accepts (it cannot drift)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _loader_keys() -> set[str]:
    """String keys of every ``_keys(where, raw, required, optional)`` call in config.py."""
    tree = ast.parse((REPO / "synthflow" / "config.py").read_text())
    keys: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_keys":
            for arg in node.args[2:4]:
                if isinstance(arg, ast.Set):
                    keys |= {e.value for e in arg.elts if isinstance(e, ast.Constant)}
    return keys


def test_every_loader_key_is_documented():
    keys = _loader_keys()
    assert len(keys) > 30  # the parse found the loader's keys
    doc = (REPO / "docs" / "spec.md").read_text()
    missing = sorted(k for k in keys if f"`{k}`" not in doc)
    assert not missing, f"docs/spec.md lacks {missing}"

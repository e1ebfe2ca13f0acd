"""pyproject.toml lists every package of synthflow (the wheel would miss one otherwise)."""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

REPO = Path(__file__).resolve().parents[2]


def test_every_package_is_listed_for_the_wheel():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {
        ".".join(p.parent.relative_to(REPO).parts)
        for p in (REPO / "synthflow").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    # the bundled specs and default data ship as packages of their own
    mapped = config["package-dir"]
    assert mapped == {"synthflow._configs": "configs", "synthflow._public_data": "public_data"}
    for name, folder in mapped.items():
        assert name in listed and (REPO / folder / "__init__.py").exists()

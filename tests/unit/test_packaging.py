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


def test_the_distribution_has_a_name_of_its_own_and_dask_is_an_extra():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    # "synthflow" on the package index is an unrelated project (#38)
    assert project["name"] == "synthflow-dp"
    base = " ".join(project["dependencies"])
    assert "dask" not in base and "distributed" not in base
    assert any(
        d.startswith("dask[distributed]") for d in project["optional-dependencies"]["cluster"]
    )


def test_a_cluster_sweep_without_the_extra_says_what_to_install(monkeypatch):
    import sys

    from synthflow.errors import ConfigError
    from synthflow.sweep.workers.cluster import _dask_client

    monkeypatch.setitem(sys.modules, "distributed", None)  # as if the extra were absent
    with pytest.raises(ConfigError, match=r"synthflow-dp\[cluster\]"), _dask_client("tcp://x:1"):
        pass

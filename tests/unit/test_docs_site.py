"""The documentation site (mkdocs.yml): what a reader sees in the built HTML.

Issue #38: the API page showed the docstrings' Sphinx roles verbatim (``:class:`...```) and
a footer link to example.invalid. The roles now go through docs/_ext/sphinx_roles.py (a
griffe extension of the API pages); this builds the site and reads every page.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "docs" / "_ext"))

# A role as the docstrings write it, escaped or not, in code or not: ":func:`x`" renders as
# ":func:<code>x</code>" through Markdown.
RAW_ROLE = re.compile(
    r":(?:py:)?(?:func|meth|class|mod|attr|data|obj|exc|const|type):\s*(?:`|&#x60;|&#96;|<code)"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    pytest.importorskip("mkdocs_jupyter")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def _pages(site: Path) -> dict[str, str]:
    return {str(p.relative_to(site)): p.read_text(encoding="utf-8") for p in site.rglob("*.html")}


def test_no_raw_sphinx_role_and_no_placeholder_link(site: Path) -> None:
    pages = _pages(site)
    assert "api/index.html" in pages
    for name, text in pages.items():
        raw = RAW_ROLE.search(text)
        assert raw is None, f"{name}: raw role {text[raw.start() - 80 : raw.end() + 80]!r}"
        assert "example.invalid" not in text, name


def test_api_roles_become_links_where_the_target_is_documented(site: Path) -> None:
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    # synthflow/__init__.py: ":func:`run_sweep`" and ":class:`SweepStore`" in the package
    # docstring, both documented on the page.
    assert re.search(r'<a class="autorefs[^"]*"[^>]*href="#synthflow\.run_sweep"', api)
    assert re.search(r'<a class="autorefs[^"]*"[^>]*href="#synthflow\.SweepStore"', api)
    # A target that is not on the site (the standard library) is plain code, no link.
    assert '<span title="secrets.SystemRandom"><code>secrets.SystemRandom</code></span>' in api


def test_notebooks_render_with_their_committed_outputs(site: Path) -> None:
    page = (site / "notebooks" / "audit_a_release" / "index.html").read_text(encoding="utf-8")
    assert "audit passed" in page and "audit FAILED:" in page  # outputs, not only code
    plan = (site / "notebooks" / "choosing_a_budget" / "index.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in plan  # the frontier figure


def test_convert_follows_sphinx_conventions() -> None:
    pytest.importorskip("griffe")
    from sphinx_roles import convert

    def ref(identifier: str, title: str) -> str:
        return f'<autoref identifier="{identifier}" optional><code>{title}</code></autoref>'

    assert convert("See :func:`run_sweep`.") == f"See {ref('run_sweep', 'run_sweep')}."
    assert convert(":class:`~synthflow.config.ReleaseSpec`") == ref(
        "synthflow.config.ReleaseSpec", "ReleaseSpec"
    )
    assert convert(":py:meth:`the sampler <Synthesizer.sample>`") == ref(
        "Synthesizer.sample", "the sampler"
    )
    assert convert(":mod:`synthflow.flow`", lambda t: "x." + t) == ref(
        "x.synthflow.flow", "synthflow.flow"
    )
    assert convert("``:not a role``, a: b `c`") == "``:not a role``, a: b `c`"

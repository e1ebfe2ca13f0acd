"""The documentation site's generated pages stay in step with the code."""

from __future__ import annotations

from pathlib import Path

from synthflow._cli_docs import commands, markdown
from synthflow.cli import build_parser

REPO = Path(__file__).resolve().parents[2]


def test_cli_reference_is_current():
    page = (REPO / "docs" / "cli.md").read_text()
    assert page == markdown(), (
        "docs/cli.md is out of date: run python -m synthflow._cli_docs > docs/cli.md"
    )


def test_every_command_and_option_is_on_the_page():
    page = (REPO / "docs" / "cli.md").read_text()
    for path, parser, _ in commands(build_parser()):
        assert f"## synthflow {' '.join(path)} " in page, path
        for action in parser._actions:
            for option in action.option_strings:
                assert option in page, (path, option)


def test_every_page_is_in_the_site():
    nav = (REPO / "mkdocs.yml").read_text()
    for page in sorted((REPO / "docs").glob("*.md")):
        assert f": {page.name}" in nav, f"{page.name} is not in mkdocs.yml's nav"

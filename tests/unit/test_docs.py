"""The documentation site's generated pages stay in step with the code."""

from __future__ import annotations

from pathlib import Path

from synthflow.cli import build_parser
from synthflow.cli.docs import commands, markdown

REPO = Path(__file__).resolve().parents[2]


def test_cli_reference_is_current():
    page = (REPO / "docs" / "cli.md").read_text()
    assert page == markdown(), (
        "docs/cli.md is out of date: run python -m synthflow.cli.docs > docs/cli.md"
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


def test_spec_reference_lists_every_generators_grid_keys_and_defaults():
    import dataclasses

    from synthflow.generators.table import HYPERPARAMETERS

    page = (REPO / "docs" / "spec.md").read_text()
    for family, cls in HYPERPARAMETERS.items():
        rows = [line for line in page.splitlines() if line.startswith(f"| `{family}` | `")]
        assert len(rows) == 1, f"docs/spec.md has no grid-key row for {family}"
        for field in dataclasses.fields(cls):
            default = field.default if field.default is not dataclasses.MISSING else None
            shown = f"`{field.name}` ({default!r})" if default is not None else f"`{field.name}`"
            assert shown in rows[0], (family, shown)

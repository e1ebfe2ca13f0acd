"""The CLI reference page (``docs/cli.md``), generated from the argparse parsers.

``python -m synthflow.cli.docs > docs/cli.md`` rewrites it; a test fails when the page
and the parsers differ (a command or option added without regenerating the page).
"""

from __future__ import annotations

import argparse
import os

from synthflow.cli import build_parser

__all__ = ["commands", "markdown"]


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser, str]]:
    """Every (sub)command: its words after ``synthflow``, its parser and its help line."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                out.append(((*path, name), sub, helps.get(name, "")))
                out.extend(commands(sub, (*path, name)))
    return out


def markdown() -> str:
    """The page: a table of commands, then each command's usage and options."""
    entries = commands(build_parser())
    lines = [
        "# Command-line reference",
        "",
        "Generated from the parsers (`python -m synthflow.cli.docs > docs/cli.md`); the "
        "conventions every command follows (spec first, `--data`, `--public`, `--seed`, "
        "`--force`, `--json PATH`, exit codes) are in [the commands guide]"
        "(commands.md#command-line-conventions).",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    for path, _, help_ in entries:
        anchor = "-".join(path)
        lines.append(f"| [`synthflow {' '.join(path)}`](#{anchor}) | {help_} |")
    lines.append("")
    for path, sub, help_ in entries:
        lines += [f"## synthflow {' '.join(path)} {{#{'-'.join(path)}}}", "", help_, ""]
        lines += ["```text", _help(sub), "```", ""]
    return "\n".join(lines)


def _help(parser: argparse.ArgumentParser) -> str:
    """The parser's help at a fixed width (argparse otherwise wraps to the terminal)."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "90"
    try:
        return parser.format_help().rstrip()
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


if __name__ == "__main__":
    print(markdown(), end="")

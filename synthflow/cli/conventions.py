"""The one CLI convention every subcommand follows (docs/commands.md, "Command-line conventions").

- The spec, where a command reads one, is the first positional argument.
- Shared options come from the parent parsers below, with one meaning everywhere:
  ``--data FILE`` (input data), ``--public`` (a switch declaring that input public),
  ``--seed N`` (reproducible randomness: public data only), ``--force`` (replace files a
  previous run wrote), ``--json PATH`` (the machine-readable result; ``-`` is stdout),
  ``-q/--quiet`` and ``-v/--verbose`` (accepted before or after the subcommand).
- Help shows every non-trivial default.
- stdout carries the one thing a script wants (the absolute path of what was written, or
  the table asked for); progress and advice go to stderr.
- Exit codes are :data:`EXIT_OK`, :data:`EXIT_NEGATIVE`, :data:`EXIT_USAGE`,
  :data:`EXIT_PAUSED` and :data:`EXIT_SPENT`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = [
    "EXIT_NEGATIVE",
    "EXIT_OK",
    "EXIT_PAUSED",
    "EXIT_SPENT",
    "EXIT_USAGE",
    "HelpFormatter",
    "add_command",
    "check_json",
    "require_public",
    "write_json",
]

EXIT_OK = 0
"""Success: the command did what was asked and the result is positive."""
EXIT_NEGATIVE = 1
"""A negative result: criteria failed, an audit failed, an empty shortlist, a selection
that stopped without a release."""
EXIT_USAGE = 2
"""Usage or input errors (bad option, spec, data or file; a budget that cannot cover the
charge): nothing was spent."""
EXIT_PAUSED = 3
"""Paused and resumable (``release --max-attempts``): re-run to continue."""
EXIT_SPENT = 4
"""Failed after budget was charged (e.g. the disk filled while publishing): the message
says what was spent and how to resume without spending again."""


class HelpFormatter(argparse.HelpFormatter):
    """Shows ``(default: X)`` for options whose default is worth showing.

    argparse's :class:`~argparse.ArgumentDefaultsHelpFormatter` also prints
    ``(default: None)`` and ``(default: False)`` for every switch; those say nothing.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            "%(default)" in text
            or default is None
            or default is False
            or default is argparse.SUPPRESS
            or not action.option_strings
        ):
            return text
        return text + " (default: %(default)s)"


def _parents() -> dict[str, argparse.ArgumentParser]:
    # Fresh parsers for every command: argparse shares a parent's Action objects with its
    # children, so a child's set_defaults(seed=0) would otherwise change every command.
    def parent() -> argparse.ArgumentParser:
        return argparse.ArgumentParser(add_help=False)

    common = parent()
    # SUPPRESS: the subcommand's parser must not overwrite a -v given before it.
    common.add_argument(
        "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="log details"
    )
    common.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=argparse.SUPPRESS,
        help="no progress bars or lines",
    )
    data = parent()
    data.add_argument("--data", required=True, metavar="FILE", help="input CSV or Parquet file")
    public = parent()
    public.add_argument(
        "--public",
        action="store_true",
        help="declare the input data public: allows --seed and shows statistics that are "
        "private otherwise (per-rule cleaning counts)",
    )
    seed = parent()
    seed.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="reproducible randomness; public data only (release-mode randomness is a CSPRNG)",
    )
    force = parent()
    force.add_argument(
        "--force", action="store_true", help="replace the files an earlier run wrote there"
    )
    json_out = parent()
    json_out.add_argument(
        "--json", metavar="PATH", help="also write the machine-readable result here ('-': stdout)"
    )
    return {
        "common": common,
        "data": data,
        "public": public,
        "seed": seed,
        "force": force,
        "json": json_out,
    }


def add_command(
    sub: argparse._SubParsersAction,
    name: str,
    *,
    help: str,
    options: tuple[str, ...] = (),
    description: str | None = None,
) -> argparse.ArgumentParser:
    """A subcommand parser with ``-v``, ``-q``, the help formatter and ``options``.

    ``options`` names shared options: ``data``, ``public``, ``seed``, ``force``, ``json``.
    """
    parents = _parents()
    unknown = set(options) - set(parents) - {"common"}
    if unknown:
        raise ValueError(f"unknown shared options {sorted(unknown)}")
    return sub.add_parser(
        name,
        help=help,
        description=description or help[:1].upper() + help[1:] + ".",
        parents=[parents["common"], *(parents[o] for o in options)],
        formatter_class=HelpFormatter,
    )


def require_public(args: argparse.Namespace, why: str) -> None:
    """Commands that store or report exact statistics run on data declared public."""
    if not getattr(args, "public", False):
        from synthflow.errors import ConfigError

        raise ConfigError(
            f"{why}; it is for public data only: add --public to declare --data public "
            "(never pass private data here)"
        )


def check_json(
    target: str | None, *, force: bool = False, protected: tuple[str | Path, ...] = ()
) -> None:
    """Check a ``--json PATH`` before any work (never overwritten silently)."""
    if target is not None and target != "-":
        from synthflow._util.outputs import check_output_file

        check_output_file(target, force=force, option="--json", protected=protected)


def print_result(text: str, json_target: str | Path | None) -> None:
    """A command's result line (a verdict, an output path): stdout, unless ``--json -``.

    With ``--json -`` stdout carries the JSON alone (a pipe into ``jq`` or
    ``json.load``), so the line goes to stderr.
    """
    print(text, file=sys.stderr if str(json_target) == "-" else sys.stdout, flush=True)


def write_json(target: str | Path, payload: Any) -> None:
    """``--json PATH``: the result as indented JSON (``-``: stdout)."""
    text = json.dumps(payload, indent=1, default=str) + "\n"
    if str(target) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    Path(target).write_text(text, encoding="utf-8")

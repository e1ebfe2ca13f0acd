"""``synthflow init``: parse, draft (:mod:`synthflow.init.draft`), print."""

from __future__ import annotations

import argparse
import sys

from synthflow.cli.conventions import add_command, require_public

__all__ = ["register"]


def _init(args: argparse.Namespace) -> int:
    from synthflow.init.draft import write_draft

    require_public(args, "init writes the file's value ranges and categories into the spec")
    skip = tuple(s.strip() for s in (args.skip or "").split(",") if s.strip())
    out = write_draft(
        args.data, args.out, name=args.name, force=args.force, skip=skip, rows=args.rows,
        domains=args.domains,
    )  # fmt: skip
    print(
        f"drafted from the public file {args.data}: review every '# REVIEW' line (a domain "
        "'observed in the public file' may be narrower than the private data's), then "
        f"'synthflow validate {out} --data PRIVATE'",
        file=sys.stderr,
    )
    print(out.resolve())
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``init`` to the CLI."""
    p = add_command(
        sub,
        "init",
        help="draft a release spec from a PUBLIC data file, every drafted value marked for review",
        options=("data", "public", "force"),
    )
    p.add_argument("--out", required=True, metavar="FILE", help="the new spec file")
    p.add_argument("--name", help="the release's name (default: the data file's name)")
    p.add_argument(
        "--rows",
        type=int,
        metavar="N",
        help="the private data's row count: thresholds are set so that two samples of N rows "
        "of the public file pass them, with a margin (default: half the public file)",
    )
    p.add_argument("--skip", metavar="COLUMNS", help="comma-separated columns to leave out")
    p.add_argument(
        "--domains",
        metavar="FILE",
        help="a codebook (JSON or YAML) of the columns' PUBLIC domains, used instead of the "
        "values observed in --data: column: [MIN, MAX], {min: MIN, max: MAX} or a size N "
        "(codes 0..N-1) for a whole-number column, the list of categories for a text column",
    )
    p.set_defaults(func=_init)

"""``synthflow demo``: the main job from the command line (:mod:`~.main_job`)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from synthflow._cli import add_command

__all__ = ["register_demo"]


def _demo(args: argparse.Namespace) -> int:
    from synthflow.release.main_job import DEFAULT_DATA, run_main_job  # noqa: PLC0415

    out = Path(args.out) if args.out else Path("runs") / time.strftime("demo-%Y%m%d-%H%M%S")
    screen = (
        args.screen
        or any(v is not None for v in (args.sample, args.repeats, args.models))
        or args.exact_fallback
    )
    print(
        f"synthflow demo: {'a new' if screen else 'the shipped'} public pre-screen, shortlist, "
        f"private selection, release and audit on the embedded default data ({DEFAULT_DATA})",
        file=sys.stderr,
    )
    result = run_main_job(
        out,
        screen=screen,
        sample=args.sample,
        repeats=args.repeats or 2,
        workers=args.workers,
        show_progress=not args.quiet,
        models=tuple(m.strip() for m in (args.models or "workload").split(",") if m.strip()),
        exact_fallback=args.exact_fallback,
        prescreen_out=Path(args.prescreen_out) if args.prescreen_out else None,
    )
    print(f"\nsynthflow demo finished:\n{result.summary()}\n", file=sys.stderr)
    print(result.release_dir.resolve())  # the last line: the release directory
    return 0 if result.audit.ok else 1


def register_demo(sub: argparse._SubParsersAction) -> None:
    """Add ``demo`` to the CLI."""
    p = add_command(
        sub,
        "demo",
        help="main job: a whole release on the embedded default data; prints its path",
    )
    p.add_argument(
        "--out", metavar="DIR", help="new output directory (default: runs/demo-<timestamp>)"
    )
    p.add_argument(
        "--screen",
        action="store_true",
        help="sweep a new public draw instead of using the shipped pre-screen (minutes); "
        "--sample, --repeats, --models and --exact-fallback imply it",
    )
    p.add_argument(
        "--prescreen-out",
        metavar="DIR",
        help="with --screen: also save the new pre-screen there under its shipped names "
        "(public_data/ refreshes the shipped one)",
    )
    p.add_argument(
        "--sample", type=int, metavar="K", help="configurations to pre-screen (default: all)"
    )
    p.add_argument("--repeats", type=int, metavar="R", help="runs per configuration (default: 2)")
    p.add_argument(
        "--models", help="generator families to screen, comma-separated (default: workload)"
    )
    p.add_argument(
        "--exact-fallback",
        action="store_true",
        help="if nothing passes with DP noise, shortlist configurations passing without "
        "noise (selection may then never release)",
    )
    p.add_argument(
        "--workers", type=int, metavar="N", help="sweep worker processes (default: CPU count)"
    )
    p.set_defaults(func=_demo)

"""``synthflow demo`` (the main job, :mod:`~.main_job`) and ``synthflow ship-plan``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from synthflow.cli.conventions import EXIT_NEGATIVE, add_command, require_public

__all__ = ["register_demo"]


def _demo(args: argparse.Namespace) -> int:
    from synthflow.jobs.demo import DEFAULT_DATA, run_main_job

    out = Path(args.out) if args.out else Path("runs") / time.strftime("demo-%Y%m%d-%H%M%S")
    screen = args.screen or args.screen_data is not None or args.repeats is not None
    if screen:
        from synthflow._extras import require

        require("matplotlib", what="demo --screen (the new plan's plan.html)")
    print(
        f"synthflow demo: {'a new' if screen else 'the shipped'} plan of the bundled spec "
        f"'births', its release and audit on the embedded default data ({DEFAULT_DATA})",
        file=sys.stderr,
    )
    result = run_main_job(
        out,
        screen=screen,
        screen_data=Path(args.screen_data) if args.screen_data else None,
        repeats=args.repeats,
        workers=args.workers,
        show_progress=not args.quiet,
        prescreen_out=Path(args.prescreen_out) if args.prescreen_out else None,
        seed=args.seed,
    )
    print(f"\nsynthflow demo finished:\n{result.summary()}\n", file=sys.stderr)
    if result.release_dir is None or result.audit is None:
        return 1  # no release: the single attempt failed (a negative result, as in release)
    print(result.release_dir.resolve())  # the last line: the release directory
    return 0 if result.audit.ok else 1


def _ship_plan(args: argparse.Namespace) -> int:

    if args.data:
        require_public(
            args, "ship-plan sweeps and plans on --data and stores exact statistics of it"
        )
    # No extra: plan.html is written without its figures on the base install (#61 item 1).
    from synthflow.errors import NoPlanError
    from synthflow.jobs.ship import make_shipped_plan

    try:
        made = _make(args, make_shipped_plan)
    except NoPlanError as exc:  # a negative result, as in 'synthflow plan'
        print(f"synthflow ship-plan: {exc}", file=sys.stderr)
        return EXIT_NEGATIVE
    print(f"synthflow ship-plan: wrote {made.describe()}", file=sys.stderr)
    print(Path(args.out).resolve())
    return 0


def _make(args: argparse.Namespace, make_shipped_plan: Any) -> Any:
    return make_shipped_plan(
        args.name,
        Path(args.out),
        data=Path(args.data) if args.data else None,
        repeats=args.repeats,
        workers=args.workers,
        show_progress=not args.quiet,
        store=Path(args.store) if args.store else None,
        rows=args.rows,
        release_probability=args.release_probability,
        propose=args.propose_thresholds,
        max_total=args.max_total,
    )


def _screen_options(p: argparse.ArgumentParser, data: str) -> None:
    p.add_argument(
        data,
        metavar="FILE",
        help="public data to sweep (default: a seeded public draw simulated from the "
        "committed NVSS calibration)",
    )
    p.add_argument(
        "--repeats", type=int, metavar="R", help="runs per configuration (default: the recipe's)"
    )
    p.add_argument(
        "--workers", type=int, metavar="N", help="sweep worker processes (default: CPU count)"
    )


def register_demo(sub: argparse._SubParsersAction) -> None:
    """Add ``demo`` and ``ship-plan`` to the CLI."""
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
        help="remake the plan (a public sweep and 'synthflow plan', minutes) instead of "
        "using the shipped one; --screen-data and --repeats imply it",
    )
    p.add_argument(
        "--prescreen-out",
        metavar="DIR",
        help="with --screen: also save the new plan there under its shipped names "
        "(public_data/ refreshes the shipped one)",
    )
    _screen_options(p, "--screen-data")
    p.add_argument(
        "--seed",
        type=int,
        metavar="N",
        help="a reproducible release (the embedded data is public; default: CSPRNG "
        "randomness, as a private release uses)",
    )
    p.set_defaults(func=_demo)

    _register_ship_plan(sub)


def _register_ship_plan(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "ship-plan",
        help="remake a bundled spec's shipped plan: a public sweep, then plan (minutes)",
        options=("public",),
    )
    p.add_argument("name", help="a bundled spec with a recipe in public_data/shipped_plans.yaml")
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="where to write NAME.plan.json, ... (public_data/ refreshes the shipped plan; "
        "existing files are never overwritten)",
    )
    _screen_options(p, "--data")
    p.add_argument(
        "--store",
        metavar="PATH",
        help="resume this earlier sweep of the recipe (e.g. public_data/NAME.sweep.db): "
        "only the plan is remade when it is whole",
    )
    p.add_argument(
        "--rows",
        type=int,
        metavar="N",
        help="the seeded public draw's rows (default 167000): a plan for private data of "
        "another size (its n after cleaning is public; release names it)",
    )
    p.add_argument(
        "--release-probability",
        type=float,
        metavar="R",
        help="least probability that the release comes out (default: the recipe's)",
    )
    p.add_argument(
        "--propose-thresholds",
        action="store_true",
        help="when the spec's thresholds find no plan at this size (a small registry), "
        "propose thresholds the size meets (from the public sweep; for the data's users to "
        "agree) and plan those: writes NAME@ROWS.proposed.yaml and its plan",
    )
    p.add_argument(
        "--max-total",
        type=float,
        metavar="E",
        help="with --propose-thresholds: the proposed spec's total epsilon, a ceiling for "
        "its plan (default: the spec's total scaled by the size its own plan was made for "
        "over --rows, at least twice it: a smaller registry pays more for the same noise)",
    )
    p.epilog = "The data must be public: the sweep is seeded and the plan reports what it finds."
    p.set_defaults(func=_ship_plan)

"""Subcommand ``plan``: argparse and printing over :func:`synthflow.plan.job.plan_budget`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from synthflow.cli.conventions import (
    EXIT_NEGATIVE,
    EXIT_OK,
    EXIT_USAGE,
    add_command,
    check_json,
    print_result,
    require_public,
    write_json,
)
from synthflow.errors import NoPlanError
from synthflow.plan import PLAN_FILES

__all__ = ["register"]


def _plan(args: argparse.Namespace) -> int:
    from synthflow._extras import require

    require("matplotlib", what="plan (its report, plan.html)")
    from synthflow.sweep.store import StoreError

    require_public(args, "plan simulates the release on --data and reports what it finds")
    check_json(args.json, force=args.force, protected=(args.spec, args.store, args.data))
    try:
        plan = _run(args)
        for warning in plan["warnings"]:  # first: the figures below are uncertain
            print(f"synthflow plan: {warning}", file=sys.stderr)
    except StoreError as exc:
        print(f"synthflow plan: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except NoPlanError as exc:  # a negative result, as an empty shortlist is
        print(f"synthflow plan: {exc}", file=sys.stderr)
        return EXIT_NEGATIVE
    print(
        f"total epsilon {plan['total_epsilon']:.3f} ({plan['formula']}); generator epsilon "
        f"{plan['generator_epsilon']:g}; fit {'once' if plan['fit_once'] else 'per candidate'}; "
        f"{len(plan['candidates'])} candidates; P(release) {plan['release_probability']:.3f}",
        file=sys.stderr,
    )
    levels = plan.get("by_release_probability", [])
    if levels:  # the price of each release probability (plan.json 'by_release_probability')
        print(
            "  cheapest at P(release) "
            + " / ".join(f"{r['release_probability']:g}" for r in levels)
            + ": "
            + " / ".join(
                "none" if r["total_epsilon"] is None else f"{r['total_epsilon']:.3f}"
                for r in levels
            ),
            file=sys.stderr,
        )
    if not args.quiet:  # what stops each budget one step lower (plan.json 'binding')
        for name, why in plan.get("binding", {}).items():
            print(f"  binding {name}: {why}", file=sys.stderr)
    if args.json:
        write_json(args.json, plan)
    print_result(str(Path(args.out).resolve()), args.json)
    return EXIT_OK


def _run(args: argparse.Namespace) -> dict[str, Any]:
    from synthflow.plan.job import plan_budget

    return plan_budget(
        args.spec,
        args.store,
        args.data,
        Path(args.out),
        target_pass=args.target_pass,
        stop_probability=args.stop_probability,
        release_probability=args.release_probability,
        max_total=args.max_total,
        seed=args.seed,
        force=args.force,
        show_progress=not args.quiet,
        single_attempt=not args.no_single_attempt,
    )


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``plan`` to the CLI."""
    p = add_command(
        sub,
        "plan",
        help="least total epsilon at which a release still passes (public data; spends nothing)",
        options=("data", "public", "seed", "force", "json"),
    )
    p.set_defaults(seed=0)
    p.add_argument("spec", help="the spec the sweep ran")
    p.add_argument("--store", required=True, metavar="PATH", help="public sweep results file")
    p.add_argument("--out", required=True, metavar="DIR", help="writes " + ", ".join(PLAN_FILES))
    p.add_argument(
        "--target-pass",
        type=float,
        default=0.3,
        metavar="P",
        help="least mean per-attempt pass probability of the candidates",
    )
    p.add_argument(
        "--stop-probability",
        type=float,
        default=0.05,
        metavar="G",
        help="selection's stop probability gamma (for the modes of many attempts)",
    )
    p.add_argument(
        "--no-single-attempt",
        action="store_true",
        help="do not consider a single attempt (stop probability 1, charged 1x instead of "
        "2x; releases only if that attempt passes)",
    )
    p.add_argument(
        "--release-probability",
        type=float,
        default=0.9,
        metavar="R",
        help="least probability that selection releases",
    )
    p.add_argument("--max-total", type=float, metavar="E", help="refuse plans above this total")
    p.set_defaults(func=_plan)

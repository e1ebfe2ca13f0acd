"""Subcommands ``sweep``, ``shortlist`` and ``sweep-report``."""

from __future__ import annotations

import argparse
import json
import sys

from synthflow._outputs import check_output_file
from synthflow.config import load_spec
from synthflow.errors import ConfigError
from synthflow.sweep.evaluation import load_evaluator
from synthflow.sweep.store import StoreError

__all__ = ["register"]


def _error(command: str, exc: Exception) -> int:
    print(f"synthflow {command}: error: {exc}", file=sys.stderr)
    return 2


def _epsilons(text: str) -> list[float]:
    """``"2,3,4"`` -> [2.0, 3.0, 4.0]; a clear error for anything else."""
    out = []
    for part in text.split(","):
        try:
            out.append(float(part))
        except ValueError:
            raise ConfigError(
                f"--generator-epsilon ({text!r}) must be comma-separated numbers, e.g. 2,3,4"
            ) from None
    return out


def _sweep(args: argparse.Namespace) -> int:
    from synthflow.sweep.engine import run_sweep  # noqa: PLC0415  (imports Dask)

    spec = load_spec(args.spec)
    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    epsilons = _epsilons(args.generator_epsilon) if args.generator_epsilon else None
    try:
        summary = run_sweep(
            spec,
            args.public,
            args.store,
            repeats=args.repeats,
            workers=args.workers,
            address=args.address,
            models=models,
            sample=args.sample,
            seed=args.seed,
            evaluator=load_evaluator(args.evaluator),
            show_progress=not args.quiet,
            generator_epsilons=epsilons,
            ids=[i.strip() for i in args.ids.split(",") if i.strip()] if args.ids else None,
        )
    except StoreError as exc:
        return _error("sweep", exc)
    except KeyboardInterrupt:
        print(
            "synthflow sweep: interrupted; finished runs are stored, re-run the same command "
            "to resume",
            file=sys.stderr,
        )
        return 130
    print(json.dumps(summary.to_json()), flush=True)
    return 0


def _shortlist(args: argparse.Namespace) -> int:
    from synthflow.sweep.shortlist import (  # noqa: PLC0415
        estimate,
        store_generator_epsilon,
        write_shortlist,
    )

    try:
        if not 0 <= args.min_pass <= 1:
            raise ConfigError(f"--min-pass ({args.min_pass}) must be in [0, 1]")
        target = check_output_file(
            args.out, force=args.force, option="--out", protected=[args.store]
        )
        estimates = estimate(args.store, basis=args.basis, z=args.z)
        out = write_shortlist(
            args.store,
            estimates,
            target,
            min_pass=args.min_pass,
            basis=args.basis,
            z=args.z,
            generator_epsilon=args.generator_epsilon,
        )
        eps = store_generator_epsilon(args.store, args.generator_epsilon)
    except StoreError as exc:
        return _error("shortlist", exc)
    at = [e for e in estimates if e.generator_epsilon == eps]
    kept = sum(e.p >= args.min_pass for e in at)
    print(
        f"{kept} of {len(at)} configurations at or above {args.min_pass} "
        f"(generator epsilon {eps:g})",
        file=sys.stderr,
    )
    print(out)
    return 0


def _report(args: argparse.Namespace) -> int:
    from synthflow.sweep.report import write_report  # noqa: PLC0415  (imports matplotlib)

    try:
        target = check_output_file(
            args.out, force=args.force, option="--out", protected=[args.store]
        )
        out = write_report(args.store, target, min_pass=args.min_pass)
    except StoreError as exc:
        return _error("sweep-report", exc)
    print(out)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sweep``, ``shortlist`` and ``sweep-report`` to the CLI."""
    p = sub.add_parser(
        "sweep", help="pre-screen the configuration space on public data (Dask, resumable)"
    )
    p.add_argument("spec", help="release spec, e.g. configs/births.yaml")
    p.add_argument(
        "--public", required=True, metavar="FILE", help="PUBLIC data file (never private)"
    )
    p.add_argument("--repeats", type=int, required=True, metavar="R", help="runs per configuration")
    p.add_argument("--store", required=True, help="SQLite results file (created or resumed)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, metavar="N", help="local cluster worker processes")
    where.add_argument(
        "--address", metavar="CLUSTER", help="join a running Dask scheduler, e.g. tcp://host:8786"
    )
    p.add_argument("--models", metavar="NAMES", help="only these comma-separated families")
    p.add_argument("--ids", metavar="IDS", help="only these comma-separated configuration ids")
    p.add_argument("--sample", type=int, metavar="K", help="a random sample of K configurations")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="base seed (default 0)")
    p.add_argument(
        "--evaluator",
        metavar="MODULE:ATTR",
        help="evaluator plug-in (default: the spec's acceptance criteria)",
    )
    p.add_argument(
        "--generator-epsilon",
        metavar="E1,E2",
        help="sweep these generator budgets as one more axis (default: the spec's)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_sweep)

    p = sub.add_parser("shortlist", help="configurations whose pass probability is high enough")
    p.add_argument("--store", required=True, help="sweep results file")
    p.add_argument("--min-pass", type=float, default=0.10, help="minimum estimated pass rate")
    p.add_argument("--out", required=True, help="YAML file to write")
    p.add_argument(
        "--basis",
        choices=("dp", "exact"),
        default="dp",
        help="pass decision with release noise (dp, default) or without (exact)",
    )
    p.add_argument("--z", type=float, default=1.96, help="Wilson interval z (default 1.96: 95%%)")
    p.add_argument(
        "--generator-epsilon",
        type=float,
        metavar="E",
        help="runs at this swept generator budget (default: the spec's); the release spec "
        "must carry it",
    )
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.set_defaults(func=_shortlist)

    p = sub.add_parser("sweep-report", help="HTML report of a sweep's pass rates")
    p.add_argument("--store", required=True, help="sweep results file")
    p.add_argument("--out", required=True, help="HTML file to write")
    p.add_argument("--min-pass", type=float, default=0.10, help="shortlist threshold")
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.set_defaults(func=_report)

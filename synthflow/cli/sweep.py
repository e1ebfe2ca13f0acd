"""Subcommands ``sweep``, ``shortlist`` and ``sweep-report``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from synthflow._util.outputs import check_output_file
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
from synthflow.errors import ConfigError, StoreError

__all__ = ["register"]


def _error(command: str, exc: Exception) -> int:
    print(f"synthflow {command}: error: {exc}", file=sys.stderr)
    return EXIT_USAGE


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


def _split(text: str | None) -> list[str] | None:
    """``"a,b"`` -> ["a", "b"]; None stays None."""
    return [t.strip() for t in text.split(",") if t.strip()] if text else None


def _sweep(args: argparse.Namespace) -> int:
    if not args.address:
        # Before the engine's own imports (pandas: about 0.4 s), so that the fork server's
        # imports of the flow run beside them on a second core.
        from synthflow.sweep.workers.forkserver import start_fork_server

        start_fork_server()
    from synthflow.loader import load_spec
    from synthflow.sweep.evaluation import load_evaluator
    from synthflow.sweep.job import run_sweep

    require_public(args, "a sweep stores exact statistics of --data for every run")
    check_json(args.json, protected=(args.spec, args.data, args.store))
    spec = load_spec(args.spec)
    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    epsilons = _epsilons(args.generator_epsilon) if args.generator_epsilon else None
    try:
        summary = run_sweep(
            spec,
            args.data,
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
            ids=_split(args.ids),
            letters=_split(args.letters),
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
    done = summary.to_json()
    if args.json:
        write_json(args.json, done)
    print(
        "sweep: " + ", ".join(f"{k} {v}" for k, v in done.items() if isinstance(v, int | float)),
        file=sys.stderr,
    )
    print_result(str(Path(args.store).resolve()), args.json)
    if summary.runs_crashed:
        causes = "\n  ".join(summary.crash_causes[:5])
        print(
            f"synthflow sweep: {summary.runs_crashed} run(s) crashed, so their configurations' "
            f"pass rates are missing or thin; the cause(s):\n  {causes}\nFix the cause (a "
            "missing extra: pip install 'synthflow-dp[pgm]'; memory: fewer --workers), then "
            "re-run the same command: it runs the crashed runs again and keeps the others",
            file=sys.stderr,
        )
        return EXIT_NEGATIVE
    return EXIT_OK


def _shortlist(args: argparse.Namespace) -> int:
    from synthflow.sweep.shortlist import (
        estimate,
        store_generator_epsilon,
        thin_evidence,
        write_shortlist,
    )

    try:
        if not 0 <= args.min_pass <= 1:
            raise ConfigError(f"--min-pass ({args.min_pass}) must be in [0, 1]")
        target = check_output_file(
            args.out, force=args.force, option="--out", protected=[args.store]
        )
        check_json(args.json, force=args.force, protected=(args.store, args.out))
        estimates = estimate(args.store, basis=args.basis, z=args.z)
        eps = store_generator_epsilon(args.store, args.generator_epsilon)
        at = [e for e in estimates if e.generator_epsilon == eps]
        kept = [e for e in at if e.p >= args.min_pass]
        # An empty shortlist writes no file (it would only block the next, better run).
        out = (
            write_shortlist(
                args.store,
                estimates,
                target,
                min_pass=args.min_pass,
                basis=args.basis,
                z=args.z,
                generator_epsilon=args.generator_epsilon,
            )
            if kept
            else None
        )
    except StoreError as exc:
        return _error("shortlist", exc)
    warning = thin_evidence(at)
    if warning:  # first, before any figure: the figures below are uncertain
        print(f"synthflow shortlist: {warning}", file=sys.stderr)
    if args.json:
        write_json(args.json, [e.to_json() for e in kept])
    print(
        f"{len(kept)} of {len(at)} configurations pass in at least {args.min_pass:.0%} of runs "
        f"({'with the release noise' if args.basis == 'dp' else 'without noise'}; generator "
        f"epsilon {eps:g})",
        file=sys.stderr,
    )
    if out is not None:
        print_result(str(Path(out).resolve()), args.json)
    if not kept:
        best = max(at, key=lambda e: e.p, default=None)
        print(
            "synthflow shortlist: the shortlist is EMPTY: private selection would have nothing "
            "to select. "
            + (f"The best configuration passes in {best.p:.0%} of runs. " if best else "")
            + "Sweep more configurations or repeats (sweep --sample/--models/--repeats), a "
            "larger generator budget (sweep --generator-epsilon), or lower --min-pass; "
            "'synthflow sweep-report' shows which criterion fails. No file was written.",
            file=sys.stderr,
        )
        return EXIT_NEGATIVE
    return EXIT_OK


def _report(args: argparse.Namespace) -> int:
    from synthflow._extras import require

    require("matplotlib", what="sweep-report")
    from synthflow.loader import load_spec
    from synthflow.sweep.report import write_report  # matplotlib

    try:
        target = check_output_file(
            args.out, force=args.force, option="--out", protected=[args.store]
        )
        spec = load_spec(args.spec) if args.spec else None
        out = write_report(args.store, target, min_pass=args.min_pass, basis=args.basis, spec=spec)
    except StoreError as exc:
        return _error("sweep-report", exc)
    print(Path(out).resolve())
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``sweep``, ``shortlist`` and ``sweep-report`` to the CLI."""
    p = add_command(
        sub,
        "sweep",
        help="pre-screen the configuration space on public data (parallel, resumable)",
        options=("data", "public", "seed", "json"),
    )
    p.set_defaults(seed=0)
    p.add_argument("spec", help="release spec file, or the name of a bundled spec (births)")
    p.add_argument("--repeats", type=int, required=True, metavar="R", help="runs per configuration")
    p.add_argument(
        "--store", required=True, metavar="PATH", help="SQLite results file (created or resumed)"
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--workers", type=int, metavar="N", help="local worker processes (default: CPU count)"
    )
    where.add_argument(
        "--address", metavar="CLUSTER", help="join a running Dask scheduler, e.g. tcp://host:8786"
    )
    p.add_argument("--models", metavar="NAMES", help="only these comma-separated families")
    p.add_argument("--ids", metavar="IDS", help="only these comma-separated configuration ids")
    p.add_argument(
        "--letters",
        metavar="BINNINGS",
        help="only these comma-separated binnings, one letter per column as 'synthflow "
        "space' prints them (e.g. abaaaa)",
    )
    p.add_argument("--sample", type=int, metavar="K", help="a random sample of K configurations")
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
    p.set_defaults(func=_sweep)

    p = add_command(
        sub,
        "shortlist",
        help="configurations whose pass probability is high enough",
        options=("force", "json"),
    )
    p.add_argument("--store", required=True, metavar="PATH", help="sweep results file")
    _basis_options(p)
    p.add_argument("--out", required=True, metavar="PATH", help="YAML file to write")
    p.add_argument("--z", type=float, default=1.96, help="Wilson interval z (1.96: 95%%)")
    p.add_argument(
        "--generator-epsilon",
        type=float,
        metavar="E",
        help="runs at this swept generator budget (default: the spec's); the release spec "
        "must carry it",
    )
    p.set_defaults(func=_shortlist)

    p = add_command(
        sub, "sweep-report", help="HTML report of a sweep's pass rates", options=("force",)
    )
    p.add_argument(
        "spec",
        nargs="?",
        help="the spec the sweep ran (optional: adds the thresholds DP decisions used)",
    )
    p.add_argument("--store", required=True, metavar="PATH", help="sweep results file")
    _basis_options(p)
    p.add_argument("--out", required=True, metavar="PATH", help="HTML file to write")
    p.set_defaults(func=_report)


def _basis_options(p: argparse.ArgumentParser) -> None:
    """``--min-pass`` and ``--basis``: the same shortlist rule in shortlist and report."""
    p.add_argument(
        "--min-pass", type=float, default=0.10, metavar="P", help="minimum estimated pass rate"
    )
    p.add_argument(
        "--basis",
        choices=("dp", "exact"),
        default="dp",
        help="pass decision with the release's noise (dp) or without it (exact)",
    )

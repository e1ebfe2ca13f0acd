"""``synthflow evaluate``: judge a candidate against the spec's acceptance criteria."""

from __future__ import annotations

import argparse
import logging
from typing import TYPE_CHECKING

from synthflow._util.outputs import check_output_file
from synthflow.cli.conventions import (
    EXIT_NEGATIVE,
    EXIT_OK,
    add_command,
    check_json,
    print_result,
    write_json,
)

# The library is imported where a command uses it: the CLI starts without it (#16).
if TYPE_CHECKING:
    pass

__all__ = ["register"]

log = logging.getLogger(__name__)


def _run(args: argparse.Namespace) -> int:
    from synthflow._extras import require

    if args.report:  # before the evaluation's charge
        require("matplotlib", what="evaluate --report")
    from synthflow.acceptance.job import evaluate_files
    from synthflow.loader import load_spec

    inputs = (args.data, args.candidate, args.spec)
    check_json(args.json, force=args.force, protected=inputs)
    if args.report:
        check_output_file(args.report, force=args.force, option="--report", protected=inputs)
    spec = load_spec(args.spec)
    report, transformer, orig, cand = evaluate_files(
        spec,
        args.config,
        args.data,
        args.candidate,
        exact=args.exact,
        ledger_path=args.ledger,
        seed=args.seed,
        public=args.public,
    )
    if args.json:
        write_json(args.json, report.to_json())
    if args.report:
        from synthflow.acceptance.report import write_report  # matplotlib

        write_report(
            args.report,
            spec=spec,
            transformer=transformer,
            original=orig,
            candidate=cand,
            report=report,
        )
    mode = "exact, non-private" if report.exact else f"DP, epsilon {report.epsilon_total:g}"
    passed = sum(c.passed for c in report.criteria)
    verdict = "PASSED" if report.passed else "FAILED"
    print_result(
        f"{verdict}: {passed} of {len(report.criteria)} criteria passed ({mode})", args.json
    )
    return EXIT_OK if report.passed else EXIT_NEGATIVE


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``evaluate`` to the CLI."""
    p = add_command(
        sub,
        "evaluate",
        help="evaluate a candidate against the acceptance criteria",
        options=("public", "seed", "force", "json"),
    )
    p.add_argument("spec", help="release spec file, or the name of a bundled spec (births)")
    p.add_argument(
        "--data",
        "--original",
        dest="data",
        required=True,
        metavar="FILE",
        help="the original data the candidate was made from (raw CSV or Parquet)",
    )
    p.add_argument(
        "--candidate",
        required=True,
        metavar="FILE",
        help="candidate.csv of 'synthflow run' (or raw data of the same size)",
    )
    p.add_argument("--config", required=True, help="configuration id (see 'synthflow space')")
    p.add_argument(
        "--exact",
        action="store_true",
        help="exact, non-private values; nothing is charged (public data only: with --public)",
    )
    p.add_argument("--report", metavar="PATH", help="also write a self-contained HTML report")
    p.add_argument(
        "--ledger",
        metavar="FILE",
        help="the original's persistent privacy ledger (DP mode; required unless --public)",
    )
    p.set_defaults(func=_run)

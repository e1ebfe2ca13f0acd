"""``synthflow evaluate``: judge a candidate against the spec's acceptance criteria."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

import pandas as pd

from synthflow._outputs import check_output_file
from synthflow.acceptance.evaluate import AcceptanceReport, evaluate
from synthflow.config import ReleaseSpec, load_spec
from synthflow.data import load_data, read_table
from synthflow.errors import ConfigError, DataError
from synthflow.ledger import command_ledger
from synthflow.rng import PrivacyRNG
from synthflow.space import find_configuration
from synthflow.transform import Transformer

__all__ = ["evaluate_command", "load_codes", "register"]

log = logging.getLogger(__name__)


def load_codes(
    path: str | Path, spec: ReleaseSpec, transformer: Transformer, *, public: bool
) -> pd.DataFrame:
    """Codes of a file: a candidate written by ``synthflow run`` (bin labels) or raw data.

    A file whose release columns all hold bin labels of the configuration is read as a
    candidate; anything else is cleaned (:func:`~synthflow.data.load_data`) and binned.
    """
    table = read_table(path)
    if set(transformer.domain.names) <= set(table.columns):
        try:
            return transformer.from_labels(table[list(transformer.domain.names)].astype(str))
        except DataError:
            pass  # not bin labels: a raw file in release-column form
    return transformer.forward(load_data(path, spec, public=public).frame)


def evaluate_command(
    spec: ReleaseSpec,
    config_id: str,
    original: str | Path,
    candidate: str | Path,
    *,
    exact: bool,
    ledger_path: str | Path | None = None,
    seed: int | None = None,
    public: bool = False,
) -> tuple[AcceptanceReport, Transformer, pd.DataFrame, pd.DataFrame]:
    """Load both files, evaluate, and return the report with the codes used.

    ``public`` (or ``exact``, which only public data may use) declares the original
    public, so its cleaning counts are logged.
    """
    configuration = find_configuration(spec, config_id)
    transformer = Transformer(spec, configuration.transformations)
    orig = load_codes(original, spec, transformer, public=exact or public)
    cand = load_codes(candidate, spec, transformer, public=True)
    if exact:
        return evaluate(spec, transformer, orig, cand, exact=True), transformer, orig, cand
    if len(orig) != len(cand):
        raise DataError(
            f"the candidate has {len(cand)} rows but the cleaned original has {len(orig)}; a DP "
            "evaluation needs equal sizes (n is public): evaluate the candidate of this original"
        )
    rng = PrivacyRNG.from_seed(seed) if seed is not None else PrivacyRNG.secure()
    ledger = command_ledger(
        data=original,
        public=public,
        ledger_path=ledger_path,
        total_epsilon=spec.privacy.total_epsilon,
        total_delta=spec.privacy.total_delta,
    )
    report = evaluate(spec, transformer, orig, cand, exact=False, ledger=ledger, rng=rng)
    return report, transformer, orig, cand


def _run(args: argparse.Namespace) -> int:
    if args.seed is not None and not args.exact and not args.public:
        raise ConfigError(
            "--seed makes the noise reproducible and is only for public data; add --public "
            "to declare the original public, or drop --seed"
        )
    inputs = [args.original, args.candidate, args.spec]
    check_output_file(args.json, force=args.force, option="--json", protected=inputs)
    if args.report:
        check_output_file(args.report, force=args.force, option="--report", protected=inputs)
    spec = load_spec(args.spec)
    report, transformer, orig, cand = evaluate_command(
        spec,
        args.config,
        args.original,
        args.candidate,
        exact=args.exact,
        ledger_path=args.ledger,
        seed=args.seed,
        public=args.public,
    )
    payload = report.to_json()
    Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    if args.report:
        from synthflow.acceptance.report import write_report  # noqa: PLC0415 (matplotlib)

        write_report(
            args.report,
            spec=spec,
            transformer=transformer,
            original=orig,
            candidate=cand,
            report=report,
        )
    verdict = "PASSED" if report.passed else "FAILED"
    mode = "exact, non-private" if report.exact else f"DP, epsilon {report.epsilon_total:g}"
    print(f"{verdict} ({mode}): {sum(c.passed for c in report.criteria)}/{len(report.criteria)}")
    return 0  # the decision is in the JSON; a non-zero code means the evaluation failed


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``evaluate`` to the CLI."""
    p = sub.add_parser("evaluate", help="evaluate a candidate against the acceptance criteria")
    p.add_argument("spec", help="release spec, e.g. configs/births.yaml")
    p.add_argument("--original", required=True, help="original data (raw CSV/Parquet)")
    p.add_argument("--candidate", required=True, help="candidate.csv of 'synthflow run' or raw")
    p.add_argument("--config", required=True, help="configuration id (see 'synthflow space')")
    p.add_argument(
        "--exact", action="store_true", help="exact, non-private values; nothing is charged"
    )
    p.add_argument("--json", required=True, help="write the JSON result here")
    p.add_argument("--report", help="also write a self-contained HTML report here")
    p.add_argument(
        "--ledger",
        help="the original's persistent privacy ledger (DP mode; required unless --public)",
    )
    p.add_argument("--seed", type=int, help="reproducible noise; public data only")
    p.add_argument("--public", action="store_true", help="declare the original public")
    p.add_argument("--force", action="store_true", help="replace existing --json/--report files")
    p.set_defaults(func=_run)

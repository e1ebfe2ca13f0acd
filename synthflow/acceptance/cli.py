"""``synthflow evaluate``: judge a candidate against the spec's acceptance criteria."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from synthflow._cli import EXIT_NEGATIVE, EXIT_OK, add_command, check_json, print_result, write_json
from synthflow._outputs import check_output_file
from synthflow.errors import ConfigError, DataError

# The library is imported where a command uses it: the CLI starts without it (#16).
if TYPE_CHECKING:
    import pandas as pd

    from synthflow.acceptance.evaluate import AcceptanceReport
    from synthflow.config.model import ReleaseSpec
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
    from synthflow.data import load_data, read_table

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
    from synthflow.acceptance.evaluate import evaluate
    from synthflow.ledger import command_ledger
    from synthflow.rng import PrivacyRNG
    from synthflow.space import find_configuration
    from synthflow.transform import Transformer

    configuration = find_configuration(spec, config_id)
    transformer = Transformer(spec, configuration.transformations)
    orig = load_codes(original, spec, transformer, public=exact or public)
    cand = load_codes(candidate, spec, transformer, public=True)
    if len(orig) != len(cand):
        # The criteria compare tables of one size (matching, counts, thresholds scaled by
        # n): a candidate of another original would be judged on the wrong scale.
        raise DataError(
            f"the candidate has {len(cand)} rows but the cleaned original has {len(orig)}; the "
            "criteria need equal sizes (n is public): evaluate the candidate made from this "
            "original ('synthflow run' on the same --data)"
        )
    if exact:
        return evaluate(spec, transformer, orig, cand, exact=True), transformer, orig, cand
    rng = PrivacyRNG.from_seed(seed) if seed is not None else PrivacyRNG.secure()
    from synthflow.data import load_data

    ledger = command_ledger(
        # the dataset ledger is bound to the cleaned original (its fingerprint)
        data=load_data(original, spec, public=public).frame if ledger_path is not None else None,
        public=public,
        ledger_path=ledger_path,
        total_epsilon=spec.privacy.total_epsilon,
        total_delta=spec.privacy.total_delta,
    )
    report = evaluate(spec, transformer, orig, cand, exact=False, ledger=ledger, rng=rng)
    return report, transformer, orig, cand


def _run(args: argparse.Namespace) -> int:
    from synthflow.config.load import load_spec

    if args.exact and not args.public:
        # Exact statistics of private data are not private: inside an enclave a steward
        # evaluates with DP (drop --exact; it charges the dataset's --ledger).
        raise ConfigError(
            "--exact prints exact, non-private statistics of --data and is for public data "
            "only: add --public if the data are public, or drop --exact to evaluate with DP "
            "noise charged to the dataset's --ledger"
        )
    if args.seed is not None and not args.exact and not args.public:
        raise ConfigError(
            "--seed makes the noise reproducible and is only for public data; add --public "
            "to declare the original public, or drop --seed"
        )
    inputs = (args.data, args.candidate, args.spec)
    check_json(args.json, force=args.force, protected=inputs)
    if args.report:
        check_output_file(args.report, force=args.force, option="--report", protected=inputs)
    spec = load_spec(args.spec)
    report, transformer, orig, cand = evaluate_command(
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

r"""``synthflow tables protect`` and ``synthflow tables compare``: thin argparse wiring.

Examples::

    synthflow tables protect --data births.csv --spec configs/births-2024.yaml \\
        --tables configs/tables_births.yaml --method cell-key --keys 4096 --out out/ck
    synthflow tables protect ... --method laplace --epsilon 1 --out out/lap
    synthflow tables compare configs/births.yaml --data births.csv \\
        --tables configs/tables_births.yaml --release runs/r1 --out report.html
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from synthflow._util.outputs import check_output_dir, check_output_file
from synthflow.cli._tables_options import (
    add_method_flags,
    check_private_use,
    not_dp_statement,
    warn_not_dp,
)
from synthflow.cli.conventions import add_command
from synthflow.errors import ConfigError
from synthflow.tables.methods import METHODS, floats

# The library is imported where a command uses it: the CLI starts without it (#16);
# synthflow.tables.methods, the methods (their flags as class data), is light on purpose.

__all__ = ["register"]

log = logging.getLogger(__name__)


def _protect(args: argparse.Namespace) -> int:
    from synthflow.loader import load_spec
    from synthflow.tables import load_tables
    from synthflow.tables.job import protect_tables

    spec = load_spec(args.spec)
    tables = load_tables(args.tables, spec)
    entry = METHODS[args.method]
    opts = entry.settings(vars(args), spec)
    method = entry.build(**opts)
    check_private_use(args, spec, opts, is_dp=method.is_dp)
    out = check_output_dir(args.out, option="--out")  # empty and writable, before any charge
    protect_tables(
        spec,
        tables,
        method,
        args.data,
        out=out,
        seed=args.seed,
        public=args.public,
        ledger_path=args.ledger,
        not_dp_statement=not_dp_statement(args.method),
        tables_file=str(args.tables),
        what=f"tables protect {args.method}",
    )
    if not method.is_dp:
        warn_not_dp(args, out)
    print(out.resolve())
    return 0


def _compare(args: argparse.Namespace) -> int:
    from synthflow._extras import require

    require("matplotlib", what="tables compare (its HTML report)")
    from synthflow.loader import load_spec
    from synthflow.tables import load_tables
    from synthflow.tables.job import compare_tables
    from synthflow.tables.report import write_report

    if not args.public:
        # The comparison publishes exact statistics of the input (each method's distance
        # to the true tables, Cramer's V, entropy risk, counts of 1s and 2s, uniques) and
        # spends budget on every DP run: a methodologist's tool for public data only.
        raise ConfigError(
            "tables compare reports exact statistics of --data (distances to the true "
            "tables, risk measures) and is for public data only: pass --public with public "
            "data (e.g. the NVSS samples); to protect private tables use 'synthflow tables "
            "protect', which publishes only the protected tables"
        )
    check_output_file(
        args.out, force=args.force, option="--out", protected=[args.data, args.spec, args.tables]
    )
    spec = load_spec(args.spec)
    tables = load_tables(args.tables, spec)
    result = compare_tables(
        spec,
        tables,
        args.data,
        release_path=args.release,
        seed=args.seed,
        epsilons=floats(args.epsilons, "--epsilons") if args.epsilons else None,
        delta=args.delta,
        neighbouring=args.neighbouring,
        nonnegative=not args.allow_negative,
    )
    path = write_report(result, args.out, heatmap_epsilon=args.heatmap_epsilon)
    log.info("comparison took %.1f s", result.seconds)
    print(Path(path).resolve())
    return 0


def _tables_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("spec", help="release spec file, or the name of a bundled spec (births)")
    p.add_argument(
        "--tables",
        required=True,
        metavar="PATH",
        help="tables YAML, e.g. configs/tables_births.yaml",
    )
    p.add_argument(
        "--neighbouring",
        choices=("replace_one", "add_remove"),
        help="neighbouring relation for DP sensitivities (default: the spec's)",
    )


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``tables protect`` and ``tables compare`` to the CLI."""
    tp = add_command(sub, "tables", help="protect frequency tables; compare with DP")
    tsub = tp.add_subparsers(dest="tables_command", metavar="SUBCOMMAND", required=True)

    p = add_command(
        tsub,
        "protect",
        help="write each table protected by one method as CSV",
        options=("data", "public", "seed"),
    )
    _tables_options(p)
    p.add_argument("--method", required=True, choices=sorted(METHODS))
    p.add_argument("--out", required=True, metavar="DIR", help="new output directory")
    p.add_argument(
        "--ledger",
        metavar="FILE",
        help="the dataset's persistent privacy ledger (DP methods; required unless --public)",
    )
    add_method_flags(p)
    p.set_defaults(func=_protect)

    p = add_command(
        tsub,
        "compare",
        help="every method side by side, as an HTML report (public data only)",
        options=("data", "public", "seed", "force"),
    )
    _tables_options(p)
    p.add_argument(
        "--release", metavar="DIR", help="directory of a DP synthetic release (first *.csv)"
    )
    p.add_argument("--out", required=True, metavar="PATH", help="HTML report file")
    p.add_argument("--epsilons", help="total epsilons of the DP methods, e.g. 0.1,1,2,5,10")
    p.add_argument("--delta", type=float, default=1e-6, help="total delta of Gaussian runs")
    p.add_argument(
        "--allow-negative",
        action="store_true",
        help="publish negative DP counts (default: clip to 0)",
    )
    p.add_argument("--heatmap-epsilon", type=float, help="epsilon of the DP heatmaps")
    p.set_defaults(func=_compare)

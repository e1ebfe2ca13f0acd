"""Core subcommands: ``space``, ``validate``, ``schema``, ``run`` and ``demo``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from synthflow.cli.conventions import add_command, check_json, write_json
from synthflow.errors import ConfigError

# The rest is imported where it is used, so that 'synthflow --help' and 'synthflow space'
# start without pandas, scipy or the generators (#16).
if TYPE_CHECKING:
    from synthflow.config.model import ReleaseSpec

__all__ = ["register"]


def _space(args: argparse.Namespace) -> int:
    from synthflow.loader import load_spec
    from synthflow.space import expand_space, summarise_space

    check_json(args.json, protected=(args.spec,))
    spec = load_spec(args.spec)
    configs = expand_space(spec)
    if args.model:
        wanted = {m.strip() for m in args.model.split(",") if m.strip()}
        unknown = sorted(wanted - {c.model for c in configs})
        if unknown:
            raise ConfigError(
                f"--model {', '.join(unknown)}: not in the spec's space; its families are "
                f"{sorted({c.model for c in configs})}"
            )
        configs = [c for c in configs if c.model in wanted]
    if not configs:
        raise ConfigError(
            f"the space of {str(args.spec)!r} is empty: give space.models at least one "
            "model with a grid, and space.min_count at least one value"
        )
    if args.json:
        write_json(args.json, [c.to_json() for c in configs])
        if args.json == "-":
            return 0
    if args.all:
        width = max(len(spec.column_names), len("letters"))
        print(f"{'id':<22} {'model':<10} {'min':>3}  {'letters':<{width}}  hyperparameters")
        for c in configs:
            hp = " ".join(f"{k}={v}" for k, v in c.hyperparameters_items)
            print(f"{c.id:<22} {c.model:<10} {c.min_count:>3}  {c.letters:<{width}}  {hp}")
        print(
            f"{len(configs)} configurations; letters = transformation per column "
            f"({', '.join(spec.column_names)})",
            file=sys.stderr,
        )
    else:
        print(summarise_space(spec, configs))
    _say_shipped_plan(args.spec)
    if args.rows is not None:
        from synthflow.cli._noise import noise_report

        noise_report(spec, configs, args.rows)
    return 0


def _check_public_sample(spec: ReleaseSpec) -> None:
    """A public_sample that names no file, or no table of the spec's columns: refused here."""
    from synthflow.errors import DataError
    from synthflow.public_sample import public_sample

    try:
        public_sample(spec)  # public data: read and cleaned as the release reads it
    except DataError as exc:
        raise ConfigError(
            f"the spec's public_sample {spec.public_sample!r} cannot be read as the spec's "
            f"data: {exc}. Name a public sample of these columns, or remove public_sample"
        ) from None


def _say_shipped_plan(spec: str) -> None:
    """On stderr (stdout stays the command's output): the plan 'release NAME' would use."""
    from synthflow.release.shipped import shipped_plan_of

    shipped = shipped_plan_of(spec)
    if shipped is not None:
        print(f"'synthflow release {shipped.name}' uses {shipped.describe()}", file=sys.stderr)


def _validate(args: argparse.Namespace) -> int:
    """``synthflow validate``: the JSON Schema, every check of the loader (``--data``: values)."""
    import yaml

    from synthflow._extras import has
    from synthflow.config.values import read_yaml
    from synthflow.loader import load_spec
    from synthflow.resources import resolve_spec_path
    from synthflow.space import expand_space
    from synthflow.spec_schema import schema_errors

    path = resolve_spec_path(args.spec)
    if not has("jsonschema"):  # the loader's own checks below still run, all of them
        print(
            "synthflow validate: note: the JSON-Schema layer is skipped (jsonschema is not "
            "installed: pip install 'synthflow-dp[schema]'); every check of the loader runs",
            file=sys.stderr,
        )
    elif path.is_file():  # else load_spec says what is missing
        try:
            raw = read_yaml(path.read_bytes())
        except (yaml.YAMLError, ConfigError):  # load_spec reports it with its line
            raw = None
        errors = schema_errors(raw) if raw is not None else []
        if errors:
            shown = "\n  ".join(errors[:20])
            more = f"\n  ... and {len(errors) - 20} more" if len(errors) > 20 else ""
            raise ConfigError(
                f"{path}: {len(errors)} problem(s) against the spec schema "
                f"(docs/spec.md lists every key):\n  {shown}{more}"
            )
    spec = load_spec(args.spec)  # bins, groups, budgets, grids: or ConfigError
    configs = expand_space(spec)
    from synthflow._validate_checks import check_affordable, check_delta

    _check_public_sample(spec)  # before the budget: its exact figure reads the sample
    check_affordable(spec, configs)
    check_delta(spec, configs)
    unmeetable = [c.name for c in spec.criteria if c.threshold <= 0]
    if unmeetable:
        # Every criterion's value is an error or a distance (>= 0) and passes below its
        # threshold: a threshold of 0 or less cannot be met, even by the original data.
        raise ConfigError(
            f"acceptance: {', '.join(unmeetable)}: a threshold of 0 or less can never be met "
            "(a criterion passes when its value, an error >= 0, is below the threshold); "
            "give a positive threshold"
        )
    if args.data is not None:  # the values against the public domain, before any work
        from synthflow._validate_checks import check_data

        check_data(spec, args.data)
    models = sorted({c.model for c in configs})
    print(
        f"{spec.path}: valid; {len(spec.columns)} columns, {len(spec.criteria)} criteria, "
        f"{len(configs)} configurations ({', '.join(models)}); total epsilon "
        f"{spec.privacy.total_epsilon:g} (generator {spec.privacy.generator_epsilon:g}, "
        f"criteria {spec.evaluation_epsilon:g})"
    )
    if args.data is not None:
        print(
            f"{args.data}: every value lies in the spec's public domains and categories "
            "(no value or count shown; nothing charged)"
        )
    _say_shipped_plan(args.spec)
    if args.rows is not None:
        from synthflow.cli._noise import noise_report

        noise_report(spec, configs, args.rows)
    return 0


def _schema(args: argparse.Namespace) -> int:
    """``synthflow schema``: where the spec's JSON Schema is (or a copy with --json)."""
    from synthflow.spec_schema import SPEC_SCHEMA, schema_path

    if args.json:
        check_json(args.json, force=args.force)
        write_json(args.json, SPEC_SCHEMA)
        if args.json != "-":
            print(Path(args.json).resolve())
        return 0
    print(schema_path())
    print(
        "validate a spec as you type: put '# yaml-language-server: $schema=<the path above>' "
        "on its first line (YAML extension of VS Code, or any editor with the YAML "
        "language server)",
        file=sys.stderr,
    )
    return 0


def _run(args: argparse.Namespace) -> int:
    from synthflow.jobs.run import run_configuration
    from synthflow.loader import load_spec
    from synthflow.space import find_configuration

    spec = load_spec(args.spec)
    out = run_configuration(
        spec,
        find_configuration(spec, args.config),
        args.data,
        Path(args.out),
        seed=args.seed,
        public=args.public,
        show_progress=not args.quiet,
        ledger_path=args.ledger,
    )
    print(out.resolve())
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``space``, ``validate``, ``schema``, ``run`` and ``demo`` to the CLI."""
    p = add_command(
        sub,
        "space",
        help="summarise a spec's configuration space by generator (--all: every configuration)",
        options=("json",),
    )
    p.add_argument("spec", help="release spec file, or the name of a bundled spec (births)")
    p.add_argument("--model", help="only these comma-separated generator families")
    p.add_argument(
        "--all",
        action="store_true",
        help="print every configuration, one a line (id, model, min_count, letters, "
        "hyperparameters); default: counts per generator and the axes of the space",
    )
    p.add_argument(
        "--rows",
        type=int,
        metavar="N",
        help="also check, at N rows (the release's public n), which criteria's DP noise "
        "alone decides pass or fail",
    )
    p.set_defaults(func=_space)

    p = add_command(
        sub,
        "validate",
        help="check a spec (keys, types, bins, groups, budgets, grids); --data: a data "
        "file's values against its public domains",
    )
    p.add_argument("spec", help="release spec file, or the name of a bundled spec (births)")
    p.add_argument(
        "--rows",
        type=int,
        metavar="N",
        help="also warn of criteria whose DP noise alone decides pass or fail at N rows",
    )
    p.add_argument(
        "--data",
        metavar="FILE",
        help="also check every value of this (private) CSV or Parquet file against the "
        "spec's public domains and categories, as the release will, before any work; "
        "names the columns that fail, never a value; nothing is charged",
    )
    p.set_defaults(func=_validate)

    p = add_command(
        sub,
        "schema",
        help="print the path of the release spec's JSON Schema (for editors); --json copies it",
        options=("json", "force"),
    )
    p.set_defaults(func=_schema)

    p = add_command(
        sub,
        "run",
        help="run one flow and write a release candidate",
        options=("data", "public", "seed"),
    )
    p.add_argument("spec", help="release spec file, or the name of a bundled spec (births)")
    p.add_argument("--config", required=True, help="configuration id (see 'synthflow space')")
    p.add_argument("--out", required=True, metavar="DIR", help="new output directory")
    p.add_argument(
        "--ledger",
        metavar="FILE",
        help="the dataset's persistent privacy ledger (required unless --public)",
    )
    p.set_defaults(func=_run)

    from synthflow.cli.demo import register_demo

    register_demo(sub)

r"""``synthflow public-data``: the default public data, and the other datasets' files.

Regenerate the committed default (from the repository root)::

    python -m synthflow public-data simulate \
        --calibration public_data/nvss2019_calibration.yaml \
        --rows 167000 --seed 2019 --out public_data/nvss_like_2019.csv.gz
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from synthflow._util.outputs import check_output_file
from synthflow.cli.conventions import add_command
from synthflow.errors import ConfigError

__all__ = ["register"]


def _calibrate(sample: str, out: str) -> int:
    from synthflow.public import read_sample
    from synthflow.public.nvss import calibrate

    cal = calibrate(read_sample(sample), source=sample)
    print(Path(cal.to_yaml(out)).resolve())
    return 0


def _simulate(calibration: str, rows: int, seed: int, out: str) -> int:
    import numpy as np

    from synthflow.public import write_sample
    from synthflow.public.nvss import Calibration, simulate

    frame = simulate(Calibration.from_yaml(calibration), rows, np.random.default_rng(seed))
    print(Path(write_sample(frame, out)).resolve())
    return 0


def _from_nvss(natality: str, out: str, rows: int | None, seed: int) -> int:
    import numpy as np

    from synthflow.public import write_sample
    from synthflow.public.natality import load_nvss_natality

    rng = np.random.default_rng(seed) if rows is not None else None
    frame = load_nvss_natality(natality, n_rows=rows, rng=rng)
    print(Path(write_sample(frame, out)).resolve())
    return 0


def _split(table: str, out: str, public_share: float, seed: int) -> int:
    import importlib

    module = importlib.import_module(f"synthflow.public.{table}")  # statsmodels
    write = getattr(module, f"write_{table}")
    for path in write(out, public_share=public_share, seed=seed):
        print(Path(path).resolve())
    return 0


def _wide(out: str, rows: int, seed: int) -> int:
    from synthflow.public.wide import write_wide_table

    try:
        write_wide_table(out, rows, seed=seed)
    except FileExistsError as exc:
        raise ConfigError(f"{out!r} exists; it is never overwritten: choose a new --out") from exc
    print(Path(out).resolve())
    return 0


def _draw(spec: str, public: str, rows: int, out: str, seed: int | None) -> int:
    from synthflow.loader import load_spec
    from synthflow.public.draw_sample import check_rows, draw_public_file

    check_rows(rows)
    print(Path(draw_public_file(load_spec(spec), public, rows, out, seed=seed)).resolve())
    return 0


def register(subparsers: Any) -> None:
    """Add the ``public-data`` command to the main CLI's ``subparsers``."""
    parser = add_command(
        subparsers,
        "public-data",
        help="calibrate, simulate or import NVSS-like public data",
        description=__doc__,
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    sub = parser.add_subparsers(dest="public_command", metavar="SUBCOMMAND", required=True)
    _register_nvss(sub)
    _register_datasets(sub)
    _register_draw(sub)


def _register_nvss(sub: Any) -> None:
    """The NVSS subcommands: ``calibrate``, ``simulate`` and ``from-nvss``."""
    p = add_command(
        sub,
        "calibrate",
        help="compute simulator figures from an NVSS sample CSV",
        options=("force",),
    )
    p.add_argument(
        "--data", required=True, metavar="FILE", help="CSV(.gz) in the NVSS sample format"
    )
    p.add_argument("--out", required=True, metavar="PATH", help="calibration YAML to write")
    p.set_defaults(func=lambda args: _calibrate(args.data, _out(args)))

    p = add_command(
        sub, "simulate", help="draw NVSS-like births from a calibration YAML", options=("force",)
    )
    p.add_argument("--calibration", required=True, metavar="PATH", help="calibration YAML")
    p.add_argument("--rows", required=True, type=int, help="number of rows to draw")
    p.add_argument("--seed", required=True, type=int, help="seed of the generator")
    p.add_argument("--out", required=True, metavar="PATH", help="CSV(.gz) to write")
    p.set_defaults(func=lambda args: _simulate(args.calibration, args.rows, args.seed, _out(args)))

    p = add_command(
        sub,
        "from-nvss",
        help="convert a full NVSS natality CSV (NBER layout)",
        options=("force",),
    )
    p.add_argument("--data", required=True, metavar="FILE", help="NVSS natality CSV(.gz)")
    p.add_argument(
        "--out", required=True, metavar="PATH", help="CSV(.gz) to write in the sample format"
    )
    p.add_argument("--rows", type=int, default=None, help="simple random sample size")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample (with --rows)")
    p.set_defaults(func=lambda args: _from_nvss(args.data, _out(args), args.rows, args.seed))


def _register_datasets(sub: Any) -> None:
    """The other datasets' subcommands: ``affairs``, ``randhie`` and ``wide``."""
    for table, seed, help_text in (
        ("affairs", 1978, "Fair's 1974 survey (statsmodels), split into public.csv and "
         "private.csv (configs/affairs.yaml)"),
        ("randhie", 1987, "the RAND Health Insurance Experiment (statsmodels, 20,190 rows, "
         "10 columns), split into public.csv and private.csv (configs/randhie.yaml)"),
    ):  # fmt: skip
        p = add_command(sub, table, help=help_text)
        p.add_argument(
            "--out", required=True, metavar="DIR", help="directory for the two CSV files"
        )
        p.add_argument("--public-share", type=float, default=0.3, help="share of rows made public")
        p.add_argument("--seed", type=int, default=seed, help="seed of the split")
        p.set_defaults(func=lambda args, t=table: _split(t, args.out, args.public_share, args.seed))

    p = add_command(
        sub, "wide", help="a generated 15-column census-like table (configs/wide_census.yaml)"
    )
    p.add_argument("--out", required=True, metavar="PATH", help="CSV file to write")
    p.add_argument("--rows", type=int, default=32000, help="number of rows")
    p.add_argument("--seed", type=int, required=True, help="seed of the rows")
    p.set_defaults(func=lambda args: _wide(args.out, args.rows, args.seed))


def _register_draw(sub: Any) -> None:
    """The ``draw`` subcommand: rows drawn from a public sample's model."""
    p = add_command(
        sub,
        "draw",
        help="draw N rows from a non-private model of a public sample, to screen at the "
        "private file's size (synthflow.public.draw)",
        options=("force", "seed", "public"),
        description="Fit a Chow-Liu tree to a public sample's 1- and 2-way tables over the "
        "spec's bins (every binning alternative, group and constraint edge; no noise: "
        "public data only), each regression criterion's target drawn from its features "
        "by the sample's OLS fit and residuals, and draw --rows rows in the spec's raw "
        "column format, rows breaking a raw constraint drawn again. Nothing private is "
        "read. A sweep on a small public sample judges configurations at the wrong size: "
        "sweep the draw, at the private file's size.",
    )
    p.add_argument("spec", metavar="SPEC", help="release spec (file or bundled name)")
    p.add_argument(
        "--from", dest="sample", required=True, metavar="FILE", help="the public sample (CSV)"
    )
    p.add_argument("--rows", required=True, type=int, help="rows to draw (the private file's size)")
    p.add_argument("--out", required=True, metavar="PATH", help="CSV(.gz) file to write")
    p.set_defaults(
        func=lambda args: _draw(args.spec, _declared(args), args.rows, _out(args), args.seed)
    )


def _declared(args: argparse.Namespace) -> str:
    """``--from``, declared public: the draw copies its exact 1- and 2-way tables."""
    if not args.public:
        from synthflow.errors import ConfigError

        raise ConfigError(
            "draw fits its model to --from's exact 1- and 2-way tables and writes rows like "
            "its rows, so --from must be public data: add --public to declare it (never pass "
            "the private file here; nothing was read)"
        )
    return str(args.sample)


def _out(args: argparse.Namespace) -> str:
    """``--out``, checked: never overwritten without ``--force``."""
    inputs = [getattr(args, name, None) for name in ("sample", "data", "calibration", "spec")]
    return str(
        check_output_file(
            args.out,
            force=args.force,
            option="--out",
            protected=[i for i in inputs if isinstance(i, str)],
        )
    )

r"""``synthflow public-data``: the default public data, and the other datasets' files.

Regenerate the committed default (from the repository root)::

    python -m synthflow public-data simulate \
        --calibration public_data/nvss2019_calibration.yaml \
        --rows 167000 --seed 2019 --out public_data/nvss_like_2019.csv.gz
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from synthflow.errors import ConfigError
from synthflow.public._io import read_sample, write_sample
from synthflow.public.natality import load_nvss_natality
from synthflow.public.nvss import Calibration, calibrate, simulate

__all__ = ["register"]


def _calibrate(sample: str, out: str) -> int:
    cal = calibrate(read_sample(sample), source=sample)
    print(cal.to_yaml(out))
    return 0


def _simulate(calibration: str, rows: int, seed: int, out: str) -> int:
    frame = simulate(Calibration.from_yaml(calibration), rows, np.random.default_rng(seed))
    print(write_sample(frame, out))
    return 0


def _from_nvss(natality: str, out: str, rows: int | None, seed: int) -> int:
    rng = np.random.default_rng(seed) if rows is not None else None
    frame = load_nvss_natality(natality, n_rows=rows, rng=rng)
    print(write_sample(frame, out))
    return 0


def _affairs(out: str, public_share: float, seed: int) -> int:
    from synthflow.public.affairs import write_affairs  # noqa: PLC0415  (statsmodels)

    for path in write_affairs(out, public_share=public_share, seed=seed):
        print(path)
    return 0


def _wide(out: str, rows: int, seed: int) -> int:
    from synthflow.public.wide import write_wide_table  # noqa: PLC0415

    try:
        write_wide_table(out, rows, seed=seed)
    except FileExistsError as exc:
        raise ConfigError(f"{out!r} exists; it is never overwritten: choose a new --out") from exc
    print(out)
    return 0


def register(subparsers: Any) -> None:
    """Add the ``public-data`` command to the main CLI's ``subparsers``."""
    parser = subparsers.add_parser(
        "public-data",
        help="calibrate, simulate or import NVSS-like public data",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="public_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser("calibrate", help="compute simulator figures from an NVSS sample CSV")
    p.add_argument("--sample", required=True, help="CSV(.gz) in the NVSS sample format")
    p.add_argument("--out", required=True, help="calibration YAML to write")
    p.set_defaults(func=lambda args: _calibrate(args.sample, args.out))

    p = sub.add_parser("simulate", help="draw NVSS-like births from a calibration YAML")
    p.add_argument("--calibration", required=True, help="calibration YAML")
    p.add_argument("--rows", required=True, type=int, help="number of rows to draw")
    p.add_argument("--seed", required=True, type=int, help="seed of the generator")
    p.add_argument("--out", required=True, help="CSV(.gz) to write")
    p.set_defaults(func=lambda args: _simulate(args.calibration, args.rows, args.seed, args.out))

    p = sub.add_parser("from-nvss", help="convert a full NVSS natality CSV (NBER layout)")
    p.add_argument("--natality", required=True, help="NVSS natality public-use CSV(.gz)")
    p.add_argument("--out", required=True, help="CSV(.gz) to write in the NVSS sample format")
    p.add_argument("--rows", type=int, default=None, help="simple random sample size")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample (with --rows)")
    p.set_defaults(func=lambda args: _from_nvss(args.natality, args.out, args.rows, args.seed))

    p = sub.add_parser(
        "affairs",
        help="Fair's 1974 survey (statsmodels), split into public.csv and private.csv "
        "(configs/affairs.yaml)",
    )
    p.add_argument("--out", required=True, help="directory to write the two CSV files into")
    p.add_argument("--public-share", type=float, default=0.3, help="share of rows made public")
    p.add_argument("--seed", type=int, default=1978, help="seed of the split")
    p.set_defaults(func=lambda args: _affairs(args.out, args.public_share, args.seed))

    p = sub.add_parser(
        "wide", help="a generated 15-column census-like table (configs/wide_census.yaml)"
    )
    p.add_argument("--out", required=True, help="CSV file to write")
    p.add_argument("--rows", type=int, default=32000, help="number of rows")
    p.add_argument("--seed", type=int, required=True, help="seed of the rows")
    p.set_defaults(func=lambda args: _wide(args.out, args.rows, args.seed))

"""Births populations for the benchmarks: seeded public draws, and draws unlike them.

:func:`public_draw` simulates a seeded draw from the committed NVSS calibration. The
release must hold on populations other than the public sample it was planned on
(another country's births). :func:`shifted_births` draws ``rows`` rows without
replacement from a births file, each row's weight raised for higher parity, older
mothers and preterm births, so that those 1-way shares move by 5-15 points; it prints
the shares before and after. Public data in, a file out: nothing here is private.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["public_draw", "shifted_births"]

REPO = Path(__file__).resolve().parents[1]


def public_draw(out: Path, rows: int, seed: int) -> Path:
    """A seeded public draw from the committed NVSS calibration (what ship-plan sweeps)."""
    exe = str(Path(sys.executable).with_name("synthflow"))
    calibration = str(REPO / "public_data" / "nvss2019_calibration.yaml")
    subprocess.run([exe, "public-data", "simulate", "--calibration", calibration, "--rows",
                    str(rows), "--seed", str(seed), "--out", str(out)],
                   check=True, capture_output=True, text=True)  # fmt: skip
    return out


TILTS = {"parity >= 3": 1.5, "mother_age >= 35": 1.3, "gestation_week < 37": 1.2}
"""Log-weight added to a row for each condition it meets."""


COUNTRY = {"birth_weight": (-120, -80), "mother_age": (1, 0)}
"""``country=True``: (shift of every row, extra shift for first births) per column. A
reweighting leaves each column's distribution given the tilted ones as it was; another
country's births differ there too (lighter babies, first births more so; older mothers),
so the regression and conditional means the criteria read move as well."""


def shifted_births(source: Path, out: Path, *, rows: int, seed: int, country: bool = False) -> Path:
    """Write ``rows`` reweighted rows of ``source`` (NVSS sample format) to ``out``.

    ``country``: also shift birth weight and mother's age (:data:`COUNTRY`), within the
    spec's public domains.
    """
    frame = pd.read_csv(source)
    logw = np.zeros(len(frame))
    for condition, tilt in TILTS.items():
        logw += tilt * frame.eval(condition).to_numpy()
    p = np.exp(logw - logw.max())
    gen = np.random.default_rng(seed)  # public data: seeded
    take = gen.choice(len(frame), size=min(rows, len(frame)), replace=False, p=p / p.sum())
    shifted = frame.iloc[np.sort(take)].copy()
    for condition in TILTS:  # the reweighting's own shifts, before any country shift
        before, after = frame.eval(condition).mean(), shifted.eval(condition).mean()
        print(f"  {condition}: {before:.1%} -> {after:.1%} ({100 * (after - before):+.1f} points)")
    if country:
        first = (shifted["parity"] == 1).to_numpy()
        for column, (every, extra) in COUNTRY.items():
            before = shifted[column].mean()
            shifted[column] = shifted[column] + every + extra * first
            print(f"  {column}: mean {before:.1f} -> {shifted[column].mean():.1f}")
        # within the spec's public domains (mother_age 12-50, birth_weight 227-8165 g)
        shifted["mother_age"] = shifted["mother_age"].clip(upper=50)
        shifted["birth_weight"] = shifted["birth_weight"].clip(lower=227)
    shifted.to_csv(out, index=False)
    return out

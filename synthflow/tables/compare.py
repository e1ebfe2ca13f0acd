"""Every method on every table, side by side: the library behind ``tables compare``.

:func:`compare` tabulates the microdata once, runs the classic methods (cell key
perturbation with a 256-key and a 4,096-key p-table, the 10-5 rule, suppression below
10, rounding to 5), the DP methods (independent Laplace, geometric and Gaussian noise
and the top-down method) at each epsilon, and, if given, tabulates a DP synthetic
release the same way; it then measures utility and risk of each published table
against the original. The original itself is listed too (no loss, its own risk). Each
DP run is charged to one ledger of the sum of all runs (:func:`comparison_budget`), so
compare on public data (the NVSS samples) to choose a method, then protect once.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from synthflow.data import read_table
from synthflow.errors import DataError
from synthflow.privacy.rng import PrivacyRNG
from synthflow.tables._noise import MECHANISMS, Neighbouring
from synthflow.tables._spec import TableSpec
from synthflow.tables.measures import Measures, measure, transition_matrix
from synthflow.tables.methods import CellKey, TableMethod, build_method
from synthflow.tables.protect import protect
from synthflow.tables.ptable import PRESETS
from synthflow.tables.tabulate import CountTable, Microdata, ReleasedTable, tabulate_all

if TYPE_CHECKING:
    from synthflow.privacy.ledger import Ledger

__all__ = [
    "DEFAULT_EPSILONS",
    "Comparison",
    "ComparisonRow",
    "compare",
    "comparison_budget",
    "read_release",
]

DEFAULT_EPSILONS: tuple[float, ...] = (0.1, 1.0, 2.0, 5.0, 10.0)
"""The epsilons of the ONS DP pilot's tables."""

FAMILIES: tuple[str, ...] = (
    "original",
    "cell-key",
    "ten-five",
    "suppress",
    "round",
    *MECHANISMS,
    "top-down",
    "dp-synthetic",
)
"""Method families in report order."""


@dataclass(frozen=True, kw_only=True)
class ComparisonRow:
    """One published table of one method (at one epsilon)."""

    table: str
    """Table level name (file stem)."""
    method: str
    """Method family (see :data:`FAMILIES`)."""
    label: str
    """Display name (family, variant, epsilon)."""
    epsilon: float | None
    measures: Measures
    transition: np.ndarray
    """(11, 12) transition matrix (see :func:`transition_matrix`)."""


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """The result of :func:`compare`."""

    rows: tuple[ComparisonRow, ...]
    tables: tuple[str, ...]
    """Table level names in report order."""
    descriptions: dict[str, str]
    """Table level name -> dimensions and cell counts, for the report."""
    epsilons: tuple[float, ...]
    n: int
    """Records tabulated."""
    privacy: dict[str, object]
    """Ledger summary of the DP runs."""
    release_epsilon: float | None
    """Epsilon of the DP synthetic release, when its directory records it."""
    randomness: dict[str, object]
    options: dict[str, object]
    seconds: float

    def to_frame(self) -> pd.DataFrame:
        """One row per (table, method): every measure as a column."""
        return pd.DataFrame(
            [
                {
                    "table": r.table,
                    "method": r.method,
                    "label": r.label,
                    "epsilon": r.epsilon,
                    **r.measures.to_dict(),
                }
                for r in self.rows
            ]
        )


def read_release(path: str | Path) -> tuple[pd.DataFrame, float | None]:
    """Read a release directory: its synthetic data and, if recorded, its epsilon.

    The data are ``synthetic.csv`` (a release package) or else the first ``*.csv`` file
    (e.g. ``candidate.csv`` as written by ``synthflow run``), holding bin labels. The
    epsilon is the release's total from ``acceptance.json`` (``budget.total_epsilon``),
    else the sum of the directory's ``ledger.jsonl``, else unknown (None).

    Raises:
        DataError: If the directory or its CSV file is missing.
    """
    p = Path(path)
    if not p.is_dir():
        raise DataError(
            f"release {str(p)!r} is not a directory; pass the release directory (it holds "
            "synthetic.csv, or candidate.csv from 'synthflow run')"
        )
    csvs = sorted(p.glob("*.csv"), key=lambda f: (f.name != "synthetic.csv", f.name))
    if not csvs:
        raise DataError(f"release directory {str(p)!r} holds no *.csv synthetic data file")
    frame = read_table(csvs[0])
    eps: float | None = None
    acceptance = p / "acceptance.json"
    ledger = p / "ledger.jsonl"
    if acceptance.is_file():
        total = json.loads(acceptance.read_text(encoding="utf-8")).get("budget", {})
        eps = total.get("total_epsilon") if isinstance(total, dict) else None
    if eps is None and ledger.is_file():
        lines = [json.loads(x) for x in ledger.read_text(encoding="utf-8").splitlines() if x]
        eps = math.fsum(float(x["epsilon"]) for x in lines)
    return frame, None if eps is None else float(eps)


def _methods(
    epsilons: Sequence[float],
    *,
    delta: float,
    neighbouring: Neighbouring,
    nonnegative: bool,
) -> list[tuple[TableMethod, float | None]]:
    out: list[tuple[TableMethod, float | None]] = [
        (CellKey(ptable=PRESETS["256"]), None),
        (CellKey(ptable=PRESETS["4096"]), None),
        (build_method("ten-five"), None),
        (build_method("suppress", threshold=10), None),
        (build_method("round", base=5), None),
    ]
    for eps in epsilons:
        for mech in MECHANISMS:
            opts: dict[str, object] = {"epsilon": eps, "neighbouring": neighbouring,
                                       "nonnegative": nonnegative}  # fmt: skip
            if mech == "gaussian":
                opts["delta"] = delta
            out.append((build_method(mech, **opts), eps))
        out.append((build_method("top-down", epsilon=eps, neighbouring=neighbouring), eps))
    return out


def _rows(
    originals: Sequence[CountTable],
    published: Sequence[ReleasedTable],
    method: str,
    epsilon: float | None,
) -> list[ComparisonRow]:
    rows = []
    for orig, pub in zip(originals, published, strict=True):
        s = orig.spec.structural
        rows.append(
            ComparisonRow(
                table=orig.spec.name,
                method=method,
                label=pub.display,
                epsilon=epsilon,
                measures=measure(orig.counts, pub.values, s),
                transition=transition_matrix(orig.counts, pub.values, s),
            )
        )
    return rows


def _original_rows(originals: Sequence[CountTable]) -> list[ComparisonRow]:
    """The original tables as published: no loss, their own risk."""
    return [
        ComparisonRow(
            table=o.spec.name,
            method="original",
            label="original",
            epsilon=None,
            measures=measure(o.counts, o.counts.astype(np.float64), o.spec.structural),
            transition=transition_matrix(o.counts, o.counts, o.spec.structural),
        )
        for o in originals
    ]


def compare(
    data: Microdata,
    tables: Sequence[TableSpec],
    *,
    rng: PrivacyRNG,
    release: Microdata | None = None,
    release_epsilon: float | None = None,
    epsilons: Sequence[float] = DEFAULT_EPSILONS,
    delta: float = 1e-6,
    neighbouring: Neighbouring = "replace_one",
    nonnegative: bool = True,
    ledger: Ledger,
) -> Comparison:
    """Run every method on every table and measure each published table.

    ``ledger`` is charged every DP run: open it (:func:`synthflow.jobs.open_job`) with
    :func:`comparison_budget`'s total.

    Args:
        data: The microdata (original).
        tables: Tables to compare on.
        rng: Source of randomness.
        release: Bin labels of a DP synthetic release, tabulated like the data.
        release_epsilon: The release's total epsilon, for the report.
        epsilons: Total epsilons of the DP methods (each split over the tables).
        delta: Total delta of the Gaussian runs.
        neighbouring: Neighbouring relation of the DP methods.
        nonnegative: Clip negative DP counts to 0 (as an office would publish).
        ledger: Charged every DP run (its total: :func:`comparison_budget`).
    """
    start = time.perf_counter()
    if not epsilons or any(not (e > 0 and math.isfinite(e)) for e in epsilons):
        raise ValueError(f"epsilons ({list(epsilons)}) must be finite and > 0")
    groups = tabulate_all(tables, data)
    originals = [lv for g in groups for lv in g]
    methods = _methods(epsilons, delta=delta, neighbouring=neighbouring, nonnegative=nonnegative)
    rows = _original_rows(originals)
    for method, eps in methods:
        published = protect(data, tables, method, rng=rng, ledger=ledger, groups=groups)
        rows += _rows(originals, published, method.name, eps)
    if release is not None:
        rel = tabulate_all(tables, release, check_structural=False)
        label = "dp-synthetic" + (f" ε={release_epsilon:g}" if release_epsilon else "")
        published = [
            ReleasedTable(
                spec=lv.spec,
                values=lv.counts.astype(np.float64),
                method="dp-synthetic",
                epsilon=release_epsilon,
                label=label,
            )
            for g in rel
            for lv in g
        ]
        rows += _rows(originals, published, "dp-synthetic", release_epsilon)
    order = {f: i for i, f in enumerate(FAMILIES)}
    rows.sort(key=lambda r: (order[r.method], r.epsilon or 0.0))
    return Comparison(
        rows=tuple(rows),
        tables=tuple(o.spec.name for o in originals),
        descriptions={o.spec.name: o.spec.description for o in originals},
        epsilons=tuple(float(e) for e in epsilons),
        n=len(data),
        privacy=ledger.summary(),
        release_epsilon=release_epsilon,
        randomness=rng.describe(),
        options={
            "delta": delta,
            "neighbouring": neighbouring,
            "nonnegative": nonnegative,
            "cell_key_ptables": {k: vars(v) for k, v in PRESETS.items()},
        },
        seconds=time.perf_counter() - start,
    )


def comparison_budget(epsilons: Sequence[float], *, delta: float) -> tuple[float, float]:
    """The total (epsilon, delta) of a comparison's DP runs: the sum over its methods."""
    methods = _methods(epsilons, delta=delta, neighbouring="replace_one", nonnegative=True)
    dp = [(m, e) for m, e in methods if m.is_dp]  # the relation moves sensitivities, not budgets
    n_gauss = sum(1 for m, _ in dp if m.name == "gaussian")
    return math.fsum(e for _, e in dp if e is not None), min(delta * n_gauss, 0.999)

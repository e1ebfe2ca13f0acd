"""[wide] Generators on tables other than births, side by side: error, criteria, time, memory.

Three tables, each with a spec whose thresholds two real samples pass (wide-fine: see below):

* ``wide``: the generated 15-column census-like table (``configs/wide_census.yaml``),
  32,000 rows (seed 1); the reference row scores a second draw of 32,000 rows (seed 2)
  against it (what a perfect generator would score);
* ``wide-fine``: the same rows under ``configs/wide_census_fine.yaml``, finer bins (five
  columns of 32-42 bins and one of 25, 2.3e16 cells): the shape of a census table on
  which one Private-PGM fit took minutes (#60);
* ``randhie``: the RAND Health Insurance Experiment, a real 10-column table of 20,190
  rows that statsmodels ships (``configs/randhie.yaml``); the reference row scores two
  random halves of it against each other.

Each generator fits the whole table once (seeded; public data, so smartnoise's MST and
AIM may run too) at each generator epsilon, in its own child process with a time limit
so that ``ru_maxrss`` is its own peak memory; every criterion of the spec is computed
exactly between the table and the candidate. ``workload-gaussian`` is ``workload`` with
``noise: gaussian`` (one zCDP rho; in tree mode MST's accounting, in-house);
``-no-extra`` is it without the 6 pairs drawn where an interim model errs most (the
lever: ``extra_pairs``).

dpmm (MST, AIM) pins numpy 1.26.4 and pandas 2.1.0 (../shared/DEPENDENCIES.md), which
synthflow's environment cannot hold, so its rows run only with ``--dpmm-python PY``: a
Python of a separate environment holding dpmm (``python -m venv /tmp/dpmm &&
/tmp/dpmm/bin/pip install dpmm==0.1.9``). ``benchmarks/_dpmm_child.py`` fits there on the
table coded to synthflow's bins (dpmm's own binning off, the same public domain, delta
1e-9) and its candidate is scored here as every other row; its time and memory are the
dpmm process's own. dpmm's rows are raw generator output: no filter or projection.

Run (from the repository root)::

    python benchmarks/any_table.py                     # both tables, epsilon 1 and 4
    python benchmarks/any_table.py --tables randhie --epsilons 4 --only workload-gaussian
    python benchmarks/any_table.py --with-aim          # add smartnoise AIM (minutes)
    python benchmarks/any_table.py --tables wide-fine --epsilons 4 --with-aim \
        --dpmm-python /tmp/dpmm/bin/python            # the #60 table, every row
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _record import record  # benchmarks/ is on sys.path when a script runs

from synthflow.acceptance import exact_values
from synthflow.errors import InfeasibleConfigurationError
from synthflow.flow import run_flow
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.space import Configuration
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[1]
SPECS = {
    "wide": REPO / "configs" / "wide_census.yaml",
    "wide-fine": REPO / "configs" / "wide_census_fine.yaml",
    "randhie": REPO / "configs" / "randhie.yaml",
}
WORKLOAD = {"one_way_share": 0.1, "constrained_share": 0.05, "select_share": 0.05,
            "cell_power": 0.5}  # fmt: skip
SETTINGS: dict[str, tuple[str, dict[str, Any]]] = {
    "workload": ("workload", WORKLOAD),
    "workload-gaussian": ("workload", {**WORKLOAD, "noise": "gaussian", "delta": 1e-9}),
    "workload-gaussian-no-extra": (
        "workload",
        {**WORKLOAD, "noise": "gaussian", "delta": 1e-9, "extra_pairs": 0},
    ),
    "mst": ("mst", {"delta": 1e-9}),
    "aim": ("aim", {"delta": 1e-9, "rounds": 30, "max_model_size": 20.0}),
}
"""Row name -> (registered generator, hyperparameters)."""
DEFAULT = ("workload", "workload-gaussian", "workload-gaussian-no-extra", "mst")
DPMM = ("dpmm-mst", "dpmm-aim")
"""Rows fitted by dpmm in its own environment (``--dpmm-python``)."""


def _load(table: str) -> tuple[Any, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The spec, the table (cleaned), and the reference pair (two real samples)."""
    from synthflow.data import load_data  # noqa: PLC0415

    spec = load_spec(SPECS[table])
    with tempfile.TemporaryDirectory() as tmp:
        if table.startswith("wide"):
            from synthflow.public.wide import make_wide_table  # noqa: PLC0415

            frames = [make_wide_table(32_000, seed=s) for s in (1, 2)]
        else:
            from synthflow.public.randhie import randhie_frame  # noqa: PLC0415

            frames = [randhie_frame()]
        clean = []
        for i, f in enumerate(frames):
            path = Path(tmp) / f"{table}_{i}.csv"
            f.to_csv(path, index=False)
            clean.append(load_data(path, spec, public=True).frame)
    full = clean[0]
    if table.startswith("wide"):
        return spec, full, full, clean[1]
    order = np.random.default_rng(0).permutation(len(full))  # two random halves
    half = len(full) // 2
    a, b = (full.iloc[order[i * half : (i + 1) * half]].reset_index(drop=True) for i in (0, 1))
    return spec, full, a, b


def _run_dpmm(spec: Any, full: pd.DataFrame, model: str, epsilon: float,
              python: str) -> dict[str, Any]:  # fmt: skip
    """Row ``dpmm-<model>``: dpmm fits in its own environment; scored here."""
    tr = Transformer(spec, {c: "a" for c in spec.column_names})
    codes = tr.forward(full)
    with tempfile.TemporaryDirectory() as tmp:
        paths = [Path(tmp) / n for n in ("codes.csv", "domain.json", "out.csv")]
        codes.to_csv(paths[0], index=False)
        paths[1].write_text(json.dumps(dict(zip(tr.domain.names, tr.domain.sizes, strict=True))))
        child = Path(__file__).with_name("_dpmm_child.py")
        cmd = [python, str(child), *map(str, paths), model, str(epsilon), "0"]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
        if proc.returncode or not lines:
            raise RuntimeError(f"dpmm failed (rc {proc.returncode}): {proc.stderr[-400:]}")
        out = json.loads(lines[-1][len("RESULT ") :])
        candidate = pd.read_csv(paths[2]).astype(np.int16)
    out["exact"] = exact_values(spec, tr, codes, candidate)
    return out


def run_one(table: str, name: str, epsilon: float, dpmm_python: str | None = None
            ) -> dict[str, Any]:  # fmt: skip
    """One flow of row ``name`` on ``table`` at generator ``epsilon`` (in a child process)."""
    spec, full, a, b = _load(table)
    spec = dataclasses.replace(
        spec, privacy=dataclasses.replace(spec.privacy, generator_epsilon=epsilon)
    )
    letters = {c: "a" for c in spec.column_names}
    if name in DPMM:
        assert dpmm_python, "dpmm rows run only with --dpmm-python"
        return _run_dpmm(spec, full, name.removeprefix("dpmm-"), epsilon, dpmm_python)
    if name == "two-samples":
        tr = Transformer(spec, letters)
        t0 = time.perf_counter()
        exact = exact_values(spec, tr, tr.forward(a), tr.forward(b))
        return {"flow_s": time.perf_counter() - t0, "exact": exact}
    model, hp = SETTINGS[name]
    cfg = Configuration(
        model=model,
        hyperparameters_items=tuple(sorted(hp.items())),
        transformations_items=tuple(letters.items()),
        min_count=1,
    )
    ledger = Ledger(total_epsilon=spec.privacy.total_epsilon, total_delta=1e-6)
    t0 = time.perf_counter()
    try:
        result = run_flow(spec, cfg, full, ledger=ledger, rng=PrivacyRNG.from_seed(0),
                          public=True, show_progress=False)  # fmt: skip
    except InfeasibleConfigurationError as exc:
        return {"refused": str(exc), "flow_s": time.perf_counter() - t0}
    wall = time.perf_counter() - t0
    exact = exact_values(spec, result.transformer, result.original, result.candidate)
    return {"flow_s": wall, "exact": exact}


def main(argv: list[str] | None = None) -> int:
    # Long: one table, then one row per generator and budget, each in a child process.
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tables", default="wide,randhie",
                   help="comma-separated: wide, wide-fine, randhie")  # fmt: skip
    p.add_argument("--epsilons", default="1,4", help="generator epsilons, e.g. 1,4")
    p.add_argument("--only", default=None, help=f"rows, of {sorted(SETTINGS) + list(DPMM)}")
    p.add_argument("--with-aim", action="store_true", help="add smartnoise AIM (minutes)")
    p.add_argument("--dpmm-python", default=None, metavar="PY",
                   help="a Python whose environment holds dpmm: adds its MST and AIM")  # fmt: skip
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    p.add_argument("--child", nargs=3, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        table, name, eps = args.child
        out = run_one(table, name, float(eps), args.dpmm_python)
        out.setdefault("peak_rss_mib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        print("RESULT " + json.dumps(out), flush=True)
        return 0
    names = args.only.split(",") if args.only else [*DEFAULT, *(["aim"] * args.with_aim)]
    if args.dpmm_python and not args.only:
        names += list(DPMM)
    if any(n in DPMM for n in names) and not args.dpmm_python:
        p.error("dpmm rows need --dpmm-python PY (see this script's docstring)")
    for table in args.tables.split(","):
        spec = load_spec(SPECS[table])
        marg = next(c.name for c in spec.criteria if c.kind == "marginals")
        print(f"\n== {table}: {len(spec.columns)} columns; thresholds: "
              + ", ".join(f"{c.name} {c.threshold:g}" for c in spec.criteria))  # fmt: skip
        print(f"{'generator':<18} {'eps':>4} {'worst 2-way':>11} {'passed':>7} "
              f"{'fit s':>7} {'peak MiB':>8}  failed")  # fmt: skip
        for eps in [float(e) for e in args.epsilons.split(",")]:
            for name in ["two-samples", *names]:
                if name == "two-samples" and eps != float(args.epsilons.split(",")[0]):
                    continue
                cmd = [sys.executable, __file__, "--child", table, name, str(eps)]
                cmd += ["--dpmm-python", args.dpmm_python] if args.dpmm_python else []
                try:
                    proc = subprocess.run(cmd, capture_output=True, text=True, check=False,
                                          timeout=args.timeout)  # fmt: skip
                except subprocess.TimeoutExpired:
                    print(f"{name:<18} {eps:>4g} timed out after {args.timeout:.0f} s")
                    continue
                lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
                if proc.returncode or not lines:
                    print(f"{name:<18} {eps:>4g} failed (rc {proc.returncode}): "
                          f"{proc.stderr[-400:]}")  # fmt: skip
                    continue
                r = json.loads(lines[-1][len("RESULT ") :])
                if "refused" in r:
                    print(f"{name:<18} {eps:>4g} refused: {r['refused'][:120]}")
                    continue
                failed = [c.name for c in spec.criteria if r["exact"][c.name] >= c.threshold]
                passed = f"{len(spec.criteria) - len(failed)}/{len(spec.criteria)}"
                shown = "-" if name == "two-samples" else f"{eps:g}"
                print(f"{name:<18} {shown:>4} {r['exact'][marg]:>11.4f} {passed:>7} "
                      f"{r['flow_s']:>7.1f} {r['peak_rss_mib']:>8.0f}  "
                      f"{', '.join(failed) or '-'}", flush=True)  # fmt: skip
                record(
                    f"{table}: {name}" + ("" if name == "two-samples" else f" at eps_gen {eps:g}"),
                    f"worst 2-way {r['exact'][marg]:.4f}, {passed} criteria, "
                    f"{r['flow_s']:.1f} s, {r['peak_rss_mib']:.0f} MiB",
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

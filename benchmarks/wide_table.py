"""Every registered generator on a wide table (15 columns, ~10^16 cells): runs or refuses.

The table is :mod:`synthflow.public.wide` (32,000 rows, seed 1; a second draw, seed 2,
is the "two samples" reference row: what a perfect generator would score) under
``configs/wide_census.yaml``. Each generator runs one flow (fit, sample and filter,
projection with min_count 1) in its own child process with a time limit (600 s: the
issue's 10 minutes on 2 cores), so that ``ru_maxrss`` is its own peak memory. A
generator that refuses must do so *before* any charge: the ``spent`` column shows the
ledger after the refusal. Every criterion of the spec is computed exactly on the
candidate (``max_order: 2`` marginals, the regression on its four features, ...).

Run (from the repository root)::

    python benchmarks/wide_table.py                # every generator but the GANs
    python benchmarks/wide_table.py --only workload,workload-gaussian --rows 8000
    python benchmarks/wide_table.py --fit-twice    # two workload fits in one process
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
from _record import record  # benchmarks/ is on sys.path when a script runs

from synthflow.acceptance import exact_values
from synthflow.errors import InfeasibleConfigurationError
from synthflow.flow import run_flow
from synthflow.generators import REGISTRY
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.public.wide import make_wide_table
from synthflow.space import Configuration
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "configs" / "wide_census.yaml"
GANS = ("dpctgan", "patectgan")
MODEL = {"workload-gaussian": "workload"}
"""Rows that run a registered generator with other settings."""
SETTINGS: dict[str, dict[str, Any]] = {
    "workload": {
        "one_way_share": 0.1,
        "constrained_share": 0.05,
        "select_share": 0.05,
        "cell_power": 0.5,
    },
    "workload-gaussian": {  # MST's accounting in-house: one rho, the tree selection in it
        "one_way_share": 0.1,
        "constrained_share": 0.05,
        "select_share": 0.05,
        "cell_power": 0.5,
        "noise": "gaussian",
        "delta": 1e-9,
    },
    "privbayes": {"flavor": "degree", "epsilon_split": 0.1, "degree": 1},
    "mwem": {"num_query": 512, "num_iterations": 100},
    "mst": {"delta": 1e-9},
    "aim": {"delta": 1e-9, "rounds": 30, "max_model_size": 20.0},
    "dpctgan": {"delta": 1e-9, "epochs": 2, "batch_size": 500},
    "patectgan": {"delta": 1e-9, "epochs": 2, "batch_size": 500},
}


def _raw(rows: int, seed: int) -> pd.DataFrame:
    from synthflow.data import load_data  # noqa: PLC0415

    spec = load_spec(SPEC)
    path = Path(f"/tmp/synthflow_wide_{rows}_{seed}.csv")
    if not path.exists():
        make_wide_table(rows, seed=seed).to_csv(path, index=False)
    return load_data(path, spec, public=True).frame


def run_one(name: str, rows: int) -> dict[str, Any]:
    """One flow of ``name`` on the wide table, measured (in a child process)."""
    spec = load_spec(SPEC)
    raw = _raw(rows, 1)
    letters = {c: "a" for c in spec.column_names}
    ledger = Ledger(total_epsilon=spec.privacy.total_epsilon, total_delta=1e-6)
    if name == "two-samples":
        tr = Transformer(spec, letters)
        t0 = time.perf_counter()
        exact = exact_values(spec, tr, tr.forward(raw), tr.forward(_raw(rows, 2)))
        return {"flow_s": time.perf_counter() - t0, "spent": 0.0, "exact": exact}
    cfg = Configuration(
        model=MODEL.get(name, name),
        hyperparameters_items=tuple(sorted(SETTINGS[name].items())),
        transformations_items=tuple(letters.items()),
        min_count=1,
    )
    t0 = time.perf_counter()
    try:
        result = run_flow(
            spec, cfg, raw, ledger=ledger, rng=PrivacyRNG.from_seed(0), public=True,
            show_progress=False,
        )  # fmt: skip
    except InfeasibleConfigurationError as exc:
        return {"refused": str(exc), "flow_s": time.perf_counter() - t0,
                "spent": ledger.spent_epsilon}  # fmt: skip
    wall = time.perf_counter() - t0
    exact = exact_values(spec, result.transformer, result.original, result.candidate)
    return {"flow_s": wall, "spent": ledger.spent_epsilon, "exact": exact}


def fit_twice(rows: int) -> None:
    """Two consecutive workload fits in one process (seeds 0 and 1): first and second fit.

    Through mbi's jax path the second fit reused the first's compiled mirror-descent step
    when its model had the same structure (26.7 s / 7.4 s); the wide table's model now
    goes to the numpy junction-tree estimator, which compiles nothing, so both fits take
    the same time. The tree mode's DP-selected pairs can differ between the two.
    """
    from synthflow.generators import make_generator  # noqa: PLC0415

    spec = load_spec(SPEC)
    tr = Transformer(spec, {c: "a" for c in spec.column_names})
    data = tr.forward(_raw(rows, 1))
    trees, walls, cpus = [], [], []
    for label, seed in (("first", 0), ("second", 1)):
        gen = make_generator("workload", SETTINGS["workload"], epsilon=3.0, transformer=tr)
        ledger = Ledger(total_epsilon=3.0)
        t0, c0 = time.perf_counter(), time.process_time()
        gen.fit(data, domain=tr.domain, ledger=ledger, rng=PrivacyRNG.from_seed(seed))
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        trees.append(getattr(gen, "tree_", ()))
        print(f"workload {label} fit ({rows} rows, seed {seed}): "
              f"{walls[-1]:.1f} s wall, {cpus[-1]:.1f} s CPU", flush=True)  # fmt: skip
    print(f"same structure (tree pairs): {trees[0] == trees[1]}")
    record(
        f"wide table, two workload fits in one process ({rows} rows): first / second fit",
        f"{walls[0]:.1f} s / {walls[1]:.1f} s wall ({cpus[0]:.1f} / {cpus[1]:.1f} s CPU), "
        f"same structure {trees[0] == trees[1]}",
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=32000)
    p.add_argument("--only", default=None, help="comma-separated generator names")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per generator")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--fit-twice", action="store_true", help="time two workload fits")
    args = p.parse_args(argv)
    if args.fit_twice:
        fit_twice(args.rows)
        return 0
    if args.child:
        out = run_one(args.child, args.rows)
        out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print("RESULT " + json.dumps(out), flush=True)
        return 0
    names = (
        args.only.split(",")
        if args.only
        else [n for n in sorted([*REGISTRY, *MODEL]) if n not in GANS]
    )
    spec = load_spec(SPEC)
    crit = [c.name for c in spec.criteria]
    print(f"{args.rows} rows, {len(spec.columns)} columns; thresholds: "
          + ", ".join(f"{c.name} {c.threshold:g}" for c in spec.criteria))  # fmt: skip
    print(f"{'generator':<18} {'flow s':>7} {'peak MiB':>8} {'spent':>6}  " + "  ".join(crit))
    for name in ["two-samples", *names]:
        cmd = [sys.executable, __file__, "--child", name, "--rows", str(args.rows)]
        try:
            proc = subprocess.run(
                cmd, capture_output=True, text=True, check=False, timeout=args.timeout
            )
        except subprocess.TimeoutExpired:
            print(f"{name:<18} timed out after {args.timeout:.0f} s", flush=True)
            continue
        lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
        if proc.returncode or not lines:
            print(f"{name:<18} failed (rc {proc.returncode}): {proc.stderr[-600:]}", flush=True)
            continue
        r = json.loads(lines[-1][len("RESULT ") :])
        head = f"{name:<18} {r['flow_s']:>7.1f} {r['peak_rss_mib']:>8.0f} {r['spent']:>6.2f}  "
        if "refused" in r:
            print(head + "refused before any charge: " + r["refused"][:160], flush=True)
        else:
            print(head + "  ".join(f"{r['exact'][c]:.4g}" for c in crit), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Every registered generator at epsilon 4 on the public NVSS sample: time, memory, quality.

For each generator one flow (:func:`synthflow.flow.run_flow`: fit, sample and filter,
min_count projection) runs on the release binning (``mother_age`` alternative b, the
others a) with a seeded :class:`~synthflow.privacy.rng.PrivacyRNG`; the candidate's *exact*
``marginal_max_abs_error`` and ``faithfulness_unmatched`` come from
:func:`synthflow.acceptance.exact_values`.

Each generator runs in its own child process, so that ``ru_maxrss`` (peak resident
memory of the process, data loading included) belongs to that generator alone; the
"base MiB" column is the resident memory after loading and binning the data, before the
flow. ``--tracemalloc`` adds the Python-heap peak of the flow (numpy included, torch's
allocator not), at the cost of slowing pure-Python code down.

Settings (SPEC sec. 9 grid points, see ``SETTINGS``):

* workload: one_way_share 0.2, constrained_share 0.4 (3000 mirror-descent iterations).
  ``workload_mbi`` (only with ``--only``) is the same fit through the old estimation
  path, mbi 1.1.0's jax ``mirror_descent`` (compiled afresh in each fit), for a cold-fit
  comparison with the numpy estimator (``synthflow/generators/_pgm_dense.py``).
* PrivBayes: theta flavor, theta 16, epsilon_split 0.25.
* MWEM: num_query 1024, num_iterations 1000, num_inner_updates 25.
* PEP: num_query 4096, num_iterations 100, num_inner_updates 25, marginal 2 (its best
  grid point at 10K and 160K rows among those tried; 1000 rounds spread epsilon thin).
* MST: delta 1e-9.
* AIM: delta 1e-9, rounds 48 and max_model_size 20 (reduced from smartnoise's defaults,
  96 rounds and 80 MB, which take about 275 s and 3 GB at 160K rows on 2 cores; the
  reduced point is in the ``aim`` grid of ``configs/births.yaml``). ``--aim-defaults``
  runs the defaults instead.
* DPCTGAN / PATECTGAN (when registered and selected with ``--only``): a few epochs, see
  ``SETTINGS``; they are far too slow on CPU for 300 epochs.

Run (from the repository root; reads ../shared/public_data)::

    python benchmarks/generators.py                       # every non-GAN generator, 160K rows
    python benchmarks/generators.py --rows 10000 --only mst,aim
    python benchmarks/generators.py --only workload,workload_mbi   # cold fit: new vs old
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from _record import record  # benchmarks/ is on sys.path when a script runs

from synthflow.acceptance import exact_values
from synthflow.data import load_data
from synthflow.flow import run_flow
from synthflow.generators import REGISTRY
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.space import Configuration

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "public_data"
DEFAULT_DATA = DATA / "nvss2019_singleton_160k.csv.gz"
EPSILON = 4.0
MIN_COUNT = 3
GANS = ("dpctgan", "patectgan")

SETTINGS: dict[str, dict[str, Any]] = {
    "workload": {"one_way_share": 0.2, "constrained_share": 0.4},
    "privbayes": {"flavor": "theta", "epsilon_split": 0.25, "theta": 16},
    "mwem": {"num_query": 1024, "num_iterations": 1000, "num_inner_updates": 25},
    "pep": {"num_query": 4096, "num_iterations": 100, "num_inner_updates": 25, "marginal": 2},
    "mst": {"delta": 1e-9},
    "aim": {"delta": 1e-9, "rounds": 48, "max_model_size": 20.0},
    "dpctgan": {"delta": 1e-9, "epochs": 2, "batch_size": 500},
    "patectgan": {"delta": 1e-9, "epochs": 2, "batch_size": 500},
}
AIM_DEFAULTS = {"delta": 1e-9}
OLD_PATHS = {"workload_mbi": "workload"}
"""Benchmark-only names: a generator run through its former estimation path."""


def _rss_mib() -> float:
    """Peak resident memory of this process (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_one(name: str, data: Path, rows: int | None, *, trace: bool, aim_defaults: bool) -> dict:
    """Run one flow of ``name`` in this process and measure it."""

    label = name
    if name in OLD_PATHS:  # the former estimation path: mbi's mirror descent for every model
        import synthflow.generators._pgm as pgm  # noqa: PLC0415

        pgm.estimator = lambda *_: "mbi"  # type: ignore[assignment]
        name = OLD_PATHS[name]
    spec = load_spec(REPO / "configs" / "births.yaml")
    raw = load_data(data, spec, public=True).frame
    if rows is not None and rows < len(raw):
        raw = raw.sample(n=rows, random_state=0).reset_index(drop=True)
    hp = AIM_DEFAULTS if name == "aim" and aim_defaults else SETTINGS[name]
    letters = {c: "a" for c in spec.column_names} | {"mother_age": "b"}
    cfg = Configuration(
        model=name,
        hyperparameters_items=tuple(sorted(hp.items())),
        transformations_items=tuple(letters.items()),
        min_count=MIN_COUNT,
    )
    base = _rss_mib()
    ledger = Ledger(total_epsilon=spec.privacy.total_epsilon, total_delta=1e-6)
    if trace:
        tracemalloc.start()
    t0 = time.perf_counter()
    result = run_flow(
        spec,
        cfg,
        raw,
        ledger=ledger,
        rng=PrivacyRNG.from_seed(0),
        public=True,
        show_progress=False,
    )
    wall = time.perf_counter() - t0
    heap = tracemalloc.get_traced_memory()[1] / 2**20 if trace else float("nan")
    if trace:
        tracemalloc.stop()
    exact = exact_values(spec, result.transformer, result.original, result.candidate)
    return {
        "generator": label,
        "settings": hp,
        "rows": len(raw),
        "fit_s": result.timings["fit_s"],
        "sample_s": result.timings["sample_filter_s"],
        "flow_s": wall,
        "base_mib": base,
        "peak_rss_mib": _rss_mib(),
        "heap_peak_mib": heap,
        "spent_epsilon": ledger.spent_epsilon,
        "spent_delta": ledger.spent_delta,
        "marginal_max_abs_error": exact["marginal_max_abs_error"],
        "faithfulness_unmatched": exact["faithfulness_unmatched"],
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--rows", type=int, default=None, help="subsample this many rows")
    p.add_argument("--only", default=None, help="comma-separated generator names")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per generator")
    p.add_argument("--tracemalloc", action="store_true", help="also trace the Python heap")
    p.add_argument("--aim-defaults", action="store_true", help="AIM with smartnoise defaults")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        out = run_one(
            args.child, args.data, args.rows, trace=args.tracemalloc, aim_defaults=args.aim_defaults
        )
        print("RESULT " + json.dumps(out), flush=True)
        return 0
    names = args.only.split(",") if args.only else [n for n in sorted(REGISTRY) if n not in GANS]
    unknown = sorted(set(names) - set(SETTINGS) - set(OLD_PATHS))
    if unknown:
        p.error(f"unknown generators {unknown}; known: {sorted(SETTINGS)}")
    header = (
        f"{'generator':<12} {'rows':>7} {'fit s':>8} {'sample s':>8} {'flow s':>8} "
        f"{'base MiB':>8} {'peak MiB':>8} {'heap MiB':>8} {'marg err':>9} {'unmatched':>9}"
    )
    print(header, flush=True)
    for name in names:
        cmd = [sys.executable, __file__, "--child", name, "--data", str(args.data)]
        cmd += ["--rows", str(args.rows)] if args.rows else []
        cmd += ["--tracemalloc"] if args.tracemalloc else []
        cmd += ["--aim-defaults"] if args.aim_defaults else []
        try:
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                check=False,
                timeout=args.timeout,
                env=dict(os.environ),
            )
        except subprocess.TimeoutExpired:
            print(f"{name:<10} timed out after {args.timeout:.0f} s", flush=True)
            continue
        lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
        if proc.returncode or not lines:
            print(f"{name:<10} failed (rc {proc.returncode}): {proc.stderr[-600:]}", flush=True)
            continue
        r = json.loads(lines[-1][len("RESULT ") :])
        print(
            f"{name:<12} {r['rows']:>7} {r['fit_s']:>8.2f} {r['sample_s']:>8.2f} "
            f"{r['flow_s']:>8.1f} {r['base_mib']:>8.0f} {r['peak_rss_mib']:>8.0f} "
            f"{r['heap_peak_mib']:>8.0f} {r['marginal_max_abs_error']:>9.4f} "
            f"{r['faithfulness_unmatched']:>9.4f}   {json.dumps(r['settings'])}",
            flush=True,
        )
        record(
            f"generator {name} at {r['rows']} rows, eps 4: max marginal error, flow time",
            f"{r['marginal_max_abs_error']:.4f}, {r['flow_s']:.1f} s, "
            f"peak {r['peak_rss_mib']:.0f} MiB",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

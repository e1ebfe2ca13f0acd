"""Sweep workers' heap padding (glibc ``M_TOP_PAD``; :mod:`synthflow.sweep.workers.forkserver`).

Usage: ``python benchmarks/heap_pad.py [--runs 8] [--pairs 2]``.

Each measurement is a fresh process that runs ``--runs`` PrivBayes flows with the
acceptance criteria on the NVSS 160K sample (one warm-up run first, untimed), with and
without the padding, alternating. Printed per process: the runs' seconds, user and
system CPU, minor page faults and peak memory (the child's own resource usage).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _record import record  # benchmarks/ is on sys.path when a script runs

REPO = Path(__file__).resolve().parents[1]
NVSS = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_160k.csv.gz"

CHILD = """
import sys, time
if sys.argv[1] == "pad":
    from synthflow.sweep.workers.forkserver import pad_heap
    assert pad_heap()
from synthflow.loader import load_spec
from synthflow.data import load_data
from synthflow.sweep.workers.runs import run_one
from synthflow.sweep.job import run_seed, select_configurations
from synthflow.sweep.evaluation import load_evaluator
spec = load_spec(sys.argv[2])
configs = select_configurations(spec, models=["privbayes"], sample=int(sys.argv[4]), seed=1)
frame = load_data(sys.argv[3], spec, public=True).frame
evaluator = load_evaluator(None)
run_one(spec, frame, configuration=configs[0], repeat=0, seed=1, evaluator=evaluator)
t0 = time.perf_counter()
for c in configs:
    run_one(spec, frame, configuration=c, repeat=0, seed=run_seed(1, c.id, 0), evaluator=evaluator)
print(time.perf_counter() - t0)
"""


def _child(mode: str, runs: int) -> tuple[float, float, float, int, float]:
    """Seconds of the runs, user and system CPU, minor faults, peak MB of one process."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    cmd = [sys.executable, "-c", CHILD, mode, str(REPO / "configs" / "births.yaml"),
           str(NVSS), str(runs)]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the {mode} child failed")
    peak = usage.ru_maxrss / 1024
    return float(out.strip()), usage.ru_utime, usage.ru_stime, usage.ru_minflt, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args()
    results: dict[str, list[tuple[float, float, float, int, float]]] = {"default": [], "pad": []}
    for _ in range(args.pairs):
        for mode in ("default", "pad"):
            r = _child(mode, args.runs)
            results[mode].append(r)
            print(f"{mode:8s} {args.runs} runs {r[0]:5.2f} s  user {r[1]:5.2f} s  sys {r[2]:4.2f} s"
                  f"  minor faults {r[3]:8,d}  peak {r[4]:5.0f} MB")  # fmt: skip
    med = {m: [statistics.median(x[k] for x in v) for k in range(5)] for m, v in results.items()}
    d, p = med["default"], med["pad"]
    record(
        f"heap padding (M_TOP_PAD 256 MiB), {args.runs} PrivBayes runs at 160K in one process",
        f"{d[0]:.2f} -> {p[0]:.2f} s, minor faults {d[3]:,.0f} -> {p[3]:,.0f}, "
        f"peak {d[4]:.0f} -> {p[4]:.0f} MB (medians of {args.pairs})",
    )


if __name__ == "__main__":
    main()

"""Benchmark: the eight exact criteria between two 160K-row tables (SPEC sec. 5-6).

Targets (issue 3): all eight exact criteria under 5 s and 1 GB on 2 cores;
faithfulness alone under 0.5 s. Reads the public NVSS 160K sample from
../shared/public_data/ (beside the repository); the two tables are bootstrap samples of
160,000 rows each from the cleaned sample.

Run: ``python benchmarks/evaluate.py [--rows 160000] [--config ID]``.
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc
from pathlib import Path

import numpy as np
from _record import record  # benchmarks/ is on sys.path when a script runs

from synthflow.acceptance import evaluate
from synthflow.criteria._common import code_matrix
from synthflow.criteria.faithfulness import maximum_matching
from synthflow.data import load_data
from synthflow.loader import load_spec
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_160k.csv.gz"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=160_000)
    parser.add_argument("--letters", default="mother_age=b,parity=a,gestation_week=a")
    args = parser.parse_args()
    spec = load_spec(REPO / "configs" / "births.yaml")
    letters = dict(kv.split("=") for kv in args.letters.split(",") if kv)
    transformer = Transformer(spec, letters)
    codes = transformer.forward(load_data(DATA, spec, public=True).frame)
    rng = np.random.default_rng(0)
    original = codes.iloc[rng.integers(0, len(codes), args.rows)].reset_index(drop=True)
    candidate = codes.iloc[rng.integers(0, len(codes), args.rows)].reset_index(drop=True)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"tables: 2 x {args.rows} rows, letters {letters or 'all a'}; rss before {base_rss:.0f} MB"
    )

    evaluate(spec, transformer, original, candidate, exact=True)  # warm-up (imports, caches)
    tracemalloc.start()
    t0 = time.perf_counter()
    report = evaluate(spec, transformer, original, candidate, exact=True)
    total = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for c in report.criteria:
        print(f"  {c.name:32s} {c.value:12.6g}  threshold {c.threshold:g}  passed {c.passed}")
    print(
        f"all eight exact criteria: {total:.3f} s, peak traced {peak / 2**20:.0f} MB, "
        f"process max RSS {rss:.0f} MB"
    )

    rule = spec.criterion("faithfulness_unmatched").match
    assert rule is not None
    t_mat = code_matrix(original, transformer, what="original")
    r_mat = code_matrix(candidate, transformer, what="candidate")
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        res = maximum_matching(t_mat, r_mat, transformer, rule)
        times.append(time.perf_counter() - t0)
    print(
        f"faithfulness alone: {min(times):.3f} s (best of 5, median {np.median(times):.3f} s), "
        f"matching size {res.size}"
    )
    record("faithfulness at 160K (median of 5)", f"{np.median(times):.3f} s")
    record("all eight exact criteria at 160K", f"{total:.2f} s, {rss:.0f} MB process")


if __name__ == "__main__":
    main()

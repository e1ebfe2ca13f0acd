"""Sweep throughput: runs per minute with 1 and 2 local workers (PrivBayes on 160K rows).

Usage: ``python benchmarks/sweep.py [--data FILE] [--runs-per-worker K] [--flow-only]``.

Each measurement is a fresh ``run_sweep`` into a new store on local worker processes
(forked from the fork server, which this process starts once, untimed); worker start-up
is timed separately and subtracted, so the figure is steady-state throughput.
``--flow-only`` measures flows without the acceptance criteria. What a user waits for,
start-up included, is ``benchmarks/cli.py --only sweep``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from _record import record  # benchmarks/ is on sys.path when a script runs

from synthflow.config import ReleaseSpec
from synthflow.data import load_data
from synthflow.flow import FlowResult
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.sweep.evaluation import AcceptanceEvaluator, Evaluator, RunEvaluation
from synthflow.sweep.job import run_sweep
from synthflow.sweep.workers.runs import LocalWorkers

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_160k.csv.gz"


class FlowOnly:
    """No criteria: measures the flows alone."""

    def __call__(
        self, spec: ReleaseSpec, result: FlowResult, *, rng: PrivacyRNG, ledger: Ledger
    ) -> RunEvaluation:
        return RunEvaluation(criteria=())


def _startup(workers: int, spec: ReleaseSpec, data: str, evaluator: Evaluator) -> float:
    """Seconds from starting ``workers`` local processes to each having answered once."""
    frame = load_data(data, spec, public=True).frame
    t0 = time.perf_counter()
    pool = LocalWorkers(workers, spec, frame, evaluator)
    try:
        for future in [pool.call(time.sleep, 0.05) for _ in range(workers)]:
            future.result()
    finally:
        pool.close()
    return time.perf_counter() - t0 - 0.05


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--runs-per-worker", type=int, default=8)
    parser.add_argument("--flow-only", action="store_true")
    args = parser.parse_args()
    spec = load_spec(REPO / "configs" / "births.yaml")
    evaluator: Evaluator = FlowOnly() if args.flow_only else AcceptanceEvaluator()
    results = {}
    runs = args.runs_per_worker * 2  # the same configurations for 1 and 2 workers
    _startup(1, spec, args.data, evaluator)  # the fork server's own start, untimed
    for workers in (1, 2):
        startup = _startup(workers, spec, args.data, evaluator)
        with tempfile.TemporaryDirectory() as tmp:
            summary = run_sweep(
                spec,
                args.data,
                Path(tmp) / "b.db",
                repeats=1,
                models=["privbayes"],
                sample=runs,
                seed=1,
                workers=workers,
                evaluator=evaluator,
                show_progress=False,
            )
        busy = max(summary.seconds - startup, 1e-9)
        results[workers] = summary.runs_new / busy * 60
        print(
            f"{workers} worker(s): {summary.runs_new} runs in {summary.seconds:.1f} s "
            f"(start-up {startup:.1f} s): {results[workers]:.1f} runs/min"
        )
    print(
        json.dumps(
            {
                "runs_per_min_1": round(results[1], 2),
                "runs_per_min_2": round(results[2], 2),
                "speedup": round(results[2] / results[1], 2),
                "evaluation": "none" if args.flow_only else "acceptance",
            }
        )
    )
    what = "flows only" if args.flow_only else "flows + criteria"
    record(
        f"sweep throughput in one process, PrivBayes at 160K ({what}): 1 / 2 workers",
        f"{results[1]:.1f} / {results[2]:.1f} runs/min ({results[2] / results[1]:.2f}x)",
    )


if __name__ == "__main__":
    main()

"""Is ``synthflow plan`` calibrated? Predicted vs observed DP pass rates on fresh runs.

Takes a plan directory (``plan.json`` + ``spec.yaml``, made from a public sweep) and,
for every configuration the plan predicted at its generator budget, runs ``--flows``
*fresh* flows (seeds the sweep never used) with the planned spec, and evaluates each
``--evals`` times with DP noise exactly as ``release`` would (a fresh
functional-mechanism fit per evaluation; for a once-per-release plan that fit is
standardised by the public bounds, as ``release --plan`` does). It prints, per
configuration, the plan's predicted per-attempt pass probability next to the observed
share of passing evaluations, with a 95% interval from the spread between flows (the
evaluations of one flow share its candidate, so they are not independent), and
whether the two are within +-10 points.

Run (from the repository root; minutes per workload flow on 2 cores)::

    NVSS=../shared/public_data/nvss2019_singleton_160k.csv.gz
    synthflow sweep configs/births.yaml --data $NVSS --public --repeats 10 --store sweep.db \\
        --models workload --generator-epsilon 2,3,4
    synthflow plan configs/births.yaml --store sweep.db --data $NVSS --public --out plan
    python benchmarks/plan_calibration.py --plan plan --flows 12 --evals 6
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from _record import record  # benchmarks/ is on sys.path when a script runs

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_160k.csv.gz"


def _flow(args: tuple[str, str, str, int, int, bool]) -> tuple[str, int, int, float]:
    """One fresh flow and ``evals`` DP evaluations; returns (config, passes, evals, s)."""
    spec_path, data, config_id, seed, evals, fit_once = args
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from synthflow.acceptance import evaluate, fit_dp_regression  # noqa: PLC0415
    from synthflow.data import load_data  # noqa: PLC0415
    from synthflow.flow import run_flow  # noqa: PLC0415
    from synthflow.loader import load_spec  # noqa: PLC0415
    from synthflow.privacy.ledger import Ledger  # noqa: PLC0415
    from synthflow.privacy.rng import PrivacyRNG  # noqa: PLC0415
    from synthflow.space import find_configuration  # noqa: PLC0415

    t0 = time.perf_counter()
    spec = load_spec(spec_path)
    raw = load_data(data, spec, public=True).frame
    cfg = find_configuration(spec, config_id)
    rng = PrivacyRNG.from_seed(seed)
    big = Ledger(total_epsilon=1e9, total_delta=0.5)  # public data: a throw-away ledger
    result = run_flow(spec, cfg, raw, ledger=big, rng=rng, public=True, show_progress=False)
    passes = 0
    for _ in range(evals):
        fit = (
            fit_dp_regression(spec, result.transformer, result.original, ledger=big, rng=rng)
            if fit_once
            else None
        )
        rep = evaluate(
            spec,
            result.transformer,
            result.original,
            result.candidate,
            exact=False,
            ledger=big,
            rng=rng,
            released_once=fit,
        )
        passes += rep.passed
    return config_id, passes, evals, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plan", type=Path, required=True, help="directory written by plan")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the public data")
    ap.add_argument("--flows", type=int, default=12, help="fresh flows per configuration")
    ap.add_argument("--evals", type=int, default=6, help="DP evaluations per flow")
    ap.add_argument("--seed", type=int, default=1_000_003, help="base seed of the fresh runs")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    import statistics  # noqa: PLC0415

    plan: dict[str, Any] = json.loads((args.plan / "plan.json").read_text())
    spec_path = str(args.plan / "spec.yaml")
    fit_once = bool(plan["fit_once"])
    predicted: dict[str, float] = plan["predictions"]
    jobs = [
        (spec_path, str(args.data), cid, args.seed + 7919 * i + k, args.evals, fit_once)
        for i, cid in enumerate(sorted(predicted))
        for k in range(args.flows)
    ]
    print(
        f"plan: total epsilon {plan['total_epsilon']:.3f}, generator epsilon "
        f"{plan['generator_epsilon']:g}, fit {'once' if fit_once else 'per candidate'}; "
        f"{len(predicted)} configurations x {args.flows} fresh flows x {args.evals} "
        "DP evaluations",
        flush=True,
    )
    shares: dict[str, list[float]] = {cid: [] for cid in predicted}
    with ProcessPoolExecutor(args.workers) as pool:
        for cid, ok, n, sec in pool.map(_flow, jobs):
            shares[cid].append(ok / n)
            print(f"  {cid}: {ok}/{n} passed ({sec:.0f} s)", flush=True)
    print()
    print(
        f"{'configuration':<22} {'predicted':>9} {'observed':>9} {'95% CI':>15} "
        f"{'within 10 pts':>14}"
    )
    within = 0
    for cid in sorted(predicted):
        obs = statistics.fmean(shares[cid])
        half = 1.96 * statistics.stdev(shares[cid]) / len(shares[cid]) ** 0.5
        good = abs(obs - predicted[cid]) <= 0.10
        within += good
        print(
            f"{cid:<22} {predicted[cid]:9.3f} {obs:9.3f} "
            f"{f'[{obs - half:.2f}, {obs + half:.2f}]':>15} {'yes' if good else 'NO':>14}"
        )
    print(f"{within} of {len(predicted)} configurations within +-10 points of the prediction")
    record("plan calibration: configurations within 10 points", f"{within} of {len(predicted)}")


if __name__ == "__main__":
    main()

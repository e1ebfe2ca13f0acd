"""The ``workload`` generator against PrivBayes, MST and AIM: criteria and DP pass rates.

On the public NVSS 160K sample, with the release binning (``mother_age`` b, the others
a), each generator runs ``--runs`` flows (seeds 0..runs-1; fit, sample and filter,
min_count projection) at the spec's generator epsilon 4. For each flow the script
records the exact value of every acceptance criterion, and the share of ``--draws``
DP evaluations with the spec's own budgets (eps_eval 0.99, total 9.98) that pass all
criteria (each draw: fresh evaluation noise and a fresh functional-mechanism fit, as
in a release). It prints, per generator, the median of each criterion over the runs
and the mean DP pass rate, side by side.

Run (from the repository root; reads ../shared/public_data)::

    python benchmarks/workload.py                        # workload, privbayes, mst: 10 runs
    python benchmarks/workload.py --models aim --runs 3  # AIM takes minutes per fit

Settings: workload one_way_share 0.2, constrained_share 0.4 (the best point of a public
sweep); PrivBayes theta 16, epsilon_split 0.25 (the README's benchmark point); MST delta
1e-9; AIM 48 rounds, max model size 20 (the space's point). MST and AIM are calibrated
for replace-one neighbours (smaller effective budget than before the DP audit).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from _record import record  # benchmarks/ is on sys.path when a script runs

from synthflow.acceptance import evaluate, exact_values
from synthflow.data import load_data
from synthflow.flow import run_flow
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.space import Configuration

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_160k.csv.gz"
SETTINGS = {
    "workload": {"one_way_share": 0.2, "constrained_share": 0.4},
    "privbayes": {"flavor": "theta", "epsilon_split": 0.25, "theta": 16},
    "mst": {"delta": 1e-9},
    "aim": {"delta": 1e-9, "rounds": 48, "max_model_size": 20.0},
}
SHORT = {
    "marginal_max_abs_error": "marg",
    "one_way_max_ratio": "ratio",
    "cond_mean_error_parity": "cm_par",
    "cond_mean_error_birth_weight": "cm_bw",
    "cond_mean_error_gestation_week": "cm_gw",
    "regression_coef_error": "reg",
    "regression_tstr_mae_error": "tstr",
    "faithfulness_unmatched": "faith",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--models", default="workload,privbayes,mst")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--draws", type=int, default=20, help="DP evaluations per run")
    ap.add_argument("--min-count", type=int, default=2)
    args = ap.parse_args()
    spec = load_spec(REPO / "configs" / "births.yaml")
    raw = load_data(args.data, spec, public=True).frame
    letters = {c: "a" for c in spec.column_names} | {"mother_age": "b"}
    rows = []
    for model in args.models.split(","):
        cfg = Configuration(
            model=model,
            hyperparameters_items=tuple(sorted(SETTINGS[model].items())),
            transformations_items=tuple(letters.items()),
            min_count=args.min_count,
        )
        values: dict[str, list[float]] = {}
        passes, seconds = [], []
        for seed in range(args.runs):
            t0 = time.perf_counter()
            rng = PrivacyRNG.from_seed(seed)
            result = run_flow(
                spec,
                cfg,
                raw,
                ledger=Ledger(total_epsilon=10, total_delta=1e-6),
                rng=rng,
                public=True,
                show_progress=False,
            )
            seconds.append(time.perf_counter() - t0)
            exact = exact_values(spec, result.transformer, result.original, result.candidate)
            for k, v in exact.items():
                values.setdefault(k, []).append(v)
            ok = 0
            for _ in range(args.draws):
                rep = evaluate(
                    spec,
                    result.transformer,
                    result.original,
                    result.candidate,
                    exact=False,
                    ledger=Ledger(total_epsilon=spec.evaluation_epsilon + 1e-9),
                    rng=rng,
                )
                ok += rep.passed
            passes.append(ok / args.draws)
            print(
                f"  {model} seed {seed}: {seconds[-1]:.1f} s, DP pass {ok}/{args.draws}, "
                + " ".join(f"{SHORT[k]}={v:.4g}" for k, v in exact.items()),
                flush=True,
            )
        rows.append((model, values, statistics.fmean(passes), statistics.median(seconds)))
    names = list(SHORT)
    print()
    print(
        f"medians over {args.runs} runs, NVSS {len(raw)} rows, eps_gen 4, min_count "
        f"{args.min_count}; DP pass = mean share of {args.draws} DP evaluations passing"
    )
    head = f"{'generator':<10} " + " ".join(f"{SHORT[n]:>8}" for n in names)
    print(head + f" {'DP pass':>8} {'flow s':>7}")
    for model, values, p, sec in rows:
        cells = " ".join(f"{statistics.median(values[n]):8.4g}" for n in names)
        print(f"{model:<10} {cells} {p:8.2f} {sec:7.1f}")
        record(
            f"workload benchmark: {model} (medians of {args.runs} runs)",
            f"DP pass {p:.2f}, flow {sec:.1f} s, "
            + ", ".join(f"{SHORT[n]} {statistics.median(values[n]):.4g}" for n in names),
        )


if __name__ == "__main__":
    main()

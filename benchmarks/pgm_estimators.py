"""Private-PGM estimators side by side: dense joint, junction tree and mbi (jax), per model.

One ``workload`` flow (:func:`synthflow.flow.run_flow`, seeded, public data) per model and
estimator, with the estimator forced (``synthflow.generators._pgm.estimator``), so that
the only difference is how the same noisy measurements are fitted:

* **births**: the release binning on the 160K NVSS sample, every 2-way marginal measured
  (the junction tree is one node, the joint itself: 230,400 cells);
* **affairs**: Fair's survey (4,456 private rows, ``configs/affairs.yaml``), tree mode
  (a 2.2M-cell joint, a 60K-cell junction tree);
* **wide**: the simulated 15-column census table (32K rows, ``configs/wide_census.yaml``),
  tree mode (a joint of over 10^15 cells: the dense fit cannot hold it).

Each row prints the fit's wall time and the sampled candidate's largest 2-way marginal
error against the original (share of rows; the same model gives the same figure up to
sampling). The default choice (``estimator()``) is marked ``*``. Each fit runs in this
process in turn; the mbi rows include jax's compilation, which a fit pays afresh when its
structure (the tree's pairs) changes. Run from the repository root::

    python benchmarks/pgm_estimators.py               # all three models
    python benchmarks/pgm_estimators.py --models affairs --paths junction,dense
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
from pathlib import Path

import numpy as np
from _record import record  # benchmarks/ is on sys.path when a script runs

import synthflow.generators._pgm as pgm
from synthflow.data import load_data
from synthflow.flow import run_flow
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.public.affairs import write_affairs
from synthflow.public.wide import write_wide_table
from synthflow.space import Configuration

REPO = Path(__file__).resolve().parents[1]
NVSS = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_160k.csv.gz"
PATHS = ("dense", "junction", "mbi")
WORKLOAD = {"one_way_share": 0.1, "constrained_share": 0.1}


def _data(model: str, tmp: Path) -> tuple[str, Path, dict[str, str]]:
    """(spec name, data file, transformations) of a model."""
    if model == "births":
        return "births", NVSS, {"mother_age": "b"}
    if model == "affairs":
        write_affairs(str(tmp))
        return "affairs", tmp / "private.csv", {}
    path = tmp / "wide.csv"
    write_wide_table(str(path), 32_000, seed=1)
    return "wide_census", path, {}


def _max_pair_error(original: np.ndarray, candidate: np.ndarray) -> float:
    worst = 0.0
    for i, j in itertools.combinations(range(original.shape[1]), 2):
        a = np.unique(original[:, [i, j]], axis=0, return_counts=True)
        b = np.unique(candidate[:, [i, j]], axis=0, return_counts=True)
        ta = {tuple(k): v / len(original) for k, v in zip(*a, strict=True)}
        tb = {tuple(k): v / len(candidate) for k, v in zip(*b, strict=True)}
        worst = max(worst, *(abs(ta.get(k, 0) - tb.get(k, 0)) for k in ta.keys() | tb.keys()))
    return worst


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="births,affairs,wide")
    ap.add_argument("--paths", default=",".join(PATHS))
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    chosen = pgm.estimator
    print(f"{'model':8} {'estimator':9} {'fit s':>7} {'max 2-way error':>16}")
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            name, data, letters = _data(model, Path(tmp))
            spec = load_spec(REPO / "configs" / f"{name}.yaml")
            raw = load_data(data, spec, public=True).frame
            cfg = Configuration(
                model="workload",
                hyperparameters_items=tuple(sorted(WORKLOAD.items())),
                transformations_items=tuple(
                    ({c: "a" for c in spec.column_names} | letters).items()
                ),
                min_count=1,
            )
            for path in args.paths.split(","):
                if path == "dense" and model == "wide":
                    print(f"{model:8} {path:9} {'-':>7} {'-':>16}  (a joint of over 10^15 cells)")
                    continue
                default: list[str] = []

                def forced(*a: object, path: str = path, default: list[str] = default) -> str:
                    default.append(chosen(*a))  # type: ignore[arg-type]
                    return path

                pgm.estimator = forced  # type: ignore[assignment]
                ledger = Ledger(total_epsilon=spec.privacy.total_epsilon, total_delta=1e-6)
                result = run_flow(spec, cfg, raw, ledger=ledger, show_progress=False,
                                  rng=PrivacyRNG.from_seed(args.seed), public=True)  # fmt: skip
                fit = result.timings["fit_s"]
                err = _max_pair_error(result.original.to_numpy(), result.candidate.to_numpy())
                mark = "*" if default[-1] == path else " "
                print(f"{model:8} {path:8}{mark} {fit:7.1f} {err:16.4f}", flush=True)
                record(f"workload fit, {model}, {path} estimator", f"{fit:.1f} s")
    pgm.estimator = chosen


if __name__ == "__main__":
    main()

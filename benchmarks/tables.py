"""Benchmark: ``tables compare`` on the NVSS 160K sample for the three shipped tables.

Target (issue 7): the whole comparison (load and clean the data, tabulate, run every
method at every epsilon, measure, tabulate a DP synthetic release, draw the plots and
write the HTML report) in under 2 minutes on 2 cores. The DP synthetic release is made
first, untimed, by one PrivBayes flow (the release's transformations, degree 2) on the
same public data; pass ``--release DIR`` to use an existing one instead.

Run: ``python benchmarks/tables.py [--out report.html] [--release DIR]``.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from _record import record  # benchmarks/ is on sys.path when a script runs

from synthflow.data import load_data
from synthflow.jobs.run import run_configuration
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.space import match_configuration
from synthflow.tables import Microdata, compare, load_tables, read_release, write_report
from synthflow.tables.compare import DEFAULT_EPSILONS, comparison_budget

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_160k.csv.gz"
SPEC = REPO / "configs" / "births.yaml"
TABLES = REPO / "configs" / "tables_births.yaml"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=None, help="report path (default: a temporary file)")
    parser.add_argument("--release", default=None, help="existing release directory")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="synthflow-tables-bench-"))
    spec = load_spec(SPEC)
    release_dir = Path(args.release) if args.release else tmp / "release"
    if not args.release:
        t = time.perf_counter()
        cfg = match_configuration(
            spec,
            model="privbayes",
            hyperparameters={"flavor": "degree", "degree": 2, "epsilon_split": 0.25},
            transformations={"mother_age": "b"},
            min_count=2,
        )
        run_configuration(spec, cfg, DATA, release_dir, seed=7, public=True, show_progress=False)
        print(f"DP synthetic release ({cfg.id}) made in {time.perf_counter() - t:.1f} s (untimed)")

    start = time.perf_counter()
    loaded = load_data(DATA, spec, public=True)
    tables = load_tables(TABLES, spec)
    frame, release_eps = read_release(release_dir)
    t_load = time.perf_counter() - start
    result = compare(
        Microdata(loaded.frame, spec),
        tables,
        rng=PrivacyRNG.from_seed(1),
        release=Microdata(frame, spec, labelled=True),
        release_epsilon=release_eps,
        ledger=Ledger(*comparison_budget(DEFAULT_EPSILONS, delta=1e-6)),
    )
    t_compare = time.perf_counter() - start - t_load
    out = Path(args.out) if args.out else tmp / "report.html"
    write_report(result, out)
    total = time.perf_counter() - start
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{len(loaded.frame)} records, {len(result.tables)} table levels, "
        f"{len(result.rows)} published tables measured"
    )
    print(f"load + clean + read release: {t_load:.2f} s")
    print(f"every method x epsilon, measures: {t_compare:.2f} s")
    print(f"plots + HTML: {total - t_load - t_compare:.2f} s")
    print(f"total: {total:.1f} s (target < 120 s); peak RSS {rss:.0f} MB; report {out}")
    record("table comparison at 160K (every method, report)", f"{total:.1f} s, {rss:.0f} MB")


if __name__ == "__main__":
    main()

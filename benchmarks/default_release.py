"""The default release, as a steward runs it: ``synthflow release births``, 10 times.

Each selection is what ``synthflow release births --data FILE --ledger L --out R
--private-dir E`` does with no ``--candidates`` and no ``--plan``: the plan shipped for
``births`` (public_data/births.plan.json), a fresh dataset ledger, CSPRNG noise (the
file is treated as private), then ``synthflow audit``. It prints, per selection, whether
it released, the total epsilon and delta charged, the audit and the wall time; then how
many of the selections released and passed their audit, and the median time.

    python benchmarks/default_release.py                      # the embedded 167K-row file
    python benchmarks/default_release.py --data ../shared/public_data/nvss2019_singleton_160k.csv.gz
    python benchmarks/default_release.py --spec births-pure   # the pure-DP plan
    python benchmarks/default_release.py --data NVSS_160K --shifted 120000 --force
                                  # a population unlike the public one, at another n
    python benchmarks/default_release.py --draw 220000,7 --shifted 165000 --country
                                  # ... whose babies and mothers differ too

Neither file is the one the shipped plan was swept on (a seeded simulated draw).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _record import record  # benchmarks/ is on sys.path when a script runs

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default="births", help="a bundled spec with a shipped plan")
    ap.add_argument("--data", type=Path, default=None,
                    help="the file to release (default: the embedded 167K-row file)")  # fmt: skip
    ap.add_argument("--selections", type=int, default=10)
    ap.add_argument("--shifted", type=int, metavar="ROWS", default=None,
                    help="release on ROWS rows of --data reweighted to more high-parity, "
                    "older and preterm births (benchmarks/_shifted.py)")  # fmt: skip
    ap.add_argument("--draw", metavar="ROWS,SEED", default=None,
                    help="instead of --data: a seeded public draw simulated from the committed "
                    "NVSS calibration (what ship-plan sweeps, at another seed)")  # fmt: skip
    ap.add_argument("--country", action="store_true",
                    help="with --shifted: also lighter babies (-120 g, first births -200 g) "
                    "and mothers a year older, as another country's births "
                    "(benchmarks/_shifted.py COUNTRY)")  # fmt: skip
    ap.add_argument(
        "--force", action="store_true", help="release past the pre-flight (a plan for another n)"
    )
    args = ap.parse_args()
    if args.draw and args.data:
        ap.error("--draw simulates the data: give it or --data, not both")
    if args.country and not args.shifted:
        ap.error("--country shifts a reweighted population: give --shifted ROWS too")
    args.data = args.data or REPO / "public_data" / "nvss_like_2019.csv.gz"
    if args.draw:
        from _shifted import public_draw  # noqa: PLC0415

        rows, seed = (int(x) for x in args.draw.split(","))
        args.data = public_draw(Path(tempfile.mkdtemp()) / f"draw{seed}.csv.gz", rows, seed)
    if args.shifted:
        from _shifted import shifted_births  # noqa: PLC0415

        out = (
            Path(tempfile.mkdtemp()) / f"shifted_{args.shifted}_{args.data.name.split('.')[0]}.csv"
        )
        print(f"a shifted population of {args.shifted:,} rows of {args.data.name}:")
        args.data = shifted_births(args.data, out, rows=args.shifted, seed=1, country=args.country)
    exe = str(Path(sys.executable).with_name("synthflow"))
    released, seconds = 0, []
    head = ("selection", "outcome", "epsilon", "delta", "audit", "wall s")
    print("{:>9s} {:10s} {:>8s} {:>7s} {:6s} {:>7s}".format(*head))
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(1, args.selections + 1):
            work = Path(tmp) / str(k)
            work.mkdir()
            t0 = time.perf_counter()
            proc = subprocess.run(
                [exe, "release", args.spec, "--data", str(args.data), "--ledger",
                 str(work / "ledger.jsonl"), "--out", str(work / "release"), "--private-dir",
                 str(work / "enclave"), "--quiet", *(["--force"] * args.force)],
                capture_output=True, text=True, check=False,
            )  # fmt: skip
            seconds.append(time.perf_counter() - t0)
            if proc.returncode not in (0, 1):
                raise SystemExit(f"selection {k} failed:\n{proc.stderr[-2000:]}")
            lines = (work / "ledger.jsonl").read_text().splitlines()
            records = [json.loads(line) for line in lines if line.strip()]
            charges = [c for c in records if "what" in c and "epsilon" in c]
            eps = sum(c["epsilon"] for c in charges)
            delta = sum(c["delta"] for c in charges)
            audit = "-"
            if proc.returncode == 0:
                ok = subprocess.run(
                    [exe, "audit", str(work / "release")], capture_output=True, check=False
                ).returncode == 0  # fmt: skip
                audit = "passed" if ok else "FAILED"
                released += ok
            outcome = "released" if proc.returncode == 0 else "no release"
            print(f"{k:9d} {outcome:10s} {eps:8.4f} {delta:7.1g} {audit:6s} {seconds[-1]:7.1f}",
                  flush=True)  # fmt: skip
    median = statistics.median(seconds)
    print(f"\n{args.spec} on {args.data.name}: {released} of {args.selections} selections "
          f"released and passed their audit; median {median:.1f} s per selection")  # fmt: skip
    record(
        f"release {args.spec} (shipped plan) on {args.data.name}: released and audited",
        f"{released} of {args.selections}, median {median:.1f} s",
    )


if __name__ == "__main__":
    main()

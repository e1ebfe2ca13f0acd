"""The main job's wall time, next to what a user already waits for.

Each command runs in a fresh process (imports included), one after the other, on the
same machine: ``import pandas``, one PrivBayes ``synthflow run`` on the 160K NVSS sample,
``synthflow demo`` (the shipped plan of ``births``, then the release and its audit on
the embedded 167K-row file) and, with ``--screen``, the demo that remakes the plan.

Run: python benchmarks/demo.py [--screen]   (reads ../shared/public_data)
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _record import record  # benchmarks/ is on sys.path when a script runs

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_160k.csv.gz"
PRIVBAYES = "privbayes-a1076afd5b"  # theta 2, the release binning's neighbour (aaaaaa)


def timed(argv: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr[-2000:]}")
    return elapsed


def main() -> None:
    exe = str(Path(sys.executable).with_name("synthflow"))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows = [
            ("import pandas", [sys.executable, "-c", "import pandas"]),
            (
                "synthflow run (PrivBayes, 160K NVSS rows)",
                [
                    exe,
                    "run",
                    "births-2024",
                    "--data",
                    str(DATA),
                    "--public",
                    "--seed",
                    "1",
                    "--config",
                    PRIVBAYES,
                    "--out",
                    "pb",
                    "--quiet",
                ],
            ),
            ("synthflow demo (shipped plan)", [exe, "demo", "--out", "demo", "--quiet"]),
        ]
        if "--screen" in sys.argv[1:]:
            rows.append(
                ("synthflow demo --screen", [exe, "demo", "--screen", "--out", "ds", "--quiet"])
            )
        print(f"{'command':45s} {'wall s':>8s}")
        for label, argv in rows:
            seconds = timed(argv, work)
            print(f"{label:45s} {seconds:8.1f}", flush=True)
            record(f"wall time: {label}", f"{seconds:.1f} s")


if __name__ == "__main__":
    main()

"""What a user waits for at the command line, each figure as a ratio measured in one run.

- start-up: ``synthflow space configs/births.yaml --json F`` against
  ``python -c "import pandas"`` (goal: <= 2.5x);
- evaluate: ``synthflow evaluate --exact`` at 160K rows against reading the same two
  files with pandas in one process (goal: <= 3x);
- sweep: a 16-run PrivBayes sweep on 160K rows through the CLI on 1 and on 2 workers
  (goal: >= 1.7x faster on 2);
- run at 4M rows: ``synthflow run`` on a 4,000,000-row NVSS-like draw, wall time and
  peak memory of the process (goals: <= 15 s, <= 1.5 GB).

Every command is a fresh process, as a user runs it; times are medians of ``--repeat``
runs (the sweep: ``--repeat`` back-to-back pairs of 1 and 2 workers; the 4M run once).
Inputs are made first (untimed) in a temporary directory from the public NVSS 160K
sample beside the repository and the shipped calibration.

Usage: ``python benchmarks/cli.py [--only startup,evaluate,sweep,run4m] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _record import record  # benchmarks/ is on sys.path when a script runs

REPO = Path(__file__).resolve().parents[1]
NVSS = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_160k.csv.gz"
SPEC = REPO / "configs" / "births.yaml"
CALIBRATION = REPO / "public_data" / "nvss2019_calibration.yaml"
SYNTHFLOW = [sys.executable, "-m", "synthflow"]


def _timed(cmd: list[str], *, check: bool = True) -> tuple[float, float]:
    """Wall seconds and the peak RSS (MB) of one fresh process running ``cmd``."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own resource usage
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if check and proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    return wall, usage.ru_maxrss / 1024


def _median(cmd: list[str], repeat: int) -> float:
    _timed(cmd)  # warm the file cache and the bytecode
    return statistics.median(_timed(cmd)[0] for _ in range(repeat))


def _config(model: str = "privbayes") -> str:
    out = subprocess.run(
        [*SYNTHFLOW, "space", str(SPEC), "--model", model, "--json", "-"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return str(json.loads(out)[0]["id"])


def startup(tmp: Path, repeat: int) -> None:
    base = _median([sys.executable, "-c", "import pandas"], repeat)
    out = tmp / "space.json"
    cmd = [*SYNTHFLOW, "space", str(SPEC), "--json", str(out)]
    times = []
    for _ in range(repeat + 1):
        out.unlink(missing_ok=True)
        times.append(_timed(cmd)[0])
    space = statistics.median(times[1:])
    help_ = _median([*SYNTHFLOW, "--help"], repeat)
    print(f"import pandas            {base:6.2f} s")
    print(f"synthflow --help         {help_:6.2f} s")
    print(f"synthflow space --json   {space:6.2f} s  ({space / base:.2f}x import pandas)")
    record("CLI start-up: `space --json` / `import pandas`", f"{space / base:.2f}x ({space:.2f} s)")


def evaluate(tmp: Path, repeat: int) -> None:
    cfg = _config()
    run = tmp / "run160k"
    subprocess.run(
        [*SYNTHFLOW, "run", str(SPEC), "--data", str(NVSS), "--public", "--seed", "0",
         "--config", cfg, "--out", str(run), "-q"],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    cand = run / "candidate.csv"
    read = (
        "import pandas as pd\n"
        f"pd.read_csv({str(NVSS)!r}, low_memory=False)\npd.read_csv({str(cand)!r})"
    )
    base = _median([sys.executable, "-c", read], repeat)
    cmd = [*SYNTHFLOW, "evaluate", str(SPEC), "--data", str(NVSS), "--candidate", str(cand),
           "--config", cfg, "--exact", "--public"]  # fmt: skip
    # exit code 1 = criteria failed: a result, not an error
    ev = statistics.median(_timed(cmd, check=False)[0] for _ in range(repeat + 1))
    print(f"read both files (pandas) {base:6.2f} s")
    print(f"synthflow evaluate --exact at 160K {ev:6.2f} s  ({ev / base:.2f}x)")
    record("`evaluate --exact` at 160K / reading both files", f"{ev / base:.2f}x ({ev:.2f} s)")


def sweep(tmp: Path, repeat: int) -> None:
    """Pairs of sweeps, 1 then 2 workers, back to back.

    This machine's speed drifts by 10-20% within minutes (a shared host), so both sweeps
    of a pair see nearly the same machine: the headline is the median of the per-pair
    ratios, with the ratio of the medians and of the fastest runs beside it.
    """
    times: dict[int, list[float]] = {1: [], 2: []}
    for i in range(repeat):
        for workers in (1, 2):
            store = tmp / f"sweep{workers}-{i}.db"
            cmd = [*SYNTHFLOW, "sweep", str(SPEC), "--data", str(NVSS), "--public",
                   "--models", "privbayes", "--sample", "8", "--repeats", "2", "--seed", "1",
                   "--workers", str(workers), "--store", str(store), "-q"]  # fmt: skip
            times[workers].append(_timed(cmd)[0])
    one, two = statistics.median(times[1]), statistics.median(times[2])
    for workers, t in ((1, one), (2, two)):
        each = ", ".join(f"{x:.1f}" for x in times[workers])
        print(f"16-run PrivBayes sweep, {workers} worker(s): {t:6.1f} s "
              f"({16 * 60 / t:.1f} runs/min; runs {each} s)")  # fmt: skip
    pairs = statistics.median(a / b for a, b in zip(times[1], times[2], strict=True))
    best = min(times[1]) / min(times[2])
    print(f"speed-up on 2 workers: {pairs:.2f}x (median of {repeat} pairs); ratio of the "
          f"medians {one / two:.2f}x, of the fastest runs {best:.2f}x")  # fmt: skip
    record(
        "sweep through the CLI, 16 PrivBayes runs at 160K: 1 / 2 workers",
        f"{pairs:.2f}x (median of {repeat} pairs; medians {one:.1f} s / {two:.1f} s = "
        f"{one / two:.2f}x; fastest {min(times[1]):.1f} s / {min(times[2]):.1f} s = {best:.2f}x)",
    )


def run4m(tmp: Path) -> None:
    big = tmp / "nvss_like_4m.csv.gz"
    subprocess.run(
        [*SYNTHFLOW, "public-data", "simulate", "--calibration", str(CALIBRATION),
         "--rows", "4000000", "--seed", "4", "--out", str(big)],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    cfg = _config()
    cmd = [*SYNTHFLOW, "run", str(SPEC), "--data", str(big), "--public", "--seed", "0",
           "--config", cfg, "--out", str(tmp / "run4m"), "-q"]  # fmt: skip
    wall, rss = _timed(cmd)
    print(f"synthflow run at 4M rows: {wall:6.1f} s, peak {rss / 1024:.2f} GB")
    record("`run` at 4M rows (PrivBayes): wall time", f"{wall:.1f} s")
    record("`run` at 4M rows (PrivBayes): peak memory", f"{rss / 1024:.2f} GB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", default="startup,evaluate,sweep,run4m")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    wanted = set(args.only.split(","))
    print(f"{os.cpu_count()} cores; every command a fresh process")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if "startup" in wanted:
            startup(tmp, args.repeat)
        if "evaluate" in wanted:
            evaluate(tmp, args.repeat)
        if "sweep" in wanted:
            sweep(tmp, args.repeat)
        if "run4m" in wanted:
            run4m(tmp)


if __name__ == "__main__":
    main()

"""What the base install pulls in, before and after a change: package count and time.

Resolves ``pip install .`` (no extras) for the working tree and for an earlier commit
(a git worktree), each with ``--dry-run --ignore-installed --report``: the packages a
fresh machine would install. With ``--time`` it also installs each into a fresh venv
and times it (minutes; needs the package index).

    python benchmarks/install.py                       # against the commit before #47 [ux] 8
    python benchmarks/install.py --before HEAD~3 --time
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

from _record import record  # benchmarks/ is on sys.path when a script runs

REPO = Path(__file__).resolve().parents[1]
BEFORE = "73fbfab"
"""The last commit whose base install carried mbi (jax), diffprivlib and scikit-learn."""


def resolve(source: Path, work: Path) -> list[str]:
    report = work / f"report-{source.name}.json"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
         "--report", str(report), str(source)],
        check=True, capture_output=True,
    )  # fmt: skip
    doc = json.loads(report.read_text())
    return sorted(item["metadata"]["name"].lower() for item in doc["install"])


def install_seconds(source: Path, work: Path) -> float:
    env = work / f"venv-{source.name}"
    venv.create(env, with_pip=True)
    t0 = time.perf_counter()
    subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "--quiet", str(source)],
                   check=True, capture_output=True)  # fmt: skip
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default=BEFORE, help="the earlier commit (default: %(default)s)")
    ap.add_argument("--time", action="store_true", help="also install each into a fresh venv")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        old = work / "before"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(old),
                        args.before], check=True, capture_output=True)  # fmt: skip
        try:
            rows = [("before " + args.before, old), ("now (working tree)", REPO)]
            packages = {label: resolve(src, work) for label, src in rows}
            seconds = {}
            if args.time:
                seconds = {label: install_seconds(src, work) for label, src in rows}
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(old)],
                           check=False, capture_output=True)  # fmt: skip
    print(f"{'base install':28s} {'packages':>8s} {'install s':>9s}")
    for label, names in packages.items():
        took = f"{seconds[label]:9.0f}" if label in seconds else f"{'-':>9s}"
        print(f"{label:28s} {len(names):8d} {took}")
    (first, a), (_, b) = packages.items()
    print(f"\nleft the base install: {', '.join(sorted(set(a) - set(b))) or 'nothing'}")
    print(f"new in the base install: {', '.join(sorted(set(b) - set(a))) or 'nothing'}")
    record("base install: packages (before -> now)", f"{len(a)} -> {len(b)}")
    if seconds:
        record("base install: seconds (before -> now)",
               f"{seconds[first]:.0f} -> {seconds['now (working tree)']:.0f}")  # fmt: skip


if __name__ == "__main__":
    main()

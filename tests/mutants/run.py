"""Run the mutant catalogue: every planted privacy bug must be caught by its tests.

Usage: ``python tests/mutants/run.py [--only ID ...] [--list]``.

For each mutant of ``catalogue.yaml``: copy the repository once into a scratch
directory (``../shared`` linked beside it, as the tests expect), replace the mutant's
text in its file, run ``python -m pytest`` on its tests there, restore the file. A
mutant is *killed* when pytest exits 1 (a test failed); exit 0 means it *survived*; any
other exit (a collection error, no test selected) is an *error*. Prints one line per
mutant and a summary; exits 1 unless every mutant is killed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
IGNORE = shutil.ignore_patterns(
    ".git", "__pycache__", ".hypothesis", ".mypy_cache", ".ruff_cache", "runs", "site", "*.egg-info"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", metavar="ID", help="run these mutants only")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    args = parser.parse_args(argv)
    mutants = yaml.safe_load((HERE / "catalogue.yaml").read_text())
    ids = [m["id"] for m in mutants]
    if len(set(ids)) != len(ids):
        raise SystemExit("catalogue.yaml: duplicate mutant ids")
    if args.only:
        unknown = set(args.only) - set(ids)
        if unknown:
            raise SystemExit(f"unknown mutant id(s): {sorted(unknown)}")
        mutants = [m for m in mutants if m["id"] in args.only]
    if args.list:
        for m in mutants:
            print(f"{m['id']:48} {m['file']}")
        return 0
    with tempfile.TemporaryDirectory(prefix="synthflow-mutants-") as tmp:
        scratch = Path(tmp) / REPO.name
        shutil.copytree(REPO, scratch, ignore=IGNORE, symlinks=True)
        shared = REPO.parent / "shared"
        if shared.exists():
            os.symlink(shared, Path(tmp) / "shared")
        # The copy first on every process's path: a test that runs synthflow in a fresh
        # interpreter elsewhere (a plug-in's CLI run) must import the mutant, not the
        # checkout it was copied from.
        path = os.pathsep.join(p for p in (str(scratch), os.environ.get("PYTHONPATH")) if p)
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": path}
        where = subprocess.run(
            [sys.executable, "-c", "import synthflow; print(synthflow.__file__)"],
            cwd=scratch, env=env, capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        if not Path(where).is_relative_to(scratch):
            raise SystemExit(f"the scratch copy imports synthflow from {where}, not the copy")
        results = [_run_one(m, scratch, env) for m in mutants]
    killed = sum(r == "killed" for r in results)
    print(f"mutants: {killed} killed, {results.count('survived')} survived, "
          f"{results.count('error')} errors, of {len(results)}")  # fmt: skip
    return 0 if killed == len(results) else 1


def _run_one(mutant: dict, scratch: Path, env: dict[str, str]) -> str:
    path = scratch / mutant["file"]
    original = path.read_text()
    if mutant["find"] not in original:
        print(
            f"ERROR     {mutant['id']}: its text is not in {mutant['file']} (update the catalogue)"
        )
        return "error"
    path.write_text(original.replace(mutant["find"], mutant["replace"], 1))
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
             "-p", "no:randomly", "-m", "", *map(str, mutant["tests"])],  # slow ones too
            cwd=scratch, env=env, capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
        code = proc.returncode
    except subprocess.TimeoutExpired:
        code = -1
    finally:
        path.write_text(original)
    outcome = {1: "killed", 0: "survived"}.get(code, "error")
    print(f"{outcome.upper():9} {mutant['id']} ({time.monotonic() - start:.0f} s)", flush=True)
    if outcome == "error" and code != -1:
        print("  " + "\n  ".join(proc.stdout.strip().splitlines()[-5:]))
    return outcome


if __name__ == "__main__":
    sys.exit(main())

"""[anytable] The README's path for a new dataset, timed, on a table nobody tuned for.

The 15-column generated census table (``synthflow public-data wide``): a public sample
of a tenth of the private file's size, and a private file of 32,384 rows that the
screening never reads. As a methodologist and then a steward run it (the README, "A new
dataset"), each step a real ``synthflow`` process on 2 cores:

1. ``init`` on the public sample (``--rows`` the private size): the drafted spec with
   its drafted criteria switched on, and its domains reviewed as the draft asks (the
   codebook's categories and ranges, ``configs/wide_census.yaml``, in place of the values
   the sample happened to hold: a tenth of the file lacks a rare country);
2. ``public-data draw`` of the private size from a model of the public sample;
3. ``sweep --repeats 10`` on the draw; 4. ``plan`` (P(release) 0.9, or
   ``--release-probability``);
5. ``release --plan`` on the private file, ``--selections`` times, each with a fresh
   dataset ledger, then ``audit``.

It prints each step's wall time, the path's total (steps 1-4 and one release), the
planned total epsilon and how many selections released and passed their audit.

    python benchmarks/new_table_path.py --work /tmp/newtable [--selections 10]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

from _record import record  # benchmarks/ is on sys.path when a script runs

PRIVATE_ROWS = 32_384
REPO = Path(__file__).resolve().parents[1]


def _run(step: str, *argv: str, times: dict[str, float], check: bool = True) -> int:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "synthflow", *argv], capture_output=True,
                          text=True, check=False)  # fmt: skip
    times[step] = times.get(step, 0.0) + time.perf_counter() - t0
    if check and done.returncode != 0:
        print(f"{step} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
        raise SystemExit(1)
    return done.returncode


def _switch_on(spec: Path) -> None:
    """Uncomment the drafted criteria (the draft's "More kinds" examples)."""
    out, on = [], False
    for line in spec.read_text().splitlines():
        if line.startswith("    # - {name:") or (on and line.startswith("    #    ")):
            on = True
            out.append("    " + line[6:])
            continue
        on = False
        out.append(line)
    spec.write_text("\n".join(out) + "\n")


def _review(spec: Path) -> None:
    """The steward's review of the draft's domains: the codebook's, not the sample's.

    ``init`` drafts each domain from the public sample's observed values (and says so);
    a private value outside them is refused at release. The generated table's codebook is
    ``configs/wide_census.yaml`` (public): its categories and int domains replace the
    drafted ones. Nothing else of the draft changes.
    """
    import yaml  # noqa: PLC0415

    book = yaml.safe_load((REPO / "configs" / "wide_census.yaml").read_text())["columns"]
    doc = yaml.safe_load(spec.read_text())
    for name, col in doc["columns"].items():
        ref = book.get(name, {})
        if "categories" in col and "categories" in ref:
            col["categories"] = ref["categories"]
        elif "domain" in col and "domain" in ref:
            (lo, hi), (was_lo, was_hi) = ref["domain"], col["domain"]
            col["domain"] = [min(lo, was_lo), max(hi, was_hi)]
            for bins in (col.get("transformations") or {}).values():
                if not isinstance(bins, list):
                    continue
                if lo < was_lo and isinstance(bins[0], dict):  # open the ends it widened
                    bins.insert(0, f"<{bins[0]['from']}")
                if hi > was_hi and isinstance(bins[-1], dict):
                    bins.append(f">{bins[-1]['to']}")
    spec.write_text(yaml.safe_dump(doc, sort_keys=False))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, required=True, help="an empty working directory")
    ap.add_argument("--selections", type=int, default=10)
    ap.add_argument("--release-probability", default="0.9", help="the plan's P(release)")
    ap.add_argument("--generator-epsilon", default="4,8",
                    help="sweep these generator budgets (default 4,8, as the README's "
                         "path; '' for the spec's own)")  # fmt: skip
    args = ap.parse_args()
    work = args.work
    work.mkdir(parents=True, exist_ok=False)
    times: dict[str, float] = {}
    public, private = work / "public_sample.csv", work / "private.csv"
    _run("data", "public-data", "wide", "--out", str(public), "--rows",
         str(PRIVATE_ROWS // 10), "--seed", "3", "-q", times=times)  # fmt: skip
    _run("data", "public-data", "wide", "--out", str(private), "--rows", str(PRIVATE_ROWS),
         "--seed", "2", "-q", times=times)  # fmt: skip
    spec = work / "my_spec.yaml"
    _run("init", "init", "--data", str(public), "--public", "--rows", str(PRIVATE_ROWS),
         "--out", str(spec), "-q", times=times)  # fmt: skip
    _switch_on(spec)
    _review(spec)
    drawn = work / "drawn.csv"
    _run("draw", "public-data", "draw", str(spec), "--from", str(public), "--public",
         "--rows", str(PRIVATE_ROWS), "--seed", "1", "--out", str(drawn), "-q",
         times=times)  # fmt: skip
    store = work / "results.db"
    budgets = ["--generator-epsilon", args.generator_epsilon] if args.generator_epsilon else []
    _run("sweep", "sweep", str(spec), "--data", str(drawn), "--public", "--repeats", "10",
         "--workers", "2", "--store", str(store), "-q", *budgets, times=times)  # fmt: skip
    plan = work / "plan"
    rc = _run("plan", "plan", str(spec), "--store", str(store), "--data", str(drawn),
              "--public", "--seed", "1", "--out", str(plan), "--release-probability",
              args.release_probability,
              "-q", times=times, check=False)  # fmt: skip
    if rc != 0 or not (plan / "plan.json").exists():
        print(f"plan found no plan (exit {rc}); see {plan}")
        return 1
    planned = json.loads((plan / "plan.json").read_text())
    total = float(planned["total_epsilon"])
    released = 0
    for i in range(args.selections):
        out, enclave = work / f"release{i}", work / f"enclave{i}"
        rc = _run("release", "release", str(plan / "spec.yaml"), "--candidates",
                  str(plan / "candidates.yaml"), "--plan", str(plan / "plan.json"), "--data",
                  str(private), "--out", str(out), "--private-dir", str(enclave), "--ledger",
                  str(work / f"budget{i}.jsonl"), "-q", times=times, check=False)  # fmt: skip
        ok = rc == 0 and _run("audit", "audit", str(out), times=times, check=False) == 0
        released += ok
        print(f"selection {i + 1}: {'released and audited' if ok else 'no release'}")
    path_s = sum(times[k] for k in ("init", "draw", "sweep", "plan")) + times["release"] / max(
        args.selections, 1
    )
    print("\nstep times (s): " + ", ".join(f"{k} {v:.0f}" for k, v in times.items()))
    mode = re.sub(r"\s+", " ", str(planned.get("selection", "")))
    print(f"planned total epsilon {total:.4g} ({mode}, predicted P(release) "
          f"{float(planned['release_probability']):.2f}); {released} of {args.selections} "
          f"released and audited on the held-out private file; the path (init to one "
          f"release) took {path_s / 60:.1f} min")  # fmt: skip
    record("new-table path (wide, init as drafted, domains reviewed): init, draw, sweep x10 "
           f"at eps_gen {args.generator_epsilon or 'as drafted'}, plan at P(release) "
           f"{args.release_probability}, release",
           f"{path_s / 60:.1f} min on 2 cores; planned total {total:.4g}; {released} of "
           f"{args.selections} released and audited on held-out rows")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""[lower]: each lever's total epsilon and release rate, side by side, on two populations.

A row per plan for ``births``, each adding one lever to the row above:

- ``before``: the plan shipped before [lower] (``git show b1dd725:public_data/births.plan.*``):
  uniform noise on the regression fit's 27 sums, constrained_share 0.2-0.4, P(release) 0.95.
- ``+ weighted fit``: the fit's noise spread by weights read off the public sample
  (``noise_weights: public_sample``, docs/privacy.md): the shipped spec with the old
  space, swept and planned here as ``ship-plan`` does (seed 2024, 167K-row public draw).
- ``+ constrained_share 0.1-0.2``: the shipped plan (``public_data/births.plan.json``).
- ``+ P(release) 0.9``: the shipped sweep planned for 0.9 instead of 0.95.

A column per population: the embedded simulated file (167K rows, the steward's default
data) and a population unlike the public one at the same n (165K rows drawn from a public
draw of another seed, reweighted by ``benchmarks/_shifted.py``: parity >= 3 +9, mothers
35+ +6, preterm +3 points). Each cell is ``synthflow release`` run S times with the plan
(CSPRNG noise, a fresh ledger each), then ``synthflow audit``: how many released and
passed their audit.

    python benchmarks/lower.py                    # 10 selections per cell (~20 min, 2 cores)
    python benchmarks/lower.py --selections 4     # a quick look
    python benchmarks/lower.py --work DIR         # keep (and reuse) the swept plans in DIR
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _record import record  # benchmarks/ is on sys.path when a script runs
from _shifted import public_draw, shifted_births

REPO = Path(__file__).resolve().parents[1]
BEFORE = "b1dd725"
"""The last commit whose shipped births plan had the uniform fit (1.756, P 0.95)."""
FILES = ("births.plan.json", "births.plan.spec.yaml", "births.plan.candidates.yaml")


def _exe() -> str:
    return str(Path(sys.executable).with_name("synthflow"))


def _synthflow(*args: str) -> None:
    """Run one synthflow command to completion (public data; its output is not needed)."""
    subprocess.run([_exe(), *args], check=True, capture_output=True, text=True)


def _before(where: Path) -> Path:
    """The pre-[lower] plan's files, from git."""
    where.mkdir()
    for name in FILES:
        text = subprocess.run(
            ["git", "-C", str(REPO), "show", f"{BEFORE}:public_data/{name}"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        (where / name).write_text(text)
    return where


def _replanned(where: Path, probability: float) -> Path:
    """The shipped sweep planned again for another release probability (public; minutes)."""
    if not (where / "births.plan.json").exists():
        _synthflow("ship-plan", "births", "--out", str(where), "--quiet", "--store",
                   str(REPO / "public_data" / "births.sweep.db"), "--release-probability",
                   str(probability))  # fmt: skip
    return where


def _old_space(where: Path) -> Path:
    """The shipped spec with the space before [lower], swept and planned (public; minutes)."""
    if (where / "births.plan.json").exists():
        return where
    where.mkdir(parents=True, exist_ok=True)
    text = (REPO / "configs" / "births.yaml").read_text()
    old = text.replace("constrained_share: [0.1, 0.2]", "constrained_share: [0.2, 0.4]")
    assert old != text, "configs/births.yaml no longer has the space this benchmark edits"
    spec = where / "births.yaml"
    spec.write_text(old)
    draw = public_draw(where / "draw.csv.gz", 167_000, 2024)
    store = where / "sweep.db"
    _synthflow("sweep", str(spec), "--data", str(draw), "--public", "--seed", "2024",
               "--repeats", "10", "--store", str(store), "--generator-epsilon",
               "0.75,1.0,1.25", "--quiet")  # fmt: skip
    _synthflow("plan", str(spec), "--data", str(draw), "--public", "--seed", "2024",
               "--store", str(store), "--out", str(where / "plan"), "--release-probability",
               "0.95", "--quiet")  # fmt: skip
    for name, made in (("births.plan.json", "plan.json"), ("births.plan.spec.yaml", "spec.yaml"),
                       ("births.plan.candidates.yaml", "candidates.yaml")):  # fmt: skip
        (where / name).write_bytes((where / "plan" / made).read_bytes())
    return where


def _shifted(tmp: Path) -> Path:
    draw = public_draw(tmp / "draw_seed7.csv.gz", 220_000, 7)
    print("the shifted population (165,000 rows of a 220,000-row public draw, seed 7):")
    return shifted_births(draw, tmp / "shifted_165k.csv", rows=165_000, seed=1)


def _cell(plan_dir: Path | None, data: Path, selections: int, tmp: Path) -> tuple[int, float]:
    """Selections released and audited, and the epsilon charged (the plan's total)."""
    args = ["births"]
    if plan_dir is not None:
        args = [str(plan_dir / "births.plan.spec.yaml"), "--candidates",
                str(plan_dir / "births.plan.candidates.yaml"), "--plan",
                str(plan_dir / "births.plan.json")]  # fmt: skip
    ok, eps = 0, 0.0
    for k in range(selections):
        work = Path(tempfile.mkdtemp(dir=tmp))
        proc = subprocess.run(
            [_exe(), "release", *args, "--data", str(data), "--ledger", str(work / "l.jsonl"),
             "--out", str(work / "release"), "--private-dir", str(work / "enclave"), "--quiet"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if proc.returncode not in (0, 1):
            raise SystemExit(f"selection {k + 1} failed:\n{proc.stderr[-2000:]}")
        lines = (work / "l.jsonl").read_text().splitlines()
        charges = [json.loads(x) for x in lines if x.strip()]
        eps = sum(c["epsilon"] for c in charges if "what" in c and "epsilon" in c)
        if proc.returncode == 0:
            audit = [_exe(), "audit", str(work / "release")]
            ok += subprocess.run(audit, capture_output=True, check=False).returncode == 0
    return ok, eps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--selections", type=int, default=10)
    ap.add_argument("--work", type=Path, default=None, help="keep the swept plans here")
    args = ap.parse_args()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        work = args.work or tmp / "plans"
        populations = {
            "embedded (167K)": REPO / "public_data" / "nvss_like_2019.csv.gz",
            "shifted (165K)": _shifted(tmp),
        }
        print("making the plans (the old space is swept again: about 6 min) ...", flush=True)
        variants = {
            "before [lower]": _before(tmp / "before"),
            "+ weighted fit": _old_space(work / "weighted"),
            "+ constrained_share 0.1-0.2": None,
            "+ P(release) 0.9": _replanned(work / "p90", 0.9),
        }
        cols = list(populations)
        print(f"\n{'plan':30s} {'total eps':>9s} " + " ".join(f"{c:>16s}" for c in cols))
        for label, plan_dir in variants.items():
            cells, total = [], 0.0
            for data in populations.values():
                ok, total = _cell(plan_dir, data, args.selections, tmp)
                cells.append(f"{ok} of {args.selections}")
            print(f"{label:30s} {total:9.4f} " + " ".join(f"{c:>16s}" for c in cells), flush=True)
            record(
                f"[lower] births plan '{label}': total epsilon; released and audited "
                "(embedded 167K, shifted 165K)",
                f"{total:.3f}; {cells[0]}, {cells[1]}",
            )
    print(f"\n{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()

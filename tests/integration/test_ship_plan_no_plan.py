"""#61 item 1: ship-plan on a steward's base install, and no dead end when no plan exists.

A steward's install has no ``reports`` extra (matplotlib): ship-plan used to refuse
there. When no plan met the target, its report sat in a hidden ``.NAME.plan.tmp/``, the
error said "relax --target-pass / --max-total" (flags ship-plan does not have), and a
rerun swept again (minutes). Now the sweep and plan.html are kept in sight, and the
error names the reachable targets with their totals and the exact command that plans at
one of them from the kept sweep.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from synthflow.errors import NoPlanError
from synthflow.jobs.ship import _no_plan

REPO = Path(__file__).resolve().parents[2]

_BASE_INSTALL = (
    "import sys; sys.modules['matplotlib'] = None  # the base install: no reports extra\n"
    "from synthflow.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


@pytest.mark.slow
def test_ship_plan_without_matplotlib_keeps_its_sweep_in_sight(tmp_path):
    # 2,000 rows, one repeat: the cheapest sweep of the births recipe (about a minute);
    # faithfulness cannot pass at that size, so no plan exists at any target.
    out = tmp_path / "plans"
    cmd = [sys.executable, "-c", _BASE_INSTALL, "ship-plan", "births", "--out", str(out),
           "--rows", "2000", "--repeats", "1", "--quiet"]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, check=False)
    err = " ".join(proc.stderr.split())
    assert proc.returncode == 1, proc.stderr[-2000:]  # a negative result, as 'plan' says it
    assert "no plan:" in err and "reports" not in err  # planned, not refused for the extra
    assert "--target-pass" not in err and "--max-total" not in err  # not ship-plan's flags
    # #61 item 9: a failed plan says which criterion this size cannot pass, and what it can
    assert "faithfulness_unmatched fails even without noise" in err
    assert "a threshold this size can meet (about" in err
    kept = out / "births.no-plan"
    assert (kept / "sweep.db").is_file() and (kept / "plan.html").is_file()
    assert f"kept in {kept}" in err
    assert not list(out.glob(".*"))  # nothing left hidden
    html = (kept / "plan.html").read_text()
    assert "No figure: matplotlib is not installed" in html and "<img" not in html


def test_no_plan_names_the_reachable_targets_and_the_rerun_from_the_kept_sweep(tmp_path):
    out = tmp_path / "plans"
    out.mkdir()
    (out / "births.no-plan").mkdir()  # an earlier failure's: never written over
    work = out / ".births.plan.tmp"
    (work / "plan").mkdir(parents=True)
    (work / "sweep.db").write_bytes(b"runs")
    (work / "plan" / "plan.html").write_text("<html></html>")
    exc = NoPlanError(
        f"no plan: meeting P(release) >= 0.95 needs total epsilon 2.224, above the spec's "
        f"total_epsilon 2; see {work / 'plan' / 'plan.html'}. Sweep better configurations, "
        "or relax --target-pass / --max-total",
        reachable=((0.8, 1.713), (0.9, 1.972)),
    )
    made = _no_plan(exc, "births", out, work, rows=118_000, data=work / "draw.csv.gz",
                    target=0.95)  # fmt: skip
    said = str(made)
    kept = out / "births.no-plan-2"
    assert (kept / "sweep.db").read_bytes() == b"runs" and (kept / "plan.html").is_file()
    assert not work.exists() and not any((out / "births.no-plan").iterdir())
    assert said.startswith("no plan: meeting P(release) >= 0.95 needs total epsilon 2.224")
    assert "--target-pass" not in said and "--max-total" not in said
    assert "P(release) 0.8 at total epsilon 1.713, P(release) 0.9 at total epsilon 1.972" in said
    assert said.endswith(
        f"synthflow ship-plan births --rows 118000 --store {kept / 'sweep.db'} --out {out} "
        "--release-probability 0.9"
    )
    assert made.reachable == exc.reachable and made.report == kept / "plan.html"

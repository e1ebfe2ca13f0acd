"""Screenshots of every HTML report at 1280 px, to read them as a reader would (issue #38).

Makes each report from seeded runs on the embedded public NVSS-like file (and, for the
datasheet, the made-up clinic data of notebooks/audit_a_release.ipynb), then renders it in
headless Chromium at 1280 px wide, full page, to PNG:

    sweep_report.png       synthflow sweep-report (write_sweep_report)
    acceptance_report.png  synthflow evaluate --report, DP mode (the release's noise)
    plan.png               synthflow plan's plan.html
    tables_report.png      synthflow tables compare
    datasheet.png          a release's README.md (Markdown, rendered as a host would)

    python benchmarks/screenshots.py --out shots/          # about 2 minutes on 2 cores

Needs playwright (pip) and a Chromium: playwright's own (python -m playwright install
chromium) or the system's (--chromium /usr/bin/chromium, Debian's chromium package).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import markdown
import numpy as np
import pandas as pd
import yaml
from playwright.sync_api import sync_playwright

from synthflow import ConfigError, expand_space, load_spec, plan_budget, run_release

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "public_data" / "nvss_like_2019.csv.gz"
WIDTH = 1280


def synthflow(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "synthflow", "-q", *args], check=True, cwd=REPO)


def make_reports(work: Path) -> dict[str, Path]:
    """Write the five reports under ``work``; return them by screenshot name."""
    spec = load_spec("births")
    ids = [c.id for c in expand_space(spec) if c.model == "privbayes" and c.letters == "abaaaa"]
    config = ids[0]

    # Sweep: two PrivBayes configurations on the release's binning, at two generator
    # budgets (so that the planner has something to re-draw from).
    store = work / "sweep.db"
    synthflow(
        "sweep", "births", "--data", str(DATA), "--public", "--seed", "1",
        "--ids", ",".join(ids[:2]), "--repeats", "2", "--workers", "2",
        "--generator-epsilon", "4,8", "--store", str(store),
    )  # fmt: skip
    synthflow("sweep-report", "births", "--store", str(store), "--out", str(work / "sweep.html"))
    try:
        plan_budget("births", store, DATA, work / "plan", force=True, show_progress=False)
    except ConfigError as exc:  # no plan meets the constraints: plan.html shows the frontier
        print(f"plan: {exc}"[:300])

    # One candidate and its DP acceptance report.
    synthflow(
        "run", "births", "--data", str(DATA), "--public", "--seed", "1",
        "--config", config, "--out", str(work / "run"),
    )  # fmt: skip
    candidate = next((work / "run").glob("*.csv*"))
    evaluated = subprocess.run(
        [sys.executable, "-m", "synthflow", "-q", "evaluate", "births", "--data", str(DATA),
         "--public", "--seed", "1", "--candidate", str(candidate), "--config", config,
         "--report", str(work / "acceptance.html")],
        cwd=REPO, check=False,
    )  # fmt: skip
    assert evaluated.returncode in (0, 1), evaluated  # 1: the candidate failed a criterion

    synthflow(
        "tables", "compare", "births", "--data", str(DATA), "--public", "--seed", "1",
        "--tables", str(REPO / "configs" / "tables_births.yaml"),
        "--out", str(work / "tables.html"),
    )  # fmt: skip

    # A seeded public release of the made-up clinic data (as the audit notebook makes it).
    g = np.random.default_rng(7)
    n = 600
    age = g.integers(0, 100, n)
    smoker = np.where(g.random(n) < 0.1 + 0.3 * (age > 30), "yes", "no")
    visits = np.clip(g.poisson(1 + age / 25 + 2 * (smoker == "yes")), 1, 50)
    region = g.choice(["north", "south", "east", "west"], n, p=[0.4, 0.3, 0.2, 0.1])
    clinic = work / "clinic.csv"
    frame = pd.DataFrame({"age": age, "visits": visits, "region": region, "smoker": smoker})
    frame.to_csv(clinic, index=False)
    small = load_spec(REPO / "configs" / "example_small.yaml")
    shortlist = work / "candidates.yaml"
    configurations = [c.to_json() for c in expand_space(small) if c.letters == "aaaa"]
    shortlist.write_text(
        yaml.safe_dump({"spec_sha256": small.sha256, "configurations": configurations})
    )
    release = run_release(
        REPO / "configs" / "example_small.yaml", clinic, shortlist, work / "release",
        work / "enclave", seed=3, public=True, show_progress=False, max_attempts=500,
    )  # fmt: skip
    datasheet = work / "datasheet.html"
    datasheet.write_text(_markdown_page(Path(release) / "README.md"), encoding="utf-8")

    return {
        "sweep_report": work / "sweep.html",
        "acceptance_report": work / "acceptance.html",
        "plan": work / "plan" / "plan.html",
        "tables_report": work / "tables.html",
        "datasheet": datasheet,
    }


def _markdown_page(path: Path) -> str:
    """A Markdown file as a code host shows it (tables, fenced code, a readable column)."""
    body = markdown.markdown(
        path.read_text(encoding="utf-8"), extensions=["tables", "fenced_code", "toc"]
    )
    style = (
        "body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:980px;"
        "margin:2em auto;padding:0 1em;line-height:1.5;color:#1f2328}"
        "table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:4px 10px}"
        "code,pre{background:#f6f8fa}"
    )
    return f"<!doctype html><meta charset=utf-8><style>{style}</style>{body}"


def screenshot(pages: dict[str, Path], out: Path, chromium: str | None) -> dict[str, dict]:
    """Render each page at WIDTH px, full page; return each PNG's size and page facts."""
    facts: dict[str, dict] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": WIDTH, "height": 900})
        for name, html in pages.items():
            page.goto(html.resolve().as_uri())
            png = out / f"{name}.png"
            page.screenshot(path=str(png), full_page=True)
            facts[name] = page.evaluate(
                """() => ({
                    height: document.documentElement.scrollHeight,
                    scroll_width: document.documentElement.scrollWidth,
                    wide: [...document.querySelectorAll('table, img, pre, svg')]
                        .filter(e => e.getBoundingClientRect().right > window.innerWidth)
                        .map(e => e.tagName + ' ' + Math.round(e.getBoundingClientRect().width)),
                    small_text: [...document.querySelectorAll('body *')]
                        .filter(e => e.childElementCount === 0 && e.textContent.trim()
                                && parseFloat(getComputedStyle(e).fontSize) < 11).length,
                })"""
            )
            facts[name]["png"] = str(png)
        browser.close()
    return facts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("screenshots"))
    parser.add_argument("--chromium", help="a Chromium executable (default: playwright's)")
    parser.add_argument("--work", type=Path, help="keep the reports here (default: a temp dir)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="screenshots-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        facts = screenshot(make_reports(work), args.out, args.chromium)
    print(json.dumps(facts, indent=2))


if __name__ == "__main__":
    main()

"""The HTML reports in a real browser (#61 item 10): headless Chromium through Playwright.

Each report (plan, sweep, evaluation, tables) is made by the real CLI on small public
data and opened from file:// in Debian's Chromium. A report fails on a console error or
an uncaught exception, a failed request or one that leaves the file (reports are
self-contained: the enclave has no network), a broken image, an empty figure (an <svg>
with nothing to draw, an image of one colour, a figure of no size) or a page without
visible text. ``docs/screenshots/make_screenshots.py`` reuses :func:`make_reports` and
:func:`open_report` for the screenshots the README shows.

Skipped when Chromium (``apt-get install chromium``) or Playwright (the ``dev`` extra) is
missing, unless ``SYNTHFLOW_REQUIRE_BROWSER=1`` (as ``.ci/run`` sets): CI never skips.
Playwright never downloads a browser here: it drives the system's Chromium.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
# Root on a closed network: no sandbox, no GPU, none of Chromium's own calls home.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORT = {"width": 1280, "height": 900}
SPEC_2024 = REPO / "configs" / "births-2024.yaml"
TABLES = REPO / "configs" / "tables_births.yaml"
ROWS = 2000
"""Rows of the embedded public file that the evaluation and the tables reports use."""
PLAN_ROWS = 5000
"""... and the plan (at 2000 rows, no plan: one_way_max_ratio fails even without noise)."""


def browser_missing() -> str | None:
    """Why the browser test cannot run here, or None."""
    if not CHROMIUM.is_file():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if importlib.util.find_spec("playwright") is None:
        return 'no Playwright (pip install -e ".[dev]")'
    return None


@contextlib.contextmanager
def launch() -> Iterator[Any]:
    """Headless Chromium (the system's), closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS, timeout=60_000
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    missing = browser_missing()
    if missing:
        if os.environ.get("SYNTHFLOW_REQUIRE_BROWSER") == "1":
            pytest.fail(f"SYNTHFLOW_REQUIRE_BROWSER=1 but {missing}")
        pytest.skip(missing)
    with launch() as b:
        yield b


# --- the reports, each made by the CLI ----------------------------------------------------


def _main(*argv: str, ok: tuple[int, ...] = (0,)) -> None:
    from synthflow.cli import main

    code = main([*argv, "--quiet"])
    assert code in ok, f"synthflow {' '.join(argv)} exited {code}"


def _public_sample(out: Path, rows: int = ROWS) -> Path:
    """``rows`` seeded rows of the embedded public file (nvss_like_2019.csv.gz)."""
    import pandas as pd

    from synthflow.resources import public_data_file

    path = out / f"public-{rows}.csv"
    if not path.exists():
        frame = pd.read_csv(public_data_file("nvss_like_2019.csv.gz"))
        frame.sample(rows, random_state=0).to_csv(path, index=False)
    return path


def make_plan(out: Path) -> Path:
    """plan.html by ``synthflow sweep`` then ``synthflow plan``, as tests/integration/test_plan.py.

    The planner's spec (births-2024 with loose thresholds, so that PrivBayes on a few
    thousand rows can pass and a plan exists), one binning, 4 runs at two generator
    budgets on 5000 public rows: about 15 seconds. (``ship-plan births`` resuming the
    shipped sweep plans on 167K rows: minutes.)
    """
    sys.path.insert(0, str(REPO / "tests" / "integration"))
    from loose_spec import release_binning_ids, write_loose_spec

    from synthflow.loader import load_spec

    spec = write_loose_spec(out / "loose.yaml")
    data = _public_sample(out, PLAN_ROWS)
    ids = ",".join(release_binning_ids(load_spec(spec)))
    store = str(out / "sweep.db")
    _main("sweep", str(spec), "--data", str(data), "--public", "--repeats", "4", "--ids", ids,
          "--generator-epsilon", "8,16", "--workers", "1", "--store", store)  # fmt: skip
    _main("plan", str(spec), "--data", str(data), "--public", "--store", store,
          "--out", str(out / "plan"), "--release-probability", "0.85")  # fmt: skip
    return out / "plan" / "plan.html"


def make_sweep(out: Path) -> Path:
    """sweep.html by ``synthflow sweep-report`` of the shipped births sweep."""
    from synthflow.release.shipped import shipped_plan

    store = out / "sweep.db"  # a copy: the report never writes beside the package
    shutil.copyfile(shipped_plan("births").store, store)
    _main("sweep-report", "births", "--store", str(store), "--out", str(out / "sweep.html"))
    return out / "sweep.html"


def make_evaluation(out: Path) -> Path:
    """evaluation.html by ``synthflow run`` then ``synthflow evaluate --report`` (DP)."""
    from synthflow.loader import load_spec
    from synthflow.space import expand_space

    data = _public_sample(out)
    config = expand_space(load_spec(SPEC_2024))[0].id
    _main("run", str(SPEC_2024), "--data", str(data), "--config", config,
          "--out", str(out / "run"), "--seed", "1", "--public")  # fmt: skip
    # 1: a criterion failed (a negative result, still a whole report)
    _main("evaluate", str(SPEC_2024), "--data", str(data), "--candidate",
          str(out / "run" / "candidate.csv"), "--config", config, "--seed", "7", "--public",
          "--report", str(out / "evaluation.html"), ok=(0, 1))  # fmt: skip
    return out / "evaluation.html"


def make_tables(out: Path) -> Path:
    """tables.html by ``synthflow tables compare`` (every method side by side)."""
    data = _public_sample(out)
    _main("tables", "compare", str(SPEC_2024), "--data", str(data), "--tables", str(TABLES),
          "--out", str(out / "tables.html"), "--epsilons", "1,5", "--seed", "2",
          "--public")  # fmt: skip
    return out / "tables.html"


MAKERS: dict[str, Callable[[Path], Path]] = {
    "plan": make_plan,
    "sweep": make_sweep,
    "evaluation": make_evaluation,
    "tables": make_tables,
}


def make_reports(out: Path, names: list[str] | None = None) -> dict[str, Path]:
    """The reports ``names`` (default: all), each made in its own folder under ``out``."""
    reports = {}
    for name in names or list(MAKERS):
        (out / name).mkdir(parents=True, exist_ok=True)
        reports[name] = MAKERS[name](out / name)
    return reports


# --- the checks in the browser --------------------------------------------------------------

# Run in the page after load: every <details> opened (figures inside a closed one have no
# box), every image decoded, then what a reader would see as broken or empty.
PAGE_CHECKS = """
async () => {
  const problems = [];
  const name = (el) => {
    const what = el.getAttribute('alt') || el.getAttribute('aria-label') || el.id || '';
    const src = (el.getAttribute('src') || '').slice(0, 40);
    return `<${el.tagName.toLowerCase()}${what ? ' "' + what + '"' : ''}${src ? ' ' + src : ''}>`;
  };
  document.querySelectorAll('details').forEach((d) => { d.open = true; });
  await Promise.all([...document.images].map((img) => img.decode().catch(() => {})));
  for (const img of document.images) {
    if (!img.complete || img.naturalWidth === 0) {
      problems.push(`broken image ${name(img)}`);
      continue;
    }
    // One colour only: an empty figure. A small copy is enough to tell.
    const w = Math.min(img.naturalWidth, 240);
    const h = Math.max(1, Math.round(img.naturalHeight * w / img.naturalWidth));
    const canvas = document.createElement('canvas');
    canvas.width = w; canvas.height = h;
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0, w, h);
    const px = ctx.getImageData(0, 0, w, h).data;
    let differ = 0;
    for (let i = 0; i < px.length; i += 4) {
      if (px[i] !== px[0] || px[i + 1] !== px[1] || px[i + 2] !== px[2] || px[i + 3] !== px[3]) {
        differ++;
      }
    }
    if (differ === 0) problems.push(`empty figure (an image of one colour) ${name(img)}`);
  }
  const drawable = 'path,rect,line,circle,ellipse,polyline,polygon,text,image,use';
  for (const svg of document.querySelectorAll('svg')) {
    if (!svg.querySelector(drawable)) problems.push(`empty figure (nothing to draw) ${name(svg)}`);
  }
  for (const el of document.querySelectorAll('img, svg, canvas')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) problems.push(`figure of no size ${name(el)}`);
  }
  if (!document.body || !document.body.innerText.trim()) problems.push('no visible text');
  return {problems, figures: document.querySelectorAll('img, svg, canvas').length};
}
"""
LOCAL = ("file:", "data:", "about:", "blob:")


@contextlib.contextmanager
def open_report(browser: Any, path: Path) -> Iterator[tuple[Any, list[str], int]]:
    """The report open in a new page: (page, what is wrong with it, its figures' count)."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    problems: list[str] = []

    def console(msg: Any) -> None:
        if msg.type == "error":
            problems.append(f"console error: {msg.text}")

    def request(req: Any) -> None:
        if not req.url.startswith(LOCAL):
            problems.append(f"request leaves the file: {req.url[:80]}")

    page.on("console", console)
    page.on(
        "pageerror", lambda exc: problems.append(f"uncaught exception: {exc.name}: {exc.message}")
    )
    page.on("request", request)
    page.on(
        "requestfailed",
        lambda req: problems.append(f"failed request {req.url[:80]}: {req.failure}"),
    )
    try:
        page.goto(path.resolve().as_uri(), wait_until="load")
        found = page.evaluate(PAGE_CHECKS)
        page.evaluate("() => window.scrollTo(0, 0)")
        yield page, problems + found["problems"], found["figures"]
    finally:
        context.close()


def check_report(browser: Any, path: Path) -> tuple[list[str], int]:
    """What is wrong with the report at ``path`` in the browser, and its figures' count."""
    with open_report(browser, path) as (_, problems, figures):
        return problems, figures


# --- the tests ------------------------------------------------------------------------------


# The plan's sweep and plan take about 15 s; the rest of the module about 10 s.
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n == "plan" else n for n in MAKERS]
)
def test_report_renders_in_chromium(name: str, browser: Any, tmp_path: Path) -> None:
    report = MAKERS[name](tmp_path)
    problems, figures = check_report(browser, report)
    assert not problems, f"{name} report {report}: {problems}"
    assert figures > 0, f"{name} report {report} has no figure"


@pytest.mark.parametrize("name", ["births", "births-pure"])
def test_shipped_plan_report_renders_in_chromium(name: str, browser: Any) -> None:
    from synthflow.release.shipped import shipped_plan

    report = shipped_plan(name).html
    problems, figures = check_report(browser, report)
    assert not problems, f"{report}: {problems}"
    assert figures > 0, f"{report} has no figure"


BROKEN = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<h1>A broken report</h1>
<img alt="broken" src="data:image/png;base64,AAAA">
<img alt="blank" src="{blank}">
<svg width="100" height="50"><g></g></svg>
<canvas width="0" height="0"></canvas>
<script>undefinedFunction();</script>
<script>console.error("a console error");</script>
</body></html>
"""


def test_the_checks_catch_a_broken_report(browser: Any, tmp_path: Path) -> None:
    # A report broken in every way the checks look for: each is named.
    import base64
    import io

    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1))  # nothing drawn: one colour
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    blank = "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()
    page = tmp_path / "broken.html"
    page.write_text(BROKEN.format(blank=blank), encoding="utf-8")
    problems, _ = check_report(browser, page)
    said = "\n".join(problems)
    for expected in (
        'broken image <img "broken"',
        'empty figure (an image of one colour) <img "blank"',
        "empty figure (nothing to draw) <svg>",
        "figure of no size <canvas>",
        "uncaught exception: ReferenceError",
        "console error: a console error",
    ):
        assert expected in said, (expected, problems)

"""Screenshots of the four HTML reports, for the README: ``docs/screenshots/NAME.png``.

``python docs/screenshots/make_screenshots.py`` makes each report as the browser test does
(``tests/browser/test_reports_in_browser.py``: the real CLI on small public data), opens it
in headless Chromium (``/usr/bin/chromium``, driven by Playwright) and keeps the top of the
page at 1280x900. The plan is the one shipped for ``births`` (``public_data/births.plan.html``,
what ``synthflow demo`` copies into ``plan/``). A report the browser test would fail is
refused, not photographed.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def main() -> int:
    """Write plan.png, sweep.png, evaluation.png and tables.png beside this script."""
    sys.path.insert(0, str(REPO / "tests" / "browser"))
    from test_reports_in_browser import (  # noqa: PLC0415 (tests/browser, put on the path)
        browser_missing,
        launch,
        make_reports,
        open_report,
    )

    missing = browser_missing()
    if missing:
        print(f"cannot take screenshots: {missing}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SYNTHFLOW_HOME"] = str(Path(tmp) / "home")  # never the user's ~/.synthflow
        from synthflow.release.shipped import shipped_plan  # noqa: PLC0415

        reports = {"plan": shipped_plan("births").html}
        reports.update(make_reports(Path(tmp) / "reports", ["sweep", "evaluation", "tables"]))
        with launch() as browser:
            for name, report in reports.items():
                with open_report(browser, report) as (page, problems, _):
                    if problems:
                        print(f"{name}: {problems}", file=sys.stderr)
                        return 1
                    page.screenshot(path=str(HERE / f"{name}.png"))
                print(HERE / f"{name}.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Execute notebooks/prescreening.ipynb on small data so that it cannot rot."""

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "unit" / "sweep"))
sys.path.insert(0, str(Path(__file__).parent))

from nbrun import run_notebook  # noqa: E402
from standin import small_data_file  # noqa: E402


def test_prescreening_notebook_runs(tmp_path: Path, monkeypatch) -> None:
    data = small_data_file(tmp_path, rows=1500)
    monkeypatch.setenv("SYNTHFLOW_NOTEBOOK_DATA", str(data))
    monkeypatch.setenv("SYNTHFLOW_NOTEBOOK_SAMPLE", "4")
    monkeypatch.setenv("SYNTHFLOW_NOTEBOOK_REPEATS", "2")
    # PrivBayes only keeps the test in seconds; the notebook's default adds `workload`.
    monkeypatch.setenv("SYNTHFLOW_NOTEBOOK_MODELS", "privbayes")
    monkeypatch.setenv("SYNTHFLOW_REPO", str(REPO))
    outputs, raw = run_notebook("prescreening.ipynb")
    assert "'runs_stored': 8" in outputs and "'runs_new': 0" in outputs
    assert "spec_sha256" in outputs and "report.html" in outputs
    html = [str(o.get("data", {}).get("text/html", "")) for o in raw]
    assert any("<iframe srcdoc=" in h and "Sweep report" in h for h in html)  # shown inline
    assert "IProgress not found" not in outputs
    assert os.environ["SYNTHFLOW_NOTEBOOK_SAMPLE"] == "4"

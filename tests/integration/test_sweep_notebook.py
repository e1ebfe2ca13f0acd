"""Execute notebooks/prescreening.ipynb on small data so that it cannot rot."""

import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "unit" / "sweep"))

from standin import small_data_file  # noqa: E402


def test_prescreening_notebook_runs(tmp_path: Path, monkeypatch) -> None:
    data = small_data_file(tmp_path, rows=1500)
    monkeypatch.setenv("SYNTHFLOW_NOTEBOOK_DATA", str(data))
    monkeypatch.setenv("SYNTHFLOW_NOTEBOOK_SAMPLE", "4")
    monkeypatch.setenv("SYNTHFLOW_NOTEBOOK_REPEATS", "2")
    monkeypatch.setenv("SYNTHFLOW_REPO", str(REPO))
    nb = nbformat.read(REPO / "notebooks" / "prescreening.ipynb", as_version=4)
    NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO / "notebooks")}},
    ).execute()
    outputs = "".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", ""))
        for cell in nb.cells
        if cell.cell_type == "code"
        for o in cell.outputs
    )
    assert "'runs_stored': 8" in outputs and "'runs_new': 0" in outputs
    assert "spec_sha256" in outputs and "report.html" in outputs
    assert os.environ["SYNTHFLOW_NOTEBOOK_SAMPLE"] == "4"

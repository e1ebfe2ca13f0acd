"""Execute notebooks/audit_a_release.ipynb so that it cannot rot."""

from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]


def test_audit_notebook_runs(monkeypatch) -> None:
    monkeypatch.delenv("SYNTHFLOW_RELEASE_DIR", raising=False)
    monkeypatch.setenv("SYNTHFLOW_REPO", str(REPO))
    nb = nbformat.read(REPO / "notebooks" / "audit_a_release.ipynb", as_version=4)
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
    assert "audit passed" in outputs
    assert "audit FAILED:" in outputs and "appears >= " in outputs
    assert "the rarest record appears" in outputs

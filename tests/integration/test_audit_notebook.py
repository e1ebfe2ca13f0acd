"""Execute notebooks/audit_a_release.ipynb so that it cannot rot."""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))

from nbrun import run_notebook  # noqa: E402


def test_audit_notebook_runs(monkeypatch) -> None:
    monkeypatch.delenv("SYNTHFLOW_RELEASE_DIR", raising=False)
    monkeypatch.setenv("SYNTHFLOW_REPO", str(REPO))
    outputs, _ = run_notebook("audit_a_release.ipynb")
    assert "audit passed" in outputs
    assert "audit FAILED:" in outputs and "appears >= " in outputs
    assert "the rarest record appears" in outputs

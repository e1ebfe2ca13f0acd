"""Execute notebooks/choosing_a_budget.ipynb on small public data so that it cannot rot."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).parent))

from loose_spec import release_binning_ids, write_loose_spec  # noqa: E402
from nbrun import run_notebook  # noqa: E402

from synthflow.loader import load_spec  # noqa: E402


@pytest.mark.slow
def test_choosing_a_budget_notebook_runs(
    tmp_path: Path, nvss_10k: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = write_loose_spec(tmp_path / "loose.yaml")
    for key, value in {
        "SYNTHFLOW_REPO": str(REPO),
        "SYNTHFLOW_PLAN_SPEC": str(spec),
        "SYNTHFLOW_PLAN_DATA": str(nvss_10k),
        "SYNTHFLOW_PLAN_WORK": str(tmp_path / "work"),
        "SYNTHFLOW_PLAN_MODELS": "privbayes",
        "SYNTHFLOW_PLAN_EPSILONS": "8,16",
        "SYNTHFLOW_PLAN_REPEATS": "3",
        "SYNTHFLOW_PLAN_IDS": ",".join(release_binning_ids(load_spec(spec))),
    }.items():
        monkeypatch.setenv(key, value)
    outputs, raw = run_notebook("choosing_a_budget.ipynb", timeout=600)
    assert "total epsilon" in outputs and "P(release)" in outputs
    assert "required P(release)" in outputs
    assert any(
        o.get("output_type") == "display_data" and "image/png" in o.get("data", {}) for o in raw
    )
    assert (tmp_path / "work" / "plan" / "spec.yaml").is_file(), outputs

"""The main job end to end (README's first command), on the embedded default data."""

from __future__ import annotations

import json

import pytest

from synthflow.release.main_job import run_main_job


@pytest.mark.slow
def test_main_job_makes_an_audited_release(tmp_path):
    # 4 of the 8 workload configurations x 2 runs keep the test within a few minutes.
    result = run_main_job(tmp_path / "demo", sample=4, repeats=2, workers=2, show_progress=False)
    assert result.audit.ok, result.audit.failures
    release = result.release_dir
    assert sorted(p.name for p in release.iterdir()) == [
        "MANIFEST.json",
        "README.md",
        "acceptance.json",
        "spec.yaml",
        "synthetic.csv",
    ]
    acceptance = json.loads((release / "acceptance.json").read_text())
    assert acceptance["passed"] is True
    assert acceptance["budget"]["total_epsilon"] == pytest.approx(9.98)
    # the number of attempts stays in the enclave
    outcome = json.loads((tmp_path / "demo" / "enclave" / "outcome.json").read_text())
    assert outcome["attempts"] >= 1
    assert "attempts" not in (release / "acceptance.json").read_text()
    assert "attempts" not in (release / "README.md").read_text().replace("how many attempts", "")

"""The main job's shipped public pre-screen (#38 item 1).

``synthflow demo`` starts from a sweep store, shortlist and report made once on a seeded
public draw and shipped in ``public_data/``; ``demo --screen`` re-makes them. These
tests check that the shipped files are what that command makes, for the bundled spec,
and that the demo releases from them without sweeping.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from synthflow.config import load_spec
from synthflow.errors import ConfigError
from synthflow.ledger import file_sha256
from synthflow.public import Calibration, default_calibration_path, simulate, write_sample
from synthflow.release.main_job import PRESCREEN, SEED, run_main_job
from synthflow.release.prescreen import PUBLIC_ROWS, copy_prescreen
from synthflow.resources import bundled_spec, public_data_file
from synthflow.sweep.shortlist import estimate
from synthflow.sweep.store import SweepStore


def _shipped(name: str) -> Path:
    return public_data_file(PRESCREEN[name])


def test_shipped_prescreen_is_of_the_bundled_spec_and_the_seeded_public_draw(tmp_path):
    doc = yaml.safe_load(_shipped("candidates.yaml").read_text())
    spec = load_spec(bundled_spec("births"))
    assert doc["spec_sha256"] == spec.sha256
    # The public draw the sweep ran on is the seeded simulation (reproducible bytes).
    draw = tmp_path / "draw.csv.gz"
    calibration = Calibration.from_yaml(default_calibration_path())
    write_sample(simulate(calibration, PUBLIC_ROWS, np.random.default_rng(SEED)), draw)
    assert doc["public_data_sha256"] == file_sha256(draw)
    with SweepStore.open_existing(_shipped("sweep.db")) as db:
        meta = db.meta()
    assert meta["data_sha256"] == file_sha256(draw) and meta["spec_sha256"] == spec.sha256
    # The shortlist is the store's: every configuration at >= 10% DP pass, no other.
    kept = {e.config_id for e in estimate(_shipped("sweep.db"), basis="dp") if e.p >= 0.10}
    assert kept and {c["id"] for c in doc["configurations"]} == kept
    assert "<html" in _shipped("sweep_report.html").read_text()[:400].lower()


def test_a_stale_prescreen_is_refused_with_the_fix(tmp_path):
    spec = load_spec(bundled_spec("births"))
    other = spec.__class__(**{**spec.__dict__, "sha256": "0" * 64})
    with pytest.raises(ConfigError, match="demo --screen"):
        copy_prescreen(other, tmp_path)
    assert not list(tmp_path.iterdir())  # nothing copied


@pytest.mark.slow
def test_demo_releases_from_the_shipped_prescreen_without_sweeping(tmp_path):
    result = run_main_job(tmp_path / "demo", show_progress=False)
    out = tmp_path / "demo"
    assert not (out / "public_draw.csv.gz").exists()  # no public draw, no sweep
    assert (out / "sweep.db").read_bytes() == _shipped("sweep.db").read_bytes()
    assert result.audit.ok, result.audit.failures
    acc = json.loads((result.release_dir / "acceptance.json").read_text())
    assert acc["passed"] is True and acc["budget"]["total_epsilon"] == pytest.approx(9.98)
    shipped = yaml.safe_load(_shipped("candidates.yaml").read_text())
    assert acc["configuration"]["id"] in {c["id"] for c in shipped["configurations"]}
    assert f"shortlisted  {len(shipped['configurations'])} of " in result.summary()
    # [ux] 6: audit.txt is what 'synthflow audit' prints: the checks, the WARN lines (the
    # summary counts them) and what cannot be checked; the datasheet names the install.
    audit = (out / "audit.txt").read_text()
    assert audit.count("\nWARN  ") + audit.startswith("WARN  ") == len(result.audit.warnings)
    assert result.audit.warnings and "not checked (cannot be" in audit
    readme = (result.release_dir / "README.md").read_text()
    assert "pip install synthflow-dp==" in readme
    # rm -rf the demo, run it again in the same place: its new ledger is not taken for
    # a rollback of the old one (the ledger-head record of #45 is keyed by path).
    import shutil

    shutil.rmtree(out)
    again = run_main_job(out, show_progress=False)
    assert again.audit.ok

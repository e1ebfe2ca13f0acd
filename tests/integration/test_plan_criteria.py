"""``plan`` works on any valid set of criteria (#45 item 5).

``plan`` crashed with ``KeyError: '__tstr__'`` on a spec that has
``regression_coefficients`` but no ``regression_tstr``. Here each criterion kind of the
births spec is removed in turn, the (loose) spec is swept on the public 10K sample and
planned through the real CLI: each gives a plan (exit 0) or a negative result that
says why (exit 1, NoPlanError), never a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from synthflow.cli import main
from synthflow.loader import load_spec
from synthflow.sweep.job import run_sweep

sys.path.insert(0, str(Path(__file__).parent))

from loose_spec import release_binning_ids, write_loose_spec

KINDS = [
    "marginals",
    "one_way_ratio",
    "conditional_mean",
    "regression_coefficients",
    "regression_tstr",
    "faithfulness",
]


@pytest.mark.slow
@pytest.mark.parametrize("missing", KINDS)
def test_plan_works_with_each_criterion_kind_missing(tmp_path, nvss_10k, missing, capsys):
    path = write_loose_spec(tmp_path / "loose.yaml")
    doc = yaml.safe_load(path.read_text())
    gone = {missing} | ({"regression_tstr"} if missing == "regression_coefficients" else set())
    kept = [c for c in doc["acceptance"]["criteria"] if c["kind"] not in gone]
    assert len(kept) < len(doc["acceptance"]["criteria"])
    doc["acceptance"]["criteria"] = kept
    doc["space"]["models"][0]["grid"]["epsilon_split"] = [0.5]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    spec = load_spec(path)
    store = tmp_path / "sweep.db"
    run_sweep(
        spec,
        nvss_10k,
        store,
        repeats=2,
        workers=1,
        ids=release_binning_ids(spec),
        generator_epsilons=[16.0],
        show_progress=False,
    )
    rc = main(
        ["plan", str(path), "--store", str(store), "--data", str(nvss_10k), "--public",
         "--out", str(tmp_path / "plan"), "--quiet", "--release-probability", "0.5",
         "--stop-probability", "0.05"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert rc in (0, 1), err
    assert (tmp_path / "plan" / "plan.html").exists()
    if rc == 1:
        assert "no plan" in err


def test_a_tstr_without_the_fit_it_reads_is_refused_before_anything(tmp_path, capsys):
    # regression_tstr reads regression_coefficients' DP fit: without it the release
    # failed after its charge ("needs the DP regression fit"); now the spec is refused.
    path = write_loose_spec(tmp_path / "loose.yaml")
    doc = yaml.safe_load(path.read_text())
    doc["acceptance"]["criteria"] = [
        c for c in doc["acceptance"]["criteria"] if c["kind"] != "regression_coefficients"
    ]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "reads the DP regression fit" in err and "regression_coefficients" in err

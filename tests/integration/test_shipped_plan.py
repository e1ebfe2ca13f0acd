"""The bundled specs' shipped plans ([default], #46).

``synthflow release births`` with no ``--candidates`` and no ``--plan`` uses the plan
shipped for the spec: a public sweep and its plan, made by ``synthflow ship-plan`` and
shipped in ``public_data/``. These tests check that the shipped files belong to the
bundled specs, that a stale plan is refused before anything is charged, and that the
default release runs on the embedded file (which the plan never saw).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from synthflow.cli import main
from synthflow.errors import ConfigError
from synthflow.jobs.demo import run_main_job
from synthflow.loader import load_spec
from synthflow.privacy.ledger import file_sha256
from synthflow.release import shipped
from synthflow.release.cost import selection_cost
from synthflow.resources import bundled_spec, public_data_file
from synthflow.space import find_configuration
from synthflow.sweep.store import SweepStore

REPO = Path(__file__).resolve().parents[2]
WITH_PLANS = ("births", "births-pure")


@pytest.mark.parametrize("name", WITH_PLANS)
def test_each_shipped_plan_belongs_to_its_bundled_spec(name):
    plan = shipped.shipped_plan(name)
    assert plan is not None
    source = load_spec(bundled_spec(name))
    planned = load_spec(plan.spec)
    content = plan.content
    assert content["source_spec"]["sha256"] == source.sha256
    assert content["planned_spec_sha256"] == planned.sha256
    header = yaml.safe_load(plan.candidates.read_text())
    assert header["spec_sha256"] == planned.sha256
    # The store is the sweep the plan read: of this spec, at the recipe's budgets and
    # repeats, on the public data the plan names.
    recipe = shipped.recipe(name)
    with SweepStore.open_existing(plan.store) as db:
        meta = db.meta()
    assert meta["spec_sha256"] == source.sha256
    assert meta["data_sha256"] == content["public_data_sha256"] == header["public_data_sha256"]
    assert int(meta["seed"]) == recipe["seed"]
    # The planned spec differs from the bundled one in its budgets only.
    assert planned.columns == source.columns and planned.models == source.models
    assert [c.threshold for c in planned.criteria] == [c.threshold for c in source.criteria]
    # What release will charge, recomputed from the planned spec and the shortlist, is the
    # plan's total, within the spec's; and the plan meets the recipe's release probability.
    candidates = [find_configuration(planned, c["id"]) for c in header["configurations"]]
    cost = selection_cost(
        planned,
        fit_once=content["fit_once"],
        candidates=candidates,
        rows=167_000,
        stop_probability=content["stop_probability"],
    )
    assert cost.total == pytest.approx(content["total_epsilon"], rel=1e-9)
    assert cost.total <= planned.privacy.total_epsilon
    assert content["release_probability"] >= recipe["release_probability"]
    html = plan.html.read_text()
    assert "<html" in html[:400].lower()
    # plan.html sets the planned budgets beside the spec's own ([ux] 7).
    assert content["spec_budgets"]["criteria"] == {c.name: c.epsilon for c in source.criteria}
    assert "the spec's epsilon" in html and "the spec allows" in html


def test_births_plans_below_2_and_births_pure_is_pure():
    births = shipped.shipped_plan("births").content
    assert births["total_epsilon"] <= 2 and births["total_delta"] <= 1e-6
    pure = shipped.shipped_plan("births-pure").content
    assert pure.get("total_delta", 0.0) == 0.0
    # #59: pure DP at most 2.5 at P(release) 0.9 (the weighted Laplace fit, once).
    assert pure["total_epsilon"] <= 2.5 and pure["release_probability"] >= 0.9
    assert load_spec(bundled_spec("births-pure")).privacy.total_delta == 0


def test_a_stale_shipped_plan_is_refused_with_the_fix(tmp_path, monkeypatch):
    # A copy of public_data whose births spec changed (its hash): the plan is refused.
    fake = tmp_path / "public_data"
    shutil.copytree(REPO / "public_data", fake)
    configs = tmp_path / "configs"
    shutil.copytree(REPO / "configs", configs)
    with (configs / "births.yaml").open("a") as fh:
        fh.write("# edited\n")
    from synthflow import resources

    real = resources._directory

    def directory(package: str) -> Path:
        return {"synthflow._configs": configs, "synthflow._public_data": fake}.get(
            package, real(package)
        )

    monkeypatch.setattr(resources, "_directory", directory)
    with pytest.raises(ConfigError, match="ship-plan births"):
        shipped.shipped_plan("births")


def test_release_without_candidates_names_the_fix_for_a_spec_without_a_plan(tmp_path, capsys):
    code = main(
        ["release", "example_small", "--data", "x.csv", "--public", "--out",
         str(tmp_path / "r"), "--private-dir", str(tmp_path / "p")]
    )  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "give --candidates" in err and "births, births-pure" in err
    assert not (tmp_path / "r").exists() and not (tmp_path / "p").exists()


@pytest.mark.slow
def test_release_births_uses_the_shipped_plan_on_a_file_it_never_saw(tmp_path, capsys):
    # The steward's command, with no --candidates and no --plan, on the embedded
    # simulated 167K-row file (the plan's sweep ran on another draw). A single attempt
    # releases with probability about 0.95; the file is public, so a seed fixes one.
    data = public_data_file("nvss_like_2019.csv.gz")
    out, enclave = tmp_path / "release", tmp_path / "enclave"
    code = main(
        ["release", "births", "--data", str(data), "--ledger", str(tmp_path / "ledger.jsonl"),
         "--out", str(out), "--private-dir", str(enclave), "--quiet", "--public", "--seed", "7"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert "using the plan shipped for 'births'" in err
    plan = shipped.shipped_plan("births").content
    assert code == 0, err
    acc = json.loads((out / "acceptance.json").read_text())
    assert acc["passed"] is True
    assert acc["budget"]["total_epsilon"] == pytest.approx(plan["total_epsilon"])
    assert acc["budget"]["total_epsilon"] <= 2 and acc["budget"]["total_delta"] <= 1e-6
    assert acc["budget_plan"]["planned_spec_sha256"] == plan["planned_spec_sha256"]
    assert acc["budget_plan"]["plan_sha256"] == file_sha256(shipped.shipped_plan("births").plan)
    # The planned spec derives from the bundled one: its provenance is not confirmed.
    assert "bundled spec 'births'" in acc["provenance_warning"]
    # The datasheet says how the total was composed, and why it is charged once.
    readme = (out / "README.md").read_text()
    assert "composed exactly" in readme and "privacy loss" in readme  # #59, in words
    assert "there is no factor 2" in readme
    assert "1/n = " in readme  # what delta means against the file's size
    assert main(["audit", str(out)]) == 0


@pytest.mark.slow
def test_demo_releases_from_the_shipped_plan_without_sweeping(tmp_path):
    out = tmp_path / "demo"
    result = run_main_job(out, show_progress=False, seed=3)
    assert not (out / "new_plan").exists()  # no sweep, no new plan
    plan = shipped.shipped_plan("births")
    assert (out / "plan" / "plan.json").read_bytes() == plan.plan.read_bytes()
    assert result.audit.ok, result.audit.failures
    acc = json.loads((result.release_dir / "acceptance.json").read_text())
    assert acc["passed"] is True
    assert acc["budget"]["total_epsilon"] == pytest.approx(plan.content["total_epsilon"])
    assert result.epsilon_spent == pytest.approx(plan.content["total_epsilon"])
    summary = result.summary()
    assert f"spent        epsilon {plan.content['total_epsilon']:.3g} (delta 1e-06) of 2" in summary
    assert "delta: the chance" in summary
    # audit.txt is what 'synthflow audit' prints: the checks, the WARN lines (the
    # summary counts them) and what cannot be checked; the datasheet names the install.
    audit = (out / "audit.txt").read_text()
    assert audit.count("\nWARN  ") + audit.startswith("WARN  ") == len(result.audit.warnings)
    assert "not checked (cannot be" in audit
    assert "pip install synthflow-dp==" in (result.release_dir / "README.md").read_text()
    # rm -rf the demo, run it again in the same place: its new ledger is not taken for
    # a rollback of the old one (the ledger-head record of #45 is keyed by path).
    shutil.rmtree(out)
    assert run_main_job(out, show_progress=False, seed=3).audit.ok


def test_space_births_2024_is_the_papers_space_and_budget(capsys):
    spec = load_spec(bundled_spec("births-2024"))
    assert spec.privacy.total_epsilon == 10 and spec.privacy.generator_epsilon == 4
    assert {m.model for m in spec.models} >= {"workload", "privbayes", "mwem", "mst", "aim"}
    cost = selection_cost(spec, fit_once=False)  # Liu-Talwar: 2 x (4 + 0.99)
    assert cost.total == pytest.approx(9.98)
    assert main(["space", "births-2024"]) == 0
    assert "privbayes" in capsys.readouterr().out


@pytest.mark.slow
def test_ship_plan_remakes_the_shipped_plan_from_its_sweep(tmp_path, capsys):
    # The command that remade public_data/births.plan.*, resuming the shipped sweep (all
    # 240 runs stored, so nothing is run again) on the regenerated seeded public draw:
    # the same planned spec, shortlist and plan.json, byte for byte.
    shipped_births = shipped.shipped_plan("births")
    code = main(
        ["ship-plan", "births", "--out", str(tmp_path), "--store",
         str(shipped_births.store), "--quiet"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    for key, ship in shipped.FILES.items():
        if key in ("plan.html", "sweep.db"):
            continue  # the report and the store hold the same figures in another form
        made = tmp_path / ship.format(name="births")
        assert made.read_bytes() == public_data_file(ship.format(name="births")).read_bytes(), key
    assert not list(tmp_path.glob(".*.tmp"))  # the work directory is gone


def test_a_demo_whose_single_attempt_failed_says_so_and_what_it_spent(tmp_path):
    from synthflow.jobs.demo import MainJobResult

    result = MainJobResult(
        release_dir=None,
        plan_dir=tmp_path / "plan",
        audit=None,
        plan_total=1.756,
        epsilon_spent=1.756,
        delta_spent=1e-6,
        total_epsilon=2.0,
    )
    text = result.summary()
    assert "spent        epsilon 1.76 (delta 1e-06) of 2" in text
    assert "release      none: the single attempt failed" in text and "audit" not in text


def test_plan_rows_problem_says_and_refuses_by_how_far_n_is_from_the_plans():
    from synthflow.release.plan_checks import plan_rows_problem

    plan = shipped.shipped_plan("births").content
    n = plan["noise_figures"][0]["n"]
    assert plan_rows_problem(plan, n) == ("", False)
    assert plan_rows_problem(plan, int(n * 1.09)) == ("", False)  # within 10%: silent
    said, refuse = plan_rows_problem(plan, int(n * 0.85))  # 15%: said, not refused
    assert "was not measured at this size" in said and not refuse
    said, refuse = plan_rows_problem(plan, int(n * 0.7))  # 30%: refused without --force
    assert refuse and f"synthflow ship-plan births --rows {int(n * 0.7)}" in said
    assert plan_rows_problem(None, 10) == ("", False)  # no plan, nothing to compare


def test_release_births_on_data_far_smaller_than_the_plans_is_refused_before_any_charge(
    tmp_path, capsys
):
    import numpy as np
    import pandas as pd

    # 76K rows of the embedded file (public), 37% below the nearest shipped plan's 120K
    # (births@120000; births' own is 165K): its predicted P(release) was not measured
    # there (faithfulness moves with n).
    full = pd.read_csv(public_data_file("nvss_like_2019.csv.gz"))
    rows = np.random.default_rng(0).choice(len(full), 76_000, replace=False)
    data = tmp_path / "smaller.csv"
    full.iloc[np.sort(rows)].to_csv(data, index=False)
    ledger = tmp_path / "ledger.jsonl"
    argv = ["release", "births", "--data", str(data), "--ledger", str(ledger), "--out",
            str(tmp_path / "r"), "--private-dir", str(tmp_path / "e"), "--quiet"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "the plan was made for 118,821 rows" in err
    assert "synthflow ship-plan births --rows" in err
    assert "Nothing was spent" in err
    assert not (tmp_path / "e").exists() and not (tmp_path / "r").exists()
    assert not ledger.exists() or '"what"' not in ledger.read_text()

"""A plan of zCDP parts (#37): Gaussian ``workload`` and Gaussian regression fit, end to end.

Sweep -> plan -> ``release --plan`` -> audit on the 10K public sample with the loose
spec: the plan must choose a single attempt (a many-attempt selection cannot carry the
Gaussian parts), state the total that ``release`` charges (every part composed exactly
by its privacy loss distribution, #59: below the zCDP composition recomputed here from
the test's own arithmetic), and the release must charge exactly that and audit.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import yaml

from synthflow.loader import load_spec
from synthflow.plan.job import plan_budget
from synthflow.privacy import pld, zcdp
from synthflow.privacy.ledger import Ledger
from synthflow.release.audit import audit_release
from synthflow.release.cost import SINGLE_ATTEMPT
from synthflow.release.exact_cost import EXACT_FORMULA, attempt_mechanisms
from synthflow.release.job import run_release
from synthflow.space import find_configuration
from synthflow.sweep.job import run_sweep

sys.path.insert(0, str(Path(__file__).parent))

from loose_spec import release_binning_ids, write_loose_spec

DELTA = 5e-7


@pytest.fixture(scope="module")
def planned(nvss_10k: Path, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("zcdp")
    path = write_loose_spec(root / "loose.yaml")
    doc = yaml.safe_load(path.read_text())
    for c in doc["acceptance"]["criteria"]:
        if c["kind"] == "regression_coefficients":
            c.update(noise="gaussian", delta=DELTA)
    doc["space"]["models"] = [
        {"model": "workload", "grid": {"noise": "gaussian", "delta": DELTA, "iters": 400}}
    ]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    spec = load_spec(path)
    store = root / "sweep.db"
    run_sweep(
        spec, nvss_10k, store, repeats=3, workers=1, ids=release_binning_ids(spec),
        generator_epsilons=[1.0, 2.0], show_progress=False,
    )  # fmt: skip
    out = root / "plan"
    # At 10K rows a single attempt of this spec passes about 1 in 8 (measured 0.12 at
    # the largest budgets): the test checks the accounting, not the release rate.
    plan = plan_budget(
        path, store, nvss_10k, out, show_progress=False, target_pass=0.05,
        release_probability=0.05,
    )  # fmt: skip
    return spec, out, plan


@pytest.mark.slow
def test_plan_is_a_single_attempt_charged_in_zcdp(planned) -> None:
    _, out, plan = planned
    assert plan["selection"] == SINGLE_ATTEMPT and plan["stop_probability"] == 1.0
    assert plan["total_delta"] == pytest.approx(2 * DELTA)
    fit = next(c for c in plan["criteria"] if c["name"] == "regression_coef_error")
    assert fit["mechanism"] == "functional mechanism (gaussian)"
    # The test's own arithmetic: both parts' rho at their own (epsilon, delta), summed,
    # converted once at the two deltas, plus the other criteria by basic composition.
    eps_gen, eps_fit = plan["generator_epsilon"], fit["epsilon"]
    rho = zcdp.zcdp_rho(eps_gen, delta=DELTA) + zcdp.zcdp_rho(eps_fit, delta=DELTA)
    others = math.fsum(c["epsilon"] for c in plan["criteria"]) - eps_fit
    in_zcdp = zcdp.zcdp_epsilon(rho, delta=2 * DELTA) + others
    assert in_zcdp < eps_gen + eps_fit + others  # zCDP: below basic composition
    # Every part has a PLD (#59): the plan states the exact composition, below zCDP, and
    # above the Gaussian parts alone composed exactly (the criteria cost something).
    assert plan["formula"] == EXACT_FORMULA
    assert plan["total_epsilon"] < in_zcdp - 0.01
    spec = load_spec(out / "spec.yaml")
    doc = yaml.safe_load((out / "candidates.yaml").read_text())
    cands = [find_configuration(spec, c["id"]) for c in doc["configurations"]]
    attempts = attempt_mechanisms(spec, cands, fit_once=plan["fit_once"])
    assert attempts is not None
    gaussian = max(pld.epsilon([m for m in a if m.sigma > 0], delta=2 * DELTA) for a in attempts)
    assert gaussian < plan["total_epsilon"]


def test_plan_html_says_what_a_single_attempt_risks(planned) -> None:
    # [ux] 7: the label said "at stop probability 0.05" for a single attempt, and no
    # sentence said what a failure costs.
    _, out, plan = planned
    html = (out / "plan.html").read_text()
    assert "P(the single attempt releases)" in html and "at stop probability" not in html
    fail = f"{100 * (1 - plan['release_probability']):.0f}%"
    assert f"{fail} (predicted) it fails" in " ".join(html.split())
    assert f"spends epsilon {plan['total_epsilon']:.4g} and publishes nothing" in " ".join(
        html.split()
    )


def test_release_with_the_zcdp_plan_charges_it_and_audits(planned, nvss_10k, tmp_path):
    _, out, plan = planned
    rel = None
    for seed in range(40):  # independent selections until one passes (about 1 in 8 do)
        enclave = tmp_path / f"enclave{seed}"
        rel = run_release(
            out / "spec.yaml", nvss_10k, out / "candidates.yaml", tmp_path / f"release{seed}",
            enclave, seed=seed, public=True, show_progress=False, plan_path=out / "plan.json",
        )  # fmt: skip
        spent = Ledger(total_epsilon=100, total_delta=0.5, path=enclave / "ledger.jsonl")
        assert spent.spent_epsilon == pytest.approx(plan["total_epsilon"])
        assert spent.spent_delta == pytest.approx(plan["total_delta"])
        if rel is not None:
            break
    assert rel is not None, "no selection of 40 released (each passes about 1 in 8)"
    acc = json.loads((rel / "acceptance.json").read_text())
    assert acc["budget"]["total_epsilon"] == pytest.approx(plan["total_epsilon"])
    assert acc["budget"]["exact_epsilon"] == pytest.approx(plan["total_epsilon"])
    report = audit_release(rel)
    assert report.ok, report.failures
    fit = next(c for c in acc["criteria"] if c["name"] == "regression_coef_error")
    sd = fit["noise_sd"]
    fit["noise_sd"] = sd / 2  # a forged Gaussian fit sd fails the audit
    (rel / "acceptance.json").write_text(json.dumps(acc))
    assert not audit_release(rel).ok
    fit["noise_sd"] = sd
    acc["budget"]["total_epsilon"] = plan["total_epsilon"] - 0.1  # a forged smaller total
    (rel / "acceptance.json").write_text(json.dumps(acc))
    assert not audit_release(rel).ok

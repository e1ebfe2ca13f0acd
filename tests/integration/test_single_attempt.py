"""A single attempt (stop probability 1): charged once by basic composition (issue #37).

One configuration, one flow and its DP evaluation, released if it passes and nothing
otherwise: the outcome is a post-processing of that attempt's DP outputs, so it costs
eps_gen + eps_eval, not Liu-Talwar's twice that. These tests check the charge, that a
failure ends the selection for good (a resume never tries again), the CLI, the audit's
recomputation and the planner's choice.
"""

from __future__ import annotations

import json

import pytest
import yaml
from selection_support import private_selection

from synthflow.cli import main
from synthflow.errors import ConfigError
from synthflow.loader import load_spec
from synthflow.privacy import pld
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.release import AttemptResult, audit_release, selection_cost
from synthflow.release.cost import SINGLE_ATTEMPT
from synthflow.release.exact_cost import generator_mechanisms
from synthflow.space import expand_space


def _counting_attempt(passed: bool, calls: list[str]):
    def attempt(cfg, ledger, rng, fit):
        calls.append(cfg.id)
        ledger.charge("toy flow", epsilon=ledger.total_epsilon)  # the whole attempt budget
        return AttemptResult(passed=passed, transcript={}, payload=cfg.id)

    return attempt


def test_single_attempt_costs_one_attempt(births_spec, small_spec):
    one = selection_cost(small_spec, fit_once=False, stop_probability=1.0)
    assert one.theorem == SINGLE_ATTEMPT and one.single_attempt
    assert one.total == pytest.approx(2.0 + 0.3)  # example_small: eps_gen 2, checks 0.3
    assert selection_cost(small_spec, fit_once=False).total == pytest.approx(2 * (2.0 + 0.3))
    # With the once-per-release fit: (eps_gen + eps_eval - eps_fit) + eps_fit, 1x.
    fit = selection_cost(births_spec, fit_once=True, stop_probability=1.0)
    assert fit.total == pytest.approx(
        births_spec.privacy.generator_epsilon + births_spec.evaluation_epsilon
    )
    assert fit.total_delta == 0.0
    doc = one.to_json()
    assert doc["selection_factor"] == 1 and doc["theorem"] == SINGLE_ATTEMPT
    assert doc["total_epsilon"] == pytest.approx(one.total)


@pytest.mark.parametrize("passed", [False, True])
def test_one_attempt_then_the_selection_is_over(tmp_path, small_spec, passed):
    calls: list[str] = []
    candidates = expand_space(small_spec)
    dataset = Ledger(total_epsilon=10.0, path=tmp_path / "dataset.jsonl")
    kwargs = dict(
        attempt=_counting_attempt(passed, calls),
        enclave_dir=tmp_path / "e",
        rng=PrivacyRNG.from_seed(3),
        stop_probability=1.0,
        dataset_ledger=dataset,
    )
    out = private_selection(small_spec, candidates, **kwargs)
    assert out.attempts == 1 and len(calls) == 1
    assert (out.configuration is not None) == passed
    # Charged once, 1 x (eps_gen + eps_eval), in both ledgers.
    assert dataset.spent_epsilon == pytest.approx(2.3)
    enclave = Ledger(total_epsilon=100, path=tmp_path / "e" / "ledger.jsonl")
    assert enclave.spent_epsilon == pytest.approx(2.3)
    # Re-running the same selection never tries again nor charges: a pass is handed
    # back; a failure ended the selection, and the re-run says its budget is spent.
    if passed:
        again = private_selection(small_spec, candidates, **kwargs)
        assert again.attempts == 1 and again.configuration == out.configuration
    else:
        with pytest.raises(ConfigError, match="already ended without a release"):
            private_selection(small_spec, candidates, **kwargs)
    assert len(calls) == 1 and dataset.spent_epsilon == pytest.approx(2.3)
    coins = [
        json.loads(line)
        for line in (tmp_path / "e" / "transcript.jsonl").read_text().splitlines()
        if '"coin"' in line
    ]
    assert all(c["stop"] for c in coins) and len(coins) == (0 if passed else 1)


def test_cli_single_attempt_release_audits(tmp_path, small_spec, small_csv):
    cands = tmp_path / "candidates.yaml"
    configs = [c.to_json() for c in expand_space(small_spec) if c.letters == "aaaa"]
    cands.write_text(yaml.safe_dump({"spec_sha256": small_spec.sha256, "configurations": configs}))
    released = 0
    for i in range(6):  # each try is one attempt; some pass (the toy spec's pass rate is high)
        out = tmp_path / f"release{i}"
        rc = main(
            ["release", small_spec.path, "--data", str(small_csv), "--candidates", str(cands),
             "--out", str(out), "--private-dir", str(tmp_path / f"enclave{i}"), "--seed", str(i),
             "--public", "--quiet", "--stop-probability", "1"]
        )  # fmt: skip
        assert rc in (0, 1)
        spent = Ledger(total_epsilon=100, path=tmp_path / f"enclave{i}" / "ledger.jsonl")
        assert spent.spent_epsilon == pytest.approx(2.3)  # one attempt's budget, not 4.6
        if rc == 0:
            released += 1
            acc = json.loads((out / "acceptance.json").read_text())
            assert acc["budget"]["theorem"] == SINGLE_ATTEMPT
            assert acc["budget"]["total_epsilon"] == pytest.approx(2.3)
            readme = (out / "README.md").read_text()
            assert "epsilon = 2.3 differentially private" in readme
            # the single attempt's words, never Liu-Talwar's doubling
            assert "a single attempt" in readme and "charged once" in readme
            assert "The factor 2 pays for private selection" not in readme
            report = audit_release(out)
            assert report.ok, report.failures
            assert any(
                n.startswith("selection accounting (single attempt") for n, *_ in report.checks
            )
            # a forged Liu-Talwar total on a single-attempt budget fails the audit
            acc["budget"]["total_epsilon"] = 4.6
            (out / "acceptance.json").write_text(json.dumps(acc))
            assert not audit_release(out).ok
    assert released >= 1


def test_a_crashed_single_attempt_resumes_only_as_a_single_attempt(tmp_path, small_spec):
    # The 1x charge holds for one attempt only: a selection started as a single attempt
    # cannot be continued with gamma < 1 (many attempts) under that charge, and a crash
    # inside the attempt is that attempt's failure: never redone, never added to (#45).
    candidates = expand_space(small_spec)
    dataset = Ledger(total_epsilon=10.0, path=tmp_path / "dataset.jsonl")
    calls: list[str] = []

    def crash(cfg, ledger, rng, fit):
        calls.append(cfg.id)
        ledger.charge("toy flow", epsilon=ledger.total_epsilon)
        raise KeyboardInterrupt  # the process stops inside the attempt

    common = dict(enclave_dir=tmp_path / "e", rng=PrivacyRNG.from_seed(5), dataset_ledger=dataset)
    with pytest.raises(KeyboardInterrupt):
        private_selection(small_spec, candidates, attempt=crash, stop_probability=1.0, **common)
    assert dataset.spent_epsilon == pytest.approx(2.3)
    for gamma in (0.0, 0.5):
        with pytest.raises(ConfigError, match="stop-probability"):
            private_selection(
                small_spec,
                candidates,
                attempt=_counting_attempt(False, calls),
                stop_probability=gamma,
                **common,
            )
    out = private_selection(
        small_spec,
        candidates,
        attempt=_counting_attempt(True, calls),
        stop_probability=1.0,
        **common,
    )
    # the crashed attempt was the single attempt: a failure, nothing redone
    assert out.configuration is None and out.attempts == 1 and len(calls) == 1
    with pytest.raises(ConfigError, match="already ended"):
        private_selection(
            small_spec, candidates, attempt=_counting_attempt(True, calls), stop_probability=1.0,
            **common,
        )  # fmt: skip
    assert len(calls) == 1 and dataset.spent_epsilon == pytest.approx(2.3)


def test_a_gaussian_workload_releases_as_a_single_attempt_with_its_delta(
    tmp_path, small_spec, small_csv
):
    """(epsilon, delta) workload (#37): one attempt charges (eps_gen + eps_eval, delta_gen)."""
    text = open(small_spec.path).read()
    budget = "generator_epsilon: 2.0\n"
    text = text.replace(budget, budget + "  total_delta: 1.0e-6\n")
    text = text[: text.index("\nspace:")] + (
        "\nspace:\n  min_count: [2]\n  models:\n    - model: workload\n"
        "      grid: {noise: gaussian, delta: 1.0e-6, iters: 200}\n"
    )
    spec_path = tmp_path / "small_gauss.yaml"
    spec_path.write_text(text)
    spec = load_spec(spec_path)
    (cfg,) = [c for c in expand_space(spec) if c.letters == "aaaa"]
    cost = selection_cost(spec, fit_once=False, candidates=[cfg], stop_probability=1.0)
    # composed exactly (synthflow.privacy.pld): the generator's Gaussian marginals and the pure
    # criteria by their PLDs, below basic composition's 2 + 0.3
    assert cost.single_attempt and cost.total == cost.exact_epsilon
    letters = tuple(sorted(cfg.transformations.items()))
    own = generator_mechanisms(spec, cfg.model, cfg.hyperparameters, letters, 2.0)
    assert own is not None
    gaussian = pld.epsilon(own, delta=1e-6)
    assert gaussian < cost.total < 2.3 - 0.2
    assert cost.total_delta == 1e-6
    # Liu-Talwar cannot carry delta: a many-attempt selection is Papernot-Steinke's.
    assert not selection_cost(
        spec, fit_once=False, candidates=[cfg], stop_probability=0.5, rows=600
    ).single_attempt
    cands = tmp_path / "candidates.yaml"
    doc = {"spec_sha256": spec.sha256, "configurations": [cfg.to_json()]}
    cands.write_text(yaml.safe_dump(doc))
    released = 0
    for i in range(4):
        out = tmp_path / f"release{i}"
        rc = main(
            ["release", str(spec_path), "--data", str(small_csv), "--candidates", str(cands),
             "--out", str(out), "--private-dir", str(tmp_path / f"enclave{i}"), "--seed", str(i),
             "--public", "--quiet", "--stop-probability", "1"]
        )  # fmt: skip
        assert rc in (0, 1)
        enclave = Ledger(
            total_epsilon=100, total_delta=0.5, path=tmp_path / f"enclave{i}" / "ledger.jsonl"
        )
        assert enclave.spent_epsilon == pytest.approx(cost.total)  # the exact figure
        assert enclave.spent_delta == pytest.approx(1e-6)
        if rc == 0:
            released += 1
            acc = json.loads((out / "acceptance.json").read_text())
            assert acc["budget"]["theorem"] == SINGLE_ATTEMPT
            assert acc["budget"]["total_delta"] == pytest.approx(1e-6)
            report = audit_release(out)
            assert report.ok, report.failures
            assert acc["budget"]["total_epsilon"] == pytest.approx(cost.total)
            honest = json.dumps(acc)
            acc["budget"]["total_delta"] = 0.0  # a forged pure-DP claim fails the audit
            (out / "acceptance.json").write_text(json.dumps(acc))
            assert not audit_release(out).ok
            acc = json.loads(honest)  # a total below the recomputed exact one fails too
            acc["budget"]["total_epsilon"] = cost.total - 0.01
            (out / "acceptance.json").write_text(json.dumps(acc))
            assert any("budget total" in f for f in audit_release(out).failures)
    assert released >= 1

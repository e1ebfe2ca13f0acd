"""Private selection over a shortlist mixing pure and (epsilon, delta) candidates.

Papernot-Steinke accounting ([gans] item 4): charged once, (epsilon, delta), before the
first attempt; the release package states the theorem and the audit recomputes it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats
from selection_support import private_selection

# pytest's default (prepend) import mode puts this directory on sys.path: one helper,
# not a second copy of how a forger refreshes the manifest
from test_release import _refresh_manifest

from synthflow.cli import main
from synthflow.errors import ConfigError
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.release import AttemptResult, audit_release, selection_cost


def _release_argv(tmp_path: Path, spec, cands, data: Path, *extra: str) -> list[str]:
    """``synthflow release`` on ``data`` with ``cands`` as the shortlist (written here)."""
    shortlist = tmp_path / "candidates.yaml"
    shortlist.write_text(
        yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": [c.to_json() for c in cands]})
    )
    return [
        "release",
        str(spec.path),
        "--data",
        str(data),
        "--candidates",
        str(shortlist),
        "--out",
        str(tmp_path / "release"),
        "--private-dir",
        str(tmp_path / "enclave"),
        "--public",
        *extra,
    ]


def _toy_attempt(p):
    def attempt(cfg, ledger, rng, fit):
        # what a real attempt may spend: the generator's (epsilon, delta) and the checks
        ledger.charge("toy flow", epsilon=ledger.total_epsilon, delta=ledger.total_delta)
        return AttemptResult(passed=rng.bernoulli(p), transcript={}, payload=cfg.id)

    return attempt


def test_charged_once_with_delta_and_attempts_are_geometric(tmp_path, mixed_shortlist):
    spec, cands = mixed_shortlist
    p, gamma, runs = 0.2, 0.3, 400
    cost = selection_cost(spec, fit_once=False, candidates=cands, rows=600, stop_probability=gamma)
    attempts, released = [], 0
    rng = PrivacyRNG.from_seed(5)
    for i in range(runs):
        enclave = tmp_path / f"e{i}"
        out = private_selection(
            spec,
            cands,
            attempt=_toy_attempt(p),
            enclave_dir=enclave,
            rng=rng,
            stop_probability=gamma,
            rows=600,
        )
        attempts.append(out.attempts)
        released += out.configuration is not None
        ledger = Ledger(total_epsilon=100, total_delta=0.5, path=enclave / "ledger.jsonl")
        assert len(ledger.charges) == 1  # one charge, whatever the number of attempts
        assert ledger.spent_epsilon == pytest.approx(cost.total, rel=1e-12)
        assert ledger.spent_delta == spec.privacy.total_delta
        assert ledger.charges[0].mechanism == "papernot-steinke"
    # Attempts run until a pass or the coin: Geometric(1 - (1-p)(1-gamma)) = Geometric(0.44).
    rate = 1 - (1 - p) * (1 - gamma)
    observed = np.bincount(np.minimum(attempts, 6), minlength=7)[1:]
    probs = [stats.geom.pmf(k, rate) for k in range(1, 6)] + [stats.geom.sf(5, rate)]
    assert stats.chisquare(observed, np.array(probs) * runs).pvalue > 1e-4
    # P(release) = p / rate = 0.4545; 400 runs: sd 0.025, so 4 sd is 0.1
    assert abs(released / runs - p / rate) < 0.1


def test_refused_before_any_charge_without_a_stop_probability(tmp_path, mixed_shortlist):
    spec, cands = mixed_shortlist
    with pytest.raises(ConfigError, match="Papernot-Steinke"):
        private_selection(
            spec,
            cands,
            attempt=_toy_attempt(1.0),
            enclave_dir=tmp_path / "e",
            rng=PrivacyRNG.from_seed(0),
            rows=600,
        )
    assert not (tmp_path / "e" / "ledger.jsonl").exists()


@pytest.mark.slow
def test_release_with_a_gan_and_privbayes_audits(tmp_path, mixed_shortlist, small_csv, capsys):
    pytest.importorskip("torch")
    spec, cands = mixed_shortlist
    out, enclave = tmp_path / "release", tmp_path / "enclave"
    argv = _release_argv(
        tmp_path,
        spec,
        cands,
        small_csv,
        "--stop-probability",
        "0.3",
        "--seed",
        "2",  # a fixed draw in which a DPCTGAN attempt fails, then a PrivBayes one passes
        "--quiet",
        "--show-attempts",
    )
    assert main(argv) == 0, capsys.readouterr().err
    events = [json.loads(x) for x in (enclave / "transcript.jsonl").read_text().splitlines()]
    drawn = {e["config_id"] for e in events if e["event"] == "draw"}
    assert any(i.startswith("dpctgan") for i in drawn)  # the GAN really ran in the loop
    acc = json.loads((out / "acceptance.json").read_text())
    budget = acc["budget"]
    assert budget["theorem"] == "papernot-steinke"
    assert budget["stop_probability"] == 0.3 and budget["total_delta"] == 1e-6
    expected = selection_cost(
        spec, fit_once=False, candidates=cands, rows=600, stop_probability=0.3
    ).total
    assert budget["total_epsilon"] == pytest.approx(expected, rel=1e-12)
    ledger = Ledger(total_epsilon=100, total_delta=0.5, path=enclave / "ledger.jsonl")
    assert [c.mechanism for c in ledger.charges] == ["papernot-steinke"]
    assert ledger.spent_epsilon == pytest.approx(expected, rel=1e-12)
    assert "Papernot and Steinke" in (out / "README.md").read_text()
    report = audit_release(out)
    assert report.ok, report.failures
    # The audit recomputes the accounting: a published stop probability that was not the
    # one charged (here: a cheaper-looking one) is caught.
    budget["stop_probability"] = 0.5
    (out / "acceptance.json").write_text(json.dumps(acc, indent=2) + "\n")
    _refresh_manifest(out)
    bad = audit_release(out)
    assert not bad.ok
    assert any("budget total" in f for f in bad.failures)


def test_release_cli_refuses_gamma_zero_before_anything(
    tmp_path, mixed_shortlist, small_csv, capsys
):
    spec, cands = mixed_shortlist
    rc = main(_release_argv(tmp_path, spec, cands, small_csv, "--seed", "1"))
    err = capsys.readouterr().err
    assert rc == 2 and "give --stop-probability in (0, 1)" in err
    assert "private selection: running" not in err  # refused before the progress display
    assert not (tmp_path / "enclave").exists() and not (tmp_path / "release").exists()


def test_fit_once_is_inside_the_charge_not_on_top_of_it(tmp_path, births_spec):
    # With --fit-once the fit is composed inside the Renyi curve; the enclave ledger's
    # selection charge plus the fit's own charge must add up to exactly that epsilon
    # (charging the whole epsilon and the fit again would double-count the fit).
    from synthflow.space import expand_space

    space = expand_space(births_spec)
    cands = [c for c in space if c.model == "workload"][:1] + [
        c for c in space if c.model == "dpctgan" and c.hyperparameters["noise_multiplier"] == 5
    ][:1]
    cost = selection_cost(
        births_spec, fit_once=True, candidates=cands, rows=10_000, stop_probability=0.2
    )
    assert cost.theorem == "papernot-steinke" and cost.fit_once
    fit_eps = next(c.epsilon for c in births_spec.criteria if c.kind == "regression_coefficients")

    def fit(ledger, rng):
        ledger.charge("regression fit, once per release", epsilon=fit_eps)
        return "fit"

    enclave = tmp_path / "e"
    shared = Ledger(total_epsilon=births_spec.privacy.total_epsilon, total_delta=1e-6)
    private_selection(
        births_spec,
        cands,
        attempt=_toy_attempt(1.0),
        enclave_dir=enclave,
        rng=PrivacyRNG.from_seed(0),
        stop_probability=0.2,
        fit_once=True,
        fit=fit,
        rows=10_000,
        dataset_ledger=shared,
    )
    ledger = Ledger(total_epsilon=100, total_delta=0.5, path=enclave / "ledger.jsonl")
    assert len(ledger.charges) == 2  # the selection, then the fit
    assert ledger.spent_epsilon == pytest.approx(cost.total, rel=1e-12)
    assert ledger.spent_epsilon <= births_spec.privacy.total_epsilon
    assert shared.spent_epsilon == pytest.approx(cost.total, rel=1e-12)  # charged once there

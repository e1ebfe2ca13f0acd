"""Private selection over a shortlist mixing pure and (epsilon, delta) candidates.

Papernot-Steinke accounting ([gans] item 4): charged once, (epsilon, delta), before the
first attempt; the release package states the theorem and the audit recomputes it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from synthflow.cli import main
from synthflow.config import load_spec
from synthflow.errors import ConfigError
from synthflow.ledger import Ledger
from synthflow.release import AttemptResult, audit_release, private_selection, selection_cost
from synthflow.rng import PrivacyRNG
from synthflow.space import expand_space

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """example_small.yaml with a delta budget and a small DPCTGAN grid; a mixed shortlist."""
    raw = yaml.safe_load((REPO / "configs" / "example_small.yaml").read_text())
    raw["privacy"].update(total_delta=1e-6, total_epsilon=8.0)
    raw["space"]["models"].append(
        {
            "model": "dpctgan",
            "grid": {
                "delta": 1e-8,
                "epochs": 2,
                "batch_size": 60,
                "noise_multiplier": 3.0,
                "embedding_dim": 16,
                "hidden": 32,
            },
        }
    )
    path = tmp_path_factory.mktemp("ps") / "spec.yaml"
    path.write_text(yaml.safe_dump(raw))
    spec = load_spec(path)
    cands = [c for c in expand_space(spec) if c.letters == "aaaa"]
    shortlist = [c for c in cands if c.model == "privbayes"][:2] + [
        c for c in cands if c.model == "dpctgan"
    ][:1]
    return spec, shortlist


def _toy_attempt(p):
    def attempt(cfg, ledger, rng, fit):
        # what a real attempt may spend: the generator's (epsilon, delta) and the checks
        ledger.charge("toy flow", epsilon=ledger.total_epsilon, delta=ledger.total_delta)
        return AttemptResult(passed=rng.bernoulli(p), transcript={}, payload=cfg.id)

    return attempt


def test_charged_once_with_delta_and_attempts_are_geometric(tmp_path, mixed):
    spec, cands = mixed
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


def test_refused_before_any_charge_without_a_stop_probability(tmp_path, mixed):
    spec, cands = mixed
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


def _fix_manifest(release: Path) -> None:
    manifest = json.loads((release / "MANIFEST.json").read_text())
    for name in manifest["files"]:
        manifest["files"][name] = hashlib.sha256((release / name).read_bytes()).hexdigest()
    (release / "MANIFEST.json").write_text(json.dumps(manifest))


def test_release_with_a_gan_and_privbayes_audits(tmp_path, mixed, small_csv, capsys):
    pytest.importorskip("torch")
    spec, cands = mixed
    shortlist = tmp_path / "candidates.yaml"
    shortlist.write_text(
        yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": [c.to_json() for c in cands]})
    )
    out, enclave = tmp_path / "release", tmp_path / "enclave"
    argv = [
        "release",
        str(spec.path),
        "--data",
        str(small_csv),
        "--candidates",
        str(shortlist),
        "--out",
        str(out),
        "--private-dir",
        str(enclave),
        "--stop-probability",
        "0.3",
        "--seed",
        "20",  # a fixed draw in which a DPCTGAN attempt fails, then a PrivBayes one passes
        "--public",
        "--quiet",
        "--show-attempts",
    ]
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
    _fix_manifest(out)
    bad = audit_release(out)
    assert not bad.ok
    assert any("budget total" in f for f in bad.failures)


def test_release_cli_refuses_gamma_zero_before_anything(tmp_path, mixed, small_csv, capsys):
    spec, cands = mixed
    shortlist = tmp_path / "candidates.yaml"
    shortlist.write_text(
        yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": [c.to_json() for c in cands]})
    )
    rc = main(
        [
            "release",
            str(spec.path),
            "--data",
            str(small_csv),
            "--candidates",
            str(shortlist),
            "--out",
            str(tmp_path / "release"),
            "--private-dir",
            str(tmp_path / "enclave"),
            "--seed",
            "1",
            "--public",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 2 and "give --stop-probability in (0, 1)" in err
    assert "private selection: running" not in err  # refused before the progress display
    assert not (tmp_path / "enclave").exists() and not (tmp_path / "release").exists()

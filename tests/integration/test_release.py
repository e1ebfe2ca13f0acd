"""Private selection, the release package and the audit (issue: release and audit)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats
from selection_support import enclave_ledger, private_selection

from synthflow.cli import main
from synthflow.errors import BudgetExceededError, SelectionPaused
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.release import AttemptResult, audit_release, selection_cost
from synthflow.space import expand_space

REPO = Path(__file__).resolve().parents[2]


def test_costs_follow_spec_md(births_spec):
    assert selection_cost(births_spec, fit_once=False).total == pytest.approx(9.98)
    assert selection_cost(births_spec, fit_once=True).total == pytest.approx(9.55)


def _toy_attempt(p):
    def attempt(cfg, ledger, rng, fit):
        ledger.charge("toy flow", epsilon=ledger.total_epsilon)
        return AttemptResult(passed=rng.bernoulli(p), transcript={}, payload=cfg.id)

    return attempt


def test_attempts_are_geometric_and_the_charge_does_not_depend_on_them(tmp_path, small_spec):
    p, runs = 0.3, 600
    candidates = expand_space(small_spec)
    attempts, charges = [], set()
    rng = PrivacyRNG.from_seed(12)
    for i in range(runs):
        enclave = tmp_path / f"e{i}"
        out = private_selection(
            small_spec, candidates, attempt=_toy_attempt(p), enclave_dir=enclave, rng=rng
        )
        attempts.append(out.attempts)
        charges.add(Ledger(total_epsilon=100, path=enclave / "ledger.jsonl").spent_epsilon)
    assert len(charges) == 1  # one charge, whatever the number of attempts
    assert charges.pop() == pytest.approx(2 * (2.0 + 0.3))
    # chi-square of the attempt counts against Geometric(p); bins 1..6 and >6
    observed = np.bincount(np.minimum(attempts, 7), minlength=8)[1:]
    probs = [stats.geom.pmf(k, p) for k in range(1, 7)] + [stats.geom.sf(6, p)]
    assert stats.chisquare(observed, np.array(probs) * runs).pvalue > 1e-4
    # power: Geometric(0.4) is rejected
    wrong = [stats.geom.pmf(k, 0.4) for k in range(1, 7)] + [stats.geom.sf(6, 0.4)]
    assert stats.chisquare(observed, np.array(wrong) * runs).pvalue < 1e-4


def test_an_enclave_ledger_opened_before_a_pause_reads_the_charge_once_locked(tmp_path, small_spec):
    # [shape]: the release job opens the selection's ledger, before the enclave lock is
    # taken; the selection reads it again once locked. A ledger object opened before
    # another run charged the file must see that charge: the continued selection
    # charges nothing more (without the re-read it would find "no selection charge").
    enclave = tmp_path / "e"
    candidates = expand_space(small_spec)
    stale = enclave_ledger(small_spec, enclave)  # opened now: the file does not exist yet
    kwargs = dict(attempt=_toy_attempt(0.0), enclave_dir=enclave, rng=PrivacyRNG.from_seed(3))
    with pytest.raises(SelectionPaused):
        private_selection(small_spec, candidates, max_attempts=2, **kwargs)
    spent = Ledger(total_epsilon=100, path=enclave / "ledger.jsonl").spent_epsilon
    assert spent > 0 and stale.spent_epsilon == 0  # charged by the first run's own object
    with pytest.raises(SelectionPaused):
        private_selection(small_spec, candidates, max_attempts=4, enclave_ledger=stale, **kwargs)
    assert stale.spent_epsilon == pytest.approx(spent)  # re-read, and nothing more charged
    assert Ledger(total_epsilon=100, path=enclave / "ledger.jsonl").spent_epsilon == spent


def test_stop_probability_stops_empty_handed(tmp_path, small_spec):
    out = private_selection(
        small_spec,
        expand_space(small_spec),
        attempt=_toy_attempt(0.0),
        enclave_dir=tmp_path / "e",
        rng=PrivacyRNG.from_seed(1),
        stop_probability=0.5,
    )
    assert out.configuration is None and out.attempts >= 1


def test_crash_and_restart_spend_no_more(tmp_path, small_spec):
    enclave = tmp_path / "e"
    candidates = expand_space(small_spec)
    rng = PrivacyRNG.from_seed(4)
    with pytest.raises(SelectionPaused):
        private_selection(
            small_spec,
            candidates,
            attempt=_toy_attempt(0.0),
            enclave_dir=enclave,
            rng=rng,
            max_attempts=3,
        )

    def crash(cfg, ledger, rng, fit):
        ledger.charge("toy flow", epsilon=1.0)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        private_selection(small_spec, candidates, attempt=crash, enclave_dir=enclave, rng=rng)
    out = private_selection(
        small_spec, candidates, attempt=_toy_attempt(1.0), enclave_dir=enclave, rng=rng
    )
    # 3 failures, the crashed 4th attempt counted as a 4th failure (#45), then a new draw
    assert out.attempts == 5
    ledger = Ledger(total_epsilon=100, path=enclave / "ledger.jsonl")
    assert ledger.spent_epsilon == pytest.approx(selection_cost(small_spec, fit_once=False).total)
    events = [json.loads(x) for x in (enclave / "transcript.jsonl").read_text().splitlines()]
    draws = [e for e in events if e["event"] == "draw"]
    assert [d["attempt"] for d in draws] == [1, 2, 3, 4, 5]
    crashed = [e for e in events if e["event"] == "attempt" and e.get("crashed")]
    assert [(e["attempt"], e["passed"]) for e in crashed] == [(4, False)]


@pytest.mark.parametrize("change", ["spec", "candidates", "stop_probability", "fit_once"])
def test_resume_with_another_mechanism_is_refused_before_any_attempt(tmp_path, births_spec, change):
    import dataclasses

    from synthflow.errors import ConfigError

    small_spec = births_spec  # has a regression criterion (fit_once)
    enclave = tmp_path / "e"
    candidates = [c for c in expand_space(births_spec) if c.model == "privbayes"][:6]
    kwargs = dict(attempt=_toy_attempt(0.0), enclave_dir=enclave, rng=PrivacyRNG.from_seed(2))
    with pytest.raises(SelectionPaused):
        private_selection(small_spec, candidates, max_attempts=2, **kwargs)
    spec, cands, extra = small_spec, candidates, {}
    if change == "spec":  # another threshold, same budgets: still a different mechanism
        spec = dataclasses.replace(small_spec, sha256="0" * 64)
    elif change == "candidates":
        cands = candidates[:1]
    elif change == "stop_probability":
        extra = {"stop_probability": 0.1}
    else:
        extra = {"fit_once": True, "fit": lambda ledger, rng: None}
    ran = []

    def attempt(cfg, ledger, rng, fit):
        ran.append(cfg)
        return AttemptResult(passed=True, transcript={}, payload=None)

    kwargs["attempt"] = attempt
    with pytest.raises(ConfigError, match="was started with another"):
        private_selection(spec, cands, max_attempts=5, **kwargs, **extra)
    assert ran == []
    ledger = Ledger(total_epsilon=100, path=enclave / "ledger.jsonl")
    assert len(ledger.charges) == 1  # nothing charged again


def test_overspend_refused_before_anything(tmp_path, small_spec, monkeypatch):
    enclave = tmp_path / "e"
    with pytest.raises(BudgetExceededError, match="private selection costs epsilon"):
        private_selection(
            _with_total(small_spec, 4.0),
            expand_space(small_spec),
            attempt=_toy_attempt(1.0),
            enclave_dir=enclave,
            rng=PrivacyRNG.from_seed(0),
        )
    assert not (enclave / "ledger.jsonl").exists()


def _with_total(spec, total):
    import dataclasses

    return dataclasses.replace(spec, privacy=dataclasses.replace(spec.privacy, total_epsilon=total))


@pytest.fixture()
def release_dir(tmp_path, small_spec, small_csv):
    cands = tmp_path / "candidates.yaml"
    cands.write_text(
        yaml.safe_dump(
            {
                "spec_sha256": small_spec.sha256,
                "configurations": [
                    c.to_json() for c in expand_space(small_spec) if c.letters == "aaaa"
                ],
            }
        )
    )
    out = tmp_path / "release"
    rc = main(
        [
            "release",
            small_spec.path,
            "--data",
            str(small_csv),
            "--candidates",
            str(cands),
            "--out",
            str(out),
            "--private-dir",
            str(tmp_path / "enclave"),
            "--seed",
            "3",
            "--public",
            "--quiet",
            "--max-attempts",
            "200",
        ]
    )
    assert rc == 0
    return out


def test_release_holds_only_publishable_files_and_audits(release_dir, capsys):
    assert sorted(p.name for p in release_dir.iterdir()) == [
        "MANIFEST.json",
        "README.md",
        "acceptance.json",
        "spec.yaml",
        "synthetic.csv",
    ]
    acc = json.loads((release_dir / "acceptance.json").read_text())
    assert "attempts" not in json.dumps(acc)
    assert acc["budget"]["total_epsilon"] == pytest.approx(2 * (2.0 + 0.3))
    for c in acc["criteria"]:
        assert {
            "name",
            "value",
            "threshold",
            "passed",
            "epsilon",
            "mechanism",
            "sensitivity",
            "noise_sd",
            "public_parameters",
        } <= set(c)
    readme = (release_dir / "README.md").read_text()
    assert "carry **no accuracy guarantee**" in readme
    assert "epsilon = 4.6 differentially private" in readme
    # The acceptance table: one row per criterion, its noise sd next to its value.
    section = readme.split("## Quality checks")[1].split("\n## ")[0]
    rows = [x for x in section.splitlines() if x.startswith("| `")]
    named = {c["name"]: c for c in acc["criteria"]}
    assert sorted(r.split("`")[1] for r in rows) == sorted(named)
    for r in rows:
        cells = [x.strip() for x in r.strip("|").split("|")]
        c = named[cells[0].strip("`")]
        assert cells[4] == f"{c['noise_sd']:.4g}" or "(simulated)" in cells[4]
    assert "delta below 1e-30" in readme  # the floating-point bound
    assert "no row is a real record" in readme  # the spec's unit (default), never "birth"
    assert audit_release(release_dir).ok
    assert main(["audit", str(release_dir)]) == 0
    assert capsys.readouterr().out.strip().endswith("audit passed")


def _refresh_manifest(release_dir):
    from synthflow.release.publish import sha256_file

    files = sorted(p.name for p in release_dir.iterdir() if p.name != "MANIFEST.json")
    (release_dir / "MANIFEST.json").write_text(
        json.dumps({"files": {f: sha256_file(release_dir / f) for f in files}})
    )


@pytest.mark.parametrize("fix_manifest", [False, True])
def test_tampering_with_a_row_creates_a_unique_record(release_dir, fix_manifest):
    df = pd.read_csv(release_dir / "synthetic.csv", dtype=str, keep_default_na=False)
    row = df.iloc[0].copy()
    candidates = [("age", v) for v in ("<18", "18-39", "40-64", ">64")] + [
        ("visits", v) for v in ("1", "2", "3-5", "6-10", ">10")
    ]
    keys = set(map(tuple, df.to_numpy()))
    for col, value in candidates:
        trial = row.copy()
        trial[col] = value
        if tuple(trial) not in keys:
            df.iloc[0] = trial
            break
    df.to_csv(release_dir / "synthetic.csv", index=False)
    if fix_manifest:
        _refresh_manifest(release_dir)
    report = audit_release(release_dir)
    assert not report.ok
    names = " ".join(report.failures)
    assert ("times" in names) if fix_manifest else ("hash synthetic.csv" in names)


@pytest.mark.parametrize(
    ("field", "value", "expect"),
    [
        ("value", 1e9, "decision"),
        ("threshold", 1e9, "threshold"),
        ("sensitivity", 1.0, "sensitivity"),
        ("epsilon", 5.0, "epsilon"),
        ("noise_sd", 1e-9, "noise sd"),
        ("mechanism", "gaussian", "mechanism"),
    ],
)
def test_tampering_with_published_numbers(release_dir, field, value, expect):
    path = release_dir / "acceptance.json"
    acc = json.loads(path.read_text())
    acc["criteria"][0][field] = value
    path.write_text(json.dumps(acc))
    _refresh_manifest(release_dir)  # a careful forger also fixes the hashes
    report = audit_release(release_dir)
    assert not report.ok
    assert any(f.startswith(f"{expect} {acc['criteria'][0]['name']}") for f in report.failures)


def test_tampering_with_the_budget(release_dir):
    path = release_dir / "acceptance.json"
    acc = json.loads(path.read_text())
    acc["budget"]["total_epsilon"] = 1.0
    path.write_text(json.dumps(acc))
    _refresh_manifest(release_dir)
    assert any(f.startswith("budget total") for f in audit_release(release_dir).failures)


def test_tampering_with_the_charged_evaluation_epsilon(release_dir):
    path = release_dir / "acceptance.json"
    acc = json.loads(path.read_text())
    acc["evaluation_epsilon_charged"] = 0.01
    path.write_text(json.dumps(acc))
    _refresh_manifest(release_dir)
    failures = audit_release(release_dir).failures
    assert any(f.startswith("evaluation epsilon charged") for f in failures)


def test_an_added_file_fails_even_when_listed(release_dir):
    (release_dir / "transcript.jsonl").write_text('{"event": "attempt"}\n')
    _refresh_manifest(release_dir)
    failures = audit_release(release_dir).failures
    assert any(f.startswith("file set") and "transcript.jsonl" in f for f in failures)


def test_a_rewritten_spec_fails_against_the_reviewers(release_dir, small_spec):
    text = (release_dir / "spec.yaml").read_text()
    (release_dir / "spec.yaml").write_text(text + "\n# harmless-looking edit\n")
    _refresh_manifest(release_dir)
    failures = audit_release(release_dir, spec_path=small_spec.path).failures
    assert any(f.startswith("release spec.yaml equals the reviewer's spec") for f in failures)


def test_values_swapped_between_equal_count_records_fail(release_dir):
    # Counts, 1-way margins and every public parameter stay the same; only the data
    # hash recorded in acceptance.json (which the forger did not rewrite) tells.
    df = pd.read_csv(release_dir / "synthetic.csv", dtype=str, keep_default_na=False)
    counts = df.value_counts()
    col = df.columns[-1]
    pairs = [
        (a, b)
        for a in counts.index
        for b in counts.index
        if a < b and counts[a] == counts[b] and a[-1] != b[-1] and a[:-1] != b[:-1]
    ]
    a, b = pairs[0]
    rows_a = (df.apply(tuple, axis=1) == a).to_numpy()
    rows_b = (df.apply(tuple, axis=1) == b).to_numpy()
    df.loc[rows_a, col], df.loc[rows_b, col] = b[-1], a[-1]
    df.to_csv(release_dir / "synthetic.csv", index=False)
    _refresh_manifest(release_dir)
    report = audit_release(release_dir)
    assert any(f.startswith("data hash in acceptance.json") for f in report.failures)


def test_audit_says_what_it_cannot_check(release_dir, capsys):
    assert main(["audit", str(release_dir)]) == 0
    out = capsys.readouterr().out
    assert "not checked" in out and "unless it is signed and audited with --key" in out


def test_swapped_file_fails_the_hash(release_dir, tmp_path):
    (release_dir / "README.md").write_text("a different datasheet\n")
    report = audit_release(release_dir)
    assert report.failures[0] == "hash README.md: SHA-256 differs from the manifest"
    assert [f.split(":")[0] for f in report.failures] == ["hash README.md", "datasheet regenerated"]
    assert main(["audit", str(release_dir)]) == 1


def test_release_refuses_a_foreign_shortlist(tmp_path, small_spec, small_csv, capsys):
    cands = tmp_path / "c.yaml"
    cands.write_text(yaml.safe_dump({"spec_sha256": "0" * 64, "configurations": []}))
    rc = main(
        [
            "release",
            small_spec.path,
            "--data",
            str(small_csv),
            "--candidates",
            str(cands),
            "--out",
            str(tmp_path / "r"),
            "--private-dir",
            str(tmp_path / "e"),
        ]
    )
    assert rc == 2 and "was screened with another spec" in capsys.readouterr().err
    assert not (tmp_path / "e").exists() and not (tmp_path / "r").exists()  # nothing spent


def test_approximate_dp_candidates_need_a_stop_probability(tmp_path, births_spec):
    # (epsilon, delta) candidates are accounted by Papernot-Steinke, whose bound needs a
    # finite mean number of attempts: gamma 0 is refused before anything is charged.
    mst = [c for c in expand_space(births_spec) if c.model == "mst"][:1]
    assert mst, "the births space lists MST"
    from synthflow.errors import ConfigError

    with pytest.raises(ConfigError, match="Papernot-Steinke, which needs a finite mean"):
        private_selection(
            births_spec,
            mst,
            attempt=_toy_attempt(1.0),
            enclave_dir=tmp_path / "e",
            rng=PrivacyRNG.from_seed(0),
        )
    assert not (tmp_path / "e" / "ledger.jsonl").exists()


def test_release_refuses_generators_that_need_public_data(tmp_path, births_spec, capsys):
    # MST (smartnoise: numpy's global RNG in its selection) still needs public data.
    gan = [c for c in expand_space(births_spec) if c.model == "mst"][:1]
    assert gan, "the births space lists MST"
    cands = tmp_path / "c.yaml"
    cands.write_text(
        yaml.safe_dump(
            {"spec_sha256": births_spec.sha256, "configurations": [c.to_json() for c in gan]}
        )
    )
    rc = main(
        [
            "release",
            births_spec.path,
            "--data",
            "unused.csv",
            "--candidates",
            str(cands),
            "--out",
            str(tmp_path / "r"),
            "--private-dir",
            str(tmp_path / "e"),
        ]
    )
    assert rc == 2
    assert "run only on data declared public" in capsys.readouterr().err
    assert not (tmp_path / "e").exists()


def test_killed_release_resumes_without_spending_twice(tmp_path, small_csv):
    """SIGKILL the real CLI mid-selection, re-run it: one charge, the same selection."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from synthflow.loader import load_spec

    raw = yaml.safe_load((REPO / "configs" / "example_small.yaml").read_text())
    raw["acceptance"]["criteria"][0]["threshold"] = -1.0  # never passes: selection keeps going
    # (--force below: the pre-flight rightly calls this spec hopeless)
    spec_path = tmp_path / "never.yaml"
    spec_path.write_text(yaml.safe_dump(raw))
    spec = load_spec(spec_path)
    cands = tmp_path / "candidates.yaml"
    cands.write_text(
        yaml.safe_dump(
            {
                "spec_sha256": spec.sha256,
                "configurations": [c.to_json() for c in expand_space(spec) if c.letters == "aaaa"],
            }
        )
    )
    enclave = tmp_path / "enclave"
    argv = [
        sys.executable,
        "-m",
        "synthflow",
        "release",
        str(spec_path),
        "--data",
        str(small_csv),
        "--candidates",
        str(cands),
        "--out",
        str(tmp_path / "release"),
        "--private-dir",
        str(enclave),
        "--ledger",
        str(tmp_path / "budget.jsonl"),
        "--quiet",
        "--force",
    ]
    proc = subprocess.Popen(
        argv, cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    transcript = enclave / "transcript.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if transcript.exists() and transcript.read_text().count('"event": "attempt"') >= 3:
            break
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = transcript.read_text().count('"event": "attempt"')
    assert done >= 3
    rerun = subprocess.run(
        [*argv, "--max-attempts", str(done + 2)],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rerun.returncode == 3 and "re-run the same command" in rerun.stderr  # paused
    ledger = Ledger(total_epsilon=100, path=enclave / "ledger.jsonl")
    assert len(ledger.charges) == 1  # the selection's one up-front charge
    assert ledger.spent_epsilon == pytest.approx(selection_cost(spec, fit_once=False).total)
    assert ledger.spent_epsilon <= spec.privacy.total_epsilon
    # The dataset's shared ledger holds the same single charge.
    shared = Ledger(total_epsilon=100, path=tmp_path / "budget.jsonl")
    assert shared.spent_epsilon == pytest.approx(ledger.spent_epsilon)
    events = [json.loads(x) for x in transcript.read_text().splitlines()]
    attempts = [e["attempt"] for e in events if e["event"] == "attempt"]
    assert attempts == list(range(1, done + 3))  # continued, not restarted
    assert not (tmp_path / "release").exists()


def test_attempt_count_is_not_displayed_by_default(tmp_path, small_csv, capsys):
    # DP audit finding 5: the number of attempts is private; neither the progress
    # display nor the pause message shows it unless --show-attempts is given.
    import re

    from synthflow.loader import load_spec

    raw = yaml.safe_load((REPO / "configs" / "example_small.yaml").read_text())
    raw["acceptance"]["criteria"][0]["threshold"] = -1.0  # never passes
    spec_path = tmp_path / "never.yaml"
    spec_path.write_text(yaml.safe_dump(raw))
    spec = load_spec(spec_path)
    cands = tmp_path / "candidates.yaml"
    configurations = [c.to_json() for c in expand_space(spec) if c.letters == "aaaa"]
    cands.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configurations}))
    argv = ["release", str(spec_path), "--data", str(small_csv), "--candidates", str(cands),
            "--out", str(tmp_path / "release"), "--private-dir", str(tmp_path / "enclave"),
            "--ledger", str(tmp_path / "budget.jsonl"), "--force",
            "--max-attempts", "3"]  # fmt: skip
    assert main(argv) == 3  # paused: resumable
    err = capsys.readouterr().err
    assert "max-attempts limit" in err
    assert not re.search(r"\b3\s*attempt", err) and "3/" not in err
    # With --show-attempts the steward sees the count on the terminal.
    argv[-1] = "4"
    assert main([*argv, "--show-attempts"]) == 3
    assert re.search(r"\b4\s*attempt", capsys.readouterr().err)


def test_one_selection_per_enclave_at_a_time(tmp_path, small_spec):
    # An OS lock (dies with its process, unlike a marker file): a second selection on
    # the same enclave is refused at once, before anything is charged.
    import fcntl

    from synthflow.errors import ConfigError

    enclave = tmp_path / "e"
    enclave.mkdir()
    with (enclave / ".lock").open("a+") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(ConfigError, match="holds the lock"):
            private_selection(
                small_spec,
                expand_space(small_spec),
                attempt=_toy_attempt(1.0),
                enclave_dir=enclave,
                rng=PrivacyRNG.from_seed(0),
            )
        assert not (enclave / "ledger.jsonl").exists()
    # Released: the selection runs.
    out = private_selection(
        small_spec,
        expand_space(small_spec),
        attempt=_toy_attempt(1.0),
        enclave_dir=enclave,
        rng=PrivacyRNG.from_seed(0),
    )
    assert out.configuration is not None


@pytest.mark.parametrize("layout", ["same", "enclave_in_out", "out_in_enclave"])
def test_enclave_and_release_dirs_must_not_nest(tmp_path, small_spec, small_csv, layout, capsys):
    out = tmp_path / "rel"
    enclave = {"same": out, "enclave_in_out": out / "enc", "out_in_enclave": tmp_path}[layout]
    if layout == "out_in_enclave":
        out = tmp_path / "enc_child"
    cands = tmp_path / "c.yaml"
    configurations = [c.to_json() for c in expand_space(small_spec)[:1]]
    cands.write_text(
        yaml.safe_dump({"spec_sha256": small_spec.sha256, "configurations": configurations})
    )
    argv = ["release", small_spec.path, "--data", str(small_csv), "--candidates", str(cands),
            "--out", str(out), "--private-dir", str(enclave), "--public"]  # fmt: skip
    assert main(argv) == 2
    assert "neither inside the other" in capsys.readouterr().err
    assert not list(tmp_path.rglob("ledger.jsonl"))


def test_failed_publish_is_recovered_without_a_new_charge(
    tmp_path, small_spec, small_csv, monkeypatch, capsys
):
    # Disk full while writing the package: the selection is already saved in the
    # enclave, so re-running the same command publishes it with no new charge or draw.
    import errno

    from synthflow.release import publish

    cands = tmp_path / "candidates.yaml"
    configurations = [c.to_json() for c in expand_space(small_spec) if c.letters == "aaaa"]
    cands.write_text(
        yaml.safe_dump({"spec_sha256": small_spec.sha256, "configurations": configurations})
    )
    argv = ["release", small_spec.path, "--data", str(small_csv), "--candidates", str(cands),
            "--out", str(tmp_path / "release"), "--private-dir", str(tmp_path / "enclave"),
            "--ledger", str(tmp_path / "budget.jsonl"), "--quiet"]  # fmt: skip
    real = publish.sha256_file

    def full(path):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(publish, "sha256_file", full)
    assert main(argv) == 4  # failed after the charge: its own exit code
    err = capsys.readouterr().err
    assert "No space left on device" in err and "without spending again" in err
    assert "Traceback" not in err
    assert not (tmp_path / "release").exists()
    transcript = (tmp_path / "enclave" / "transcript.jsonl").read_text()
    monkeypatch.setattr(publish, "sha256_file", real)
    assert main(argv) == 0
    assert (tmp_path / "enclave" / "transcript.jsonl").read_text() == transcript  # no new draw
    for path in (tmp_path / "enclave" / "ledger.jsonl", tmp_path / "budget.jsonl"):
        assert len(Ledger(total_epsilon=100, path=path).charges) == 1
    assert audit_release(tmp_path / "release").ok


def test_torn_transcript_line_is_named_with_safe_advice(tmp_path, small_spec):
    from synthflow.errors import ConfigError

    enclave = tmp_path / "e"
    candidates = expand_space(small_spec)
    kwargs = dict(attempt=_toy_attempt(0.0), enclave_dir=enclave, rng=PrivacyRNG.from_seed(3))
    with pytest.raises(SelectionPaused):
        private_selection(small_spec, candidates, max_attempts=2, **kwargs)
    transcript = enclave / "transcript.jsonl"
    transcript.write_text(transcript.read_text() + '{"event": "att')
    with pytest.raises(ConfigError, match="last line is incomplete") as info:
        private_selection(small_spec, candidates, max_attempts=4, **kwargs)
    assert "without a new charge" in str(info.value)
    # Following the advice continues the same selection with the one charge.
    transcript.write_text(transcript.read_text().rsplit("\n", 1)[0] + "\n")
    with pytest.raises(SelectionPaused):
        private_selection(small_spec, candidates, max_attempts=4, **kwargs)
    assert len(Ledger(total_epsilon=100, path=enclave / "ledger.jsonl").charges) == 1


def test_datasheet_flags_decisions_decided_by_noise():
    from synthflow.acceptance.noise_check import PERFECT_PASS_MIN, NoiseFigure
    from synthflow.release._datasheet import _verdict

    def fig(p):
        return NoiseFigure(criterion="c", noise=1.0, room=1.0, perfect_pass=p)

    # The one noise rule: flagged when a perfect candidate passes < 2 releases in 3.
    assert _verdict(True, fig(0.18)) == "passed; **decided mostly by noise**"
    assert _verdict(True, fig(0.99)) == "passed"
    assert _verdict(False, None) == "failed"
    assert _verdict(True, fig(PERFECT_PASS_MIN)) == "passed"
    assert "noise" in _verdict(True, fig(PERFECT_PASS_MIN - 1e-9))


def test_hopeless_spec_is_refused_before_any_charge(tmp_path, small_csv):
    """A criterion whose noise floor exceeds its room: refused, nothing spent or written."""
    from synthflow.loader import load_spec

    raw = yaml.safe_load((REPO / "configs" / "example_small.yaml").read_text())
    raw["acceptance"]["criteria"][1]["epsilon"] = 0.01  # mean_visits: noise sd ~9 > 1
    spec_path = tmp_path / "noisy.yaml"
    spec_path.write_text(yaml.safe_dump(raw))
    spec = load_spec(spec_path)
    cands = tmp_path / "candidates.yaml"
    configurations = [c.to_json() | {"pass_rate": 0.5} for c in expand_space(spec)][:2]
    cands.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configurations}))
    ledger = tmp_path / "budget.jsonl"
    argv = ["release", str(spec_path), "--data", str(small_csv), "--candidates", str(cands),
            "--out", str(tmp_path / "release"), "--private-dir", str(tmp_path / "enclave"),
            "--ledger", str(ledger)]  # fmt: skip
    assert main(argv) == 2
    assert not ledger.exists() or "mean_visits" not in ledger.read_text()
    assert not (tmp_path / "enclave" / "ledger.jsonl").exists()
    # Every pass estimate 0: refused too, with its own reason.
    raw["acceptance"]["criteria"][1]["epsilon"] = 0.2
    spec_path.write_text(yaml.safe_dump(raw))
    spec = load_spec(spec_path)
    zero = [c.to_json() | {"pass_rate": 0.0} for c in expand_space(spec)][:2]
    cands.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": zero}))
    from synthflow.errors import ConfigError
    from synthflow.release.job import run_release

    with pytest.raises(ConfigError, match="none of the 2 shortlisted configurations passed"):
        run_release(spec_path, small_csv, cands, tmp_path / "r2", tmp_path / "e2",
                        public=True, seed=1, show_progress=False)  # fmt: skip
    assert not (tmp_path / "e2").exists()


def test_pre_flight_names_what_two_public_samples_fail_and_the_epsilon_noise_needs(
    tmp_path, nvss_10k, capsys
):
    """[ux] 3: the release's pre-flight says what ``validate --rows N`` says, then refuses.

    births-2024 on 9,898 rows: faithfulness fails between two real samples of that size
    (the median of 5 pairs, about 0.2 unmatched against 0.05), so no epsilon passes it;
    the coefficients' release is noise-dominated, and the line names the epsilon that
    would do. Nothing is charged, no ledger written.
    """
    from synthflow.loader import load_spec

    spec = load_spec(REPO / "configs" / "births-2024.yaml")
    cands = tmp_path / "candidates.yaml"
    configurations = [c.to_json() | {"pass_rate": 0.5} for c in expand_space(spec)][:2]
    cands.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configurations}))
    ledger = tmp_path / "budget.jsonl"
    argv = ["release", "births-2024", "--data", str(nvss_10k), "--candidates", str(cands),
            "--out", str(tmp_path / "release"), "--private-dir", str(tmp_path / "enclave"),
            "--ledger", str(ledger)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if "faithfulness_unmatched fails even" in x)
    assert "without noise" in line and "against its threshold 0.05" in line
    assert 0.05 < float(line.split(" score ")[1].split()[0]) < 0.6
    needed = next(x for x in err.splitlines() if "would need" in x)
    assert float(needed.split("regression_coef_error ")[1].split()[0]) > 0.43  # its epsilon
    assert "Nothing was spent" in err and "Traceback" not in err
    assert not ledger.exists() and not (tmp_path / "enclave" / "ledger.jsonl").exists()


def test_a_started_selection_resumes_without_the_pre_flight(tmp_path, small_csv):
    """--force at the start is not needed again to resume: the budget is already spent."""
    from synthflow.loader import load_spec

    raw = yaml.safe_load((REPO / "configs" / "example_small.yaml").read_text())
    raw["acceptance"]["criteria"][0]["threshold"] = -1.0  # never passes: hopeless
    spec_path = tmp_path / "never.yaml"
    spec_path.write_text(yaml.safe_dump(raw))
    spec = load_spec(spec_path)
    cands = tmp_path / "candidates.yaml"
    configurations = [c.to_json() for c in expand_space(spec) if c.letters == "aaaa"]
    cands.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configurations}))
    argv = ["release", str(spec_path), "--data", str(small_csv), "--candidates", str(cands),
            "--out", str(tmp_path / "release"), "--private-dir", str(tmp_path / "enclave"),
            "--public", "--seed", "1", "--quiet", "--max-attempts", "2"]  # fmt: skip
    assert main(argv) == 2 and not (tmp_path / "enclave").exists()  # refused, nothing spent
    assert main([*argv, "--force"]) == 3  # started, paused at 2 attempts
    assert (tmp_path / "enclave" / "ledger.jsonl").exists()
    argv[-1] = "3"
    assert main(argv) == 3  # resumed without --force, paused again at 3
    events = (tmp_path / "enclave" / "transcript.jsonl").read_text().count('"event": "attempt"')
    assert events == 3


def test_the_enclave_lock_is_held_during_every_attempt(tmp_path, small_spec):
    # [tests] item 4: a lock taken and released before the selection runs passed the
    # old tests. From inside each attempt, another process's lock attempt must fail.
    import fcntl
    import subprocess
    import sys

    enclave = tmp_path / "e"
    probe = (
        "import fcntl, sys\n"
        "fh = open(sys.argv[1], 'a+')\n"
        "try:\n"
        "    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "    print('free')\n"
        "except OSError:\n"
        "    print('held')\n"
    )
    seen = []

    def attempt(cfg, ledger, rng, fit):
        out = subprocess.run(
            [sys.executable, "-c", probe, str(enclave / ".lock")],
            capture_output=True, text=True, check=True, timeout=60,
        )  # fmt: skip
        seen.append(out.stdout.strip())
        ledger.charge("toy flow", epsilon=ledger.total_epsilon)
        return AttemptResult(passed=len(seen) == 3, transcript={}, payload=cfg.id)

    out = private_selection(
        small_spec, expand_space(small_spec), attempt=attempt, enclave_dir=enclave,
        rng=PrivacyRNG.from_seed(0),
    )  # fmt: skip
    assert out.attempts == 3 and seen == ["held"] * 3
    with (enclave / ".lock").open("a+") as fh:  # released when the selection returns
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

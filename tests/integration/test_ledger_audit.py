"""[ledger] DP audit: no spend escapes the dataset's ledger.

Each test names the audit item it covers and fails on the code the audit measured.
"""

from __future__ import annotations

import errno
import json
import shutil

import pytest
import yaml
from selection_support import private_selection

from synthflow.cli import main
from synthflow.errors import ConfigError, SelectionPaused
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.release import AttemptResult, selection
from synthflow.space import expand_space


def _toy(p, calls=None):
    def attempt(cfg, ledger, rng, fit):
        if calls is not None:
            calls.append(cfg.id)
        ledger.charge("toy flow", epsilon=ledger.total_epsilon)
        return AttemptResult(passed=rng.bernoulli(p), transcript={}, payload=cfg.id)

    return attempt


def _events(enclave, kind):
    lines = (enclave / "transcript.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["event"] == kind]


@pytest.fixture()
def budget(tmp_path):
    return Ledger(total_epsilon=100.0, path=tmp_path / "budget.jsonl")


def test_an_emptied_enclave_is_a_new_selection_and_is_charged_again(tmp_path, small_spec, budget):
    # Item 1: the charge was keyed by the enclave's path, so rm -rf enclave + re-run
    # spent again with no new charge (three selections, one 9.98 charge).
    enclave, cands = tmp_path / "e", expand_space(small_spec)
    cost = selection.selection_cost(small_spec, fit_once=False).total
    for k in range(1, 4):
        out = private_selection(
            small_spec, cands, attempt=_toy(1.0), enclave_dir=enclave,
            rng=PrivacyRNG.from_seed(k), dataset_ledger=budget,
        )  # fmt: skip
        assert out.configuration is not None
        shutil.rmtree(enclave)
        on_file = Ledger(total_epsilon=100.0, path=budget.path)
        assert on_file.spent_epsilon == pytest.approx(k * cost)
        assert len({c.ref for c in on_file.charges}) == k  # one id per selection


@pytest.mark.parametrize("forgery", ["id", "enclave_ledger", "other_dataset_ledger", "copy"])
def test_a_forged_resume_is_refused_before_any_attempt(tmp_path, small_spec, budget, forgery):
    # Item 1: a resume must present the start record whose id the dataset ledger holds.
    enclave, cands = tmp_path / "e", expand_space(small_spec)
    kwargs = dict(rng=PrivacyRNG.from_seed(5), dataset_ledger=budget)
    with pytest.raises(SelectionPaused):
        private_selection(
            small_spec, cands, attempt=_toy(0.0), enclave_dir=enclave, max_attempts=2, **kwargs
        )
    transcript = enclave / "transcript.jsonl"
    if forgery == "id":  # a start record of another (uncharged) selection
        lines = transcript.read_text().splitlines()
        start = json.loads(lines[0])
        start["selection_id"] = "0" * 32
        transcript.write_text("\n".join([json.dumps(start), *lines[1:]]) + "\n")
        match = "names another selection"
    elif forgery == "enclave_ledger":  # the enclave's own ledger removed: looks unstarted
        (enclave / "ledger.jsonl").unlink()
        match = "has no record of it"
    elif forgery == "other_dataset_ledger":
        kwargs["dataset_ledger"] = Ledger(total_epsilon=100.0, path=tmp_path / "fresh.jsonl")
        match = "not charged in the dataset ledger"
    else:  # a copy of the enclave continued elsewhere: the same charge run twice
        shutil.copytree(enclave, tmp_path / "copy")
        enclave = tmp_path / "copy"
        match = "continues only in the directory it started in"
    calls = []
    with pytest.raises(ConfigError, match=match):
        private_selection(
            small_spec, cands, attempt=_toy(1.0, calls), enclave_dir=enclave, **kwargs
        )
    assert calls == []
    assert len(Ledger(total_epsilon=100.0, path=budget.path).charges) == 1


def test_a_failed_save_of_a_pass_is_a_failed_attempt_never_redone(
    tmp_path, small_spec, monkeypatch
):
    # Item 4a: a pass whose saving failed (disk full) was counted as done and the re-run
    # went on drawing: 3 different releases for one charge. #45: a pass that cannot be
    # kept is a failed attempt (its coin flipped); the process stops so that the
    # steward frees space, and the re-run goes on with the next attempt, once.
    enclave, cands = tmp_path / "e", expand_space(small_spec)
    real = selection.write_atomic

    def full(path, data):
        if path.name == "selected.pkl":
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    monkeypatch.setattr(selection, "write_atomic", full)
    with pytest.raises(OSError, match="No space left"):
        private_selection(
            small_spec, cands, attempt=_toy(1.0), enclave_dir=enclave, rng=PrivacyRNG.from_seed(1)
        )
    monkeypatch.setattr(selection, "write_atomic", real)
    attempts = _events(enclave, "attempt")
    assert [(a["attempt"], a["passed"], a["crashed"]) for a in attempts] == [(1, False, "unsaved")]
    assert not (enclave / "selected.pkl").exists()
    assert not list(enclave.glob(".selected.pkl*"))  # no partial file left behind
    calls = []
    out = private_selection(
        small_spec, cands, attempt=_toy(1.0, calls), enclave_dir=enclave,
        rng=PrivacyRNG.from_seed(2),
    )  # fmt: skip
    assert out.configuration is not None and out.attempts == 2 and len(calls) == 1
    assert [d["attempt"] for d in _events(enclave, "draw")] == [1, 2]


@pytest.mark.parametrize("removed", [["outcome.json"], ["outcome.json", "selected.pkl"]])
def test_a_logged_pass_is_handed_back_or_refused(tmp_path, small_spec, removed):
    # Item 4a: deleting outcome.json and selected.pkl gave new draws; now a re-run hands
    # back the same selection, or stops with an error when its result is gone.
    enclave, cands = tmp_path / "e", expand_space(small_spec)
    first = private_selection(
        small_spec, cands, attempt=_toy(0.5), enclave_dir=enclave, rng=PrivacyRNG.from_seed(8)
    )
    for name in removed:
        (enclave / name).unlink()
    calls = []
    rerun = dict(attempt=_toy(1.0, calls), enclave_dir=enclave, rng=PrivacyRNG.from_seed(9))
    if "selected.pkl" in removed:
        with pytest.raises(ConfigError, match="nothing new is drawn"):
            private_selection(small_spec, cands, **rerun)
    else:
        again = private_selection(small_spec, cands, **rerun)
        assert (again.configuration, again.payload, again.attempts) == (
            first.configuration, first.payload, first.attempts,
        )  # fmt: skip
    assert calls == []


def test_a_crash_after_saving_before_the_record_returns_the_saved_pass(tmp_path, small_spec):
    enclave, cands = tmp_path / "e", expand_space(small_spec)
    first = private_selection(
        small_spec, cands, attempt=_toy(1.0), enclave_dir=enclave, rng=PrivacyRNG.from_seed(3)
    )
    # as if the process died right after selected.pkl was written
    lines = (enclave / "transcript.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["event"] == "attempt"
    (enclave / "transcript.jsonl").write_text("\n".join(lines[:-1]) + "\n")
    (enclave / "outcome.json").unlink()
    calls = []
    again = private_selection(
        small_spec, cands, attempt=_toy(1.0, calls), enclave_dir=enclave,
        rng=PrivacyRNG.from_seed(4),
    )  # fmt: skip
    assert calls == [] and again.payload == first.payload
    assert len(_events(enclave, "attempt")) == 1  # the record restored from the save


def test_a_crash_between_a_failure_and_its_coin_flips_the_coin_on_resume(
    tmp_path, small_spec, monkeypatch
):
    # Item 4b: a crash between a failed attempt and its stop coin left one coin unflipped,
    # so the number of attempts was no longer geometric.
    enclave, cands = tmp_path / "e", expand_space(small_spec)
    real = selection._flip_coin
    flips = []

    def crash_on_third(*args, **kwargs):
        flips.append(1)
        if len(flips) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(selection, "_flip_coin", crash_on_third)
    kwargs = dict(enclave_dir=enclave, stop_probability=0.2)
    with pytest.raises(KeyboardInterrupt):
        private_selection(
            small_spec, cands, attempt=_toy(0.0), rng=PrivacyRNG.from_seed(11), **kwargs
        )
    assert len(_events(enclave, "attempt")) == 3 and len(_events(enclave, "coin")) == 2
    monkeypatch.setattr(selection, "_flip_coin", real)
    out = private_selection(
        small_spec, cands, attempt=_toy(0.0), rng=PrivacyRNG.from_seed(12), **kwargs
    )
    assert out.configuration is None  # only failures: the coin ended it
    attempts, coins = _events(enclave, "attempt"), _events(enclave, "coin")
    assert [c["attempt"] for c in coins] == [a["attempt"] for a in attempts]
    assert [c["stop"] for c in coins] == [False] * (len(coins) - 1) + [True]


def test_the_pause_message_says_nothing_may_leave_the_enclave(tmp_path, small_spec):
    # Item 5: the pause itself depends on the data (0.81 on D against 5e-6 on a neighbour).
    with pytest.raises(SelectionPaused, match=r"nothing derived from it .* may leave the enclave"):
        private_selection(
            small_spec, expand_space(small_spec), attempt=_toy(0.0), enclave_dir=tmp_path / "e",
            rng=PrivacyRNG.from_seed(0), max_attempts=1,
        )  # fmt: skip


def _cands(tmp_path, spec):
    path = tmp_path / "candidates.yaml"
    configurations = [c.to_json() for c in expand_space(spec) if c.letters == "aaaa"]
    path.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configurations}))
    return path


def test_release_in_an_emptied_enclave_through_the_cli_is_charged_again(
    tmp_path, small_spec, small_csv, capsys
):
    # Item 1 as a steward would do it: release, rm -rf the enclave, release again.
    budget = tmp_path / "budget.jsonl"
    argv = ["release", small_spec.path, "--data", str(small_csv), "--candidates",
            str(_cands(tmp_path, small_spec)), "--private-dir", str(tmp_path / "enclave"),
            "--ledger", str(budget), "--quiet", "--max-attempts", "200"]  # fmt: skip
    assert main([*argv, "--out", str(tmp_path / "r1")]) == 0
    capsys.readouterr()
    shutil.rmtree(tmp_path / "enclave")
    # A selection costs 2 x 2.3 = 4.6 of the spec's 5: the second is a new selection and
    # is refused, where before it ran on the first one's charge.
    assert main([*argv, "--out", str(tmp_path / "r2")]) == 2
    err = capsys.readouterr().err  # refused by the dataset ledger before the enclave exists
    assert "has 0.4 left of its total 5; nothing was spent" in err
    ledger = Ledger(total_epsilon=100.0, path=budget)
    assert len(ledger.charges) == 1
    assert ledger.spent_epsilon == pytest.approx(4.6)
    assert not (tmp_path / "r2").exists() or not any((tmp_path / "r2").iterdir())


def test_the_python_api_spends_only_through_a_dataset_ledger(tmp_path, small_spec, small_csv):
    # Item 8: Synthesizer.fit on data not declared public created an in-memory ledger.
    import synthflow

    cfg = next(c for c in expand_space(small_spec) if c.model == "privbayes")
    s = synthflow.Synthesizer(small_spec, cfg.id)
    with pytest.raises(ConfigError, match="dataset's persistent ledger"):
        s.fit(tmp_path / "never-read.csv")  # refused before reading the data
    memory = Ledger(total_epsilon=5.0)
    frame = synthflow.load_data(small_csv, small_spec).frame
    with pytest.raises(ConfigError, match="dataset's persistent ledger"):
        s.fit(frame, ledger=memory)
    assert memory.spent_epsilon == 0
    budget = synthflow.dataset_ledger(tmp_path / "budget.jsonl", frame, total_epsilon=5.0)
    s.fit(frame, ledger=budget)
    assert Ledger(total_epsilon=5.0, path=budget.path).spent_epsilon == pytest.approx(2.0)
    with pytest.raises(ConfigError, match="belongs to another dataset"):
        s.fit(frame.iloc[:-1], ledger=budget)
    with pytest.raises(ConfigError, match="dataset's persistent ledger"):
        synthflow.evaluate_candidate(small_spec, cfg, frame, s.sample(), exact=False,
                                     ledger=memory)  # fmt: skip
    with pytest.raises(ConfigError, match="public data only"):
        synthflow.evaluate_candidate(small_spec, cfg, frame, s.sample(), exact=True)


@pytest.mark.parametrize("where", ["read_only_out", "out_under_a_file", "ledger_in_out"])
def test_an_unwritable_out_is_refused_before_any_charge(
    tmp_path, small_spec, small_csv, capsys, where
):
    # Item 11: a read-only --out (or --ledger inside --out) said "nothing spent" with exit
    # 2 after 9.38 was charged.
    import os

    parent = tmp_path / "pub"
    parent.mkdir()
    budget = (
        parent / "release" / "budget.jsonl"
        if where == "ledger_in_out"
        else (tmp_path / "budget.jsonl")
    )
    argv = ["release", small_spec.path, "--data", str(small_csv), "--candidates",
            str(_cands(tmp_path, small_spec)), "--private-dir", str(tmp_path / "enclave"),
            "--ledger", str(budget), "--quiet", "--out", str(parent / "release")]  # fmt: skip
    if where == "out_under_a_file":
        os.rmdir(parent)
        parent.write_text("a file")
    if where == "read_only_out":
        os.chmod(parent, 0o555)
        if os.access(parent, os.W_OK):  # root ignores permission bits
            os.chmod(parent, 0o755)
            pytest.skip("running as root: permission bits are not enforced")
    try:
        assert main(argv) == 2
    finally:
        if parent.is_dir():
            os.chmod(parent, 0o755)
    err = capsys.readouterr().err
    expected = {"read_only_out": "cannot be written", "out_under_a_file": "is not a directory",
                "ledger_in_out": "must not be inside --out"}[where]  # fmt: skip
    assert expected in err
    assert not budget.exists() and not (tmp_path / "enclave" / "ledger.jsonl").exists()


def test_a_failure_after_the_charge_has_its_own_exit_code(
    tmp_path, small_spec, small_csv, capsys, monkeypatch
):
    # Item 11: a failure after a charge exits 4 and says what was spent and how to resume.
    from synthflow.release import publish

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(publish, "sha256_file", full)
    argv = ["release", small_spec.path, "--data", str(small_csv), "--candidates",
            str(_cands(tmp_path, small_spec)), "--private-dir", str(tmp_path / "enclave"),
            "--ledger", str(tmp_path / "budget.jsonl"), "--quiet", "--max-attempts", "200",
            "--out", str(tmp_path / "release")]  # fmt: skip
    assert main(argv) == 4
    err = capsys.readouterr().err
    assert "after epsilon 4.6 was charged" in err and "without spending again" in err


def test_an_interrupted_selection_exits_4_saying_what_it_spent(
    tmp_path, small_spec, small_csv, capsys, monkeypatch
):
    # [inputs] 5: Ctrl-C during a charged selection exited 130. #45: any exception or
    # signal after a charge exits 4 and says what was spent, what is left and where the
    # ledger is; the interrupted attempt counts as a failed attempt on the re-run.
    from synthflow.release import attempt as job  # where an attempt runs its flow

    real = job.run_flow
    calls = []

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(job, "run_flow", interrupted)
    never = yaml.safe_load(open(small_spec.path).read())
    never["acceptance"]["criteria"][0]["threshold"] = -1.0  # never passes
    spec_path = tmp_path / "never.yaml"
    spec_path.write_text(yaml.safe_dump(never))
    from synthflow.loader import load_spec

    spec = load_spec(spec_path)
    argv = ["release", str(spec_path), "--data", str(small_csv), "--candidates",
            str(_cands(tmp_path, spec)), "--private-dir", str(tmp_path / "enclave"),
            "--ledger", str(tmp_path / "budget.jsonl"), "--quiet", "--force",
            "--out", str(tmp_path / "r")]  # fmt: skip
    assert main(argv) == 4
    err = capsys.readouterr().err
    assert "interrupted during private selection" in err and "may leave the enclave" in err
    assert "spent epsilon 4.6 (delta 0) of the total 5; 0.4 left" in err
    assert f"ledger {tmp_path / 'budget.jsonl'}" in err
    assert "counts as a failed attempt" in err
    monkeypatch.setattr(job, "run_flow", real)
    transcript = (tmp_path / "enclave" / "transcript.jsonl").read_text()
    # the re-run: attempt 2 recorded as a crashed failure, never redone (paused at 4)
    assert main([*argv, "--max-attempts", "4"]) == 3
    events = [json.loads(x) for x in (tmp_path / "enclave" / "transcript.jsonl").read_text()
              .splitlines()]  # fmt: skip
    assert len(transcript) > 0
    crashed = [e for e in events if e["event"] == "attempt" and e.get("crashed")]
    assert [e["attempt"] for e in crashed] == [2]
    draws = [e["attempt"] for e in events if e["event"] == "draw"]
    assert draws == sorted(set(draws))  # each attempt number drawn once


def test_no_command_says_nothing_was_spent_after_a_charge(
    tmp_path, small_spec, small_csv, capsys, monkeypatch
):
    # Item 11, for every command: an error after this process charged the dataset ledger
    # exits 4 and says what was charged, never 2 ("nothing spent"). Here the enclave's
    # own ledger fails right after the dataset ledger was charged.
    real = Ledger.charge

    def enclave_disk_full(self, what, **kwargs):
        if self.path is not None and self.path.name == "ledger.jsonl":
            raise OSError(errno.ENOSPC, "No space left on device", str(self.path))
        return real(self, what, **kwargs)

    monkeypatch.setattr(Ledger, "charge", enclave_disk_full)
    budget = tmp_path / "budget.jsonl"
    argv = ["release", small_spec.path, "--data", str(small_csv), "--candidates",
            str(_cands(tmp_path, small_spec)), "--private-dir", str(tmp_path / "enclave"),
            "--ledger", str(budget), "--quiet", "--out", str(tmp_path / "r")]  # fmt: skip
    assert main(argv) == 4
    err = capsys.readouterr().err
    assert "error after spending" in err and "charged epsilon 4.6" in err
    assert Ledger(total_epsilon=100.0, path=budget).spent_epsilon == pytest.approx(4.6)


def test_tables_protect_failing_after_its_charge_exits_4(tmp_path, small_csv, capsys,
                                                         monkeypatch):  # fmt: skip
    import importlib

    protect_module = importlib.import_module("synthflow.tables.protect")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(protect_module, "write_tables", full)
    tables = tmp_path / "tables.yaml"
    tables.write_text(yaml.safe_dump({"tables": [{"name": "r", "columns": ["region", "smoker"]}]}))
    argv = ["tables", "protect", "example_small", "--data", str(small_csv), "--tables",
            str(tables), "--method", "laplace", "--epsilon", "0.5", "--out",
            str(tmp_path / "t"), "--ledger", str(tmp_path / "budget.jsonl")]  # fmt: skip
    assert main(argv) == 4
    assert "charged epsilon 0.5" in capsys.readouterr().err


def test_a_missing_once_per_release_fit_is_never_refit(tmp_path, budget):
    # The fit's record is a transcript event written before it charges, never a match on
    # the ledger's free text: with its file gone, a resume refuses instead of refitting.
    from synthflow.loader import load_spec

    births = load_spec("births-2024")  # a spec with a regression criterion to fit once
    enclave, cands = tmp_path / "e", expand_space(births)[:3]
    fits = []

    def fit(ledger, rng):
        fits.append(1)
        ledger.charge("toy fit (once per release)", epsilon=0.5)
        return {"fit": len(fits)}

    kwargs = dict(rng=PrivacyRNG.from_seed(7), dataset_ledger=budget, fit_once=True, fit=fit)
    with pytest.raises(SelectionPaused):
        private_selection(
            births, cands, attempt=_toy(0.0), enclave_dir=enclave, max_attempts=1, **kwargs
        )
    assert fits == [1] and len(_events(enclave, "fit")) == 1
    (enclave / "regression_fit.pkl").unlink()
    spent = Ledger(total_epsilon=100.0, path=enclave / "ledger.jsonl").spent_epsilon
    with pytest.raises(ConfigError, match="records the once-per-release fit"):
        private_selection(births, cands, attempt=_toy(1.0), enclave_dir=enclave, **kwargs)
    assert fits == [1]
    assert Ledger(total_epsilon=100.0, path=enclave / "ledger.jsonl").spent_epsilon == spent

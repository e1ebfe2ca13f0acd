"""[crashsafe] A crash is an attempt (#45): no redraw without a charge.

The third DP audit's reproduction: an attempt made to crash only when it fails, at pass
probability 0.3. Before #45 a crashed attempt was redone with fresh noise on re-run, so
the selection released 200 of 200 times ("retry until pass", 3.46 draws per charge).
Now a crash after the draw is that attempt's failure, its stop coin is flipped as for
any failure, and the share released stays the share of attempts that pass.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from selection_support import private_selection

from synthflow.errors import SelectionEnded
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.release import AttemptResult
from synthflow.space import expand_space

P_PASS = 0.3
SELECTIONS = 300


def _crash_on_failure(kind: str, calls: list[int], pad: int = 0):
    """An attempt that passes with probability P_PASS and crashes whenever it fails."""

    def attempt(cfg, ledger, rng, fit):
        calls.append(1)
        ledger.charge("toy flow", epsilon=ledger.total_epsilon)
        if rng.bernoulli(P_PASS):
            return AttemptResult(passed=True, transcript={}, payload=cfg.id)
        if kind == "exception":  # raised inside the attempt (e.g. FloatingPointError)
            raise FloatingPointError("a non-finite marginal")
        if kind == "process":  # the process stops (kill, Ctrl-C) inside the attempt
            raise KeyboardInterrupt
        return AttemptResult(passed=False, transcript={"pad": "x" * pad})

    return attempt


def _events(enclave: Path) -> list[dict]:
    return [json.loads(x) for x in (enclave / "transcript.jsonl").read_text().splitlines()]


def _select_until_it_ends(spec, candidates, attempt, *, enclave, rng, gamma, dataset):
    """Run the selection, re-running it after each crash, as a steward would."""
    for _ in range(1000):
        try:
            return private_selection(
                spec,
                candidates,
                attempt=attempt,
                enclave_dir=enclave,
                rng=rng,
                stop_probability=gamma,
                dataset_ledger=dataset,
            )
        except KeyboardInterrupt:
            continue
        except SelectionEnded:
            return None
    raise AssertionError("the selection never ended")


@pytest.mark.parametrize("kind", ["exception", "process"])
@pytest.mark.parametrize("gamma", [1.0, 0.5])
def test_crashes_after_failures_do_not_raise_the_release_rate(tmp_path, small_spec, kind, gamma):
    candidates = expand_space(small_spec)
    rng = PrivacyRNG.from_seed(45)
    dataset = Ledger(total_epsilon=1e6, path=tmp_path / "dataset.jsonl")
    released = 0
    for i in range(SELECTIONS):
        calls: list[int] = []
        enclave = tmp_path / f"e{i}"
        out = _select_until_it_ends(
            small_spec,
            candidates,
            _crash_on_failure(kind, calls),
            enclave=enclave,
            rng=rng,
            gamma=gamma,
            dataset=dataset,
        )
        released += out is not None and out.configuration is not None
        events = _events(enclave)
        draws = [e["attempt"] for e in events if e["event"] == "draw"]
        attempts = [e["attempt"] for e in events if e["event"] == "attempt"]
        # Every draw is one attempt of the selection: never redone, never uncounted.
        assert draws == attempts == list(range(1, len(draws) + 1)) and len(calls) == len(draws)
        if gamma == 1.0:
            assert len(draws) == 1
    # One charge per selection, whatever crashed.
    assert len(dataset.charges) == SELECTIONS
    # P(release): a single attempt p = 0.3; Liu-Talwar with gamma 0.5,
    # p / (1 - (1 - p)(1 - gamma)) = 0.3 / 0.65 = 0.4615. With the old redo both were 1.0.
    expected = P_PASS if gamma == 1.0 else P_PASS / (1 - (1 - P_PASS) * (1 - gamma))
    # sd of the share at n = 300 is at most sqrt(0.25 / 300) = 0.029: 0.1 is 3.4 sd.
    assert abs(released / SELECTIONS - expected) < 0.1, released


@pytest.fixture()
def tiny_disk(tmpfs):
    """A real tmpfs (size=96k): the conftest's ``tmpfs`` fixture."""
    return tmpfs("size=96k")


def test_a_full_disk_during_a_failed_attempt_is_that_attempt(tiny_disk, tmp_path, small_spec):
    # A failure whose record does not fit on the disk crashed the process after the
    # draw; the re-run redrew the same attempt with fresh noise (2 draws for 1 charge).
    candidates = expand_space(small_spec)
    enclave = tiny_disk / "enclave"
    dataset = Ledger(total_epsilon=100.0, path=tmp_path / "dataset.jsonl")
    calls: list[int] = []

    def fails_big(cfg, ledger, rng, fit):
        calls.append(1)
        ledger.charge("toy flow", epsilon=ledger.total_epsilon)
        return AttemptResult(passed=False, transcript={"pad": "x" * 200_000})  # 200 KB

    def passes(cfg, ledger, rng, fit):
        calls.append(1)
        ledger.charge("toy flow", epsilon=ledger.total_epsilon)
        return AttemptResult(passed=True, transcript={}, payload=cfg.id)

    kwargs = dict(enclave_dir=enclave, stop_probability=0.0, dataset_ledger=dataset)
    with pytest.raises(OSError, match="No space left"):
        private_selection(
            small_spec, candidates, attempt=fails_big, rng=PrivacyRNG.from_seed(1), **kwargs
        )
    # The cut record is cut back off: the transcript holds whole lines only.
    assert (enclave / "transcript.jsonl").read_text().endswith("\n")
    out = private_selection(
        small_spec, candidates, attempt=passes, rng=PrivacyRNG.from_seed(2), **kwargs
    )
    events = _events(enclave)
    attempts = [e for e in events if e["event"] == "attempt"]
    assert attempts[0]["attempt"] == 1 and attempts[0]["crashed"] is True
    assert not attempts[0]["passed"]
    draws = [e["attempt"] for e in events if e["event"] == "draw"]
    assert draws == [a["attempt"] for a in attempts] == [1, 2]
    assert out.configuration is not None and out.attempts == 2 and len(calls) == 2
    assert len(dataset.charges) == 1


# A disk that is full when the passing result is saved: selected.pkl's bytes go to
# /dev/full first, so the kernel's own ENOSPC is raised where a full disk would raise it.
# (A file-size limit can no longer reach this point: the pre-flight refuses it before
# the charge, tests/integration/test_release_preflight_files.py.)
_DISK_FULL_ON_SAVE = """
import sys
import synthflow.release.selection as selection
from synthflow._util.files import write_atomic

def full(path, data, *args, **kwargs):
    if path.name == "selected.pkl":
        with open("/dev/full", "wb", buffering=0) as f:
            f.write(data)
    return write_atomic(path, data, *args, **kwargs)

selection.write_atomic = full
from synthflow.cli import main
sys.exit(main(["release", *sys.argv[1:]]))
"""


def _release_cli(args: list[str], disk_full_on_save: bool = False) -> subprocess.CompletedProcess:
    command = ["-c", _DISK_FULL_ON_SAVE] if disk_full_on_save else ["-m", "synthflow", "release"]
    return subprocess.run(
        [sys.executable, *command, *args],
        capture_output=True,
        check=False,
        text=True,
        timeout=300,
    )


def test_a_passing_result_that_cannot_be_saved_is_a_failure_and_says_what_it_spent(
    tmp_path, small_spec, small_csv
):
    # The reliability catalogue: EFBIG on selected.pkl after a pass (now refused before
    # the charge; a full disk still fails here). The re-run exited 2 ("nothing spent")
    # while the ledger had grown; now the attempt is a failure (its result is gone), both
    # runs say what was spent, and neither redraws.
    cands = tmp_path / "candidates.yaml"
    configs = [c.to_json() for c in expand_space(small_spec) if c.letters == "aaaa"]
    cands.write_text(yaml.safe_dump({"spec_sha256": small_spec.sha256, "configurations": configs}))

    def args(name: str, seed: int) -> list[str]:
        return [
            small_spec.path, "--data", str(small_csv), "--candidates", str(cands),
            "--out", str(tmp_path / f"out-{name}"), "--private-dir", str(tmp_path / name),
            "--ledger", str(tmp_path / f"{name}.ledger"), "--seed", str(seed), "--public",
            "--quiet", "--stop-probability", "1",
        ]  # fmt: skip

    seed = next(s for s in range(30) if _release_cli(args(f"free{s}", s)).returncode == 0)
    limited = _release_cli(args("capped", seed), disk_full_on_save=True)
    assert limited.returncode == 1, limited.stderr
    assert "stopped without a release" in limited.stderr
    # [ux] 2: a single attempt says, before its charge and in one line, what it risks
    said = [x for x in limited.stderr.splitlines() if "a single attempt: epsilon 2.3" in x]
    assert len(said) == 1 and "nothing is released and the budget stays spent" in said[0]
    assert "spent epsilon 2.3" in limited.stderr and "left" in limited.stderr
    assert str(tmp_path / "capped.ledger") in limited.stderr
    events = _events(tmp_path / "capped")
    attempts = [e for e in events if e["event"] == "attempt"]
    assert [(a["passed"], a.get("crashed")) for a in attempts] == [(False, "unsaved")]
    again = _release_cli(args("capped", seed))
    assert again.returncode == 1, again.stderr
    assert "already ended without a release" in again.stderr
    assert "a single attempt: epsilon" not in again.stderr  # a re-run charges nothing
    assert "spent epsilon 2.3" in again.stderr
    assert [e["attempt"] for e in _events(tmp_path / "capped") if e["event"] == "draw"] == [1]


@pytest.mark.parametrize("kind", ["exception", "process"])
def test_a_crashed_once_per_release_fit_ends_the_selection(tmp_path, kind):
    # The fit is charged once; a fit that crashed is never recomputed with fresh noise
    # (a second fit on one charge): the selection ends without a release.
    from synthflow.loader import load_spec

    births = load_spec("births-2024")  # a spec with a regression criterion to fit once
    candidates = expand_space(births)[:3]
    dataset = Ledger(total_epsilon=100.0, path=tmp_path / "dataset.jsonl")
    fits: list[int] = []

    def fit(ledger, rng):
        fits.append(1)
        ledger.charge("toy fit (once per release)", epsilon=0.5)
        if kind == "exception":
            raise FloatingPointError("a non-finite coefficient")
        raise KeyboardInterrupt

    calls: list[int] = []
    kwargs = dict(
        enclave_dir=tmp_path / "e",
        rng=PrivacyRNG.from_seed(3),
        dataset_ledger=dataset,
        fit_once=True,
        fit=fit,
        attempt=_crash_on_failure("none", calls),
    )
    if kind == "exception":
        out = private_selection(births, candidates, **kwargs)
        assert out.configuration is None and out.attempts == 0
    else:
        with pytest.raises(KeyboardInterrupt):
            private_selection(births, candidates, **kwargs)
        out = private_selection(births, candidates, **kwargs)
        assert out.configuration is None
    with pytest.raises(SelectionEnded):
        private_selection(births, candidates, **kwargs)
    assert fits == [1] and calls == [] and len(dataset.charges) == 1


@pytest.mark.parametrize("gamma", [1.0, 0.5])
def test_a_crash_after_the_stop_coin_ends_the_selection(tmp_path, small_spec, gamma, monkeypatch):
    # #58 (3): the DP audit's crash window: the process stops after the coin said stop and
    # before its 'stopped' record. On re-run the selection asked only whether a 'stopped'
    # record existed, so it drew again: 200 of 200 selections released. Now the coin
    # ends it: the share released is the share the theorem allows.
    from synthflow.release.enclave import Enclave

    log = Enclave.log

    def crash_on_stopped(self, event):
        if event.get("event") == "stopped" and not event.get("completed"):
            raise KeyboardInterrupt  # the process stops (kill -9, a file-size limit)
        log(self, event)

    monkeypatch.setattr(Enclave, "log", crash_on_stopped)

    def attempt(cfg, ledger, rng, fit):
        ledger.charge("toy flow", epsilon=ledger.total_epsilon)
        return AttemptResult(passed=rng.bernoulli(P_PASS), transcript={}, payload=cfg.id)

    candidates = expand_space(small_spec)
    rng = PrivacyRNG.from_seed(58)
    dataset = Ledger(total_epsilon=1e6, path=tmp_path / "dataset.jsonl")
    released = 0
    for i in range(SELECTIONS):
        enclave = tmp_path / f"e{i}"
        out = _select_until_it_ends(
            small_spec, candidates, attempt, enclave=enclave, rng=rng, gamma=gamma, dataset=dataset
        )
        released += out is not None and out.configuration is not None
        events = _events(enclave)
        coins = [e for e in events if e["event"] == "coin"]
        draws = [e["attempt"] for e in events if e["event"] == "draw"]
        assert not any(c["stop"] for c in coins[:-1])  # nothing is drawn after a stop
        if coins and coins[-1]["stop"]:
            assert draws[-1] == coins[-1]["attempt"]
            assert json.loads((enclave / "outcome.json").read_text())["selected"] is None
    assert len(dataset.charges) == SELECTIONS
    # As in the test above: 0.3 (single attempt) or 0.4615 (gamma 0.5); sd <= 0.029 at
    # n = 300, so 0.1 is 3.4 sd. With the crash window open both were 1.0.
    expected = P_PASS if gamma == 1.0 else P_PASS / (1 - (1 - P_PASS) * (1 - gamma))
    assert abs(released / SELECTIONS - expected) < 0.1, released

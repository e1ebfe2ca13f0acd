"""One rule for every end after a charge, and delta checked as epsilon (#45 items 2-4).

Each through the real CLI: an exception outside the caught list (FloatingPointError)
after a charge exited 1 with a traceback; Ctrl-C during `run` after a charge exited 130
and said nothing of the spend; SIGTERM was not handled; `--help` listed exit codes 0-3;
`validate` accepted a spec whose deltas exceed total_delta and `release` then spoke of
epsilon only; `release --plan --stop-probability` ran another mechanism than the plan's.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest
import yaml

from synthflow.cli import build_parser, main
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.space import expand_space


def _run(tmp_path, spec, csv) -> list[str]:
    config = next(c.id for c in expand_space(spec))
    return ["run", spec.path, "--data", str(csv), "--config", config, "--out",
            str(tmp_path / "r"), "--ledger", str(tmp_path / "budget.jsonl"),
            "--quiet"]  # fmt: skip


@pytest.mark.parametrize("fault", [FloatingPointError, KeyboardInterrupt])
def test_a_fault_after_the_charge_exits_4_saying_what_was_spent(  # noqa: PLR0917
    tmp_path, small_spec, small_csv, capsys, monkeypatch, fault
):
    from synthflow.jobs import run as job

    def charged_then_fault(spec, configuration, frame, *, ledger, **kwargs):
        ledger.charge("the generator", epsilon=spec.privacy.generator_epsilon)
        raise fault

    monkeypatch.setattr(job, "run_flow", charged_then_fault)
    assert main(_run(tmp_path, small_spec, small_csv)) == 4
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error after spending" in err
    assert "spent epsilon 2 (delta 0) of the total 5; 3 left" in err
    assert f"ledger {tmp_path / 'budget.jsonl'}" in err


_SIGTERM = """
import os, signal, sys
from synthflow import cli
from synthflow.jobs import run as job

def charged_then_killed(spec, configuration, frame, *, ledger, **kwargs):
    ledger.charge("the generator", epsilon=spec.privacy.generator_epsilon)
    os.kill(os.getpid(), signal.SIGTERM)  # a scheduler stops the job

job.run_flow = charged_then_killed
sys.argv = ["synthflow", *sys.argv[1:]]
cli.entry()
"""


def test_sigterm_after_the_charge_exits_4(tmp_path, small_spec, small_csv):
    done = subprocess.run(
        [sys.executable, "-c", _SIGTERM, *_run(tmp_path, small_spec, small_csv)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 4, done.stderr
    assert "interrupted" in done.stderr and "spent epsilon 2" in done.stderr
    assert done.returncode != -signal.SIGTERM


def test_help_lists_every_exit_code():
    text = build_parser().format_help()
    for code in ("0 success", "1 a negative result", "2 usage", "3 paused", "4 an error"):
        assert code in " ".join(text.split()), code


def _gauss_spec(tmp_path, small_spec, *, total_delta: str, gen_delta: str):
    text = open(small_spec.path).read()
    budget = "generator_epsilon: 2.0\n"
    text = text.replace(budget, budget + f"  total_delta: {total_delta}\n")
    text = text[: text.index("\nspace:")] + (
        "\nspace:\n  min_count: [2]\n  models:\n    - model: workload\n"
        f"      grid: {{noise: gaussian, delta: {gen_delta}, iters: 200}}\n"
    )
    path = tmp_path / "gauss.yaml"
    path.write_text(text)
    return load_spec(path)


def test_validate_and_release_check_delta_as_epsilon(tmp_path, small_spec, small_csv, capsys):
    spec = _gauss_spec(tmp_path, small_spec, total_delta="1.0e-7", gen_delta="1.0e-6")
    assert main(["validate", spec.path]) == 2
    err = capsys.readouterr().err
    assert "delta" in err and "total_delta 1e-07" in err and "1e-06" in err
    cands = tmp_path / "c.yaml"
    configs = [c.to_json() for c in expand_space(spec)]
    cands.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configs}))
    ledger = tmp_path / "budget.jsonl"
    argv = ["release", spec.path, "--data", str(small_csv), "--candidates", str(cands),
            "--out", str(tmp_path / "r"), "--private-dir", str(tmp_path / "e"),
            "--ledger", str(ledger), "--stop-probability", "1", "--quiet", "--force"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "delta 1e-06" in err and "delta 1e-07" in err, err
    assert not ledger.exists() or Ledger(total_epsilon=100, path=ledger).charges == ()


def test_release_plan_refuses_another_stop_probability(tmp_path, small_spec, small_csv, capsys):
    # A plan for a single attempt, run with --stop-probability 0.99: another mechanism
    # (Liu-Talwar) and another charge. Refused before any charge.
    cands = tmp_path / "c.yaml"
    configs = [c.to_json() for c in expand_space(small_spec) if c.letters == "aaaa"]
    cands.write_text(yaml.safe_dump({"spec_sha256": small_spec.sha256, "configurations": configs}))
    plan = {
        "planned_spec_sha256": small_spec.sha256,
        "fit_once": False,
        "options": {"stop_probability": 1.0},
        "stop_probability": 1.0,
        "selection": "single-attempt",
        "total_epsilon": 2.3,
        "total_delta": 0.0,
        "release_probability": 0.9,
    }
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    ledger = tmp_path / "budget.jsonl"
    argv = ["release", small_spec.path, "--data", str(small_csv), "--candidates", str(cands),
            "--out", str(tmp_path / "r"), "--private-dir", str(tmp_path / "e"),
            "--ledger", str(ledger), "--plan", str(tmp_path / "plan.json"), "--quiet",
            "--force"]  # fmt: skip
    assert main([*argv, "--stop-probability", "0.99"]) == 2
    assert "the plan was made for 1" in capsys.readouterr().err
    assert not ledger.exists() or Ledger(total_epsilon=100, path=ledger).charges == ()
    assert main([*argv, "--stop-probability", "1"]) in (0, 1)  # the plan's own: it runs
    assert Ledger(total_epsilon=100, path=ledger).spent_epsilon == pytest.approx(2.3)


def test_the_spend_line_is_this_commands_own(tmp_path, small_spec, small_csv, capsys, monkeypatch):
    # Several commands in one process (a notebook, the API): each reports what it charged,
    # not what the process charged since it started.
    from synthflow.jobs import run as job

    first = [*_run(tmp_path, small_spec, small_csv)]
    first[first.index("--out") + 1] = str(tmp_path / "r0")
    assert main(first) == 0  # charges 2 of 5
    capsys.readouterr()

    def charged_then_fault(spec, configuration, frame, *, ledger, **kwargs):
        ledger.charge("the generator", epsilon=spec.privacy.generator_epsilon)
        raise FloatingPointError

    monkeypatch.setattr(job, "run_flow", charged_then_fault)
    assert main(_run(tmp_path, small_spec, small_csv)) == 4
    err = capsys.readouterr().err
    assert "spent epsilon 2 (delta 0) of the total 5; 1 left" in err, err

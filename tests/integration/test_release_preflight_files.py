"""A release's files are checked before its charge (#58, items 6 and 7).

6. Under a file-size limit (``ulimit -f``) the passing attempt's result could not be
   saved: 1.544 of 2 spent, nothing released, "stopped without a release" and no cause.
   The limit can be read up front: a release that would hit it is refused, nothing spent.
7. ``--ledger`` naming the enclave's own ledger file (inside ``--private-dir``): the
   dataset's charge landed, then the enclave's charge on the same file failed (exit 4)
   and the budget was gone. Refused up front.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest
import yaml

from synthflow.cli import main
from synthflow.privacy.ledger import Ledger
from synthflow.space import expand_space


def _cands(tmp_path, spec):
    path = tmp_path / "candidates.yaml"
    configurations = [c.to_json() for c in expand_space(spec) if c.letters == "aaaa"]
    path.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configurations}))
    return path


def _argv(tmp_path, spec, data, *, ledger, enclave) -> list[str]:
    return ["release", spec.path, "--data", str(data), "--candidates",
            str(_cands(tmp_path, spec)), "--out", str(tmp_path / "r"), "--private-dir",
            str(enclave), "--ledger", str(ledger), "--quiet", "--force",
            "--stop-probability", "1"]  # fmt: skip


def test_a_file_size_limit_the_release_would_hit_is_refused_before_the_charge(
    tmp_path, small_spec, small_csv
):
    ledger = tmp_path / "budget.jsonl"
    argv = _argv(tmp_path, small_spec, small_csv, ledger=ledger, enclave=tmp_path / "e")
    limit = 8192  # 600 rows of labels need ~20 KB; the ledger and transcript fit in 8 KB

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-m", "synthflow", *argv], preexec_fn=limited,
                          capture_output=True, text=True, env=env, timeout=300,
                          check=False)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "file-size limit (ulimit -f) is 8,192 bytes" in done.stderr
    assert "Nothing was spent" in done.stderr
    assert not ledger.exists() or Ledger(total_epsilon=100, path=ledger).charges == ()
    # without the limit the same command releases
    again = subprocess.run([sys.executable, "-m", "synthflow", *argv], capture_output=True,
                           timeout=300, check=False)  # fmt: skip
    assert again.returncode in (0, 1)
    assert Ledger(total_epsilon=100, path=ledger).charges != ()


@pytest.mark.parametrize("name", ["ledger.jsonl", "transcript.jsonl", "attempts/1/x.jsonl"])
def test_the_enclaves_own_ledger_as_the_dataset_ledger_is_refused(
    tmp_path, small_spec, small_csv, capsys, name
):
    enclave = tmp_path / "enclave"
    ledger = enclave / name
    assert main(_argv(tmp_path, small_spec, small_csv, ledger=ledger, enclave=enclave)) == 2
    err = capsys.readouterr().err
    assert "a file the selection itself writes in --private-dir" in err
    assert "Nothing was spent" in err and "Traceback" not in err
    assert not ledger.exists() or Ledger(total_epsilon=100, path=ledger).charges == ()
    # a ledger of its own inside the enclave directory (the README's form) is fine
    own = enclave / "budget.jsonl"
    assert main(_argv(tmp_path, small_spec, small_csv, ledger=own, enclave=enclave)) in (0, 1)
    assert Ledger(total_epsilon=100, path=own).charges != ()

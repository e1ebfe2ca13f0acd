"""A spec may not name the private file as its public_sample (#45, catalogue).

The published noise figures are computed from the public sample without a charge: with
the private file as public_sample, a release published statistics of the private rows
(a simulated regression median of 198.27) and nothing checked. Now release and the DP
evaluate refuse it, by content (a renamed or gzipped copy too), before any charge; and
a release names the file its figures came from.
"""

from __future__ import annotations

import gzip
import json

import pytest
import yaml

from synthflow.cli import main
from synthflow.ledger import Ledger
from synthflow.loader import load_spec
from synthflow.release.audit import audit_release
from synthflow.space import expand_space


def _spec_with_sample(tmp_path, small_spec, sample_name: str):
    doc = yaml.safe_load(open(small_spec.path).read())
    doc["public_sample"] = sample_name
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return load_spec(path)


def _cands(tmp_path, spec):
    path = tmp_path / "candidates.yaml"
    configurations = [c.to_json() for c in expand_space(spec) if c.letters == "aaaa"]
    path.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configurations}))
    return path


@pytest.mark.parametrize("copy", ["same-file", "renamed-gzipped"])
def test_the_private_file_as_public_sample_is_refused(
    tmp_path, small_spec, small_csv, capsys, copy
):
    if copy == "same-file":  # the spec sits beside the private file and names it
        name = small_csv.name
    else:
        with open(small_csv, "rb") as src, gzip.open(tmp_path / "public.csv.gz", "wb") as dst:
            dst.write(src.read())
        name = "public.csv.gz"
    spec = _spec_with_sample(tmp_path, small_spec, name)
    ledger = tmp_path / "budget.jsonl"
    argv = ["release", spec.path, "--data", str(small_csv), "--candidates",
            str(_cands(tmp_path, spec)), "--out", str(tmp_path / "r"), "--private-dir",
            str(tmp_path / "e"), "--ledger", str(ledger), "--quiet", "--force"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "holds the same rows as --data" in err
    assert not ledger.exists() or Ledger(total_epsilon=100, path=ledger).charges == ()
    config = expand_space(spec)[0].id
    argv = ["evaluate", spec.path, "--original", str(small_csv), "--candidate", str(small_csv),
            "--config", config, "--ledger", str(ledger)]  # fmt: skip
    assert main(argv) == 2
    assert "holds the same rows as --data" in capsys.readouterr().err
    assert not ledger.exists() or Ledger(total_epsilon=100, path=ledger).charges == ()


def test_a_release_names_the_public_sample_its_figures_came_from(tmp_path, small_spec, small_csv):
    # A public sample that is not the private file: the release proceeds, and
    # acceptance.json names the file and its hash; the audit checks them.
    import pandas as pd

    pd.read_csv(small_csv).sample(frac=1.0, replace=True, random_state=3).to_csv(
        tmp_path / "public.csv", index=False
    )
    spec = _spec_with_sample(tmp_path, small_spec, "public.csv")
    for seed in range(30):
        out = tmp_path / f"r{seed}"
        argv = ["release", spec.path, "--data", str(small_csv), "--candidates",
                str(_cands(tmp_path, spec)), "--out", str(out), "--private-dir",
                str(tmp_path / f"e{seed}"), "--public", "--seed", str(seed), "--quiet",
                "--force", "--stop-probability", "1"]  # fmt: skip
        if main(argv) == 0:
            break
    else:
        pytest.fail("no release in 30 single attempts")
    acc = json.loads((out / "acceptance.json").read_text())
    assert acc["public_sample"]["file"] == "public.csv"
    assert len(acc["public_sample"]["sha256"]) == 64
    report = audit_release(out, spec_path=spec.path)
    assert report.ok, report.failures
    assert any(name == "public sample" for name, *_ in report.checks)
    acc["public_sample"]["sha256"] = "0" * 64
    (out / "acceptance.json").write_text(json.dumps(acc))
    assert not audit_release(out, spec_path=spec.path).ok


def test_the_api_refuses_it_too_before_any_charge(tmp_path, small_spec, small_csv):
    # The weighted regression fit (noise_weights: public_sample) shapes its noise from the
    # public sample, so the API's DP evaluation must refuse the private rows there as well.
    from synthflow.api import evaluate_candidate
    from synthflow.data import load_data
    from synthflow.errors import ConfigError

    spec = _spec_with_sample(tmp_path, small_spec, small_csv.name)
    original = load_data(small_csv, spec).frame
    config = expand_space(spec)[0]
    from synthflow.transform import Transformer

    candidate = Transformer(spec, config.transformations).forward(original)
    ledger = Ledger(total_epsilon=100, path=tmp_path / "budget.jsonl")
    with pytest.raises(ConfigError, match="holds the same rows"):
        evaluate_candidate(spec, config, original, candidate, exact=False, ledger=ledger)
    assert ledger.charges == ()

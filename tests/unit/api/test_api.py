"""The public API (synthflow/__init__.py): names, fit/sample, reports, notebooks."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import synthflow
from synthflow.acceptance.evaluate import evaluate
from synthflow.flow import run_flow

REPO = Path(__file__).resolve().parents[3]
CONFIG = "privbayes-a1076afd5b"  # births-2024, PrivBayes theta 2, release binning aaaaaa


def test_every_public_name_resolves_and_import_is_light():
    for name in synthflow.__all__:
        assert getattr(synthflow, name) is not None, name
    probe = "import synthflow, sys; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"  # `import synthflow` loads no library


def test_synthesizer_is_one_flow(births_spec, nvss_10k):
    data = synthflow.load_data(nvss_10k, births_spec, public=True).frame
    s = synthflow.Synthesizer(births_spec, CONFIG)
    assert repr(s) == f"Synthesizer(spec='births-2024', configuration='{CONFIG}', fitted=False)"
    assert s.get_params()["epsilon"] == births_spec.privacy.generator_epsilon
    with pytest.raises(RuntimeError, match="fit"):
        s.sample()
    ledger = synthflow.Ledger(total_epsilon=births_spec.privacy.total_epsilon)
    rng = synthflow.PrivacyRNG.from_seed(5)
    labels = s.fit(data, ledger=ledger, rng=rng, public=True).sample()
    # The same seed through run_flow gives the same candidate: fit/sample is the flow.
    flow = run_flow(
        births_spec, s.configuration, data, ledger=synthflow.Ledger(total_epsilon=100),
        rng=synthflow.PrivacyRNG.from_seed(5), public=True, show_progress=False,
    )  # fmt: skip
    pd.testing.assert_frame_equal(labels, flow.transformer.to_labels(flow.candidate))
    # Reprs are short and never show data (the original is private).
    assert repr(flow) == (
        f"FlowResult(configuration='{CONFIG}', rows={len(data)}, "
        f"rows_filtered={flow.rows_filtered}, projection_rows={flow.projection_rows})"
    )
    assert (
        repr(births_spec).startswith("ReleaseSpec(name='births-2024'")
        and len(repr(births_spec)) < 200
    )
    assert repr(ledger) == "Ledger(total_epsilon=10, spent_epsilon=4, charges=2)"  # MI + tables
    assert repr(rng) == "PrivacyRNG.from_seed(5)"
    assert repr(s.configuration).startswith(f"Configuration('{CONFIG}': privbayes")
    assert ledger.spent_epsilon == pytest.approx(births_spec.privacy.generator_epsilon)
    assert len(s.sample(500)) == 500


def test_synthesizer_refuses_seeds_on_private_data(births_spec, nvss_10k):
    data = synthflow.load_data(nvss_10k, births_spec, public=True).frame
    ledger = synthflow.Ledger(total_epsilon=10)
    with pytest.raises(synthflow.ConfigError, match="public data only"):
        synthflow.Synthesizer(births_spec, CONFIG).fit(
            data, ledger=ledger, rng=synthflow.PrivacyRNG.from_seed(1)
        )
    assert ledger.spent_epsilon == 0  # refused before any charge


def test_evaluate_candidate_matches_evaluate_and_renders(births_spec, nvss_10k):
    data = synthflow.load_data(nvss_10k, births_spec, public=True).frame
    s = synthflow.Synthesizer(births_spec, CONFIG).fit(
        data, public=True, rng=synthflow.PrivacyRNG.from_seed(2)
    )
    labels = s.sample()
    report = synthflow.evaluate_candidate(
        births_spec, CONFIG, data, labels, exact=True, public=True
    )
    direct = evaluate(
        births_spec, s.transformer, s.transformer.forward(data),
        s.transformer.from_labels(labels), exact=True,
    )  # fmt: skip
    assert report == direct
    ok = sum(c.passed for c in report.criteria)
    assert repr(report) == (
        f"<AcceptanceReport {'PASSED' if report.passed else 'FAILED'}: {ok} of 8 criteria (exact)>"
    )
    page = report._repr_html_()
    assert page.count("<tr>") == 1 + len(report.criteria) and "noise_sd" not in page
    with pytest.raises(synthflow.ConfigError, match="ledger"):
        synthflow.evaluate_candidate(births_spec, CONFIG, data, labels, exact=False)
    with pytest.raises(synthflow.ConfigError, match="public data only"):
        synthflow.evaluate_candidate(births_spec, CONFIG, data, labels, exact=True)
    ledger = synthflow.Ledger(total_epsilon=births_spec.privacy.total_epsilon)
    dp = synthflow.evaluate_candidate(
        births_spec, CONFIG, data, labels, exact=False, ledger=ledger,
        rng=synthflow.PrivacyRNG.from_seed(3), public=True,
    )  # fmt: skip
    assert ledger.spent_epsilon == pytest.approx(births_spec.evaluation_epsilon)
    assert "noise_sd" in dp._repr_html_()


PRIVATE = re.compile(r"(?:from|import)\s+synthflow\.[a-z_.]+")


@pytest.mark.parametrize("notebook", sorted((REPO / "notebooks").glob("*.ipynb")))
def test_notebooks_use_only_the_public_api(notebook):
    cells = json.loads(notebook.read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "synthflow" in code
    assert not PRIVATE.findall(code), f"{notebook.name} imports internals"
    names = {
        n.strip() for m in re.findall(r"from synthflow import ([^\n]+)", code) for n in m.split(",")
    }
    assert names <= set(synthflow.__all__), names - set(synthflow.__all__)


def test_the_notebook_check_can_fail():
    assert PRIVATE.findall("from synthflow.sweep.job import run_sweep")

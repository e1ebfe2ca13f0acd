"""``synthflow evaluate`` end to end on the public NVSS sample: files, JSON, report."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthflow.acceptance import exact_values
from synthflow.acceptance.job import load_codes
from synthflow.acceptance.report import DP_OMITTED, EXACT_BANNER
from synthflow.cli import main
from synthflow.criteria.conditional_mean import cond_mean_table
from synthflow.criteria.faithfulness import maximum_matching
from synthflow.criteria.regression import fit as regression
from synthflow.data import load_data
from synthflow.loader import load_spec
from synthflow.space import expand_space, find_configuration
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[3]
SPEC = REPO / "configs" / "births-2024.yaml"
DATA = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_10k.csv"
REQUIRED = {
    "name",
    "value",
    "threshold",
    "passed",
    "epsilon",
    "mechanism",
    "sensitivity",
    "noise_sd",
}
PRIVACY_FIELDS = ("epsilon", "mechanism", "sensitivity", "noise_sd")


@pytest.fixture(scope="module")
def births(tmp_path_factory):
    """A candidate made by ``synthflow run`` (seeded; the NVSS sample is public)."""
    if not DATA.is_file():
        pytest.skip(f"public NVSS sample not found at {DATA}")
    spec = load_spec(SPEC)
    config_id = expand_space(spec)[0].id
    out = tmp_path_factory.mktemp("run") / "run"
    rc = main(
        [
            "run",
            str(SPEC),
            "--data",
            str(DATA),
            "--config",
            config_id,
            "--out",
            str(out),
            "--seed",
            "1",
            "--public",
            "--quiet",
        ]
    )
    assert rc == 0
    tr = Transformer(spec, find_configuration(spec, config_id).transformations)
    return spec, tr, config_id, out / "candidate.csv"


def _evaluate(births, tmp: Path, *extra: str, candidate: Path | None = None) -> int:
    _, _, config_id, cand = births
    return main(
        [
            "evaluate",
            str(SPEC),
            "--original",
            str(DATA),
            "--candidate",
            str(candidate or cand),
            "--config",
            config_id,
            "--json",
            str(tmp / "result.json"),
            "--report",
            str(tmp / "report.html"),
            "--ledger",
            str(tmp / "ledger.jsonl"),
            *extra,
        ]
    )


def _assert_exit_code_follows_verdict(code: int, tmp: Path) -> None:
    # 0 when every criterion passed, 1 (a negative result) otherwise; never 2 (an error).
    passed = json.loads((tmp / "result.json").read_text())["passed"]
    assert code == (0 if passed else 1)


@pytest.fixture(scope="module")
def exact_run(births, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("exact")
    _assert_exit_code_follows_verdict(_evaluate(births, tmp, "--exact", "--public"), tmp)
    return tmp


@pytest.fixture(scope="module")
def dp_run(births, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dp")
    _assert_exit_code_follows_verdict(_evaluate(births, tmp, "--seed", "7", "--public"), tmp)
    return tmp


def _codes(births):
    spec, tr, _, cand = births
    t = tr.forward(load_data(DATA, spec, public=True).frame)
    r = load_codes(cand, spec, tr, public=True)
    return t, r


def test_candidate_and_raw_files_are_told_apart(births, tmp_path):
    spec, tr, _, cand = births
    labels = pd.read_csv(cand)
    assert set(tr.domain.names) <= set(labels.columns)
    from_cand = load_codes(cand, spec, tr, public=True)
    pd.testing.assert_frame_equal(from_cand, tr.from_labels(labels[list(tr.domain.names)]))
    from_raw = load_codes(DATA, spec, tr, public=True)
    pd.testing.assert_frame_equal(from_raw, tr.forward(load_data(DATA, spec, public=True).frame))
    # The binned original written as bin labels is read as a candidate: evaluating it
    # against its own raw file is a perfect match.
    own = tmp_path / "own.csv"
    tr.to_labels(from_raw).to_csv(own, index=False)
    code = _evaluate(births, tmp_path, "--exact", "--public", candidate=own)
    _assert_exit_code_follows_verdict(code, tmp_path)
    doc = json.loads((tmp_path / "result.json").read_text())
    by_name = {c["name"]: c["value"] for c in doc["criteria"]}
    assert by_name["marginal_max_abs_error"] == 0.0
    assert by_name["faithfulness_unmatched"] == 0.0


def test_exact_json_has_null_privacy_fields_and_charges_nothing(births, exact_run):
    doc = json.loads((exact_run / "result.json").read_text())
    assert doc["epsilon_total"] == 0.0 and doc["exact"] is True
    assert [c["name"] for c in doc["criteria"]] == [c.name for c in births[0].criteria]
    for c in doc["criteria"]:
        assert REQUIRED <= set(c)
        assert all(c[k] is None for k in PRIVACY_FIELDS)
        assert c["passed"] == (c["value"] < c["threshold"])
    assert not (exact_run / "ledger.jsonl").exists()
    # The JSON values are the exact ones of the public API.
    spec, tr, _, _ = births
    want = exact_values(spec, tr, *_codes(births))
    assert {c["name"]: c["value"] for c in doc["criteria"]} == pytest.approx(want)


def test_dp_json_keys_and_budget(births, dp_run):
    doc = json.loads((dp_run / "result.json").read_text())
    assert {"criteria", "passed", "epsilon_total"} <= set(doc)
    assert doc["exact"] is False
    for c in doc["criteria"]:
        assert REQUIRED <= set(c)
        assert c["epsilon"] > 0 and c["sensitivity"] > 0 and c["noise_sd"] > 0
        assert isinstance(c["mechanism"], str)
        # A criterion whose noise decides at this candidate's groups fails whatever its
        # value (#60), and says so.
        assert c["passed"] == (c["value"] < c["threshold"] and not c.get("noise_dominated"))
    assert doc["passed"] == all(c["passed"] for c in doc["criteria"])
    assert doc["epsilon_total"] == pytest.approx(0.99, abs=1e-12)
    assert doc["epsilon_total"] == pytest.approx(births[0].evaluation_epsilon)
    lines = (dp_run / "ledger.jsonl").read_text().splitlines()
    charged = [c for c in map(json.loads, lines) if "header" not in c]
    assert math.fsum(ch["epsilon"] for ch in charged) == pytest.approx(0.99)


def test_seed_without_public_is_refused_and_nothing_written(births, tmp_path, capsys):
    assert _evaluate(births, tmp_path, "--seed", "7") == 2
    err = capsys.readouterr().err
    assert "--seed" in err and "--public" in err
    assert list(tmp_path.iterdir()) == []


def test_dp_mode_refuses_different_sizes(births, tmp_path, capsys):
    short = tmp_path / "short.csv"
    pd.read_csv(births[3]).iloc[:-1].to_csv(short, index=False)
    assert _evaluate(births, tmp_path, "--seed", "7", "--public", candidate=short) == 2
    assert "equal sizes" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["short.csv"]  # nothing charged


def test_exact_report_first_line_says_non_private(exact_run):
    text = (exact_run / "report.html").read_text(encoding="utf-8")
    first = text.splitlines()[0]
    assert "NON-PRIVATE" in first and EXACT_BANNER in first
    assert text.count("data:image/png;base64,") >= 6  # criteria, marginals, means, ...
    assert "Worst k-way cells" in text and "Which column blocks matches" in text
    # Diagnostics beside the criteria, labelled as such (exact mode only).
    assert "Diagnostics (not acceptance criteria; exact, non-private)" in text
    assert "Overall quality" in text and "identical to an original row" in text


def _exact_strings(births) -> set[str]:
    """Exact D_T statistics as the report would print them (6 significant digits)."""
    _, tr, _, _ = births
    t, r = _codes(births)
    tm, rm = t.to_numpy(np.int64), r.to_numpy(np.int64)
    out: set[str] = set()
    for j in range(tm.shape[1]):  # 1-way marginals of D_T that differ from D_R's
        p = np.bincount(tm[:, j], minlength=tr.domain.sizes[j]) / len(tm)
        q = np.bincount(rm[:, j], minlength=tr.domain.sizes[j]) / len(rm)
        out |= {f"{v:.6g}" for v, w in zip(p, q, strict=True) if v != w and v > 0.001}
    for g in cond_mean_table(tm, rm, tr, "birth_weight", ("parity", "mother_age", None)):
        if g.mean_original != g.mean_candidate:
            out.add(f"{g.mean_original:.6g}")
    spec = births[0]
    rule = next(c.match for c in spec.criteria if c.kind == "faithfulness")
    assert rule is not None
    out.add(f"matched {maximum_matching(tm, rm, tr, rule).size} of")
    return out


def test_dp_report_holds_no_exact_statistic(births, exact_run, dp_run):
    strings = _exact_strings(births)
    exact_doc = json.loads((exact_run / "result.json").read_text())
    strings |= {f"{c['value']:.6g}" for c in exact_doc["criteria"] if c["value"] not in (0, 2)}
    exact_html = (exact_run / "report.html").read_text(encoding="utf-8")
    dp_html = (dp_run / "report.html").read_text(encoding="utf-8")
    # The strings are what the exact report shows (so their absence means something)...
    shown = {s for s in strings if s in exact_html}
    assert len(shown) >= 20
    # ... and none of them is in the DP report.
    assert not {s for s in strings if s in dp_html}
    assert "DP evaluation" in dp_html.splitlines()[0] and "NON-PRIVATE" not in dp_html
    assert DP_OMITTED in dp_html
    assert "Diagnostics (not acceptance criteria" not in dp_html  # they read D_T exactly
    assert "<th>original</th>" not in dp_html  # no D_T column in any table


def test_dp_report_shows_the_dp_fit_next_to_the_candidate_ols(births, exact_run, dp_run):
    spec, tr, _, _ = births
    t, _ = _codes(births)
    crit = next(c for c in spec.criteria if c.kind == "regression_coefficients")
    x, y, feats, _, _ = regression.design(t.to_numpy(np.int64), tr, str(crit.column), crit.features)
    exact_ols = regression.ols(x, y, feats)
    dp_html = (dp_run / "report.html").read_text(encoding="utf-8")
    assert "original (DP fit)" in dp_html and "candidate (OLS)" in dp_html
    # the exact fit of D_T (which the exact report shows) is not what the DP report shows
    exact_html = (exact_run / "report.html").read_text(encoding="utf-8")
    shown = f"{exact_ols.intercept:.6g}"  # the reports print 6 significant digits
    assert shown in exact_html and shown not in dp_html


def test_dp_report_says_how_many_passed_and_warns_of_noise_dominated_criteria(births, dp_run):
    import html

    from synthflow.acceptance.noise_check import noise_figures, public_sample

    spec, tr, _, _ = births
    doc = json.loads((dp_run / "result.json").read_text())
    html_text = (dp_run / "report.html").read_text(encoding="utf-8")
    passed = sum(c["passed"] for c in doc["criteria"])
    assert f"passed {passed} of {len(doc['criteria'])} criteria" in html_text
    # The banner lists the one noise rule's flagged criteria, with the same figures the
    # pre-flight and the datasheet print (10K rows: the regression is noise-dominated).
    n = len(load_data(DATA, spec, public=True).frame)
    figs = noise_figures(spec, tr, n, public_sample(spec))
    flagged = [f for f in figs if f.dominated]
    assert {f.criterion for f in flagged} >= {"regression_coef_error"}
    banner = html_text.split("Decided mostly by noise")[1][:4000]
    for f in flagged:
        assert html.escape(f.message()) in banner
    for f in figs:
        assert f"{f.perfect_pass:.0%}" in html_text


def test_dp_evaluate_refuses_a_missing_public_sample_before_the_charge(births, tmp_path, capsys):
    # The DP report reads the spec's public sample (the noise rule's figures) after the
    # evaluation is charged: a missing one is refused first, nothing spent.
    _, _, config_id, cand = births
    text = SPEC.read_text().replace(
        "public_sample: nvss_like_2019.csv.gz", "public_sample: missing_sample.csv.gz"
    )
    assert "missing_sample" in text
    spec = tmp_path / "births.yaml"
    spec.write_text(text)
    ledger = tmp_path / "ledger.jsonl"
    rc = main(["evaluate", str(spec), "--original", str(DATA), "--candidate", str(cand),
               "--config", config_id, "--report", str(tmp_path / "r.html"),
               "--ledger", str(ledger), "--seed", "1", "--public"])  # fmt: skip
    assert rc == 2
    assert "public_sample 'missing_sample.csv.gz' is neither beside the spec" in (
        capsys.readouterr().err
    )
    assert not ledger.exists() or not ledger.read_text().strip()
    assert not (tmp_path / "r.html").exists()

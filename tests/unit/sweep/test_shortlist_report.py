import re
from pathlib import Path

import pytest
import yaml
from standin import Swept

from synthflow.cli import main
from synthflow.sweep.job import file_sha256
from synthflow.sweep.shortlist import estimate, wilson_interval
from synthflow.sweep.store import SweepStore


def test_wilson_interval_known_values() -> None:
    low, high = wilson_interval(2, 10)
    assert (round(low, 4), round(high, 4)) == (0.0567, 0.5098)
    assert wilson_interval(0, 5)[0] == 0.0
    assert wilson_interval(5, 5)[1] == 1.0
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(1 - high)
    with pytest.raises(ValueError, match=re.escape("runs (0) must be at least 1")):
        wilson_interval(0, 0)
    with pytest.raises(ValueError, match=re.escape("passes (4) must be in [0, runs=3]")):
        wilson_interval(4, 3)


def test_estimates_match_the_store(swept: Swept) -> None:
    est = estimate(swept.store, basis="exact")
    assert len(est) == 12
    with SweepStore.open_existing(swept.store) as db:
        runs = db.runs()
    for e in est:
        group = runs[runs["config_id"] == e.config_id]
        assert (e.runs, e.passes) == (3, int(group["passed_exact"].sum()))
        assert e.low <= e.p <= e.high
    assert [e.p for e in est] == sorted((e.p for e in est), reverse=True)


def test_shortlist_cli_writes_hashes_and_estimates(swept: Swept, tmp_path: Path, capsys) -> None:
    out = tmp_path / "candidates.yaml"
    assert (
        main(["shortlist", "--store", str(swept.store), "--min-pass", "0.0", "--out", str(out)])
        == 0
    )
    doc = yaml.safe_load(out.read_text())
    assert doc["spec_sha256"] == swept.spec.sha256
    assert doc["public_data_sha256"] == file_sha256(swept.data)
    assert doc["min_pass"] == 0.0 and doc["basis"] == "dp"
    assert len(doc["configurations"]) == 12
    entry = doc["configurations"][0]
    assert {
        "id",
        "model",
        "hyperparameters",
        "transformations",
        "min_count",
        "runs",
        "passes",
        "pass_rate",
        "wilson_low",
        "wilson_high",
        "expected_attempts",
    } <= set(entry)
    out.unlink()
    assert (
        main(["shortlist", "--store", str(swept.store), "--min-pass", "1.01", "--out", str(out)])
        == 2
    )
    assert "error: --min-pass (1.01) must be in [0, 1]" in capsys.readouterr().err
    assert not out.exists()


def test_an_empty_shortlist_writes_no_file(tmp_path: Path, small_spec, small_csv, capsys) -> None:
    # [ux] 9: an empty shortlist still wrote its file, so the next 'shortlist' (with a
    # lower --min-pass) failed with "exists ... add --force". A real sweep of a spec whose
    # marginal threshold (1e-6) no candidate meets.
    from synthflow.loader import load_spec
    from synthflow.sweep.job import run_sweep

    text = (
        Path(small_spec.path)
        .read_text()
        .replace("kind: marginals, threshold: 0.05", "kind: marginals, threshold: 0.000001")
    )
    (tmp_path / "strict.yaml").write_text(text)
    spec = load_spec(tmp_path / "strict.yaml")
    store = tmp_path / "results.db"
    run_sweep(spec, small_csv, store, repeats=1, workers=1, seed=3, show_progress=False)
    out = tmp_path / "candidates.yaml"
    argv = ["shortlist", "--store", str(store), "--out", str(out)]
    assert main([*argv, "--min-pass", "0.5"]) == 1
    err = capsys.readouterr().err
    assert "EMPTY" in err and "No file was written" in err
    assert not out.exists()
    assert main([*argv, "--min-pass", "0.0"]) == 0  # no --force needed
    assert out.exists()


def test_report_has_sections_and_plots(swept: Swept, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert (
        main(["sweep-report", "--store", str(swept.store), "--out", str(out), "--min-pass", "0.0"])
        == 0
    )
    text = out.read_text()
    for needle in (
        "Pass rates by setting",
        "Settings with one value only (nothing to compare):",
        "<code>model = privbayes</code>",
        "<h3>transform:mother_age",
        "<h3>hp:theta",
        "Which criterion fails most",
        "one_way_max_abs_error",
        "expected attempts 1/mean(p)",
        "data:image/png;base64,",
        'class="legend"',  # the colours are explained
        "with the release's noise",
    ):
        assert needle in text
    # No Python reprs leak into the page's text (images left out).
    words = re.sub(r"data:image/png;base64,[^\"]+", "", text)
    for repr_text in ("{'", "None", "nan", "[np."):
        assert repr_text not in words
    # Hyperparameter values in numeric order (16 before 100), not text order.
    section = text.split("<h3>hp:theta", 1)[1].split("</table>", 1)[0]
    values = [float(v) for v in re.findall(r'<td class="text">([0-9.]+)</td>', section)]
    assert len(values) >= 2 and values == sorted(values)


def test_cli_refuses_a_foreign_store(tmp_path: Path, capsys) -> None:
    store = tmp_path / "results.db"
    store.write_bytes(b"PK\x03\x04 a zip file, not a store")
    before = store.read_bytes()
    for argv in (
        ["shortlist", "--store", str(store), "--out", str(tmp_path / "c.yaml")],
        ["sweep-report", "--store", str(store), "--out", str(tmp_path / "r.html")],
    ):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"error: store {str(store)!r} exists but is not an SQLite database" in err
    assert store.read_bytes() == before
    assert not (tmp_path / "c.yaml").exists()


def test_thin_evidence_is_headlined_before_the_figures(
    swept: Swept, tmp_path: Path, capsys
) -> None:
    # 3 runs per configuration: the Wilson intervals span most of [0, 1] (#38 item 4).
    out = tmp_path / "c.yaml"
    main(["shortlist", "--store", str(swept.store), "--min-pass", "0.0", "--out", str(out)])
    err = capsys.readouterr().err
    assert err.startswith("synthflow shortlist: THIN EVIDENCE: 3 runs per configuration;")
    assert "Wilson interval is [" in err and "--repeats 10" in err


def test_thin_evidence_rule() -> None:
    from synthflow.sweep.shortlist import PassEstimate, thin_evidence, wilson_interval

    def est(k: int, n: int) -> PassEstimate:
        low, high = wilson_interval(k, n)
        return PassEstimate(config_id=f"c{k}-{n}", configuration={}, generator_epsilon=1.0,
                            runs=n, passes=k, low=low, high=high)  # fmt: skip

    assert thin_evidence([]) is None
    assert thin_evidence([est(90, 100), est(50, 100)]) is None  # widths 0.12, 0.19
    one = thin_evidence([est(1, 1)])
    assert one is not None and "1 run per configuration" in one and "[0.21, 1.00]" in one
    mixed = thin_evidence([est(90, 100), est(2, 5)])  # the 5-run one is too thin
    assert mixed is not None and "5 to 100 runs" in mixed and "c2-5 passed 2 of 5" in mixed
    never = thin_evidence([est(0, 4)])
    assert never is not None and "never (it may not pass at all)" in never


def test_the_sweep_report_headlines_thin_evidence(swept: Swept, tmp_path: Path) -> None:
    from synthflow.sweep.report import write_report

    html = Path(write_report(swept.store, tmp_path / "r.html")).read_text()
    head = html[html.index("<h1>Sweep report</h1>") :][:600]
    assert "THIN EVIDENCE: 3 runs per configuration" in head

"""``synthflow tables protect`` and ``synthflow tables compare`` end to end on small data."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from tables_support import REPO, TABLES_BIRTHS, make_births, tables_of

from synthflow.cli import main
from synthflow.config import ReleaseSpec
from synthflow.errors import DataError
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.tables import (
    Microdata,
    compare,
    load_tables,
    read_release,
    render_html,
    tabulate_all,
)
from synthflow.tables.compare import comparison_budget
from synthflow.transform import Transformer

SPEC = str(REPO / "configs" / "births-2024.yaml")


@pytest.fixture()
def births_csv(tmp_path: Path) -> Path:
    path = tmp_path / "births.csv"
    make_births(400, seed=9).to_csv(path, index=False)
    return path


def _protect(births_csv: Path, out: Path, *args: str) -> int:
    return main(
        [
            "tables", "protect", "--data", str(births_csv), SPEC,
            "--tables", str(TABLES_BIRTHS), "--out", str(out), "--seed", "1", "--public", *args,
        ]
    )  # fmt: skip


FILES = [
    "age_by_parity.csv",
    "gestation_by_weight_by_sex.csv",
    "sex_by_gestation_by_month.birth_month.csv",
    "sex_by_gestation_by_month.national.csv",
]


@pytest.mark.parametrize(
    ("method", "extra"),
    [
        ("cell-key", ["--keys", "256"]),
        ("ten-five", []),
        ("suppress", ["--threshold", "5"]),
        ("round", ["--base", "3"]),
        ("laplace", ["--epsilon", "1", "--nonnegative"]),
        ("geometric", ["--epsilon", "1"]),
        ("gaussian", ["--epsilon", "1", "--delta", "1e-5"]),
        ("top-down", ["--epsilon", "1", "--noise", "geometric"]),
    ],
)
def test_protect_writes_one_csv_per_table(
    births_csv: Path, tmp_path: Path, method: str, extra: list[str]
) -> None:
    out = tmp_path / "out"
    assert _protect(births_csv, out, "--method", method, *extra) == 0
    written = sorted(p.name for p in out.glob("*.csv") if p.name != "ptable.csv")
    assert written == FILES
    frame = pd.read_csv(out / "age_by_parity.csv", keep_default_na=False)
    assert list(frame.columns) == ["mother_age", "parity", "count"]
    assert len(frame) == 10 * 5
    meta = json.loads((out / "tables.json").read_text())
    assert meta["method"]["method"] == method
    dp = method in ("laplace", "geometric", "gaussian", "top-down")
    assert (out / "ledger.jsonl").exists() == dp
    if dp:
        assert meta["privacy"]["spent_epsilon"] == pytest.approx(1.0)
    if method == "cell-key":
        assert (out / "ptable.csv").exists()
    if method in ("ten-five", "suppress"):
        assert (frame["count"] == "").any()  # suppressed counts are left empty


def test_top_down_csvs_are_additive(births_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "td"
    assert _protect(births_csv, out, "--method", "top-down", "--epsilon", "2") == 0
    nat = pd.read_csv(out / "sex_by_gestation_by_month.national.csv")
    month = pd.read_csv(out / "sex_by_gestation_by_month.birth_month.csv")
    summed = month.groupby(["birth_sex", "gestation_week"], sort=False)["count"].sum()
    merged = nat.set_index(["birth_sex", "gestation_week"])["count"]
    pd.testing.assert_series_equal(summed.loc[merged.index], merged, check_names=False)
    assert nat["count"].sum() == 400  # replace_one: n is public


def test_gaussian_default_delta_is_charged(births_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "g"
    assert _protect(births_csv, out, "--method", "gaussian", "--epsilon", "1") == 0
    lines = [json.loads(x) for x in (out / "ledger.jsonl").read_text().splitlines()]
    assert sum(x["delta"] for x in lines) == pytest.approx(1e-6)
    out = tmp_path / "tdg"
    assert _protect(births_csv, out, "--method", "top-down", "--epsilon", "1", "--noise",
                    "gaussian") == 0  # fmt: skip
    meta = json.loads((out / "tables.json").read_text())
    assert meta["privacy"]["spent_delta"] == pytest.approx(1e-6)


def test_top_down_split_must_fit_every_table(
    births_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The shipped tables have 2 or 3 levels (total, national, month): one split cannot fit.
    out = tmp_path / "s"
    assert _protect(births_csv, out, "--method", "top-down", "--epsilon", "1",
                    "--split", "0.01,0.99") == 2  # fmt: skip
    assert "give one share per level" in capsys.readouterr().err
    assert not (out / "ledger.jsonl").exists()  # nothing was charged


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--method", "laplace"], "--method laplace is differentially private: pass --epsilon"),
        (
            ["--method", "laplace", "--epsilon", "1", "--delta", "0.1"],
            "--delta applies to Gaussian",
        ),
        (["--method", "cell-key", "--rate-small", "2"], "rates must satisfy"),
        (
            ["--method", "cell-key", "--record-key-column", "id"],
            "input lacks the requested column(s) ['id']",
        ),
    ],
)
def test_protect_errors(
    births_csv: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    assert _protect(births_csv, tmp_path / "o", *args) == 2
    assert re.search(re.escape(message), capsys.readouterr().err)


def test_seed_needs_public_and_out_must_be_new(
    births_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["tables", "protect", "--data", str(births_csv), SPEC, "--tables",
            str(TABLES_BIRTHS), "--method", "round"]  # fmt: skip
    assert main([*base, "--out", str(tmp_path / "a"), "--seed", "1"]) == 2
    assert "--seed makes the noise reproducible" in capsys.readouterr().err
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    assert main([*base, "--out", str(tmp_path / "a")]) == 2
    assert "is not empty" in capsys.readouterr().err


def _release(spec: ReleaseSpec, frame: pd.DataFrame, out: Path) -> Path:
    """A 'perfect' synthetic release: the data's own bin labels (release letters)."""
    tr = Transformer(spec, {"mother_age": "b", "parity": "a", "gestation_week": "a"})
    out.mkdir()
    tr.to_labels(tr.forward(frame)).to_csv(out / "candidate.csv", index=False)
    (out / "ledger.jsonl").write_text(json.dumps({"what": "gen", "epsilon": 4.0}) + "\n")
    return out


def test_compare_cli_writes_a_self_contained_report(
    births_csv: Path, tmp_path: Path, births_spec: ReleaseSpec
) -> None:
    release = _release(births_spec, pd.read_csv(births_csv), tmp_path / "release")
    report = tmp_path / "report.html"
    args = ["tables", "compare", SPEC, "--data", str(births_csv), "--tables", str(TABLES_BIRTHS),
            "--release", str(release), "--out", str(report), "--epsilons", "1,5",
            "--seed", "2", "--public"]  # fmt: skip
    assert main(args) == 0
    page = report.read_text()
    # a risk-utility map and the heatmaps for each of the 4 table levels
    assert page.count("<img") == 8
    assert 'src="data:image/png;base64,' in page and "http" not in page
    assert page.count('<h2 id="table-') == 4  # one section per table level
    assert 'class="legend"' in page and "dp-synthetic</span>" in page  # colours explained
    text = re.sub(r"data:image/png;base64,[^\"]+", "", page)  # the text, not the images
    for repr_text in ("{'", "'secure'", "None", "[0.", "nan"):
        assert repr_text not in text  # no Python reprs
    for label in ("cell-key 256", "cell-key 4096", "ten-five", "laplace ε=5", "top-down ε=1",
                  "dp-synthetic ε=4"):  # fmt: skip
        assert label in page


def test_read_release_finds_data_and_epsilon(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("parity\n1\n")
    (tmp_path / "synthetic.csv").write_text("parity\n2-3\n4-6\n")
    (tmp_path / "ledger.jsonl").write_text('{"epsilon": 4.0}\n{"epsilon": 0.99}\n')
    frame, eps = read_release(tmp_path)
    assert len(frame) == 2 and eps == pytest.approx(4.99)
    budget = {"budget": {"total_epsilon": 9.98}}
    (tmp_path / "acceptance.json").write_text(json.dumps(budget))
    assert read_release(tmp_path)[1] == 9.98
    with pytest.raises(DataError, match="is not a directory; pass the release directory"):
        read_release(tmp_path / "a.csv")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="holds no"):
        read_release(empty)


def _ledger(epsilons: tuple[float, ...]) -> Ledger:
    """A comparison's own ledger, sized as its job opens it (comparison_budget)."""
    eps, delta = comparison_budget(epsilons, delta=1e-6)
    return Ledger(total_epsilon=eps, total_delta=delta)


def test_compare_measures_side_by_side(births_spec: ReleaseSpec) -> None:
    frame = make_births(400, seed=9)
    tables = load_tables(TABLES_BIRTHS, births_spec)
    tr = Transformer(births_spec, {"mother_age": "b"})
    release = Microdata(tr.to_labels(tr.forward(frame)), births_spec, labelled=True)
    cmp = compare(
        Microdata(frame, births_spec), tables, rng=PrivacyRNG.from_seed(0), release=release,
        release_epsilon=9.98, epsilons=(1.0, 10.0), ledger=_ledger((1.0, 10.0)),
    )  # fmt: skip
    df = cmp.to_frame()
    assert set(df.table) == set(cmp.tables) and len(cmp.tables) == 4
    per_table = df.groupby("table").size()
    # original + 2 cell-key + 3 rounding + 4 DP methods x 2 epsilons + the release.
    assert (per_table == 1 + 2 + 3 + 8 + 1).all()
    syn = df[df.method == "dp-synthetic"]
    assert (syn.l1 == 0).all() and (syn.share_unchanged == 1).all()
    orig = df[df.method == "original"]
    assert (orig.l1 == 0).all()
    # The DP runs together spend (4 methods) x (1 + 10).
    assert cmp.privacy["spent_epsilon"] == pytest.approx(44.0)
    # Utility improves with epsilon for every DP method (L1 at eps 10 below eps 1).
    dp = df[df.epsilon.notna() & (df.method != "dp-synthetic")]
    l1 = dp.groupby(["method", "epsilon"]).l1.sum().unstack()
    assert (l1[10.0] < l1[1.0]).all()
    html = render_html(cmp)
    assert "dp-synthetic ε=9.98" in html
    counts = tabulate_all(tables[:1], Microdata(frame, births_spec))[0][0].counts
    assert np.isclose(df[(df.method == "original")].ones.iloc[0], (counts == 1).sum())


def test_compare_refuses_a_release_of_other_data(
    births_spec: ReleaseSpec, births_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    frame = pd.read_csv(births_csv)
    release = _release(births_spec, frame.iloc[: len(frame) // 2], tmp_path / "release")
    rc = main(
        [
            "tables",
            "compare",
            str(REPO / "configs" / "births-2024.yaml"),
            "--data",
            str(births_csv),
            "--tables",
            str(TABLES_BIRTHS),
            "--release",
            str(release),
            "--out",
            str(tmp_path / "r.html"),
            "--public",
            "--seed",
            "1",
        ]
    )
    assert rc == 2
    assert "pass the data the release was made from" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_compare_refuses_data_not_declared_public(
    births_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # DP audit finding 4: the report holds exact statistics of its input.
    out = tmp_path / "r.html"
    args = ["tables", "compare", SPEC, "--data", str(births_csv), "--tables", str(TABLES_BIRTHS),
            "--out", str(out)]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "for public data only" in err and "--public" in err
    assert not out.exists()


# -- [ledger] items 2 and 3 ------------------------------------------------------------


def _private(births_csv: Path, out: Path, *args: str) -> list[str]:
    return ["tables", "protect", "--data", str(births_csv), SPEC, "--tables",
            str(TABLES_BIRTHS), "--out", str(out), *args]  # fmt: skip


@pytest.mark.parametrize("method", ["laplace", "geometric"])
def test_a_dataset_ledger_is_charged_for_the_guarantee_the_noise_gives(
    births_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch, method
) -> None:
    # Item 2: --neighbouring add_remove on a replace-one ledger charged 1.0 for 4 tables
    # at Laplace scale 4.0, really 2.0. Now it is refused before any charge, and the
    # charge of the spec's relation equals the replace-one epsilon recomputed from the
    # scales actually drawn (a replaced row moves one table level by 2 in L1).
    ledger = tmp_path / "budget.jsonl"
    argv = _private(births_csv, tmp_path / "ar", "--method", method, "--epsilon", "1",
                    "--ledger", str(ledger), "--neighbouring", "add_remove")  # fmt: skip
    assert main(argv) == 2
    assert "differs from the spec's relation" in capsys.readouterr().err
    assert not ledger.exists()
    scales = []
    real = {"laplace": PrivacyRNG.laplace, "geometric": PrivacyRNG.discrete_laplace}[method]

    def spy(self, values, **kw):
        scales.append(kw["sensitivity"] / kw["epsilon"] if "epsilon" in kw else kw["scale"])
        return real(self, values, **kw)

    monkeypatch.setattr(PrivacyRNG, {"laplace": "laplace", "geometric": "discrete_laplace"}[method],
                        spy)  # fmt: skip
    argv = _private(births_csv, tmp_path / "ro", "--method", method, "--epsilon", "1",
                    "--ledger", str(ledger))  # fmt: skip
    assert main(argv) == 0
    from synthflow.privacy.ledger import Ledger

    charged = Ledger(total_epsilon=100, path=ledger).spent_epsilon
    assert len(scales) == 4  # one draw per table level
    assert charged == pytest.approx(sum(2.0 / s for s in scales))
    assert charged == pytest.approx(1.0)


@pytest.mark.parametrize("method", ["round", "ten-five", "suppress", "cell-key"])
def test_traditional_methods_on_private_data_say_they_are_not_dp(
    births_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], method: str
) -> None:
    # Item 3: they ran with "privacy": null and nothing said so.
    out = tmp_path / "o"
    assert main(_private(births_csv, out, "--method", method)) == 0
    err = capsys.readouterr().err
    assert "NOT differentially private" in err
    meta = json.loads((out / "tables.json").read_text())
    assert meta["privacy"]["differentially_private"] is False
    assert "NOT differentially private" in meta["privacy"]["statement"]
    assert "NOT differentially private" in (out / "NOT_DIFFERENTIALLY_PRIVATE.txt").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--method", "round", "--base", "1"], "--base 1 publishes every count exactly"),
        (["--method", "ten-five", "--base", "1"], "--base 1 publishes every count exactly"),
        (["--method", "suppress", "--threshold", "0"], "suppresses no count above 0"),
        (["--method", "cell-key", "--rate-small", "0", "--rate-large", "0"], "perturbs no count"),
    ],
)
def test_degenerate_settings_are_refused_on_private_data(
    births_csv: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args, message
) -> None:
    out = tmp_path / "o"
    assert main(_private(births_csv, out, *args)) == 2
    assert message in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())


def _plotted_points(fig: Any) -> int:
    """Finite points drawn on a figure's axes (lines and scatter dots)."""
    n = 0
    for ax in fig.axes:
        for line in ax.get_lines():
            x, y = (np.asarray(v, dtype=float) for v in line.get_data())
            n += int(np.sum(np.isfinite(x) & np.isfinite(y)))
        for coll in ax.collections:
            n += int(np.isfinite(np.asarray(coll.get_offsets(), dtype=float)).all(axis=1).sum())
    return n


def test_every_table_gets_a_plot_with_points(
    births_spec: ReleaseSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table whose original has no cells of 1 (no risk axis) still plots its methods.

    #38 item 8: with --release, the births comparison's two national/monthly tables had
    empty risk-utility maps: the risk axis (share of the original's 1s kept) is 0/0.
    """
    from synthflow.tables import report

    frame = make_births(400, seed=9)
    tables = tables_of(
        births_spec,
        {"name": "sex", "columns": ["birth_sex"]},  # 2 cells of about 200: no 1s
        {"name": "weight_by_sex", "columns": ["birth_weight", "birth_sex", "birth_month"]},
    )
    tr = Transformer(births_spec, {})
    release = Microdata(tr.to_labels(tr.forward(frame)), births_spec, labelled=True)
    cmp = compare(
        Microdata(frame, births_spec), tables, rng=PrivacyRNG.from_seed(0), release=release,
        release_epsilon=4.0, epsilons=(1.0,), ledger=_ledger((1.0,)),
    )  # fmt: skip
    maps: dict[str, Any] = {}
    real = report.png

    def keep(fig: Any, *, alt: str, **kw: Any) -> Any:
        maps[alt] = fig
        return real(fig, alt=alt, **kw)

    monkeypatch.setattr(report, "png", keep)
    html = render_html(cmp)
    plots = {alt: fig for alt, fig in maps.items() if not alt.startswith("transitions")}
    assert len(plots) == 2
    for alt, fig in plots.items():
        # every published row: 2 cell-key + 3 rounding + 4 DP methods + the release
        assert _plotted_points(fig) >= 10, alt
    assert "risk-utility map of weight_by_sex" in plots
    assert "utility of each method on sex" in plots
    assert html.count("The original table has no cells of 1") == 1

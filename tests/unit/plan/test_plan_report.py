"""plan.html: the house style of the other reports, readable axes, blank cells explained."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from synthflow.plan.optimize import PlanPoint
from synthflow.plan.report import write_plan_html

pytest.importorskip("matplotlib")


def _point(total: float, p: float) -> PlanPoint:
    return PlanPoint(
        generator_epsilon=1.0,
        fit_once=False,
        transformations=None,
        epsilons={"marginal_max_abs_error": 0.01, "regression_coefficients": 0.5},
        total_epsilon=total,
        pass_probability=p,
        release_probability=p,
        expected_attempts=1 / p,
        perfect_fail=0.0,
        candidates={"cfg-a": p, "cfg-b": p / 2},
        all_configurations={"cfg-a": p, "cfg-b": p / 2},
    )


def _plan() -> tuple[dict[str, Any], dict[str, list[PlanPoint]], PlanPoint]:
    path = [_point(2.0, 0.9), _point(1.5, 0.8), _point(1.2, 0.6)]
    chosen = path[1]
    plan = {
        "warnings": ["THIN EVIDENCE: <4 runs>"],
        "formula": "3 x (1.0 + 0.51)",
        "options": {"stop_probability": 0.05},
        "criteria": [
            {
                "name": "marginal_max_abs_error",
                "epsilon": 0.01,
                "mechanism": "laplace",
                "noise_sd": {"min": 0.00141, "max": 0.00142},
                "predicted_pass_probability": 0.93,
            },
            {
                "name": "regression_coefficients",
                "epsilon": 0.5,
                "mechanism": "functional mechanism",
                "noise_sd": 2.8,
            },
        ],
    }
    return plan, {chosen.mode: path}, chosen


def test_plan_html_is_in_the_house_style(tmp_path: Path) -> None:
    plan, paths, chosen = _plan()
    html = write_plan_html(tmp_path / "plan.html", plan, paths, chosen).read_text()
    # the shared template and stylesheet of the sweep, evaluation and tables reports
    assert html.startswith("<!DOCTYPE html>") and "nav.toc" in html
    assert "Written by synthflow" in html
    assert '<p class="warn"><strong>THIN EVIDENCE: &lt;4 runs&gt;</strong></p>' in html
    assert html.count("<img") == 2
    assert not list(tmp_path.glob(".*.tmp"))


def test_blank_predicted_pass_cells_are_explained(tmp_path: Path) -> None:
    plan, paths, chosen = _plan()
    html = write_plan_html(tmp_path / "plan.html", plan, paths, chosen).read_text()
    rows = re.findall(r"<tr><td class=\"text\">(\w+)</td>(.*?)</tr>", html, re.S)
    cells = {name: rest for name, rest in rows}
    assert "0.930" in cells["marginal_max_abs_error"]
    assert "(see note)" in cells["regression_coefficients"]
    note = html[html.index("Predicted pass is") :]
    assert "not\ngiven" in note and "regression_coefficients" in note[:400]
    assert "jointly" in note[:600]
    # the noise sd of a range collapses when both ends read alike
    assert "0.00141 to 0.00142" in html


def test_plan_axes_are_labelled_with_units(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every axis has a label with its unit, at a font size a reader can see."""
    from synthflow.plan import report

    figures: list[Any] = []
    real = report.png

    def keep(fig: Any, **kw: Any) -> Any:
        figures.append(fig)
        return real(fig, **kw)

    monkeypatch.setattr(report, "png", keep)
    plan, paths, chosen = _plan()
    write_plan_html(tmp_path / "plan.html", plan, paths, chosen)
    axes = [ax for fig in figures for ax in fig.axes]
    assert len(axes) == 3
    for ax in axes:
        for label in (ax.xaxis.label, ax.yaxis.label):
            assert label.get_text() and label.get_fontsize() >= 11
        assert "log scale" in ax.get_xlabel() and "epsilon" in ax.get_xlabel()
        assert re.search(r"\((probability|count)", ax.get_ylabel())
        assert min(t.get_fontsize() for t in ax.get_xticklabels()) >= 10
        # plain tick labels (0.5, 1, 2), not overlapping powers of ten
        ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        assert len(ticks) >= 3 and not any("times" in t or "^" in t for t in ticks)
        assert not [t for t in ax.xaxis.get_minorticklabels() if t.get_text()]
        assert ax.get_legend() is None or ax.get_legend().get_texts()


def test_no_plan_report_says_why(tmp_path: Path) -> None:
    plan, paths, _ = _plan()
    plan["reason"] = "no mode reaches P(release) 0.9"
    html = write_plan_html(tmp_path / "plan.html", plan, paths, None).read_text()
    assert "No plan meets the constraints" in html and "no mode reaches" in html
    assert html.count("<img") == 1 and "Budgets per criterion" not in html


@pytest.mark.parametrize(
    ("lo", "hi"), [(12.7, 50.0), (0.5, 50.0), (1.2, 2.0), (0.05, 0.3), (0.001, 100.0)]
)
def test_epsilon_ticks_bracket_the_data(lo: float, hi: float) -> None:
    """The plan's point (the cheapest, at the left) lies between two labelled ticks."""
    from synthflow.plan.report import _epsilon_ticks

    ticks = _epsilon_ticks(lo, hi)
    assert ticks[0] <= lo and ticks[-1] >= hi and len(ticks) <= 8
    assert ticks == sorted(ticks)


def test_release_axis_is_zoomed_with_the_target_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from synthflow.plan import report

    figures: list[Any] = []
    real = report.png
    monkeypatch.setattr(report, "png", lambda fig, **kw: figures.append(fig) or real(fig, **kw))
    plan, _, _ = _plan()
    path = [_point(50.0, 0.95), _point(30.0, 0.94), _point(20.0, 0.93), _point(12.7, 0.9)]
    chosen = path[-1]
    plan["options"]["release_probability"] = 0.9
    write_plan_html(tmp_path / "plan.html", plan, {chosen.mode: path}, chosen)
    ax1 = figures[0].axes[0]
    lo, hi = ax1.get_ylim()
    assert 0.8 < lo < 0.9 and 0.95 < hi < 1.0  # not 0 to 1
    assert "zoomed" in ax1.get_ylabel()
    target = [line for line in ax1.get_lines() if line.get_label().startswith("target")]
    assert target and target[0].get_ydata()[0] == 0.9
    labels = [t.get_text() for t in ax1.get_xticklabels() if t.get_text()]
    assert labels[0] == "10" and labels[-1] == "50"
    assert any("12.7" in t.get_text() for t in ax1.texts)  # the plan's value, said
    legend = [t.get_text() for t in figures[0].legends[0].get_texts()]
    assert "target P(release) 0.9" in legend


def test_a_single_attempt_plan_draws_no_attempts_chart(tmp_path: Path, monkeypatch) -> None:
    """#61 item 9: one attempt everywhere has no 'attempts until selection ends' panel."""
    import dataclasses

    from synthflow.plan import report

    figures: list[Any] = []
    real = report.png
    monkeypatch.setattr(report, "png", lambda fig, **kw: (figures.append(fig), real(fig, **kw))[1])
    plan, paths, chosen = _plan()
    single = {m: [dataclasses.replace(p, expected_attempts=1.0) for p in path]
              for m, path in paths.items()}  # fmt: skip
    write_plan_html(tmp_path / "plan.html", plan, single, single[chosen.mode][1])
    titles = [ax.get_title() for ax in figures[0].axes]
    assert titles == ["probability that selection releases"]
    figures.clear()
    write_plan_html(tmp_path / "plan2.html", plan, paths, chosen)
    assert [ax.get_title() for ax in figures[0].axes][1] == "attempts until selection ends"


def test_candidates_are_named_by_model_settings_and_binning(tmp_path: Path) -> None:
    """#61 item 9: the shortlist was listed by configuration id (a hash) only."""
    plan, paths, chosen = _plan()
    configs = {
        "cfg-a": {"id": "cfg-a", "model": "workload", "hyperparameters": {"noise": "gaussian"},
                  "transformations": {"mother_age": "b", "parity": "a"}, "min_count": 1},
        "cfg-b": {"id": "cfg-b", "model": "privbayes", "hyperparameters": {"degree": 2},
                  "transformations": {"mother_age": "a"}, "min_count": 1},
    }  # fmt: skip
    html = write_plan_html(tmp_path / "plan.html", plan, paths, chosen,
                           configurations=configs).read_text()  # fmt: skip
    table = html[html.index('id="candidates"') :]
    row = re.search(r"<code>cfg-a</code></td>(.*?)</tr>", table, re.S)
    assert row is not None
    assert "workload" in row.group(1) and "noise=gaussian" in row.group(1)
    assert "mother_age b" in row.group(1) and "parity" not in row.group(1)
    assert table.index("cfg-a") < table.index("cfg-b")  # most likely to pass first

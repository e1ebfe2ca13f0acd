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

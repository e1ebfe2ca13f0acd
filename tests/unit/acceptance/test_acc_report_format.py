"""The DP acceptance report's criteria strip and table: readable numbers and scales."""

from __future__ import annotations

from typing import Any

import pytest

from synthflow.acceptance import report as acc_report
from synthflow.acceptance.results import AcceptanceReport, CriterionResult
from synthflow.criteria.plots import sig, strip_limits

pytest.importorskip("matplotlib")


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [
        (6.048e-06, 4, "6.048e-06"),
        (0.000855316, 4, "0.0008553"),
        (0.00711536, 4, "0.007115"),
        (24.7088, 4, "24.71"),
        (1355.41, 4, "1355"),
        (0.01, 4, "0.01"),
        (100.0, 4, "100"),
        (0.0, 4, "0"),
        (-0.00127652, 3, "-0.00128"),  # not "-0.00"
        (-1e-12, 3, "-1e-12"),
        (float("nan"), 4, "-"),
        (None, 4, "-"),
    ],
)
def test_sig_is_one_significant_digit_format(value: float | None, digits: int, text: str) -> None:
    assert sig(value, digits) == text


def test_no_negative_zero() -> None:
    for v in (-1e-3, -4e-7, -0.0049, -0.0):
        assert sig(v, 3) not in {"-0", "-0.0", "-0.00"}


def test_a_huge_noise_bar_is_clipped_around_value_and_threshold() -> None:
    # regression_coef_error of the seeded run: value 31.4, threshold 30, +-2 sd = +-2711
    (x0, x1), (b0, b1), clipped = strip_limits(31.4, [30.0], 2711.0)
    assert clipped and x1 - x0 < 200  # value and threshold stay apart on the strip
    assert x0 <= b0 < 31.4 - 1 and 31.4 + 1 < b1 <= x1
    # a bar that fits is drawn in full, unclipped
    (x0, x1), (b0, b1), clipped = strip_limits(0.007, [0.01], 0.0017)
    assert not clipped and (b0, b1) == pytest.approx((0.0053, 0.0087))
    assert x0 < 0 and x1 > 0.01


def _report() -> AcceptanceReport:
    def crit(name: str, value: float, threshold: float, sd: float) -> CriterionResult:
        return CriterionResult(
            name=name, kind="x", value=value, threshold=threshold, passed=value < threshold,
            epsilon=0.3, mechanism="laplace", sensitivity=6.048e-06, noise_sd=sd,
        )  # fmt: skip

    return AcceptanceReport(
        criteria=(
            crit("one_way_max_ratio", 1.33, 1.40959, 0.0873),
            crit("regression_coef_error", 31.41, 30.0, 1355.41),
            crit("cond_mean_error_parity", -0.000383, 0.3, 0.0483),
        ),
        passed=False,
        epsilon_total=1.0,
        exact=False,
    )


def test_strips_label_the_pseudo_threshold_and_say_a_bar_is_clipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    figures: list[Any] = []
    monkeypatch.setattr(acc_report, "png", lambda fig: figures.append(fig) or "")
    spec = {"one_way_max_ratio": 2.0, "regression_coef_error": 30.0, "cond_mean_error_parity": 0.3}
    acc_report._criteria_plot(_report(), spec)
    ratio, regression, parity = figures[0].axes
    texts = [t.get_text() for t in ratio.texts]
    assert any("pseudo-threshold 1.41" in t for t in texts)
    assert any(t == "spec 2" for t in texts)
    # only the strip with a pseudo-threshold gets the labels
    assert not any("spec" in t.get_text() for t in regression.texts + parity.texts)
    note = regression.texts[-1].get_text()
    assert "bar clipped" in note and "±2710" in note
    lo, hi = regression.get_xlim()
    assert hi - lo < 200
    assert "-0.00 " not in parity.texts[-1].get_text() + " "


def test_criteria_table_has_one_number_format() -> None:
    html = acc_report._criteria_table(_report(), {}, {"one_way_max_ratio": 2.0})
    assert "6.048e-06" in html and "0.0873" in html and "1355" in html
    assert "1355.41" not in html and "0.000855316" not in html
    assert "1.41 (pseudo; spec 2)" in html
    assert "-0.00128" in html and ">-0.00<" not in html

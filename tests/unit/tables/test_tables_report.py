"""The comparison report's risk-utility map: no misleading joins, labelled budgets and axis."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from synthflow.tables.compare import ComparisonRow
from synthflow.tables.report import _distance_ticks, _ru_map, _utility_only

pytest.importorskip("matplotlib")


def _row(method: str, epsilon: float | None, hellinger: float, kept: int) -> ComparisonRow:
    measures: Any = SimpleNamespace(hellinger=hellinger, uniques_kept=kept)
    label = method if epsilon is None else f"{method} ε={epsilon:g}"
    return ComparisonRow(
        table="t", method=method, label=label, epsilon=epsilon, measures=measures,
        transition=np.zeros((11, 12)),
    )  # fmt: skip


def _rows() -> list[ComparisonRow]:
    # The seeded run's shape: one original 1, so the risk axis is 0 or 1, and the
    # laplace and geometric series go 0, 0, 1, 0, 0 with the budget (a "triangle").
    rows = [_row("cell-key", None, 0.17, 1), _row("round", None, 0.87, 0)]
    for method, xs in (
        ("laplace", (14.5, 4.8, 1.1, 0.91, 0.76)),
        ("geometric", (14.2, 4.3, 1.7, 0.81, 0.47)),
    ):
        rows += [
            _row(method, e, x, int(e == 2)) for e, x in zip((0.1, 1, 2, 5, 10), xs, strict=True)
        ]
    return [*rows, _row("dp-synthetic", 9.98, 0.3, 0)]


def test_dots_are_not_joined_and_budgets_are_a_legend_not_labels() -> None:
    fig = _ru_map(_rows(), original_ones=1)
    (ax,) = fig.axes
    for line in ax.get_lines():
        assert len(line.get_xdata()) == 1 or line.get_linestyle() in {"None", "none", ""}
    assert not ax.texts  # no budget labels crowding the dots on y = 0
    legends = [c for c in ax.get_children() if type(c).__name__ == "Legend"]
    titles = {lg.get_title().get_text(): [t.get_text() for t in lg.get_texts()] for lg in legends}
    budget = next(v for k, v in titles.items() if "budget" in k)
    assert budget == ["0.1", "1", "2", "5", "10"]
    methods = next(v for k, v in titles.items() if "method" in k)
    assert methods == ["cell-key", "round", "laplace", "geometric", "dp-synthetic"]
    # each budget its own marker, the same for every DP method
    markers = {(line.get_xdata()[0], line.get_marker()) for line in ax.get_lines()}
    assert {m for x, m in markers if x in (14.5, 14.2)} == {"v"}
    assert len({m for _, m in markers}) == 5 + 1  # five budgets and the plain dot


def test_no_dot_covers_another_and_each_stays_near_its_value() -> None:
    """The seeded run's dots crowd along y = 0 at similar distances; none may hide another.

    A dot is 8 points wide: centres at least 8 points apart do not cover each other. The
    stacking moves a dot by whole diameters (0.03 of the y axis each), so a few steps
    stay well within 0.15 of its true share.
    """
    rows = _rows()
    fig = _ru_map(rows, original_ones=1)
    fig.canvas.draw()
    (ax,) = fig.axes
    lines = ax.get_lines()
    assert len(lines) == len(rows)
    centres = [ax.transData.transform((ln.get_xdata()[0], ln.get_ydata()[0])) for ln in lines]
    size = 8 * fig.dpi / 72
    for i, a in enumerate(centres):
        for b in centres[:i]:
            assert np.hypot(*(a - b)) >= size * 0.999
    for r, ln in zip(rows, lines, strict=True):
        assert ln.get_xdata()[0] == r.measures.hellinger  # only the height moves
        assert abs(ln.get_ydata()[0] - r.measures.uniques_kept) < 0.15


@pytest.mark.parametrize("fn", ["ru", "utility"])
def test_distance_axis_labels_ticks_between_the_decades(fn: str) -> None:
    rows = _rows()
    fig = _ru_map(rows, 1) if fn == "ru" else _utility_only(rows)
    fig.canvas.draw()
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels() if t.get_text()]
    assert {"0.2", "0.5", "1", "2", "5", "10", "20"} <= set(labels)
    assert not any("^" in t for t in labels)


@pytest.mark.parametrize(
    ("values", "first", "last"),
    [
        ([0.17, 32.1], 0.1, 50.0),
        ([0.0, 0.004, 0.9], 0.0, 1.0),
        ([3.0], 2.0, 5.0),
        ([0.0], 0.0, 0.0),
        ([1e-3, 1e4], 1e-3, 1e4),  # powers of ten alone when 1-2-5 would crowd
    ],
)
def test_distance_ticks_cover_the_values(values: list[float], first: float, last: float) -> None:
    ticks = _distance_ticks(values)
    assert ticks[0] == first and ticks[-1] == last and len(ticks) <= 11
    if 0.0 in values:
        assert ticks[0] == 0.0

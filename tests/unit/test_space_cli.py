"""``synthflow space``: a summary by generator by default, every configuration with --all."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthflow.cli import main
from synthflow.loader import load_spec
from synthflow.space import expand_space


@pytest.fixture(scope="module")
def births_space() -> list:
    return expand_space(load_spec("births-2024"))


def test_space_summarises_by_generator(births_space: list, capsys: pytest.CaptureFixture) -> None:
    assert main(["space", "births-2024"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) < 100 < len(births_space)  # not one line per configuration
    counts = {
        m: int(n.replace(",", ""))
        for m, n in re.findall(r"^(\w+): ([\d,]+) configurations \(", out, re.M)
    }
    expected: dict[str, int] = {}
    for c in births_space:
        expected[c.model] = expected.get(c.model, 0) + 1
    assert counts == expected
    assert f"{len(births_space):,} configurations in all ({len(expected)} generators)" in out
    # the axes: min_count, the letters per column, and each generator's grid
    assert re.search(r"^min_count: 2, 3$", out, re.M)
    assert re.search(r"^  mother_age\s+a, b, c$", out, re.M)
    assert re.search(r"^  theta\s+2, 4, 8, 16, 20, 25, 30, 35, 40, 50, 60, 100$", out, re.M)
    assert "1 hyperparameter setting x" in out  # singular where it is one
    assert "--all" in lines[-1]
    assert not any(c.id in out for c in births_space[:50])


def test_space_all_prints_every_configuration(
    births_space: list, capsys: pytest.CaptureFixture
) -> None:
    assert main(["space", "births-2024", "--all", "--model", "workload,mst"]) == 0
    captured = capsys.readouterr()
    rows = captured.out.splitlines()[1:]
    wanted = [c for c in births_space if c.model in {"workload", "mst"}]
    assert [r.split()[0] for r in rows] == [c.id for c in wanted]
    assert f"{len(wanted)} configurations; letters" in captured.err


def test_space_summary_follows_model(capsys: pytest.CaptureFixture) -> None:
    assert (
        main(
            [
                "space",
                str(Path(__file__).resolve().parents[2] / "configs" / "births-2024.yaml"),
                "--model",
                "mst",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith("mst: 24 configurations (1 hyperparameter setting x 12 ")
    assert "24 configurations in all (1 generator)" in out


def test_space_shows_what_noise_each_workload_grid_adds(capsys):
    assert main(["space", "births"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "  noise              gaussian" in out and "  delta              5e-07" in out
    # which plan 'release births' uses: said on stderr, so stdout stays the summary
    assert "'synthflow release births' uses the plan shipped" in captured.err
    assert "uses the plan shipped" not in out
    assert main(["space", "births-2024"]) == 0
    out = capsys.readouterr().out
    assert "  noise              laplace (default)" in out

"""``synthflow validate``'s budget check: the cheapest private selection the spec admits.

births (total 2) cannot pay for many attempts (Liu-Talwar, the fit once: 3.55) but a
single attempt (its zCDP generator and Gaussian fit composed jointly) fits: validate
passes with a note. A total below even that single attempt is refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from synthflow.cli import main
from synthflow.cost import selection_cost
from synthflow.loader import load_spec
from synthflow.space import expand_space

REPO = Path(__file__).resolve().parents[2]


def _births(tmp_path: Path, total: float) -> Path:
    raw = yaml.safe_load((REPO / "configs" / "births.yaml").read_text())
    raw["privacy"]["total_epsilon"] = total
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_births_validates_with_a_note_that_only_a_single_attempt_fits(capsys):
    assert main(["validate", "births"]) == 0
    captured = capsys.readouterr()
    # the cheaper many-attempt mode fits the regression once: 2 x (1 + 0.99 - 0.43) + 0.43
    assert "many attempts costs at least epsilon 3.55" in captured.err
    assert "a single attempt costs 1.6" in captured.err
    assert "'synthflow release births' uses the plan shipped for 'births'" in captured.err


def test_a_total_below_the_cheapest_single_attempt_is_refused(tmp_path, capsys):
    spec = load_spec(REPO / "configs" / "births.yaml")
    one = expand_space(spec)[0]
    single = selection_cost(spec, fit_once=False, candidates=[one], stop_probability=1.0).total
    assert 1.56 < single < 2  # the joint zCDP cost, below the basic 1.99
    assert main(["validate", str(_births(tmp_path, 1.6))]) == 2
    err = capsys.readouterr().err
    assert "even a single attempt costs epsilon 1.62" in err and "total_epsilon is 1.6" in err
    # Just above it, the spec is valid (the loader alone would accept 1.57: 1 + 0.56).
    assert main(["validate", str(_births(tmp_path, round(single + 0.01, 2)))]) == 0


@pytest.mark.parametrize("name", ["births-2024", "births-pure"])
def test_the_other_bundled_births_specs_validate(name):
    assert main(["validate", name]) == 0

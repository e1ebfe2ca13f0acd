"""``synthflow validate``'s budget check: the cheapest private selection the spec admits.

births (total 2) cannot pay for many attempts (Liu-Talwar, the fit once: 3.55) but a
single attempt (composed exactly by its privacy loss distribution) fits: validate
passes with a note. A total below even that single attempt is refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from synthflow.cli import main
from synthflow.loader import load_spec
from synthflow.release.cost import selection_cost
from synthflow.space import expand_space

REPO = Path(__file__).resolve().parents[2]


def _births(tmp_path: Path, total: float) -> Path:
    raw = yaml.safe_load((REPO / "configs" / "births.yaml").read_text())
    raw["privacy"]["total_epsilon"] = total
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _cheapest_single_attempt(spec) -> float:
    """A single attempt at its cheapest (one configuration of each generator setting)."""
    kinds = {(c.model, tuple(sorted(c.hyperparameters.items()))): c for c in expand_space(spec)}
    return min(
        selection_cost(spec, fit_once=f, candidates=[c], stop_probability=1.0).total
        for c in kinds.values()
        for f in (False, True)
    )


def test_births_validates_with_a_note_that_only_a_single_attempt_fits(capsys):
    assert main(["validate", "births"]) == 0
    captured = capsys.readouterr()
    # the cheaper many-attempt mode fits the regression once: 2 x (1 + 0.99 - 0.43) + 0.43
    assert "many attempts costs at least epsilon 3.55" in captured.err
    single = _cheapest_single_attempt(load_spec(REPO / "configs" / "births.yaml"))
    # composed exactly (the fit once): below the zCDP + basic figure of the same attempt
    assert 1.3 < single < 1.5
    assert f"a single attempt costs {single:g}" in captured.err
    assert "'synthflow release births' uses the plan shipped for 'births'" in captured.err


def test_a_total_below_the_cheapest_single_attempt_is_refused(tmp_path, capsys):
    spec = load_spec(REPO / "configs" / "births.yaml")
    single = _cheapest_single_attempt(spec)
    one = expand_space(spec)[0]
    per_attempt = selection_cost(spec, fit_once=False, candidates=[one], stop_probability=1.0)
    assert single < per_attempt.total < 2  # the fit per attempt: joint zCDP, below basic 1.99
    below = round(single - 0.01, 2)
    assert main(["validate", str(_births(tmp_path, below))]) == 2
    err = capsys.readouterr().err
    assert f"even a single attempt costs epsilon {single:g}" in err
    assert f"total_epsilon is {below:g}" in err
    # Just above it, the spec is valid.
    assert main(["validate", str(_births(tmp_path, round(single + 0.01, 2)))]) == 0


@pytest.mark.parametrize("name", ["births-2024", "births-pure"])
def test_the_other_bundled_births_specs_validate(name):
    assert main(["validate", name]) == 0

"""#61: thresholds proposed for a registry of another size, read off a public sweep.

The rule (synthflow.plan.propose): the cell (configuration, generator budget) needing
the least relaxation is the model; each criterion it fails is proposed 1.5 times its
90th percentile, rounded up; a criterion it passes keeps its threshold; a clipped ratio
moves its clip with its threshold. The store is a real SQLite sweep store filled with
chosen exact values, so each figure below is computed by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from synthflow.errors import ConfigError
from synthflow.loader import load_spec
from synthflow.plan.propose import propose_thresholds, proposed_spec_text
from synthflow.resources import bundled_spec
from synthflow.sweep.evaluation import CriterionOutcome, RunEvaluation
from synthflow.sweep.store import RunRecord, SweepStore

KEYS = {"spec_sha256": "a" * 64, "data_sha256": "b" * 64, "seed": 7}


def _store(path: Path, spec, cells: dict[tuple[str, float], dict[str, list[float]]]) -> Path:
    """A sweep store whose runs score ``cells[(config, eps)][criterion][repeat]``."""
    with SweepStore.open(path, **KEYS) as db:
        for (cid, eps), values in cells.items():
            repeats = len(next(iter(values.values())))
            for r in range(repeats):
                outcomes = tuple(
                    CriterionOutcome(
                        name=c.name,
                        value=values.get(c.name, [c.threshold / 2] * repeats)[r],
                        threshold=c.threshold,
                        passed_exact=True,
                        passed_dp=True,
                    )
                    for c in spec.criteria
                )
                evaluation = RunEvaluation(criteria=outcomes, planning={})
                db.add_run(RunRecord(config_id=cid, repeat=r, seed=r, seconds=0.1,
                                     generator_epsilon=eps, evaluation=evaluation))  # fmt: skip
    return path


@pytest.fixture(scope="module")
def births():
    return load_spec(bundled_spec("births"))


def test_only_the_failing_criteria_of_the_least_relaxed_cell_are_proposed(tmp_path, births):
    ten = [float(v) for v in range(1, 11)]  # 90th percentile (linear) of 1..10 is 9.1
    cells = {
        # regression 81.9 at its 90th percentile: 2.73 times its threshold of 30
        ("cfg-a", 1.0): {"regression_coef_error": [9 * v for v in ten]},
        # regression 54.6 / 30 = 1.82 and faithfulness 0.1 / 0.05 = 2: at most 2 here
        ("cfg-b", 1.25): {
            "regression_coef_error": [6 * v for v in ten],
            "faithfulness_unmatched": [v / 91 for v in ten],
        },
    }
    store = _store(tmp_path / "s.db", births, cells)
    proposals, cell = propose_thresholds(births, store)
    assert cell == "configuration cfg-b at generator epsilon 1.25"  # 2 < 2.73
    got = {p.name: (p.threshold, p.proposed) for p in proposals}
    # 1.5 x 54.6 = 81.9 -> 82 (two significant digits, up); 1.5 x 0.1 = 0.15
    assert got == {"regression_coef_error": (30, 82), "faithfulness_unmatched": (0.05, 0.15)}


def test_a_clipped_ratio_moves_its_clip_with_its_threshold(tmp_path, births):
    store = _store(tmp_path / "s.db", births, {("c", 1.0): {"one_way_max_ratio": [2.0] * 10}})
    (p,) = propose_thresholds(births, store)[0]
    assert (p.threshold, p.proposed) == (2.0, 3.0)
    assert dict(p.fields) == {"threshold": 3.0, "clip": 3.0}  # else 3 could never bind
    text = proposed_spec_text(
        bundled_spec("births").read_text(), [p], header="# proposed\n", total_epsilon=4.0
    )
    spec_path = tmp_path / "proposed.yaml"
    spec_path.write_text(text)
    proposed = load_spec(spec_path)
    ratio = proposed.criterion("one_way_max_ratio")
    assert (ratio.threshold, ratio.clip) == (3.0, 3.0)
    assert proposed.privacy.total_epsilon == 4.0
    # nothing else moved: every other criterion as the bundled spec has it
    others = [c for c in proposed.criteria if c.name != "one_way_max_ratio"]
    assert others == [c for c in births.criteria if c.name != "one_way_max_ratio"]
    assert text.startswith("# proposed\n") and "# Sec. 5, the paper's Table 2" in text


def test_a_cell_that_passes_everything_proposes_nothing(tmp_path, births):
    store = _store(tmp_path / "s.db", births, {("c", 1.0): {"marginal_max_abs_error": [0.001]}})
    assert propose_thresholds(births, store)[0] == []


def test_an_empty_store_is_refused(tmp_path, births):
    with SweepStore.open(tmp_path / "s.db", **KEYS):
        pass
    with pytest.raises(ConfigError, match="holds no finished run"):
        propose_thresholds(births, tmp_path / "s.db")

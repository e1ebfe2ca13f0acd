"""The planner's parts: the noise law, the Laplace tables, the spec rewriting."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from synthflow.config import ReleaseSpec
from synthflow.criteria.context import laplace_release as _laplace_release
from synthflow.criteria.context import laplace_terms
from synthflow.errors import ConfigError
from synthflow.loader import load_spec
from synthflow.plan.optimize import EPS_GRID, _release_probability
from synthflow.plan.simulate import NoiseLaw, laplace_pass_table
from synthflow.plan.specfile import planned_spec_text, write_planned_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG

REPO = Path(__file__).resolve().parents[3]


def test_noise_law_is_the_laplace_cdf() -> None:
    law = NoiseLaw(seed=3, draws=20_000)
    x = np.linspace(-4, 4, 17)
    # P(0 + Lap(1) < x): the empirical CDF of 20,000 draws is within 0.015 of the
    # Laplace CDF (DKW: P(sup error > 0.015) <= 2 exp(-2 * 20000 * 0.015^2) = 2.5e-4)
    got = law.pass_probability(-x, sens=1.0, eps=1.0, threshold=0.0)
    assert np.max(np.abs(got - stats.laplace.cdf(x))) < 0.015
    # scale: sensitivity / epsilon
    wide = law.pass_probability(np.array([-1.0]), sens=2.0, eps=0.5, threshold=0.0)
    assert wide[0] == pytest.approx(stats.laplace.cdf(1.0, scale=4.0), abs=0.015)
    # zero sensitivity: the exact decision
    assert law.pass_probability(
        np.array([0.5, 1.5]), sens=0.0, eps=1.0, threshold=1.0
    ).tolist() == [
        1.0,
        0.0,
    ]


def test_predicted_pass_matches_the_evaluations_own_release(births_spec: ReleaseSpec) -> None:
    """The table's probability is what the evaluation's _laplace_release decides, per criterion."""
    law = NoiseLaw(seed=1)
    n = 150_000
    records = [
        {
            "marginal_max_abs_error": {"statistic": 0.006, "public": {"n": n}},
            "one_way_max_ratio": {"statistic": 1.25, "public": {"n": n, "min_count": 40}},
            "faithfulness_unmatched": {"statistic": 0.049, "public": {"n": n}},
        }
    ]
    for name in records[0]:
        c = births_spec.criterion(name)
        table = laplace_pass_table(births_spec, c, records, EPS_GRID, law)[0]
        # The first budget from 0.003 up where the check is not trivial (the ratio at
        # 0.003 is decided by its noise: the table says 0, as the evaluation decides).
        k = int(np.searchsorted(EPS_GRID, 0.003))
        while not 0.02 < table[k] < 0.98:
            k += 1
        eps = float(EPS_GRID[k])
        predicted = table[k]
        c_eps = dataclasses.replace(c, epsilon=eps)
        rng = PrivacyRNG.from_seed(7)
        ledger = Ledger(total_epsilon=1e9)
        entry = records[0][name]
        draws = 4000
        passed = sum(
            r.value < r.threshold and not r.dominated
            for r in (
                _laplace_release(
                    c_eps,
                    births_spec,
                    entry["statistic"],
                    public=entry["public"],
                    ledger=ledger,
                    rng=rng,
                )
                for _ in range(draws)
            )
        )
        # binomial sd at p <= 0.5 and 4000 draws is <= 0.008; plus the law's own <= 0.008
        assert passed / draws == pytest.approx(predicted, abs=0.04), name
        assert 0.02 < predicted < 0.98, name  # the check is not trivial


def test_ratio_threshold_follows_the_budget(births_spec: ReleaseSpec) -> None:
    c = births_spec.criterion("one_way_max_ratio")
    low = laplace_terms(c, births_spec, {"n": 1000, "min_count": 60}, 0.05)[1]
    high = laplace_terms(c, births_spec, {"n": 1000, "min_count": 60}, 1.0)[1]
    assert low < high <= c.threshold  # less budget, more noise: a lower pseudo-threshold


def test_laplace_terms_refuses_the_functional_mechanism(births_spec: ReleaseSpec) -> None:
    c = births_spec.criterion("regression_coef_error")
    with pytest.raises(ConfigError, match="not a Laplace release"):
        laplace_terms(c, births_spec, {"n": 10}, 0.1)


def test_release_probability_of_selection() -> None:
    # q / (q + (1 - q) gamma): gamma = 0 always releases; q = 0 never
    assert _release_probability(np.array([0.3]), 0.0)[0] == 1.0
    assert _release_probability(np.array([0.0]), 0.05)[0] == 0.0
    assert _release_probability(np.array([0.3]), 0.05)[0] == pytest.approx(0.3 / 0.335)


def test_planned_spec_text_changes_only_budgets(births_spec: ReleaseSpec, tmp_path: Path) -> None:
    eps = {c.name: 0.0123 + i / 1000 for i, c in enumerate(births_spec.criteria)}
    planned = write_planned_spec(
        births_spec, tmp_path / "spec.yaml", generator_epsilon=2.5, epsilons=eps, header="# p\n"
    )
    assert planned.privacy.generator_epsilon == 2.5
    assert {c.name: c.epsilon for c in planned.criteria} == eps
    before = (REPO / "configs" / "births-2024.yaml").read_text().splitlines()
    after = (tmp_path / "spec.yaml").read_text().splitlines()[1:]
    changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
    assert len(changed) == 1 + len(eps)  # one line per budget, comments kept
    assert all("epsilon" in a for a, _ in changed)


def test_planned_spec_text_refuses_an_unknown_criterion() -> None:
    text = (REPO / "configs" / "births-2024.yaml").read_text()
    with pytest.raises(ConfigError, match="cannot find criterion 'nope'"):
        planned_spec_text(text, generator_epsilon=2.0, epsilons={"nope": 0.1}, header="")


def test_planned_spec_keeps_block_style(tmp_path: Path) -> None:
    text = (REPO / "configs" / "example_small.yaml").read_text()
    spec = load_spec(REPO / "configs" / "example_small.yaml")
    eps = {c.name: 0.05 for c in spec.criteria}
    out = write_planned_spec(
        spec, tmp_path / "s.yaml", generator_epsilon=1.5, epsilons=eps, header=""
    )
    assert out.sha256 != spec.sha256
    assert all(c.epsilon == 0.05 for c in out.criteria)
    # Only the budget values change: every other line (comments, flow- and block-style
    # mappings, their order) is the input's, byte for byte.
    new = Path(out.path).read_text().splitlines()
    old = text.splitlines()
    assert len(new) == len(old)
    changed = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
    assert changed and all("epsilon" in a and "epsilon" in b for a, b in changed)
    assert all(
        a.split("epsilon")[0] == b.split("epsilon")[0] for a, b in changed
    )  # same indentation and the same keys before the number


def _chosen(spec: ReleaseSpec, ids: list[str], *, generator_epsilon: float = 1.0) -> object:
    """The parts of a planner's point that the Papernot-Steinke check reads."""
    from types import SimpleNamespace

    return SimpleNamespace(
        generator_epsilon=generator_epsilon,
        epsilons={c.name: c.epsilon / 2 for c in spec.criteria},
        candidates=dict.fromkeys(ids, 0.5),
        fit_once=False,
    )


def test_plan_recomputes_a_mixed_shortlist_by_papernot_steinke(mixed_shortlist) -> None:
    from synthflow.plan.costing import exact_cost
    from synthflow.release.cost import PAPERNOT_STEINKE, selection_cost

    spec, shortlist = mixed_shortlist
    chosen = _chosen(spec, [c.id for c in shortlist])
    cost, problem = exact_cost(spec, chosen, 600, 0.3, None)
    budgeted = dataclasses.replace(
        spec,
        privacy=dataclasses.replace(spec.privacy, generator_epsilon=1.0),
        criteria=tuple(dataclasses.replace(c, epsilon=c.epsilon / 2) for c in spec.criteria),
    )
    again = selection_cost(
        budgeted, fit_once=False, candidates=shortlist, rows=600, stop_probability=0.3
    )
    assert cost.theorem == PAPERNOT_STEINKE and cost.total == pytest.approx(again.total)
    # Liu-Talwar's total at the same budgets would understate it: the plan must not.
    assert cost.total > selection_cost(budgeted, fit_once=False).total
    assert problem == ""  # within the spec's total of 8
    _, problem = exact_cost(spec, chosen, 600, 0.3, 1.0)  # --max-total 1
    assert "Papernot-Steinke" in problem and "above the cap 1" in problem


def test_plan_prices_a_pure_shortlist_by_liu_talwar(mixed_shortlist) -> None:
    from synthflow.plan.costing import exact_cost
    from synthflow.release.cost import LIU_TALWAR

    spec, shortlist = mixed_shortlist
    pure = [c.id for c in shortlist if c.model == "privbayes"]
    cost, problem = exact_cost(spec, _chosen(spec, pure), 600, 0.3, None)
    assert cost.theorem == LIU_TALWAR and problem == ""
    assert cost.total == pytest.approx(2 * cost.attempt_epsilon)


def test_planned_spec_names_a_public_sample_beside_the_input_from_its_new_place(
    tmp_path: Path,
) -> None:
    """[wide] general path: init writes ``public_sample: "public.csv"`` beside the spec;
    plan writes its spec into ``plan/``, where that name found nothing ("neither beside
    the spec nor bundled"). The planned spec names the same file from its own folder; a
    bundled name is left as it is (births: the line is unchanged, tested above)."""
    from synthflow.acceptance.noise_check import public_sample_path

    work = tmp_path / "work"
    (work / "data").mkdir(parents=True)
    sample = work / "data" / "public.csv"
    sample.write_text("x\n")
    text = (REPO / "configs" / "example_small.yaml").read_text()
    text = text.replace("privacy:", 'public_sample: "data/public.csv"  # mine\n\nprivacy:', 1)
    (work / "spec.yaml").write_text(text)
    spec = load_spec(work / "spec.yaml")
    assert public_sample_path(spec) == sample
    eps = {c.name: 0.05 for c in spec.criteria}
    (work / "plan").mkdir()  # as 'synthflow plan --out plan' makes it
    out = write_planned_spec(
        spec, work / "plan" / "spec.yaml", generator_epsilon=1.5, epsilons=eps, header=""
    )
    assert out.public_sample == "../data/public.csv"
    assert public_sample_path(out).resolve() == sample.resolve()
    # Written beside the input, nothing moves.
    again = write_planned_spec(
        spec, work / "spec2.yaml", generator_epsilon=1.5, epsilons=eps, header=""
    )
    assert again.public_sample == "data/public.csv"

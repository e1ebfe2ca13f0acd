"""One attempt's mechanisms (synthflow.release.exact_cost) are what the attempt runs.

Each figure is checked against an independent one: the workload's Gaussian marginals
against the analytic Gaussian at the rho it declares, the fit against the same for its
rho, and the list against the criteria the spec charges.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
import yaml
from test_pld import analytic_gaussian_epsilon  # tests/unit: the one independent formula

from synthflow.generators import make_generator
from synthflow.loader import load_spec
from synthflow.privacy import pld
from synthflow.privacy.zcdp import zcdp_rho
from synthflow.release.cost import selection_cost
from synthflow.release.exact_cost import attempt_mechanisms, exact_epsilon
from synthflow.space import find_configuration
from synthflow.transform import Transformer

PUBLIC = Path(__file__).resolve().parents[3] / "public_data"


@pytest.fixture(scope="module")
def births() -> tuple:
    spec = load_spec(PUBLIC / "births.plan.spec.yaml")
    doc = yaml.safe_load((PUBLIC / "births.plan.candidates.yaml").read_text())
    return spec, [find_configuration(spec, c["id"]) for c in doc["configurations"]]


def test_the_workloads_marginals_are_the_gaussian_of_its_rho(births: tuple) -> None:
    """The marginals' rho add up to the fit's: their PLD is a Gaussian of mu = sqrt(2 rho).

    Discrete Gaussians at sigma 16 and more are within 1e-6 of continuous ones; the grid
    adds at most 1e-4 per composition (42 here), so the PLD is within 0.005 above.
    """
    spec, candidates = births
    for cfg in candidates[:3]:
        tr = Transformer(spec, dict(cfg.transformations))
        gen = make_generator(
            cfg.model, cfg.hyperparameters, epsilon=spec.privacy.generator_epsilon, transformer=tr
        )
        mechs = gen.mechanisms(tr.domain)
        rho = gen.zcdp_rho()
        assert mechs is not None and rho is not None
        analytic = analytic_gaussian_epsilon(math.sqrt(2 * rho), 5e-7)
        assert analytic - 1e-6 <= pld.epsilon(mechs, delta=5e-7) <= analytic + 0.005


def test_the_fit_is_the_gaussian_of_its_rho(births: tuple) -> None:
    spec, candidates = births
    attempt = attempt_mechanisms(spec, candidates, fit_once=True)
    assert attempt is not None
    fit = [m for m in attempt[0] if "functional-mechanism fit" in m.label]
    assert len(fit) == 1 and fit[0].sigma > 0
    coef = next(c for c in spec.criteria if c.name == "regression_coef_error")
    rho = zcdp_rho(coef.epsilon, delta=coef.delta)
    analytic = analytic_gaussian_epsilon(math.sqrt(2 * rho), coef.delta)
    # the snapping's unit per coordinate (in the L2 sensitivity too) and the grid's
    # rounding: a little above the continuous Gaussian of the same rho, never below
    ours = pld.epsilon(fit, delta=coef.delta)
    assert analytic - 1e-3 <= ours <= coef.epsilon


def test_every_charged_criterion_is_in_the_attempt(births: tuple) -> None:
    spec, candidates = births
    attempt = attempt_mechanisms(spec, candidates, fit_once=True)
    assert attempt is not None and len(attempt) == len(candidates)
    for mechs in attempt:
        names = {m.label.split()[1].rstrip(":") for m in mechs if m.label.startswith("acceptance")}
        assert names == {c.name for c in spec.criteria if c.epsilon > 0}
        pure = {
            m.label.split()[1]: m.epsilon for m in mechs if m.sigma == 0 and "acceptance" in m.label
        }
        for c in spec.criteria:
            if c.impl.delta(c) == 0:
                assert pure[c.name] == c.epsilon


def test_a_release_charges_the_exact_figure_below_zcdp_and_above_the_gaussian_part(
    births: tuple,
) -> None:
    spec, candidates = births
    today = selection_cost(
        spec, fit_once=True, candidates=candidates, rows=165_384, stop_probability=1
    )
    exact = exact_epsilon(spec, candidates, fit_once=True, delta=today.total_delta)
    assert exact is not None
    assert today.exact_epsilon == exact == today.total  # what a release charges
    zcdp = dataclasses.replace(today, exact_epsilon=0.0)  # the zCDP + basic accounting
    assert zcdp.joint_epsilon is not None
    assert exact < zcdp.total - 0.1  # 1.385 against 1.544 for the shipped plan
    # never below the Gaussian parts alone, composed exactly
    gaussian = attempt_mechanisms(spec, candidates, fit_once=True)[0]
    assert exact >= pld.epsilon([m for m in gaussian if m.sigma > 0], delta=today.total_delta)


def test_no_exact_figure_for_a_fit_made_per_attempt(births: tuple) -> None:
    spec, candidates = births
    assert attempt_mechanisms(spec, candidates, fit_once=False) is None

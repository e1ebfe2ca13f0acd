from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest
from scipy import stats

from synthflow.acceptance import evaluate, evaluate_exact_and_noisy, exact_values, fit_dp_regression
from synthflow.criteria.context import laplace_release as _laplace_release
from synthflow.errors import BudgetExceededError
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG

NAMES = [
    "marginal_max_abs_error",
    "one_way_max_ratio",
    "cond_mean_error_parity",
    "cond_mean_error_birth_weight",
    "cond_mean_error_gestation_week",
    "regression_coef_error",
    "regression_tstr_mae_error",
    "faithfulness_unmatched",
]


def test_exact_mode_json(spec, transformer, tables):
    report = evaluate(spec, transformer, *tables, exact=True)
    doc = report.to_json()
    assert [c["name"] for c in doc["criteria"]] == NAMES
    assert doc["epsilon_total"] == 0.0
    for c in doc["criteria"]:
        assert c["epsilon"] is None and c["mechanism"] is None
        assert c["sensitivity"] is None and c["noise_sd"] is None
        assert c["passed"] == (c["value"] < c["threshold"])
    assert doc["passed"] == all(c["passed"] for c in doc["criteria"])
    json.dumps(doc)
    assert exact_values(spec, transformer, *tables) == {c.name: c.value for c in report.criteria}


def test_dp_mode_charges_before_noise(spec, transformer, tables, monkeypatch):
    ledger = Ledger(total_epsilon=10.0)
    rng = PrivacyRNG.from_seed(5)
    seen = []
    real = rng.laplace

    def spy(values, *, sensitivity, epsilon):
        seen.append((len(ledger.charges), sensitivity, epsilon))
        return real(values, sensitivity=sensitivity, epsilon=epsilon)

    monkeypatch.setattr(rng, "laplace", spy)
    report = evaluate(spec, transformer, *tables, exact=False, ledger=ledger, rng=rng)
    assert report.epsilon_total == pytest.approx(0.99)
    assert ledger.spent_epsilon == pytest.approx(0.99)
    assert len(ledger.charges) == 8
    # every criterion drew noise (one draw each: the regression fit's statistics are one
    # vector), and the draws spend exactly what was charged
    assert len(seen) == 8
    assert sum(eps for _, _, eps in seen) == pytest.approx(ledger.spent_epsilon, rel=1e-12)
    # the i-th noise draw happens after the i-th charge, with the charged sensitivity
    for i, (n_charges, sens, eps) in enumerate(seen):
        assert n_charges == i + 1
        assert ledger.charges[i].sensitivity == pytest.approx(sens)
        assert ledger.charges[i].epsilon == eps
    n = len(tables[0])
    assert report.criterion("marginal_max_abs_error").sensitivity == 1 / n
    assert report.criterion("faithfulness_unmatched").sensitivity == 1 / n
    assert report.criterion("regression_tstr_mae_error").sensitivity == 2 * 3200 / n
    assert report.criterion("one_way_max_ratio").threshold < 2.0


def test_fit_once_per_release(spec, transformer, tables):
    ledger = Ledger(total_epsilon=10.0)
    rng = PrivacyRNG.from_seed(6)
    fit = fit_dp_regression(spec, transformer, tables[0], ledger=ledger, rng=rng)
    assert ledger.spent_epsilon == pytest.approx(0.43)
    report = evaluate(
        spec, transformer, *tables, exact=False, ledger=ledger, rng=rng, released_once=fit
    )
    assert report.epsilon_total == pytest.approx(0.56)
    assert ledger.spent_epsilon == pytest.approx(0.99)
    assert report.regression_fit_reused
    coef = report.criterion("regression_coef_error")
    assert coef.epsilon == 0.0 and coef.sensitivity == fit.sensitivity


def test_budget_exceeded_before_noise(spec, transformer, tables):
    ledger = Ledger(total_epsilon=0.005)
    with pytest.raises(
        BudgetExceededError,
        match=re.escape("the criteria need epsilon 0.99 but only 0.005 remains"),
    ):
        evaluate(
            spec, transformer, *tables, exact=False, ledger=ledger, rng=PrivacyRNG.from_seed(1)
        )
    assert ledger.charges == ()


def test_dp_needs_ledger_and_equal_sizes(spec, transformer, tables):
    with pytest.raises(ValueError, match=re.escape("needs a ledger and a PrivacyRNG")):
        evaluate(spec, transformer, *tables, exact=False)
    with pytest.raises(ValueError, match=re.escape("needs |D_R| = |D_T|")):
        evaluate(
            spec,
            transformer,
            tables[0],
            tables[1].iloc[:-1],
            exact=False,
            ledger=Ledger(total_epsilon=10.0),
            rng=PrivacyRNG.from_seed(1),
        )


@pytest.mark.parametrize("name", NAMES)
def test_pass_fail_around_threshold(spec, transformer, tables, name):
    value = exact_values(spec, transformer, *tables)[name]
    for threshold, expected in [
        (value * 1.001 + 1e-12, True),
        (value, False),
        (value * 0.999, False),
    ]:
        crits = tuple(
            dataclasses.replace(c, threshold=threshold) if c.name == name else c
            for c in spec.criteria
        )
        s2 = dataclasses.replace(spec, criteria=crits)
        got = evaluate(s2, transformer, *tables, exact=True).criterion(name)
        assert got.passed is expected


def test_exact_and_noisy(spec, transformer, tables):
    ledger = Ledger(total_epsilon=spec.evaluation_epsilon, total_delta=spec.privacy.total_delta)
    both = evaluate_exact_and_noisy(
        spec, transformer, *tables, rng=PrivacyRNG.from_seed(2), ledger=ledger
    )
    assert both.exact.exact and not both.noisy.exact
    assert both.noisy.epsilon_total == pytest.approx(0.99)


def test_noise_scale_has_power(spec):
    """KS test of released - exact against Laplace(b), and it rejects b * (1 +- 0.3)."""
    crit = spec.criterion("marginal_max_abs_error")
    rng = PrivacyRNG.from_seed(9)
    sens = 1e-3  # marginal sensitivity 1/n with n = 1000
    ledger = Ledger(total_epsilon=1e9)
    draws = np.array(
        [
            _laplace_release(crit, spec, 0.0, public={"n": 1000}, ledger=ledger, rng=rng).value
            for _ in range(20_000)
        ]
    )
    b = sens / crit.epsilon
    p_threshold = 1e-20
    assert stats.kstest(draws, "laplace", args=(0, b)).pvalue > p_threshold
    for wrong in (0.7 * b, 1.3 * b):
        assert stats.kstest(draws, "laplace", args=(0, wrong)).pvalue < p_threshold

"""[tests] Gaps the mutmut run found in the DP evaluation (benchmarks/mutmut_report.md).

Each test kills a family of surviving mutants: the released value checked against the
statistic it noises (a release of NaN or of the candidate's statistic survived), the
report fields of each release, the 1-way ratio's edge cases, and the file ledger a DP
evaluation writes.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from synthflow.acceptance import evaluate, exact_values
from synthflow.criteria.context import laplace_terms
from synthflow.criteria.one_way_ratio import one_way_max_ratio, release_threshold
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG


def _huge_budgets(spec):
    """Every criterion at epsilon 1e9: the Laplace noise is ~1e-9 of its sensitivity."""
    return dataclasses.replace(
        spec, criteria=tuple(dataclasses.replace(c, epsilon=1e9) for c in spec.criteria)
    )


def test_each_dp_release_noises_the_originals_statistic(spec, transformer, tables):
    # With negligible noise the DP value is the exact value of (D_T, D_R): a release of
    # NaN, or of a statistic computed on the candidate instead of the original (the DP
    # regression fit, TSTR), differs.
    big = _huge_budgets(spec)
    report = evaluate(big, transformer, *tables, exact=False,
                      ledger=Ledger(total_epsilon=1e10), rng=PrivacyRNG.from_seed(1))  # fmt: skip
    exact = exact_values(big, transformer, *tables)
    for c in report.criteria:
        assert np.isfinite(c.value), c.name
        if c.name.startswith("cond_mean"):
            continue  # the DP statistic is the resized mean, not the exact one
        assert c.value == pytest.approx(exact[c.name], rel=1e-3, abs=1e-6), c.name
    # The D_T fit's coefficients differ from D_R's OLS (40 of 400 rows differ): a fit of
    # the candidate instead would give an error of about 0.
    assert exact["regression_coef_error"] > 0.01
    coef = report.criterion("regression_coef_error")
    assert set(coef.public) == {"n", "candidate_ols", "candidate_standardization", "dp_fit"}
    assert coef.public["n"] == 400 and coef.mechanism == "functional"


def test_report_fields_of_every_laplace_release(spec, transformer, tables):
    ledger = Ledger(total_epsilon=10.0)
    report = evaluate(spec, transformer, *tables, exact=False, ledger=ledger,
                      rng=PrivacyRNG.from_seed(2))  # fmt: skip
    for c in report.criteria:
        if c.mechanism == "laplace":
            assert c.noise_sd == pytest.approx(math.sqrt(2) * c.sensitivity / c.epsilon)
            assert c.public["n"] == 400
    charges = {ch.what: ch for ch in ledger.charges}
    for c in report.criteria:
        if c.mechanism == "laplace":
            assert charges[f"acceptance {c.name}"].mechanism == "laplace"
    assert [ch.mechanism for ch in ledger.charges if "functional-mechanism" in ch.what] == [
        "functional"
    ]


def test_a_dp_evaluation_leaves_a_ledger_file_that_reopens(spec, transformer, tables, tmp_path):
    path = tmp_path / "l.jsonl"
    evaluate(spec, transformer, *tables, exact=False, ledger=Ledger(total_epsilon=10.0, path=path),
             rng=PrivacyRNG.from_seed(3))  # fmt: skip
    reopened = Ledger(total_epsilon=10.0, path=path)
    assert reopened.spent_epsilon == pytest.approx(spec.evaluation_epsilon)
    assert all(ch.what and ch.mechanism in ("laplace", "functional") for ch in reopened.charges)


def test_the_ratio_threshold_uses_the_assumed_smallest_count(spec):
    c = spec.criterion("one_way_max_ratio")
    assert c.assumed_min_count is not None and c.false_positive_rate is not None
    m = c.assumed_min_count + 20
    _, threshold = laplace_terms(c, spec, {"n": 1000, "min_count": m}, c.epsilon)
    expected = release_threshold(threshold=c.threshold, clip=c.clip, epsilon=c.epsilon,
                                 false_positive_rate=c.false_positive_rate,
                                 assumed_min_count=c.assumed_min_count, min_count=m)  # fmt: skip
    without = release_threshold(threshold=c.threshold, clip=c.clip, epsilon=c.epsilon,
                                false_positive_rate=c.false_positive_rate,
                                assumed_min_count=None, min_count=m)  # fmt: skip
    assert threshold == pytest.approx(expected) and expected != pytest.approx(without)


def test_a_bin_empty_in_one_table_is_at_the_clip_and_counts_are_rescaled():
    # Empty in D_T only: the ratio is infinite, clipped to 3 (an "or" would give 1).
    assert one_way_max_ratio(np.array([[0], [0]]), np.array([[0], [1]]), (2,), clip=3.0) == 3.0
    # |D_T| = 4, |D_R| = 2 with the same shares: every ratio 1 after rescaling to D_R's size
    t = np.array([[0], [0], [1], [1]])
    r = np.array([[0], [1]])
    assert one_way_max_ratio(t, r, (2,), clip=3.0) == pytest.approx(1.0)

"""#60 item 2: the noise rule sees the groups a release will see, and noise never decides.

A conditional mean's release noise is ``(U - L) / m`` over epsilon, with ``m`` the
candidate's smallest group after the resize margin. The pre-flight used to assume ``n``
spread evenly over the groups, so a rare group (Fair's affairs survey, a real table that
statsmodels ships: occupation 1, "student", is 41 of 6,366 rows) was invisible until the
release, where it released values like 23.6, 133.2 and -155.4 against a threshold of 1
and "passed" on the third. Now the pre-flight reads the groups off the public sample, and
an evaluation whose noise decides at the candidate's own groups fails, naming why.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthflow.acceptance import evaluate
from synthflow.acceptance.noise_check import noise_warnings, public_sample, space_noise_warning
from synthflow.criteria.conditional_mean import expected_min_group_size, resize_sizes
from synthflow.criteria.context import release_dominated
from synthflow.loader import load_spec
from synthflow.plan.simulate import NoiseLaw, laplace_pass_table
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.space import expand_space
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[3]
AFFAIRS = REPO / "configs" / "affairs.yaml"
N = 4456  # the private part of the affairs split (70% of 6,366)


@pytest.fixture(scope="module")
def spec_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """affairs.yaml with its public part as public_sample and one criterion by occupation."""
    pytest.importorskip("statsmodels")
    from synthflow.public.affairs import write_affairs

    out = tmp_path_factory.mktemp("affairs_groups")
    write_affairs(out)
    text = AFFAIRS.read_text()
    text = text.replace("\nname: affairs\n", "\nname: affairs\npublic_sample: public.csv\n", 1)
    old = "group_by: [yrs_married, had_affair, none], threshold: 0.3, epsilon: 0.1}"
    assert text.count(old) == 1
    text = text.replace(old, "group_by: [occupation, none], threshold: 0.3, epsilon: 0.5}")
    assert "public_sample: public.csv" in text
    path = out / "affairs_occupation.yaml"
    path.write_text(text)
    return path


def _criterion(spec):
    return spec.criterion("cond_mean_rate_marriage")


def test_the_expected_group_is_the_public_samples_rarest_scaled_to_n(spec_path):
    spec = load_spec(spec_path)
    tr = Transformer(spec, {})
    c = _criterion(spec)
    sample = public_sample(spec)
    codes = tr.forward(sample).to_numpy(np.int64)
    counts = np.bincount(codes[:, tr.domain.names.index("occupation")], minlength=6)
    # Hand-made: the rarest occupation's share scaled to N, less the margin ceil(0.01 N) + 1.
    rarest = math.floor(counts[counts > 0].min() * N / len(sample))
    want = max(1, rarest - (math.ceil(0.01 * N) + 1))
    assert (
        expected_min_group_size(c, tr, codes, N)
        == want
        == int(resize_sizes(np.array([rarest]), n=N, margin_fraction=0.01, margin_plus=1)[0])
    )
    # The even spread (no public sample) is far larger: the rare group is what it hid.
    assert c.impl.best_case_public(c, tr, N)["min_group_size"] == N // 6 > 50 * want


def test_preflight_names_the_criterion_the_even_spread_passed(spec_path):
    spec = load_spec(spec_path)
    tr = Transformer(spec, {})
    sample = public_sample(spec)
    with_sample = {w.criterion for w in noise_warnings(spec, tr, N, sample)}
    even = {w.criterion for w in noise_warnings(spec, tr, N, None)}
    assert "cond_mean_rate_marriage" in with_sample
    assert "cond_mean_rate_marriage" not in even
    # The release pre-flight's check (nothing read but public facts, nothing charged).
    text = space_noise_warning(spec, expand_space(spec)[:1], N, needed=True)
    assert "cond_mean_rate_marriage" in text


def test_validate_rows_names_it_through_the_cli(spec_path, capsys):
    from synthflow.cli import main

    main(["validate", str(spec_path), "--rows", str(N)])
    err = capsys.readouterr().err
    assert "cond_mean_rate_marriage: a perfect candidate passes" in err


def _frames(spec, tr, rare_rows: int, n: int = N, seed: int = 0):
    """An original and a candidate of n rows, each with ``rare_rows`` in occupation 1."""
    gen = np.random.default_rng(seed)
    sample = public_sample(spec)
    common = sample[sample["occupation"] != 1]
    rare = sample[sample["occupation"] == 1]
    out = []
    for _ in range(2):
        rows = pd.concat(
            [common.sample(n - rare_rows, replace=True, random_state=gen),
             rare.sample(rare_rows, replace=True, random_state=gen)],
        )  # fmt: skip
        out.append(tr.forward(rows.reset_index(drop=True)))
    return out


def test_an_evaluation_decided_by_noise_fails_whatever_the_value(spec_path, tmp_path):
    spec = load_spec(spec_path)
    spec = dataclasses.replace(spec, criteria=(_criterion(spec),))
    tr = Transformer(spec, {})
    # 30 candidate rows in the rare group: resized to 1 row (margin 46), noise sd
    # sqrt(2) * 4 / 0.5 = 11 against a threshold of 0.3: about half the noisy values
    # fall below it. 40 evaluations: a pass by noise would show in ~20 of them.
    original, candidate = _frames(spec, tr, rare_rows=30)
    below, failed = 0, 0
    for seed in range(40):
        ledger = Ledger(total_epsilon=100.0)
        report = evaluate(spec, tr, original, candidate, exact=False, ledger=ledger,
                          rng=PrivacyRNG.from_seed(seed))  # fmt: skip
        r = report.criteria[0]
        assert r.noise_dominated and r.public["min_group_size"] == 1
        below += r.value < r.threshold
        failed += not r.passed
        assert "decided by noise" in str(report)
    assert below >= 10  # the noise put it below the threshold, and still:
    assert failed == 40
    # With every group large enough (40,000 rows, 600 of them students: the smallest
    # group resized to about 200, noise sd 0.06 against 0.3) the same criterion is decided
    # by the candidate, and an identical candidate passes every time.
    original, _ = _frames(spec, tr, rare_rows=600, n=40_000)
    for seed in range(10):
        ledger = Ledger(total_epsilon=100.0)
        report = evaluate(spec, tr, original, original, exact=False, ledger=ledger,
                          rng=PrivacyRNG.from_seed(seed))  # fmt: skip
        assert not report.criteria[0].noise_dominated and report.passed


def test_the_planner_counts_a_dominated_run_as_a_failure(spec_path):
    spec = load_spec(spec_path)
    c = _criterion(spec)
    records = [
        {c.name: {"statistic": 0.0, "public": {"n": N, "min_group_size": 1}}},
        {c.name: {"statistic": 0.0, "public": {"n": N, "min_group_size": 554}}},
    ]
    grid = np.array([0.5])
    table = laplace_pass_table(spec, c, records, grid, NoiseLaw(7))
    assert release_dominated(c, spec, records[0][c.name]["public"], 0.5)
    assert table[0, 0] == 0.0
    assert table[1, 0] > 0.99  # sd sqrt(2) * 4 / 554 / 0.5 = 0.02 against 0.3


def test_the_audit_refuses_a_published_pass_that_noise_decided(spec_path):
    from synthflow.release.audit import _noise_decides

    spec = load_spec(spec_path)
    c = _criterion(spec)
    published = {"threshold": 0.3}
    # m = 1: sensitivity (5 - 1) / 1 = 4, noise sd 11 against 0.3.
    assert _noise_decides(c, published, {"sensitivity": 4.0}, fit_once=False)
    # m = 554: sensitivity 0.0072, noise sd 0.02.
    assert not _noise_decides(c, published, {"sensitivity": 4 / 554}, fit_once=False)


def test_the_datasheet_names_noise_far_above_the_preflights(spec_path):
    from synthflow.acceptance.noise_check import NoiseFigure
    from synthflow.acceptance.results import AcceptanceReport, CriterionResult
    from synthflow.release._datasheet_criteria import NOISE_ABOVE_PREFLIGHT, _criteria

    spec = load_spec(spec_path)
    spec = dataclasses.replace(spec, criteria=(_criterion(spec),))
    figure = NoiseFigure(criterion="cond_mean_rate_marriage", noise=0.05, room=0.3,
                         perfect_pass=0.99)  # fmt: skip

    def notes(sd: float) -> list[str]:
        r = CriterionResult(name="cond_mean_rate_marriage", kind="conditional_mean",
                            value=0.1, threshold=0.3, passed=True, epsilon=0.5,
                            mechanism="laplace", sensitivity=sd / math.sqrt(2) * 0.5,
                            noise_sd=sd)  # fmt: skip
        report = AcceptanceReport(criteria=(r,), passed=True, epsilon_total=0.5, exact=False)
        return _criteria(spec, report, {figure.criterion: figure})[1]

    assert not any("pre-flight" in x for x in notes(0.05 * NOISE_ABOVE_PREFLIGHT * 0.99))
    (note,) = [x for x in notes(0.05 * 3) if "pre-flight" in x]
    assert "3.0 times what the pre-flight expected" in note

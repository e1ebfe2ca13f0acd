"""``Synthesizer.fit_sample``: fit then sample in one call, under ``fit``'s privacy rules."""

from __future__ import annotations

import pandas as pd
import pytest

import synthflow
from synthflow.ledger import dataset_ledger
from synthflow.space import expand_space


@pytest.fixture()
def setup(small_spec, small_csv):
    data = synthflow.load_data(small_csv, small_spec, public=True).frame
    config = next(c for c in expand_space(small_spec) if c.model == "privbayes")
    return small_spec, config, data


def test_fit_sample_is_fit_then_sample(setup):
    spec, config, data = setup
    ledger = synthflow.Ledger(total_epsilon=spec.privacy.total_epsilon)
    rng = synthflow.PrivacyRNG.from_seed(3)
    s = synthflow.Synthesizer(spec, config)
    one = s.fit_sample(data, ledger=ledger, rng=rng, public=True)
    two = (
        synthflow.Synthesizer(spec, config)
        .fit(data, rng=synthflow.PrivacyRNG.from_seed(3), public=True)
        .sample()
    )
    pd.testing.assert_frame_equal(one, two)
    assert len(one) == len(data)
    assert ledger.spent_epsilon == pytest.approx(spec.privacy.generator_epsilon)  # charged once
    assert s.generator_ is not None  # fitted: sample() draws more, free
    more = s.sample(50, codes=True)
    assert len(more) == 50 and all(pd.api.types.is_integer_dtype(more[c]) for c in more)
    assert ledger.spent_epsilon == pytest.approx(spec.privacy.generator_epsilon)


def test_fit_sample_passes_n_and_codes(setup):
    spec, config, data = setup
    s = synthflow.Synthesizer(spec, config)
    codes = s.fit_sample(data, 120, codes=True, rng=synthflow.PrivacyRNG.from_seed(4), public=True)
    assert len(codes) == 120
    assert all(pd.api.types.is_integer_dtype(codes[c]) for c in codes)


def test_fit_sample_without_ledger_or_public_is_refused_before_the_data_are_read(setup, tmp_path):
    spec, config, _ = setup
    s = synthflow.Synthesizer(spec, config)
    # A file that does not exist: the refusal comes first, so the file is never opened.
    with pytest.raises(synthflow.ConfigError, match="persistent ledger"):
        s.fit_sample(tmp_path / "missing.csv")
    with pytest.raises(synthflow.ConfigError, match="public data only"):
        s.fit_sample(tmp_path / "missing.csv", rng=synthflow.PrivacyRNG.from_seed(1))
    assert s.generator_ is None


def test_fit_sample_on_private_data_charges_their_dataset_ledger(setup, tmp_path):
    spec, config, data = setup
    path = tmp_path / "budget.jsonl"
    ledger = dataset_ledger(path, data, total_epsilon=spec.privacy.total_epsilon)
    candidate = synthflow.Synthesizer(spec, config).fit_sample(data, ledger=ledger)
    assert len(candidate) == len(data)
    assert ledger.spent_epsilon == pytest.approx(spec.privacy.generator_epsilon)
    # Another dataset's ledger is refused before any charge.
    other = data.copy()
    other.loc[0, "age"] = (other.loc[0, "age"] + 1) % 90
    with pytest.raises(synthflow.ConfigError, match="another dataset"):
        synthflow.Synthesizer(spec, config).fit_sample(other, ledger=ledger)
    assert ledger.spent_epsilon == pytest.approx(spec.privacy.generator_epsilon)


def test_a_raw_frame_without_the_release_columns_names_them(setup):
    # [ux] 5: fit_sample(pd.read_csv(nvss)) raised a bare KeyError: 'birth_month'.
    from synthflow.errors import DataError

    spec, config, data = setup
    raw = data.rename(columns={"age": "AGE"})
    ledger = synthflow.Ledger(total_epsilon=spec.privacy.total_epsilon)
    with pytest.raises(DataError, match=r"lacks the spec's release column\(s\) \['age'\]"):
        synthflow.Synthesizer(spec, config).fit_sample(raw, ledger=ledger, public=True)
    assert ledger.spent_epsilon == 0  # refused before the charge


def test_printing_a_report_shows_every_criterion(setup):
    # [ux] 5: print(report) showed only '<AcceptanceReport FAILED: 4 of 8 criteria (exact)>'.
    spec, config, data = setup
    s = synthflow.Synthesizer(spec, config)
    candidate = s.fit_sample(data, rng=synthflow.PrivacyRNG.from_seed(2), public=True, codes=False)
    report = synthflow.evaluate_candidate(spec, config, data, candidate, exact=True, public=True)
    text = str(report)
    assert text.splitlines()[0] == repr(report)
    for c in report.criteria:
        line = next(x for x in text.splitlines() if f" {c.name} " in x)
        assert ("PASS" if c.passed else "FAIL") in line and f"{c.threshold:.4g}" in line

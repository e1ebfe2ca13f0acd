"""``Synthesizer.fit_sample``: fit then sample in one call, under ``fit``'s privacy rules."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import synthflow
from synthflow.privacy.ledger import dataset_ledger
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
        .sample(values=True)
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


def test_fit_sample_gives_values_drawn_inside_the_bins_and_labels_on_request(setup):
    # #61 item 8: fit_sample gave bin labels ("18-39"); it gives values, as SDV does.
    spec, config, data = setup

    def fitted() -> synthflow.Synthesizer:
        return synthflow.Synthesizer(spec, config)

    rng = synthflow.PrivacyRNG.from_seed
    values = fitted().fit_sample(data, rng=rng(6), public=True)
    codes = fitted().fit(data, rng=rng(6), public=True).sample(codes=True)
    labels = fitted().fit_sample(data, rng=rng(6), public=True, values=False)
    tr = synthflow.Transformer(spec, config.transformations)
    pd.testing.assert_frame_equal(labels, tr.to_labels(codes))  # the labels: a choice
    # Each value lies in its candidate row's bin and in the public domain; int columns
    # are whole numbers, categories stay categories.
    pd.testing.assert_frame_equal(tr.forward(values), codes, check_dtype=False)
    for col in spec.columns:
        if col.kind == "int":
            assert pd.api.types.is_integer_dtype(values[col.name]), col.name
            assert values[col.name].between(*col.domain).all(), col.name
        else:
            assert set(values[col.name]) <= set(col.categories), col.name
    # Uniform inside a bin, not its midpoint: the wide age bins hold many distinct ages.
    assert values["age"].nunique() > 3 * codes["age"].nunique()
    # From the fit's own generator: the same seed gives the same values, whatever
    # numpy's global state.
    np.random.seed(1)
    again = fitted().fit_sample(data, rng=rng(6), public=True)
    np.random.seed(2)
    pd.testing.assert_frame_equal(again, values)
    other = fitted().fit_sample(data, rng=rng(7), public=True)
    assert not other.equals(values)


def test_a_candidate_of_values_is_evaluated_as_its_bins(setup):
    spec, config, data = setup
    rng = synthflow.PrivacyRNG.from_seed
    values = synthflow.Synthesizer(spec, config).fit_sample(data, rng=rng(8), public=True)
    labels = synthflow.Synthesizer(spec, config).fit_sample(
        data, rng=rng(8), public=True, values=False
    )
    by_values, by_labels = (
        synthflow.evaluate_candidate(spec, config, data, c, exact=True, public=True)
        for c in (values, labels)
    )
    np.testing.assert_array_equal(
        [c.value for c in by_values.criteria], [c.value for c in by_labels.criteria]
    )
    # Integers that are not this configuration's codes are refused, not misread.
    unmarked = values.copy()
    unmarked.attrs = {}  # values without sample's mark: integers, like codes
    unmarked["region"] = unmarked["region"].map({"north": 0, "south": 1, "east": 2, "west": 3})
    unmarked["smoker"] = (unmarked["smoker"] == "yes").astype(int)
    with pytest.raises(synthflow.DataError, match=r"\['age'.*are not this configuration's codes"):
        synthflow.evaluate_candidate(spec, config, data, unmarked, exact=True, public=True)

"""The once-per-release hook ([shape]): selection releases a kind's shared statistic
through ``synthflow.criteria.release_once`` without naming the kind."""

from __future__ import annotations

import dataclasses

import pytest

from synthflow.criteria import KINDS, releasable_once, release_once
from synthflow.criteria.regression.fit import DPRegressionFit
from synthflow.data import load_data
from synthflow.errors import ConfigError
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Transformer

BINS = {"mother_age": "b"}


def test_the_hook_dispatches_to_the_kind_that_declares_it(births_spec, nvss_10k):
    declared = [k for k in KINDS.values() if k.once_per_release]
    assert [k.name for k in declared] == ["regression_coefficients"]
    tr = Transformer(births_spec, BINS)
    original = tr.forward(load_data(nvss_10k, births_spec, public=True).frame)
    ledger = Ledger(total_epsilon=births_spec.privacy.total_epsilon)
    shared = release_once(births_spec, tr, original, ledger=ledger, rng=PrivacyRNG.from_seed(1))
    (c,) = releasable_once(births_spec.criteria)
    assert isinstance(shared, DPRegressionFit)
    # Charged once, the kind's own budget, before the noise (the ledger's one entry).
    assert [x.epsilon for x in ledger.charges] == [c.epsilon]
    assert "once per release" in ledger.charges[0].what


def test_a_spec_without_such_a_kind_is_refused_naming_the_flag(births_spec, nvss_10k):
    kept = tuple(c for c in births_spec.criteria if not c.impl.once_per_release)
    spec = dataclasses.replace(births_spec, criteria=kept)
    tr = Transformer(spec, BINS)
    ledger = Ledger(total_epsilon=10.0)
    with pytest.raises(ConfigError, match="once_per_release"):
        release_once(spec, tr, tr.forward(load_data(nvss_10k, spec, public=True).frame),
                     ledger=ledger, rng=PrivacyRNG.from_seed(1))  # fmt: skip
    assert ledger.spent_epsilon == 0

"""Constraints on raw values and on bins (SPEC sec. 4)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthflow.filtering import binned_violations, raw_violations
from synthflow.transform import Transformer


def _raw(**cols):
    base = {
        "birth_month": 1,
        "mother_age": 30,
        "parity": 1,
        "gestation_week": 39,
        "birth_sex": "F",
        "birth_weight": 3300,
    }
    n = max(len(v) for v in cols.values())
    return pd.DataFrame({k: cols.get(k, [v] * n) for k, v in base.items()})


def test_raw_rules_are_strict(births_spec):
    rules = {r.id: r for r in births_spec.raw_constraints}
    df = _raw(birth_weight=[499, 500, 5500, 5501])
    assert raw_violations(df, rules[2]).tolist() == [True, False, False, True]
    df = _raw(mother_age=[22, 22, 23], parity=[7, 6, 7])
    assert raw_violations(df, rules[4]).tolist() == [True, False, False]


def test_binned_rule_needs_the_whole_bin(births_spec):
    """'age < 20 and parity > 3' on bins: 18-19 & 4-6 violates, 20-24 & 4-6 does not."""
    rule5 = [r for r in births_spec.synthetic_constraints if r.id == 5]
    tr = Transformer(births_spec, {"mother_age": "a", "parity": "a"})
    codes = tr.forward(_raw(mother_age=[19, 20, 17, 19], parity=[4, 4, 4, 3]))
    assert binned_violations(codes, rule5, tr).tolist() == [True, False, True, False]
    # parity b: '4' lies wholly above 3
    tr_b = Transformer(births_spec, {"parity": "b"})
    codes_b = tr_b.forward(_raw(mother_age=[19], parity=[4]))
    assert binned_violations(codes_b, rule5, tr_b).tolist() == [True]


def test_binned_rule_on_straddling_bins(births_spec):
    """Rule 7 (gestation < 29 and weight > 2999): '<29' and 3000-3099 violates; the
    bin 2900-2999 does not lie wholly above 2999."""
    rule7 = [r for r in births_spec.synthetic_constraints if r.id == 7]
    tr = Transformer(births_spec, {})
    codes = tr.forward(_raw(gestation_week=[28, 28, 29], birth_weight=[3050, 2950, 3050]))
    assert binned_violations(codes, rule7, tr).tolist() == [True, False, False]


def test_filtered_sample_satisfies_all_synthetic_rules(births_spec):
    tr = Transformer(births_spec, {"mother_age": "c", "parity": "b", "gestation_week": "b"})
    g = np.random.default_rng(0)
    codes = pd.DataFrame(
        {
            n: g.integers(0, s, 5000).astype(np.int16)
            for n, s in zip(tr.domain.names, tr.domain.sizes, strict=True)
        }
    )
    bad = binned_violations(codes, births_spec.synthetic_constraints, tr)
    assert 0 < bad.sum() < len(codes)
    kept = codes.loc[~bad]
    assert not binned_violations(kept, births_spec.synthetic_constraints, tr).any()
    # check kept rows rule by rule with raw semantics on bin ends
    age_hi = np.array([b.hi for b in tr.transformations["mother_age"].bins])[kept.mother_age]
    par_lo = np.array([b.lo for b in tr.transformations["parity"].bins])[kept.parity]
    assert not ((age_hi < 20) & (par_lo > 3)).any()


def test_sample_valid_draws_exactly_n_first_then_oversamples(births_spec, nvss_10k):
    # The first round asks for exactly n rows (a systematic sample must not be cut down
    # to a random subset); later rounds draw oversample x the missing rows. PrivBayes on
    # the 10K sample puts some mass on implausible rows, so several rounds are needed.
    import math

    from synthflow.data import load_data
    from synthflow.flow import sample_valid
    from synthflow.generators import make_generator
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG

    tr = Transformer(births_spec, {"mother_age": "b"})
    codes = tr.forward(load_data(nvss_10k, births_spec, public=True).frame)
    gen = make_generator("privbayes", {"theta": 4}, epsilon=0.5, transformer=tr)
    gen.fit(codes, domain=tr.domain, ledger=Ledger(total_epsilon=1), rng=PrivacyRNG.from_seed(0))
    asked: list[int] = []
    valid: list[int] = []
    draw = gen.sample

    def recording(n, *, rng):  # the real sampler, with its requests and valid rows noted
        batch = draw(n, rng=rng)
        asked.append(n)
        valid.append(int((~binned_violations(batch, births_spec.synthetic_constraints, tr)).sum()))
        return batch

    gen.sample = recording
    rows, dropped, rounds = sample_valid(
        gen, 5000, transformer=tr, spec=births_spec, rng=np.random.default_rng(0)
    )
    assert len(rows) == 5000
    assert not binned_violations(rows, births_spec.synthetic_constraints, tr).any()
    assert rounds == len(asked) >= 2 and dropped > 0  # the check below needs a second round
    assert asked[0] == 5000
    missing = 5000
    for k in range(1, len(asked)):
        missing -= min(valid[k - 1], missing)
        assert asked[k] == math.ceil(missing * births_spec.sampling.oversample)

"""Cell key perturbation: p-table properties, record and cell keys, consistency."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tables_support import make_births, tables_of

from synthflow.config import ReleaseSpec
from synthflow.privacy.rng import PrivacyRNG
from synthflow.tables import (
    PRESETS,
    CellKey,
    Microdata,
    PTableParams,
    make_ptable,
    protect,
    record_keys_from_ids,
    tabulate_all,
)


@st.composite
def ptable_params(draw: st.DrawFn) -> PTableParams:
    keys = draw(st.sampled_from([256, 4096]))
    large = draw(st.floats(0.0, 0.8))
    return PTableParams(
        keys=keys,
        max_perturbation=draw(st.integers(1, 10)),
        rate_large=large,
        rate_small=draw(st.floats(large, 0.9)),
        decay=draw(st.floats(0.5, 40.0)),
        zero_rate=draw(st.floats(0.0, 0.6)),
        unbiased=draw(st.booleans()),
    )


@settings(max_examples=60, deadline=None)
@given(ptable_params())
def test_ptable_properties(params: PTableParams) -> None:
    pt = make_ptable(params)
    k, d = params.keys, params.max_perturbation
    counts, outcomes = pt.key_counts, pt.outcomes
    # Every row is a distribution over whole keys: the probabilities sum to 1.
    assert (counts >= 0).all()
    assert (counts.sum(axis=1) == k).all()
    np.testing.assert_allclose(pt.probabilities.sum(axis=1), 1.0)
    # Never a negative result: row i has no perturbation below -i; zeros only go up.
    for i, row in enumerate(counts):
        assert row[outcomes < -i].sum() == 0
    assert abs(outcomes[counts[0] > 0]).max() <= d
    # Zero mean, exactly in keys, for every count >= 1 when required.
    if params.unbiased:
        assert (counts[1:] @ outcomes == 0).all()
    # Rates fall (never rise) with the count, and the last row is for every larger count.
    rates = pt.rates()
    assert (np.diff(rates[1:]) <= 1e-12).all()
    assert pt.key_counts.shape[0] - 1 >= d
    # Each row's rate is its target to within one key (two for a +-1 table, which needs an
    # even number of moving keys to stay symmetric).
    tol = (2 if d == 1 else 1) / k
    targets = [params.rate(i) for i in range(len(rates) - 1)] + [params.rate_large]
    assert np.abs(rates - np.array(targets)).max() <= tol + 1e-12


def test_ptable_is_laplace_shaped() -> None:
    params = PRESETS["4096"]
    pt = make_ptable(params)
    last = pt.key_counts[-1]
    r = params.rate_large
    ratio = r / (2 - r)
    d = params.max_perturbation
    j = pt.outcomes
    q = np.where(j == 0, 0.0, ratio ** np.abs(j))
    expected = (params.keys - last[j == 0][0]) * q / q.sum()
    # Symmetric rows are truncated discrete Laplace, off by at most a key or two of
    # rounding (the zero-mean fix moves single keys).
    assert np.abs(last - np.where(j == 0, last, expected)).max() <= 2
    np.testing.assert_array_equal(last, last[::-1])
    assert (np.diff(last[d:]) <= 0).all() and (np.diff(last[: d + 1]) >= 0).all()
    # Higher rates for small counts, falling smoothly (no cliff between neighbours).
    rates = pt.rates()
    assert rates[1] == pytest.approx(params.rate_small, abs=1 / 4096)
    assert np.abs(np.diff(rates[1:])).max() < 0.03


def test_ptable_lookup_reproduces_key_counts() -> None:
    pt = make_ptable(PRESETS["256"])
    keys = np.arange(256)
    for i in range(pt.key_counts.shape[0] + 3):  # rows past the last reuse it
        row = min(i, pt.key_counts.shape[0] - 1)
        got = pt.perturbation(np.full(256, i), keys)
        hist = np.array([(got == j).sum() for j in pt.outcomes])
        np.testing.assert_array_equal(hist, pt.key_counts[row])
    frame = pt.to_frame()
    for _, grp in frame.groupby("pcv"):
        assert grp.probability.sum() == pytest.approx(1.0)
        assert grp.ckey_from.iloc[0] == 0 and grp.ckey_to.iloc[-1] == 255
        assert (grp.ckey_from.to_numpy()[1:] == grp.ckey_to.to_numpy()[:-1] + 1).all()


def test_ptable_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match=re.escape("rate_large (0.5) <= rate_small (0.2)")):
        PTableParams(rate_small=0.2, rate_large=0.5)
    with pytest.raises(ValueError, match=re.escape("max_perturbation (0)")):
        PTableParams(max_perturbation=0)
    with pytest.raises(ValueError, match=re.escape("keys (10)")):
        PTableParams(keys=10)


def test_record_keys_from_ids_match_ons_example() -> None:
    # ONS (2024), table 1: ID numbers and their record keys mod 4096.
    ids = [400008828, 400010901, 400000494, 400007157, 400011412]
    np.testing.assert_array_equal(record_keys_from_ids(ids, 4096), [1660, 3733, 1518, 4085, 148])


def test_same_records_same_noise_in_every_table(births_spec: ReleaseSpec) -> None:
    frame = make_births(2000, seed=5)
    tables = tables_of(
        births_spec,
        {"name": "a", "columns": ["mother_age", "parity"]},
        {"name": "b", "columns": ["parity", "mother_age"], "transformations": {"mother_age": "b"}},
        {"name": "c", "columns": ["mother_age", "parity"], "geography": ["birth_sex"]},
    )
    method = CellKey(ptable=PRESETS["4096"])
    out = protect(Microdata(frame, births_spec), tables, method, rng=PrivacyRNG.from_seed(1))
    a, b, c_national, _ = (t.to_frame() for t in out)
    merged = a.merge(b, on=["mother_age", "parity"], suffixes=("_a", "_b"))
    # Bins shared by alternatives a and b (all but 35-39 vs 35-36, 37-39) hold the same
    # records, hence the same cell value and key, hence the same perturbation.
    assert len(merged) == 8 * 5
    np.testing.assert_array_equal(merged.count_a, merged.count_b)
    pd.testing.assert_frame_equal(a, c_national)
    originals = tabulate_all(tables[:1], Microdata(frame, births_spec))[0][0].counts
    assert (a["count"].to_numpy() != originals.ravel()).any()  # it did perturb


def test_id_keys_give_the_same_noise_in_every_run(births_spec: ReleaseSpec) -> None:
    frame = make_births(500, seed=2).assign(id=np.arange(500) * 7919 + 400000000)
    (t,) = tables_of(births_spec, {"name": "t", "columns": ["mother_age", "birth_sex"]})
    method = CellKey(ptable=PRESETS["256"], record_key_column="id")
    runs = [
        protect(Microdata(frame, births_spec), [t], method, rng=PrivacyRNG.from_seed(s))[0]
        for s in (1, 2)
    ]
    np.testing.assert_array_equal(runs[0].values, runs[1].values)
    uniform = CellKey(ptable=PRESETS["256"])
    draws = [
        protect(Microdata(frame, births_spec), [t], uniform, rng=PrivacyRNG.from_seed(s))[0]
        for s in (1, 2)
    ]
    assert (draws[0].values != draws[1].values).any()


def test_zero_cells_perturbed_by_category_keys(births_spec: ReleaseSpec) -> None:
    frame = make_births(300, seed=4)
    params = PTableParams(keys=4096, max_perturbation=3, zero_rate=0.2)
    (t,) = tables_of(
        births_spec,
        {
            "name": "sparse",
            "columns": ["birth_weight", "gestation_week", "mother_age"],
            "transformations": {"gestation_week": "b", "mother_age": "c"},
            "structural_zeros": [{"all": [["gestation_week", "<", 29]]}],
        },
    )
    data = Microdata(frame, births_spec)
    counts = tabulate_all([t], data)[0][0].counts
    out = [
        protect(data, [t], CellKey(ptable=params), rng=PrivacyRNG.from_seed(s))[0].values
        for s in (8, 9)
    ]
    s = t.levels[0].structural
    zero = (counts == 0) & ~s
    for v in out:
        assert (v[s] == 0).all()  # never a structural zero
        assert (v[zero] >= 0).all() and (v[zero] <= 3).all()
        # About zero_rate of the ~13,000 open zero cells move. Category cell keys are
        # pairwise independent and uniform, so the share has binomial variance
        # (sd 0.0035); 0.02 is more than 5 sd.
        assert abs((v[zero] > 0).mean() - 0.2) < 0.02
    # Category keys are drawn per run (zero cells change between runs), never from data.
    assert (out[0][zero] != out[1][zero]).any()


def test_threshold_suppresses_small_perturbed_counts(births_spec: ReleaseSpec) -> None:
    frame = make_births(300, seed=4)
    (t,) = tables_of(births_spec, {"name": "t", "columns": ["mother_age", "parity"]})
    method = CellKey(ptable=PRESETS["256"], threshold=10)
    (out,) = protect(Microdata(frame, births_spec), [t], method, rng=PrivacyRNG.from_seed(0))
    shown = out.values[~np.isnan(out.values)]
    assert (shown >= 10).all() and np.isnan(out.values).any()
    assert out.display == "cell-key 256 t10"

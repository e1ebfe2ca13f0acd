from __future__ import annotations

import dataclasses

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from synthflow.criteria.faithfulness import faithfulness_sensitivity, maximum_matching
from synthflow.transform import Transformer


def _pair_matches(a, b, names, rule, transformer) -> bool:
    """Independent, record-level reading of SPEC sec. 6."""
    diffs = 0
    for j, name in enumerate(names):
        if name in rule.ignore:
            continue
        if name not in rule.near:
            if a[j] != b[j]:
                return False
            continue
        d = abs(int(a[j]) - int(b[j]))
        if d == 0:
            continue
        t = transformer.transformations[name]
        for col, letter, label in rule.exceptions:
            if col == name and t.name == letter and label in (t.labels[a[j]], t.labels[b[j]]):
                return False
        if d > rule.max_bin_distance:
            return False
        diffs += 1
    return diffs <= rule.max_near_differences


def record_level_size(t, r, transformer, rule) -> int:
    names = transformer.domain.names
    g = nx.Graph()
    left = [("t", i) for i in range(len(t))]
    g.add_nodes_from(left)
    g.add_nodes_from(("r", j) for j in range(len(r)))
    for i in range(len(t)):
        for j in range(len(r)):
            if _pair_matches(t[i], r[j], names, rule, transformer):
                g.add_edge(("t", i), ("r", j))
    m = nx.bipartite.hopcroft_karp_matching(g, top_nodes=left)
    return len(m) // 2


def _mk(transformer, codes_list):
    return np.array(codes_list, dtype=np.int64)


def test_hand_example(transformer, spec):
    rule = spec.criterion("faithfulness_unmatched").match
    # columns: birth_month, mother_age, parity, gestation_week, birth_sex, birth_weight
    base = [0, 3, 0, 4, 0, 15]
    t = _mk(transformer, [base, [0, 3, 0, 4, 0, 16], [0, 3, 1, 4, 0, 15], [0, 5, 0, 4, 0, 15]])
    r = _mk(
        transformer,
        [
            [0, 4, 0, 4, 0, 15],  # age one bin off: matches base and row 1? (two diffs: no)
            [0, 3, 0, 4, 0, 17],  # weight one off row 1
            [0, 3, 0, 4, 1, 15],  # sex differs: no match
            [0, 6, 0, 4, 0, 15],  # 40-42 vs 35-39: exception bin must match exactly
        ],
    )
    res = maximum_matching(t, r, transformer, rule)
    # base-r0, t1-r1; t2 parity 2-3 matches nothing; t3 (35-39) only a 35-39 record
    assert res.size == 2
    assert res.unmatched_share == pytest.approx(0.5)
    assert res.unmatched_original.tolist() == [False, False, True, True]
    assert record_level_size(t, r, transformer, rule) == 2


def test_exception_only_for_its_letter(spec):
    rule = spec.criterion("faithfulness_unmatched").match
    tb = Transformer(spec, {"mother_age": "b"})  # 35-36, 37-39: no exception bin
    t = np.array([[0, 5, 0, 4, 0, 15]])
    r = np.array([[0, 6, 0, 4, 0, 15]])
    assert maximum_matching(t, r, tb, rule).size == 1
    ta = Transformer(spec, {"mother_age": "a"})
    assert maximum_matching(t, r, ta, rule).size == 0


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_t=st.integers(1, 25),
    n_r=st.integers(1, 25),
    spread=st.integers(1, 4),
    near=st.sampled_from([1, 2]),
    dist=st.sampled_from([1, 2]),
    ignore=st.sampled_from([(), ("birth_month",), ("birth_month", "birth_weight")]),
)
def test_matches_record_level_hopcroft_karp(  # noqa: PLR0917
    spec, make_codes, seed, n_t, n_r, spread, near, dist, ignore
):
    rng = np.random.default_rng(seed)
    transformer = Transformer(spec, {"mother_age": "a"})
    base = spec.criterion("faithfulness_unmatched").match
    rule = dataclasses.replace(
        base,
        max_near_differences=near,
        max_bin_distance=dist,
        exact=tuple(c for c in base.exact if c not in ignore),
        near=tuple(c for c in base.near if c not in ignore),
        ignore=ignore,
    )
    t = make_codes(transformer, n_t, rng, spread=spread)
    r = make_codes(transformer, n_r, rng, spread=spread)
    # exercise the exception bin (mother_age code 5 = 35-39) around its neighbours
    t[:, 1] = rng.integers(4, 7, n_t)
    r[:, 1] = rng.integers(4, 7, n_r)
    fast = maximum_matching(t, r, transformer, rule)
    assert fast.size == record_level_size(t, r, transformer, rule)
    assert fast.unmatched_original.sum() == n_t - fast.size


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 30))
def test_sensitivity_neighbours(spec, transformer, make_codes, seed, n):
    rng = np.random.default_rng(seed)
    rule = spec.criterion("faithfulness_unmatched").match
    t = make_codes(transformer, n, rng, spread=2)
    r = make_codes(transformer, n, rng, spread=2)
    t2 = t.copy()
    t2[rng.integers(n)] = make_codes(transformer, 1, rng, spread=2)[0]
    a = maximum_matching(t, r, transformer, rule).unmatched_share
    b = maximum_matching(t2, r, transformer, rule).unmatched_share
    assert abs(a - b) <= faithfulness_sensitivity(n) + 1e-12


def test_keys_past_int64_are_compressed_not_wrapped(spec, make_codes, monkeypatch):
    # A 10^16-cell table cannot use one mixed-radix key per row in every case: with the
    # key limit lowered to force the group-id compression, the matching is unchanged.
    import synthflow.criteria.faithfulness as f

    rng = np.random.default_rng(3)
    transformer = Transformer(spec, {"mother_age": "a"})
    rule = spec.criterion("faithfulness_unmatched").match
    t = make_codes(transformer, 300, rng, spread=2)
    r = make_codes(transformer, 280, rng, spread=2)
    want = maximum_matching(t, r, transformer, rule).size
    # near cells 9 x 6 x 32 = 1728; exact 12 x 5 x 2 = 120 groups: compression needed
    monkeypatch.setattr(f, "_KEY_LIMIT", 1728 * 50)
    assert maximum_matching(t, r, transformer, rule).size == want

"""[tests] More gaps of the mutmut run on the DP evaluation (benchmarks/mutmut_report.md).

Complements test_mutation_gaps.py; each test kills mutants that the rerun
(benchmarks/mutmut_rerun_acceptance.md) found alive: faithfulness keys, strides, edges
and overflow guards; the 1-way ratio's parameter checks and sensitivity cap; the
conditional mean's tables and resized statistic against independent computations; the
marginals' edge cases, memory bound and cell ranking; the coefficient release's fields.
Expected values are computed independently (pandas groupby, brute force, hand
arithmetic), never by the function under test. Tolerances: rel=1e-12 where the same
numbers are summed in another order (pandas or Python against numpy), so only rounding
differs; pytest.approx's default (rel 1e-6) for hand-written decimal fractions.
"""

from __future__ import annotations

import dataclasses
import math
import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest

from synthflow.acceptance import evaluate, evaluate_exact_and_noisy, fit_dp_regression
from synthflow.config import MatchRule
from synthflow.criteria._common import numbers
from synthflow.criteria.conditional_mean import (
    _resized_means,
    cond_mean_error,
    cond_mean_table,
    group_index,
    resized_cond_mean_error,
)
from synthflow.criteria.faithfulness import (
    _type_keys,
    faithfulness_sensitivity,
    match_offsets,
    maximum_matching,
    type_edges,
)
from synthflow.criteria.marginals import (
    _subset_table,
    _union,
    _whole_lattice,
    marginal_errors,
    marginal_max_abs_error,
    marginal_sensitivity,
    marginal_shares,
    marginal_subsets,
    worst_marginal_cells,
)
from synthflow.criteria.one_way_ratio import (
    one_way_ratio_sensitivity,
    one_way_ratios,
    pseudo_threshold,
    release_threshold,
)
from synthflow.errors import ConfigError
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG

NAMES = ("birth_month", "mother_age", "parity", "gestation_week", "birth_sex", "birth_weight")
# Coarse groups of the births transformer (letter a), written out by hand from
# configs/births.yaml so that the expected values do not reuse group_index.
MOTHER_AGE_GROUP = np.array([0, 0, 0, 1, 2, 3, 3, 3, 3])  # <25 | 25-29 | 30-34 | >34
PARITY_GROUP = np.array([0, 1, 2, 2, 2])  # 1 | 2-3 | >3


def _rows(transformer, n: int, **cols) -> np.ndarray:
    names = transformer.domain.names
    assert names == NAMES
    out = np.zeros((n, len(names)), dtype=np.int64)
    for name, values in cols.items():
        out[:, names.index(name)] = values
    return out


# ---------------------------------------------------------------- faithfulness: keys


def test_near_stride_keeps_exact_groups_apart():
    # Exact column 0, near column 1 (2 bins each): (0, 1) and (1, 0) are different
    # types. A near stride of 2 would give 0*2 + 2*1 == 1*2 + 0.
    ko, kc, strides = _type_keys(np.array([[0, 1]]), np.array([[1, 0]]), np.array([2, 2]), [0], [1])
    assert strides == {1: 1}
    assert ko[0] != kc[0]


def test_near_strides_are_the_running_product():
    # Mixed radix over sizes (2, 3, 4): strides 12, 4, 1 (a stride equal to the column's
    # own size, 3, would map (0, 1, 0) and (1, 0, 1) to 4 == 3 + 1).
    ko, kc, strides = _type_keys(
        np.array([[0, 1, 0]]), np.array([[1, 0, 1]]), np.array([2, 3, 4]), [], [0, 1, 2]
    )
    assert strides == {2: 1, 1: 4, 0: 12}
    assert ko.tolist() == [4] and kc.tolist() == [13]


def test_exact_group_ids_stay_integers_past_2_to_53():
    # 17 exact columns of 10 bins: 10**17 < 2**62, so no compression, but > 2**53:
    # float64 ids (spacing 16 at 1e17) would merge rows that differ in the last digit.
    sizes = np.full(17, 10)
    ko, kc, _ = _type_keys(
        np.array([[9] * 16 + [0]]), np.array([[9] * 16 + [1]]), sizes, list(range(17)), []
    )
    assert kc[0] != ko[0]


def test_exact_group_ids_are_compressed_before_int64_overflows():
    # 20 exact columns of 10 bins (10**20 cells): the digits of 2**64 would wrap to 0,
    # the key of the all-zero row, without the in-loop rank compression.
    digits = [int(ch) for ch in str(2**64)]
    assert len(digits) == 20
    a, b = np.array([digits]), np.zeros((1, 20), dtype=np.int64)
    ko, kc, _ = _type_keys(a, b, np.full(20, 10), list(range(20)), [])
    assert ko[0] != kc[0]
    # ... and a third row equal to the first gets the first's key.
    ko, kc, _ = _type_keys(np.concatenate([a, b]), a, np.full(20, 10), list(range(20)), [])
    assert kc[0] == ko[0] != ko[1]


def test_too_many_near_cells_is_refused():
    # 16 near columns of 16 bins: 2**64 cells (np.prod without dtype=object wraps to 0).
    rows = np.zeros((1, 16), dtype=np.int64)
    with pytest.raises(ConfigError, match="too many to index together"):
        _type_keys(rows, rows, np.full(16, 16), [], list(range(16)))
    # Exactly 2**62 near cells is already too many (keys must stay below 2**62).
    rows = np.zeros((1, 62), dtype=np.int64)
    with pytest.raises(ConfigError, match="too many to index together"):
        _type_keys(rows, rows, np.full(62, 2), [], list(range(62)))


def test_exact_groups_are_compressed_before_the_near_part():
    # 31 exact + 31 near binary columns: bound * near_cells == 2**62 exactly; the
    # two distinct exact groups are compressed to ids 0, 1 instead of refusing.
    sizes = np.full(62, 2)
    a = np.zeros((2, 62), dtype=np.int64)
    a[1, :31] = 1
    a[1, 61] = 1
    ko, kc, strides = _type_keys(a, a[:1], sizes, list(range(31)), list(range(31, 62)))
    assert strides[61] == 1 and strides[31] == 2**30
    assert len(set(ko.tolist())) == 2 and kc[0] == ko[0]
    assert ko[1] % 2**31 == 1  # the near part of a key is its near codes' mixed radix


def test_keys_after_post_loop_compression_stay_exact():
    # 10 exact + 53 near binary columns (2**63 cells): compression leaves group ids
    # 0 and 1, so r1 and r2 get keys 2**53 and 2**53 + 1 (equal in float64): their
    # keys differ by the last near column's stride, 1.
    sizes = np.full(63, 2)
    r1 = np.zeros(63, dtype=np.int64)
    r1[:10] = 1
    r2 = r1.copy()
    r2[62] = 1
    ko, kc, _ = _type_keys(
        np.array([np.zeros(63, np.int64), r1]),
        np.array([r2]),
        sizes,
        list(range(10)),
        list(range(10, 63)),
    )
    assert kc[0] - ko[1] == 1 and ko[0] != ko[1]


def test_keys_after_in_loop_compression_stay_exact():
    # 117 exact binary columns: compression before column 61 leaves ids 0, 1; the
    # remaining 56 columns give r1 and r2 ids 2**56 and 2**56 + 1 (equal in float64).
    r1 = np.zeros(117, dtype=np.int64)
    r1[:61] = 1
    r2 = r1.copy()
    r2[116] = 1
    ko, kc, _ = _type_keys(
        np.array([np.zeros(117, np.int64), r1]),
        np.array([r2]),
        np.full(117, 2),
        list(range(117)),
        [],
    )
    assert len({ko[0], ko[1], kc[0]}) == 3


def test_post_loop_bound_counts_the_distinct_exact_groups():
    # One binary exact column and 61 binary near columns (2**61 near cells): 2 * 2**61
    # reaches the 2**62 limit, so the exact groups are compressed; their count G decides:
    # G = 2 groups need 2**62 keys (refused), G = 1 fits (2**61). A bound of G - 2 or
    # G + 1 (max - 1 or max + 2 instead of max + 1) gets one of the two wrong.
    sizes = np.full(62, 2)
    rows = np.zeros((2, 62), dtype=np.int64)
    rows[1, 0] = 1
    with pytest.raises(ConfigError, match="too many to index together"):
        _type_keys(rows[:1], rows[1:], sizes, [0], list(range(1, 62)))
    ko, kc, _ = _type_keys(rows[:1], rows[:1], sizes, [0], list(range(1, 62)))
    assert ko.tolist() == kc.tolist() == [0]


def test_in_loop_bound_counts_the_distinct_exact_groups():
    # 62 binary exact columns: compressed before column 61 into G = 3 groups (rows with
    # 0, 30 and 61 leading ones), so the exact part has 3 * 2 = 6 ids, 3 of them used.
    # Near part: 59 binary columns and one of 3 bins (3 * 2**59 cells). After the
    # post-loop compression 3 * 3 * 2**59 >= 2**62: refused. A bound of G - 2 (= 1)
    # would give 2 * 3 * 2**59 < 2**62, skip both checks, and index past the limit.
    sizes = np.array([2] * 62 + [2] * 59 + [3])
    rows = np.zeros((3, 122), dtype=np.int64)
    rows[1, :30] = 1
    rows[2, :61] = 1
    with pytest.raises(ConfigError, match="too many to index together"):
        _type_keys(rows, rows, sizes, list(range(62)), list(range(62, 122)))


# ------------------------------------------------------- faithfulness: rules and edges

# Exact: birth_sex (2 bins); near: parity (5 bins); the rest ignored.
IGNORED = ("birth_month", "mother_age", "gestation_week", "birth_weight")


def _rule(**kw) -> MatchRule:
    base = dict(
        exact=("birth_sex",),
        near=("parity",),
        ignore=IGNORED,
        max_near_differences=1,
        max_bin_distance=1,
    )
    base.update(kw)
    return MatchRule(**base)


def _size(transformer, rule, t_sex_parity, r_sex_parity) -> int:
    t = _rows(transformer, 1, birth_sex=[t_sex_parity[0]], parity=[t_sex_parity[1]])
    r = _rows(transformer, 1, birth_sex=[r_sex_parity[0]], parity=[r_sex_parity[1]])
    return maximum_matching(t, r, transformer, rule).size


def test_shifted_near_codes_must_stay_in_range(transformer):
    rule = _rule()
    # parity 0 shifted by -1 is -1: not a bin (its key would be the previous
    # exact group's last bin, here sex 0, parity 4).
    assert _size(transformer, rule, (1, 0), (0, 4)) == 0
    # parity 4 shifted by +1 is 5 == size: not a bin (key of sex 1, parity 0).
    assert _size(transformer, rule, (0, 4), (1, 0)) == 0
    # parity 1 -> 0 and 3 -> 4 are valid shifts at the ends of the range.
    assert _size(transformer, rule, (0, 1), (0, 0)) == 1
    assert _size(transformer, rule, (1, 3), (1, 4)) == 1
    assert _size(transformer, rule, (0, 1), (0, 3)) == 0  # two bins away


@pytest.mark.parametrize(("label", "t_parity", "r_parity"), [("1", 1, 0), (">10", 3, 4)])
def test_exception_bins_at_the_ends_of_a_near_column(transformer, label, t_parity, r_parity):
    # An exception bin must match exactly, also when it is the first or last bin.
    rule = _rule(exceptions=(("parity", "a", label),))
    assert _size(transformer, rule, (0, t_parity), (0, r_parity)) == 0
    assert _size(transformer, _rule(), (0, t_parity), (0, r_parity)) == 1


def test_exception_check_keeps_the_range_check(transformer):
    # parity has an exception bin ("2-3", code 1); a shift out of range (0 - 1) must
    # stay refused in that column: otherwise sex 1 / parity 0 matches sex 0 / parity 4.
    rule = _rule(exceptions=(("parity", "a", "2-3"),))
    assert _size(transformer, rule, (1, 0), (0, 4)) == 0
    assert _size(transformer, rule, (0, 4), (1, 0)) == 0
    assert _size(transformer, rule, (0, 3), (0, 4)) == 1


def test_exceptions_with_a_bin_distance_past_the_column(transformer):
    # max_bin_distance 6 on a 5-bin column: shifts reach -6, out of range (refused by
    # the range check) and clipped before the exception lookup (no IndexError).
    rule = _rule(max_bin_distance=6, exceptions=(("parity", "a", "1"),))
    assert _size(transformer, rule, (0, 1), (0, 4)) == 1
    assert _size(transformer, rule, (0, 0), (0, 4)) == 0  # bin "1" is an exception
    assert _size(transformer, rule, (1, 0), (0, 4)) == 0  # other exact group


def test_every_exception_of_the_active_letter_counts(transformer):
    # An exception of another transformation letter is skipped, not the end of the list.
    rule = _rule(exceptions=(("parity", "b", ">10"), ("parity", "a", "1")))
    assert _size(transformer, rule, (0, 1), (0, 0)) == 0
    assert _size(transformer, rule, (0, 1), (0, 2)) == 1


@pytest.mark.parametrize(
    "kw", [{"exact": ("nope",)}, {"near": ("nope",)}, {"ignore": (*IGNORED, "nope")}]
)
def test_a_rule_naming_an_unknown_column_is_refused(transformer, kw):
    t = _rows(transformer, 1)
    with pytest.raises(ConfigError, match=r"unknown columns \['nope'\]"):
        maximum_matching(t, t, transformer, _rule(**kw))


def test_zero_offset_is_listed_once():
    rule = _rule(near=("a", "b"))
    assert match_offsets(rule, [0, 1]) == [{}, {0: -1}, {0: 1}, {1: -1}, {1: 1}]


def test_type_edges_lists_each_matching_pair_once(transformer):
    # Two D_T types, two D_R types: (sex 0, parity 1) matches both (0, 1) and (0, 2);
    # (1, 0) matches none.
    t = _rows(transformer, 2, birth_sex=[0, 1], parity=[1, 0])
    r = _rows(transformer, 2, birth_sex=[0, 0], parity=[1, 2])
    counts_t, _, counts_r, _, e_t, e_r = type_edges(t, r, transformer, _rule())
    assert counts_t.tolist() == [1, 1] and counts_r.tolist() == [1, 1]
    assert sorted(zip(e_t.tolist(), e_r.tolist(), strict=True)) == [(0, 0), (0, 1)]


def test_an_empty_candidate_leaves_every_record_unmatched(transformer, tables):
    t = tables[0].to_numpy().astype(np.int64)
    res = maximum_matching(t, t[:0], transformer, _rule())
    assert res.size == 0 and res.n_original == len(t)
    assert res.unmatched_share == 1.0
    assert res.unmatched_original.dtype == bool and res.unmatched_original.shape == (len(t),)
    assert res.unmatched_original.all()
    with pytest.raises(ValueError, match="non-empty original"):
        maximum_matching(t[:0], t, transformer, _rule())


def test_faithfulness_sensitivity_of_one_record():
    assert faithfulness_sensitivity(1) == 1.0
    with pytest.raises(ValueError, match="must be >= 1"):
        faithfulness_sensitivity(0)


# ---------------------------------------------------------------------------- ratio


def test_clip_of_one_is_refused():
    a = np.array([[0], [1]])
    with pytest.raises(ValueError, match="must be > 1"):
        one_way_ratios(a, a, (2,), clip=1.0)
    with pytest.raises(ValueError, match="must be > 1"):
        one_way_ratio_sensitivity(5, clip=1.0)
    with pytest.raises(ValueError, match="must be >= 0"):
        one_way_ratio_sensitivity(-1, clip=2.0)


def test_counts_of_different_sizes_are_rescaled_to_the_candidate():
    # |D_T| = 100 with counts (50, 50); |D_R| = 200 with (150, 50): D_T rescaled to
    # (100, 100), ratios 1.5 and 2.0 (not clipped at 5).
    a = np.array([[0]] * 50 + [[1]] * 50)
    b = np.array([[0]] * 150 + [[1]] * 50)
    (ratios,) = one_way_ratios(a, b, (2,), clip=5.0)
    assert ratios.tolist() == pytest.approx([1.5, 2.0])


def test_empty_bins_raise_no_numpy_warning():
    # Bins empty in one table (x/0) or in both (0/0) are handled explicitly; numpy's
    # divide/invalid warnings must stay silenced (they would flood the CLI's output).
    a = np.array([[0], [0], [1]])
    b = np.array([[0], [2], [2]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (ratios,) = one_way_ratios(a, b, (4,), clip=3.0)
    assert ratios.tolist() == [2.0, 3.0, 3.0, 1.0]


def test_ratio_sensitivity_values():
    # c = 3, m = 1: max(1, 3 - 1/(1/3 + 1)) = 2.25 > c - 1 = 2, so the cap binds.
    assert one_way_ratio_sensitivity(1, clip=3.0) == 2.0
    # c = 1.5, m = 5: min(0.5, max(0.2, 1.5 - 1/(1/1.5 + 0.2))) = 1.5 - 1/(13/15) = 2.25/6.5
    assert one_way_ratio_sensitivity(5, clip=1.5) == pytest.approx(2.25 / 6.5, rel=1e-12)
    assert one_way_ratio_sensitivity(0, clip=2.5) == 1.5


@pytest.mark.parametrize("p", [0.0, 0.5, 0.7, -0.1])
def test_false_positive_rate_outside_the_open_interval_is_refused(p):
    with pytest.raises(ValueError, match=r"must be in \(0, 0.5\)"):
        pseudo_threshold(clip=2.0, scale=0.1, false_positive_rate=p)


def test_pseudo_threshold_value():
    # c - b ln(1/(2p)) = 2 - 0.1 ln 10
    assert pseudo_threshold(clip=2.0, scale=0.1, false_positive_rate=0.05) == pytest.approx(
        2.0 - 0.1 * math.log(10.0), rel=1e-12
    )


def test_release_threshold_uses_the_smaller_of_assumed_and_actual_counts():
    kw = dict(threshold=2.0, clip=2.0, epsilon=0.3, false_positive_rate=0.05)

    def t_prime(m: int) -> float:  # by hand: sensitivity at m, then c - b ln 10
        sens = min(1.0, max(1 / m, 2.0 - 1 / (0.5 + 1 / m)))
        return 2.0 - sens / 0.3 * math.log(10.0)

    assert release_threshold(**kw, assumed_min_count=50, min_count=70) == pytest.approx(t_prime(50))
    assert release_threshold(**kw, assumed_min_count=50, min_count=20) == pytest.approx(t_prime(20))
    assert release_threshold(**kw, assumed_min_count=None, min_count=70) == pytest.approx(
        t_prime(70)
    )
    assert t_prime(50) != pytest.approx(t_prime(70))
    assert (
        release_threshold(**kw | {"false_positive_rate": None}, assumed_min_count=50, min_count=70)
        == 2.0
    )
    # never above the stakeholders' threshold
    assert release_threshold(**kw | {"threshold": 1.2}, assumed_min_count=50, min_count=70) == 1.2


# ----------------------------------------------------------------------- condmean


def _group_ids(codes: np.ndarray, by: str | None) -> np.ndarray:
    if by is None:
        return np.zeros(len(codes), dtype=np.int64)
    if by == "mother_age":
        return MOTHER_AGE_GROUP[codes[:, 1]]
    if by == "parity":
        return PARITY_GROUP[codes[:, 2]]
    return codes[:, NAMES.index(by)]  # bins as groups (birth_month, birth_sex)


def _codes(transformer, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, s, n) for s in transformer.domain.sizes]).astype(
        np.int64
    )


def _pandas_table(t, r, transformer, column, group_by):
    """Per (by, group): sizes, means and medians by a plain pandas groupby."""
    out = {}
    for by in group_by:
        frames = [
            pd.DataFrame({"g": _group_ids(c, by), "x": numbers(c, transformer, column)})
            for c in (t, r)
        ]
        stats = [f.groupby("g")["x"].agg(["size", "mean", "median"]) for f in frames]
        out[by] = stats
    return out


def test_cond_mean_table_matches_a_pandas_groupby(transformer):
    t = _codes(transformer, 80, seed=4)
    r = _codes(transformer, 70, seed=5)
    r[:, 2] = np.where(r[:, 2] == 0, 1, r[:, 2])  # parity group "1" empty in D_R only
    t[:, 1] = np.where(t[:, 1] == 4, 3, t[:, 1])  # mother_age "30-34" empty in D_T only
    group_by = (None, "parity", "mother_age")
    with warnings.catch_warnings():  # an empty group is NaN, without a numpy warning
        warnings.simplefilter("error")
        table = cond_mean_table(t, r, transformer, "birth_weight", group_by)
    expected = _pandas_table(t, r, transformer, "birth_weight", group_by)
    labels = {
        None: ["all"],
        "parity": ["1", "2-3", ">3"],
        "mother_age": ["<25", "25-29", "30-34", ">34"],
    }
    assert [(g.by, g.group) for g in table] == [(by, lab) for by in group_by for lab in labels[by]]
    for g in table:
        v = labels[g.by].index(g.group)
        for side, st in zip(("original", "candidate"), expected[g.by], strict=True):
            size = getattr(g, f"size_{side}")
            mean, median = getattr(g, f"mean_{side}"), getattr(g, f"median_{side}")
            if v in st.index:
                assert size == st.loc[v, "size"]
                assert mean == pytest.approx(st.loc[v, "mean"], rel=1e-12)
                assert median == pytest.approx(st.loc[v, "median"], rel=1e-12)
            else:
                assert size == 0 and math.isnan(mean) and math.isnan(median)
        if g.size_original and g.size_candidate:
            assert g.error == pytest.approx(abs(g.mean_original - g.mean_candidate), rel=1e-12)
        else:
            assert math.isnan(g.error)
    empty = [(g.by, g.group) for g in table if not (g.size_original and g.size_candidate)]
    assert empty == [("parity", "1"), ("mother_age", "30-34")]


def test_cond_mean_error_skips_groups_empty_in_one_table(transformer):
    t = _codes(transformer, 80, seed=6)
    r = _codes(transformer, 80, seed=7)
    r[:, 2] = np.where(r[:, 2] == 0, 1, r[:, 2])  # parity group "1" empty in D_R only
    # "parity" first: its first group is the empty one (a NaN there would win the max)
    group_by = ("parity", None, "birth_month")
    expected = _pandas_table(t, r, transformer, "parity", group_by)
    errs = []
    for st_t, st_r in expected.values():
        both = st_t.index.intersection(st_r.index)
        errs += list((st_t.loc[both, "mean"] - st_r.loc[both, "mean"]).abs())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = cond_mean_error(t, r, transformer, "parity", group_by)
    assert np.isfinite(got) and got == pytest.approx(max(errs), rel=1e-12)


def test_cond_mean_error_without_a_common_group_is_refused(transformer):
    t = _rows(transformer, 3, parity=[0, 0, 0])
    r = _rows(transformer, 3, parity=[1, 2, 3])
    with pytest.raises(ValueError, match="no group of 'gestation_week' is non-empty"):
        cond_mean_error(t, r, transformer, "gestation_week", ("parity",))
    assert cond_mean_error(t, r, transformer, "gestation_week", ("parity", None)) == 0.0


def test_an_int_column_without_groups_groups_by_its_bins(transformer):
    assert transformer.spec.column("birth_month").groups == ()
    table, labels = group_index(transformer, "birth_month")
    assert table.tolist() == list(range(12))
    assert labels == tuple(str(m) for m in range(1, 13))
    t = _codes(transformer, 120, seed=8)
    r = _codes(transformer, 120, seed=9)
    st_t, st_r = _pandas_table(t, r, transformer, "birth_weight", ("birth_month",))["birth_month"]
    both = st_t.index.intersection(st_r.index)
    expected = (st_t.loc[both, "mean"] - st_r.loc[both, "mean"]).abs().max()
    got = cond_mean_error(t, r, transformer, "birth_weight", ("birth_month",))
    assert got == pytest.approx(expected, rel=1e-12)


def test_resized_means_with_257_groups():
    # 257 groups need uint16 codes (group 256 wraps to 0 in uint8). Each group keeps
    # its first row by priority; x equals the group id, so the means are 0..256.
    groups = np.arange(514) % 257
    means = _resized_means(
        groups.astype(float), groups, np.ones(257, dtype=np.int64), np.arange(514), mid=-1.0
    )
    assert means.tolist() == list(range(257))


def test_resized_needs_one_priority_per_row(transformer, tables):
    t, r = (f.to_numpy().astype(np.int64) for f in tables)
    with pytest.raises(ValueError, match=r"needs \|D_T\| = \|D_R\|"):
        resized_cond_mean_error(
            t,
            r,
            transformer,
            "birth_weight",
            (None,),
            priorities=np.zeros(len(t) - 1),
            margin_fraction=0.0,
            margin_plus=0,
        )


def test_resized_group_is_padded_with_the_midpoint(transformer):
    # Every row has birth weight code 6 (2000-2099, number 2049.5). D_R: 30 rows of
    # parity "2-3", 30 of ">3"; D_T: 10 and 50. Margin ceil(0.05 * 60) + 1 = 4, so
    # m = 26 for both groups: ">3" keeps 26 of its 50 rows (error 0), "2-3" has 10
    # rows and 16 pads at the midpoint (1400 + 4600) / 2 = 3000 of the bounds:
    # error 16/26 * (3000 - 2049.5).
    r = _rows(transformer, 60, parity=[1] * 30 + [2] * 30, birth_weight=6)
    t = _rows(transformer, 60, parity=[1] * 10 + [3] * 50, birth_weight=6)
    assert numbers(t[:1], transformer, "birth_weight").tolist() == [2049.5]
    pri = np.random.default_rng(1).random(60)
    got = resized_cond_mean_error(
        t, r, transformer, "birth_weight", ("parity",), priorities=pri,
        margin_fraction=0.05, margin_plus=1,
    )  # fmt: skip
    assert got[0] == pytest.approx(16 / 26 * (3000 - 2049.5), rel=1e-12) and got[1] == 26


def _brute_resized(t, r, transformer, column, group_by, *, pri, f, k_plus):
    """SPEC sec. 5 resize, row by row: keep the m_v rows of smallest (priority, row)."""
    n = len(t)
    lo, hi = transformer.spec.column(column).bounds
    mid = (lo + hi) / 2
    x_t, x_r = numbers(t, transformer, column), numbers(r, transformer, column)
    margin = math.ceil(f * n) + k_plus
    errs, sizes = [], []
    for by in group_by:
        g_t, g_r = _group_ids(t, by), _group_ids(r, by)
        for v in np.unique(g_r):
            s = int((g_r == v).sum())
            m = max(s - margin, 1)
            rows = sorted(np.flatnonzero(g_t == v), key=lambda i: (pri[i], i))[:m]
            vals = [float(x_t[i]) for i in rows] + [mid] * (m - len(rows))
            errs.append(abs(sum(vals) / m - float(x_r[g_r == v].mean())))
            sizes.append(m)
    return max(errs), min(sizes)


def test_resized_cond_mean_error_matches_a_brute_force(transformer):
    # n = 60, margin ceil(0.05 * 60) + 1 = 4. Parity groups of D_R: 1 row in "1"
    # (m = 1, D_T has 5: subsampled), 30 in "2-3" (m = 26, D_T has 10: padded with the
    # midpoint 3000), 29 in ">3" (m = 25, D_T has 45: subsampled); no grouping: m = 56.
    rng = np.random.default_rng(12)
    t = _codes(transformer, 60, seed=10)
    r = _codes(transformer, 60, seed=11)
    r[:, 2] = [0] + [1] * 30 + [2] * 29
    t[:, 2] = [0] * 5 + [1] * 10 + [4] * 45
    pri = rng.random(60)
    pri[[3, 7]] = pri[5]  # ties are broken by row position
    for column in ("birth_weight", "gestation_week"):
        got = resized_cond_mean_error(
            t,
            r,
            transformer,
            column,
            (None, "parity"),
            priorities=pri,
            margin_fraction=0.05,
            margin_plus=1,
        )
        want = _brute_resized(
            t, r, transformer, column, (None, "parity"), pri=pri, f=0.05, k_plus=1
        )
        assert got[0] == pytest.approx(want[0], rel=1e-12), column
        assert got[1] == want[1] == 1
    # Tied priorities (3 values over 200 rows): ties go by row position, so which rows
    # of a tie block are kept at the cut is fixed (numpy's default sort would not be).
    t2 = _codes(transformer, 200, seed=13)
    r2 = _codes(transformer, 200, seed=14)
    tied = np.random.default_rng(0).integers(0, 3, 200).astype(float)
    by = (None,)  # one big group: the cut (180 of 200 rows) falls inside a tie block
    got = resized_cond_mean_error(
        t2, r2, transformer, "birth_weight", by, priorities=tied, margin_fraction=0.1, margin_plus=0
    )
    want = _brute_resized(t2, r2, transformer, "birth_weight", by, pri=tied, f=0.1, k_plus=0)
    assert got[0] == pytest.approx(want[0], rel=1e-12) and got[1] == want[1]
    # without grouping only: m = 56, all D_T rows present; margins 0 keep every row
    got = resized_cond_mean_error(
        t,
        r,
        transformer,
        "birth_weight",
        (None,),
        priorities=pri,
        margin_fraction=0.0,
        margin_plus=0,
    )
    want = _brute_resized(t, r, transformer, "birth_weight", (None,), pri=pri, f=0.0, k_plus=0)
    assert got == (pytest.approx(want[0], rel=1e-12), 60)


# ------------------------------------------------------------------------ marginals


def test_marginals_need_two_non_empty_tables():
    t = np.array([[0, 1], [1, 0]])
    for a, b in ((t, t[:0]), (t[:0], t)):
        with pytest.raises(ValueError, match="non-empty"):
            marginal_errors(a, b, (2, 2))
        with pytest.raises(ValueError, match="non-empty"):
            worst_marginal_cells(a, b, (2, 2), k=1)
    assert marginal_errors(t[:1], t[:1], (2, 2)) == {(0,): 0.0, (1,): 0.0, (0, 1): 0.0}


def test_dense_marginal_at_exactly_dense_cells(monkeypatch):
    # A marginal of exactly DENSE_CELLS cells is dense: every cell comes back, also the
    # zero-error cell (1, 1) that holds no row (the sparse path only has occupied cells).
    from synthflow.criteria import marginals

    monkeypatch.setattr(marginals, "DENSE_CELLS", 4)
    t = np.array([[0, 0], [0, 1]])
    r = np.array([[0, 0], [1, 0]])
    p, q, occupied = _subset_table(t, r, (2, 2), (0, 1))
    assert occupied is None and p.tolist() == [0.5, 0.5, 0, 0] and q.tolist() == [0.5, 0, 0.5, 0]
    cells = worst_marginal_cells(t, r, (2, 2), k=2, top=4)
    assert len(cells) == 4 and cells[-1].error == 0.0


def test_cell_keys_past_int64_do_not_collide():
    # 20 columns of 10 bins (10**20 cells): the digits of 2**64 wrap to key 0 in int64.
    a = np.array([[int(ch) for ch in str(2**64)]])
    b = np.zeros((1, 20), dtype=np.int64)
    full = tuple(range(20))
    assert marginal_errors(a, b, [10] * 20, [full]) == {full: 1.0}
    cells = worst_marginal_cells(a, b, [10] * 20, k=20, top=2, subsets=[full])
    assert sorted(c.cell for c in cells) == [tuple([0] * 20), tuple(a[0])]


def test_the_cube_is_not_built_past_dense_cells():
    # Two columns of 4096 x 2048 bins (8M cells > DENSE_CELLS = 4M) form a whole
    # lattice; its cube would hold 2 x 8M int64 counts (128 MB). The per-marginal
    # paths need well under 16 MB (two 1-way bincounts, the 2-way one sparse).
    rng = np.random.default_rng(3)
    sizes = (4096, 2048)
    t = np.column_stack([rng.integers(0, s, 200) for s in sizes])
    r = np.column_stack([rng.integers(0, s, 200) for s in sizes])
    tracemalloc.start()
    try:
        errs = marginal_errors(t, r, sizes)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, peak
    # independent values: per-column histograms, and the 2-way cells by row tuples
    for j in (0, 1):
        h_t, h_r = (np.bincount(c[:, j], minlength=sizes[j]) for c in (t, r))
        want = np.abs(h_t - h_r).max() / 200
        assert errs[(j,)] == pytest.approx(want)
    ct = pd.Series(1, index=pd.MultiIndex.from_arrays(t.T)).groupby(level=[0, 1]).sum()
    cr = pd.Series(1, index=pd.MultiIndex.from_arrays(r.T)).groupby(level=[0, 1]).sum()
    diff = ct.sub(cr, fill_value=0).abs().max() / 200
    assert errs[(0, 1)] == pytest.approx(diff)


def test_whole_lattice_and_union():
    # The cube path is taken only for every non-empty subset of the union (2^d - 1).
    assert _union([(0, 2), (2, 3)]) == (0, 2, 3) and _union([]) == ()
    assert _whole_lattice(marginal_subsets(3))
    assert _whole_lattice([(1,), (4,), (1, 4)])
    assert not _whole_lattice(marginal_subsets(3, max_order=2))  # 6 of 7
    assert not _whole_lattice([*marginal_subsets(3), (3,)])  # 8 subsets over 4 columns
    assert not _whole_lattice([(0,), (1,)])  # 2 of 3


def test_worst_cells_default_to_ten():
    t = np.repeat(np.arange(30), 2)[:, None]
    r = np.repeat(np.arange(3), 20)[:, None]
    assert len(worst_marginal_cells(t, r, (30,), k=1)) == 10


def test_marginal_shares_dense_and_sparse(monkeypatch):
    # 2 x 2 marginal: D_T rows (0,0), (1,1), (1,1); D_R rows (0,0), (1,0). Dense: all
    # 4 cells in key order (0,0), (0,1), (1,0), (1,1). Sparse: only the 3 occupied
    # cells, in the same key order, the same cells for both tables.
    from synthflow.criteria import marginals

    t = np.array([[0, 0], [1, 1], [1, 1]])
    r = np.array([[0, 0], [1, 0]])
    p, q = marginal_shares(t, r, (2, 2), (0, 1))
    assert p.tolist() == pytest.approx([1 / 3, 0, 0, 2 / 3])
    assert q.tolist() == pytest.approx([1 / 2, 0, 1 / 2, 0])
    p, q = marginal_shares(t, r, (2, 2), (1,))
    assert p.tolist() == pytest.approx([1 / 3, 2 / 3]) and q.tolist() == pytest.approx([1, 0])
    monkeypatch.setattr(marginals, "DENSE_CELLS", 2)
    p, q = marginal_shares(t, r, (2, 2), (0, 1))
    assert p.tolist() == pytest.approx([1 / 3, 0, 2 / 3])
    assert q.tolist() == pytest.approx([1 / 2, 1 / 2, 0])
    for a, b in ((t, t[:0]), (t[:0], t)):
        with pytest.raises(ValueError, match="non-empty"):
            marginal_shares(a, b, (2, 2), (0, 1))


def test_marginal_max_abs_error_keeps_to_its_subsets():
    # 1-way marginals agree exactly; the 2-way marginal differs by 0.5 in every cell.
    t = np.array([[0, 0], [1, 1]])
    r = np.array([[0, 1], [1, 0]])
    one_way = marginal_subsets(2, max_order=1)
    assert marginal_max_abs_error(t, r, (2, 2), subsets=one_way) == 0.0
    assert marginal_max_abs_error(t, r, (2, 2)) == 0.5
    assert marginal_max_abs_error(t, r, (2, 2), subsets=[(0, 1)]) == 0.5


def test_marginal_sensitivity_of_one_record():
    assert marginal_sensitivity(1) == 1.0
    assert marginal_sensitivity(4) == 0.25
    with pytest.raises(ValueError, match="must be >= 1"):
        marginal_sensitivity(0)


def test_worst_cells_keep_to_the_given_subsets():
    # The largest 2-way error is in columns (1, 2); restricted to (0, 1), only cells of
    # (0, 1) come back.
    t = np.array([[0, 0, 0], [0, 1, 1], [1, 2, 2]])
    r = np.array([[0, 0, 1], [0, 1, 2], [1, 2, 0]])
    everywhere = worst_marginal_cells(t, r, (3, 3, 3), k=2, top=3)
    assert {c.columns for c in everywhere} <= {(0, 2), (1, 2)}
    assert [c.error for c in everywhere] == pytest.approx([1 / 3] * 3)
    cells = worst_marginal_cells(t, r, (3, 3, 3), k=2, top=3, subsets=[(0, 1)])
    assert cells and all(c.columns == (0, 1) for c in cells)
    assert all(c.error == 0.0 for c in cells)


def test_worst_cells_are_ranked_by_the_difference():
    # Bin 0 holds half of each table (error 0, the largest p + q); bins 1-10 are D_T's
    # other half, bins 11-20 D_R's (error 3/60 each). The top 3 are bins 1, 2, 3.
    t = np.array([[0]] * 30 + [[b] for b in range(1, 11) for _ in range(3)])
    r = np.array([[0]] * 30 + [[b] for b in range(11, 21) for _ in range(3)])
    cells = worst_marginal_cells(t, r, (21,), k=1, top=3)
    assert [c.cell for c in cells] == [(1,), (2,), (3,)]
    assert [c.error for c in cells] == pytest.approx([3 / 60] * 3)
    assert [(c.original, c.candidate) for c in cells] == pytest.approx([(0.05, 0.0)] * 3)


def test_tied_worst_cells_keep_the_lowest_bins():
    # 88 bins of D_T hold 1 or 2 rows in a random pattern, D_R one row in bin 88: after
    # bin 88 (error ~1), the bins with 2 rows tie for the next error. A stable ranking
    # keeps the lowest such bins; numpy's default (introsort / SIMD) sort of this array
    # does not (it returns bins 3, 5, 6, 7, 8 here).
    counts = np.random.default_rng(0).choice([2, 1], size=88)
    t = np.repeat(np.arange(88), counts)[:, None]
    r = np.array([[88]])
    cells = worst_marginal_cells(t, r, (89,), k=1, top=6)
    twos = np.flatnonzero(counts == 2)[:5]
    assert [c.cell for c in cells] == [(88,)] + [(int(b),) for b in twos]


# ------------------------------------------------------------ dp: the Laplace releases

LAPLACE = (
    "marginal_max_abs_error",
    "one_way_max_ratio",
    "cond_mean_error_parity",
    "cond_mean_error_birth_weight",
    "cond_mean_error_gestation_week",
    "regression_tstr_mae_error",
    "faithfulness_unmatched",
)


def test_each_laplace_release_records_its_statistic_and_mechanism(spec, transformer, tables):
    # Every criterion at epsilon 1e9: the Laplace noise (sd sqrt(2) * sensitivity / 1e9,
    # sensitivities <= 32) is below 1e-7, so the release equals its statistic to 1e-6,
    # and the statistic is the exact value except for the resized conditional means (and
    # TSTR, whose model is the DP fit of D_T, not D_T's OLS: 4e-5 relative apart here,
    # hence rel=1e-3 there as in test_mutation_gaps.py).
    big = dataclasses.replace(
        spec, criteria=tuple(dataclasses.replace(c, epsilon=1e9) for c in spec.criteria)
    )
    both = evaluate_exact_and_noisy(
        big, transformer, *tables, rng=PrivacyRNG.from_seed(4), ledger=Ledger(total_epsilon=1e10)
    )
    assert set(LAPLACE) | {"regression_coef_error"} == {c.name for c in big.criteria}
    for name in LAPLACE:
        noisy = both.noisy.criterion(name)
        statistic = both.planning[name]["statistic"]
        assert noisy.mechanism == "laplace", name
        assert isinstance(statistic, float) and np.isfinite(statistic), name
        assert noisy.value == pytest.approx(statistic, abs=1e-6), name
        if not name.startswith("cond_mean"):
            rel = 1e-3 if name.startswith("regression") else 1e-9
            assert statistic == pytest.approx(both.exact.criterion(name).value, rel=rel), name
    assert both.noisy.criterion("regression_coef_error").mechanism == "functional"


# ------------------------------------------------------------ dp: the coefficient release


def test_coefficient_release_fields_with_a_once_per_release_fit(spec, transformer, tables):
    ledger = Ledger(total_epsilon=10.0)
    rng = PrivacyRNG.from_seed(21)
    fit = fit_dp_regression(spec, transformer, tables[0], ledger=ledger, rng=rng)
    report = evaluate(
        spec, transformer, *tables, exact=False, ledger=ledger, rng=rng, released_once=fit
    )
    coef = report.criterion("regression_coef_error")
    c = spec.criterion("regression_coef_error")
    assert coef.mechanism == "functional (fit once per release)" and coef.epsilon == 0.0
    assert coef.threshold == c.threshold
    assert coef.noise_sd == fit.noise_sd and coef.sensitivity == fit.sensitivity
    assert coef.public["n"] == 400
    assert coef.public["dp_fit"] == {"intercept": fit.model.intercept, "coef": list(fit.model.coef)}
    # D_R's OLS by numpy: the regression's numerified features of the candidate
    r_codes = tables[1].to_numpy().astype(np.int64)
    feats = np.column_stack([numbers(r_codes, transformer, f) for f in c.features])
    y = numbers(r_codes, transformer, c.column)
    w, *_ = np.linalg.lstsq(np.column_stack([np.ones(len(y)), feats]), y, rcond=None)
    ols = coef.public["candidate_ols"]
    assert set(ols) == {"intercept", "coef"}
    assert ols["intercept"] == pytest.approx(w[0], rel=1e-9)
    assert ols["coef"] == pytest.approx(list(w[1:]), rel=1e-9, abs=1e-9)
    std = coef.public["candidate_standardization"]
    assert isinstance(std, dict) and std
    # No second charge for the coefficients, one for the fit.
    whats = [ch.what for ch in ledger.charges]
    assert sum("functional-mechanism fit" in w for w in whats) == 1
    assert "acceptance regression_coef_error: functional-mechanism fit (once per release)" in whats


def test_coefficient_release_fields_when_charged_here(spec, transformer, tables):
    ledger = Ledger(total_epsilon=10.0)
    report = evaluate(
        spec, transformer, *tables, exact=False, ledger=ledger, rng=PrivacyRNG.from_seed(22)
    )
    coef = report.criterion("regression_coef_error")
    c = spec.criterion("regression_coef_error")
    assert coef.mechanism == "functional" and coef.epsilon == c.epsilon
    assert coef.threshold == c.threshold
    (charge,) = [ch for ch in ledger.charges if "functional-mechanism" in ch.what]
    assert charge.what == "acceptance regression_coef_error: functional-mechanism fit"
    assert charge.epsilon == c.epsilon
    assert coef.sensitivity == pytest.approx(charge.sensitivity)
    assert set(coef.public["dp_fit"]) == {"intercept", "coef"}
    assert len(coef.public["dp_fit"]["coef"]) == len(c.features)
    assert coef.noise_sd > 0

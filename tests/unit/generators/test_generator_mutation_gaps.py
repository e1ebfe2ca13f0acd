"""Gaps mutmut found in ``PrivBayes.fit`` and ``MWEM.fit`` (benchmarks/mutmut_report.md).

What these check, and the selection missed: what PrivBayes charges on 1- and 2-column
domains and at the documented minimum of 2 rows, the sensitivities its charges record,
that its conditional tables are read off the noisy joints in the right axis order; what
MWEM learns, how it selects (exponential mechanism of sensitivity 1 on the errors
``|q(A) - q(D)|``), that each measured query's target is the clipped mean of its noisy
measurements, when its final sweeps stop, the floor of its cells; and the code of
``MWEM.fit`` that only PEP runs (the 1-way marginals, the bands).

The MWEM/PEP tests spy on the real components (the privacy samplers and
``RangeQueries.fit_group``): every call goes through to the real one and is recorded,
so the fit runs unchanged. Every test name contains ``privbayes`` or ``mwem``, so the
mutation run's ``-k "privbayes or mwem"`` selects them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from synthflow.errors import BudgetExceededError
from synthflow.generators import make_generator
from synthflow.generators.mwem import RangeQueries, _cube
from synthflow.generators.privbayes import mi_sensitivity
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Domain

# ----------------------------------------------------------------------------- PrivBayes

PB_HP = {"flavor": "degree", "epsilon_split": 0.3, "degree": 1}


def _charges(ledger: Ledger) -> list[tuple[str, float, float | None]]:
    return [(c.mechanism, c.epsilon, c.sensitivity) for c in ledger.charges]


def test_privbayes_fits_the_documented_minimum_of_two_rows():
    domain = Domain(names=("a", "b"), sizes=(2, 3))
    data = pd.DataFrame({"a": [0, 1], "b": [2, 0]}).astype(np.int16)
    ledger = Ledger(total_epsilon=1.0)
    gen = make_generator("privbayes", PB_HP, epsilon=1.0)
    assert gen.fit(data, domain=domain, ledger=ledger, rng=PrivacyRNG.from_seed(0)) is gen
    assert ledger.spent_epsilon == pytest.approx(1.0)


def test_privbayes_on_one_column_spends_everything_on_its_one_table():
    # No structure to learn: no structure charge, the whole epsilon on the histogram.
    domain = Domain(names=("a",), sizes=(4,))
    data = pd.DataFrame({"a": np.arange(200) % 4}).astype(np.int16)
    ledger = Ledger(total_epsilon=1.0)
    gen = make_generator("privbayes", PB_HP, epsilon=1.0)
    gen.fit(data, domain=domain, ledger=ledger, rng=PrivacyRNG.from_seed(0))
    assert _charges(ledger) == [("laplace", 1.0, 2.0)]


def test_privbayes_on_two_columns_charges_both_steps_to_a_ledger_file(tmp_path):
    # d = 2 is the smallest domain with a structure step: epsilon_split of the budget
    # for it (exponential mechanism, mutual information's sensitivity for non-binary
    # tables, the larger of the two), the rest for the tables (L1 sensitivity 2). The
    # file must stay readable (every charge has a text 'what').
    domain = Domain(names=("a", "b"), sizes=(3, 4))
    g = np.random.default_rng(1)
    a = g.integers(0, 3, 300)
    data = pd.DataFrame({"a": a, "b": (a + g.integers(0, 2, 300)) % 4}).astype(np.int16)
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(total_epsilon=1.0, path=path)
    gen = make_generator("privbayes", PB_HP, epsilon=1.0)
    gen.fit(data, domain=domain, ledger=ledger, rng=PrivacyRNG.from_seed(2))
    expected = [
        ("exponential", pytest.approx(0.3), mi_sensitivity(300, binary=False)),
        ("laplace", pytest.approx(0.7), 2.0),
    ]
    assert _charges(ledger) == expected
    reread = Ledger(total_epsilon=1.0, path=path)
    assert _charges(reread) == expected
    assert all(c.what.startswith("privbayes ") for c in reread.charges)


def test_privbayes_conditionals_are_the_datas_at_negligible_noise():
    # epsilon 1e6: each noisy count is off by about 2 m / (0.7e6) < 1e-5 (m <= 3 tables),
    # and every parent configuration holds >= 30 rows, so each conditional row is the
    # data's to within 1e-6; 1e-4 is a wide margin. The network of this seed has a child
    # whose parent comes earlier in the column order, where the joint's axes must be
    # transposed (a reversed transposition scrambles the table silently).
    domain = Domain(names=("a", "b", "c"), sizes=(3, 2, 4))
    g = np.random.default_rng(3)
    n = 3000
    a = g.choice(3, n, p=[0.5, 0.3, 0.2])
    b = (g.random(n) < np.array([0.2, 0.5, 0.8])[a]).astype(int)
    c = (a + 2 * b + g.choice(3, n, p=[0.6, 0.3, 0.1])) % 4
    data = pd.DataFrame({"a": a, "b": b, "c": c}).astype(np.int16)
    gen = make_generator("privbayes", {**PB_HP, "degree": 2}, epsilon=1e6)
    gen.fit(data, domain=domain, ledger=Ledger(total_epsilon=1e6), rng=PrivacyRNG.from_seed(0))
    assert any(p < x for x, parents in gen.network_ for p in parents)
    cols = [data[name].to_numpy() for name in domain.names]
    for (x, parents), table in zip(gen.network_, gen.conditionals_, strict=True):
        key = np.zeros(n, dtype=np.int64)
        for p in parents:  # first parent most significant, as the model encodes them
            key = key * domain.sizes[p] + cols[p]
        rows = int(np.prod([domain.sizes[p] for p in parents]))
        counts = np.zeros((rows, domain.sizes[x]))
        np.add.at(counts, (key, cols[x]), 1)
        assert counts.sum(axis=1).min() >= 30
        assert table == pytest.approx(counts / counts.sum(axis=1, keepdims=True), abs=1e-4)


# ----------------------------------------------------------------------------- MWEM / PEP


@dataclass
class _FitCall:
    queries: RangeQueries
    targets: np.ndarray
    measured: np.ndarray
    total: float
    sweeps: int
    band: float
    worst: float


@dataclass
class _Spy:
    selections: list  # (utilities, sensitivity, epsilon, chosen index)
    laplace: list  # (values, sensitivity, epsilon, output)
    fits: list  # _FitCall, in call order


def _spy(monkeypatch) -> _Spy:
    """Record every privacy-sampler and fit_group call; the real ones still run."""
    spy = _Spy([], [], [])
    real_exp = PrivacyRNG.exponential_mechanism
    real_laplace = PrivacyRNG.laplace
    real_fit = RangeQueries.fit_group

    def exponential_mechanism(self, utilities, *, sensitivity, epsilon):
        q = real_exp(self, utilities, sensitivity=sensitivity, epsilon=epsilon)
        spy.selections.append((np.array(utilities, dtype=float), sensitivity, epsilon, q))
        return q

    def laplace(self, values, *, sensitivity, epsilon):
        out = real_laplace(self, values, sensitivity=sensitivity, epsilon=epsilon)
        spy.laplace.append((np.array(values, dtype=float), sensitivity, epsilon, np.array(out)))
        return out

    def fit_group(self, cube, g, targets, measured, total, *, sweeps=1, band=0.0):  # noqa: PLR0917  (the real signature)
        before = (targets.copy(), measured.copy())
        worst = real_fit(self, cube, g, targets, measured, total, sweeps=sweeps, band=band)
        spy.fits.append(_FitCall(self, *before, total, sweeps, band, worst))
        return worst

    monkeypatch.setattr(PrivacyRNG, "exponential_mechanism", exponential_mechanism)
    monkeypatch.setattr(PrivacyRNG, "laplace", laplace)
    monkeypatch.setattr(RangeQueries, "fit_group", fit_group)
    return spy


def _frame(domain: Domain, columns: list[np.ndarray]) -> pd.DataFrame:
    return pd.DataFrame(dict(zip(domain.names, columns, strict=True))).astype(np.int16)


MW_DOMAIN = Domain(names=("a", "b"), sizes=(3, 4))


def _mwem_data() -> pd.DataFrame:
    # 200 rows, a = 2 never occurs and b depends on a: some ranges are empty (their noisy
    # measurements fall below 0) and some hold nearly every row (theirs exceed n).
    g = np.random.default_rng(0)
    a = g.choice(3, 200, p=[0.6, 0.4, 0.0])
    b = np.where(a == 0, g.choice(4, 200, p=[0.5, 0.5, 0, 0]), g.choice(4, 200, p=[0, 0, 0.3, 0.7]))
    return _frame(MW_DOMAIN, [a, b])


def _final_sweeps(fits: list[_FitCall], workload: RangeQueries, n_rounds: int, d_ones: int):
    """The final loop's sweeps: (workload calls, 1-way calls) per sweep.

    Each round fits the selected query's group (then, for PEP, every 1-way group); each
    final sweep fits every measured group, then (PEP) every 1-way group.
    """
    final = fits[n_rounds * (1 + d_ones) :]
    measured = final[0].measured
    per_sweep = len(np.unique(workload.group[measured])) + d_ones
    assert len(final) % per_sweep == 0
    return [
        (final[i : i + per_sweep - d_ones], final[i + per_sweep - d_ones : i + per_sweep])
        for i in range(0, len(final), per_sweep)
    ]


@pytest.mark.parametrize(("epsilon", "seed"), [(1.0, 1), (2.0, 1)])
def test_mwem_targets_are_the_clipped_means_of_the_noisy_measurements(monkeypatch, epsilon, seed):
    n_rounds, inner = 20, 6
    hp = {"num_query": 12, "num_iterations": n_rounds, "num_inner_updates": inner,
          "max_query_columns": 2}  # fmt: skip
    data = _mwem_data()
    n = len(data)
    spy = _spy(monkeypatch)
    gen = make_generator("mwem", hp, epsilon=epsilon)
    fitted = gen.fit(data, domain=MW_DOMAIN, ledger=Ledger(total_epsilon=epsilon),
                     rng=PrivacyRNG.from_seed(seed))  # fmt: skip
    assert fitted is gen and gen.probabilities_.sum() == pytest.approx(1.0)
    workload = spy.fits[0].queries
    true = workload.answer(_cube(data, MW_DOMAIN))
    ((zeros, sens, eps_noise, offsets),) = spy.laplace  # the T measurement noises, drawn first
    eps_half = epsilon / n_rounds / 2
    assert (sens, eps_noise, len(zeros)) == (1.0, pytest.approx(eps_half), n_rounds)
    # Selection: the exponential mechanism on |q(A) - q(D)| with sensitivity 1 and half
    # a round's budget; the first round's model is the uniform cube of total n.
    assert len(spy.selections) == n_rounds
    assert all(s[1:3] == (1.0, pytest.approx(eps_half)) for s in spy.selections)
    uniform = np.full(MW_DOMAIN.sizes, n / MW_DOMAIN.cells)
    assert spy.selections[0][0] == pytest.approx(np.abs(workload.answer(uniform) - true))
    # Measurement: each round's target of query q is the mean of q's noisy counts so far,
    # clipped to [0, n]; the round fits q's group with num_inner_updates sweeps.
    raw: dict[int, list[float]] = {}
    for t, (call, selection) in enumerate(zip(spy.fits[:n_rounds], spy.selections, strict=True)):
        q = selection[3]
        raw.setdefault(q, []).append(true[q] + offsets[t])
        expected = {k: float(np.clip(np.mean(v), 0, n)) for k, v in raw.items()}
        assert set(np.flatnonzero(call.measured)) == set(expected)
        assert call.targets[sorted(expected)] == pytest.approx(
            [expected[k] for k in sorted(expected)], rel=1e-12, abs=1e-9
        )
        assert (call.sweeps, call.band, call.total) == (inner, 0.0, n)
    # This seed measures some query twice and clips below 0 and above n: the averaging
    # and both clips are exercised.
    means = [np.mean(v) for v in raw.values()]
    assert max(len(v) for v in raw.values()) >= 2 and min(means) < 0 and max(means) > n
    # Final sweeps over every measured group, one sweep each call; they stop after the
    # first sweep whose largest miss is within half a Laplace scale of one measurement
    # (0.5 / (epsilon / 2T)), else after num_inner_updates sweeps.
    sweeps = _final_sweeps(spy.fits, workload, n_rounds, 0)
    tolerance = 0.5 / eps_half
    misses = [max(c.worst for c in work) for work, _ in sweeps]
    stop = next((i + 1 for i, m in enumerate(misses) if m <= tolerance), inner)
    assert len(sweeps) == stop
    for work, _ in sweeps:
        assert all((c.sweeps, c.band) == (1, 0.0) for c in work)
        assert all(np.array_equal(c.targets, spy.fits[n_rounds - 1].targets) for c in work)
    # The stop rule is exercised near its threshold (a miss within [tol/4, tol] that
    # stops, or one within (tol, 1.5 tol] that goes on).
    near = [m for m in misses[:stop] if tolerance / 4 < m <= 1.5 * tolerance]
    assert near, misses


def test_mwem_learns_the_workload_at_negligible_noise(monkeypatch):
    # epsilon 1e6: noises of scale 2T/epsilon < 1e-4 counts. Selection then takes the
    # worst query, so every query still off gets measured (T = 3 x the workload) and
    # fitted; the model's answers to the whole workload must match the data's. 3 of 2000
    # rows is 0.15%: the +1 smoothing of the projections leaves misses of about 1 count
    # at this many sweeps (0.004-3.6 counts over seeds 0-2).
    domain = Domain(names=("a", "b"), sizes=(4, 4))
    p = np.array([[0.30, 0.05, 0, 0], [0.05, 0.20, 0.05, 0], [0, 0.05, 0.10, 0.05],
                  [0, 0, 0.05, 0.10]])  # fmt: skip
    flat = np.random.default_rng(0).choice(16, 2000, p=(p / p.sum()).ravel())
    data = _frame(domain, [flat // 4, flat % 4])
    hp = {"num_query": 8, "num_iterations": 24, "num_inner_updates": 10, "max_query_columns": 2}
    spy = _spy(monkeypatch)
    for seed in range(3):
        gen = make_generator("mwem", hp, epsilon=1e6)
        first = len(spy.fits)
        gen.fit(data, domain=domain, ledger=Ledger(total_epsilon=1e6),
                rng=PrivacyRNG.from_seed(seed))  # fmt: skip
        workload = spy.fits[first].queries
        learned = workload.answer(gen.probabilities_.reshape(domain.sizes) * 2000)
        true = workload.answer(_cube(data, domain))
        assert np.abs(learned - true).max() <= 5.0, seed


def test_mwem_cells_ruled_out_sit_at_the_documented_floor():
    # All 100000 rows in one cell: the measured ranges that exclude it drive the cells
    # outside them down by about 1/n per projection, below the floor of 1e-9 of the
    # uniform cell count, which keeps them finite. So the smallest probability is the
    # floor's, 1e-9 / cells (the last rescaling moves it by < 1e-9 relatively).
    domain = Domain(names=("a", "b"), sizes=(10, 10))
    data = _frame(domain, [np.zeros(100_000, int), np.zeros(100_000, int)])
    hp = {"num_query": 16, "num_iterations": 10, "num_inner_updates": 3, "max_query_columns": 2}
    gen = make_generator("mwem", hp, epsilon=1e6)
    gen.fit(data, domain=domain, ledger=Ledger(total_epsilon=1e6), rng=PrivacyRNG.from_seed(0))
    assert gen.probabilities_.min() == pytest.approx(1e-9 / domain.cells, rel=1e-6)


@pytest.mark.parametrize("name", ["mwem", "pep"])
def test_mwem_and_pep_charge_their_shares_to_a_ledger_file_that_reopens(tmp_path, name):
    # MWEM: half of epsilon for the selections (exponential, sensitivity 1), half for the
    # measurements (Laplace, sensitivity 1). PEP: a tenth first for the 1-way marginals
    # (Laplace, L1 sensitivity 2), then MWEM's halves of the rest. Nothing more: the
    # ledger's total is epsilon.
    domain = Domain(names=("a", "b", "c"), sizes=(3, 4, 2))
    g = np.random.default_rng(0)
    data = _frame(domain, [g.integers(0, s, 300) for s in domain.sizes])
    hp = {"num_query": 32, "num_iterations": 10, "num_inner_updates": 3}
    hp |= {"marginal": 2} if name == "pep" else {"max_query_columns": 2}
    path = tmp_path / "ledger.jsonl"
    gen = make_generator(name, hp, epsilon=2.0)
    gen.fit(data, domain=domain, ledger=Ledger(total_epsilon=2.0, path=path),
            rng=PrivacyRNG.from_seed(0))  # fmt: skip
    rounds = 2.0 if name == "mwem" else 1.8
    expected = [("exponential", pytest.approx(rounds / 2), 1.0),
                ("laplace", pytest.approx(rounds / 2), 1.0)]  # fmt: skip
    if name == "pep":
        expected.insert(0, ("laplace", pytest.approx(0.2), 2.0))
    reread = Ledger(total_epsilon=2.0, path=path)
    assert _charges(reread) == expected
    assert all(c.what.startswith(f"{name} ") for c in reread.charges)
    assert all(json.loads(line)["what"] for line in path.read_text().splitlines())
    with pytest.raises(BudgetExceededError):  # a second fit: nothing is left
        gen.fit(data, domain=domain, ledger=reread, rng=PrivacyRNG.from_seed(0))


PEP_CASES = {
    # (sizes, epsilon, seed): the 1-way misses keep the first two final sweeps going
    # although the workload is within its band, then both are met (an early stop).
    "ones-hold-the-stop": ((3, 3), 0.2, 3),
    # the workload misses its band while the 1-way cells are met: no stop at all.
    "workload-holds-the-stop": ((2, 2), 0.2, 0),
}


@pytest.mark.parametrize("case", sorted(PEP_CASES))
def test_mwem_code_run_by_pep_the_one_way_marginals_and_the_bands(monkeypatch, case):
    sizes, epsilon, seed = PEP_CASES[case]
    domain = Domain(names=("a", "b"), sizes=sizes)
    g = np.random.default_rng(0)
    a = g.choice(sizes[0], 300)
    data = _frame(domain, [a, (a + (g.random(300) < 0.3)) % sizes[1]])
    n_rounds, inner, d = 4, 4, 2
    hp = {"num_query": 8, "num_iterations": n_rounds, "num_inner_updates": inner, "marginal": 2}
    spy = _spy(monkeypatch)
    gen = make_generator("pep", hp, epsilon=epsilon)
    fitted = gen.fit(data, domain=domain, ledger=Ledger(total_epsilon=epsilon),
                     rng=PrivacyRNG.from_seed(seed))  # fmt: skip
    assert fitted is gen and gen.probabilities_.sum() == pytest.approx(1.0)
    # The 1-way histograms are measured first, each with a d-th of the tenth.
    values, sens, eps_one, _ = spy.laplace[0]
    assert (len(values), sens, eps_one) == (sum(sizes), 2.0, pytest.approx(0.1 * epsilon / d))
    one_way_scale = 2.0 * d / (0.1 * epsilon)  # Laplace scale of a 1-way cell
    round_scale = 1.0 / (0.9 * epsilon / n_rounds / 2)  # of one measurement
    workload = spy.fits[0].queries
    ones = [c for c in spy.fits if c.queries is not workload]
    assert ones and all(c.queries.groups == [(0,), (1,)] for c in ones)
    # Every round projects onto its query's band (half a Laplace scale, in
    # num_inner_updates sweeps), then onto every 1-way cell's band (half its scale).
    for t in range(n_rounds):
        call, *one_calls = spy.fits[t * (1 + d) : (t + 1) * (1 + d)]
        assert call.queries is workload
        assert (call.sweeps, call.band) == (inner, pytest.approx(0.5 * round_scale))
        assert [c.band for c in one_calls] == [pytest.approx(0.5 * one_way_scale)] * d
    # The final sweeps stop after the first sweep in which every measured query is
    # within half a Laplace scale of its band's edge and every 1-way cell within half
    # its scale of its band's edge; else after num_inner_updates sweeps.
    sweeps = _final_sweeps(spy.fits, workload, n_rounds, d)
    done = [
        max(c.worst for c in work) <= 0.5 * round_scale + 0.5 * round_scale
        and max(c.worst for c in one) <= (0.5 + 0.5) * one_way_scale
        for work, one in sweeps
    ]
    stop = next((i + 1 for i, ok in enumerate(done) if ok), inner)
    assert len(sweeps) == stop
    for work, one in sweeps:
        assert all(c.band == pytest.approx(0.5 * round_scale) for c in work)
        assert all(c.band == pytest.approx(0.5 * one_way_scale) for c in one)
    # What each case exercises (so that the rule above is tested on both sides).
    work_ok = [max(c.worst for c in w) <= round_scale for w, _ in sweeps]
    one_ok = [max(c.worst for c in o) <= one_way_scale for _, o in sweeps]
    if case == "ones-hold-the-stop":
        assert stop < inner and work_ok[0] and not one_ok[0]
        assert max(c.worst for c in sweeps[0][1]) <= 2 * one_way_scale
        assert max(c.worst for c in sweeps[-1][0]) > 0 and max(c.worst for c in sweeps[-1][1]) > 0
    else:
        assert stop == inner and one_ok[0] and not work_ok[0]

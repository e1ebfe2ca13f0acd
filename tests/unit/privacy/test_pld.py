"""The exact accountant (synthflow.privacy.pld) against independent figures.

- a discrete Gaussian's PLD is dp_accounting's own (the vectorised form is a speed-up);
- at a large sigma it matches the analytic Gaussian formula (Balle and Wang 2018);
- epsilon-DP mechanisms alone never cost more than basic composition;
- every figure is an upper bound: never below the optimistic PLD of the same mechanisms;
- the shifts a neighbour causes are what the mechanisms declare (neighbouring datasets).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import pld_pmf
from dp_accounting.pld import privacy_loss_distribution as dpl
from scipy import optimize, stats

from synthflow.privacy import pld
from synthflow.privacy.pld import Mechanism


@pytest.mark.parametrize(
    ("sigma", "k"),
    # point by point (few points): (3, 1) .. (2.5, 5); bucket by bucket (fewer grid steps
    # than points, as at the fit's sigma): (1000, 50) .. (4000, 1500)
    [
        *[(3.0, 1), (16.09, 1), (50.0, 7), (500.0, 70), (2.5, 5)],
        *[(1000.0, 50), (1000.0, 99), (3000.0, 400), (5000.0, 1), (4000.0, 1500)],
    ],
)
def test_discrete_gaussian_pld_is_dp_accountings(sigma: float, k: int) -> None:
    """The library's PMF; by buckets, a point whose loss lies exactly on the grid may go
    one step up (never down), so at most one grid step (1e-4) above, never below."""
    ours = pld.discrete_gaussian_pld(sigma, k)
    theirs = dpl.from_discrete_gaussian_mechanism(sigma, sensitivity=k)
    for delta in (1e-3, 1e-6, 1e-9):
        gap = ours.get_epsilon_for_delta(delta) - theirs.get_epsilon_for_delta(delta)
        assert -1e-9 <= gap <= pld.DISCRETIZATION


def analytic_gaussian_epsilon(mu: float, delta: float) -> float:
    """Epsilon of a Gaussian mechanism of sensitivity/sd ``mu`` at ``delta`` (exact)."""

    def excess(eps: float) -> float:
        return (
            stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
        ) - delta

    return float(optimize.brentq(excess, 0.0, 50.0, xtol=1e-12))


@pytest.mark.parametrize(("sigma", "marginals"), [(200.0, 1), (40.0, 12), (25.0, 30)])
def test_discrete_gaussian_marginals_match_the_analytic_gaussian(
    sigma: float, marginals: int
) -> None:
    """``marginals`` marginals, each two cells moved by one: a Gaussian of mu^2 = 2 m / s^2.

    At these sigmas the discrete Gaussian is within 1e-6 of the continuous one in every
    privacy figure; the PLD's grid rounds each loss up by at most 1e-4, so its epsilon is
    above the analytic one by at most about 1e-4 times the number of compositions.
    """
    mechs = [Mechanism.discrete_gaussian("m", sigma, (1, 1), count=marginals)]
    mu = math.sqrt(2 * marginals) / sigma
    for delta in (1e-5, 1e-6):
        exact = analytic_gaussian_epsilon(mu, delta)
        ours = pld.epsilon(mechs, delta=delta)
        assert exact - 1e-6 <= ours <= exact + 2e-4 * 2 * marginals


def test_one_shift_of_two_is_less_private_than_one_of_one() -> None:
    one = pld.epsilon([Mechanism.discrete_gaussian("m", 10.0, (1,))], delta=1e-6)
    two = pld.epsilon([Mechanism.discrete_gaussian("m", 10.0, (2,))], delta=1e-6)
    pair = pld.epsilon([Mechanism.discrete_gaussian("m", 10.0, (1, 1))], delta=1e-6)
    assert one < pair < two  # mu 0.1 < sqrt(2) * 0.1 < 0.2


@pytest.mark.parametrize(
    "epsilons", [[0.00398, 0.399, 0.00794, 0.0158, 0.00501, 0.0398, 0.00251], [0.01] * 100, [1.0]]
)
def test_pure_mechanisms_never_cost_more_than_basic_composition(epsilons: list[float]) -> None:
    mechs = [Mechanism.pure(f"c{i}", e) for i, e in enumerate(epsilons)]
    basic = math.fsum(epsilons)
    for delta in (0.0, 1e-6, 1e-3):
        assert pld.epsilon(mechs, delta=delta) <= basic
    if len(epsilons) == 100:  # many small ones: advanced composition's gain, well below
        assert pld.epsilon(mechs, delta=1e-6) < 0.5 * basic


def test_the_figure_is_never_below_the_optimistic_pld() -> None:
    """The optimistic (rounded-down) PLD of the same mechanisms is a lower bound."""
    mechs = [
        Mechanism.discrete_gaussian("gen", 16.09, (1, 1), count=2),
        Mechanism.discrete_gaussian("gen", 29.88, (1, 1), count=13),
        Mechanism.discrete_gaussian("fit", 300.0, (3, 40, 17)),
        Mechanism.pure("ratio", 0.399),
        Mechanism.pure("marginals", 0.004),
    ]
    low = None
    for sigma, shifts, count in [(16.09, (1, 1), 2), (29.88, (1, 1), 13), (300.0, (3, 40, 17), 1)]:
        for k in shifts:
            part = dpl.from_discrete_gaussian_mechanism(
                sigma, sensitivity=k, pessimistic_estimate=False
            )
            part = part.self_compose(count) if count > 1 else part
            low = part if low is None else low.compose(part)
    for e in (0.399, 0.004):  # randomized response at e, its losses rounded down
        top = math.exp(e) / (1 + math.exp(e))
        losses = {
            math.floor(e / pld.DISCRETIZATION): top,
            math.floor(-e / pld.DISCRETIZATION): 1 - top,
        }
        pmf = pld_pmf.create_pmf(losses, pld.DISCRETIZATION, 0.0, pessimistic_estimate=False)
        low = low.compose(dpl.PrivacyLossDistribution(pmf))
    assert low is not None
    for delta in (1e-6, 1e-4):
        lower = low.get_epsilon_for_delta(delta)
        ours = pld.epsilon(mechs, delta=delta)
        assert lower <= ours <= lower + 0.01  # the grids differ by at most 1e-4 a step


def test_the_worst_candidate_counts() -> None:
    cheap = [Mechanism.discrete_gaussian("a", 40.0, (1, 1))]
    dear = [Mechanism.discrete_gaussian("b", 20.0, (1, 1))]
    assert pld.worst_epsilon([cheap, dear], delta=1e-6) == pld.epsilon(dear, delta=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"epsilon": 0.0}, "either epsilon-DP"),
        ({"epsilon": 1.0, "sigma": 2.0, "shifts": (1,)}, "either epsilon-DP"),
        ({"sigma": 2.0, "shifts": ()}, "shifts"),
        ({"sigma": 2.0, "shifts": (-1,)}, "shifts"),
        ({"epsilon": math.nan}, "either epsilon-DP"),
        ({"epsilon": 1.0, "count": 0}, "count"),
    ],
)
def test_a_malformed_mechanism_is_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Mechanism(label="x", **kwargs)


def test_a_gaussian_at_delta_zero_is_refused() -> None:
    with pytest.raises(ValueError, match="not pure DP"):
        pld.epsilon([Mechanism.discrete_gaussian("m", 5.0, (1,))], delta=0.0)


# --- the shifts, on neighbouring datasets


def test_a_replaced_row_moves_a_marginal_by_the_declared_shifts() -> None:
    """Replace one row: the marginal's counts move in two cells by one (shifts (1, 1))."""
    from synthflow.generators.workload import marginal_counts

    gen = np.random.default_rng(7)
    sizes = (4, 3, 5)
    codes = np.column_stack([gen.integers(0, s, 500) for s in sizes])
    for trial in range(200):
        other = codes.copy()
        other[gen.integers(0, 500)] = [gen.integers(0, s) for s in sizes]
        for clique in [(0,), (0, 1), (1, 2)]:
            diff = marginal_counts(other, clique, sizes) - marginal_counts(codes, clique, sizes)
            moved = np.sort(np.abs(diff[diff != 0]))
            assert list(moved) in ([], [1, 1]), trial


def test_a_replaced_row_moves_each_snapped_fit_coefficient_by_its_shift() -> None:
    """The functional mechanism's snapped statistics: coefficient j moves <= shifts[j]."""
    from synthflow.criteria.regression import fit as regression

    gen = np.random.default_rng(11)
    xb = np.array([[0.0, 10.0], [-3.0, 3.0]])
    yb = (500.0, 5000.0)
    std = regression.Standardization.from_bounds(xb, yb)
    box = std.box(xb, yb)
    weights = np.linspace(0.5, 2.0, len(regression.functional_mechanism_sensitivity(*box)))
    noise = regression.fit_noise(*box, 0.43, kind="gaussian", delta=5e-7, weights=weights)
    w, g = np.asarray(noise.weights), noise.granularity
    shifts = np.asarray(noise.shifts)
    n = 300
    x = np.column_stack([gen.uniform(lo, hi, n) for lo, hi in xb])
    y = gen.uniform(*yb, n)
    base = np.round(regression.functional_mechanism_statistics(x, y, std, xb, yb) / w / g)
    worst = np.zeros_like(shifts)
    for _ in range(300):
        x2, y2 = x.copy(), y.copy()
        i = gen.integers(0, n)
        corner = gen.integers(0, 2, len(xb))  # the extremes move the statistics most
        x2[i] = [b[c] for b, c in zip(xb, corner, strict=True)]
        y2[i] = yb[gen.integers(0, 2)]
        moved = np.round(regression.functional_mechanism_statistics(x2, y2, std, xb, yb) / w / g)
        worst = np.maximum(worst, np.abs(moved - base).astype(int))
    assert np.all(worst <= shifts)
    # the declared shifts are close to what a neighbour reaches (random rows and corners
    # reach most of each range in 300 trials), not padded
    assert worst.sum() >= 0.8 * (shifts - 1).sum()

"""Our PATECTGAN (synthflow/generators/pate.py): partitions, vote sensitivity, accounting."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
dp_accounting = pytest.importorskip("dp_accounting")

from gan_checks import check_gan_charges, gan_data  # noqa: E402

from synthflow.errors import InfeasibleConfigurationError  # noqa: E402
from synthflow.generators import make_generator  # noqa: E402
from synthflow.generators.dpsgd import CLIP_MARGIN, TorchStream  # noqa: E402
from synthflow.generators.pate import partition, teacher_votes  # noqa: E402
from synthflow.privacy.accounting import dpsgd_renyi, pure_renyi  # noqa: E402
from synthflow.privacy.ledger import Ledger  # noqa: E402
from synthflow.privacy.rng import PrivacyRNG  # noqa: E402
from synthflow.transform import Domain  # noqa: E402

DOMAIN = Domain(names=("a", "b", "c", "d"), sizes=(3, 4, 2, 5))
# 400 rows, 20 per teacher: 20 teachers, each joining a vote with probability 10 / 20.
TINY = {
    "delta": 1e-6,
    "batch_size": 20,
    "embedding_dim": 16,
    "hidden": 32,
    "rows_per_teacher": 20,
    "teacher_hidden": 8,
    "tuning_steps": 40,  # the tuning's own tests are in test_gan_tuning.py
}


_data = gan_data


def _fit(hp: dict, epsilon: float, seed: int = 0):
    gen = make_generator("patectgan", TINY | hp, epsilon=epsilon)
    ledger = Ledger(total_epsilon=epsilon, total_delta=1e-5)
    gen.fit(_data(), domain=DOMAIN, ledger=ledger, rng=PrivacyRNG.from_seed(seed))
    return gen, ledger


# -------------------------------------------------------------------- partitions


def test_partitions_are_disjoint_equal_and_independent_of_the_rows():
    parts = partition(103, 10, np.random.default_rng(0))
    assert parts.shape == (10, 10)  # 103 // 10 rows each; 3 rows are never read
    assert len(np.unique(parts)) == 100
    # The positions depend only on n and the stream: the same for any data of 103 rows.
    assert np.array_equal(parts, partition(103, 10, np.random.default_rng(0)))
    with pytest.raises(ValueError, match="teachers"):
        partition(5, 6, np.random.default_rng(0))


def test_a_replaced_row_changes_one_teachers_rows():
    # Neighbouring datasets (one row replaced) give the teachers the same positions, so
    # exactly one teacher's real rows differ.
    a = np.arange(200.0)
    b = a.copy()
    b[37] = -1.0
    parts = partition(200, 8, np.random.default_rng(4))
    differ = [t for t in range(8) if not np.array_equal(a[parts[t]], b[parts[t]])]
    assert len(differ) <= 1


# ------------------------------------------------------------------ sensitivity


def test_one_teacher_moves_the_vote_sum_by_at_most_twice_the_clip():
    # Replace-one: one teacher's logits change arbitrarily (here from +30 to -30 on every
    # row: the extreme). Without noise the vote sum moves by at most 2 C = sqrt(rows),
    # and this extreme reaches it (to 1e-9: sigmoid(30) - 1/2 = 1/2 - 9e-14).
    rows = 25
    stream = TorchStream(np.random.default_rng(0), torch)
    logits = torch.from_numpy(np.random.default_rng(1).normal(0, 3, (6, rows)))
    base, clip = teacher_votes(torch, logits, noise_multiplier=0.0, stream=stream)
    assert clip == pytest.approx(math.sqrt(rows) / 2)
    worst = 0.0
    for value in (30.0, -30.0, 0.0):
        other = logits.clone()
        other[2] = value
        moved, _ = teacher_votes(torch, other, noise_multiplier=0.0, stream=stream)
        worst = max(worst, float(torch.linalg.vector_norm(moved - base)))
    flipped = logits.clone()
    flipped[2], other = 30.0, logits.clone()
    other[2] = -30.0
    a, _ = teacher_votes(torch, flipped, noise_multiplier=0.0, stream=stream)
    b, _ = teacher_votes(torch, other, noise_multiplier=0.0, stream=stream)
    # Votes are clipped to C (1 - CLIP_MARGIN), below C whatever float32 rounding does.
    assert worst <= 2 * clip + 1e-9
    assert float(torch.linalg.vector_norm(a - b)) == pytest.approx(
        2 * clip * (1 - CLIP_MARGIN), abs=1e-9
    )


def test_the_vote_noise_is_the_stream_s_gaussian():
    # sigma * C times the stream's next standard normals: same seed, same noise.
    rows, sigma = 40, 3.0
    zeros = torch.zeros(0, rows, dtype=torch.float64)  # no teacher joined: noise only
    noisy, clip = teacher_votes(
        torch, zeros, noise_multiplier=sigma, stream=TorchStream(np.random.default_rng(7), torch)
    )
    expected = np.random.default_rng(7).standard_normal(rows) * sigma * clip
    assert np.allclose(noisy.numpy(), expected)


# ------------------------------------------------------------------- accounting


@pytest.mark.parametrize("epsilon", [2.0, 6.0])
def test_the_ledger_charge_is_what_the_accountant_computes(epsilon):
    # 20 teachers, q = 10 / 20; sigma 8. Training gets half of epsilon by default, the
    # 1-way (0.2) and 2-way (0.3) marginals the rest (charged first); the steps are the
    # grid's 5 epochs or fewer when the budget binds (at 2.0), and then one more step
    # would exceed it.
    gen, ledger = _fit({"epochs": 5, "noise_multiplier": 8.0}, epsilon)
    charge = check_gan_charges(gen, ledger, epsilon, q=0.5, sigma=8.0, wanted=5)
    assert charge.sensitivity == pytest.approx(math.sqrt(20))  # 2 C, C = sqrt(batch) / 2
    assert gen.teachers_ == 20
    assert len(gen.voters_) == gen.steps_


@pytest.mark.parametrize(
    ("hp", "message"),
    [
        ({"noise_multiplier": 0.1}, "in one step"),  # not one step fits epsilon
        ({"rows_per_teacher": 1000}, "rows_per_teacher"),  # not one teacher on 400 rows
    ],
)
def test_an_infeasible_configuration_charges_nothing(hp, message):
    gen = make_generator("patectgan", TINY | hp, epsilon=1.0)
    ledger = Ledger(total_epsilon=1.0, total_delta=1e-5)
    with pytest.raises(InfeasibleConfigurationError, match=message):
        gen.fit(_data(), domain=DOMAIN, ledger=ledger, rng=PrivacyRNG.from_seed(0))
    assert ledger.charges == ()


def test_renyi_curve_is_the_subsampled_gaussian_over_teachers_plus_the_measurements():
    gen = make_generator("patectgan", TINY | {"epochs": 4, "noise_multiplier": 8.0}, epsilon=2.0)
    steps, _ = gen.plan_steps(400)
    training = dpsgd_renyi(sample_rate=0.5, noise_multiplier=8.0, steps=steps)
    expected = training + pure_renyi(0.4) + pure_renyi(0.6)  # 1-way and 2-way marginals
    assert gen.renyi(400) == pytest.approx(expected)


def test_voters_are_a_poisson_sample_of_the_teachers():
    # Each teacher joins with probability 1/2 (poisson_batch, whose sizes are tested
    # binomial in test_dpsgd.py), independently of the data: over 40 steps the counts
    # vary, with mean 10 (sd of the mean sqrt(5 / 40) = 0.35; 1.5 is over 4 sd).
    gen, _ = _fit({"epochs": 40, "noise_multiplier": 30.0}, 2.0, seed=1)
    voters = np.array(gen.voters_)
    assert len(voters) == gen.steps_ == 40
    assert len(set(voters.tolist())) > 3
    assert abs(voters.mean() - 10) < 1.5


# ------------------------------------------------------------------- randomness


def test_no_global_random_generator_during_training(forbid_global_rng):
    gen, _ = _fit({"epochs": 3, "noise_multiplier": 8.0, "regularization": "dragan"}, 2.0)
    assert gen.steps_ > 0


def test_the_fit_is_the_streams():
    def weights(seed: int) -> np.ndarray:
        gen, _ = _fit({"epochs": 2, "noise_multiplier": 8.0}, 2.0, seed=seed)
        return torch.cat([p.detach().ravel() for p in gen.generator_.parameters()]).numpy()

    assert np.array_equal(weights(5), weights(5))
    assert not np.array_equal(weights(5), weights(6))


def test_nothing_private_is_kept_after_fit():
    gen, _ = _fit({"epochs": 2, "noise_multiplier": 8.0}, 2.0)
    kept = {k for k, v in vars(gen).items() if isinstance(v, (np.ndarray, pd.DataFrame))}
    assert kept == set()
    out = gen.sample(50, rng=np.random.default_rng(0))
    assert list(out.columns) == list(DOMAIN.names) and len(out) == 50


def test_too_many_teachers_are_refused_before_a_charge():
    # 4M rows at 100 rows per teacher: 40,000 teachers of width 64 on the births domain
    # (66 one-hot columns) need about 4 GiB; the message names both fixes.
    births = Domain(names=tuple("abcdef"), sizes=(12, 9, 5, 6, 2, 32))
    gen = make_generator("patectgan", {"noise_multiplier": 5.0}, epsilon=4.0)
    assert gen.teacher_bytes(births, 4_000_000) > 2 * 2**30
    with pytest.raises(InfeasibleConfigurationError, match="raise rows_per_teacher or lower"):
        gen.check_feasible(births, 4_000_000)
    bigger = make_generator(
        "patectgan", {"noise_multiplier": 5.0, "rows_per_teacher": 1000}, epsilon=4.0
    )
    bigger.check_feasible(births, 4_000_000)  # 4,000 teachers: 0.4 GiB + 1 GiB of rows

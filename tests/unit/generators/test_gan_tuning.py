"""The GANs' 2-way measurement and the tuning of the trained generator to it (gan.py)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("dp_accounting")

from gan_checks import gan_data  # noqa: E402

from synthflow.generators import make_generator  # noqa: E402
from synthflow.generators._workload_spec import structural_zeros  # noqa: E402
from synthflow.generators.dpsgd import TorchStream, _generator_network  # noqa: E402
from synthflow.generators.gan import (  # noqa: E402
    _empty_forbidden_cells,
    fit_to_marginals,
    measure_pairs,
    pair_counts,
)
from synthflow.loader import load_spec  # noqa: E402
from synthflow.privacy.ledger import Ledger  # noqa: E402
from synthflow.privacy.rng import PrivacyRNG  # noqa: E402
from synthflow.transform import Domain, Transformer  # noqa: E402

DOMAIN = Domain(names=("a", "b", "c", "d"), sizes=(3, 4, 2, 5))
TINY = {"delta": 1e-6, "batch_size": 20, "embedding_dim": 16, "hidden": 32, "epochs": 2}
REPO = __import__("pathlib").Path(__file__).resolve().parents[3]


def test_each_pair_table_moves_by_at_most_two_between_neighbours():
    # Replace-one: the replaced row leaves one cell of each table and enters another, so
    # each table's L1 distance is 2 where the pair's cell changes and 0 where it does not
    # (the sensitivity 2 per table that measure_pairs charges).
    data = gan_data()
    for row, new in [(0, (2, 3, 1, 4)), (5, (0, 0, 0, 0)), (9, tuple(gan_data().iloc[9]))]:
        neighbour = data.copy()
        neighbour.iloc[row] = new
        old = tuple(data.iloc[row])
        for (i, j, t), (_, _, u) in zip(
            pair_counts(data, DOMAIN), pair_counts(neighbour, DOMAIN), strict=True
        ):
            moved = (old[i], old[j]) != (new[i], new[j])
            assert np.abs(t - u).sum() == (2.0 if moved else 0.0)


def test_pair_noise_is_laplace_with_the_declared_scale():
    # epsilon 1 over the 6 pairs of the toy domain: each table epsilon 1/6, sensitivity 2,
    # so scale 12. The mean absolute deviation of Laplace(b) is b with sd b: over 71 cells
    # x 40 draws the mean's sd is 12 / sqrt(2840) = 0.23, and 1.2 is over 5 sd.
    data = gan_data()
    exact = np.concatenate([t.ravel() for _, _, t in pair_counts(data, DOMAIN)])
    rng = PrivacyRNG.from_seed(4)
    noise = [
        np.concatenate([t.ravel() for _, _, t in measure_pairs(data, DOMAIN, epsilon=1.0, rng=rng)])
        - exact
        for _ in range(40)
    ]
    assert abs(np.abs(noise).mean() - 12.0) < 1.2
    assert exact.size == 71


def test_cells_a_synthetic_constraint_forbids_are_emptied():
    spec = load_spec(REPO / "configs" / "births-2024.yaml")
    tr = Transformer(spec, {c: "a" for c in spec.column_names})
    sizes = tr.domain.sizes
    d = len(sizes)
    pairs = [(i, j, np.ones((sizes[i], sizes[j]))) for i in range(d) for j in range(i + 1, d)]
    _empty_forbidden_cells(pairs, tr, tr.domain)
    index = {n: k for k, n in enumerate(tr.domain.names)}
    masks = {tuple(index[c] for c in clique): m for clique, m in structural_zeros(tr).items()}
    emptied = 0
    for i, j, table in pairs:
        mask = masks.get((i, j), np.zeros_like(table, dtype=bool))
        assert (table[mask] == 0).all() and (table[~mask] == 1).all()
        emptied += int(mask.sum())
    assert emptied > 0  # (mother_age, parity) and (gestation_week, birth_weight) rules


def _two_way(gen_net, sizes, z):
    with torch.no_grad():
        logits = gen_net(torch.from_numpy(z)).numpy().astype(float)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    p = []
    for s, k in zip(starts, sizes, strict=True):
        e = np.exp(logits[:, s : s + k] - logits[:, s : s + k].max(axis=1, keepdims=True))
        p.append(e / e.sum(axis=1, keepdims=True))
    d = len(sizes)
    return {(i, j): p[i].T @ p[j] / len(z) for i in range(d) for j in range(i + 1, d)}


def test_tuning_brings_the_generators_pairs_to_the_measured_ones():
    # Targets without noise (a test of the optimiser): an untrained generator is far from
    # the toy data's dependent pairs (b follows a, d = a + b mod 5); 600 steps bring every
    # 2-way share within 0.03 of its target, measured on latents the tuning never saw.
    data = gan_data(2000)
    exact = pair_counts(data, DOMAIN)
    one_way = [
        np.bincount(data[c], minlength=k).astype(float)
        for c, k in zip(DOMAIN.names, DOMAIN.sizes, strict=True)
    ]
    stream = TorchStream(np.random.default_rng(0), torch)
    gen_net = _generator_network(torch, stream, 16, 32, sum(DOMAIN.sizes))
    gen_net.eval()
    z = np.random.default_rng(9).standard_normal((20_000, 16)).astype(np.float32)

    def worst() -> float:
        shares = _two_way(gen_net, DOMAIN.sizes, z)
        return max(np.abs(shares[i, j] - t / len(data)).max() for i, j, t in exact)

    before = worst()
    gap = fit_to_marginals(gen_net, torch, one_way, exact, total=float(len(data)),
                           embedding_dim=16, rng=np.random.default_rng(1))  # fmt: skip
    assert before > 0.1
    assert worst() < 0.03 and gap < 0.03


@pytest.mark.parametrize("model", ["dpctgan", "patectgan"])
def test_pair_share_zero_skips_the_measurement_and_the_tuning(model):
    extra = {"rows_per_teacher": 20, "teacher_hidden": 8} if model == "patectgan" else {}
    gen = make_generator(model, TINY | extra | {"noise_multiplier": 8.0, "pair_share": 0.0},
                         epsilon=3.0)  # fmt: skip
    ledger = Ledger(total_epsilon=3.0, total_delta=1e-5)
    gen.fit(gan_data(), domain=DOMAIN, ledger=ledger, rng=PrivacyRNG.from_seed(0))
    assert [c.what.split(":")[0] for c in ledger.charges][:1] == [f"{model} 1-way marginals"]
    assert len(ledger.charges) == 2 and not hasattr(gen, "pair_gap_")
    assert ledger.charges[1].epsilon == pytest.approx(0.8 * 3.0)  # training: all but 0.2


@pytest.mark.parametrize(
    ("shares", "message"),
    [
        ({"one_way_share": 0.0}, "must be > 0"),
        ({"one_way_share": 0.5, "pair_share": 0.5}, "below 1"),
        ({"pair_share": -0.1}, r"in \[0, 1\]"),
        ({"tuning_steps": 0}, "tuning_steps"),
    ],
)
def test_shares_that_leave_training_nothing_are_refused(shares, message):
    with pytest.raises(ValueError, match=message):
        make_generator("dpctgan", TINY | shares, epsilon=1.0)


def test_one_column_has_no_pair_to_measure():
    # d = 1: no 2-way table; the pair share is left unspent (never divided by 0 tables
    # after a charge), training keeps its own share.
    one = Domain(names=("a",), sizes=(3,))
    gen = make_generator("dpctgan", TINY | {"noise_multiplier": 8.0, "tuning_steps": 5},
                         epsilon=3.0)  # fmt: skip
    ledger = Ledger(total_epsilon=3.0, total_delta=1e-5)
    gen.fit(gan_data()[["a"]], domain=one, ledger=ledger, rng=PrivacyRNG.from_seed(0))
    assert [c.epsilon for c in ledger.charges] == [pytest.approx(0.6), pytest.approx(1.5)]
    assert len(gen.sample(10, rng=np.random.default_rng(0))) == 10

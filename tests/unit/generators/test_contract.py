"""Contract tests parametrised over every registered generator."""

from __future__ import annotations

import importlib.util
import itertools
import re

import numpy as np
import pandas as pd
import pytest

from synthflow.errors import DataError
from synthflow.generators import REGISTRY, make_generator
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Domain

DOMAIN = Domain(names=("a", "b", "c", "d"), sizes=(3, 4, 2, 5))
TINY = {
    "privbayes": {"flavor": "degree", "epsilon_split": 0.3, "degree": 2},
    "mwem": {"num_query": 64, "num_iterations": 30, "num_inner_updates": 5},
    "pep": {"num_query": 64, "num_iterations": 30, "num_inner_updates": 5, "marginal": 2},
    "mst": {"delta": 1e-6},
    "aim": {"delta": 1e-6, "rounds": 8},
    "dpctgan": {
        "delta": 1e-6,
        "epochs": 2,
        "batch_size": 20,
        "noise_multiplier": 10.0,
        "embedding_dim": 16,
        "hidden": 32,
        "tuning_steps": 40,
    },
    "patectgan": {
        "delta": 1e-6,
        "epochs": 3,
        "batch_size": 20,
        "noise_multiplier": 10.0,
        "embedding_dim": 16,
        "hidden": 32,
        "rows_per_teacher": 20,
        "teacher_hidden": 8,
        "tuning_steps": 40,
    },
    "workload": {"one_way_share": 0.2, "constrained_share": 0.0, "iters": 200},
}
EXTRA = {
    "mst": ("snsynth",),
    "aim": ("snsynth",),
    "dpctgan": ("torch", "dp_accounting"),
    "patectgan": ("torch", "dp_accounting"),
}
SLOW = {"aim"}  # AIM's rounds of mirror descent take tens of seconds even on tiny data
NAMES = [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(REGISTRY)]


def _needs_extra(name: str) -> None:
    for module in EXTRA.get(name, ()):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{name} needs the optional extra providing {module}")


def _data(n: int = 400, seed: int = 0) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    a = g.integers(0, 3, n)
    b = np.minimum(a + g.integers(0, 2, n), 3)
    c = g.integers(0, 2, n)
    d = (b + c + g.integers(0, 2, n)) % 4  # code 4 of d never occurs
    return pd.DataFrame({"a": a, "b": b, "c": c, "d": d}).astype(np.int16)


def _fit(name: str, data: pd.DataFrame, seed: int = 1, epsilon: float = 1.0):
    gen = make_generator(name, TINY[name], epsilon=epsilon)
    ledger = Ledger(total_epsilon=epsilon, total_delta=1e-5)
    gen.fit(data, domain=DOMAIN, ledger=ledger, rng=PrivacyRNG.from_seed(seed))
    return gen, ledger


def test_every_generator_has_tiny_settings():
    assert set(TINY) == set(REGISTRY)


@pytest.mark.parametrize("name", NAMES)
def test_shapes_dtypes_domain_and_ledger(name):
    _needs_extra(name)
    gen, ledger = _fit(name, _data())
    out = gen.sample(250, rng=np.random.default_rng(0))
    assert list(out.columns) == list(DOMAIN.names)
    assert len(out) == 250
    for col, size in zip(DOMAIN.names, DOMAIN.sizes, strict=True):
        assert np.issubdtype(out[col].dtype, np.integer)
        assert out[col].min() >= 0 and out[col].max() < size
    cost = gen.privacy_cost
    assert ledger.spent_epsilon == pytest.approx(1.0, abs=1e-12)
    assert ledger.spent_delta == pytest.approx(cost.delta, abs=1e-15)
    assert cost.epsilon == 1.0


@pytest.mark.parametrize("name", NAMES)
def test_seeded_sampling_reproduces(name):
    _needs_extra(name)
    gen, _ = _fit(name, _data())
    a = gen.sample(100, rng=np.random.default_rng(7))
    b = gen.sample(100, rng=np.random.default_rng(7))
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("name", NAMES)
def test_absent_category_can_be_produced(name):
    """Code 4 of column d never occurs; a public-domain model keeps a cell for it."""
    _needs_extra(name)
    data = _data(60)
    # (PATECTGAN: 3 teachers all voting, one step needs about 1.1 of training's half)
    epsilon = {"aim": 0.1, "patectgan": 3.0}.get(name, 1.0)
    gen, _ = _fit(name, data, epsilon=epsilon)
    # the learned distribution must cover code 4 with positive probability
    assert (data["d"] != 4).all()
    if name in ("mwem", "pep"):  # a dense model over the public cube: exact check, no sampling
        assert gen.probabilities_.reshape(DOMAIN.sizes)[..., 4].sum() > 0
        return
    if name in ("mst", "aim"):  # exact check on the fitted model (its noise is unseedable)
        i = DOMAIN.names.index("d")
        marginal = gen.one_way_[i]
        support = None if gen.supports_ is None else gen.supports_[i]
        # The public domain keeps a cell for code 4 (never dropped for being absent from
        # the data). Its estimate is a noisy count clipped at 0, so it may be exactly 0 in
        # a rare draw (smartnoise's noise is unseedable: 1 run in about 20 full suites).
        if support is None or support[4]:
            kept = np.arange(DOMAIN.sizes[i]) if support is None else np.flatnonzero(support)
            assert 4 in kept and marginal[list(kept).index(4)] >= 0
        else:  # merged into MST's "other" value, drawn uniformly among the merged codes
            assert marginal[int(support.sum())] >= 0
        return
    out = gen.sample(20000, rng=np.random.default_rng(3))
    assert (data["d"] != 4).all()
    assert (out["d"] == 4).any(), f"{name} cannot produce a category absent from the data"


@pytest.mark.parametrize("name", NAMES)
def test_out_of_domain_rejected_before_fit(name):
    data = _data()
    data.loc[0, "d"] = 5
    gen = make_generator(name, TINY[name], epsilon=1.0)
    ledger = Ledger(total_epsilon=1.0, total_delta=1e-5)
    with pytest.raises(DataError, match=re.escape("codes outside the public domain 0..4")):
        gen.fit(data, domain=DOMAIN, ledger=ledger, rng=PrivacyRNG.from_seed(0))
    assert ledger.spent_epsilon == 0


@pytest.mark.parametrize("name", NAMES)
def test_unknown_hyperparameter_is_a_type_error(name):
    with pytest.raises(TypeError):
        make_generator(name, {"no_such_knob": 1}, epsilon=1.0)


@pytest.mark.parametrize("name", NAMES)
def test_budget_exceeded_charges_nothing(name):
    from synthflow.errors import BudgetExceededError

    gen = make_generator(name, TINY[name], epsilon=1.0)
    ledger = Ledger(total_epsilon=0.5, total_delta=1e-5)
    _needs_extra(name)
    with pytest.raises(BudgetExceededError):
        gen.fit(_data(), domain=DOMAIN, ledger=ledger, rng=PrivacyRNG.from_seed(0))
    assert ledger.spent_epsilon == 0


@pytest.mark.parametrize(
    ("name", "hp", "message"),
    [
        ("mwem", {"num_query": 0}, "num_query (0) must be an integer >= 1"),
        ("mwem", {"num_iterations": 1.5}, "num_iterations (1.5) must be an integer >= 1"),
        ("mst", {"delta": 0.0}, "delta (0.0) must be a number in (0, 1)"),
        ("aim", {"degree": 0}, "degree (0) must be an integer >= 1"),
        ("dpctgan", {"loss": "hinge"}, "loss ('hinge') must be 'cross_entropy' or 'wasserstein'"),
        ("patectgan", {"regularization": "l2"}, "regularization ('l2') must be 'none' or 'dragan'"),
        ("patectgan", {"rows_per_teacher": 0}, "rows_per_teacher (0) must be an integer >= 1"),
    ],
)
def test_bad_hyperparameters_are_named(name, hp, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        make_generator(name, hp, epsilon=1.0)


def _two_way_error(a: pd.DataFrame, b: pd.DataFrame) -> float:
    worst = 0.0
    for x, y in itertools.combinations(DOMAIN.names, 2):
        pa = pd.crosstab(a[x], a[y], normalize=True)
        pb = pd.crosstab(b[x], b[y], normalize=True)
        worst = max(worst, float((pa - pb).abs().fillna(pa.abs()).fillna(pb.abs()).max().max()))
    return worst


@pytest.mark.parametrize("name", ["mst", pytest.param("aim", marks=pytest.mark.slow)])
def test_two_way_marginals_not_rounded(name):
    """Regression for mbi 1.1.0's rounding sampler (comonotone siblings, trap 2)."""
    _needs_extra(name)
    data = _data(3000, seed=5)
    gen = make_generator(name, TINY[name], epsilon=20.0)
    gen.fit(
        data,
        domain=DOMAIN,
        ledger=Ledger(total_epsilon=20.0, total_delta=1e-5),
        rng=PrivacyRNG.from_seed(0),
    )
    out = gen.sample(3000, rng=np.random.default_rng(0))
    assert _two_way_error(data, out) < 0.05


def test_the_gans_run_on_private_data():
    """Both GANs are ours: CSPRNG only, charged before training (tests/unit/generators)."""
    assert REGISTRY["patectgan"].requires_public_data is False
    assert REGISTRY["dpctgan"].requires_public_data is False


def test_gan_import_error_names_the_install_command(monkeypatch):
    import builtins

    from synthflow.generators.gan import _import

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "torch":
            raise ImportError("no")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    import importlib

    monkeypatch.setattr(importlib, "import_module", fake)
    with pytest.raises(
        ImportError, match=re.escape('pip install torch==2.13.0 && pip install -e ".[gan]"')
    ):
        _import("torch", "patectgan")

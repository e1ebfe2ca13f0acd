"""What both GANs' tests share: their toy data, and the ledger check against the accountant."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthflow.privacy.accounting import dpsgd_epsilon


def gan_data(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Toy rows on the tests' domain (sizes 3, 4, 2, 5) with dependent columns."""
    g = np.random.default_rng(seed)
    a = g.integers(0, 3, n)
    b = np.minimum(a + g.integers(0, 2, n), 3)
    return pd.DataFrame({"a": a, "b": b, "c": g.integers(0, 2, n), "d": (a + b) % 5}).astype(
        np.int16
    )


def check_gan_charges(gen, ledger, epsilon: float, *, q: float, sigma: float, wanted: int):
    """The 1-way and 2-way marginals' shares, then training's rest recomputed; returns it.

    The steps are the grid's ``wanted`` or fewer when the budget binds, and then one more
    step would exceed training's share (replace-one PLD, delta 1e-6).
    """
    hp = gen.hyperparameters
    *measured, charge = ledger.charges
    shares = [hp.one_way_share] + ([hp.pair_share] if hp.pair_share > 0 else [])
    assert [(c.epsilon, c.delta, c.sensitivity) for c in measured] == [
        (pytest.approx(s * epsilon), 0.0, 2.0) for s in shares
    ]
    training = (1 - sum(shares)) * epsilon
    assert (charge.epsilon, charge.delta) == (pytest.approx(training), 1e-6)
    assert sum(c.epsilon for c in ledger.charges) == pytest.approx(epsilon)
    ran = dpsgd_epsilon(sample_rate=q, noise_multiplier=sigma, steps=gen.steps_, delta=1e-6)
    assert ran == pytest.approx(gen.epsilon_accountant_) and ran <= training
    assert f"epsilon {ran:.4g} at delta 1e-06" in charge.what
    assert 0 < gen.steps_ <= wanted
    if gen.steps_ < wanted:  # capped by the budget: one more step would exceed it
        more = dpsgd_epsilon(
            sample_rate=q, noise_multiplier=sigma, steps=gen.steps_ + 1, delta=1e-6
        )
        assert more > training
    return charge

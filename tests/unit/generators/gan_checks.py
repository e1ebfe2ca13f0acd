"""What both GANs' tests share: their toy data, and the ledger check against the accountant."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthflow.accounting import dpsgd_epsilon


def gan_data(n: int = 400, seed: int = 0) -> pd.DataFrame:
    """Toy rows on the tests' domain (sizes 3, 4, 2, 5) with dependent columns."""
    g = np.random.default_rng(seed)
    a = g.integers(0, 3, n)
    b = np.minimum(a + g.integers(0, 2, n), 3)
    return pd.DataFrame({"a": a, "b": b, "c": g.integers(0, 2, n), "d": (a + b) % 5}).astype(
        np.int16
    )


def check_gan_charges(gen, ledger, epsilon: float, *, q: float, sigma: float, wanted: int):
    """The 1-way marginals' tenth, then training's nine tenths recomputed; returns the charge.

    The steps are the grid's ``wanted`` or fewer when the budget binds, and then one more
    step would exceed training's share (replace-one PLD, delta 1e-6).
    """
    marginals, charge = ledger.charges
    assert (marginals.epsilon, marginals.delta, marginals.sensitivity) == (
        pytest.approx(0.1 * epsilon),
        0.0,
        2.0,
    )
    assert (charge.epsilon, charge.delta) == (pytest.approx(0.9 * epsilon), 1e-6)
    assert sum(c.epsilon for c in ledger.charges) == pytest.approx(epsilon)
    ran = dpsgd_epsilon(sample_rate=q, noise_multiplier=sigma, steps=gen.steps_, delta=1e-6)
    assert ran == pytest.approx(gen.epsilon_accountant_) and ran <= 0.9 * epsilon
    assert f"epsilon {ran:.4g} at delta 1e-06" in charge.what
    assert 0 < gen.steps_ <= wanted
    if gen.steps_ < wanted:  # capped by the budget: one more step would exceed it
        more = dpsgd_epsilon(
            sample_rate=q, noise_multiplier=sigma, steps=gen.steps_ + 1, delta=1e-6
        )
        assert more > 0.9 * epsilon
    return charge

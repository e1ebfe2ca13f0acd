"""Shared fixtures of the generator tests."""

from __future__ import annotations

import numpy as np
import pytest


def _raise(*_args, **_kwargs):
    raise AssertionError("a global random generator was called during training")


@pytest.fixture
def forbid_global_rng(monkeypatch):
    """Make torch's and numpy's global random generators raise (torch must be installed).

    Patched: torch's module-level draws, in-place tensor draws, ``nn.init``, functional
    dropout, and numpy's legacy ``np.random`` functions. Yields torch.
    """
    torch = pytest.importorskip("torch")
    for name in ("rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial"):
        monkeypatch.setattr(torch, name, _raise)
    for name in ("uniform_", "normal_", "bernoulli_", "random_", "exponential_"):
        monkeypatch.setattr(torch.Tensor, name, _raise)
    for name in ("kaiming_uniform_", "uniform_", "normal_", "xavier_uniform_"):
        monkeypatch.setattr(torch.nn.init, name, _raise)
    monkeypatch.setattr(torch.nn.functional, "dropout", _raise)
    for name in ("random", "rand", "randn", "randint", "normal", "uniform", "choice",
                 "shuffle", "permutation", "binomial", "seed"):  # fmt: skip
        monkeypatch.setattr(np.random, name, _raise)
    yield torch
    # The patches bite: the same calls outside training raise.
    with pytest.raises(AssertionError, match="global random"):
        torch.randn(2)

"""Hyperparameters of the DP-SGD and PATE GANs (DPCTGAN, PATECTGAN)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from synthflow.generators._checks import _check_delta, _positive, _positive_int, _share

__all__ = ["DPCTGANHyperparameters", "PATECTGANHyperparameters", "_GANHyperparameters"]


@dataclass(frozen=True, kw_only=True)
class _GANHyperparameters:
    delta: float = 1e-9
    """Delta of the (epsilon, delta) guarantee (charged to the ledger)."""
    epochs: int = 300
    batch_size: int = 500
    generator_lr: float = 2e-4
    discriminator_lr: float = 2e-4
    generator_decay: float = 1e-6
    discriminator_decay: float = 1e-6
    noise_multiplier: float = 1.0
    embedding_dim: int = 128
    hidden: int = 256
    """Width of the two hidden layers of both networks."""
    one_way_share: float = 0.2
    """Share of epsilon spent on Laplace noise on every 1-way marginal; the trained
    generator's output biases are raked to them."""
    pair_share: float = 0.3
    """Share of epsilon spent on Laplace noise on every 2-way marginal; the trained
    generator is tuned to them (0: no tuning). Training gets what the two shares leave."""
    tuning_steps: int = 600
    """Adam steps of the tuning to the 2-way marginals (post-processing, no budget)."""

    def __post_init__(self) -> None:
        _check_delta(self.delta)
        one = _share("one_way_share", self.one_way_share)
        pair = _share("pair_share", self.pair_share)
        if not (one > 0 and one + pair < 1):
            raise ValueError(
                f"one_way_share ({one:g}) must be > 0 and one_way_share + pair_share "
                f"({one + pair:g}) below 1: training needs the rest of epsilon"
            )
        for name in ("epochs", "batch_size", "embedding_dim", "hidden", "tuning_steps"):
            _positive_int(name, getattr(self, name))
        for name in ("generator_lr", "discriminator_lr", "noise_multiplier"):
            _positive(name, getattr(self, name))
        for name in ("generator_decay", "discriminator_decay"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                raise ValueError(f"{name} ({v!r}) must be a number >= 0")


@dataclass(frozen=True, kw_only=True)
class DPCTGANHyperparameters(_GANHyperparameters):
    """Hyperparameters of DPCTGAN (SPEC sec. 9)."""

    loss: Literal["cross_entropy", "wasserstein"] = "cross_entropy"
    max_per_sample_grad_norm: float = 1.0
    """DP-SGD clipping norm of each example's gradient."""
    generator_steps: int = 5
    """Generator Adam steps after each DP discriminator step. The generator never reads
    a private row (post-processing of the private discriminator), so its steps cost no
    budget; see :func:`synthflow.generators.dpsgd.train_dpctgan`."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.loss not in ("cross_entropy", "wasserstein"):
            raise ValueError(f"loss ({self.loss!r}) must be 'cross_entropy' or 'wasserstein'")
        _positive("max_per_sample_grad_norm", self.max_per_sample_grad_norm)
        _positive_int("generator_steps", self.generator_steps)


@dataclass(frozen=True, kw_only=True)
class PATECTGANHyperparameters(_GANHyperparameters):
    """Hyperparameters of PATECTGAN (SPEC sec. 9, plus the teachers' three).

    ``epochs`` are steps (each teacher sees its whole partition once a step);
    ``batch_size`` is the number of generated rows the teachers vote on per step;
    ``noise_multiplier`` is the Gaussian's on the vote sums (see
    :mod:`synthflow.generators.pate`).
    """

    regularization: Literal["none", "dragan"] = "none"
    """``dragan``: a DRAGAN gradient penalty on the student (post-processing)."""
    loss: Literal["cross_entropy", "wasserstein"] = "cross_entropy"
    """The generator's loss against the student."""
    rows_per_teacher: int = 100
    """Rows of each teacher's partition: ``n // rows_per_teacher`` teachers."""
    teachers_per_vote: int = 10
    """Expected number of teachers in one vote (Poisson rate ``teachers_per_vote / teachers``)."""
    teacher_hidden: int = 64
    """Width of the teachers' two hidden layers (they see ``rows_per_teacher`` rows each)."""
    teacher_lr: float = 1e-3
    """Adam learning rate of the teachers (at the grid's 2e-4 they learn too slowly)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("rows_per_teacher", "teachers_per_vote", "teacher_hidden"):
            _positive_int(name, getattr(self, name))
        _positive("teacher_lr", self.teacher_lr)
        if self.regularization not in ("none", "dragan"):
            raise ValueError(f"regularization ({self.regularization!r}) must be 'none' or 'dragan'")
        if self.loss not in ("cross_entropy", "wasserstein"):
            raise ValueError(f"loss ({self.loss!r}) must be 'cross_entropy' or 'wasserstein'")

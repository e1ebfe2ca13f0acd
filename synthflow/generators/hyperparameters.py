"""Every generator's hyperparameters, in one light module.

The configuration space validates its grid points against these classes
(:func:`synthflow.space.expand_space`); keeping them apart from the generators lets
``synthflow space`` run without pandas, networkx or torch. Each generator module
re-exports its class, and :data:`HYPERPARAMETERS` maps a family to its class (a test
keeps it equal to the generator registry's).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "HYPERPARAMETERS",
    "AIMHyperparameters",
    "DPCTGANHyperparameters",
    "MSTHyperparameters",
    "MWEMHyperparameters",
    "PATECTGANHyperparameters",
    "PEPHyperparameters",
    "PrivBayesHyperparameters",
    "WorkloadHyperparameters",
]


def _positive_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} ({value!r}) must be an integer >= 1")


def _positive(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{name} ({value!r}) must be a number > 0")


def _check_delta(delta: object) -> None:
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise ValueError(f"delta ({delta!r}) must be a number in (0, 1)")


def _share(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"{name} ({value!r}) must be a number in [0, 1]")
    return float(value)


@dataclass(frozen=True, kw_only=True)
class PrivBayesHyperparameters:
    """Hyperparameters of PrivBayes (SPEC sec. 9)."""

    flavor: Literal["theta", "degree"] = "theta"
    """``theta``: degree from theta-usefulness; ``degree``: fixed number of parents."""
    epsilon_split: float = 0.3
    """Share of epsilon spent on the network structure (the rest on conditionals)."""
    theta: float | None = None
    """Theta of the theta flavor (required there, forbidden in the degree flavor)."""
    degree: int | None = None
    """Number of parents of the degree flavor (required there)."""

    def __post_init__(self) -> None:
        if self.flavor not in ("theta", "degree"):
            raise ValueError(f"flavor ({self.flavor!r}) must be 'theta' or 'degree'")
        if not (isinstance(self.epsilon_split, (int, float)) and 0 < self.epsilon_split < 1):
            raise ValueError(f"epsilon_split ({self.epsilon_split!r}) must be in (0, 1)")
        if self.flavor == "theta":
            if self.theta is None or not self.theta > 0 or self.degree is not None:
                raise ValueError(
                    f"the theta flavor needs theta > 0 and no degree (got theta={self.theta!r}, "
                    f"degree={self.degree!r})"
                )
        elif (
            not isinstance(self.degree, int) or isinstance(self.degree, bool) or self.degree < 1
        ) or self.theta is not None:
            raise ValueError(
                f"the degree flavor needs an integer degree >= 1 and no theta (got "
                f"degree={self.degree!r}, theta={self.theta!r})"
            )


@dataclass(frozen=True, kw_only=True)
class WorkloadHyperparameters:
    """How the workload generator splits its budget (tuned by the public sweep)."""

    one_way_share: float = 0.15
    """Share of epsilon on the 1-way marginals of every column."""
    constrained_share: float = 0.3
    """Share on the pairs a synthetic constraint names together (if any; otherwise it
    goes to the other pairs)."""
    cell_power: float = 0.0
    """Within a family, a marginal's share is proportional to cells ** cell_power."""
    iters: int = 3000
    """Mirror-descent iterations of the Private-PGM estimation (1000 leaves the
    regression error about twice as large at 160K rows; 6000 gains little)."""
    max_model_size: float = 16.0
    """Largest graphical model (junction-tree parameters, MB) the fit may build; checked
    from the public domain before anything is charged. Time grows with it: the births
    release binning needs about 2 MB (about 20 s at 3000 iterations on 2 cores); 16 MB
    (2M cells) takes minutes per fit; jax's working memory is several times the model.
    Above it, a table goes to tree mode (see ``select_share``) or is refused."""
    select_share: float = 0.1
    """Wide tables only (*tree mode*): when the pairs only the marginals criterion reads
    do not all fit in ``max_model_size``, this share of epsilon selects a spanning tree
    of them with the exponential mechanism; unused otherwise."""

    def __post_init__(self) -> None:
        a = _share("one_way_share", self.one_way_share)
        b = _share("constrained_share", self.constrained_share)
        if a + b > 1 + 1e-12:
            raise ValueError(
                f"one_way_share + constrained_share ({a} + {b}) must be at most 1; the rest "
                "goes to the other pairs"
            )
        if not isinstance(self.cell_power, (int, float)) or not 0 <= self.cell_power <= 2:
            raise ValueError(f"cell_power ({self.cell_power!r}) must be a number in [0, 2]")
        if isinstance(self.iters, bool) or not isinstance(self.iters, int) or self.iters < 1:
            raise ValueError(f"iters ({self.iters!r}) must be an integer >= 1")
        if not isinstance(self.max_model_size, (int, float)) or not self.max_model_size > 0:
            raise ValueError(f"max_model_size ({self.max_model_size!r}) must be > 0 (MB)")
        if _share("select_share", self.select_share) >= 1:
            raise ValueError(f"select_share ({self.select_share!r}) must be below 1")


@dataclass(frozen=True, kw_only=True)
class MWEMHyperparameters:
    """Hyperparameters of MWEM (SPEC sec. 9)."""

    num_query: int = 512
    """Size of the random, data-independent workload of range queries."""
    num_iterations: int = 500
    """Rounds of select-measure-update; each spends epsilon / num_iterations."""
    num_inner_updates: int = 25
    """Multiplicative-weights passes over all measured queries after each round."""
    max_query_columns: int = 3
    """Most columns one range query constrains (the others are unconstrained)."""

    def __post_init__(self) -> None:
        for name in ("num_query", "num_iterations", "num_inner_updates", "max_query_columns"):
            _positive_int(name, getattr(self, name))


@dataclass(frozen=True, kw_only=True)
class PEPHyperparameters:
    """Hyperparameters of PEP (SPEC sec. 9): MWEM's, with marginal queries of one order."""

    num_query: int = 512
    """Size of the random, data-independent pool of marginal-cell queries."""
    num_iterations: int = 500
    """Rounds of select-measure-project; each spends epsilon / num_iterations."""
    num_inner_updates: int = 25
    """Entropy-projection sweeps over the measured queries after each round."""
    marginal: int = 3
    """Order of the marginal queries (each fixes this many columns to one bin each)."""

    def __post_init__(self) -> None:
        for name in ("num_query", "num_iterations", "num_inner_updates", "marginal"):
            _positive_int(name, getattr(self, name))


@dataclass(frozen=True, kw_only=True)
class MSTHyperparameters:
    """Hyperparameters of MST."""

    delta: float = 1e-9
    """Delta of the (epsilon, delta) guarantee (charged to the ledger)."""

    def __post_init__(self) -> None:
        _check_delta(self.delta)


@dataclass(frozen=True, kw_only=True)
class AIMHyperparameters:
    """Hyperparameters of AIM (smartnoise defaults except where noted)."""

    delta: float = 1e-9
    """Delta of the (epsilon, delta) guarantee (charged to the ledger)."""
    degree: int = 2
    """Largest marginal in the workload (smartnoise default 2)."""
    max_model_size: float = 80.0
    """Largest model size in MB (smartnoise default 80)."""
    rounds: int | None = None
    """Rounds of select-measure; None: smartnoise's default (16 * columns)."""

    def __post_init__(self) -> None:
        _check_delta(self.delta)
        if isinstance(self.degree, bool) or not isinstance(self.degree, int) or self.degree < 1:
            raise ValueError(f"degree ({self.degree!r}) must be an integer >= 1")
        if not (isinstance(self.max_model_size, (int, float)) and self.max_model_size > 0):
            raise ValueError(f"max_model_size ({self.max_model_size!r}) must be > 0")
        if self.rounds is not None and (
            isinstance(self.rounds, bool) or not isinstance(self.rounds, int) or self.rounds < 1
        ):
            raise ValueError(f"rounds ({self.rounds!r}) must be None or an integer >= 1")


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


HYPERPARAMETERS: dict[str, type] = {
    "privbayes": PrivBayesHyperparameters,
    "workload": WorkloadHyperparameters,
    "mwem": MWEMHyperparameters,
    "pep": PEPHyperparameters,
    "mst": MSTHyperparameters,
    "aim": AIMHyperparameters,
    "dpctgan": DPCTGANHyperparameters,
    "patectgan": PATECTGANHyperparameters,
}
"""Generator family -> its hyperparameter class."""

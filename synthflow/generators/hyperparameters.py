"""Every generator's hyperparameters, in one light module.

The configuration space validates its grid points against these classes
(:func:`synthflow.space.expand_space`); keeping them apart from the generators lets
``synthflow space`` run without pandas, networkx or torch. Each generator module
re-exports its class; the one generator registry,
:data:`~synthflow.generators.table.GENERATORS`, pairs each family's hyperparameter class
with where its generator lives (it names the generators' modules, which import this one).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from synthflow.generators._checks import _check_delta, _positive_int, _share
from synthflow.generators._gan_hyperparameters import (
    DPCTGANHyperparameters,
    PATECTGANHyperparameters,
)

__all__ = [
    "AIMHyperparameters",
    "DPCTGANHyperparameters",
    "MSTHyperparameters",
    "MWEMHyperparameters",
    "PATECTGANHyperparameters",
    "PEPHyperparameters",
    "PrivBayesHyperparameters",
    "WorkloadHyperparameters",
]


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
    """Plain mirror-descent iterations of the Private-PGM estimation (mbi's steps; 1000
    left the regression error about twice as large at 160K rows, 6000 gained little).
    Models of 1- and 2-column cliques whose joint table fits in memory (at most 2**22
    cells, the release's among them) take the numpy fast path, where ``iters`` is the
    plain iterations the fit replaces: it makes ``max(4, ceil(iters / 4))`` marginal
    evaluations of mirror descent with Nesterov momentum and restarts, which reach a
    loss at least as low (on the release's model at 160K rows, 750 evaluations reach
    loss 365, the plain 3000 iterations 383). Other models run exactly ``iters`` plain
    iterations in mbi."""
    max_model_size: float = 16.0
    """Largest graphical model (junction-tree parameters, MB) the fit may build; checked
    from the public domain before anything is charged. Time grows with it: the births
    release binning needs about 2 MB (about 20 s at 3000 iterations on 2 cores); 16 MB
    (2M cells) takes minutes per fit; jax's working memory is several times the model.
    Above it, a table goes to tree mode (see ``select_share``) or is refused."""
    select_share: float = 0.1
    """Wide tables only (*tree mode*): when the pairs only the marginals criterion reads
    do not all fit in ``max_model_size``, this share of epsilon selects, with the
    exponential mechanism, a spanning tree over every pair of the table the other
    criteria do not measure (MST's selection); unused otherwise."""
    noise: str = "laplace"
    """``laplace``: discrete Laplace per marginal, pure epsilon-DP (the default). ``gaussian``:
    discrete Gaussian per marginal, the whole fit rho-zCDP with rho the largest whose
    (epsilon, ``delta``) conversion is at most the generator's epsilon
    (:func:`synthflow.privacy.zcdp.zcdp_rho`). It measures the ~20 marginals of a release
    with about half the noise at the same epsilon (L2 sensitivity adds up as a square
    root, L1 linearly), at the price of ``delta``. In tree mode the selection joins the
    same rho (the exponential mechanism's bounded-range zCDP), as in MST."""
    delta: float = 0.0
    """Delta of a ``gaussian`` fit (charged to the ledger; 0 for ``laplace``)."""
    extra_pairs: int = 6
    """Tree mode only: after the spanning tree, this many more pairs, each drawn by the
    exponential mechanism where a model of the measurements so far errs most (L1 from
    the data, as AIM selects; one interim model, no refit between draws), within
    ``max_model_size``. They share ``select_share`` with the tree's edges and are
    measured like them. A tree joins components only: a dependence between two columns
    the criteria's cliques already connect (a real table's coinsurance and deductible)
    needs one: on the RAND HIE table at eps_gen 4 the worst 2-way error falls from 0.128
    (0 extra pairs) to 0.018 (6; two real halves 0.011), on the generated wide table it
    stays at 0.006-0.007 (``benchmarks/any_table.py``)."""

    def __post_init__(self) -> None:
        if (
            isinstance(self.extra_pairs, bool)
            or not isinstance(self.extra_pairs, int)
            or self.extra_pairs < 0
        ):
            raise ValueError(f"extra_pairs ({self.extra_pairs!r}) must be an integer >= 0")
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
        if self.noise not in ("laplace", "gaussian"):
            raise ValueError(f"noise ({self.noise!r}) must be 'laplace' or 'gaussian'")
        if self.noise == "gaussian":
            if isinstance(self.delta, bool) or not isinstance(self.delta, (int, float)):
                raise ValueError(f"delta ({self.delta!r}) must be a number in (0, 1)")
            if not 0 < self.delta < 1:
                raise ValueError(
                    f"noise 'gaussian' needs a delta in (0, 1), got {self.delta!r}: set "
                    "delta (e.g. 1e-7, at most the spec's privacy.total_delta)"
                )
        elif self.delta != 0:
            raise ValueError(
                f"noise 'laplace' is pure DP and spends no delta, got delta {self.delta!r}: "
                "drop delta or set noise: gaussian"
            )


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

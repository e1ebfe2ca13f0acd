"""Adapters for smartnoise-synth's MST and AIM (optional extra ``smartnoise``).

McKenna, Miklau, Sheldon. "Winning the NIST Contest: A scalable and general approach to
differentially private synthetic data." JPC 2021 (MST). McKenna, Mullins, Sheldon,
Miklau. "AIM: An Adaptive and Iterative Mechanism for Differentially Private Synthetic
Data." VLDB 2022.

Both spend (epsilon, delta)-DP through zCDP (Gaussian noise from opendp, secure and not
seedable); the ledger records epsilon *and* delta. What the adapters fix
(``shared/DEPENDENCIES.md``):

* **Public domain only** (trap 3): smartnoise is given a ``TableTransformer`` of
  ``LabelTransformer`` s fitted on a *public* frame holding every code ``0..size-1`` of
  the :class:`~synthflow.transform.Domain`, never on the data. A code absent from the
  data keeps its cell; out-of-domain codes are rejected by ``check_codes`` first.
* **Correct sampling** (trap 2): mbi 1.1.0's ``synthetic_data(method="round")`` makes
  siblings comonotone. We never call it: after fit we materialise the model's joint
  distribution over the (compressed) cube and draw i.i.d. rows with *our* numpy
  ``Generator``, then undo MST's domain compression with that generator too.
* **Randomness** (trap 5): smartnoise's selection uses numpy's global RNG during fit (we
  never seed it); sampling here is reproducible with a seeded ``rng``.

Nothing private is kept after fit: the smartnoise object is dropped; only the model's
normalised joint distribution and the (DP) compression supports remain.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from synthflow.generators.protocol import GeneratorBase, check_codes
from synthflow.ledger import Ledger
from synthflow.rng import PrivacyRNG
from synthflow.transform import Domain

__all__ = ["AIM", "MST", "AIMHyperparameters", "MSTHyperparameters", "require_extra"]

INSTALL_HINT = 'pip install ".[smartnoise]"'


def require_extra(module: str, extra: str, model: str) -> Any:
    """Import ``module`` or raise ImportError naming the extra to install."""
    import importlib  # noqa: PLC0415

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"generator {model!r} needs the optional dependency {module!r}: run "
            f'pip install ".[{extra}]"'
        ) from exc


def _check_delta(delta: object) -> None:
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise ValueError(f"delta ({delta!r}) must be a number in (0, 1)")


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


def public_transformer(domain: Domain) -> Any:
    """A smartnoise ``TableTransformer`` fitted on every code of the public domain."""
    tt = require_extra("snsynth.transform.table", "smartnoise", "mst/aim")
    label = require_extra("snsynth.transform.label", "smartnoise", "mst/aim")
    longest = max(domain.sizes)
    public = [
        tuple(int(min(i, size - 1)) for size in domain.sizes) for i in range(longest)
    ]  # every code of every column appears (the shorter columns repeat their last code)
    transformer = tt.TableTransformer(
        [label.LabelTransformer(nullable=False) for _ in domain.sizes]
    )
    transformer.fit(public)
    return transformer


class _SmartnoiseMarginal(GeneratorBase):
    """Shared fit/sample of the smartnoise marginal-based synthesizers."""

    name: ClassVar[str]
    Hyperparameters: ClassVar[type]

    def _synthesizer(self) -> Any:
        raise NotImplementedError

    def fit(self, data: pd.DataFrame, *, domain: Domain, ledger: Ledger, rng: PrivacyRNG) -> Any:
        """Fit through smartnoise on the public domain; charges (epsilon, delta) first.

        Raises:
            DataError: If the data fall outside the public domain.
            ImportError: If the ``smartnoise`` extra is not installed.
            BudgetExceededError: If the ledger cannot afford the cost.
        """
        check_codes(data, domain)
        synth = self._synthesizer()
        transformer = public_transformer(domain)
        cost = self.privacy_cost
        ledger.charge(
            f"{self.name} (smartnoise-synth): Gaussian marginals via zCDP",
            epsilon=cost.epsilon,
            delta=cost.delta,
            mechanism="gaussian",
        )
        rows = [tuple(int(v) for v in r) for r in data.itertuples(index=False)]
        synth.fit(rows, transformer=transformer, preprocessor_eps=0.0)
        model = synth.synthesizer
        attrs = tuple(model.domain.attrs)
        joint = np.asarray(model.project(attrs).datavector(flatten=True), dtype=float)
        joint = np.clip(joint, 0.0, None)
        self.compressed_sizes_ = tuple(int(model.domain[a]) for a in attrs)
        undo = getattr(synth, "undo_compress_fn", None)
        supports = inspect.getclosurevars(undo).nonlocals["supports"] if undo else None
        self.supports_ = [np.asarray(supports[a]) for a in attrs] if supports else None
        self.probabilities_ = joint / joint.sum()
        self.domain_ = domain
        self.labels_ = [list(t.categories) for t in transformer.transformers]
        del synth, model, rows
        return self

    def sample(self, n: int, *, rng: np.random.Generator) -> pd.DataFrame:
        """Draw ``n`` i.i.d. rows from the fitted joint (never mbi's rounding sampler)."""
        if not hasattr(self, "probabilities_"):
            raise RuntimeError("call fit() before sample()")
        if n < 0:
            raise ValueError(f"n ({n}) must be >= 0")
        flat = rng.choice(self.probabilities_.size, size=n, p=self.probabilities_)
        codes = list(np.unravel_index(flat, self.compressed_sizes_))
        out = {}
        for i, (name, col) in enumerate(zip(self.domain_.names, codes, strict=True)):
            if self.supports_ is not None:  # undo MST's compression (rare values merged)
                support = self.supports_[i]
                kept, merged = np.flatnonzero(support), np.flatnonzero(~support)
                other = col == kept.size
                col = np.where(other, 0, col)
                col = kept[np.minimum(col, kept.size - 1)]
                if merged.size and other.any():
                    col[other] = rng.choice(merged, size=int(other.sum()))
            labels = np.asarray(self.labels_[i], dtype=np.int64)
            out[name] = labels[col].astype(np.int16)
        return pd.DataFrame(out)


class MST(_SmartnoiseMarginal):
    """smartnoise MST, sampled correctly; (epsilon, delta)-DP."""

    name: ClassVar[str] = "mst"
    Hyperparameters: ClassVar[type] = MSTHyperparameters

    def _synthesizer(self) -> Any:
        mst = require_extra("snsynth.mst", "smartnoise", self.name)
        return mst.MSTSynthesizer(epsilon=self.epsilon, delta=self.hyperparameters.delta)


class AIM(_SmartnoiseMarginal):
    """smartnoise AIM, sampled correctly; (epsilon, delta)-DP."""

    name: ClassVar[str] = "aim"
    Hyperparameters: ClassVar[type] = AIMHyperparameters

    def _synthesizer(self) -> Any:
        aim = require_extra("snsynth.aim", "smartnoise", self.name)
        hp = self.hyperparameters
        return aim.AIMSynthesizer(
            epsilon=self.epsilon,
            delta=hp.delta,
            degree=hp.degree,
            max_model_size=hp.max_model_size,
            rounds=hp.rounds,
        )

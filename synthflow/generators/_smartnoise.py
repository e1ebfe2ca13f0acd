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
  siblings comonotone. We never call it: after fit the model's conditional tables along
  its junction tree (:class:`~synthflow.generators._pgm_sampler.TreeSampler`; memory of the
  largest clique, never the whole cube, which is 10^16 cells on a 15-column table)
  draw rows (systematic sampling within each parent cell, see
  :meth:`~synthflow.generators._pgm_sampler.TreeSampler.sample`) with *our* numpy
  ``Generator``; MST's domain compression is undone with that generator too.
* **Neighbouring relation** (trap 7): smartnoise calibrates both for add/remove
  neighbours. Under the spec's replace-one relation a marginal's L2 sensitivity is
  sqrt(2) (zCDP cost x2) and the selection score's sensitivity is 2 (cost x4), so the
  adapters hand smartnoise a smaller zCDP budget: ``rho / 8 * 3`` for MST (one third
  each on 1-way measurements, selection and 2-way measurements: 2/3 + 4/3 + 2/3 = 8/3)
  and ``rho / 2.2`` for AIM (9/10 of every round on measurement, 1/10 on selection:
  2 x 0.9 + 4 x 0.1 = 2.2), where ``rho`` is the zCDP budget of the charged (epsilon,
  delta). :func:`smartnoise_epsilon` converts it back to the epsilon smartnoise takes.
  The ledger's charge is then the true replace-one guarantee (a test recomputes it
  from the noise scales smartnoise actually used).
* **Randomness** (trap 5): smartnoise's selection draws from numpy's global Mersenne
  Twister during fit, which is not a CSPRNG. Until our own selection replaces it, MST
  and AIM run only on data declared public (``requires_public_data``); the
  ``workload`` generator is the marginal-based generator for private data. Sampling
  here is reproducible with a seeded ``rng``.

Nothing private is kept after fit: the smartnoise object is dropped; only the model's
conditional tables and the (DP) compression supports remain.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from synthflow.errors import InfeasibleConfigurationError
from synthflow.generators._pgm import TreeSampler
from synthflow.generators.hyperparameters import AIMHyperparameters, MSTHyperparameters
from synthflow.generators.protocol import GeneratorBase, check_codes
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
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


def zcdp_rho(epsilon: float, delta: float) -> float:
    """The largest zCDP rho whose conversion to approximate DP is within (epsilon, delta).

    Uses smartnoise's own conversion (``snsynth.utils.cdp_rho``: OpenDP's optimal
    zCDP-to-approximate-DP conversion with a binary search), so that the budget we hand
    smartnoise and the budget it derives agree.
    """
    utils = require_extra("snsynth.utils", "smartnoise", "mst/aim")
    return float(utils.cdp_rho(float(epsilon), float(delta)))


def rho_to_epsilon(rho: float, delta: float) -> float:
    """Epsilon of the (epsilon, delta)-DP guarantee of rho-zCDP (OpenDP's conversion)."""
    require_extra("snsynth.utils", "smartnoise", "mst/aim")
    import opendp.prelude as dp  # noqa: PLC0415

    dp.enable_features("floating-point", "contrib")
    scale = math.sqrt(1.0 / (2.0 * rho))  # a sensitivity-1 Gaussian with exactly rho
    gauss = dp.m.make_gaussian(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale
    )
    adp = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(gauss), delta=float(delta))
    return float(adp.map(1.0)[0])


def smartnoise_epsilon(epsilon: float, delta: float, factor: float) -> float:
    """The epsilon to hand smartnoise so that its true replace-one cost is (epsilon, delta).

    smartnoise spends ``rho' = cdp_rho(eps', delta)`` under add/remove; under
    replace-one that costs at most ``factor * rho'``. We need ``factor * rho' <=
    cdp_rho(epsilon, delta)``, so ``eps'`` is the epsilon of ``rho / factor``.
    """
    return rho_to_epsilon(zcdp_rho(epsilon, delta) / factor, delta)


class _SmartnoiseMarginal(GeneratorBase):
    """Shared fit/sample of the smartnoise marginal-based synthesizers."""

    name: ClassVar[str]
    Hyperparameters: ClassVar[type]
    requires_public_data: ClassVar[bool] = True  # numpy's global RNG in selection
    replace_one_factor: ClassVar[float]
    """Upper bound on (true replace-one zCDP cost) / (smartnoise's add/remove cost)."""

    @property
    def smartnoise_epsilon(self) -> float:
        """The epsilon handed to smartnoise (see the module docstring)."""
        delta = float(self.hyperparameters.delta)
        return smartnoise_epsilon(self.epsilon, delta, self.replace_one_factor)

    def _synthesizer(self) -> Any:
        raise NotImplementedError

    def renyi(self, n: int) -> np.ndarray:
        """``rho * a``: the replace-one zCDP budget the adapter calibrates smartnoise to."""
        from synthflow.privacy.accounting import zcdp_renyi  # noqa: PLC0415

        return zcdp_renyi(zcdp_rho(self.epsilon, float(self.hyperparameters.delta)))

    def fit(self, data: pd.DataFrame, *, domain: Domain, ledger: Ledger, rng: PrivacyRNG) -> Any:
        """Fit through smartnoise on the public domain; charges (epsilon, delta) first.

        Raises:
            DataError: If the data fall outside the public domain.
            ImportError: If the ``smartnoise`` extra is not installed.
            BudgetExceededError: If the ledger cannot afford the cost.
        """
        check_codes(data, domain)
        self.check_feasible(domain, len(data))
        synth = self._synthesizer()
        transformer = public_transformer(domain)
        cost = self.privacy_cost
        ledger.charge(
            f"{self.name} (smartnoise-synth): Gaussian marginals via zCDP, calibrated for "
            f"replace-one (smartnoise given epsilon {self.smartnoise_epsilon:.4g})",
            epsilon=cost.epsilon,
            delta=cost.delta,
            mechanism="gaussian",
        )
        rows = [tuple(int(v) for v in r) for r in data.itertuples(index=False)]
        synth.fit(rows, transformer=transformer, preprocessor_eps=0.0)
        model = synth.synthesizer
        attrs = tuple(model.domain.attrs)
        self.compressed_sizes_ = tuple(int(model.domain[a]) for a in attrs)
        self.sampler_ = TreeSampler.from_model(
            model, names=attrs, sizes=self.compressed_sizes_, zeros={}
        )
        # The model's 1-way marginals (compressed codes), for diagnostics and tests.
        self.one_way_ = [
            np.clip(np.asarray(model.project((a,)).datavector(), dtype=float), 0.0, None)
            for a in attrs
        ]
        undo = getattr(synth, "undo_compress_fn", None)
        supports = inspect.getclosurevars(undo).nonlocals["supports"] if undo else None
        self.supports_ = [np.asarray(supports[a]) for a in attrs] if supports else None
        self.domain_ = domain
        self.labels_ = [list(t.categories) for t in transformer.transformers]
        del synth, model, rows
        return self

    def sample(self, n: int, *, rng: np.random.Generator) -> pd.DataFrame:
        """Draw ``n`` rows from the fitted joint (our sampler, never mbi's rounding one)."""
        if not hasattr(self, "sampler_"):
            raise RuntimeError("call fit() before sample()")
        if n < 0:
            raise ValueError(f"n ({n}) must be >= 0")
        drawn = self.sampler_.sample(n, rng)
        codes = [drawn[:, j] for j in range(drawn.shape[1])]
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
    replace_one_factor: ClassVar[float] = 8.0 / 3.0

    def _synthesizer(self) -> Any:
        mst = require_extra("snsynth.mst", "smartnoise", self.name)
        return mst.MSTSynthesizer(epsilon=self.smartnoise_epsilon, delta=self.hyperparameters.delta)


class AIM(_SmartnoiseMarginal):
    """smartnoise AIM, sampled correctly; (epsilon, delta)-DP."""

    name: ClassVar[str] = "aim"
    Hyperparameters: ClassVar[type] = AIMHyperparameters
    replace_one_factor: ClassVar[float] = 2.2

    def check_feasible(self, domain: Domain, n: int) -> None:
        """Refuse ``rounds`` that smartnoise's AIM cannot run (before any charge).

        AIM first measures every column's 1-way marginal at the per-round noise, which
        spends ``0.9 * columns / rounds`` of its budget; with ``rounds <= columns`` the
        rest goes negative and smartnoise fails with NaN probabilities after the charge.
        """
        rounds = self.hyperparameters.rounds
        d = len(domain.names)
        if rounds is not None and rounds <= d:
            raise InfeasibleConfigurationError(
                f"aim: rounds ({rounds}) must exceed the number of columns ({d}): AIM spends "
                f"0.9 x columns / rounds of its budget on the 1-way marginals first; use "
                f"rounds >= {2 * d} (smartnoise's default is 16 x columns = {16 * d})"
            )

    def _synthesizer(self) -> Any:
        aim = require_extra("snsynth.aim", "smartnoise", self.name)
        hp = self.hyperparameters
        return aim.AIMSynthesizer(
            epsilon=self.smartnoise_epsilon,
            delta=hp.delta,
            degree=hp.degree,
            max_model_size=hp.max_model_size,
            rounds=hp.rounds,
        )

"""Adapters for smartnoise-synth's DPCTGAN and PATECTGAN (optional extra ``gan``).

Xie et al. "Differentially Private Generative Adversarial Network" 2018 (DP-SGD on the
CTGAN discriminator); Jordon, Yoon, van der Schaar. "PATE-GAN" ICLR 2019, as CTGAN.

Install CPU torch first, then the extra::

    pip install torch==2.13.0 && pip install -e ".[gan]"

Both are (epsilon, delta)-DP by their accountants (RDP for DPCTGAN through opacus 0.14,
the PATE moments accountant for PATECTGAN). ``fit`` charges the configured epsilon and
delta *before* training; training stops before the accountant passes that budget.

What the adapters fix (``shared/DEPENDENCIES.md`` trap 4):

* **Public domain**: the one-hot encoding is fitted on a public frame holding every code
  of the :class:`~synthflow.transform.Domain`, never on the data.
* **No conditional vector**: smartnoise's ``DataSampler`` draws conditional vectors from
  the *exact* category frequencies of the private data, with no noise, and then picks
  real rows per category (which also breaks the uniform-subsampling assumption of the
  accountant). The adapters swap in a sampler with no discrete columns: no conditional
  vector, no category frequencies, real rows drawn uniformly.
* **Seeded discriminator**: smartnoise calls ``torch.manual_seed(0)`` when it builds the
  discriminator, which would make opacus' gradient noise (drawn from torch's global
  generator) known in advance. The adapters reseed torch right after, from the
  :class:`~synthflow.rng.PrivacyRNG` (secret in release mode), inside
  ``torch.random.fork_rng`` so the caller's torch state is untouched.
* **Epochs under the budget (DPCTGAN)**: smartnoise checks the budget only at the start
  of an epoch, so its last epoch can overshoot. The adapter computes, with opacus' RDP
  accountant, the most epochs that stay within (epsilon, delta) and never trains more.
* **Nothing private after fit**: only the generator network and the public encoding are
  kept; sampling is our own (softmax of the generator's logits per column, drawn with
  our numpy ``Generator``; the Gumbel-max argmax of smartnoise draws from the same
  distribution) and never reads private rows (smartnoise's ``PATECTGAN.sample()`` does).

What remains, so both classes set ``requires_public_data = True`` (the flow refuses them
on data not declared public):

* opacus 0.14 draws the DP-SGD noise from torch's Mersenne Twister (``secure_rng``
  needs torchcsprng, unavailable for torch 2.13), and smartnoise draws the training
  batches with numpy's global Mersenne Twister; neither is a CSPRNG.
* DPCTGAN draws fixed-size batches with replacement while the RDP accountant assumes
  Poisson subsampling; for cross-entropy loss opacus counts two noisy steps per batch.
* PATECTGAN: every teacher is one shared discriminator object (``[d for i in ...]``), so
  the teachers are not trained on disjoint partitions and the PATE analysis does not
  hold; it also ignores ``epochs`` (it trains until the moments accountant reaches
  epsilon).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from synthflow.errors import InfeasibleConfigurationError
from synthflow.generators.hyperparameters import (
    DPCTGANHyperparameters,
    PATECTGANHyperparameters,
)
from synthflow.generators.protocol import GeneratorBase, check_codes
from synthflow.ledger import Ledger
from synthflow.rng import PrivacyRNG
from synthflow.transform import Domain

__all__ = [
    "DPCTGAN",
    "PATECTGAN",
    "DPCTGANHyperparameters",
    "PATECTGANHyperparameters",
    "dpctgan_max_epochs",
]

INSTALL_HINT = 'pip install torch==2.13.0 && pip install -e ".[gan]"'
_LRS = (2e-4, 2e-5)


def _import(module: str, model: str) -> Any:
    import importlib  # noqa: PLC0415

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"generator {model!r} needs torch and smartnoise-synth ({module!r} is missing): "
            f"run {INSTALL_HINT}"
        ) from exc


def dpctgan_max_epochs(
    *, n: int, batch_size: int, noise_multiplier: float, loss: str, epsilon: float, delta: float
) -> int:
    """Most epochs of smartnoise's DPCTGAN whose RDP epsilon stays <= ``epsilon``.

    Mirrors the engine smartnoise builds: sample rate ``batch_size / n``,
    ``max(n // batch_size, 1)`` batches an epoch, two noisy optimizer steps per batch
    with cross-entropy loss (fake, then real) and one with Wasserstein loss, and the
    same RDP orders.
    """
    pa = _import("opacus.privacy_analysis", "dpctgan")
    orders = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
    q = min(batch_size / n, 1.0)
    per_epoch = max(n // batch_size, 1) * (2 if loss == "cross_entropy" else 1)
    rdp_step = np.asarray(pa.compute_rdp(q, noise_multiplier, 1, orders))

    def eps(epochs: int) -> float:
        return float(pa.get_privacy_spent(orders, rdp_step * epochs * per_epoch, delta)[0])

    if eps(1) > epsilon:
        return 0
    lo, hi = 1, 1
    while eps(hi * 2) <= epsilon and hi < 1 << 20:
        hi *= 2
    hi *= 2
    while hi - lo > 1:  # eps(lo) <= epsilon < eps(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if eps(mid) <= epsilon else (lo, mid)
    return lo


def _one_hot_transformer(domain: Domain) -> Any:
    """A smartnoise ``TableTransformer`` of one-hot encoders fitted on the public domain."""
    tt = _import("snsynth.transform.table", "gan")
    onehot = _import("snsynth.transform.onehot", "gan")
    longest = max(domain.sizes)
    public = [tuple(int(min(i, s - 1)) for s in domain.sizes) for i in range(longest)]
    transformer = tt.TableTransformer([onehot.OneHotEncoder() for _ in domain.sizes])
    transformer.fit(public)
    return transformer


class _TorchProxy:
    """smartnoise's module-level ``torch`` with a reseeding ``manual_seed``.

    smartnoise calls ``manual_seed(0)`` when it builds a discriminator; this proxy
    reseeds from the PrivacyRNG's seed instead.
    """

    def __init__(self, torch: Any, seed: int) -> None:
        self._torch = torch
        self._seed = seed
        self._calls = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._torch, name)

    def manual_seed(self, _ignored: int) -> Any:
        self._calls += 1
        return self._torch.manual_seed((self._seed + self._calls) % 2**63)


@contextlib.contextmanager
def _patched(module: Any, seed: int) -> Iterator[None]:
    """Swap smartnoise's DataSampler and seeding in ``module`` for fixed ones."""
    torch = _import("torch", "gan")
    base_sampler, base_torch = module.DataSampler, module.torch

    class NoConditionSampler(base_sampler):  # type: ignore[misc, valid-type]
        """No conditional vector: no private category frequencies, uniform rows."""

        def __init__(self, data: Any, transformers: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(data, transformers, *args, **kwargs)
            self._n_discrete_columns = 0
            self._n_categories = 0
            self._discrete_column_category_prob = None
            self._rid_by_cat_cols: list[Any] = []

    module.DataSampler, module.torch = NoConditionSampler, _TorchProxy(torch, seed)
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            yield
    finally:
        module.DataSampler, module.torch = base_sampler, base_torch


class _SmartnoiseGAN(GeneratorBase):
    """Shared fit/sample of the smartnoise GANs."""

    name: ClassVar[str]
    Hyperparameters: ClassVar[type]
    requires_public_data: ClassVar[bool] = True
    _module: ClassVar[str]

    def _synthesizer(self, n: int) -> Any:
        raise NotImplementedError

    def fit(self, data: pd.DataFrame, *, domain: Domain, ledger: Ledger, rng: PrivacyRNG) -> Any:
        """Train through smartnoise on the public one-hot domain; charges first.

        Raises:
            DataError: If the data fall outside the public domain.
            ImportError: If torch or smartnoise-synth is missing.
            ValueError: If not even one epoch fits in the budget (DPCTGAN).
            BudgetExceededError: If the ledger cannot afford the cost.
        """
        check_codes(data, domain)
        module = _import(self._module, self.name)
        torch = _import("torch", self.name)
        synth = self._synthesizer(len(data))
        transformer = _one_hot_transformer(domain)
        cost = self.privacy_cost
        ledger.charge(
            f"{self.name} (smartnoise-synth): {self._mechanism}",
            epsilon=cost.epsilon,
            delta=cost.delta,
            mechanism=self._mechanism,
        )
        rows = [tuple(int(v) for v in r) for r in data.itertuples(index=False)]
        seed = int(rng.generator().integers(0, 2**62))
        with _patched(module, seed):
            synth.fit(rows, transformer=transformer, preprocessor_eps=0.0)
        generator = synth._generator
        generator.eval()
        self.generator_ = generator
        self.embedding_dim_ = int(synth._embedding_dim)
        self.domain_ = domain
        self.epochs_trained_ = self._epochs_trained(synth)
        del synth, rows  # the data sampler (private rows) goes with the synthesizer
        self._torch = torch
        return self

    _mechanism: ClassVar[str] = ""

    def _epochs_trained(self, synth: Any) -> int:
        """Epochs smartnoise ran (DPCTGAN records a loss per epoch; PATECTGAN none)."""
        return len(getattr(synth, "loss_g_list", []))

    def sample(self, n: int, *, rng: np.random.Generator) -> pd.DataFrame:
        """Draw ``n`` rows from the generator, all randomness from ``rng``.

        Gaussian latents go through the generator; each column is one draw from the
        softmax of its logits (post-processing; never reads private rows).
        """
        if not hasattr(self, "generator_"):
            raise RuntimeError("call fit() before sample()")
        if n < 0:
            raise ValueError(f"n ({n}) must be >= 0")
        torch = self._torch
        out: dict[str, np.ndarray] = {}
        z = rng.standard_normal((n, self.embedding_dim_)).astype(np.float32)
        with torch.no_grad():
            logits = self.generator_(torch.from_numpy(z)).numpy().astype(float) if n else None
        st = 0
        for name, size in zip(self.domain_.names, self.domain_.sizes, strict=True):
            if logits is None:
                out[name] = np.zeros(0, dtype=np.int16)
                continue
            block = logits[:, st : st + size]
            st += size
            p = np.exp(block - block.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            u = rng.random((n, 1))
            codes = np.minimum((p.cumsum(axis=1) < u).sum(axis=1), size - 1)
            out[name] = codes.astype(np.int16)
        return pd.DataFrame(out)


class DPCTGAN(_SmartnoiseGAN):
    """smartnoise DPCTGAN with the fixes above; (epsilon, delta)-DP via RDP (opacus)."""

    name: ClassVar[str] = "dpctgan"
    Hyperparameters: ClassVar[type] = DPCTGANHyperparameters
    _module: ClassVar[str] = "snsynth.pytorch.nn.dpctgan"
    _mechanism: ClassVar[str] = "DP-SGD (Gaussian) on the discriminator, RDP accountant"

    def _synthesizer(self, n: int) -> Any:
        module = _import(self._module, self.name)
        hp = self.hyperparameters
        if hp.batch_size > n:
            raise InfeasibleConfigurationError(
                f"dpctgan: batch_size ({hp.batch_size}) exceeds the {n} rows"
            )
        allowed = dpctgan_max_epochs(
            n=n,
            batch_size=hp.batch_size,
            noise_multiplier=hp.noise_multiplier,
            loss=hp.loss,
            epsilon=self.epsilon,
            delta=hp.delta,
        )
        if allowed < 1:
            raise InfeasibleConfigurationError(
                f"dpctgan: noise_multiplier {hp.noise_multiplier} and batch_size "
                f"{hp.batch_size} spend more than epsilon {self.epsilon} in one epoch on "
                f"{n} rows; raise noise_multiplier or epsilon"
            )
        self.epochs_allowed_ = allowed
        return module.DPCTGAN(
            embedding_dim=hp.embedding_dim,
            generator_dim=(hp.hidden, hp.hidden),
            discriminator_dim=(hp.hidden, hp.hidden),
            generator_lr=hp.generator_lr,
            generator_decay=hp.generator_decay,
            discriminator_lr=hp.discriminator_lr,
            discriminator_decay=hp.discriminator_decay,
            batch_size=hp.batch_size,
            epochs=min(hp.epochs, allowed),
            verbose=False,
            cuda=False,
            delta=hp.delta,
            sigma=hp.noise_multiplier,
            max_per_sample_grad_norm=hp.max_per_sample_grad_norm,
            epsilon=self.epsilon,
            loss=hp.loss,
        )


class PATECTGAN(_SmartnoiseGAN):
    """smartnoise PATECTGAN with the fixes above; (epsilon, delta) by PATE moments."""

    name: ClassVar[str] = "patectgan"
    Hyperparameters: ClassVar[type] = PATECTGANHyperparameters
    _module: ClassVar[str] = "snsynth.pytorch.nn.patectgan"
    _mechanism: ClassVar[str] = "PATE teacher votes (Gaussian), moments accountant"

    def _synthesizer(self, n: int) -> Any:
        module = _import(self._module, self.name)
        hp = self.hyperparameters
        return module.PATECTGAN(
            embedding_dim=hp.embedding_dim,
            generator_dim=(hp.hidden, hp.hidden),
            discriminator_dim=(hp.hidden, hp.hidden),
            generator_lr=hp.generator_lr,
            generator_decay=hp.generator_decay,
            discriminator_lr=hp.discriminator_lr,
            discriminator_decay=hp.discriminator_decay,
            batch_size=hp.batch_size,
            epochs=hp.epochs,
            verbose=False,
            cuda=False,
            epsilon=self.epsilon,
            regularization=None if hp.regularization == "none" else hp.regularization,
            loss=hp.loss,
            delta=hp.delta,
            noise_multiplier=hp.noise_multiplier,
        )

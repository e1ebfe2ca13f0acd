"""The GAN generators (optional extra ``gan``): DPCTGAN (ours) and PATECTGAN (smartnoise).

Xie et al. "Differentially Private Generative Adversarial Network" 2018 (DP-SGD on the
CTGAN discriminator); Jordon, Yoon, van der Schaar. "PATE-GAN" ICLR 2019, as CTGAN.

Install CPU torch first, then the extra::

    pip install torch==2.13.0 && pip install -e ".[gan]"

**DPCTGAN** is trained by our own DP-SGD loop (:mod:`synthflow.generators.dpsgd`):
Poisson batches, per-row clipping and Gaussian noise all drawn from the
:class:`~synthflow.rng.PrivacyRNG`, accounted by ``dp-accounting``'s PLD accountant for
replace-one neighbours (:mod:`synthflow.accounting`), steps capped before training and
(epsilon, delta) charged first. It runs on private data. A tenth of epsilon measures
every 1-way marginal (Laplace); after training, each column's output biases are raked so
that the generator's 1-way marginals match those noisy ones (post-processing; see
:func:`rake_output_biases`).

**PATECTGAN** is smartnoise-synth's, with the adapter's fixes:

* **Public domain**: the one-hot encoding is fitted on a public frame holding every code
  of the :class:`~synthflow.transform.Domain`, never on the data.
* **No conditional vector**: smartnoise's ``DataSampler`` draws conditional vectors from
  the *exact* category frequencies of the private data, with no noise, and then picks
  real rows per category. The adapter swaps in a sampler with no discrete columns: no
  conditional vector, no category frequencies, real rows drawn uniformly.
* **Seeded discriminator**: smartnoise calls ``torch.manual_seed(0)`` when it builds the
  discriminator; the adapter reseeds torch right after, from the PrivacyRNG, inside
  ``torch.random.fork_rng`` so the caller's torch state is untouched.
* **Nothing private after fit**: only the generator network and the public encoding are
  kept; sampling is ours (softmax of the generator's logits per column, drawn with our
  numpy ``Generator``) and never reads private rows (smartnoise's ``sample()`` does).

What remains, so PATECTGAN sets ``requires_public_data = True`` (the flow refuses it on
data not declared public): its teachers are one shared discriminator object (``[d for i
in ...]``), so they are not trained on disjoint partitions and the PATE analysis does not
hold; it draws batches with numpy's global Mersenne Twister and ignores ``epochs`` (it
trains until the moments accountant reaches epsilon).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from synthflow.errors import InfeasibleConfigurationError
from synthflow.generators._sampling import systematic_uniforms
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


class _GAN(GeneratorBase):
    """Sampling shared by the GANs: the fitted generator network, our randomness only."""

    generator_: Any
    embedding_dim_: int
    domain_: Domain
    _torch: Any

    def sample(self, n: int, *, rng: np.random.Generator) -> pd.DataFrame:
        """Draw ``n`` rows from the generator, all randomness from ``rng``.

        Gaussian latents go through the generator; each column is one draw from the
        softmax of its logits (post-processing; never reads private rows). The draws
        use systematic uniforms (:func:`~synthflow.generators._sampling.systematic_uniforms`)
        stratified within the rows whose logits share the same top category: every row
        keeps exactly its softmax law, but a category's count loses most of the
        multinomial noise that i.i.d. draws add (at 10K rows, about 0.005 of n on a cell
        of probability 1/2). Measured on four DPCTGAN fits at 10K NVSS rows (noise 5, 911
        steps, raked; 8-12 draws each), mean max error over all marginals, i.i.d. ->
        stratified: 0.0292 -> 0.0270, 0.0267 -> 0.0237, 0.0287 -> 0.0271, 0.0296 -> 0.0298.
        The rest is the network's own error, mostly on (mother_age, parity).
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
            u = systematic_uniforms(block.argmax(axis=1), size, rng)[:, None]
            codes = np.minimum((p.cumsum(axis=1) < u).sum(axis=1), size - 1)
            out[name] = codes.astype(np.int16)
        return pd.DataFrame(out)


class _SmartnoiseGAN(_GAN):
    """Shared fit of the smartnoise GANs."""

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


def rake_output_biases(
    generator: Any,
    torch: Any,
    targets: list[np.ndarray],
    embedding_dim: int,
    rng: np.random.Generator,
    *,
    latents: int = 50_000,
    rounds: int = 30,
) -> float:
    """Shift each column's output biases so the generator's 1-way marginals hit ``targets``.

    ``targets`` are noisy counts per column (a DP release). The generator's logits on
    ``latents`` Gaussian latent vectors are computed once; for each column, a bias
    vector ``b`` is raked, ``b += log(target / mean_i softmax(logits_i + b))``, until the
    mean of the rows' softmaxes (the marginal the sampler draws from) matches the
    target's shares, and added to the last layer's bias. Every row keeps the network's
    own ranking of categories; only each category's overall level moves. Uses no data:
    post-processing of the trained generator and the noisy marginals.

    Returns:
        The largest gap left between a column's raked and target shares.
    """
    z = rng.standard_normal((latents, embedding_dim)).astype(np.float32)
    with torch.no_grad():
        logits = generator(torch.from_numpy(z)).numpy().astype(float)
    shift = np.zeros(logits.shape[1])
    gap, start = 0.0, 0
    for counts in targets:
        size = len(counts)
        share = (counts + 1.0) / (counts + 1.0).sum()  # +1: every category stays possible
        block, b = logits[:, start : start + size], np.zeros(size)
        for _ in range(rounds):
            x = block + b
            p = np.exp(x - x.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            mean = p.mean(axis=0)
            b += np.log(share / np.maximum(mean, 1e-300))
        gap = max(gap, float(np.abs(mean - share).max()))
        shift[start : start + size] = b
        start += size
    with torch.no_grad():
        generator[-1].bias.add_(torch.from_numpy(shift.astype(np.float32)))
    return gap


class DPCTGAN(_GAN):
    """DPCTGAN by our own DP-SGD loop (:mod:`synthflow.generators.dpsgd`); runs on private data.

    (epsilon, delta)-DP, replace-one neighbours, by the PLD accountant of
    ``dp-accounting`` (:mod:`synthflow.accounting`). Before training, the number of
    steps is the grid's epochs (``epochs / q`` Poisson steps, ``q = batch_size / n``)
    capped so that the accountant's epsilon at the configuration's delta stays within
    :attr:`dpsgd_epsilon`, nine tenths of the generator's epsilon; the other tenth
    measures the 1-way marginals (pure, Laplace). The ledger is charged both first.

    After training, :func:`rake_output_biases` moves each column's output biases to
    those noisy marginals (post-processing). Measured at 10K NVSS rows, noise 5, the
    grid's 1,130 steps: max 1-way / 2-way cell error 0.31 / 0.22 before raking, 0.011 /
    0.026 after (independent columns: 0.008 / 0.033).
    """

    name: ClassVar[str] = "dpctgan"
    Hyperparameters: ClassVar[type] = DPCTGANHyperparameters
    mechanism: ClassVar[str] = "gaussian (DP-SGD, Poisson subsampling)"

    marginal_share: ClassVar[float] = 0.1
    """Share of epsilon spent on the 1-way marginals that rake the generator's outputs."""

    @property
    def marginal_epsilon(self) -> float:
        """Pure epsilon of the 1-way marginals' Laplace measurement."""
        return self.epsilon * self.marginal_share

    @property
    def dpsgd_epsilon(self) -> float:
        """Epsilon (at the configuration's delta) left to DP-SGD."""
        return self.epsilon - self.marginal_epsilon

    def plan_steps(self, n: int) -> tuple[int, float]:
        """Steps the budget allows for ``n`` rows (public), and the accountant's epsilon.

        Raises:
            InfeasibleConfigurationError: If ``batch_size`` exceeds ``n`` or not one step
                fits in (epsilon, delta).
        """
        from synthflow.accounting import dpsgd_epsilon, dpsgd_max_steps  # noqa: PLC0415

        hp = self.hyperparameters
        if hp.batch_size > n:
            raise InfeasibleConfigurationError(
                f"dpctgan: batch_size ({hp.batch_size}) exceeds the {n} rows"
            )
        q = hp.batch_size / n
        wanted = max(1, math.ceil(hp.epochs / q))
        steps = dpsgd_max_steps(
            sample_rate=q,
            noise_multiplier=hp.noise_multiplier,
            epsilon=self.dpsgd_epsilon,
            delta=hp.delta,
            cap=wanted,
        )
        if steps < 1:
            raise InfeasibleConfigurationError(
                f"dpctgan: noise_multiplier {hp.noise_multiplier} and batch_size "
                f"{hp.batch_size} spend more than epsilon {self.dpsgd_epsilon:.4g} (DP-SGD's "
                f"share of {self.epsilon}; delta {hp.delta:g}) in one step on {n} rows; raise "
                "noise_multiplier or epsilon"
            )
        eps = dpsgd_epsilon(
            sample_rate=q, noise_multiplier=hp.noise_multiplier, steps=steps, delta=hp.delta
        )
        return steps, eps

    def renyi(self, n: int) -> np.ndarray:
        """Replace-one Renyi curve of the steps :meth:`plan_steps` allows on ``n`` rows."""
        from synthflow.accounting import dpsgd_renyi, pure_renyi  # noqa: PLC0415

        steps, _ = self.plan_steps(n)
        training = dpsgd_renyi(
            sample_rate=self.hyperparameters.batch_size / n,
            noise_multiplier=self.hyperparameters.noise_multiplier,
            steps=steps,
        )
        return training + pure_renyi(self.marginal_epsilon)  # composition adds the curves

    def fit(self, data: pd.DataFrame, *, domain: Domain, ledger: Ledger, rng: PrivacyRNG) -> Any:
        """Train by DP-SGD on the public one-hot domain; charges (epsilon, delta) first.

        Raises:
            DataError: If the data fall outside the public domain.
            ImportError: If torch or dp-accounting is missing.
            InfeasibleConfigurationError: If not one step fits in the budget.
            BudgetExceededError: If the ledger cannot afford the cost.
        """
        from synthflow.generators.dpsgd import train_dpctgan  # noqa: PLC0415
        from synthflow.generators.mwem import OneWayMarginals  # noqa: PLC0415

        check_codes(data, domain)
        torch = _import("torch", self.name)
        hp = self.hyperparameters
        n = len(data)
        steps, eps = self.plan_steps(n)
        cost = self.privacy_cost
        if not ledger.can_afford(cost.epsilon, cost.delta):
            ledger.charge("dpctgan (total)", epsilon=cost.epsilon, delta=cost.delta)  # raises
        ledger.charge(
            f"dpctgan 1-way marginals: Laplace on each of {len(domain.sizes)} histograms "
            "(replace-one L1 sensitivity 2 each), to rake the generator's outputs",
            epsilon=self.marginal_epsilon,
            mechanism="laplace",
            sensitivity=2.0,
        )
        ledger.charge(
            f"dpctgan: DP-SGD on the discriminator, {steps} Poisson steps (q "
            f"{hp.batch_size / n:.4g}, noise multiplier {hp.noise_multiplier:g}, clip "
            f"{hp.max_per_sample_grad_norm:g}); PLD accountant, replace-one: epsilon "
            f"{eps:.4g} at delta {hp.delta:g}",
            epsilon=self.dpsgd_epsilon,
            delta=cost.delta,
            mechanism=self.mechanism,
            sensitivity=2 * hp.max_per_sample_grad_norm,
        )
        marginals = OneWayMarginals.measure(data, domain, epsilon=self.marginal_epsilon, rng=rng)
        codes = data[list(domain.names)].to_numpy(dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(domain.sizes)[:-1]])
        onehot = np.zeros((n, int(sum(domain.sizes))), dtype=np.float32)
        onehot[np.arange(n)[:, None], codes + offsets] = 1.0
        result = train_dpctgan(
            onehot,
            tuple(domain.sizes),
            steps=steps,
            sample_rate=hp.batch_size / n,
            noise_multiplier=hp.noise_multiplier,
            clip=hp.max_per_sample_grad_norm,
            loss=hp.loss,
            embedding_dim=hp.embedding_dim,
            hidden=hp.hidden,
            generator_lr=hp.generator_lr,
            discriminator_lr=hp.discriminator_lr,
            generator_decay=hp.generator_decay,
            discriminator_decay=hp.discriminator_decay,
            generator=rng.generator(),
        )
        del onehot, codes
        targets = [
            marginals.targets[marginals.queries.group == i] for i in range(len(domain.sizes))
        ]
        self.raking_gap_ = rake_output_biases(
            result.generator, torch, targets, hp.embedding_dim, rng.generator()
        )
        self.generator_ = result.generator
        self.embedding_dim_ = hp.embedding_dim
        self.domain_ = domain
        self.steps_ = result.steps
        self.epsilon_accountant_ = eps
        self.epochs_trained_ = result.steps * hp.batch_size / n
        self.batch_sizes_ = result.batch_sizes
        self._torch = torch
        return self


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

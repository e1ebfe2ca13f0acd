"""The GAN generators (optional extra ``gan``): DPCTGAN and PATECTGAN, both ours.

Xie et al. "Differentially Private Generative Adversarial Network" 2018 (DP-SGD on the
CTGAN discriminator); Jordon, Yoon, van der Schaar. "PATE-GAN" ICLR 2019, with CTGAN's
networks. Install CPU torch first, then the extra::

    pip install torch==2.13.0 && pip install -e ".[gan]"

Both run on private data and share one recipe (:class:`_DPGAN`):

1. **Plan before any charge**: the accountant (:mod:`synthflow.privacy.accounting`, PLD,
   replace-one) caps the grid's steps so that training stays within its share of the
   generator's epsilon (what ``one_way_share`` and ``pair_share`` leave: half by
   default) at the configuration's delta; a configuration where not one step fits is
   refused (nothing charged).
2. **Charge first**: ``one_way_share`` of epsilon (0.2) for Laplace noise on every
   1-way marginal, ``pair_share`` (0.3) for Laplace noise on every 2-way marginal
   (:func:`measure_pairs`), then the training's (epsilon, delta).
3. **Train**, every random draw from the :class:`~synthflow.privacy.rng.PrivacyRNG` (no torch or
   numpy global generator): DPCTGAN by DP-SGD on the discriminator
   (:mod:`synthflow.generators.dpsgd`), PATECTGAN by teachers on disjoint partitions
   whose votes are released as a Poisson-subsampled Gaussian over teachers
   (:mod:`synthflow.generators.pate`).
4. **Tune** the trained generator to the noisy 1- and 2-way marginals
   (:func:`fit_to_marginals`, GEM-style, post-processing), with the cells a synthetic
   constraint forbids set to 0 (public), then **rake** each column's output biases to
   the noisy 1-way marginals (:func:`rake_output_biases`), and sample with our own
   numpy ``Generator`` (:meth:`_GAN.sample`); nothing private is kept after fit.

Why the measurements: at 10K NVSS rows and epsilon 4 neither network alone beats
independent columns on the marginal criterion (max error over all 63 marginals). The
2-way tuning took PATECTGAN (the grid's noise 5) from 0.031-0.034 to 0.011-0.019 over
3 fits on each of three 10K samples, at (0.2, 0.3) shares (0.015-0.021 at (0.1, 0.2)).

CTGAN's conditional vector is not used by either: it needs the private category
frequencies and picks real rows by category, which the subsampling analysis does not
cover.

Kept whole: the DP-SGD and PATE training loops share their noise, clipping and
accounting code, which a privacy review reads together.
"""

from __future__ import annotations

import math
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
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Domain, Transformer

__all__ = [
    "DPCTGAN",
    "PATECTGAN",
    "DPCTGANHyperparameters",
    "PATECTGANHyperparameters",
]

INSTALL_HINT = 'pip install torch==2.13.0 && pip install -e ".[gan]"'


def _import(module: str, model: str) -> Any:
    import importlib  # noqa: PLC0415

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"generator {model!r} needs torch and dp-accounting ({module!r} is missing): "
            f"run {INSTALL_HINT}"
        ) from exc


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


def measure_pairs(
    data: pd.DataFrame, domain: Domain, *, epsilon: float, rng: PrivacyRNG
) -> list[tuple[int, int, np.ndarray]]:
    """Every 2-way marginal of ``data`` with Laplace noise (the caller has charged ``epsilon``).

    Each of the ``P = d (d - 1) / 2`` tables gets ``epsilon / P``; replacing one row moves
    one count down and one up in each (L1 sensitivity 2), so each cell's noise has scale
    ``2 P / epsilon`` and the tables compose to ``epsilon``.

    Returns:
        ``(i, j, noisy counts of shape (size_i, size_j))`` for each pair ``i < j``.
    """
    exact = pair_counts(data, domain)
    per_table = epsilon / len(exact)
    return [(i, j, rng.laplace(t, sensitivity=2.0, epsilon=per_table)) for i, j, t in exact]


def pair_counts(data: pd.DataFrame, domain: Domain) -> list[tuple[int, int, np.ndarray]]:
    """Exact 2-way count tables ``(i, j, counts)`` of every pair of columns ``i < j``.

    Private: only :func:`measure_pairs` may release them, with noise.
    """
    d = len(domain.sizes)
    codes = data[list(domain.names)].to_numpy(dtype=np.int64)
    out = []
    for i in range(d):
        for j in range(i + 1, d):
            si, sj = domain.sizes[i], domain.sizes[j]
            counts = np.bincount(codes[:, i] * sj + codes[:, j], minlength=si * sj)
            out.append((i, j, counts.astype(float).reshape(si, sj)))
    return out


def _empty_forbidden_cells(
    pairs: list[tuple[int, int, np.ndarray]], transformer: Transformer | None, domain: Domain
) -> None:
    """Set to 0 (in place) the measured cells a synthetic constraint of two columns forbids.

    The constraints are public: rows in those cells are dropped after sampling, so the
    tuned generator should give them no mass (post-processing of the noisy counts).
    """
    if transformer is None or transformer.domain != domain:
        return
    from synthflow.generators._workload_spec import structural_zeros  # noqa: PLC0415

    index = {name: i for i, name in enumerate(domain.names)}
    masks = {
        tuple(index[c] for c in clique): mask
        for clique, mask in structural_zeros(transformer).items()
        if len(clique) == 2
    }
    for i, j, table in pairs:
        if (i, j) in masks:
            table[masks[i, j]] = 0.0
        elif (j, i) in masks:
            table[masks[j, i].T] = 0.0


def fit_to_marginals(
    generator: Any,
    torch: Any,
    one_way: list[np.ndarray],
    pairs: list[tuple[int, int, np.ndarray]],
    *,
    total: float,
    embedding_dim: int,
    rng: np.random.Generator,
    steps: int = 600,
    latents: int = 2048,
    lr: float = 1e-3,
) -> float:
    """Fine-tune the generator so its 1- and 2-way marginals approach noisy measured ones.

    The sampler draws each column independently given the latent vector, so the
    generator's expected 2-way marginal of columns ``(i, j)`` over latents ``z`` is
    ``E_z[p_i(z) p_j(z)^T]`` with ``p_i(z)`` the softmax of column i's logits. Each step
    draws ``latents`` fresh Gaussian latents from ``rng`` and takes one Adam step on the
    squared distance between these expected marginals (as shares) and the measured counts
    divided by the public ``total``; the networks' batch norms stay in evaluation mode,
    as the sampler uses them. Liu, Vietri and Wu's GEM ("Iterative Methods for Private
    Synthetic Data", NeurIPS 2021) trains a generator this way from scratch; here it
    starts from the trained GAN. Uses no data: post-processing of the noisy marginals.

    Returns:
        The largest gap left between a measured and a generated 2-way share.
    """
    sizes = [len(t) for t in one_way]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    t1 = [torch.from_numpy((t / total).astype(np.float32)) for t in one_way]
    t2 = [(i, j, torch.from_numpy((t / total).astype(np.float32))) for i, j, t in pairs]
    generator.eval()
    params = [p for p in generator.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr)
    gap = float("inf")
    for step in range(steps):
        z = torch.from_numpy(rng.standard_normal((latents, embedding_dim)).astype(np.float32))
        logits = generator(z)
        p = [torch.softmax(logits[:, s : s + k], dim=1) for s, k in zip(starts, sizes, strict=True)]
        loss = sum(((pi.mean(dim=0) - t) ** 2).sum() for pi, t in zip(p, t1, strict=True))
        errs = []
        for i, j, t in t2:
            diff = p[i].T @ p[j] / latents - t
            loss = loss + (diff**2).sum()
            if step == steps - 1:
                errs.append(float(diff.detach().abs().max()))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if errs:
            gap = max(errs)
    for q in params:
        q.grad = None
    return gap


class _DPGAN(_GAN):
    """The recipe both GANs share: plan, charge, measure 1-way marginals, train, rake.

    Subclasses say how one training step samples (:meth:`_sampling`), train
    (:meth:`_train`) and describe the training charge (:meth:`_training_charge`).
    """

    mechanism: ClassVar[str]
    needs_transformer: ClassVar[bool] = True

    def __init__(
        self, hyperparameters: Any, *, epsilon: float, transformer: Transformer | None = None
    ) -> None:
        super().__init__(hyperparameters, epsilon=epsilon)
        self.transformer = transformer
        """Public: its spec's synthetic constraints give the cells tuning empties."""

    @property
    def marginal_epsilon(self) -> float:
        """Pure epsilon of the 1-way marginals' Laplace measurement."""
        return self.epsilon * self.hyperparameters.one_way_share

    @property
    def pair_epsilon(self) -> float:
        """Pure epsilon of the 2-way marginals' Laplace measurement (0: no tuning)."""
        return self.epsilon * self.hyperparameters.pair_share

    @property
    def training_epsilon(self) -> float:
        """Epsilon (at the configuration's delta) left to training."""
        return self.epsilon - self.marginal_epsilon - self.pair_epsilon

    def _sampling(self, n: int) -> tuple[float, int, str]:
        """Poisson rate of one step, steps the grid asks for, and what sets them (public).

        Raises:
            InfeasibleConfigurationError: If the configuration cannot run on ``n`` rows.
        """
        raise NotImplementedError

    def _train(
        self, onehot: np.ndarray, sizes: tuple[int, ...], steps: int, rng: PrivacyRNG
    ) -> Any:
        raise NotImplementedError

    def _training_charge(self, n: int, steps: int, eps: float) -> str:
        raise NotImplementedError

    def plan_steps(self, n: int) -> tuple[int, float]:
        """Steps the budget allows for ``n`` rows (public), and the accountant's epsilon.

        Raises:
            InfeasibleConfigurationError: If the configuration cannot run on ``n`` rows or
                not one step fits in (epsilon, delta).
        """
        from synthflow.privacy.accounting import dpsgd_epsilon, dpsgd_max_steps  # noqa: PLC0415

        plans: dict[int, tuple[int, float]] = self.__dict__.setdefault("_plans", {})
        if n in plans:  # the flow's check, fit and renyi ask for the same n: bisect once
            return plans[n]
        hp = self.hyperparameters
        q, wanted, what = self._sampling(n)
        steps = dpsgd_max_steps(
            sample_rate=q,
            noise_multiplier=hp.noise_multiplier,
            epsilon=self.training_epsilon,
            delta=hp.delta,
            cap=wanted,
        )
        if steps < 1:
            raise InfeasibleConfigurationError(
                f"{self.name}: noise_multiplier {hp.noise_multiplier} and {what} spend more "
                f"than epsilon {self.training_epsilon:.4g} (training's share of {self.epsilon}; "
                f"delta {hp.delta:g}) in one step on {n} rows; raise noise_multiplier or epsilon"
            )
        eps = dpsgd_epsilon(
            sample_rate=q, noise_multiplier=hp.noise_multiplier, steps=steps, delta=hp.delta
        )
        plans[n] = (steps, eps)  # hyperparameters are frozen: the plan depends on n only
        return steps, eps

    def check_feasible(self, domain: Domain, n: int) -> None:
        """Refuse, before any charge, a configuration where not one step fits the budget."""
        self.plan_steps(n)

    def renyi(self, n: int) -> np.ndarray:
        """Replace-one Renyi curve of the steps :meth:`plan_steps` allows on ``n`` rows."""
        from synthflow.privacy.accounting import dpsgd_renyi, pure_renyi  # noqa: PLC0415

        steps, _ = self.plan_steps(n)
        training = dpsgd_renyi(
            sample_rate=self._sampling(n)[0],
            noise_multiplier=self.hyperparameters.noise_multiplier,
            steps=steps,
        )
        # composition adds the curves: training, the 1-way and the 2-way measurements
        return training + pure_renyi(self.marginal_epsilon) + pure_renyi(self.pair_epsilon)

    def fit(self, data: pd.DataFrame, *, domain: Domain, ledger: Ledger, rng: PrivacyRNG) -> Any:
        """Plan, charge (epsilon, delta) first, measure, train, rake; see the module docstring.

        Raises:
            DataError: If the data fall outside the public domain.
            ImportError: If torch or dp-accounting is missing.
            InfeasibleConfigurationError: If not one step fits in the budget.
            BudgetExceededError: If the ledger cannot afford the cost.
        """
        from synthflow.generators.mwem import OneWayMarginals  # noqa: PLC0415

        check_codes(data, domain)
        torch = _import("torch", self.name)
        hp = self.hyperparameters
        n = len(data)
        self.check_feasible(domain, n)
        steps, eps = self.plan_steps(n)
        cost = self.privacy_cost
        if not ledger.can_afford(cost.epsilon, cost.delta):
            ledger.charge(f"{self.name} (total)", epsilon=cost.epsilon, delta=cost.delta)  # raises
        ledger.charge(
            f"{self.name} 1-way marginals: Laplace on each of {len(domain.sizes)} histograms "
            "(replace-one L1 sensitivity 2 each), to rake the generator's outputs",
            epsilon=self.marginal_epsilon,
            mechanism="laplace",
            sensitivity=2.0,
        )
        d = len(domain.sizes)
        measure = self.pair_epsilon > 0 and d >= 2  # one column has no pair: share unspent
        if measure:
            ledger.charge(
                f"{self.name} 2-way marginals: Laplace on each of {d * (d - 1) // 2} tables "
                "(replace-one L1 sensitivity 2 each), to tune the trained generator",
                epsilon=self.pair_epsilon,
                mechanism="laplace",
                sensitivity=2.0,
            )
        ledger.charge(
            self._training_charge(n, steps, eps),
            epsilon=self.training_epsilon,
            delta=cost.delta,
            mechanism=self.mechanism,
            sensitivity=self._sensitivity,
        )
        marginals = OneWayMarginals.measure(data, domain, epsilon=self.marginal_epsilon, rng=rng)
        pairs = measure_pairs(data, domain, epsilon=self.pair_epsilon, rng=rng) if measure else []
        codes = data[list(domain.names)].to_numpy(dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(domain.sizes)[:-1]])
        onehot = np.zeros((n, int(sum(domain.sizes))), dtype=np.float32)
        onehot[np.arange(n)[:, None], codes + offsets] = 1.0
        del codes
        result = self._train(onehot, tuple(domain.sizes), steps, rng)
        del onehot
        targets = [
            marginals.targets[marginals.queries.group == i] for i in range(len(domain.sizes))
        ]
        if pairs:
            _empty_forbidden_cells(pairs, self.transformer, domain)
            self.pair_gap_ = fit_to_marginals(
                result.generator,
                torch,
                targets,
                pairs,
                total=float(n),
                embedding_dim=hp.embedding_dim,
                rng=rng.generator(),
                steps=hp.tuning_steps,
            )
        self.raking_gap_ = rake_output_biases(
            result.generator, torch, targets, hp.embedding_dim, rng.generator()
        )
        self.generator_ = result.generator
        self.embedding_dim_ = hp.embedding_dim
        self.domain_ = domain
        self.steps_ = result.steps
        self.epsilon_accountant_ = eps
        self._torch = torch
        return self

    @property
    def _sensitivity(self) -> float:
        """L2 distance of one step's vote or gradient sum between neighbours (replace-one)."""
        raise NotImplementedError


class DPCTGAN(_DPGAN):
    """DPCTGAN by our own DP-SGD loop (:mod:`synthflow.generators.dpsgd`); runs on private data.

    (epsilon, delta)-DP, replace-one neighbours. The grid's epochs are ``epochs / q``
    Poisson steps (``q = batch_size / n``), capped by the budget before training.

    Measured at 10K NVSS rows, noise 5: the network alone misses the 1-way / 2-way cells
    by up to 0.31 / 0.22; raked to the 1-way marginals, 0.011 / 0.026 (independent
    columns: 0.008 / 0.033). With the 2-way tuning (default shares, 309 steps in
    half of epsilon 4), max error over all marginals 0.013 and 0.014 on a fresh 10K
    sample where raking alone gave 0.028 (``benchmarks/gans.py``).
    """

    name: ClassVar[str] = "dpctgan"
    Hyperparameters: ClassVar[type] = DPCTGANHyperparameters
    mechanism: ClassVar[str] = "gaussian (DP-SGD, Poisson subsampling)"

    def _sampling(self, n: int) -> tuple[float, int, str]:
        hp = self.hyperparameters
        if hp.batch_size > n:
            raise InfeasibleConfigurationError(
                f"dpctgan: batch_size ({hp.batch_size}) exceeds the {n} rows"
            )
        q = hp.batch_size / n
        return q, max(1, math.ceil(hp.epochs / q)), f"batch_size {hp.batch_size}"

    @property
    def _sensitivity(self) -> float:
        return 2 * self.hyperparameters.max_per_sample_grad_norm

    def _training_charge(self, n: int, steps: int, eps: float) -> str:
        hp = self.hyperparameters
        return (
            f"dpctgan: DP-SGD on the discriminator, {steps} Poisson steps (q "
            f"{hp.batch_size / n:.4g}, noise multiplier {hp.noise_multiplier:g}, clip "
            f"{hp.max_per_sample_grad_norm:g}); PLD accountant, replace-one: epsilon "
            f"{eps:.4g} at delta {hp.delta:g}"
        )

    def _train(
        self, onehot: np.ndarray, sizes: tuple[int, ...], steps: int, rng: PrivacyRNG
    ) -> Any:
        from synthflow.generators.dpsgd import train_dpctgan  # noqa: PLC0415

        hp = self.hyperparameters
        result = train_dpctgan(
            onehot,
            sizes,
            steps=steps,
            sample_rate=hp.batch_size / len(onehot),
            noise_multiplier=hp.noise_multiplier,
            clip=hp.max_per_sample_grad_norm,
            loss=hp.loss,
            embedding_dim=hp.embedding_dim,
            hidden=hp.hidden,
            generator_lr=hp.generator_lr,
            discriminator_lr=hp.discriminator_lr,
            generator_decay=hp.generator_decay,
            discriminator_decay=hp.discriminator_decay,
            generator_steps=hp.generator_steps,
            generator=rng.generator(),
        )
        self.epochs_trained_ = result.steps * hp.batch_size / len(onehot)
        self.batch_sizes_ = result.batch_sizes
        return result


class PATECTGAN(_DPGAN):
    """PATE-GAN with CTGAN's networks, our loop (:mod:`synthflow.generators.pate`).

    (epsilon, delta)-DP, replace-one neighbours, with a data-independent bound: the
    teachers' votes are a Poisson-subsampled Gaussian over ``n // rows_per_teacher``
    teachers (each joins a vote with probability ``teachers_per_vote / teachers``), so
    the accountant is DP-SGD's with teachers in the place of rows. One step is one
    epoch of every teacher over its partition: the grid's ``epochs`` are steps, capped
    by the budget before training. ``noise_multiplier`` is the Gaussian's, relative to
    a vote's norm bound (smartnoise's was an inverse Laplace scale, with a
    data-dependent accountant).

    Measured at 10K NVSS rows (noise 5), the votes teach the generator nothing visible:
    raked to the 1-way marginals, max error over all marginals 0.026-0.030 over 3 fits,
    as the raked *untrained* network (0.029); ``benchmarks/pate_sizing.py`` sizes the
    signal. What makes it useful there is the 2-way tuning (``benchmarks/gans.py``).
    """

    name: ClassVar[str] = "patectgan"
    Hyperparameters: ClassVar[type] = PATECTGANHyperparameters
    mechanism: ClassVar[str] = "gaussian (PATE votes, Poisson subsampling of teachers)"

    max_teacher_bytes: ClassVar[int] = 2 * 2**30
    """Largest memory the teachers may take (weights, Adam's two moments, partitions)."""

    def teachers(self, n: int) -> int:
        """Number of teachers on ``n`` (public) rows."""
        return n // self.hyperparameters.rows_per_teacher

    def teacher_bytes(self, domain: Domain, n: int) -> int:
        """Memory of the teachers on ``n`` rows (float32): weights x 3 (Adam) + partitions."""
        h, dim = self.hyperparameters.teacher_hidden, int(sum(domain.sizes))
        weights = h * dim + h + h * h + h + h + 1
        return 4 * (3 * self.teachers(n) * weights + n * dim)

    def check_feasible(self, domain: Domain, n: int) -> None:
        """Refuse, before any charge, too little budget for one step or too many teachers."""
        need = self.teacher_bytes(domain, n)
        if need > self.max_teacher_bytes:
            hp = self.hyperparameters
            raise InfeasibleConfigurationError(
                f"patectgan: {self.teachers(n):,} teachers ({n:,} rows / rows_per_teacher "
                f"{hp.rows_per_teacher}) of width {hp.teacher_hidden} need "
                f"{need / 2**30:.1f} GiB (limit {self.max_teacher_bytes / 2**30:.0f} GiB); raise "
                "rows_per_teacher or lower teacher_hidden"
            )
        super().check_feasible(domain, n)

    def _sampling(self, n: int) -> tuple[float, int, str]:
        hp = self.hyperparameters
        k = self.teachers(n)
        if k < 1:
            raise InfeasibleConfigurationError(
                f"patectgan: rows_per_teacher ({hp.rows_per_teacher}) exceeds the {n} rows"
            )
        q = min(1.0, hp.teachers_per_vote / k)
        return q, hp.epochs, f"{k} teachers ({hp.teachers_per_vote} per vote on average)"

    @property
    def _sensitivity(self) -> float:
        return 2 * math.sqrt(self.hyperparameters.batch_size) / 2  # 2 C: one teacher replaced

    def _training_charge(self, n: int, steps: int, eps: float) -> str:
        hp = self.hyperparameters
        q, _, _ = self._sampling(n)
        return (
            f"patectgan: PATE teacher votes, {steps} steps, {self.teachers(n)} teachers on "
            f"disjoint partitions, each joining a vote with probability {q:.4g}; Gaussian "
            f"noise multiplier {hp.noise_multiplier:g} on vote sums of {hp.batch_size} "
            f"generated rows (L2 bound sqrt({hp.batch_size})/2 per teacher); PLD accountant, "
            f"replace-one: epsilon {eps:.4g} at delta {hp.delta:g}"
        )

    def _train(
        self, onehot: np.ndarray, sizes: tuple[int, ...], steps: int, rng: PrivacyRNG
    ) -> Any:
        from synthflow.generators.pate import train_patectgan  # noqa: PLC0415

        hp = self.hyperparameters
        q, _, _ = self._sampling(len(onehot))
        result = train_patectgan(
            onehot,
            sizes,
            steps=steps,
            teachers=self.teachers(len(onehot)),
            teacher_rate=q,
            noise_multiplier=hp.noise_multiplier,
            batch_size=hp.batch_size,
            loss=hp.loss,
            regularization=hp.regularization,
            embedding_dim=hp.embedding_dim,
            hidden=hp.hidden,
            teacher_hidden=hp.teacher_hidden,
            teacher_lr=hp.teacher_lr,
            generator_lr=hp.generator_lr,
            discriminator_lr=hp.discriminator_lr,
            generator_decay=hp.generator_decay,
            discriminator_decay=hp.discriminator_decay,
            generator=rng.generator(),
        )
        self.epochs_trained_ = result.steps
        self.teachers_ = result.teachers
        self.voters_ = result.voters
        return result

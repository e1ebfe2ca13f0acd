"""Our DP-SGD training of a CTGAN-style GAN (DPCTGAN), every random draw from the CSPRNG.

Xie et al. "Differentially Private Generative Adversarial Network" 2018; the networks are
CTGAN's (Xu et al. 2019): a generator of residual blocks (linear, batch norm, ReLU,
concatenated with the block's input) ending in one softmax block per column, and a
discriminator of two LeakyReLU(0.2) + dropout(0.5) layers. CTGAN's conditional vector
is not used (it would need the private category frequencies), and the discriminator sees
one row at a time (``pac`` 1: DP-SGD clips per row).

**One training step** (the only place private rows are read):

1. *Poisson subsampling*: each row joins the batch independently with probability
   ``q = batch_size / n``, the draws coming from the :class:`~synthflow.privacy.rng.PrivacyRNG`
   (ChaCha20 in release mode); the batch size is therefore binomial, never fixed.
2. *Per-row gradients* of the discriminator's loss on each real row
   (``torch.func.vmap`` of ``torch.func.grad``), each *clipped* to L2 norm ``C``
   over all parameters, then summed.
3. *Gaussian noise* of standard deviation ``noise_multiplier * C``, drawn as standard
   normals from the CSPRNG stream, is added to the sum; the loss on generated rows (a
   function of the generator, itself post-processing) is added without noise, and the
   total is divided by the public expected batch size ``q n``.
4. An Adam step of the discriminator; then ``generator_steps`` Adam steps of the
   generator through the (already private) discriminator: post-processing, free. Five
   by default: at 10K NVSS rows, the grid's noise 5 and 911 steps, the raked output's
   max error over all marginals went, one step -> five, from 0.027 / 0.023 to 0.023 /
   0.020 (two seeds) on the shared sample and from 0.029 / 0.029 to 0.026 / 0.027 on
   another 10K sample of the 160K file (means of 6 draws each).

Latent vectors, Gumbel noise and dropout masks also come from the stream, and the
networks are initialised from it (no ``nn.Linear``, whose constructor runs torch's
initialiser): no torch or numpy global generator is touched anywhere in training. The
privacy cost is accounted by :mod:`synthflow.privacy.accounting` (PLD, replace-one) before
training, and the number of steps is capped so that it stays within the charged
(epsilon, delta).

Gaussian noise is drawn from 64-bit floats (numpy's ziggurat over ChaCha20 bits) and
rounded to float32: the usual floating-point caveat of DP-SGD implementations
(``docs/privacy.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from synthflow.generators._ctgan_nets import (  # also imported from here by tests
    _discriminate,
    _discriminator_params,
    _fake_loss,
    _fake_rows,
    _generator_network,
    _real_loss,
)

__all__ = ["DPSGDResult", "TorchStream", "poisson_batch", "train_dpctgan"]


class TorchStream:
    """Random torch tensors drawn from a numpy Generator (the PrivacyRNG's stream)."""

    def __init__(self, generator: np.random.Generator, torch: Any) -> None:
        self.g = generator
        self.torch = torch

    def normal(self, *shape: int) -> Any:
        """Standard normal float32 tensor."""
        return self.torch.from_numpy(self.g.standard_normal(shape).astype(np.float32))

    def uniform(self, *shape: int, low: float = 0.0, high: float = 1.0) -> Any:
        """Uniform float32 tensor on [low, high)."""
        return self.torch.from_numpy(self.g.uniform(low, high, shape).astype(np.float32))

    def gumbel(self, *shape: int) -> Any:
        """Standard Gumbel float32 tensor, ``-log(-log(u))`` computed in 64 bits.

        A float64 uniform below 1 can round to exactly 1.0 in float32 (about 3e-8 of
        draws): ``-log(-log(1))`` is infinite and its softmax NaN, which then spreads into
        every weight. In 64 bits ``u < 1`` keeps ``-log(u) > 0``: the noise stays finite
        (below 37 with ``u >= 1e-16``).
        """
        u = self.g.uniform(1e-16, 1.0, shape)
        return self.torch.from_numpy((-np.log(-np.log(u))).astype(np.float32))

    def dropout_masks(self, rows: int, hidden: int) -> tuple[Any, Any]:
        """The discriminator's two dropout masks (keep probability 1/2) for ``rows`` rows."""
        return self.bernoulli(0.5, rows, hidden), self.bernoulli(0.5, rows, hidden)

    def bernoulli(self, p: float, *shape: int) -> Any:
        """0/1 float32 tensor, each entry 1 with probability ``p``."""
        return self.torch.from_numpy((self.g.random(shape) < p).astype(np.float32))


def poisson_batch(n: int, q: float, generator: np.random.Generator) -> np.ndarray:
    """Indices of one Poisson-subsampled batch: each of ``n`` rows with probability ``q``."""
    return np.flatnonzero(generator.random(n) < q)


def _import_torch() -> Any:
    import torch  # noqa: PLC0415  (optional extra)

    return torch


@dataclass(frozen=True)
class DPSGDResult:
    """What training leaves: the generator and the public facts of the run."""

    generator: Any
    steps: int
    sample_rate: float
    batch_sizes: tuple[int, ...]
    """Size of each Poisson batch (drawn before any row is read: independent of the data)."""


CLIP_MARGIN = 1e-6
"""Relative margin below the clip norm C that per-row gradients are scaled to."""


def clip_and_sum(torch: Any, grads: dict[str, Any], clip: float) -> dict[str, Any]:
    """Clip each row's gradient (over all parameters) to L2 norm ``clip``; sum the rows.

    ``grads`` holds per-row gradients with the row on axis 0.
    """
    norms = torch.sqrt(sum((g.reshape(g.shape[0], -1) ** 2).sum(dim=1) for g in grads.values()))
    # Clipped to C (1 - CLIP_MARGIN): float32 rounding left norms up to 1.0000000681 C
    # (measured) when clipping to exactly C; the margin keeps every norm <= C.
    factor = torch.clamp(clip * (1.0 - CLIP_MARGIN) / (norms + 1e-12), max=1.0)
    return {
        k: (g * factor.reshape(-1, *([1] * (g.dim() - 1)))).sum(dim=0) for k, g in grads.items()
    }


def train_dpctgan(
    onehot: np.ndarray,
    sizes: tuple[int, ...],
    *,
    steps: int,
    sample_rate: float,
    noise_multiplier: float,
    clip: float,
    loss: str,
    embedding_dim: int,
    hidden: int,
    generator_lr: float,
    discriminator_lr: float,
    generator_decay: float,
    discriminator_decay: float,
    generator: np.random.Generator,
    generator_steps: int = 1,
) -> DPSGDResult:
    """Train with DP-SGD for ``steps`` steps; see the module docstring.

    ``generator_steps``: generator Adam steps after each discriminator step (they read
    no private row, so they cost no budget).

    ``onehot`` (n rows, sum(sizes) columns) is the private data; it is read only inside
    the clipped, noised discriminator step. The caller has charged the budget.
    """
    torch = _import_torch()
    stream = TorchStream(generator, torch)
    n, dim = onehot.shape
    data = torch.from_numpy(onehot.astype(np.float32))
    gen_net = _generator_network(torch, stream, embedding_dim, hidden, dim)
    params = _discriminator_params(torch, stream, dim, hidden)
    opt_d = torch.optim.Adam(
        list(params.values()),
        lr=discriminator_lr,
        betas=(0.5, 0.9),
        weight_decay=discriminator_decay,
    )
    opt_g = torch.optim.Adam(
        gen_net.parameters(), lr=generator_lr, betas=(0.5, 0.9), weight_decay=generator_decay
    )
    real_loss, fake_loss = _real_loss(torch, loss), _fake_loss(torch, loss)
    expected = sample_rate * n  # public: q and n are
    fake_rows = max(2, round(expected))
    per_row = _per_row_gradients(torch, real_loss)
    sizes_seen: list[int] = []
    for _ in range(steps):
        # --- discriminator: the DP step --------------------------------------------------
        rows = poisson_batch(n, sample_rate, generator)
        sizes_seen.append(len(rows))
        x = data[torch.from_numpy(rows)] if len(rows) else None
        total = _noisy_sum(torch, params, per_row, x, stream, hidden, clip, noise_multiplier)
        with torch.no_grad():
            fake = _fake_rows(torch, gen_net, stream, fake_rows, dim_z=embedding_dim, sizes=sizes)
        fmasks = stream.dropout_masks(fake_rows, hidden)
        fake_sum = fake_loss(_discriminate(torch, params, fake, fmasks)).sum()
        fake_grads = torch.autograd.grad(fake_sum, list(params.values()))
        opt_d.zero_grad(set_to_none=False)
        for (k, p), fg in zip(params.items(), fake_grads, strict=True):
            p.grad = (total[k] + fg) / expected
        opt_d.step()
        # --- generator: post-processing of the private discriminator ---------------------
        d_params = {k: v.detach() for k, v in params.items()}
        for _ in range(generator_steps):
            fake = _fake_rows(torch, gen_net, stream, fake_rows, dim_z=embedding_dim, sizes=sizes)
            gmasks = stream.dropout_masks(fake_rows, hidden)
            g_loss = real_loss(_discriminate(torch, d_params, fake, gmasks)).mean()
            opt_g.zero_grad(set_to_none=True)
            g_loss.backward()
            opt_g.step()
    gen_net.eval()
    return DPSGDResult(
        generator=gen_net, steps=steps, sample_rate=sample_rate, batch_sizes=tuple(sizes_seen)
    )


def _per_row_gradients(torch: Any, real_loss: Callable[[Any], Any]) -> Callable[..., Any]:
    """Per-row gradients of the discriminator's loss on real rows (``torch.func``)."""
    from torch.func import grad, vmap  # noqa: PLC0415

    def one_real(p: dict[str, Any], x: Any, m0: Any, m1: Any) -> Any:
        return real_loss(_discriminate(torch, p, x.unsqueeze(0), (m0, m1))).sum()

    return vmap(grad(one_real), in_dims=(None, 0, 0, 0))


def _noisy_sum(  # noqa: PLR0917  (one DP step's parts)
    torch: Any,
    params: dict[str, Any],
    per_row: Callable[..., dict[str, Any]],
    x: Any,
    stream: TorchStream,
    hidden: int,
    clip: float,
    noise_multiplier: float,
) -> dict[str, Any]:
    """The DP step's gradient: the batch's clipped per-row gradients, summed, plus noise.

    ``x``: the Poisson batch's rows (None for an empty batch, whose sum is zero); the
    Gaussian noise has standard deviation ``noise_multiplier * clip``.
    """
    frozen = {k: v.detach() for k, v in params.items()}
    total = {k: torch.zeros_like(v) for k, v in params.items()}
    if x is not None:
        masks = stream.dropout_masks(len(x), hidden)
        total = clip_and_sum(torch, per_row(frozen, x, *masks), clip)
    for v in total.values():
        v.add_(stream.normal(*v.shape) * (noise_multiplier * clip))
    return total

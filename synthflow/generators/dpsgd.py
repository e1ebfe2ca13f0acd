"""Our DP-SGD training of a CTGAN-style GAN (DPCTGAN), every random draw from the CSPRNG.

Xie et al. "Differentially Private Generative Adversarial Network" 2018; the networks are
CTGAN's (Xu et al. 2019): a generator of residual blocks (linear, batch norm, ReLU,
concatenated with the block's input) ending in one softmax block per column, and a
discriminator of two LeakyReLU(0.2) + dropout(0.5) layers. CTGAN's conditional vector
is not used (it would need the private category frequencies), and the discriminator sees
one row at a time (``pac`` 1: DP-SGD clips per row).

**One training step** (the only place private rows are read):

1. *Poisson subsampling*: each row joins the batch independently with probability
   ``q = batch_size / n``, the draws coming from the :class:`~synthflow.rng.PrivacyRNG`
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
privacy cost is accounted by :mod:`synthflow.accounting` (PLD, replace-one) before
training, and the number of steps is capped so that it stays within the charged
(epsilon, delta).

Gaussian noise is drawn from 64-bit floats (numpy's ziggurat over ChaCha20 bits) and
rounded to float32: the usual floating-point caveat of DP-SGD implementations
(``docs/privacy.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

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


def _linear(torch: Any, stream: TorchStream, fan_in: int, fan_out: int) -> Any:
    """A linear layer initialised as torch's (uniform +-1/sqrt(fan_in)), from the stream.

    Built here rather than as ``nn.Linear``, whose constructor runs torch's initialiser.
    """
    nn = torch.nn
    bound = 1.0 / math.sqrt(fan_in)

    class Linear(nn.Module):  # type: ignore[name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.weight = nn.Parameter(stream.uniform(fan_out, fan_in, low=-bound, high=bound))
            self.bias = nn.Parameter(stream.uniform(fan_out, low=-bound, high=bound))

        def forward(self, x: Any) -> Any:
            return nn.functional.linear(x, self.weight, self.bias)

    return Linear()


def _generator_network(torch: Any, stream: TorchStream, dim_z: int, hidden: int, out: int) -> Any:
    nn = torch.nn

    class Residual(nn.Module):  # type: ignore[name-defined]  # CTGAN's block: [ReLU(BN(Wx)), x]
        def __init__(self, i: int, o: int) -> None:
            super().__init__()
            self.fc = _linear(torch, stream, i, o)
            self.bn = nn.BatchNorm1d(o)

        def forward(self, x: Any) -> Any:
            return torch.cat([torch.relu(self.bn(self.fc(x))), x], dim=1)

    return nn.Sequential(
        Residual(dim_z, hidden),
        Residual(dim_z + hidden, hidden),
        _linear(torch, stream, dim_z + 2 * hidden, out),
    )


def _discriminator_params(torch: Any, stream: TorchStream, dim: int, hidden: int) -> dict[str, Any]:
    layers = [_linear(torch, stream, dim, hidden), _linear(torch, stream, hidden, hidden)]
    layers.append(_linear(torch, stream, hidden, 1))
    params = {}
    for i, layer in enumerate(layers):
        params[f"w{i}"] = layer.weight.detach().clone().requires_grad_(True)
        params[f"b{i}"] = layer.bias.detach().clone().requires_grad_(True)
    return params


def _discriminate(torch: Any, params: dict[str, Any], x: Any, masks: tuple[Any, Any]) -> Any:
    """CTGAN's discriminator with explicit dropout masks (kept 1/0, scaled by 2)."""
    f = torch.nn.functional
    h = f.leaky_relu(f.linear(x, params["w0"], params["b0"]), 0.2) * masks[0] * 2.0
    h = f.leaky_relu(f.linear(h, params["w1"], params["b1"]), 0.2) * masks[1] * 2.0
    return f.linear(h, params["w2"], params["b2"]).squeeze(-1)


def _real_loss(torch: Any, loss: str) -> Callable[[Any], Any]:
    f = torch.nn.functional
    return (lambda d: f.softplus(-d)) if loss == "cross_entropy" else (lambda d: -d)


def _fake_loss(torch: Any, loss: str) -> Callable[[Any], Any]:
    f = torch.nn.functional
    return f.softplus if loss == "cross_entropy" else (lambda d: d)


def _gumbel_softmax(torch: Any, logits: Any, sizes: tuple[int, ...], stream: TorchStream) -> Any:
    """CTGAN's output activation: a Gumbel-softmax (tau 0.2) per column, noise from the stream."""
    y = (logits + stream.gumbel(*logits.shape)) / 0.2
    parts, st = [], 0
    for k in sizes:
        parts.append(torch.softmax(y[:, st : st + k], dim=1))
        st += k
    return torch.cat(parts, dim=1)


def _fake_rows(
    torch: Any, gen_net: Any, stream: TorchStream, rows: int, *, dim_z: int, sizes: tuple[int, ...]
) -> Any:
    """``rows`` generated rows: latent normals, the generator, a Gumbel-softmax per column."""
    return _gumbel_softmax(torch, gen_net(stream.normal(rows, dim_z)), sizes, stream)


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
    # Long: DP-CTGAN's training loop with its accountant, as in the reference implementation.
    torch = _import_torch()
    from torch.func import grad, vmap  # noqa: PLC0415

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

    def one_real(p: dict[str, Any], x: Any, m0: Any, m1: Any) -> Any:
        return real_loss(_discriminate(torch, p, x.unsqueeze(0), (m0, m1))).sum()

    per_row = vmap(grad(one_real), in_dims=(None, 0, 0, 0))
    sizes_seen: list[int] = []
    for _ in range(steps):
        # --- discriminator: the DP step --------------------------------------------------
        rows = poisson_batch(n, sample_rate, generator)
        sizes_seen.append(len(rows))
        frozen = {k: v.detach() for k, v in params.items()}
        total = {k: torch.zeros_like(v) for k, v in params.items()}
        if len(rows):
            x = data[torch.from_numpy(rows)]
            masks = stream.dropout_masks(len(rows), hidden)
            total = clip_and_sum(torch, per_row(frozen, x, *masks), clip)
        for v in total.values():
            v.add_(stream.normal(*v.shape) * (noise_multiplier * clip))
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

"""Our PATE training of a CTGAN-style GAN (PATECTGAN), worst-case accounting, CSPRNG only.

Jordon, Yoon, van der Schaar. "PATE-GAN" ICLR 2019: teacher discriminators, each on a
disjoint partition of the private rows, label generated rows as real or fake; a student
discriminator learns from those labels only, and the generator plays against the
student. The published PATE-GAN accountants (and smartnoise's) bound the cost from the
*private* votes (data-dependent moments), which this project does not publish or use.
With a data-independent bound, noisy per-label votes at the grid's noise buy only a few
useful labels (``benchmarks/pate_sizing.py``). The aggregation here is instead a
**Poisson-subsampled Gaussian over teachers**: the accountant is DP-SGD's, with teachers
in the place of rows.

**One step** (teachers are the only place private rows are read):

1. *Teachers*: each teacher takes one Adam step (``teacher_lr``) on its whole partition
   (real) against one batch of generated rows (fake). Teachers are never released.
2. *Votes*: ``batch_size`` generated rows ``x_j``. Each teacher joins the vote
   independently with probability ``q`` (drawn from the CSPRNG, not from the data).
   A joining teacher's vote is the vector ``v_t = sigmoid(D_t(x_j)) - 1/2`` over the
   rows, of L2 norm at most ``C = sqrt(batch_size) / 2`` (clipped to it explicitly). A
   replaced private row changes one partition, so one teacher: the sum of the joining
   teachers' votes moves by at most ``2 C`` (replace-one). Gaussian noise of standard
   deviation ``noise_multiplier * C`` from the CSPRNG stream is added to the sum. The
   soft label of row j is ``1/2 + S_j / (q k)``, an unbiased estimate of the teachers'
   mean belief that ``x_j`` is real (``k`` teachers and ``q`` are public).
3. *Student*: one Adam step of the student discriminator (CTGAN's, dropout from the
   stream) on the generated rows, cross-entropy against the soft labels written linearly
   in the label (``softplus(d) - y d``: unbiased under the vote noise, its minimiser is
   the teachers' mean belief). Post-processing of the noisy votes.
4. *Generator*: one Adam step against the student. Post-processing.

Privacy: the noisy vote sums are the only outputs that depend on private rows; each
step is a Poisson-subsampled Gaussian mechanism over the teachers (adaptive
composition: a teacher's state depends on its own partition and on the public history).
The partition is a CSPRNG permutation of row positions (independent of the data); the
``n - k r`` rows left over by ``r = n // k`` rows per teacher are never read. The
number of steps is capped before training by :mod:`synthflow.privacy.accounting` (PLD,
replace-one), exactly as for DP-SGD.

What it can learn is small at 10K rows and epsilon 4: with 100 teachers of 100 rows,
one label's signal-to-noise ratio ``q k / (noise sqrt(batch))`` is about 0.04-0.1
(``benchmarks/pate_sizing.py``). Measured on the NVSS 10K sample, generator's own max
error over all marginals (before raking): 0.26 after 300 steps without noise (so the
loop learns), 0.67-0.89 with the grid's noise 5 (232 steps), 0.67 untrained; after
raking 0.026-0.030, as the raked untrained network (0.029). It grows with the rows. The
2-way tuning of the trained generator (:func:`synthflow.generators.gan.fit_to_marginals`,
on measured 2-way tables) is what brings a 10K release below independent columns.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from synthflow.generators._ctgan_nets import (
    _discriminate,
    _discriminator_params,
    _fake_rows,
    _generator_network,
    _real_loss,
)
from synthflow.generators.dpsgd import CLIP_MARGIN, TorchStream, _import_torch, poisson_batch

__all__ = ["PATEResult", "partition", "teacher_votes", "train_patectgan"]


@dataclass(frozen=True)
class PATEResult:
    """What training leaves: the generator and the public facts of the run."""

    generator: Any
    steps: int
    teachers: int
    rows_per_teacher: int
    voters: tuple[int, ...]
    """Number of teachers that joined each step's vote (drawn independently of the data)."""


def partition(n: int, teachers: int, generator: np.random.Generator) -> np.ndarray:
    """Row positions of each teacher, shape (teachers, n // teachers): a CSPRNG permutation.

    Depends on ``n`` only (public), never on the rows; the ``n mod teachers`` positions
    left over are never read.
    """
    if not 1 <= teachers <= n:
        raise ValueError(f"teachers ({teachers}) must be between 1 and the {n} rows")
    per = n // teachers
    return generator.permutation(n)[: teachers * per].reshape(teachers, per)


def _teacher_params(torch: Any, stream: TorchStream, k: int, dim: int, hidden: int) -> list[Any]:
    """Stacked weights of ``k`` independent two-layer MLPs, torch's initialisation."""
    shapes = [(hidden, dim), (hidden, hidden), (1, hidden)]
    params = []
    for out, fan_in in shapes:
        bound = 1.0 / math.sqrt(fan_in)
        params.append(stream.uniform(k, out, fan_in, low=-bound, high=bound).requires_grad_(True))
        params.append(stream.uniform(k, out, low=-bound, high=bound).requires_grad_(True))
    return params


def _teachers(torch: Any, params: list[Any], x: Any) -> Any:
    """Logits of every teacher on its own rows: ``x`` is (k, m, dim) -> (k, m)."""
    f = torch.nn.functional
    w0, b0, w1, b1, w2, b2 = params
    h = f.leaky_relu(torch.einsum("kmd,khd->kmh", x, w0) + b0[:, None, :], 0.2)
    h = f.leaky_relu(torch.einsum("kmh,kgh->kmg", h, w1) + b1[:, None, :], 0.2)
    return (torch.einsum("kmh,kgh->kmg", h, w2) + b2[:, None, :]).squeeze(-1)


def teacher_votes(
    torch: Any,
    logits: Any,
    *,
    noise_multiplier: float,
    stream: TorchStream,
) -> tuple[Any, float]:
    """Noisy sum of the joining teachers' centred votes, and the clip norm ``C``.

    ``logits`` is (joining teachers, rows). Each teacher's vote vector
    ``sigmoid(logits) - 1/2`` is clipped to L2 norm ``C = sqrt(rows) / 2`` (it is within
    that bound already; the clip makes the sensitivity explicit), the vectors are summed
    and Gaussian noise of standard deviation ``noise_multiplier * C`` is added.
    """
    rows = int(logits.shape[-1])
    clip = math.sqrt(rows) / 2.0
    votes = torch.sigmoid(logits.double()) - 0.5
    norms = torch.linalg.vector_norm(votes, dim=-1, keepdim=True)
    votes = votes * torch.clamp(clip * (1.0 - CLIP_MARGIN) / (norms + 1e-12), max=1.0)
    noise = torch.from_numpy(stream.g.standard_normal(rows)) * (noise_multiplier * clip)
    return votes.sum(dim=0) + noise, clip


def train_patectgan(
    onehot: np.ndarray,
    sizes: tuple[int, ...],
    *,
    steps: int,
    teachers: int,
    teacher_rate: float,
    noise_multiplier: float,
    batch_size: int,
    loss: str,
    regularization: str,
    embedding_dim: int,
    hidden: int,
    teacher_hidden: int,
    teacher_lr: float,
    generator_lr: float,
    discriminator_lr: float,
    generator_decay: float,
    discriminator_decay: float,
    generator: np.random.Generator,
) -> PATEResult:
    """Train for ``steps`` steps; see the module docstring.

    ``onehot`` (n rows, sum(sizes) columns) is the private data; only the teachers read
    it, and only the noisy vote sums leave them. The caller has charged the budget.
    """
    torch = _import_torch()
    stream = TorchStream(generator, torch)
    n, dim = onehot.shape
    parts = partition(n, teachers, generator)
    real = torch.from_numpy(onehot.astype(np.float32))[torch.from_numpy(parts)]  # (k, r, dim)
    per = parts.shape[1]
    gen_net = _generator_network(torch, stream, embedding_dim, hidden, dim)
    t_params = _teacher_params(torch, stream, teachers, dim, teacher_hidden)
    s_params = _discriminator_params(torch, stream, dim, hidden)
    adam = {"betas": (0.5, 0.9)}
    opt_t = torch.optim.Adam(t_params, lr=teacher_lr, weight_decay=discriminator_decay, **adam)
    opt_s = torch.optim.Adam(
        list(s_params.values()), lr=discriminator_lr, weight_decay=discriminator_decay, **adam
    )
    opt_g = torch.optim.Adam(
        gen_net.parameters(), lr=generator_lr, weight_decay=generator_decay, **adam
    )
    g_loss_of = _real_loss(torch, loss)
    voters: list[int] = []

    def fakes(rows: int) -> Any:
        return _fake_rows(torch, gen_net, stream, rows, dim_z=embedding_dim, sizes=sizes)

    for _ in range(steps):
        # --- 1. teachers: one step each on its own partition (never released) -------------
        with torch.no_grad():
            fake_t = fakes(per)
        _teacher_step(torch, t_params, opt_t, real, fake_t.expand(teachers, -1, -1))
        # --- 2. the private release: noisy votes of a Poisson sample of teachers ---------
        with torch.no_grad():
            x = fakes(batch_size)
            joining = poisson_batch(teachers, teacher_rate, generator)
            voters.append(len(joining))
            noisy = _vote(torch, t_params, x, joining, stream, noise_multiplier=noise_multiplier)
            target = (0.5 + noisy / (teacher_rate * teachers)).float()
        # --- 3. student: post-processing of the noisy votes ------------------------------
        dragan = regularization == "dragan"
        s_loss = _student_loss(torch, s_params, x, target, stream, hidden=hidden, dragan=dragan)
        opt_s.zero_grad(set_to_none=True)
        s_loss.backward()
        opt_s.step()
        # --- 4. generator against the student --------------------------------------------
        fake, fmasks = fakes(batch_size), stream.dropout_masks(batch_size, hidden)
        _generator_step(torch, opt_g, s_params, fake, fmasks, loss_of=g_loss_of)
    gen_net.eval()
    return PATEResult(
        generator=gen_net,
        steps=steps,
        teachers=teachers,
        rows_per_teacher=per,
        voters=tuple(voters),
    )


def _teacher_step(torch: Any, params: list[Any], opt: Any, real: Any, fake: Any) -> None:
    """One Adam step of every teacher: its own partition ``real`` against ``fake`` rows."""
    softplus = torch.nn.functional.softplus
    logits_real = _teachers(torch, params, real)
    logits_fake = _teachers(torch, params, fake)
    t_loss = (softplus(-logits_real).mean(dim=1) + softplus(logits_fake).mean(dim=1)).sum()
    opt.zero_grad(set_to_none=True)
    t_loss.backward()
    opt.step()


def _vote(
    torch: Any,
    params: list[Any],
    x: Any,
    joining: np.ndarray,
    stream: TorchStream,
    *,
    noise_multiplier: float,
) -> Any:
    """The noisy sum of the ``joining`` teachers' votes on the generated rows ``x``."""
    sub = [p[torch.from_numpy(joining)] for p in params]
    logits = _teachers(torch, sub, x.expand(len(joining), -1, -1))
    noisy, _ = teacher_votes(torch, logits, noise_multiplier=noise_multiplier, stream=stream)
    return noisy


def _generator_step(
    torch: Any,
    opt: Any,
    student: dict[str, Any],
    fake: Any,
    masks: tuple[Any, Any],
    *,
    loss_of: Callable[[Any], Any],
) -> None:
    """One Adam step of the generator (which made ``fake``) against the frozen student."""
    frozen = {k: v.detach() for k, v in student.items()}
    g_loss = loss_of(_discriminate(torch, frozen, fake, masks))
    opt.zero_grad(set_to_none=True)
    g_loss.mean().backward()
    opt.step()


def _student_loss(
    torch: Any,
    params: dict[str, Any],
    x: Any,
    target: Any,
    stream: TorchStream,
    *,
    hidden: int,
    dragan: bool,
) -> Any:
    """The student's loss on the generated rows ``x`` against their noisy soft labels.

    Dropout masks come from the stream; ``dragan``: with DRAGAN's gradient penalty.
    """
    softplus = torch.nn.functional.softplus
    rows = len(x)
    d = _discriminate(torch, params, x, stream.dropout_masks(rows, hidden))
    # Cross-entropy against the soft label, linear in the label: its expectation over
    # the vote noise is the cross-entropy against the teachers' mean belief (unbiased
    # for any noisy label, even outside [0, 1]).
    s_loss = (softplus(d) - target * d).mean()
    if dragan:  # Kodali et al. 2017: gradient penalty near the rows
        near = (x + 0.5 * x.std() * stream.uniform(*x.shape)).requires_grad_(True)
        d_near = _discriminate(torch, params, near, stream.dropout_masks(rows, hidden))
        (gx,) = torch.autograd.grad(d_near.sum(), near, create_graph=True)
        s_loss = s_loss + 10.0 * ((gx.norm(dim=1) - 1.0) ** 2).mean()
    return s_loss

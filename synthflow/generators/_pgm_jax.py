"""Private-PGM's mirror descent with one compiled step per model structure (jax).

``mbi.estimation.mirror_descent`` (mbi 1.1.0) defines its step with ``@jax.jit`` inside
the function, closing over the loss: every call traces and compiles again (about 90 s of
a fit on the 15-column wide table, 2 cores), and the measurement values become constants
of the compiled program. Here the step is a module-level jitted function whose noisy
values, noise sds, known total and step size are traced *arguments*; its only static
arguments are public structure (the measured cliques; the domain and the potentials'
cliques travel in the potentials' pytree definition). jax's in-memory cache then keys on
structure and shapes alone: a second fit of a model with the same structure reuses the
compiled step, and no compiled program holds a measured value. (jax's persistent, on-disk
compilation cache is not enabled here.)

The algorithm is mbi's, unchanged: Algorithm 1 of McKenna, Sheldon, Miklau (ICML 2019),
the loss ``sum_m 0.5 || (mu_m - y_m) / sd_m ||^2`` over the marginals ``mu`` of the
potentials (``marginal_oracles.message_passing_fast``), the starting step ``2 / (L n)``
with ``L`` the loss gradient's Lipschitz constant (50 power iterations on the
Hessian-vector product from the all-ones vector, as ``marginal_loss.calculate_l2_lipschitz``;
its jitted iteration likewise takes the sds as arguments),
and the Armijo line search (step x1.01 on sufficient decrease, else x0.5 and the move
rejected). Everything here is post-processing of released measurements.
"""

from __future__ import annotations

import collections
import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from mbi import CliqueVector, Domain, MarkovRandomField
from mbi.clique_utils import maximal_subset
from mbi.marginal_oracles import message_passing_fast

__all__ = ["TRACES", "mirror_descent"]

Clique = tuple[str, ...]

TRACES: collections.Counter[str] = collections.Counter()
"""How many times each jitted function was traced (each trace is one compilation)."""


def _loss(
    mu: CliqueVector, y: tuple[jax.Array, ...], sd: jax.Array, measured: tuple[Clique, ...]
) -> jax.Array:
    """The L2 loss of mbi's ``marginal_loss.from_linear_measurements``, values as arguments."""
    loss: Any = 0.0
    for i, clique in enumerate(measured):
        stddev = jnp.maximum(sd[i], 1e-12)  # as mbi: no inf/nan from exact invariants
        diff = (mu.project(clique).datavector() - y[i]) / stddev
        loss += 0.5 * jnp.vdot(diff, diff)
    return loss


@functools.partial(jax.jit, static_argnames=("domain", "measured"))
def _power_step(
    v: CliqueVector,
    y: tuple[jax.Array, ...],
    sd: jax.Array,
    *,
    domain: Domain,
    measured: tuple[Clique, ...],
) -> tuple[CliqueVector, jax.Array]:
    """One power iteration on the loss's Hessian (``calculate_l2_lipschitz`` in mbi).

    The loss is quadratic, so its Hessian does not depend on ``y`` or on the point
    (mbi's ``x0``, zeros); ``y`` is an argument only to write the same loss as the step.
    """
    TRACES["lipschitz"] += 1
    x0 = CliqueVector.zeros(domain, v.cliques)
    grad = jax.grad(lambda mu: _loss(mu, y, sd, measured))
    hv = jax.jvp(grad, (x0,), (v,))[1]
    estimate = optax.tree.norm(hv)
    return hv / (estimate + 1e-12), estimate


def _lipschitz(
    y: tuple[jax.Array, ...], sd: jax.Array, *, domain: Domain, measured: tuple[Clique, ...]
) -> jax.Array:
    """The loss gradient's Lipschitz constant: mbi's 50 power iterations from all-ones."""
    v = CliqueVector.ones(domain, maximal_subset(list(measured)))
    v = v / optax.tree.norm(v)
    estimate = jnp.zeros((), sd.dtype)
    for _ in range(50):
        v, estimate = _power_step(v, y, sd, domain=domain, measured=measured)
    return estimate


@functools.partial(jax.jit, static_argnames=("measured",))
def _step(
    theta: CliqueVector,
    alpha: jax.Array,
    y: tuple[jax.Array, ...],
    sd: jax.Array,
    total: jax.Array,
    *,
    measured: tuple[Clique, ...],
) -> tuple[CliqueVector, jax.Array, jax.Array, CliqueVector]:
    """One mirror-descent step with mbi's Armijo line search (``update`` in mbi).

    Returns the new potentials, their loss, the next step size and their marginals
    (mbi's ``update`` returns the marginals before the step; those after it save the
    separate marginal computation, and its compilation, at the end).
    """
    TRACES["step"] += 1

    def loss_fn(mu: CliqueVector) -> jax.Array:
        return _loss(mu, y, sd, measured)

    mu = message_passing_fast(theta, total)
    loss, grad = jax.value_and_grad(loss_fn)(mu)
    theta2 = theta - alpha * grad
    mu2 = message_passing_fast(theta2, total)
    loss2 = loss_fn(mu2)
    sufficient_decrease = loss - loss2 >= 0.5 * alpha * grad.dot(mu - mu2)
    alpha = jax.lax.select(sufficient_decrease, 1.01 * alpha, 0.5 * alpha)
    theta = jax.lax.cond(sufficient_decrease, lambda: theta2, lambda: theta)
    loss = jax.lax.select(sufficient_decrease, loss2, loss)
    mu = jax.lax.cond(sufficient_decrease, lambda: mu2, lambda: mu)
    return theta, loss, alpha, mu


def mirror_descent(
    potentials: CliqueVector,
    measurements: Sequence[tuple[Clique, np.ndarray, float]],
    *,
    total: float,
    iters: int,
) -> MarkovRandomField:
    """Mirror descent as mbi's (line search, ``message_passing_fast``) from ``potentials``.

    Args:
        potentials: Starting log-potentials; their cliques must contain every measured
            clique (as mbi's ``_initialize`` would expand them to).
        measurements: (clique, noisy counts in C order, noise sd) of each measurement.
        total: Known number of records.
        iters: Mirror-descent iterations.
    """
    measured = tuple(tuple(cl) for cl, _, _ in measurements)
    missing = [cl for cl in measured if not potentials.supports(cl)]
    if missing:
        raise ValueError(f"potentials do not support the measured cliques {missing}")
    dtype = jax.tree.leaves(potentials)[0].dtype
    y = tuple(jnp.asarray(np.asarray(v, dtype=dtype).ravel()) for _, v, _ in measurements)
    sd = jnp.asarray([float(s) for _, _, s in measurements], dtype=dtype)
    known = jnp.asarray(total, dtype=dtype)
    lipschitz = _lipschitz(y, sd, domain=potentials.domain, measured=measured)
    if not float(lipschitz):  # mbi: ``loss_fn.lipschitz or 1.0``
        lipschitz = jnp.ones((), dtype)
    # mbi's starting step: inversely proportional to L, divided by the total because the
    # gradients scale with it (Eq. 75 of https://www.cs.uic.edu/~zhangx/teaching/bregman.pdf).
    alpha = jnp.asarray(2.0 / (lipschitz * float(total)), dtype=dtype)
    marginals = None
    for _ in range(iters):
        potentials, _, alpha, marginals = _step(potentials, alpha, y, sd, known, measured=measured)
    if marginals is None:
        marginals = message_passing_fast(potentials, known)
    return MarkovRandomField(potentials=potentials, marginals=marginals, total=float(total))

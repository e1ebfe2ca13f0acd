"""Randomness: a CSPRNG for everything privacy-critical, seeds only on request.

Two modes, one object:

* ``PrivacyRNG.secure()`` (the default everywhere): Laplace noise and exponential-
  mechanism draws follow diffprivlib's samplers (its floating-point-robust four-uniform
  Laplace, its inverse-CDF exponential mechanism) with uniforms from a CSPRNG
  (:class:`secrets.SystemRandom`, or ChaCha20 keyed from :mod:`secrets`);
  post-processing generators are numpy ``Generator`` objects over that ChaCha20.
* ``PrivacyRNG.from_seed(seed)``: everything is derived from ``seed`` so that runs
  reproduce. Only for tests and public-data experiments; the object remembers it is
  not secure and writes that into run metadata.

No module keeps a random state of its own and nothing touches numpy's global state.

The two samplers are diffprivlib's own formulas, restated here rather than imported:
``import diffprivlib`` loads scikit-learn (about 0.9 s), which every sweep worker and
every flow paid for two lines of arithmetic. ``tests/unit/privacy/test_rng.py`` checks that both
give exactly diffprivlib's output for the same uniforms (seeded mode: the same
``RandomState`` stream), so the noise path and every seeded result are unchanged.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Sequence

import numpy as np
from randomgen import ChaCha

__all__ = ["PrivacyRNG"]


class PrivacyRNG:
    """Source of all randomness in a run.

    Use :meth:`secure` or :meth:`from_seed`; do not call the constructor directly.
    """

    def __init__(self, *, seed: int | None, _token: object = None) -> None:
        if _token is not _CONSTRUCT:
            raise TypeError("use PrivacyRNG.secure() or PrivacyRNG.from_seed(seed)")
        self.seed = seed
        self._seq = np.random.SeedSequence(seed) if seed is not None else None
        # The exponential mechanism's and the coins' stream in seeded runs (diffprivlib's
        # RandomState path: reproducible, not secure).
        self._state = (
            np.random.RandomState(np.random.MT19937(self._seq.spawn(1)[0]))
            if self._seq is not None
            else None
        )

    @classmethod
    def secure(cls) -> PrivacyRNG:
        """Release mode: cryptographically secure randomness (the default)."""
        return cls(seed=None, _token=_CONSTRUCT)

    @classmethod
    def from_seed(cls, seed: int) -> PrivacyRNG:
        """Reproducible randomness for tests and public data only (not private data)."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed ({seed!r}) must be a non-negative integer")
        return cls(seed=int(seed), _token=_CONSTRUCT)

    @property
    def is_secure(self) -> bool:
        """True in release mode (no seed)."""
        return self.seed is None

    def generator(self) -> np.random.Generator:
        """A fresh numpy Generator for post-processing (sampling rows, projection).

        Secure mode: ChaCha20 keyed with 256 bits from :mod:`secrets`. Seeded mode: a
        PCG64 stream spawned from the seed (each call gives an independent stream).
        """
        if self._seq is None:
            return np.random.Generator(ChaCha(key=secrets.randbits(256), rounds=20))
        return np.random.Generator(np.random.PCG64(self._seq.spawn(1)[0]))

    def laplace(self, values: np.ndarray, *, sensitivity: float, epsilon: float) -> np.ndarray:
        """Add Laplace(sensitivity / epsilon) noise to every entry of ``values``.

        The noise is diffprivlib's floating-point-robust Laplace sampler
        (:class:`diffprivlib.mechanisms.Laplace`, which combines four uniforms instead
        of inverting the CDF), vectorised: the uniforms come from :meth:`generator`,
        i.e. ChaCha20 keyed from :mod:`secrets` in secure mode. The caller must have
        charged the ledger already.
        """
        if not (sensitivity >= 0 and epsilon > 0):
            raise ValueError(
                f"Laplace needs sensitivity >= 0 and epsilon > 0, got {sensitivity} and {epsilon}"
            )
        arr = np.asarray(values, dtype=float)
        if sensitivity == 0:
            return arr.copy()
        scale = sensitivity / epsilon
        u = self.generator().random((4, arr.size))
        noise = standard_laplace(u[0], u[1], u[2], u[3])
        return arr + scale * np.asarray(noise, dtype=float).reshape(arr.shape)

    def discrete_laplace(self, counts: np.ndarray, *, scale: float) -> np.ndarray:
        """Add discrete Laplace (two-sided geometric) noise of ``scale`` to integer counts.

        Secure mode uses OpenDP's exact discrete Laplace sampler
        (``make_laplace`` over a vector of integers), which draws from OpenSSL and has
        no floating-point weakness; one vectorised call, never a Python loop per cell
        (``shared/DEPENDENCIES.md`` trap 6). Seeded mode (public data, tests) draws the
        same law as the difference of two geometric variables from :meth:`generator`.
        P(noise = k) is proportional to exp(-|k| / scale), so a count vector with L1
        sensitivity Delta gets epsilon = Delta / scale. The caller charges the ledger.
        """
        arr, flat = _integer_counts(counts, "discrete Laplace", "scale", scale)
        if self._seq is None:
            noisy = _opendp_integer_noise(flat, "laplace", scale)
        else:
            gen = self.generator()
            p = 1.0 - math.exp(-1.0 / scale)
            noise = gen.geometric(p, flat.size) - gen.geometric(p, flat.size)
            noisy = flat + noise
        return noisy.reshape(arr.shape)

    def discrete_gaussian(self, counts: np.ndarray, *, sigma: float) -> np.ndarray:
        """Add discrete Gaussian noise of parameter ``sigma`` to integer counts.

        P(noise = k) is proportional to exp(-k^2 / (2 sigma^2)) (Canonne, Kamath and
        Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020): a count
        vector with L2 sensitivity Delta gets (Delta^2 / (2 sigma^2))-zCDP, their Theorem
        4. Secure mode uses OpenDP's exact sampler (``make_gaussian`` over a vector of
        integers, OpenSSL randomness), one vectorised call. Seeded mode (public data,
        tests) runs the paper's Algorithm 3 (discrete Laplace proposals of scale
        ``floor(sigma) + 1``, accepted with probability exp(-(|y| - sigma^2/t)^2 /
        (2 sigma^2))) on :meth:`generator`'s draws, vectorised over the cells still
        rejected. The caller charges the ledger.
        """
        arr, flat = _integer_counts(counts, "discrete Gaussian", "sigma", sigma)
        if self._seq is None:
            return _opendp_integer_noise(flat, "gaussian", sigma).reshape(arr.shape)
        gen = self.generator()
        t = math.floor(sigma) + 1
        p = 1.0 - math.exp(-1.0 / t)
        noise = np.zeros(flat.size, dtype=np.int64)
        todo = np.arange(flat.size)
        while todo.size:
            y = gen.geometric(p, todo.size) - gen.geometric(p, todo.size)
            accept = gen.random(todo.size) < np.exp(
                -((np.abs(y) - sigma**2 / t) ** 2) / (2 * sigma**2)
            )
            noise[todo[accept]] = y[accept]
            todo = todo[~accept]
        return (flat + noise).reshape(arr.shape)

    def exponential_mechanism(
        self, utilities: Sequence[float] | np.ndarray, *, sensitivity: float, epsilon: float
    ) -> int:
        """Index chosen with probability proportional to exp(eps * u / (2 * sensitivity)).

        McSherry & Talwar (FOCS 2007), sampled as diffprivlib's
        :class:`~diffprivlib.mechanisms.Exponential` samples it (:func:`exponential_index`;
        one uniform from :class:`secrets.SystemRandom`, or the seeded ``RandomState``).
        The caller charges the ledger.
        """
        u = [float(x) for x in utilities]
        if not u:
            raise ValueError("exponential mechanism needs at least one candidate")
        if not all(math.isfinite(x) for x in u):
            raise ValueError("exponential mechanism utilities must be finite")
        if len(u) == 1:
            return 0
        # The law is invariant to shifting every utility; shifting by the maximum keeps
        # exp() from overflowing for large utilities (counts at large n).
        top = max(u)
        u = [x - top for x in u]
        if not (sensitivity >= 0 and epsilon > 0):
            raise ValueError(
                f"exponential mechanism needs sensitivity >= 0 and epsilon > 0, got "
                f"{sensitivity} and {epsilon}"
            )
        uniform = (
            self._state.random() if self._state is not None else secrets.SystemRandom().random()
        )
        return exponential_index(u, sensitivity=sensitivity, epsilon=epsilon, uniform=uniform)

    def uniform_index(self, n: int) -> int:
        """Uniform draw from ``range(n)`` (configuration draws in private selection)."""
        if n < 1:
            raise ValueError(f"n ({n}) must be >= 1")
        if self._state is None:
            return secrets.randbelow(n)
        return int(self._state.randint(n))

    def bernoulli(self, p: float) -> bool:
        """True with probability ``p`` (stopping coins)."""
        if not 0 <= p <= 1:
            raise ValueError(f"p ({p}) must be in [0, 1]")
        if self._state is None:
            return secrets.SystemRandom().random() < p
        return bool(self._state.random_sample() < p)

    def __repr__(self) -> str:
        return "PrivacyRNG.secure()" if self.seed is None else f"PrivacyRNG.from_seed({self.seed})"

    def describe(self) -> dict[str, object]:
        """Metadata recorded with a run (never the seed of a secure run: there is none)."""
        return {"secure": self.is_secure, "seed": self.seed}


_CONSTRUCT = object()


def standard_laplace(u1: np.ndarray, u2: np.ndarray, u3: np.ndarray, u4: np.ndarray) -> np.ndarray:
    """Standard Laplace variates from four uniforms (diffprivlib's ``_laplace_sampler``).

    ``log(1 - U1) cos(pi U2) + log(1 - U3) cos(pi U4)`` is Laplace(0, 1) (Holohan et al.,
    diffprivlib 0.6: the sum of two products of an exponential and an independent
    cosine avoids the inverse CDF's floating-point holes near 0).
    """
    return np.log(1 - u1) * np.cos(np.pi * u2) + np.log(1 - u3) * np.cos(np.pi * u4)


def exponential_index(
    utilities: Sequence[float], *, sensitivity: float, epsilon: float, uniform: float
) -> int:
    """The exponential mechanism's choice for ``uniform`` (diffprivlib's ``Exponential``).

    Probabilities ``exp(eps * u / (2 * sensitivity))`` normalised, the first index whose
    cumulative probability reaches ``uniform``; with sensitivity 0 a uniform choice among
    the best utilities. Step for step diffprivlib 0.6's ``_find_probabilities`` and
    ``randomise``, so the same uniform gives the same index.
    """
    scale = epsilon / sensitivity / 2 if sensitivity / epsilon > 0 else float("inf")
    u = np.asarray(utilities, dtype=float)
    u = u - u.max()
    probabilities = np.isclose(u, 0).astype(float) if math.isinf(scale) else np.exp(scale * u)
    probabilities /= probabilities.sum()
    cumulative = np.cumsum(probabilities)
    hit = uniform <= cumulative
    if hit.any():
        return int(np.argmax(hit))
    if np.isclose(uniform, cumulative[-1]):
        return len(cumulative) - 1
    raise RuntimeError("exponential mechanism: no candidate for the uniform draw")


def _integer_counts(
    counts: np.ndarray, what: str, name: str, parameter: float
) -> tuple[np.ndarray, np.ndarray]:
    """(the array, its int64 cells flat), after checking the noise parameter and the dtype."""
    if not (parameter > 0 and math.isfinite(parameter)):
        raise ValueError(f"{what} {name} ({parameter}) must be finite and > 0")
    arr = np.asarray(counts)
    if not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{what} needs integer counts, got dtype {arr.dtype}")
    return arr, arr.astype(np.int64).ravel()


def _opendp_integer_noise(flat: np.ndarray, law: str, scale: float) -> np.ndarray:
    """OpenDP's exact discrete ``laplace`` or ``gaussian`` sampler on integer cells, one call."""
    import opendp.prelude as dp  # noqa: PLC0415  (optional import cost)

    dp.enable_features("contrib")
    # 64-bit cells: OpenDP's ``int`` is i32, and a Gaussian fit's snapped coefficients
    # (n / g at n rows) pass 2**31 at about 2M rows.
    metric = dp.l1_distance(T="i64") if law == "laplace" else dp.l2_distance(T="i64")
    make = dp.m.then_laplace if law == "laplace" else dp.m.then_gaussian
    meas = (dp.vector_domain(dp.atom_domain(T="i64")), metric) >> make(scale=float(scale))
    return np.asarray(meas([int(v) for v in flat]), dtype=np.int64)

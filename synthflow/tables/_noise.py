"""Noise for whole tables: sensitivities and vectorised, vetted samplers.

The samplers follow diffprivlib's mechanisms exactly, vectorised over the cells of a
table with uniforms from :meth:`synthflow.privacy.rng.PrivacyRNG.generator` (ChaCha20 keyed
from :mod:`secrets` in release mode; a seeded PCG64 stream in tests):

* Laplace: :meth:`PrivacyRNG.laplace` (diffprivlib's four-uniform sampler).
* Geometric (two-sided, i.e. discrete Laplace): diffprivlib's ``Geometric`` formula.
* Gaussian: the analytic calibration of Balle & Wang (ICML 2018), computed with scipy
  (:func:`gaussian_sigma`; the same as diffprivlib's ``GaussianAnalytic``, which imports
  scikit-learn), and diffprivlib's (Z1 + Z2) / sqrt(2) standard normal.

References:
    Ghosh, Roughgarden & Sundararajan, "Universally utility-maximizing privacy
    mechanisms", STOC 2009 (the geometric mechanism).
    Balle & Wang, "Improving the Gaussian mechanism for differential privacy:
    analytical calibration and optimal denoising", ICML 2018.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG

__all__ = [
    "MECHANISMS",
    "Mechanism",
    "Neighbouring",
    "add_noise",
    "charged_noise",
    "gaussian_sigma",
    "histogram_sensitivity",
    "total_sensitivity",
]

Mechanism = Literal["laplace", "geometric", "gaussian"]
Neighbouring = Literal["replace_one", "add_remove"]
MECHANISMS: tuple[Mechanism, ...] = ("laplace", "geometric", "gaussian")
NEIGHBOURINGS: tuple[Neighbouring, ...] = ("replace_one", "add_remove")


def histogram_sensitivity(neighbouring: Neighbouring, norm: Literal[1, 2]) -> float:
    """L1 or L2 sensitivity of one table level (every record lies in exactly one cell).

    Derivation: under ``add_remove`` a neighbouring dataset has one record more or
    less, so exactly one cell changes by 1: the L1 and L2 sensitivities are both 1.
    Under ``replace_one`` (synthflow's relation: n is public) one record is replaced by
    another; if they fall in different cells, one cell loses 1 and another gains 1, so
    the L1 sensitivity is 2 and the L2 sensitivity is sqrt(2).

    >>> histogram_sensitivity("replace_one", 1), histogram_sensitivity("add_remove", 1)
    (2.0, 1.0)
    """
    if neighbouring not in NEIGHBOURINGS:
        raise ValueError(f"neighbouring ({neighbouring!r}) must be one of {NEIGHBOURINGS}")
    if norm not in (1, 2):
        raise ValueError(f"norm ({norm!r}) must be 1 or 2")
    if neighbouring == "add_remove":
        return 1.0
    return 2.0 if norm == 1 else math.sqrt(2.0)


def total_sensitivity(neighbouring: Neighbouring) -> float:
    """Sensitivity of the grand total n: 1 under ``add_remove``, 0 under ``replace_one``.

    Replacing a record never changes n (which is why synthflow treats n as public).
    """
    if neighbouring not in NEIGHBOURINGS:
        raise ValueError(f"neighbouring ({neighbouring!r}) must be one of {NEIGHBOURINGS}")
    return 1.0 if neighbouring == "add_remove" else 0.0


def _gaussian_delta(sigma: float, *, epsilon: float, sensitivity: float) -> float:
    """The exact delta of Gaussian noise ``sigma`` at ``epsilon`` (Balle & Wang 2018, Thm 8).

    delta(sigma) = Phi(D/(2 sigma) - eps sigma/D) - e^eps Phi(-D/(2 sigma) - eps sigma/D),
    the second term in logs (``log_ndtr``) so that large epsilon does not overflow.
    """
    from scipy.special import log_ndtr, ndtr  # noqa: PLC0415

    a = sensitivity / (2 * sigma)
    b = epsilon * sigma / sensitivity
    return float(ndtr(a - b) - math.exp(epsilon + float(log_ndtr(-a - b))))


def gaussian_sigma(*, epsilon: float, delta: float, sensitivity: float) -> float:
    """Standard deviation of the analytic Gaussian mechanism for L2 ``sensitivity``.

    Balle and Wang (ICML 2018): the least sigma whose exact delta at ``epsilon``
    (:func:`_gaussian_delta`, decreasing in sigma) is at most ``delta``, by bisection
    (100 halvings of a bracket that holds it), rounded *up*: the mechanism is at most
    (epsilon, delta)-DP. It is diffprivlib's ``GaussianAnalytic`` calibration
    (``tests/unit/tables/test_tables_dpnoise.py`` checks both against each other; where
    they differ, at epsilon >= 8, diffprivlib's bisection stops early: at epsilon 8 and
    delta 1e-9 its sigma gives delta 1.00006e-9), computed with scipy instead of
    importing scikit-learn.
    """
    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError(
            f"Gaussian noise needs epsilon > 0 and 0 < delta < 1, got {epsilon} and {delta}"
        )
    if sensitivity == 0:
        return 0.0
    lo, hi = 0.0, sensitivity
    while _gaussian_delta(hi, epsilon=epsilon, sensitivity=sensitivity) > delta:
        lo, hi = hi, 2 * hi
    for _ in range(100):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if _gaussian_delta(mid, epsilon=epsilon, sensitivity=sensitivity) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def add_noise(
    values: np.ndarray,
    *,
    mechanism: Mechanism,
    epsilon: float,
    delta: float = 0.0,
    neighbouring: Neighbouring,
    rng: PrivacyRNG,
) -> np.ndarray:
    """Add noise calibrated to one histogram's sensitivity to every entry of ``values``.

    The caller charges the ledger first. Laplace and Gaussian noise are continuous (the
    result is float); geometric noise is integer.

    Args:
        values: True counts of one table level.
        mechanism: ``laplace`` (scale Δ1/ε), ``geometric`` (ratio exp(-ε/Δ1)) or
            ``gaussian`` (analytic sigma for Δ2, ε, δ).
        epsilon: Budget of this table level.
        delta: Budget delta (Gaussian only; must be 0 otherwise).
        neighbouring: Neighbouring relation the sensitivity is derived for.
        rng: Source of randomness.
    """
    arr = np.asarray(values, dtype=np.float64)
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism ({mechanism!r}) must be one of {MECHANISMS}")
    if not epsilon > 0:
        raise ValueError(f"epsilon ({epsilon}) must be > 0")
    if mechanism != "gaussian" and delta != 0:
        raise ValueError(f"delta ({delta}) must be 0 for the {mechanism} mechanism (pure DP)")
    if mechanism == "laplace":
        sens = histogram_sensitivity(neighbouring, 1)
        return rng.laplace(arr, sensitivity=sens, epsilon=epsilon)
    if mechanism == "geometric":
        sens = histogram_sensitivity(neighbouring, 1)
        # Two-sided geometric = discrete Laplace, P(k) proportional to exp(-|k| eps / sens):
        # OpenDP's exact sampler in release mode (no floating-point tail cut-off).
        zeros = np.zeros(arr.shape, dtype=np.int64)
        return arr + rng.discrete_laplace(zeros, scale=sens / epsilon)
    sigma = gaussian_sigma(
        epsilon=epsilon, delta=delta, sensitivity=histogram_sensitivity(neighbouring, 2)
    )
    z = rng.generator().standard_normal((2, *arr.shape))
    return arr + sigma * (z[0] + z[1]) / math.sqrt(2.0)


def charged_noise(
    values: np.ndarray,
    *,
    what: str,
    ledger: Ledger,
    mechanism: Mechanism,
    epsilon: float,
    delta: float = 0.0,
    neighbouring: Neighbouring,
    rng: PrivacyRNG,
) -> np.ndarray:
    """Charge ``ledger`` for one table level, then :func:`add_noise` to it.

    The sensitivity recorded in the ledger is the one the noise is calibrated to
    (L2 for Gaussian, L1 otherwise), so the two cannot disagree.
    """
    norm: Literal[1, 2] = 2 if mechanism == "gaussian" else 1
    ledger.charge(
        what,
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        sensitivity=histogram_sensitivity(neighbouring, norm),
    )
    return add_noise(
        values,
        mechanism=mechanism,
        epsilon=epsilon,
        delta=delta,
        neighbouring=neighbouring,
        rng=rng,
    )

"""The simulator's joint model, derived from the calibration's 2-way summaries.

Two pieces need more than reading one table:

* gestation week given both mother's age group and parity group: the joint table with no
  3-way interaction that has the calibration's three 2-way margins (age x parity,
  age x gestation, parity x gestation), found by iterative proportional fitting
  (Deming & Stephan, 1940; Bishop, Fienberg & Holland, *Discrete Multivariate Analysis*,
  1975, ch. 3);
* birth-weight factors by mother's age group and by parity group: multipliers of the
  weight drawn given gestation, fitted (again by alternating scaling) so that the model's
  mean weight in every age group and every parity group equals the calibration's 2-way
  means.
"""

from __future__ import annotations

import numpy as np

from synthflow.public._calibration import Calibration
from synthflow.public._groups import group_index

__all__ = ["age_parity_joint", "draw_gestation", "gestation_given_age_parity", "weight_factors"]


def _normalised(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=float) / float(np.sum(x))


def _ratio(target: np.ndarray, current: np.ndarray) -> np.ndarray:
    return np.divide(target, current, out=np.zeros_like(target), where=current > 0)


def age_parity_joint(c: Calibration) -> np.ndarray:
    """P(mother-age group, parity group), shape (ages, parities)."""
    ages, parities = c.parity_by_age.groups, c.gestation_by_parity.groups
    age_of_value = group_index(np.asarray(c.mother_age.values), ages, variable="mother_age")
    p_age = np.bincount(age_of_value, weights=c.mother_age.probabilities, minlength=len(ages))
    pg_of_value = group_index(np.asarray(c.parity_by_age.values), parities, variable="parity")
    rows = [
        np.bincount(pg_of_value, weights=row, minlength=len(parities))
        for row in c.parity_by_age.probabilities
    ]
    return _normalised(np.stack(rows) * _normalised(p_age)[:, None])


def gestation_given_age_parity(c: Calibration, *, iterations: int = 100) -> np.ndarray:
    """P(gestation week | mother-age group, parity group), shape (ages, parities, weeks)."""
    age_parity = age_parity_joint(c)
    age_gest = _normalised(
        np.asarray(c.gestation_by_age.probabilities) * age_parity.sum(1)[:, None]
    )
    parity_gest = _normalised(
        np.asarray(c.gestation_by_parity.probabilities) * age_parity.sum(0)[:, None]
    )
    joint = np.ones((*age_parity.shape, len(c.gestation_by_parity.values)))
    for _ in range(iterations):
        joint *= _ratio(age_parity, joint.sum(2))[:, :, None]
        joint *= _ratio(age_gest, joint.sum(1))[:, None, :]
        joint *= _ratio(parity_gest, joint.sum(0))[None, :, :]
    totals = joint.sum(2, keepdims=True)
    return np.divide(joint, totals, out=np.full_like(joint, 1 / joint.shape[2]), where=totals > 0)


def weight_factors(
    c: Calibration, gestation: np.ndarray, *, iterations: int = 100
) -> tuple[np.ndarray, np.ndarray]:
    """Weight multipliers per mother-age group and per parity group.

    Args:
        c: the calibration.
        gestation: :func:`gestation_given_age_parity` of ``c``.
        iterations: rounds of alternating scaling.
    """
    weeks = np.asarray(c.gestation_by_parity.values)
    wg = group_index(weeks, c.weight_by_gestation.groups, variable="gestation_week")
    sex = c.female_share * c.weight_ratio_female + (1 - c.female_share) * c.weight_ratio_male
    base = gestation @ c.weight_by_gestation.means()[wg] * sex  # (ages, parities)
    joint = age_parity_joint(c)
    target_age = np.asarray(c.weight_mean_by_age.means) * joint.sum(1)
    target_parity = np.asarray(c.weight_mean_by_parity.means) * joint.sum(0)
    r_age, r_parity = np.ones(joint.shape[0]), np.ones(joint.shape[1])
    for _ in range(iterations):
        r_parity = _ratio(target_parity, (joint * base * r_age[:, None]).sum(0))
        r_age = _ratio(target_age, (joint * base * r_parity[None, :]).sum(1))
    return r_age, r_parity


def draw_gestation(
    c: Calibration, table: np.ndarray, ai: np.ndarray, pi: np.ndarray, u: np.ndarray
) -> np.ndarray:
    """Gestation weeks for age-group indices ``ai``, parity-group indices ``pi``."""
    weeks = np.asarray(c.gestation_by_parity.values, dtype=np.int64)
    out = np.empty(len(u), dtype=np.int64)
    for a, p in np.ndindex(table.shape[:2]):
        mask = (ai == a) & (pi == p)
        if mask.any():
            cdf = np.cumsum(table[a, p])
            idx = np.searchsorted(cdf, u[mask] * cdf[-1], side="right")
            out[mask] = weeks[np.minimum(idx, len(weeks) - 1)]
    return out

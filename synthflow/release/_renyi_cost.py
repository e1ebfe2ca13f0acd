"""The Renyi and zCDP arithmetic behind :mod:`synthflow.release.cost` (public inputs only).

:func:`papernot_steinke_epsilon`: Papernot and Steinke's Theorem 2 over the shortlist's
Renyi curves (docs/privacy.md). :func:`joint_rho`: a single attempt whose generator and
regression fit are all zCDP, composed in zCDP.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from synthflow.config.model import ReleaseSpec
from synthflow.errors import ConfigError, InfeasibleConfigurationError

__all__ = [
    "PAPERNOT_STEINKE",
    "generator_rhos",
    "joint_cost",
    "joint_rho",
    "papernot_steinke_cost",
    "papernot_steinke_epsilon",
]

PAPERNOT_STEINKE = "papernot-steinke"


def generator_rhos(spec: ReleaseSpec, candidates: Sequence[Any]) -> list[float | None]:
    """Each candidate generator's zCDP rho at the spec's generator epsilon (None: not zCDP)."""
    from synthflow.generators import make_generator  # noqa: PLC0415

    eps = spec.privacy.generator_epsilon
    return [make_generator(c.model, c.hyperparameters, epsilon=eps).zcdp_rho() for c in candidates]


def joint_rho(
    generator_rhos: Sequence[float | None], gaussian_fits: Sequence[tuple[float, float]]
) -> float | None:
    """Rho of one attempt's zCDP parts: the worst candidate's plus the Gaussian fits'.

    ``generator_rhos``: each candidate's rho (None: not zCDP, e.g. pure Laplace; then the
    uniform draw's worst case is basic composition: None). ``gaussian_fits``: (epsilon,
    delta) of each Gaussian fit, each rho-zCDP at :func:`synthflow.privacy.zcdp.zcdp_rho`. One
    attempt (its fit made in it, or once before it: adaptive composition either way) is
    (max rho_gen + rho_fit)-zCDP in those parts: a uniform draw's Renyi divergence is at
    most the worst candidate's (jointly quasi-convex), and zCDP adds up.
    """
    from synthflow.privacy.zcdp import zcdp_rho  # noqa: PLC0415

    if not generator_rhos or not gaussian_fits or any(r is None for r in generator_rhos):
        return None
    fits = math.fsum(zcdp_rho(e, delta=d) for e, d in gaussian_fits)
    return max(r for r in generator_rhos if r is not None) + fits


def papernot_steinke_epsilon(
    spec: ReleaseSpec,
    candidates: Sequence[Any],
    *,
    rows: int | None,
    stop_probability: float,
    deltas: dict[str, float],
    fit_once: bool,
    fit_epsilon: float,
    fit_delta: float,
) -> tuple[float, float]:
    """(epsilon, Renyi order) of the selection at the spec's ``total_delta``.

    Raises:
        ConfigError: For gamma outside (0, 1), a spec without ``total_delta``, no rows, or
            a candidate without a Renyi curve.
    """
    from synthflow.criteria import released_once  # noqa: PLC0415
    from synthflow.generators import make_generator  # noqa: PLC0415
    from synthflow.privacy import accounting  # noqa: PLC0415
    from synthflow.privacy.zcdp import zcdp_rho  # noqa: PLC0415

    approximate = sorted(k for k, d in deltas.items() if d > 0)
    shown = ", ".join(approximate[:3]) + (" ..." if len(approximate) > 3 else "")
    if not 0 < stop_probability < 1:
        raise ConfigError(
            f"the shortlist holds (epsilon, delta)-DP candidates ({shown}), so private "
            "selection is accounted by Papernot-Steinke, which needs a finite mean number of "
            "attempts: give --stop-probability in (0, 1), e.g. 0.05 (a mean of 20 attempts); "
            "'synthflow release --help' explains the trade-off"
        )
    if spec.privacy.total_delta <= 0:
        raise ConfigError(
            f"the shortlist holds (epsilon, delta)-DP candidates ({shown}) but the spec's "
            "privacy.total_delta is 0: set privacy.total_delta (e.g. 1e-6) or shortlist pure-DP "
            "generators only"
        )
    if rows is None or rows < 1:
        raise ConfigError("Papernot-Steinke accounting needs the (public) number of rows")
    curves = []
    for cfg in candidates:
        gen = make_generator(cfg.model, cfg.hyperparameters, epsilon=spec.privacy.generator_epsilon)
        try:
            curves.append(gen.renyi(rows))
        except InfeasibleConfigurationError as exc:
            raise ConfigError(f"candidate {cfg.id}: {exc}") from None
    one = np.max(np.vstack(curves), axis=0)
    for crit in spec.criteria:
        if not released_once(crit, fit_once=fit_once):
            one = one + accounting.pure_renyi(crit.epsilon)
    curve = accounting.repeat_and_select_renyi(one, stop_probability=stop_probability)
    if fit_once and fit_delta > 0:  # a Gaussian fit once per release: its zCDP curve
        curve = curve + accounting.zcdp_renyi(zcdp_rho(fit_epsilon, delta=fit_delta))
    elif fit_once:
        curve = curve + accounting.pure_renyi(fit_epsilon)
    return accounting.renyi_epsilon(curve, delta=spec.privacy.total_delta)


def papernot_steinke_cost(
    spec: ReleaseSpec,
    base: Any,
    candidates: Sequence[Any],
    *,
    rows: int | None,
    stop_probability: float,
    deltas: dict[str, float],
) -> Any:
    """``base`` (a :class:`~synthflow.release.cost.SelectionCost`) accounted by Papernot-Steinke."""
    eps, order = papernot_steinke_epsilon(
        spec,
        candidates,
        rows=rows,
        stop_probability=stop_probability,
        deltas=deltas,
        fit_once=base.fit_once,
        fit_epsilon=base.fit_epsilon,
        fit_delta=base.fit_delta,
    )
    return replace(
        base,
        theorem=PAPERNOT_STEINKE,
        stop_probability=float(stop_probability),
        selection_delta=spec.privacy.total_delta,
        repeat_epsilon=eps,
        renyi_order=order,
        candidates=tuple(c.id for c in candidates),
        rows=int(rows or 0),
        attempt_delta=max(deltas.values()),
    )


def joint_cost(
    cost: Any,
    generator_rhos: Sequence[float | None],
    gaussian_fits: Sequence[tuple[float, float]],
) -> Any:
    """``cost`` (a SelectionCost) with a single attempt's zCDP parts composed jointly.

    Only when :func:`joint_rho` applies and the result is cheaper than basic composition;
    the attempt's epsilon is then the rho's conversion plus the pure criteria.
    """
    rho = joint_rho(generator_rhos, gaussian_fits)
    if not cost.single_attempt or rho is None:
        return cost
    parts = cost.generator_epsilon + math.fsum(e for e, _ in gaussian_fits)
    joint = replace(cost, joint_rho=rho, joint_parts_epsilon=parts)
    return joint if joint.total < cost.total else cost

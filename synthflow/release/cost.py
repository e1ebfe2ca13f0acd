"""What a private selection costs: Liu-Talwar's 2x, fit-once, Papernot-Steinke, one attempt.

**A single attempt** (stop probability 1: one configuration drawn, one flow and its DP
evaluation, released if it passes, nothing otherwise) is the selection loop with
``gamma = 1``. Its output (the release or nothing) is a post-processing of that one
attempt's DP outputs, so by basic composition it costs one attempt, not two: ``eps_gen +
eps_eval`` (with the once-per-release fit: ``eps_gen + eps_eval - eps_fit`` plus the
fit's ``eps_fit``), and the generator's delta for an (epsilon, delta) candidate, or its
exact composition where every part has a PLD (:mod:`synthflow.release.exact_cost`). It releases
with probability ``p`` (one attempt's pass), which ``plan`` weighs against the cost.

The one place the selection's total epsilon is computed: ``release`` charges it,
``validate`` checks it is affordable, ``plan`` searches over it and ``audit`` recomputes
it from the published spec (docs/privacy.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from synthflow.config.model import ReleaseSpec
from synthflow.errors import ConfigError
from synthflow.release import _renyi_cost
from synthflow.release._renyi_cost import PAPERNOT_STEINKE, joint_cost
from synthflow.release.exact_cost import EXACT_FORMULA, exact_cost
from synthflow.space import Configuration

__all__ = [
    "FIT_CHARGE",
    "LIU_TALWAR",
    "PAPERNOT_STEINKE",
    "SELECTION_CHARGE",
    "SELECTION_CHARGE_ONE",
    "SELECTION_CHARGE_PS",
    "SELECTION_REF",
    "SINGLE_ATTEMPT",
    "SelectionCost",
    "delta_of",
    "joint_cost",
    "selection_cost",
]

SELECTION_CHARGE = "private selection (Liu-Talwar, known threshold)"
SELECTION_CHARGE_PS = "private selection (Papernot-Steinke, geometric repetitions)"
SELECTION_CHARGE_ONE = "private selection (a single attempt, charged once)"
LIU_TALWAR = "liu-talwar"
SINGLE_ATTEMPT = "single-attempt"
SELECTION_REF = "selection:"
"""Prefix of a selection's charges' ``ref``: ``selection:<id of the enclave's start>``."""
FIT_CHARGE = "once per release"
"""Marker in the ledger entry of the statistic released once per release (the fit)."""


@dataclass(frozen=True, kw_only=True)
class SelectionCost:
    """The privacy cost of private selection (SPEC sec. 1 and 8)."""

    generator_epsilon: float
    evaluation_epsilon: float
    fit_epsilon: float
    """Budget of the statistic released once per release (births: the regression fit), else 0."""
    theorem: str = LIU_TALWAR
    """``liu-talwar`` (all candidates pure DP), ``papernot-steinke`` or ``single-attempt``."""
    stop_probability: float = 0.0
    selection_delta: float = 0.0
    """Papernot-Steinke: the delta the selection's Renyi curve is converted at."""
    repeat_epsilon: float | None = None
    """Papernot-Steinke: epsilon of the whole selection (fit once included)."""
    renyi_order: float | None = None
    """Papernot-Steinke: the Renyi order that gave ``repeat_epsilon``."""
    candidates: tuple[str, ...] = ()
    """Papernot-Steinke: the candidate ids whose curves were maximised (public)."""
    rows: int | None = None
    """Papernot-Steinke: the public row count the DP-SGD curves depend on."""
    attempt_delta: float = 0.0
    """Delta of one attempt: the largest candidate's, plus a Gaussian fit's made per attempt."""
    fit_delta: float = 0.0
    """Delta of a once-per-release Gaussian regression fit (charged by itself), else 0."""
    joint_rho: float = 0.0
    """Single attempt whose generator and Gaussian regression fit are both zCDP: their
    rho summed (composed in zCDP, converted once at ``total_delta``); 0 otherwise."""
    joint_parts_epsilon: float = 0.0
    """The standalone epsilons of the parts ``joint_rho`` replaces (eps_gen + eps_fit)."""
    exact_epsilon: float = 0.0
    """Single attempt: its epsilon at ``total_delta`` by privacy loss distributions
    (:mod:`synthflow.release.exact_cost`); 0: not used (a part without a PLD, or no cheaper)."""

    @property
    def fit_once(self) -> bool:
        """Whether the once-per-release statistic (the fit) is released once, before the loop."""
        return self.fit_epsilon > 0

    @property
    def attempt_epsilon(self) -> float:
        """Budget of one attempt (flow + evaluation, less a fit made once)."""
        return self.generator_epsilon + self.evaluation_epsilon - self.fit_epsilon

    @property
    def papernot_steinke(self) -> bool:
        """Whether the selection is accounted by Papernot-Steinke (else Liu-Talwar)."""
        return self.theorem == PAPERNOT_STEINKE

    @property
    def single_attempt(self) -> bool:
        """Whether the selection is one attempt (stop probability 1, basic composition)."""
        return self.theorem == SINGLE_ATTEMPT

    @property
    def selection_epsilon(self) -> float:
        """The selection's own charge, the once-per-release fit (charged by itself) left out.

        Liu-Talwar: twice one attempt. Papernot-Steinke: its epsilon, which composes the
        fit inside the Renyi curve, less the fit's epsilon, so that the selection charge
        and the fit's charge add up to exactly that epsilon in the ledger.
        """
        if self.papernot_steinke:
            assert self.repeat_epsilon is not None
            return max(self.repeat_epsilon - self.fit_epsilon, 0.0)
        if self.exact_epsilon > 0:  # single attempt, composed by its PLD
            return max(self.exact_epsilon - self.fit_epsilon, 0.0)
        if self.joint_epsilon is not None:  # single attempt, zCDP parts composed jointly
            pure = self.generator_epsilon + self.evaluation_epsilon - self.joint_parts_epsilon
            return max(math.fsum([self.joint_epsilon, pure]) - self.fit_epsilon, 0.0)
        return (1 if self.single_attempt else 2) * self.attempt_epsilon

    @property
    def joint_epsilon(self) -> float | None:
        """Epsilon of the zCDP parts composed in zCDP, at ``total_delta`` (None: not used)."""
        if not (self.single_attempt and self.joint_rho > 0):
            return None
        from synthflow.privacy.zcdp import zcdp_epsilon  # noqa: PLC0415

        return zcdp_epsilon(self.joint_rho, delta=self.total_delta)

    @property
    def selection_charge_delta(self) -> float:
        """Delta of the selection's own charge (a once-per-release fit charges its own)."""
        return max(self.total_delta - self.fit_delta, 0.0)

    @property
    def total(self) -> float:
        """2 (eps_gen + eps_eval [- eps_fit]) [+ eps_fit] (one attempt: 1x), or P-S's."""
        if self.papernot_steinke:
            assert self.repeat_epsilon is not None
            return self.repeat_epsilon  # the once-per-release fit is inside its curve
        return math.fsum([self.selection_epsilon, self.fit_epsilon])

    @property
    def total_delta(self) -> float:
        """Delta of the selection (0 under Liu-Talwar; one attempt: its generator's)."""
        if self.single_attempt:
            return self.attempt_delta + self.fit_delta
        return (self.selection_delta if self.papernot_steinke else 0.0) or self.fit_delta

    def to_json(self) -> dict[str, Any]:
        """Composition as published in acceptance.json."""
        doc: dict[str, Any] = {
            "generator_epsilon": self.generator_epsilon,
            "evaluation_epsilon": self.evaluation_epsilon,
            "regression_fit_once_epsilon": self.fit_epsilon if self.fit_once else None,
            "theorem": self.theorem,
        }
        if self.papernot_steinke:
            doc.update(
                selection_factor=None,
                formula=(
                    "Papernot-Steinke (ICLR 2022) Theorem 2, geometric repetitions of mean "
                    "1/stop_probability, on max over candidates of their Renyi curves + "
                    "the evaluation's"
                    + (" (less the fit), plus the once-per-release fit" if self.fit_once else "")
                    + "; converted to epsilon at total_delta"
                ),
                stop_probability=self.stop_probability,
                mean_attempts=1 / self.stop_probability,
                candidates=list(self.candidates),
                rows=self.rows,
                renyi_order=self.renyi_order,
                total_delta=self.selection_delta,
            )
        elif self.single_attempt:
            basic = "(eps_gen + eps_eval - eps_fit) + eps_fit" if self.fit_once else None
            formula = (basic or "eps_gen + eps_eval") + " (a single attempt: basic composition)"
            if self.exact_epsilon > 0:
                formula = EXACT_FORMULA
            elif self.joint_epsilon is not None:
                formula = (
                    "zCDP(rho_gen + rho_fit) at total_delta + the other criteria's epsilons (a "
                    "single attempt: the generator and the regression fit composed in zCDP, the "
                    "rest by basic composition)"
                )
            doc.update(
                selection_factor=1,
                formula=formula,
                stop_probability=1.0,
                candidates=list(self.candidates),
                total_delta=self.total_delta,
            )
            if self.exact_epsilon > 0:
                doc.update(exact_epsilon=self.exact_epsilon)
            elif self.joint_epsilon is not None:
                doc.update(joint_rho=self.joint_rho, joint_epsilon=self.joint_epsilon)
        else:
            doc.update(
                selection_factor=2,
                formula=(
                    "2 * (eps_gen + eps_eval - eps_fit) + eps_fit"
                    if self.fit_once
                    else "2 * (eps_gen + eps_eval)"
                ),
            )
        doc["total_epsilon"] = self.total
        if self.total_delta > 0:  # e.g. Liu-Talwar with a Gaussian fit once (pure: no key)
            doc["total_delta"] = self.total_delta
        return doc


def selection_cost(
    spec: ReleaseSpec,
    *,
    fit_once: bool,
    candidates: Sequence[Configuration] = (),
    rows: int | None = None,
    stop_probability: float = 0.0,
    fit_weights: Sequence[float] | None = None,
) -> SelectionCost:
    """The cost of selection under ``spec``: Liu-Talwar unless a candidate has delta > 0.

    ``candidates``, ``rows`` (public) and ``stop_probability`` matter only when a
    candidate is (epsilon, delta)-DP: then the cost is Papernot-Steinke's. A stop
    probability of 1 is a single attempt (module docstring), whatever the candidates;
    ``fit_weights``: a package's published fit weights (``_exact_cost.exact_cost``).

    Raises:
        ConfigError: If ``fit_once`` but not one criterion is released once per release; for an
            (epsilon, delta) candidate, if the stop probability is 0, the spec has no
            ``privacy.total_delta``, ``rows`` is missing, or a candidate has no Renyi curve.
    """
    from synthflow.criteria import one_released_once  # noqa: PLC0415

    fit = [one_released_once(spec.criteria)] if fit_once else []  # priced before any charge
    base = SelectionCost(
        generator_epsilon=spec.privacy.generator_epsilon,
        evaluation_epsilon=spec.evaluation_epsilon,
        fit_epsilon=fit[0].epsilon if fit_once else 0.0,
    )
    deltas = {c.id: delta_of(c) for c in candidates}
    gauss = [c for c in spec.criteria if c.impl.delta(c) > 0]  # e.g. a Gaussian regression fit
    fit_delta = math.fsum(c.impl.delta(c) for c in gauss)
    per_attempt = [c for c in gauss if not (fit_once and c in fit)]
    if stop_probability == 1:
        one = replace(
            base,
            theorem=SINGLE_ATTEMPT,
            stop_probability=1.0,
            attempt_delta=max(deltas.values(), default=0.0)
            + math.fsum(c.impl.delta(c) for c in per_attempt),
            fit_delta=fit_delta - math.fsum(c.impl.delta(c) for c in per_attempt),
            candidates=tuple(c.id for c in candidates),
        )
        return exact_cost(spec, _joint(spec, one, candidates, gauss), candidates, fit_weights)
    if per_attempt:
        raise ConfigError(
            f"criterion {per_attempt[0].name!r} uses Gaussian noise (delta "
            f"{per_attempt[0].impl.delta(per_attempt[0]):g}), which a selection of many "
            "attempts cannot account per attempt: use a single attempt (--stop-probability 1) "
            "or compute the fit once per release (--fit-once)"
        )
    base = replace(base, fit_delta=fit_delta)
    if not any(d > 0 for d in deltas.values()):
        return base
    return _renyi_cost.papernot_steinke_cost(
        spec, base, candidates, rows=rows, stop_probability=stop_probability, deltas=deltas
    )


def _joint(
    spec: ReleaseSpec,
    cost: SelectionCost,
    candidates: Sequence[Configuration],
    gauss: Sequence[Any],
) -> SelectionCost:
    """:func:`joint_cost` for the shortlist's generators and the spec's Gaussian fit."""
    rhos = _renyi_cost.generator_rhos(spec, candidates)
    return joint_cost(cost, rhos, [(c.epsilon, c.impl.delta(c)) for c in gauss])


def delta_of(configuration: Configuration) -> float:
    """The delta one fit of ``configuration`` spends (0 for a pure-DP generator)."""
    from synthflow.generators import make_generator  # noqa: PLC0415

    gen = make_generator(configuration.model, configuration.hyperparameters, epsilon=1.0)
    return gen.privacy_cost.delta

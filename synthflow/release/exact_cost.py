"""One attempt's mechanisms for exact accounting (:mod:`synthflow.privacy.pld`), from public facts.

:func:`attempt_mechanisms` lists, for each candidate, what one single attempt runs on the
private data: the candidate's generator (:meth:`mechanisms` of the generator), the
regression fit (made once per release, from the public bounds) and every other
criterion's noise (each epsilon-DP at its budget). :func:`exact_epsilon` composes each
list by its privacy loss distribution and takes the worst candidate (a uniform draw:
:mod:`synthflow.privacy.pld`). Where a part has no PLD (a GAN, MST or AIM, a Gaussian fit made
per attempt in a standardisation read off the candidate) there is no exact figure: None.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from synthflow.privacy.pld import Mechanism, worst_epsilon

__all__ = [
    "EXACT_FORMULA",
    "attempt_mechanisms",
    "exact_cost",
    "exact_epsilon",
    "generator_mechanisms",
    "planned_epsilon",
]

EXACT_FORMULA = (
    "privacy loss distributions (dp_accounting, pessimistic) of every part of one attempt, "
    "composed at total_delta: the generator's discrete Gaussian measurements, the regression "
    "fit's discrete Gaussian, and each other criterion and selection as randomized response "
    "at its epsilon; the worst candidate of a uniform draw (a single attempt)"
)
"""acceptance.json's ``formula`` for a single attempt composed exactly (docs/privacy.md)."""


def attempt_mechanisms(
    spec: Any, candidates: Sequence[Any], *, fit_once: bool
) -> list[tuple[Mechanism, ...]] | None:
    """Each candidate's single attempt as mechanisms, or None where a part has no PLD."""
    split = _split_mechanisms(spec, candidates, fit_once=fit_once, fit_weights=None)
    if split is None:
        return None
    own, shared = split
    return [m + shared for m in own]


def _split_mechanisms(
    spec: Any, candidates: Sequence[Any], *, fit_once: bool, fit_weights: Any
) -> tuple[list[tuple[Mechanism, ...]], tuple[Mechanism, ...]] | None:
    """(each candidate's generator mechanisms, the criteria's: the same for all), or None."""
    from synthflow.criteria import releasable_once  # noqa: PLC0415
    from synthflow.transform import Transformer  # noqa: PLC0415

    if not candidates:
        return None
    once = releasable_once(spec.criteria) if fit_once else []
    shared: list[Mechanism] = []
    for c in spec.criteria:
        if c.impl.delta(c) > 0:  # a Gaussian criterion: the regression fit
            letters = {tuple(sorted(cfg.transformations.items())) for cfg in candidates}
            if c not in once or len(letters) != 1:
                return None  # per attempt, its law depends on the candidate: no fixed PLD
            transformer = Transformer(spec, dict(candidates[0].transformations))
            shared.extend(c.impl.once_mechanisms(c, transformer, weights=fit_weights))
        elif c.epsilon > 0:
            shared.append(Mechanism.pure(f"acceptance {c.name}", c.epsilon))
    out = []
    for cfg in candidates:
        parts = generator_mechanisms(
            spec,
            cfg.model,
            cfg.hyperparameters,
            tuple(sorted(cfg.transformations.items())),
            spec.privacy.generator_epsilon,
        )
        if parts is None:
            return None
        out.append(parts)
    return out, tuple(shared)


def generator_mechanisms(
    spec: Any,
    model: str,
    hyperparameters: Any,
    letters: tuple[tuple[str, str], ...],
    epsilon: float,
) -> tuple[Mechanism, ...] | None:
    """One fit of a configuration's generator at ``epsilon``, as mechanisms (None: no PLD)."""
    from synthflow.generators import make_generator  # noqa: PLC0415
    from synthflow.transform import Transformer  # noqa: PLC0415

    transformer = Transformer(spec, dict(letters))
    gen = make_generator(model, dict(hyperparameters), epsilon=epsilon, transformer=transformer)
    own = getattr(gen, "mechanisms", None)
    parts = own(transformer.domain) if own is not None else None
    return None if parts is None else tuple(parts)


def planned_epsilon(
    generators: Sequence[tuple[Mechanism, ...] | None],
    fit: tuple[Mechanism, ...] | None,
    epsilons: Sequence[float],
    *,
    delta: float,
) -> float | None:
    """A planned single attempt's epsilon: the worst generator, the fit, the criteria.

    ``generators``: each kept candidate's mechanisms (None: no PLD, so no exact figure);
    ``fit``: the regression fit's (None: no PLD); ``epsilons``: every other criterion's
    budget (each epsilon-DP). The planner's search calls this at every budget point, so
    each generator with the fit is composed once (cached) and the criteria on top.
    """
    if fit is None or not generators or any(g is None for g in generators) or delta <= 0:
        return None
    pures = tuple(
        Mechanism.pure(f"criterion {i}", e) for i, e in enumerate(sorted(epsilons)) if e > 0
    )
    own = dict.fromkeys(g + fit for g in generators if g is not None)
    return worst_epsilon(own, delta=delta, shared=pures)


def exact_epsilon(
    spec: Any,
    candidates: Sequence[Any],
    *,
    fit_once: bool,
    delta: float,
    fit_weights: Sequence[float] | None = None,
) -> float | None:
    """A single attempt's epsilon at ``delta`` by PLD composition (None: no exact figure).

    ``fit_weights``: the fit's published noise weights, in place of reading them off the
    public sample (its kind's ``once_mechanisms``).
    """
    split = _split_mechanisms(spec, candidates, fit_once=fit_once, fit_weights=fit_weights)
    if split is None:
        return None
    own, shared = split
    return worst_epsilon(dict.fromkeys(own), delta=delta, shared=shared)


def exact_cost(
    spec: Any, cost: Any, candidates: Sequence[Any], fit_weights: Sequence[float] | None = None
) -> Any:
    """``cost`` (a single attempt's SelectionCost) composed exactly, where it can be.

    Where every part has a PLD and the figure is below ``cost``'s total: ``cost`` with
    ``exact_epsilon`` set (its charge and total follow it); else ``cost`` unchanged.
    """
    if not candidates or cost.total_delta <= 0:
        return cost
    exact = exact_epsilon(
        spec, candidates, fit_once=cost.fit_once, delta=cost.total_delta, fit_weights=fit_weights
    )
    if exact is None or exact >= cost.total:
        return cost
    return replace(cost, exact_epsilon=exact)

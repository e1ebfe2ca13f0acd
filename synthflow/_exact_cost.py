"""One attempt's mechanisms for exact accounting (:mod:`synthflow.pld`), from public facts.

:func:`attempt_mechanisms` lists, for each candidate, what one single attempt runs on the
private data: the candidate's generator (:meth:`mechanisms` of the generator), the
regression fit (made once per release, from the public bounds) and every other
criterion's noise (each epsilon-DP at its budget). :func:`exact_epsilon` composes each
list by its privacy loss distribution and takes the worst candidate (a uniform draw:
:mod:`synthflow.pld`). Where a part has no PLD (a GAN, MST or AIM, a Gaussian fit made
per attempt in a standardisation read off the candidate) there is no exact figure: None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from synthflow.pld import Mechanism, worst_epsilon

__all__ = ["attempt_mechanisms", "exact_epsilon", "fit_once_mechanisms"]


def fit_once_mechanisms(c: Any, transformer: Any) -> tuple[Mechanism, ...]:
    """The once-per-release regression fit of criterion ``c``: its noise law at the bounds.

    The law :func:`synthflow.criteria.fit_law.fit_law` makes for the fit once (its
    standardisation from the public bounds, its weights from the public sample).
    """
    from synthflow.criteria import regression  # noqa: PLC0415
    from synthflow.criteria.fit_law import fit_law  # noqa: PLC0415

    empty = np.zeros((0, len(transformer.domain.names)), dtype=np.int64)
    _, _, _, xb, yb = regression.design(empty, transformer, str(c.column), c.features)
    std = regression.Standardization.from_bounds(xb, yb)
    noise = fit_law(c, transformer, std, xb, yb)
    return noise.mechanisms(f"acceptance {c.name}: functional-mechanism fit (once per release)")


def attempt_mechanisms(
    spec: Any, candidates: Sequence[Any], *, fit_once: bool
) -> list[tuple[Mechanism, ...]] | None:
    """Each candidate's single attempt as mechanisms, or None where a part has no PLD."""
    from synthflow.criteria import releasable_once  # noqa: PLC0415
    from synthflow.generators import make_generator  # noqa: PLC0415
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
            shared.extend(fit_once_mechanisms(c, transformer))
        elif c.epsilon > 0:
            shared.append(Mechanism.pure(f"acceptance {c.name}", c.epsilon))
    out = []
    for cfg in candidates:
        transformer = Transformer(spec, dict(cfg.transformations))
        gen = make_generator(
            cfg.model,
            cfg.hyperparameters,
            epsilon=spec.privacy.generator_epsilon,
            transformer=transformer,
        )
        own = getattr(gen, "mechanisms", None)
        parts = own(transformer.domain) if own is not None else None
        if parts is None:
            return None
        out.append(tuple(parts) + tuple(shared))
    return out


def exact_epsilon(
    spec: Any, candidates: Sequence[Any], *, fit_once: bool, delta: float
) -> float | None:
    """A single attempt's epsilon at ``delta`` by PLD composition (None: no exact figure)."""
    attempts = attempt_mechanisms(spec, candidates, fit_once=fit_once)
    if attempts is None:
        return None
    return worst_epsilon(attempts, delta=delta)

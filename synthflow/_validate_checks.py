"""``synthflow validate``'s checks beyond the loader's: budgets, and ``--data``'s values."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from synthflow._util.notices import say
from synthflow.criteria import releasable_once
from synthflow.errors import ConfigError, DataError
from synthflow.release.cost import delta_of, selection_cost

if TYPE_CHECKING:
    from pathlib import Path

    from synthflow.config.model import ReleaseSpec

__all__ = ["check_affordable", "check_data", "check_delta"]


def check_data(spec: ReleaseSpec, data: str | Path) -> None:
    """``validate --data``: the file read and cleaned as the release reads it, up front.

    A private value outside a domain drafted from a public sample would otherwise surface
    at the release, after draw, sweep and plan. The file is never declared public here:
    messages name columns and fixes, never a value, a header or a count, and nothing is
    charged.

    Raises:
        DataError: Every column that fails, with the fix.
    """
    from synthflow.data import load_data  # noqa: PLC0415

    try:
        load_data(data, spec, public=False)
    except DataError as exc:
        raise DataError(
            f"--data {str(data)!r} does not fit the spec (no value of the file is shown; "
            f"nothing was charged): {exc}. A domain or categories drafted by 'synthflow "
            "init' are those of its public sample: give the documented ones in a codebook "
            "('synthflow init --domains FILE') or in the spec, or clean the data"
        ) from None


def check_affordable(spec: ReleaseSpec, configs: list[Any]) -> None:
    """Refuse a spec whose total cannot pay for even the cheapest private selection.

    Many attempts (Liu-Talwar: twice one attempt) when they fit; else a single attempt
    (charged once; a zCDP generator and a Gaussian fit composed jointly), with a note
    that ``release`` needs ``--stop-probability 1`` or a plan choosing it.
    """
    total = spec.privacy.total_epsilon + 1e-12
    modes = [False] + [True] * bool(releasable_once(spec.criteria))
    many = []
    for fit_once in modes:
        try:
            many.append(selection_cost(spec, fit_once=fit_once).total)
        except ConfigError:  # e.g. a Gaussian fit per attempt: a single attempt only
            continue
    if many and min(many) <= total:
        return
    kinds = {(c.model, tuple(sorted(c.hyperparameters.items()))): c for c in configs}
    single = min(
        selection_cost(spec, fit_once=f, candidates=[c], stop_probability=1.0).total
        for c in kinds.values()
        for f in modes
    )
    if single <= total:
        if many:
            say(
                f"note: private selection of many attempts costs at least epsilon "
                f"{min(many):g} (twice one attempt), above total_epsilon "
                f"{spec.privacy.total_epsilon:g}; a single attempt costs {single:g}: release "
                "it with a plan that chooses one (synthflow plan) or --stop-probability 1"
            )
        return
    raise ConfigError(
        f"privacy: even a single attempt costs epsilon {single:g} (generator "
        f"{spec.privacy.generator_epsilon:g} + criteria {spec.evaluation_epsilon:g}, "
        "composed as cheaply as the space's generators allow)"
        + (f", and many attempts at least {min(many):g} (twice one attempt)" if many else "")
        + f", but total_epsilon is {spec.privacy.total_epsilon:g}; 'synthflow release' would "
        "refuse it: lower the budgets or raise the total"
    )


def check_delta(spec: ReleaseSpec, configs: list[Any]) -> None:
    """Refuse a spec with a configuration whose deltas add up past ``total_delta``.

    Even a single attempt (the cheapest in delta) spends the generator's delta plus every
    Gaussian criterion's; ``release`` would refuse such a configuration, so ``validate``
    names it first, with the arithmetic.
    """
    fit = math.fsum(c.impl.delta(c) for c in spec.criteria)
    total = spec.privacy.total_delta
    over = [(c, delta_of(c)) for c in configs]
    over = [(c, d) for c, d in over if d + fit > total * (1 + 1e-9) + 1e-300]
    if over:
        cfg, gen = max(over, key=lambda item: item[1])
        raise ConfigError(
            f"privacy: {len(over)} of {len(configs)} configurations spend more delta than "
            f"privacy.total_delta {total:g}, e.g. {cfg.id}: generator delta {gen:g} + Gaussian "
            f"criteria delta {fit:g} = {gen + fit:g}, even as a single attempt; raise "
            "total_delta or lower the grid's 'delta' (or the criteria's)"
        )

"""Whether private selection would spend its budget for (almost) nothing (the pre-flight).

Decided from public facts only, before anything is charged: the release refuses a
hopeless selection without ``--force`` (:mod:`synthflow.release.preflight`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from synthflow.acceptance.noise_check import public_sample, space_noise_warning

if TYPE_CHECKING:
    from synthflow.config.model import ReleaseSpec
    from synthflow.space import Configuration

__all__ = ["why_hopeless"]


def why_hopeless(
    spec: ReleaseSpec,
    candidates: list[Configuration],
    n: int,
    pass_rates: list[float | None],
    *,
    fit_once: bool = False,
) -> str:
    """Why private selection would spend its budget for (almost) nothing; '' if it would not.

    Public facts only: the spec, the candidates' bins, n, the spec's public sample and
    the shortlist's pass estimates on public data. Three reasons: a criterion that two
    public samples of n rows already fail without noise
    (:func:`~synthflow.acceptance.attainable.attainability_warnings`), a noise-dominated
    DP criterion (the one noise rule, :mod:`~synthflow.acceptance.noise_check`, with the
    epsilon each would need), or no candidate that ever passed in the public sweep.
    """
    from synthflow.acceptance.attainable import (  # noqa: PLC0415
        agreed_threshold_path,
        unattainable_criteria,
    )

    sample = public_sample(spec)
    failing = {} if sample is None else unattainable_criteria(spec, candidates, n, sample)
    reasons = [line for line, _ in failing.values()]
    from synthflow.release.shipped import planned_spec_of, recipe  # noqa: PLC0415
    from synthflow.resources import bundled_spec, bundled_spec_of  # noqa: PLC0415

    planned = planned_spec_of(spec.sha256)  # a shipped plan's spec: copy the bundled one
    source = bundled_spec(planned) if planned else None
    reachable = {name: value for name, (_, value) in failing.items()}
    bundled = planned or bundled_spec_of(spec.sha256)  # ship-plan plans it (its recipe)
    bundled = bundled if bundled is not None and recipe(bundled) is not None else None
    path = agreed_threshold_path(spec, n, reachable, source=source, bundled=bundled)
    if path:  # what that size can reach, and the exact commands that get it
        reasons.append(path)
    noisy = space_noise_warning(spec, candidates, n, fit_once=fit_once, needed=True)
    if noisy:
        reasons.append(noisy)
    known = [p for p in pass_rates if p is not None]
    if known and max(known) <= 0:
        reasons.append(
            f"none of the {len(known)} shortlisted configurations passed in the public sweep "
            "(every pass estimate is 0): selection would most likely stop empty-handed or run "
            "out of attempts"
        )
    return "\n".join(reasons)

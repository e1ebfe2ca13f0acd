"""The registry of criterion kinds: the one place a kind is looked up by name."""

from __future__ import annotations

from typing import TYPE_CHECKING

from synthflow.criteria.conditional_mean import ConditionalMean
from synthflow.criteria.faithfulness import Faithfulness
from synthflow.criteria.marginals import Marginals
from synthflow.criteria.one_way_ratio import OneWayRatio
from synthflow.criteria.protocol import CriterionKind
from synthflow.criteria.regression_coefficients import RegressionCoefficients
from synthflow.criteria.regression_tstr import RegressionTSTR
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from synthflow.config import CriterionSpec

__all__ = ["KINDS", "kind_of", "releasable_once", "released_once"]

KINDS: dict[str, CriterionKind] = {
    k.name: k
    for k in (
        Marginals(),
        OneWayRatio(),
        ConditionalMean(),
        RegressionCoefficients(),
        RegressionTSTR(),
        Faithfulness(),
    )
}
"""Every criterion kind, by its name in a spec."""


def kind_of(c: CriterionSpec) -> CriterionKind:
    """The kind of a spec's criterion.

    Raises:
        ConfigError: For a kind no module implements.
    """
    try:
        return KINDS[c.kind]
    except KeyError:
        raise ConfigError(
            f"criterion {c.name!r}: unknown kind {c.kind!r}; the kinds are {sorted(KINDS)}"
        ) from None


def releasable_once(spec_criteria: tuple[CriterionSpec, ...]) -> list[CriterionSpec]:
    """The criteria whose original side can be released once per release."""
    return [c for c in spec_criteria if kind_of(c).once_per_release]


def released_once(c: CriterionSpec, *, fit_once: bool) -> bool:
    """Whether ``c`` is released once per release (not per attempt) under ``fit_once``."""
    return fit_once and kind_of(c).once_per_release

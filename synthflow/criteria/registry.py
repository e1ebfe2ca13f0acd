"""The registry of criterion kinds: the one place a kind is looked up by name.

Adding a kind is one module (a :class:`~synthflow.criteria.protocol.CriterionKind` with
its ``Params``) and one line in :data:`KINDS` (docs/adding-a-criterion.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from synthflow.config.model import Column, CriterionSpec
from synthflow.config.values import brief, number
from synthflow.criteria import _params
from synthflow.criteria.conditional_mean import ConditionalMean
from synthflow.criteria.faithfulness import Faithfulness
from synthflow.criteria.marginal_tvd import MarginalTVD
from synthflow.criteria.marginals import Marginals
from synthflow.criteria.one_way_ratio import OneWayRatio
from synthflow.criteria.regression.coefficients import RegressionCoefficients
from synthflow.criteria.regression.tstr import RegressionTSTR
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas as pd

    from synthflow.config.model import ReleaseSpec
    from synthflow.criteria.protocol import CriterionKind
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.transform import Transformer

__all__ = [
    "KINDS",
    "kind_of",
    "one_released_once",
    "parse_criteria",
    "parse_criterion",
    "releasable_once",
    "release_once",
    "released_once",
]

KINDS: dict[str, CriterionKind] = {
    k.name: k.Params.impl
    for k in (
        Marginals,
        MarginalTVD,
        OneWayRatio,
        ConditionalMean,
        RegressionCoefficients,
        RegressionTSTR,
        Faithfulness,
    )
}
"""Every criterion kind, by its name in a spec."""


def register(kind: type[CriterionKind]) -> CriterionKind:
    """Add a kind defined outside the package (a statistical office's own measure).

    Call it before loading a spec that uses the kind. Returns the kind's instance.

    Raises:
        ConfigError: If another kind already has the name.
    """
    impl = kind.Params.impl
    if not isinstance(impl, kind):
        raise ConfigError(f"{kind.__name__} declares no Params of its own")
    if KINDS.get(kind.name, impl) is not impl:
        raise ConfigError(f"a criterion kind named {kind.name!r} is already registered")
    KINDS[kind.name] = impl
    return impl


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


def parse_criterion(where: str, raw: Any, columns: Mapping[str, Column]) -> CriterionSpec:
    """One criterion of ``acceptance.criteria``: the common keys, then its kind's ``Params``.

    Raises:
        ConfigError: Naming the key, the value and the fix.
    """
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping, got {brief(raw)}")
    missing = [k for k in _params.COMMON_KEYS if k not in raw]
    if missing:
        raise ConfigError(f"{where}: missing required key(s) {missing}")
    kind = KINDS.get(raw["kind"]) if isinstance(raw["kind"], str) else None
    if kind is None:
        raise ConfigError(
            f"{where}.kind: unknown kind {brief(raw['kind'])}; use one of {sorted(KINDS)}"
        )
    _params.check_keys(where, kind.name, raw, kind.Params)
    return CriterionSpec(
        name=str(raw["name"]),
        kind=kind.name,
        threshold=number(f"{where}.threshold", raw["threshold"]),
        epsilon=number(f"{where}.epsilon", raw["epsilon"], lo=0, lo_open=True),
        params=kind.parse(where, raw, columns),
    )


def parse_criteria(raw: Any, columns: Mapping[str, Column]) -> tuple[CriterionSpec, ...]:
    """``acceptance.criteria``: every criterion, then the checks across criteria.

    Raises:
        ConfigError: Naming the criterion, the key and the fix.
    """
    if not isinstance(raw, list) or not raw:
        raise ConfigError("acceptance.criteria: expected a non-empty list of criteria")
    out = tuple(parse_criterion(f"acceptance.criteria[{i}]", c, columns) for i, c in enumerate(raw))
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise ConfigError(f"acceptance.criteria: names must be unique, got {names}")
    for c in out:
        c.impl.check(c, out, columns)
    return out


def releasable_once(spec_criteria: tuple[CriterionSpec, ...]) -> list[CriterionSpec]:
    """The criteria whose original side can be released once per release."""
    return [c for c in spec_criteria if kind_of(c).once_per_release]


def release_once(
    spec: ReleaseSpec,
    transformer: Transformer,
    original: pd.DataFrame,
    *,
    ledger: Ledger,
    rng: PrivacyRNG,
) -> Any:
    """Release, once for the whole release, what the spec's ``once_per_release`` kind shares.

    The kind's :meth:`~synthflow.criteria.protocol.CriterionKind.release_once` charges
    ``ledger`` before its noise; pass the result to every attempt's evaluation
    (:func:`synthflow.acceptance.evaluate.evaluate`'s ``released_once``).

    Raises:
        ConfigError: If no criterion of the spec is released once per release.
    """
    c = one_released_once(spec.criteria)
    return kind_of(c).release_once(c, spec, transformer, original, ledger=ledger, rng=rng)


def one_released_once(criteria: tuple[CriterionSpec, ...]) -> CriterionSpec:
    """The one criterion ``--fit-once`` releases once per release.

    The release makes one release once and every attempt finds it under one key
    (:data:`~synthflow.criteria.context.RELEASED_ONCE`): a second such criterion would read
    the first's release as its own and count as charged already.

    Raises:
        ConfigError: If the spec has none, or more than one (named, with the fix).
    """
    once = releasable_once(criteria)
    if not once:
        raise ConfigError(
            "--fit-once needs a criterion released once per release (a kind with "
            "once_per_release, e.g. regression_coefficients); the spec has none"
        )
    if len(once) > 1:
        raise ConfigError(
            f"--fit-once releases one criterion once per release; the spec has {len(once)} "
            f"that can be ({', '.join(c.name for c in once)}): release per attempt (no "
            "--fit-once, or a plan made with fit per candidate), or keep one of them"
        )
    return once[0]


def released_once(c: CriterionSpec, *, fit_once: bool) -> bool:
    """Whether ``c`` is released once per release (not per attempt) under ``fit_once``."""
    return fit_once and kind_of(c).once_per_release

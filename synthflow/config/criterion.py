"""An acceptance criterion of the spec: its common fields and its kind's parameters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = ["CriterionParams", "CriterionSpec", "MatchRule"]


@dataclass(frozen=True, kw_only=True)
class MatchRule:
    """When two records may be matched for the faithfulness criterion (SPEC sec. 6)."""

    exact: tuple[str, ...]
    """Columns that must be equal."""
    near: tuple[str, ...]
    """Columns of which at most ``max_near_differences`` may differ."""
    max_near_differences: int = 1
    max_bin_distance: int = 1
    exceptions: tuple[tuple[str, str, str], ...] = ()
    """(column, transformation letter, bin label) triples that must match exactly."""
    ignore: tuple[str, ...] = ()
    """Columns not compared at all (every column in no list must be equal)."""


@dataclass(frozen=True, kw_only=True)
class CriterionParams:
    """The parameters of one criterion kind (each kind module defines its own subclass).

    Frozen and keyword-only; a kind's :meth:`~synthflow.criteria.protocol.CriterionKind.parse`
    builds it from the spec and refuses any key its fields do not name.
    """

    impl: ClassVar[Any] = None
    """The kind that owns these parameters (set when the kind's class is defined)."""


@dataclass(frozen=True, kw_only=True)
class CriterionSpec:
    """One acceptance criterion: threshold, budget and its kind's parameters.

    The kind's parameters read as attributes (``c.column`` is ``c.params.column``); a
    parameter the kind does not have is an AttributeError, never a silent ``None``.
    """

    name: str
    kind: str
    """The kind's name (a key of :data:`synthflow.criteria.KINDS`)."""
    threshold: float
    """The candidate passes this criterion iff the (noisy) measure is below this."""
    epsilon: float
    """Budget for releasing the measure with DP."""
    params: CriterionParams
    """The kind's own parameters."""

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not fields (params, name, ...); dunder lookups
        # (pickle's __setstate__, copy's __deepcopy__) must not recurse into params.
        params = self.__dict__.get("params")
        if name.startswith("__") or params is None:
            raise AttributeError(name)
        try:
            return getattr(params, name)
        except AttributeError:
            raise AttributeError(
                f"criterion {self.__dict__.get('name')!r} (kind {self.__dict__.get('kind')!r}) "
                f"has no parameter {name!r}"
            ) from None

    @property
    def impl(self) -> Any:
        """The criterion's kind (a :class:`~synthflow.criteria.protocol.CriterionKind`)."""
        return type(self.params).impl

"""The rounding rules (``--method ten-five``, ``suppress``, ``round``; not DP).

One class per rule, sharing :class:`Rounding`; the algorithm is
:mod:`synthflow.tables.rounding`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from synthflow.tables.methods.base import BASE, THRESHOLD, Flag, Options, TableMethod, or_default

if TYPE_CHECKING:
    from synthflow.config.model import ReleaseSpec
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.tables.rounding import RoundingOptions
    from synthflow.tables.tabulate import CountTable, ReleasedTable

__all__ = ["Round", "Rounding", "Suppress", "TenFive"]


def _base_below_2(settings: Mapping[str, Any]) -> str:
    base = settings["base"]
    return f"--base {base} publishes every count exactly; use a base >= 2" * (base < 2)


@dataclass(frozen=True, kw_only=True)
class Rounding(TableMethod):
    """A rounding rule: its options name the rule, which is the method's name."""

    options: RoundingOptions

    @classmethod
    def make(cls, **settings: Any) -> Rounding:
        """The rule with its settings (threshold, base)."""
        from synthflow.tables.rounding import RoundingOptions  # noqa: PLC0415

        return cls(options=RoundingOptions(rule=cls.name, **settings))  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        if self.options.rule != self.name:
            raise ValueError(f"the {self.name} method needs rule {self.name!r} options")

    def apply(
        self,
        groups: Sequence[Sequence[CountTable]],
        *,
        spec: ReleaseSpec,
        ledger: Ledger | None,
        rng: PrivacyRNG,
    ) -> list[ReleasedTable]:
        """Apply the rule."""
        from synthflow.tables.rounding import apply_rounding  # noqa: PLC0415

        return apply_rounding(groups, self.options)

    def describe(self) -> dict[str, Any]:
        """Options, for run metadata."""
        return {"method": self.name, **asdict(self.options)}


@dataclass(frozen=True, kw_only=True)
class TenFive(Rounding):
    """The 10-5 rule: suppress counts below the threshold, round the rest to the base."""

    name: ClassVar[str] = "ten-five"
    flags: ClassVar[Mapping[str, Flag]] = {"threshold": THRESHOLD, "base": BASE}

    @classmethod
    def settings(cls, options: Options, spec: ReleaseSpec) -> dict[str, Any]:
        """Threshold (default 10) and base (default 5)."""
        return {
            "threshold": or_default(options.get("threshold"), 10),
            "base": or_default(options.get("base"), 5),
        }

    @classmethod
    def degenerate(cls, settings: Mapping[str, Any]) -> str:
        """A base below 2 rounds nothing."""
        return _base_below_2(settings)


@dataclass(frozen=True, kw_only=True)
class Suppress(Rounding):
    """Threshold suppression: counts below the threshold are left empty."""

    name: ClassVar[str] = "suppress"
    flags: ClassVar[Mapping[str, Flag]] = {"threshold": THRESHOLD}

    @classmethod
    def settings(cls, options: Options, spec: ReleaseSpec) -> dict[str, Any]:
        """Threshold (default 10)."""
        return {"threshold": or_default(options.get("threshold"), 10)}

    @classmethod
    def degenerate(cls, settings: Mapping[str, Any]) -> str:
        """A threshold below 2 suppresses no count above 0."""
        threshold = settings["threshold"]
        text = f"--threshold {threshold} suppresses no count above 0; use a threshold >= 2"
        return text * (threshold < 2)


@dataclass(frozen=True, kw_only=True)
class Round(Rounding):
    """Rounding to the nearest multiple of the base."""

    name: ClassVar[str] = "round"
    flags: ClassVar[Mapping[str, Flag]] = {"base": BASE}

    @classmethod
    def settings(cls, options: Options, spec: ReleaseSpec) -> dict[str, Any]:
        """Base (default 5)."""
        return {"base": or_default(options.get("base"), 5)}

    @classmethod
    def degenerate(cls, settings: Mapping[str, Any]) -> str:
        """A base below 2 rounds nothing."""
        return _base_below_2(settings)

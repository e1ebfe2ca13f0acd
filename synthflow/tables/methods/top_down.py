"""The top-down DP method (``--method top-down``): additive at every level.

The algorithm is :mod:`synthflow.tables.topdown`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from synthflow.tables.methods.base import DPMethod, Flag, Options, floats, or_default

if TYPE_CHECKING:
    from synthflow.config.model import ReleaseSpec
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.tables.tabulate import CountTable, ReleasedTable
    from synthflow.tables.topdown import TopDownOptions

__all__ = ["TopDown"]


@dataclass(frozen=True, kw_only=True)
class TopDown(DPMethod):
    """The top-down method (additive at every level)."""

    name: ClassVar[str] = "top-down"
    flags: ClassVar[Mapping[str, Flag]] = {
        **DPMethod.flags,
        "noise": {"choices": ("laplace", "geometric", "gaussian"), "default": "laplace",
                  "help": "noise of the top-down method"},
        "split": {"help": "top-down shares per level, total first, e.g. 0.01,0.99"},
    }  # fmt: skip
    options: TopDownOptions

    @classmethod
    def settings(cls, options: Options, spec: ReleaseSpec) -> dict[str, Any]:
        """Budget, relation, noise and the shares of the levels."""
        noise = or_default(options.get("noise"), "laplace")
        out = cls.dp_settings(options, spec, gaussian=noise == "gaussian")
        out["mechanism"] = noise
        if options.get("split"):
            out["split"] = floats(options["split"], "--split")
        return out

    @classmethod
    def make(cls, **settings: Any) -> TopDown:
        """The method with its settings."""
        from synthflow.tables.topdown import TopDownOptions  # noqa: PLC0415

        return cls(options=TopDownOptions(**settings))

    def apply(
        self,
        groups: Sequence[Sequence[CountTable]],
        *,
        spec: ReleaseSpec,
        ledger: Ledger | None,
        rng: PrivacyRNG,
    ) -> list[ReleasedTable]:
        """Charge the ledger and release top-down."""
        from synthflow.tables.topdown import top_down  # noqa: PLC0415

        return top_down(groups, self.options, ledger=self.ledger_of(ledger), rng=rng)

    def describe(self) -> dict[str, Any]:
        """Options, for run metadata."""
        return {"method": self.name, **asdict(self.options)}

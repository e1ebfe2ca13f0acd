"""Independent DP noise on every table (``--method laplace``, ``geometric``, ``gaussian``).

One class per mechanism, sharing :class:`IndependentNoise`; the algorithm is
:mod:`synthflow.tables.dpnoise`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from synthflow.tables.methods.base import DPMethod, Flag, Options

if TYPE_CHECKING:
    from synthflow.config.model import ReleaseSpec
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.tables.dpnoise import NoiseOptions
    from synthflow.tables.tabulate import CountTable, ReleasedTable

__all__ = ["Gaussian", "Geometric", "IndependentNoise", "Laplace"]


@dataclass(frozen=True, kw_only=True)
class IndependentNoise(DPMethod):
    """Noise on every table level independently; the options name the mechanism."""

    flags: ClassVar[Mapping[str, Flag]] = {
        **DPMethod.flags,
        "nonnegative": {"action": "store_true", "help": "clip negative counts to 0"},
    }
    options: NoiseOptions

    @classmethod
    def settings(cls, options: Options, spec: ReleaseSpec) -> dict[str, Any]:
        """Budget, relation and clipping."""
        out = cls.dp_settings(options, spec, gaussian=cls.name == "gaussian")
        return out | {"nonnegative": bool(options.get("nonnegative"))}

    @classmethod
    def make(cls, **settings: Any) -> IndependentNoise:
        """The mechanism with its settings."""
        from synthflow.tables.dpnoise import NoiseOptions  # noqa: PLC0415

        return cls(options=NoiseOptions(mechanism=cls.name, **settings))  # type: ignore[arg-type]

    def __post_init__(self) -> None:
        if self.options.mechanism != self.name:
            raise ValueError(f"the {self.name} method needs mechanism {self.name!r} options")

    def apply(
        self,
        groups: Sequence[Sequence[CountTable]],
        *,
        spec: ReleaseSpec,
        ledger: Ledger | None,
        rng: PrivacyRNG,
    ) -> list[ReleasedTable]:
        """Charge the ledger and add noise."""
        from synthflow.tables.dpnoise import independent_noise  # noqa: PLC0415

        return independent_noise(groups, self.options, ledger=self.ledger_of(ledger), rng=rng)

    def describe(self) -> dict[str, Any]:
        """Options, for run metadata."""
        return {"method": self.name, **asdict(self.options)}


@dataclass(frozen=True, kw_only=True)
class Laplace(IndependentNoise):
    """Laplace noise (scale L1 sensitivity / epsilon per level)."""

    name: ClassVar[str] = "laplace"


@dataclass(frozen=True, kw_only=True)
class Geometric(IndependentNoise):
    """Two-sided geometric (discrete Laplace) noise."""

    name: ClassVar[str] = "geometric"


@dataclass(frozen=True, kw_only=True)
class Gaussian(IndependentNoise):
    """Analytic Gaussian noise, (epsilon, delta)-DP."""

    name: ClassVar[str] = "gaussian"

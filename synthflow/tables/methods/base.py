"""What every table protection method is: one base class, and the flags methods share.

A method is a class (one module per method, registered by name in
:data:`synthflow.tables.methods.METHODS`) that declares as class data its name, whether
it is differentially private and its command-line flags (argparse keyword arguments by
destination); its class methods turn the parsed command line into its settings, say when
settings protect nothing and build it; an instance protects tables (:meth:`apply`) and
says what it did (:meth:`describe`). A DP method (:class:`DPMethod`) also declares its
privacy: the budget it charges and the sensitivity its noise is calibrated to.

Light on purpose (no numpy, no pandas): the CLI builds its parser from these classes;
the algorithms (:mod:`synthflow.tables.cellkey`, ...) are imported where a method runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np

    from synthflow.config.model import ReleaseSpec
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.tables.tabulate import CountTable, Microdata, ReleasedTable

__all__ = ["BASE", "DELTA", "EPSILON", "THRESHOLD", "DPMethod", "TableMethod", "floats"]

Flag = Mapping[str, Any]
"""One command-line flag: the keyword arguments of ``add_argument``."""

Options = Mapping[str, Any]
"""The parsed command line, by destination name (``vars(args)``)."""

# The flags several methods read, declared once (the help lists each flag once).
EPSILON: Flag = {"type": float, "help": "total epsilon, split over the tables"}
DELTA: Flag = {"type": float, "help": "total delta (Gaussian; default 1e-6)"}
THRESHOLD: Flag = {"type": int, "help": "suppress counts below this (default 10; cell-key: none)"}
BASE: Flag = {"type": int, "help": "rounding base (default 5)"}


def floats(text: str, name: str) -> tuple[float, ...]:
    """Comma-separated numbers (ConfigError naming the option otherwise)."""
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError as exc:
        raise ConfigError(f"{name}: expected comma-separated numbers, got {text!r}") from exc


def or_default(value: Any, default: Any) -> Any:
    """``value``, or ``default`` where the flag was not given (None)."""
    return default if value is None else value


class TableMethod:
    """A table protection method: its name, flags and settings, and how it protects."""

    name: ClassVar[str]
    """Method name, as on the command line."""
    is_dp: ClassVar[bool] = False
    flags: ClassVar[Mapping[str, Flag]] = {}
    """The flags it reads, by destination (``--rate-small`` is ``rate_small``); the DP
    methods' ``--ledger`` and ``--neighbouring`` are the command's own."""

    @classmethod
    def settings(cls, options: Options, spec: ReleaseSpec) -> dict[str, Any]:
        """Its keyword settings from the parsed flags (only :attr:`flags` are read)."""
        raise NotImplementedError

    @classmethod
    def degenerate(cls, settings: Mapping[str, Any]) -> str:
        """Why these settings publish the counts unprotected ('' when they do not)."""
        return ""

    @classmethod
    def build(cls, **settings: Any) -> TableMethod:
        """The method with these settings (ConfigError for invalid ones)."""
        try:
            return cls.make(**settings)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"method {cls.name!r}: {exc}") from exc

    @classmethod
    def make(cls, **settings: Any) -> TableMethod:
        """The method from its settings (TypeError or ValueError for invalid ones)."""
        return cls(**settings)

    @property
    def budget(self) -> tuple[float, float] | None:
        """Total (epsilon, delta) it charges; None: not DP, it charges nothing."""
        return None

    @property
    def extra_columns(self) -> tuple[str, ...]:
        """Input columns it reads besides the tables' own (an ID column)."""
        return ()

    def record_keys(self, data: Microdata, rng: PrivacyRNG) -> np.ndarray | None:
        """Record keys of ``data`` to tabulate with (None: the method needs none)."""
        return None

    def apply(
        self,
        groups: Sequence[Sequence[CountTable]],
        *,
        spec: ReleaseSpec,
        ledger: Ledger | None,
        rng: PrivacyRNG,
    ) -> list[ReleasedTable]:
        """Protect every level of every table."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """Options, for run metadata."""
        raise NotImplementedError

    def write_public_files(self, out: Path) -> list[Path]:
        """Write the public parameters published with the tables (none by default)."""
        return []


class DPMethod(TableMethod):
    """A differentially private method: noise on counts, charged to a ledger.

    Subclasses hold ``options`` with the total ``epsilon`` and ``delta``, the noise
    ``mechanism`` and the ``neighbouring`` relation.
    """

    is_dp: ClassVar[bool] = True
    flags: ClassVar[Mapping[str, Flag]] = {"epsilon": EPSILON, "delta": DELTA}
    options: Any

    @classmethod
    def dp_settings(cls, o: Options, spec: ReleaseSpec, *, gaussian: bool) -> dict[str, Any]:
        """The budget and relation from the command line (``--delta``: Gaussian only)."""
        if o.get("epsilon") is None:
            raise ConfigError(
                f"--method {cls.name} is differentially private: pass --epsilon (total)"
            )
        neighbouring = o.get("neighbouring") or spec.privacy.neighbouring
        out: dict[str, Any] = {"epsilon": o["epsilon"], "neighbouring": neighbouring}
        if gaussian:
            out["delta"] = or_default(o.get("delta"), 1e-6)
        elif o.get("delta"):
            raise ConfigError(f"--delta applies to Gaussian noise only, not to {cls.name}")
        return out

    @property
    def budget(self) -> tuple[float, float]:
        """Total (epsilon, delta) charged over every table."""
        return (self.options.epsilon, self.options.delta)

    @property
    def sensitivity(self) -> float:
        """Sensitivity of one table level that its noise is calibrated to.

        L2 for Gaussian noise, L1 otherwise, under its neighbouring relation (2 or
        sqrt(2) under ``replace_one``, 1 under ``add_remove``; see
        :func:`synthflow.tables._noise.histogram_sensitivity`).
        """
        from synthflow.tables._noise import histogram_sensitivity  # noqa: PLC0415

        norm: Literal[1, 2] = 2 if self.options.mechanism == "gaussian" else 1
        return histogram_sensitivity(self.options.neighbouring, norm)

    def ledger_of(self, ledger: Ledger | None) -> Ledger:
        """The ledger to charge (ValueError without one: a DP method always charges)."""
        if ledger is None:
            raise ValueError(f"the {self.name} method is DP and needs a ledger to charge")
        return ledger

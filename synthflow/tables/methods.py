"""The table protection methods, each with the CLI options it reads: the one registry.

Each :class:`Method` names its command-line flags (from :data:`FLAGS`), turns the parsed
options into its settings, says when settings protect nothing, and builds itself
(:mod:`synthflow.tables.protect` holds the classes). ``tables protect`` adds every flag
once, grouped by the methods that read it, and asks the chosen method for the rest:
adding a method is one entry here (and a flag in :data:`FLAGS` if it needs a new one).

Light on purpose (no numpy, no pandas): the CLI builds its parser from this module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from synthflow.config.model import ReleaseSpec
    from synthflow.tables.protect import TableMethod

__all__ = ["FLAGS", "METHODS", "Method", "build_method", "floats"]

Options = Mapping[str, Any]
"""The parsed command line, by destination name (``vars(args)``)."""

FLAGS: dict[str, dict[str, Any]] = {
    "epsilon": {"type": float, "help": "total epsilon, split over the tables"},
    "delta": {"type": float, "help": "total delta (Gaussian; default 1e-6)"},
    "nonnegative": {"action": "store_true", "help": "clip negative counts to 0"},
    "noise": {"choices": ("laplace", "geometric", "gaussian"), "default": "laplace",
              "help": "noise of the top-down method"},
    "split": {"help": "top-down shares per level, total first, e.g. 0.01,0.99"},
    "keys": {"type": int, "choices": (256, 4096), "default": 4096, "help": "key range"},
    "max_perturbation": {"type": int, "help": "largest absolute perturbation"},
    "rate_small": {"type": float, "help": "perturbation rate of a count of 1"},
    "rate_large": {"type": float, "help": "perturbation rate of large counts"},
    "decay": {"type": float, "help": "counts over which the rate falls by 1/e"},
    "zero_rate": {"type": float, "help": "share of zero cells perturbed"},
    "record_key_column": {"help": "ID column: record key = ID mod keys"},
    "threshold": {"type": int, "help": "suppress counts below this (default 10; cell-key: none)"},
    "base": {"type": int, "help": "rounding base (default 5)"},
}  # fmt: skip
"""Every method-specific flag, by destination (``--rate-small`` is ``rate_small``)."""


def floats(text: str, name: str) -> tuple[float, ...]:
    """Comma-separated numbers (ConfigError naming the option otherwise)."""
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError as exc:
        raise ConfigError(f"{name}: expected comma-separated numbers, got {text!r}") from exc


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


@dataclass(frozen=True, kw_only=True)
class Method:
    """One protection method: its flags, its settings from them, and its builder."""

    name: str
    is_dp: bool
    flags: tuple[str, ...]
    """The :data:`FLAGS` it reads (the DP methods' ``--ledger`` is the command's own)."""
    settings: Callable[[Options, ReleaseSpec], dict[str, Any]]
    """Its keyword settings from the parsed flags (only ``flags`` are read)."""
    builder: str
    """``Class`` or ``Class:variant`` in :mod:`synthflow.tables.protect`."""
    degenerate: Callable[[dict[str, Any]], str] = lambda _: ""
    """Why these settings publish the counts unprotected ('' when they do not)."""

    def build(self, **settings: Any) -> TableMethod:
        """The method with these settings (ConfigError for invalid ones)."""
        # Heavy, so imported here; protect never imports this module (no cycle).
        from synthflow.tables.protect import (  # noqa: PLC0415
            CellKey,
            IndependentNoise,
            Rounding,
            TopDown,
        )

        classes = {c.__name__: c for c in (CellKey, IndependentNoise, Rounding, TopDown)}
        cls_name, _, variant = self.builder.partition(":")
        cls: Any = classes[cls_name]
        try:
            return cls.make(variant or self.name, **settings)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"method {self.name!r}: {exc}") from exc


def _cell_key(o: Options, spec: ReleaseSpec) -> dict[str, Any]:
    from synthflow.tables.ptable import PRESETS  # noqa: PLC0415

    names = ("max_perturbation", "rate_small", "rate_large", "decay", "zero_rate")
    changed = {k: o[k] for k in names if o.get(k) is not None}
    try:
        params = dataclasses.replace(PRESETS[str(o["keys"])], **changed)
    except ValueError as exc:
        raise ConfigError(f"p-table: {exc}") from exc
    return {
        "ptable": params,
        "threshold": _or(o.get("threshold"), 0),
        "record_key_column": o.get("record_key_column"),
    }


def _dp_common(o: Options, spec: ReleaseSpec, name: str, *, gaussian: bool) -> dict[str, Any]:
    if o.get("epsilon") is None:
        raise ConfigError(f"--method {name} is differentially private: pass --epsilon (total)")
    neighbouring = o.get("neighbouring") or spec.privacy.neighbouring
    out: dict[str, Any] = {"epsilon": o["epsilon"], "neighbouring": neighbouring}
    if gaussian:
        out["delta"] = _or(o.get("delta"), 1e-6)
    elif o.get("delta"):
        raise ConfigError(f"--delta applies to Gaussian noise only, not to {name}")
    return out


def _noise(name: str) -> Callable[[Options, ReleaseSpec], dict[str, Any]]:
    def settings(o: Options, spec: ReleaseSpec) -> dict[str, Any]:
        out = _dp_common(o, spec, name, gaussian=name == "gaussian")
        return out | {"nonnegative": bool(o.get("nonnegative"))}

    return settings


def _top_down(o: Options, spec: ReleaseSpec) -> dict[str, Any]:
    noise = _or(o.get("noise"), "laplace")
    out = _dp_common(o, spec, "top-down", gaussian=noise == "gaussian") | {"mechanism": noise}
    if o.get("split"):
        out["split"] = floats(o["split"], "--split")
    return out


def _base_below_2(s: dict[str, Any]) -> str:
    return f"--base {s['base']} publishes every count exactly; use a base >= 2" * (s["base"] < 2)


def _threshold_below_2(s: dict[str, Any]) -> str:
    text = f"--threshold {s['threshold']} suppresses no count above 0; use a threshold >= 2"
    return text * (s["threshold"] < 2)


_NOISE_FLAGS = ("epsilon", "delta", "nonnegative")
_CELL_KEY_FLAGS = ("keys", "max_perturbation", "rate_small", "rate_large", "decay",
                   "zero_rate", "record_key_column", "threshold")  # fmt: skip

METHODS: dict[str, Method] = {m.name: m for m in (
    Method(name="cell-key", is_dp=False, flags=_CELL_KEY_FLAGS, settings=_cell_key,
           builder="CellKey",
           degenerate=lambda s: "--rate-small 0 perturbs no count; use a rate > 0"
           * (s["ptable"].rate_small == 0)),
    Method(name="ten-five", is_dp=False, flags=("threshold", "base"), builder="Rounding:ten-five",
           settings=lambda o, _: {"threshold": _or(o.get("threshold"), 10),
                                  "base": _or(o.get("base"), 5)},
           degenerate=_base_below_2),
    Method(name="suppress", is_dp=False, flags=("threshold",), builder="Rounding:suppress",
           settings=lambda o, _: {"threshold": _or(o.get("threshold"), 10)},
           degenerate=_threshold_below_2),
    Method(name="round", is_dp=False, flags=("base",), builder="Rounding:round",
           settings=lambda o, _: {"base": _or(o.get("base"), 5)}, degenerate=_base_below_2),
    Method(name="laplace", is_dp=True, flags=_NOISE_FLAGS, settings=_noise("laplace"),
           builder="IndependentNoise:laplace"),
    Method(name="geometric", is_dp=True, flags=_NOISE_FLAGS, settings=_noise("geometric"),
           builder="IndependentNoise:geometric"),
    Method(name="gaussian", is_dp=True, flags=_NOISE_FLAGS, settings=_noise("gaussian"),
           builder="IndependentNoise:gaussian"),
    Method(name="top-down", is_dp=True, flags=("epsilon", "delta", "noise", "split"),
           settings=_top_down, builder="TopDown"),
)}  # fmt: skip
"""Method name (as on the command line) -> :class:`Method`."""


def build_method(name: str, **settings: Any) -> TableMethod:
    """Build a method by name (see :data:`METHODS`).

    Raises:
        ConfigError: For an unknown method or invalid settings.
    """
    if name not in METHODS:
        raise ConfigError(f"unknown method {name!r}; use one of {sorted(METHODS)}")
    return METHODS[name].build(**settings)

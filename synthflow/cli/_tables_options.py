"""The options of 'tables protect' turned into a method's settings, and the checks on them."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from synthflow.config.model import ReleaseSpec

__all__ = [
    "_check_private_use",
    "_floats",
    "_method_options",
    "_not_dp_statement",
    "_or",
    "_warn_not_dp",
]


def _floats(text: str, name: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError as exc:
        raise ConfigError(f"{name}: expected comma-separated numbers, got {text!r}") from exc


def _or(value: Any, default: Any) -> Any:
    return default if value is None else value


def _method_options(args: argparse.Namespace, spec: ReleaseSpec) -> dict[str, Any]:
    from synthflow.tables.ptable import PRESETS

    m = args.method
    neighbouring = args.neighbouring or spec.privacy.neighbouring
    if m == "cell-key":
        base = PRESETS[str(args.keys)]
        overrides = {
            "max_perturbation": args.max_perturbation,
            "rate_small": args.rate_small,
            "rate_large": args.rate_large,
            "decay": args.decay,
            "zero_rate": args.zero_rate,
        }
        try:
            params = dataclasses.replace(
                base, **{k: v for k, v in overrides.items() if v is not None}
            )
        except ValueError as exc:
            raise ConfigError(f"p-table: {exc}") from exc
        return {
            "ptable": params,
            "threshold": _or(args.threshold, 0),
            "record_key_column": args.record_key_column,
        }
    if m == "ten-five":
        return {"threshold": _or(args.threshold, 10), "base": _or(args.base, 5)}
    if m == "suppress":
        return {"threshold": _or(args.threshold, 10)}
    if m == "round":
        return {"base": _or(args.base, 5)}
    if args.epsilon is None:
        raise ConfigError(f"--method {m} is differentially private: pass --epsilon (total)")
    opts: dict[str, Any] = {"epsilon": args.epsilon, "neighbouring": neighbouring}
    if m == "gaussian" or (m == "top-down" and args.noise == "gaussian"):
        opts["delta"] = args.delta if args.delta is not None else 1e-6
    elif args.delta:
        raise ConfigError(f"--delta applies to Gaussian noise only, not to {m}")
    if m == "top-down":
        opts["mechanism"] = args.noise
        if args.split:
            opts["split"] = _floats(args.split, "--split")
    else:
        opts["nonnegative"] = args.nonnegative
    return opts


def _not_dp_statement(method: str) -> str:
    return (
        f"These tables were protected by {method}, a traditional disclosure-control method. "
        "It is NOT differentially private: it gives no formal privacy guarantee, and no "
        "privacy budget was charged for it."
    )


def _warn_not_dp(args: argparse.Namespace, out: Path) -> None:
    """Say in the output's own files, and on stderr, that the tables are not DP."""
    statement = _not_dp_statement(args.method)
    (out / "NOT_DIFFERENTIALLY_PRIVATE.txt").write_text(statement + "\n", encoding="utf-8")
    if not args.public:
        print(f"synthflow tables protect: warning: {statement}", file=sys.stderr)


def _check_private_use(
    args: argparse.Namespace, spec: ReleaseSpec, opts: dict[str, Any], *, is_dp: bool
) -> None:
    """Refuse, before reading data, what would misstate or void the protection.

    A dataset ledger holds one neighbouring relation, the spec's: a DP method
    calibrated for another would be charged for a guarantee it does not give (add/remove
    noise is half of what a replaced row needs). On data not declared public, a
    traditional method with settings that protect nothing is refused.
    """
    if is_dp and (args.ledger is not None or not args.public):
        if opts.get("neighbouring", spec.privacy.neighbouring) != spec.privacy.neighbouring:
            raise ConfigError(
                f"--neighbouring {args.neighbouring} differs from the spec's relation "
                f"({spec.privacy.neighbouring}), which the dataset's ledger accounts in: "
                "noise calibrated for another relation would be charged for a guarantee it "
                "does not give. Drop --neighbouring (or use it with --public data only)"
            )
    if is_dp or args.public:
        return
    degenerate = ""
    if args.method in ("round", "ten-five") and opts["base"] < 2:
        degenerate = f"--base {opts['base']} publishes every count exactly; use a base >= 2"
    elif args.method == "suppress" and opts["threshold"] < 2:
        degenerate = (
            f"--threshold {opts['threshold']} suppresses no count above 0; use a threshold >= 2"
        )
    elif args.method == "cell-key" and opts["ptable"].rate_small == 0:
        degenerate = "--rate-small 0 perturbs no count; use a rate > 0"
    if degenerate:
        raise ConfigError(f"on data not declared public, {degenerate}")

"""The method flags of 'tables protect' (declared by the methods), and the checks on them.

Each method class in :data:`synthflow.tables.methods.METHODS` declares the flags it reads;
the parser gets every flag once, in a group that says which methods read it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from synthflow.config.model import ReleaseSpec

__all__ = ["add_method_flags", "check_private_use", "not_dp_statement", "warn_not_dp"]


def not_dp_statement(method: str) -> str:
    return (
        f"These tables were protected by {method}, a traditional disclosure-control method. "
        "It is NOT differentially private: it gives no formal privacy guarantee, and no "
        "privacy budget was charged for it."
    )


def warn_not_dp(args: argparse.Namespace, out: Path) -> None:
    """Say in the output's own files, and on stderr, that the tables are not DP."""
    statement = not_dp_statement(args.method)
    (out / "NOT_DIFFERENTIALLY_PRIVATE.txt").write_text(statement + "\n", encoding="utf-8")
    if not args.public:
        print(f"synthflow tables protect: warning: {statement}", file=sys.stderr)


def check_private_use(
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
    from synthflow.tables.methods import METHODS

    degenerate = METHODS[args.method].degenerate(opts)
    if degenerate:
        raise ConfigError(f"on data not declared public, {degenerate}")


def add_method_flags(p: argparse.ArgumentParser) -> None:
    """Every method's flags, once each, grouped by the methods that read them."""
    from synthflow.tables.methods import FLAGS, METHODS

    readers: dict[str, list[str]] = {}
    for m in METHODS.values():
        for flag in m.flags:
            readers.setdefault(flag, []).append(m.name)
    groups: dict[tuple[str, ...], argparse._ArgumentGroup] = {}
    for flag, kwargs in FLAGS.items():
        who = tuple(readers.get(flag, ()))
        if who not in groups:
            groups[who] = p.add_argument_group(f"read by {', '.join(who) or 'no method'}")
        groups[who].add_argument("--" + flag.replace("_", "-"), **kwargs)

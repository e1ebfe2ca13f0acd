"""``synthflow ledger show`` (a ledger's balance and history) and ``synthflow ledger adopt``.

``show`` reads a ledger file for what it records (never charging it): the dataset's
total, what is spent and left, and every charge in order. Each charge's label names a
mechanism and its public parameters, never a data value.

``adopt``: take on a dataset ledger under this ``SYNTHFLOW_HOME``.

A dataset ledger holding charges that this home has no record of (another user's home,
a ledger moved or restored from a backup), or whose record here cannot be read, is
refused by every command: it may be an older copy that forgets a spend. Adopting it is
the steward's explicit act (:func:`synthflow.privacy.ledger.adopt_ledger`), recorded as a line
of the ledger; a ledger that forgot part of the head recorded here is adopted with that
spend charged again.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from synthflow.cli.conventions import add_command

__all__ = ["register"]


def _adopt(args: argparse.Namespace) -> int:
    from synthflow.privacy.ledger import adopt_ledger

    done = adopt_ledger(args.ledger)
    if not done.adopted:
        print(
            f"synthflow ledger adopt: {done.path} extends its record under SYNTHFLOW_HOME "
            f"{done.home} ({done.holds}): nothing to adopt, nothing written"
        )
        return 0
    said = [
        f"synthflow ledger adopt: adopted {done.path} under SYNTHFLOW_HOME {done.home}: it "
        f"held {done.holds}; line {done.line} of the ledger records the adoption"
    ]
    if done.recorded is not None:
        lines, spent = done.recorded
        said.append(
            f"the record here had {lines} line(s) and epsilon {spent:.6g} spent, and agreed "
            f"with the file's first {done.agreed_lines} line(s): the file forgot epsilon "
            f"{done.carried_epsilon:.6g} (delta {done.carried_delta:.3g}), charged again on "
            "that line"
        )
    if done.unreadable:
        said.append(f"the unreadable record here ({done.unreadable}) was replaced")
    print("; ".join(said))
    if done.over_total:
        print(
            "synthflow ledger adopt: warning: the ledger now records more than its total: "
            "the dataset's budget is spent, and no command can charge it",
            file=sys.stderr,
        )
    return 0


def _show(args: argparse.Namespace) -> int:
    import datetime
    from pathlib import Path

    from synthflow.errors import ConfigError
    from synthflow.privacy.ledger import read_ledger

    path = Path(args.ledger)
    if not path.is_file():
        raise ConfigError(
            f"no ledger at {str(path)!r}: give the --ledger FILE a release, run, evaluate or "
            "tables protect charged (or a release's enclave ledger, PRIVATE_DIR/ledger.jsonl)"
        )
    from synthflow.cli.conventions import check_json

    check_json(args.json, force=args.force, protected=(path,))
    ledger = read_ledger(path)
    header = ledger.header or {}
    charges = ledger.charges
    total = header.get("total_epsilon")
    total_delta = float(header.get("total_delta", 0.0) or 0.0)
    history: list[dict[str, Any]] = [
        {"time": datetime.datetime.fromtimestamp(c.time, tz=datetime.timezone.utc)
         .isoformat(timespec="seconds"), "epsilon": c.epsilon, "delta": c.delta,
         "mechanism": c.mechanism, "what": c.what}
        for c in charges
    ]  # fmt: skip
    doc: dict[str, Any] = {
        "ledger": str(path.resolve()),
        "dataset_ledger": bool(header),
        "total_epsilon": total,
        "total_delta": total_delta if header else None,
        "spent_epsilon": ledger.spent_epsilon,
        "spent_delta": ledger.spent_delta,
        "left_epsilon": None if total is None else max(float(total) - ledger.spent_epsilon, 0.0),
        "left_delta": None if total is None else max(total_delta - ledger.spent_delta, 0.0),
        "charges": history,
    }
    if args.json:
        from synthflow.cli.conventions import write_json

        write_json(args.json, doc)
        if args.json == "-":
            return 0
    lines = [f"ledger   {doc['ledger']}"]
    if total is None:
        lines.append("total    none: not a dataset ledger (an enclave's or a run's own)")
        lines.append(f"spent    epsilon {ledger.spent_epsilon:.6g}, delta {ledger.spent_delta:.3g}")
    else:
        lines += [
            f"total    epsilon {float(total):g}, delta {total_delta:.3g}",
            f"spent    epsilon {ledger.spent_epsilon:.6g}, delta {ledger.spent_delta:.3g}",
            f"left     epsilon {doc['left_epsilon']:.6g}, delta {doc['left_delta']:.3g}",
        ]
    lines.append(f"{len(charges)} charge(s), oldest first:" if charges else "no charges yet")
    for i, c in enumerate(history, 1):
        lines.append(
            f"  {i:>3}  {c['time']}  epsilon {c['epsilon']:<10.6g} delta {c['delta']:<8.3g} "
            f"{c['what']}"
        )
    print("\n".join(lines))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``ledger`` (``ledger show``, ``ledger adopt``) to the CLI."""
    parser = add_command(
        sub,
        "ledger",
        help="manage a dataset's persistent privacy ledger",
        description="Manage a dataset's persistent privacy ledger (--ledger FILE of run, "
        "evaluate, tables protect and release).",
    )
    ledger_sub = parser.add_subparsers(dest="ledger_command", metavar="SUBCOMMAND", required=True)
    p = add_command(
        ledger_sub,
        "adopt",
        help="take on a dataset ledger that this SYNTHFLOW_HOME has no record of "
        "(recorded in the ledger)",
        description="Take on the dataset ledger LEDGER under this SYNTHFLOW_HOME. Every "
        "command refuses a ledger holding charges that this home has no record of (another "
        "user's home, a ledger moved or restored from a backup), or whose record here "
        "cannot be read: it may be an older copy that forgets a spend. Adopt only the "
        "dataset's latest ledger. The adoption is a line of the ledger. A ledger that "
        "forgot part of the head recorded here (it was rolled back, then charged under "
        "another home) is adopted with the epsilon and delta it forgot charged again on "
        "that line. A ledger that extends its record here is left as it is.",
    )
    p.add_argument("ledger", metavar="LEDGER", help="the dataset ledger file (--ledger)")
    p.set_defaults(func=_adopt)
    p = add_command(
        ledger_sub,
        "show",
        options=("json", "force"),
        help="a ledger's balance (total, spent, left) and every charge, oldest first",
        description="Show what the ledger file LEDGER records: the dataset's total budget, "
        "what is spent and left, and every charge in order (time, epsilon, delta, what was "
        "released). Reads the file only: nothing is charged or written.",
    )
    p.add_argument("ledger", metavar="LEDGER", help="a ledger file (--ledger, or an enclave's)")
    p.set_defaults(func=_show)

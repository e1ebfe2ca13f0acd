"""``synthflow ledger adopt``: take on a dataset ledger under this ``SYNTHFLOW_HOME``.

A dataset ledger holding charges that this home has no record of (another user's home,
a ledger moved or restored from a backup), or whose record here cannot be read, is
refused by every command: it may be an older copy that forgets a spend. Adopting it is
the steward's explicit act (:func:`synthflow.ledger.adopt_ledger`), recorded as a line
of the ledger; a ledger that forgot part of the head recorded here is adopted with that
spend charged again.
"""

from __future__ import annotations

import argparse
import sys

from synthflow.cli.conventions import add_command

__all__ = ["register"]


def _adopt(args: argparse.Namespace) -> int:
    from synthflow.ledger import adopt_ledger

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


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``ledger`` (``ledger adopt``) to the CLI."""
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

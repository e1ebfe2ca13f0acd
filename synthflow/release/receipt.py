"""What a steward reads at the end of ``synthflow release``: a receipt, or the options.

After a release: what it spent and what is left on the dataset ledger, what to publish
and what to keep in the enclave (#61 item 3). After a selection that released nothing:
the steward's options, each with its cost (#61 item 4). Public figures only: epsilons
and paths.
"""

from __future__ import annotations

import json
from pathlib import Path

from synthflow.errors import ConfigError
from synthflow.privacy.ledger import read_ledger
from synthflow.release.reprovenance import replace_provenance_line
from synthflow.release.spend import selection_spend_line

__all__ = ["next_steps", "released_receipt"]


def _figures(private_dir: Path, ledger_path: str | Path | None) -> tuple[float, float | None]:
    """This selection's epsilon (its enclave ledger) and the dataset ledger's left (or None)."""
    try:
        eps = read_ledger(private_dir / "ledger.jsonl").spent_epsilon
    except (ConfigError, OSError, ValueError):
        return 0.0, None
    if ledger_path is None:
        return eps, None
    try:
        shared = read_ledger(ledger_path)
        total = float((shared.header or {})["total_epsilon"])
    except (ConfigError, OSError, ValueError, KeyError, TypeError):
        return eps, None
    return eps, max(total - shared.spent_epsilon, 0.0)


def next_steps(private_dir: Path, ledger_path: str | Path | None) -> str:
    """After a selection that released nothing: the steward's options and what each costs."""
    eps, left = _figures(private_dir, ledger_path)
    again = f"charges epsilon {eps:.6g} again" if eps > 0 else "charges the same again"
    if left is not None and eps > 0:
        more = int(left / eps + 1e-9)
        again += f"; the ledger has {left:.6g} left, room for {more} more"
    return (
        "what next:\n"
        "  1. stop: nothing is published; what was spent stays spent\n"
        f"  2. run the same release again (a fresh draw of its noise): it {again}\n"
        "  3. plan for a higher release probability ('synthflow plan SPEC ... "
        "--release-probability 0.99', on public data, spends nothing): each attempt costs "
        "more, and fails less often\n"
        "  4. agree looser thresholds with the data's users, then plan again"
    )


def released_receipt(out: Path, private_dir: Path, ledger_path: str | Path | None,
                     spec: str) -> str:  # fmt: skip
    """After a release: what it spent, what is left, what to publish and what to keep.

    When the package publishes a bundled spec's provenance unconfirmed, replacing it is
    the first thing said (a re-render, nothing charged).
    """
    first = ""
    try:
        acc = json.loads((out / "acceptance.json").read_text("utf-8"))
    except (OSError, ValueError):
        acc = {}
    if isinstance(acc, dict) and acc.get("provenance_warning"):
        first = f"  {replace_provenance_line(out)}\n"
    return (
        f"released: {selection_spend_line(private_dir, ledger_path)}\n"
        + first
        + f"  publish: {out} (the release package: the synthetic data, its datasheet "
        "README.md, acceptance.json)\n"
        f"  keep in the enclave, never publish: {private_dir} (its ledger, transcript and "
        "saved fit)\n"
        f"  before publishing: check the package as a reviewer will: synthflow audit {out} "
        f"{spec}"
    )

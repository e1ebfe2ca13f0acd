"""What a release spends: the dataset's budget checked before the charge, and said after.

Before the charge, :func:`check_dataset_budget` refuses a selection the dataset's ledger
cannot afford (the release's pre-flight, :mod:`synthflow.release.preflight`). After it,
every end without a release says what was spent and what is left
(:func:`selection_spend_line`), and the published package states the ledger's
cumulative spend (:func:`dataset_spent`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synthflow.errors import (
    ConfigError,
)
from synthflow.privacy.ledger import Ledger, read_ledger

__all__ = [
    "check_dataset_budget",
    "dataset_spent",
    "selection_spend_line",
    "selection_spent",
]


def selection_spent(private_dir: Path) -> float:
    """Epsilon the enclave's ledger records (0 if the selection has not charged)."""
    try:
        return read_ledger(private_dir / "ledger.jsonl").spent_epsilon
    except (ConfigError, OSError):
        return 0.0


def selection_spend_line(private_dir: Path, ledger_path: str | Path | None) -> str:
    """What a selection spent, what its dataset ledger has left and where it is.

    Said at every end without a release (a stop, an error or an interrupt after the
    charge): "spent epsilon X (delta D) of Y; Z left; ledger PATH".
    """
    try:
        enclave = read_ledger(private_dir / "ledger.jsonl")
        eps, delta = enclave.spent_epsilon, enclave.spent_delta
    except (ConfigError, OSError, ValueError):
        return f"the enclave ledger {str(private_dir / 'ledger.jsonl')!r} cannot be read"
    if eps == 0:
        return "nothing was spent"
    if ledger_path is None:
        where = private_dir / "ledger.jsonl"
        return f"spent epsilon {eps:.6g} (delta {delta:.3g}); enclave ledger {where}"
    try:
        shared = read_ledger(ledger_path)
        header = shared.header or {}
        total, total_delta = float(header["total_epsilon"]), float(header.get("total_delta", 0))
    except (ConfigError, OSError, ValueError, KeyError, TypeError):
        return f"spent epsilon {eps:.6g} (delta {delta:.3g}); ledger {ledger_path}"
    left = max(total - shared.spent_epsilon, 0.0)
    left_delta = max(total_delta - shared.spent_delta, 0.0)
    return (
        f"spent epsilon {eps:.6g} (delta {delta:.3g}) of the total {total:g}; {left:.6g} left "
        f"(delta {left_delta:.3g}); ledger {ledger_path}"
    )


def check_dataset_budget(
    shared: Ledger | None, cost: Any, ledger_path: Any, *, resuming: bool, private_dir: Path
) -> None:
    """Refuse a new selection the dataset's ledger cannot afford, before its enclave exists.

    A charge refused later would leave a started selection in a new --private-dir. When
    the budget is short because a selection is running in ``private_dir`` now (the loser
    of two identical commands), that is said, not what is left.
    """
    from synthflow.release.enclave import enclave_busy  # noqa: PLC0415
    from synthflow.release.shortfall import shortfall  # noqa: PLC0415

    if shared is None or resuming or shared.can_afford(cost.total, cost.total_delta):
        return
    if enclave_busy(private_dir):
        raise ConfigError(
            f"a selection is running in --private-dir {str(private_dir)!r} now (another "
            "synthflow release holds its lock) and has charged the dataset's ledger: wait "
            "for it to finish, then re-run the same command to see its outcome. Nothing "
            "was spent by this command"
        )
    short = shortfall(
        cost,
        epsilon=shared.remaining_epsilon,
        delta=max(shared.total_delta - shared.spent_delta, 0.0),
        where=f"the dataset's ledger {str(ledger_path)!r}",
        total=(shared.total_epsilon, shared.total_delta),
    )
    short = short or f"epsilon {cost.total:g} (delta {cost.total_delta:g}), more than is left"
    raise ConfigError(f"this release costs {short}; nothing was spent")


def dataset_spent(ledger_path: str | Path | None) -> tuple[float, float] | None:
    """The data's ledger's (epsilon, delta) spent so far, this selection included."""
    if ledger_path is None or not Path(ledger_path).exists():
        return None
    shared = read_ledger(ledger_path)
    return shared.spent_epsilon, shared.spent_delta

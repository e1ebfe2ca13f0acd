"""The release job's checks before anything is charged: outputs, plan, budget, provenance."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from synthflow.errors import (
    ConfigError,
)
from synthflow.ledger import Ledger
from synthflow.release._datasheet import provenance_warning
from synthflow.resources import bundled_spec_of

__all__ = [
    "_check_dataset_budget",
    "_check_plan_holds",
    "_check_writable",
    "_read_plan",
    "_spent",
    "_unconfirmed_provenance",
]


def _spent(private_dir: Path) -> float:
    """Epsilon the enclave's ledger records (0 if the selection has not charged)."""
    try:
        return Ledger(total_epsilon=1e300, path=private_dir / "ledger.jsonl").spent_epsilon
    except (ConfigError, OSError):
        return 0.0


def _check_writable(option: str, path: Path) -> None:
    """Refuse an output that cannot be written (read-only, not a directory) up front."""
    import os  # noqa: PLC0415

    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise ConfigError(f"{option} {str(path)!r}: {str(existing)!r} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(
            f"{option} {str(path)!r} cannot be written ({str(existing)!r} is read-only for "
            "this user); choose a writable directory. Nothing was spent"
        )


def _check_dataset_budget(
    shared: Ledger | None, cost: Any, ledger_path: Any, *, resuming: bool
) -> None:
    """Refuse a new selection the dataset's ledger cannot afford, before its enclave exists.

    A charge refused later would leave a started selection in a new --private-dir.
    """
    if shared is None or resuming or shared.can_afford(cost.total, cost.total_delta):
        return
    raise ConfigError(
        f"this release costs epsilon {cost.total:g} ({cost.to_json()['formula']}) but the "
        f"dataset's ledger {str(ledger_path)!r} has {shared.remaining_epsilon:g} left of "
        f"its total {shared.total_epsilon:g}; nothing was spent"
    )


def _check_plan_holds(plan: dict[str, Any], total: float, candidate_ids: list[str]) -> None:
    """A planned release spends no more than its plan, on the plan's candidates."""
    planned = plan.get("candidates")
    if isinstance(planned, dict) and sorted(planned) != sorted(candidate_ids):
        raise ConfigError(
            "the candidates file differs from the plan's candidates; give the candidates.yaml "
            "written beside that plan.json (nothing was spent)"
        )
    if total > float(plan["total_epsilon"]) + 1e-9:
        raise ConfigError(
            f"this release would cost epsilon {total:.6g} but its plan says "
            f"{float(plan['total_epsilon']):.6g} (the cost depends on the row count, which "
            "differs from the plan's); re-plan with the release's row count. Nothing was spent"
        )


def _read_plan(path: str | Path, spec: Any) -> dict[str, Any]:
    """plan.json, checked to be the plan that wrote ``spec``."""
    p = Path(path)
    try:
        plan = json.loads(p.read_text("utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"--plan {str(p)!r} does not exist; give plan.json from 'synthflow plan'"
        ) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--plan {str(p)!r} is not a plan.json ({type(exc).__name__})") from exc
    needed = {"planned_spec_sha256", "fit_once", "options", "total_epsilon", "release_probability"}
    if not isinstance(plan, dict) or not needed <= set(plan):
        raise ConfigError(f"--plan {str(p)!r} is not a plan.json written by 'synthflow plan'")
    if plan["planned_spec_sha256"] != spec.sha256:
        raise ConfigError(
            f"--plan {str(p)!r} planned another spec (sha256 "
            f"{plan['planned_spec_sha256'][:12]}..., {spec.path} is {spec.sha256[:12]}...): "
            "give the spec.yaml written beside that plan"
        )
    return plan


def _unconfirmed_provenance(spec: Any, datasheet: Any) -> str | None:
    """The datasheet's warning when its provenance is a bundled spec's (said on stderr too)."""
    bundled = bundled_spec_of(spec.sha256) if datasheet is None else None
    if bundled is None:
        return None
    warning = provenance_warning(bundled, spec.datasheet)
    print(f"synthflow release: warning: {warning}", file=sys.stderr)
    return warning

"""Private selection, the release package and its audit (SPEC sec. 1, 8, 10)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from synthflow._lazy import lazy_package

if TYPE_CHECKING:  # the exports, imported on first use (synthflow/_lazy.py)
    from synthflow.cost import SelectionCost, selection_cost
    from synthflow.release.audit import AuditReport, audit_release
    from synthflow.release.publish import public_parameters, write_release
    from synthflow.release.selection import AttemptResult, SelectionOutcome, private_selection

__all__ = [
    "AttemptResult",
    "AuditReport",
    "SelectionCost",
    "SelectionOutcome",
    "audit_release",
    "private_selection",
    "public_parameters",
    "selection_cost",
    "write_release",
]

lazy_package(__name__)

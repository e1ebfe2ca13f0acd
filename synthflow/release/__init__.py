"""Private selection, the release package and its audit (SPEC sec. 1, 8, 10)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from synthflow._util.lazy import lazy_package

if TYPE_CHECKING:  # the exports, imported on first use (synthflow/_util/lazy.py)
    from synthflow.release._provenance import bundled_provenance_of, provenance_warning
    from synthflow.release.attempt import AttemptResult
    from synthflow.release.audit import AuditReport, audit_release
    from synthflow.release.cost import SelectionCost, selection_cost
    from synthflow.release.publish import public_parameters, write_release
    from synthflow.release.selection import SelectionOutcome, private_selection

__all__ = [
    "AttemptResult",
    "AuditReport",
    "SelectionCost",
    "SelectionOutcome",
    "audit_release",
    "bundled_provenance_of",
    "private_selection",
    "provenance_warning",
    "public_parameters",
    "selection_cost",
    "write_release",
]

lazy_package(__name__)

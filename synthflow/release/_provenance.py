"""Whose provenance a release publishes, and the warning when nothing confirmed it.

A release made with a bundled spec, or with a spec derived from one that states its
datasheet, publishes that bundled spec's provenance (title, source, population, ...)
for data nobody checked: the datasheet carries a warning, and the audit requires it.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from synthflow.errors import ConfigError

__all__ = [
    "REPLACE_HOW",
    "bundled_provenance_of",
    "earlier_provenance_warnings",
    "legacy_provenance_warning",
    "provenance_warning",
]

_COPIED = ("title", "source", "population", "period", "publisher")
"""The provenance fields a bundled spec's datasheet states for its own data."""


def bundled_provenance_of(spec: Any) -> str | None:
    """The bundled spec whose provenance ``spec`` publishes, or None.

    By content, not by name: the bundled file itself (or a copy), or any spec that
    states the same datasheet as a bundled one: a spec written by ``synthflow plan``
    from it (budgets changed), a copy with other thresholds. Such a release publishes
    the bundled spec's provenance for data nobody checked, so it carries the warning.
    """
    from synthflow.release.shipped import planned_spec_of  # noqa: PLC0415
    from synthflow.resources import bundled_spec_of, bundled_specs  # noqa: PLC0415

    name = bundled_spec_of(spec.sha256) or planned_spec_of(spec.sha256)
    if name is not None:
        return name
    sheet = spec.datasheet
    if not any(dataclasses.asdict(sheet).values()):
        return None
    for name in bundled_specs():
        other = _bundled_datasheet(name)
        if other is not None and other == sheet:
            return name
    return None


@functools.cache
def _bundled_datasheet(name: str) -> Any:
    from synthflow.loader import load_spec  # noqa: PLC0415
    from synthflow.resources import bundled_spec  # noqa: PLC0415

    try:
        return load_spec(bundled_spec(name)).datasheet
    except ConfigError:  # a bundled file that is not a release spec (tables_births)
        return None


REPLACE_HOW = (
    "synthflow datasheet RELEASE_DIR --datasheet FILE --out NEW_DIR re-renders the package "
    "with nothing charged; docs/datasheet-template.yaml"
)
"""How the warning says to replace the provenance (a re-render, not a second release)."""
_REPLACE_HOW_BEFORE_2026_12_05 = "synthflow release --datasheet FILE; docs/datasheet-template.yaml"


def provenance_warning(bundled: str, datasheet: Any, *, how: str = REPLACE_HOW) -> str:
    """The datasheet's warning for provenance copied from a bundled spec.

    It names only the fields the bundled spec states (the rest are listed as not stated
    right below it), so that it never claims to have copied what is not there. ``how``:
    the command that replaces it (packages published before 2026-12-05 named a second
    release, :func:`earlier_provenance_warnings`).
    """
    copied = [f for f in _COPIED if getattr(datasheet, f, None)]
    written = f"written for {datasheet.source or 'the data it was made for'}"
    if copied:
        head = (
            f"The provenance below ({', '.join(copied)}) is copied from synthflow's bundled "
            f"spec '{bundled}', {written}. This release was made with that spec,"
        )
    else:
        head = f"This release was made with synthflow's bundled spec '{bundled}', {written},"
    return (
        f"{head} and nothing checked that these data are those: the publisher must confirm "
        f"or replace it ({how})."
    )


def earlier_provenance_warnings(bundled: str, datasheet: Any) -> tuple[str, ...]:
    """The same warning as earlier packages worded it (the audit still accepts them)."""
    return (
        provenance_warning(bundled, datasheet, how=_REPLACE_HOW_BEFORE_2026_12_05),
        legacy_provenance_warning(bundled, datasheet.source),
    )


def legacy_provenance_warning(bundled: str, source: str) -> str:
    """The warning as packages published before 2026-11-26 worded it.

    It named all five fields, stated or not; the audit still accepts it from them.
    """
    return (
        f"The provenance below (title, source, population, period, publisher) is copied "
        f"from synthflow's bundled spec '{bundled}', written for "
        f"{source or 'the data it was made for'}. This release was made with that spec, "
        "and nothing checked that these data are those: the publisher must confirm or "
        "replace it (synthflow release --datasheet FILE; docs/datasheet-template.yaml)."
    )

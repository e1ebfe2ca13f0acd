"""The bundled specs' shipped plans: a public sweep and its plan, made once and shipped.

A steward running ``synthflow release births`` with no ``--candidates`` and no
``--plan`` gets the plan shipped for that spec (:func:`shipped_plan`): the planned spec,
its shortlist and plan.json that ``synthflow plan`` wrote from a public sweep, the sweep
store and plan.html beside them. They describe public data only (a seeded sweep of a
public file), so shipping them reveals nothing. Each is checked to belong to the bundled
spec (by SHA-256) before it is used; ``synthflow ship-plan NAME`` remakes them
(:func:`synthflow.jobs.ship.make_shipped_plan`) by the recipe in ``public_data/shipped_plans.yaml``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthflow.errors import ConfigError

__all__ = [
    "PUBLIC_ROWS",
    "ShippedPlan",
    "planned_spec_of",
    "recipe",
    "shipped_plan",
    "shipped_plan_of",
]

PUBLIC_ROWS = 167_000
"""Rows of the seeded public draw (the embedded file's size)."""
RECIPES = "shipped_plans.yaml"
"""The recipes' file in ``public_data/``."""
FILES = {
    "spec.yaml": "{name}.plan.spec.yaml",
    "candidates.yaml": "{name}.plan.candidates.yaml",
    "plan.json": "{name}.plan.json",
    "plan.html": "{name}.plan.html",
    "sweep.db": "{name}.sweep.db",
}
"""A plan directory's files (``synthflow plan`` and the sweep) -> their shipped names."""


@dataclass(frozen=True)
class ShippedPlan:
    """A bundled spec's shipped plan, checked to belong to it."""

    name: str
    spec: Path
    candidates: Path
    plan: Path
    html: Path
    store: Path
    content: dict[str, Any]
    """plan.json's content."""

    def describe(self) -> str:
        """One line: which plan, what it spends, what it predicts."""
        c = self.content
        delta = c.get("total_delta", 0.0)
        mode = "single attempt" if c.get("stop_probability") == 1 else c.get("selection", "")
        return (
            f"the plan shipped for '{self.name}' ({self.plan}): total epsilon "
            f"{c['total_epsilon']:.3f} (delta {delta:g}), {mode}, "
            f"{len(c.get('candidates', {}))} candidates, predicted P(release) "
            f"{c['release_probability']:.2f}"
        )


def recipe(name: str) -> dict[str, Any] | None:
    """How the plan of bundled spec ``name`` is made (``public_data/shipped_plans.yaml``)."""
    import yaml  # noqa: PLC0415

    from synthflow.resources import public_data_file  # noqa: PLC0415

    doc = yaml.safe_load(public_data_file(RECIPES).read_text(encoding="utf-8")) or {}
    found = doc.get(name)
    return dict(found) if isinstance(found, dict) else None


def shipped_plan(name: str) -> ShippedPlan | None:
    """The plan shipped for bundled spec ``name``, or None if it has none.

    Raises:
        ConfigError: If the shipped files are missing or were made for another version
            of the spec (then ``synthflow ship-plan NAME`` remakes them).
    """
    from synthflow.loader import load_spec  # noqa: PLC0415
    from synthflow.resources import bundled_spec, public_data_file  # noqa: PLC0415

    if recipe(name) is None:
        return None
    fix = f"remake them with 'synthflow ship-plan {name}' (a public sweep and plan, minutes)"
    try:
        paths = {key: public_data_file(ship.format(name=name)) for key, ship in FILES.items()}
    except ConfigError as exc:
        raise ConfigError(f"the plan shipped for '{name}' is incomplete ({exc}); {fix}") from None
    content = json.loads(paths["plan.json"].read_text(encoding="utf-8"))
    source = load_spec(bundled_spec(name))
    planned = load_spec(paths["spec.yaml"])
    import yaml  # noqa: PLC0415

    header = yaml.safe_load(paths["candidates.yaml"].read_text(encoding="utf-8")) or {}
    stale = [
        what
        for what, ok in (
            (
                "plan.json's source spec",
                content.get("source_spec", {}).get("sha256") == source.sha256,
            ),
            ("plan.json's planned spec", content.get("planned_spec_sha256") == planned.sha256),
            ("the shortlist's spec", header.get("spec_sha256") == planned.sha256),
        )
        if not ok
    ]
    if stale:
        raise ConfigError(
            f"the plan shipped for '{name}' was made for another version of the spec "
            f"({', '.join(stale)} differ); {fix}"
        )
    return plan_of(name, paths, content)


def plan_of(name: str, paths: dict[str, Path], content: dict[str, Any]) -> ShippedPlan:
    """The :class:`ShippedPlan` of ``paths`` (:data:`FILES`' keys -> files)."""
    return ShippedPlan(
        name=name,
        spec=paths["spec.yaml"],
        candidates=paths["candidates.yaml"],
        plan=paths["plan.json"],
        html=paths["plan.html"],
        store=paths["sweep.db"],
        content=content,
    )


def planned_spec_of(sha256: str) -> str | None:
    """The bundled spec whose shipped planned spec has this SHA-256 (a copy counts), or None."""
    import yaml  # noqa: PLC0415

    from synthflow.ledger import file_sha256  # noqa: PLC0415
    from synthflow.resources import public_data_file  # noqa: PLC0415

    doc = yaml.safe_load(public_data_file(RECIPES).read_text(encoding="utf-8")) or {}
    for name in doc:
        try:
            planned = public_data_file(FILES["spec.yaml"].format(name=name))
        except ConfigError:
            continue
        if file_sha256(planned) == sha256:
            return str(name)
    return None


def shipped_plan_of(spec: str | Path) -> ShippedPlan | None:
    """The shipped plan of a spec given as a bundled name or a path to a bundled spec's file.

    By content: a copy of ``configs/births.yaml`` gets the plan shipped for ``births``.
    """
    from synthflow.ledger import file_sha256  # noqa: PLC0415
    from synthflow.resources import bundled_spec_of, resolve_spec_path  # noqa: PLC0415

    path = resolve_spec_path(spec)
    if not path.is_file():
        return None
    name = bundled_spec_of(file_sha256(path))
    return shipped_plan(name) if name is not None else None

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
    "base_name",
    "planned_spec_of",
    "recipe",
    "shipped_plan",
    "shipped_plan_name_of",
    "shipped_plan_of",
    "shipped_sizes",
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

    @property
    def rows(self) -> int | None:
        """The row count the plan was made for (its noise figures' n), or None."""
        figures = self.content.get("noise_figures") or []
        ns = [int(f["n"]) for f in figures if isinstance(f, dict) and "n" in f]
        return ns[0] if ns else None

    def describe(self) -> str:
        """One line: which plan, what it spends, what it predicts."""
        c = self.content
        delta = c.get("total_delta", 0.0)
        mode = "single attempt" if c.get("stop_probability") == 1 else c.get("selection", "")
        made_for = "" if self.rows is None else f"made for {self.rows:,} rows, "
        return (
            f"the plan shipped for '{self.name}' ({self.plan}): {made_for}total epsilon "
            f"{c['total_epsilon']:.3f} (delta {delta:g}), {mode}, "
            f"{len(c.get('candidates', {}))} candidates, predicted P(release) "
            f"{c['release_probability']:.2f}"
        )


def base_name(name: str) -> str:
    """The bundled spec a shipped plan's name plans: ``births@120000`` plans ``births``.

    A name ``SPEC@ROWS`` is the plan of bundled spec SPEC for a registry of about ROWS
    rows (its recipe in ``public_data/shipped_plans.yaml`` inherits SPEC's and sets
    ``rows``), shipped so that ``release SPEC`` on data of that size needs no sweep.
    """
    return name.split("@", 1)[0]


def _recipes() -> dict[str, Any]:
    import yaml  # noqa: PLC0415

    from synthflow.resources import public_data_file  # noqa: PLC0415

    doc = yaml.safe_load(public_data_file(RECIPES).read_text(encoding="utf-8")) or {}
    return doc if isinstance(doc, dict) else {}


def shipped_sizes(name: str) -> list[str]:
    """The shipped plans of bundled spec ``name``: itself first, then its other sizes."""
    names = [str(k) for k in _recipes() if base_name(str(k)) == name]
    return sorted(names, key=lambda k: (k != name, k))


def recipe(name: str) -> dict[str, Any] | None:
    """How the plan ``name`` is made (``public_data/shipped_plans.yaml``).

    ``SPEC@ROWS`` inherits SPEC's recipe, with its own keys over it (``rows`` at least).
    """
    doc = _recipes()
    found = doc.get(name)
    if not isinstance(found, dict):
        return None
    base = doc.get(base_name(name)) if base_name(name) != name else {}
    return {**(base if isinstance(base, dict) else {}), **found}


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
    source = load_spec(bundled_spec(base_name(name)))
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


def shipped_plan_name_of(sha256: str) -> str | None:
    """The shipped plan (``births``, ``births@120000``) whose planned spec has this SHA-256."""
    from synthflow.privacy.ledger import file_sha256  # noqa: PLC0415
    from synthflow.resources import public_data_file  # noqa: PLC0415

    for name in _recipes():
        try:
            planned = public_data_file(FILES["spec.yaml"].format(name=name))
        except ConfigError:
            continue
        if file_sha256(planned) == sha256:
            return str(name)
    return None


def planned_spec_of(sha256: str) -> str | None:
    """The bundled spec whose shipped planned spec (of any size) has this SHA-256, or None."""
    name = shipped_plan_name_of(sha256)
    return None if name is None else base_name(name)


def shipped_plan_of(spec: str | Path, *, rows: int | None = None) -> ShippedPlan | None:
    """The shipped plan of a spec given as a bundled name or a path to a bundled spec's file.

    By content: a copy of ``configs/births.yaml`` gets the plan shipped for ``births``.
    ``rows``: the data's row count (public): of the plans shipped for the spec, the one
    made for the nearest size (relative distance), so that a registry of another size
    gets a plan made for its size; without it, the spec's own plan.
    """
    from synthflow.privacy.ledger import file_sha256  # noqa: PLC0415
    from synthflow.resources import bundled_spec_of, resolve_spec_path  # noqa: PLC0415

    path = resolve_spec_path(spec)
    if not path.is_file():
        return None
    name = bundled_spec_of(file_sha256(path))
    if name is None:
        return None
    plans = [p for p in (shipped_plan(n) for n in shipped_sizes(name)) if p is not None]
    if rows is None or rows <= 0 or not plans:
        return plans[0] if plans else shipped_plan(name)
    return min(plans, key=lambda p: abs(rows - (p.rows or rows)) / (p.rows or rows))

"""The main job's public pre-screen: made on a seeded public draw, shipped, copied.

:data:`PRESCREEN` names the files: the sweep store, the shortlist and the sweep report
of the ``workload`` configurations with the release binning, swept on a seeded public
draw (``synthflow demo --screen``). They describe public data only, so they ship in
``public_data/``; ``synthflow demo`` copies them instead of sweeping (seconds instead
of minutes) after checking that they were made for the bundled spec.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
from pathlib import Path

import numpy as np

from synthflow.config.model import ReleaseSpec
from synthflow.errors import ConfigError
from synthflow.public import Calibration, default_calibration_path, simulate, write_sample
from synthflow.resources import public_data_file

__all__ = [
    "PRESCREEN",
    "PUBLIC_ROWS",
    "RELEASE_BINNING",
    "copy_prescreen",
    "restrict_transformations",
    "save_prescreen",
    "screen_public_draw",
]

log = logging.getLogger(__name__)

PUBLIC_ROWS = 167_000
"""Rows of the seeded public draw (the embedded file's size)."""
RELEASE_BINNING = {"mother_age": "b", "parity": "a", "gestation_week": "a"}
"""The binning the 2024 release selected (SPEC sec. 3); the main job screens only it."""


def restrict_transformations(spec: ReleaseSpec, letters: dict[str, str]) -> ReleaseSpec:
    """The same spec with each listed column reduced to one transformation alternative.

    The sub-space's configurations keep their ids (they are content-derived) and the
    spec keeps its hash, so a shortlist made on the sub-space is valid for the spec.
    """
    columns = tuple(
        dataclasses.replace(c, transformations=(c.transformation(letters[c.name]),))
        if c.name in letters
        else c
        for c in spec.columns
    )
    return dataclasses.replace(spec, columns=columns)


PRESCREEN = {
    "sweep.db": "demo_prescreen.db",
    "candidates.yaml": "demo_prescreen_candidates.yaml",
    "sweep_report.html": "demo_prescreen_report.html",
}
"""The pre-screen's files in a demo's output -> their shipped names in ``public_data/``."""


def screen_public_draw(
    spec: ReleaseSpec,
    out: Path,
    *,
    sample: int | None,
    repeats: int,
    workers: int | None,
    seed: int,
    models: tuple[str, ...],
    show_progress: bool,
) -> None:
    """A seeded public draw and the sweep of the release binning on it (step 1)."""
    from synthflow.sweep.engine import run_sweep  # noqa: PLC0415

    public = out / "public_draw.csv.gz"
    calibration = Calibration.from_yaml(default_calibration_path())
    # Public data: a seeded simulation is fine (SPEC sec. 10).
    write_sample(simulate(calibration, PUBLIC_ROWS, np.random.default_rng(seed)), public)
    summary = run_sweep(
        restrict_transformations(spec, RELEASE_BINNING),
        public,
        out / "sweep.db",
        repeats=repeats,
        workers=workers,
        models=list(models),
        sample=sample,
        seed=seed,
        show_progress=show_progress,
    )
    log.info("sweep: %s", summary)


def copy_prescreen(spec: ReleaseSpec, out: Path) -> None:
    """The shipped pre-screen into ``out``, after checking it was made for this spec."""
    import yaml  # noqa: PLC0415

    shipped = {name: public_data_file(ship) for name, ship in PRESCREEN.items()}
    doc = yaml.safe_load(shipped["candidates.yaml"].read_text(encoding="utf-8"))
    if doc.get("spec_sha256") != spec.sha256:
        raise ConfigError(
            "the shipped pre-screen was made for another version of the births spec; run "
            "'synthflow demo --screen' (it sweeps again, a few minutes)"
        )
    for name, path in shipped.items():
        shutil.copyfile(path, out / name)
    text = (out / "candidates.yaml").read_text(encoding="utf-8")
    (out / "candidates.yaml").write_text(  # the store's path: the copy beside it
        text.replace(f"store: {doc['store']}", f"store: {out / 'sweep.db'}"), encoding="utf-8"
    )


def save_prescreen(run_dir: Path, dest: Path) -> list[Path]:
    """Copy a screened demo's pre-screen into ``dest`` under its shipped names."""
    dest.mkdir(parents=True, exist_ok=True)
    written = []
    for name, ship in PRESCREEN.items():
        target = dest / ship
        shutil.copyfile(run_dir / name, target)
        written.append(target)
    text = (dest / PRESCREEN["candidates.yaml"]).read_text(encoding="utf-8")
    (dest / PRESCREEN["candidates.yaml"]).write_text(
        text.replace(str(run_dir / "sweep.db"), PRESCREEN["sweep.db"]), encoding="utf-8"
    )
    return written

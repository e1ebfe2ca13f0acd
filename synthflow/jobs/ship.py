"""``synthflow ship-plan``: remake a bundled spec's shipped plan from its recipe.

A public-data computation (a seeded draw, a sweep, a plan), so it spends nothing; the
files it writes are read by :func:`synthflow.release.shipped.shipped_plan`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from synthflow.errors import ConfigError, NoPlanError
from synthflow.jobs.propose import ProposalFailed, ProposedPlan, keep_failed, propose_and_plan
from synthflow.release.shipped import (
    FILES,
    PUBLIC_ROWS,
    RECIPES,
    ShippedPlan,
    base_name,
    plan_of,
    recipe,
)

__all__ = ["make_shipped_plan"]


def _check_counts(
    *, repeats: int | None, workers: int | None, release_probability: float | None
) -> None:
    """Refuse, before the sweep's minutes, an option no sweep or plan can use."""
    if repeats is not None and repeats < 1:
        raise ConfigError(f"--repeats ({repeats}) must be at least 1: runs per configuration")
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers ({workers}) must be at least 1")
    if release_probability is not None and not 0 < release_probability <= 1:
        raise ConfigError(
            f"--release-probability ({release_probability}) must be in (0, 1]: the least "
            "probability that the release comes out, e.g. 0.95"
        )


def make_shipped_plan(
    name: str,
    out: Path,
    *,
    data: Path | None = None,
    repeats: int | None = None,
    workers: int | None = None,
    show_progress: bool = True,
    store: Path | None = None,
    rows: int | None = None,
    release_probability: float | None = None,
    propose: bool = False,
    max_total: float | None = None,
) -> ShippedPlan | ProposedPlan:
    """Sweep and plan bundled spec ``name`` by its recipe; write the shipped files into ``out``.

    ``data``: the public file to sweep (default: a seeded public draw simulated from the
    committed NVSS calibration, :func:`synthflow.public.simulate`). ``repeats`` overrides
    the recipe's (fewer for a quick look; the plan then warns THIN EVIDENCE).
    ``out=public_data/`` refreshes the shipped plan. Existing files are never overwritten.
    ``store``: an earlier sweep of this recipe (e.g. the shipped ``NAME.sweep.db``): it is
    resumed (a copy; nothing new to run when it is whole), so only the plan is remade.
    ``rows``: the seeded public draw's size (default :data:`PUBLIC_ROWS`): a plan for
    private data of another size (n is public; release refuses a plan made for a size
    more than 20% away). ``release_probability`` overrides the recipe's. ``propose``:
    when the spec's thresholds find no plan, propose thresholds this size meets and plan
    those (:mod:`synthflow.jobs.propose`); the files are then named ``NAME@ROWS`` and
    a :class:`~synthflow.jobs.propose.ProposedPlan` is returned; ``max_total`` is then
    the proposed spec's total epsilon ceiling (default twice the spec's).

    Raises:
        ConfigError: If ``name`` has no recipe, a shipped file exists in ``out``, or no
            plan meets the recipe's release probability.
    """
    # Long: a shipped plan's recipe: draw, sweep, plan, copy, each in order.
    import numpy as np  # noqa: PLC0415

    from synthflow.loader import load_spec  # noqa: PLC0415
    from synthflow.plan.job import plan_budget  # noqa: PLC0415
    from synthflow.public import Calibration, default_calibration_path, simulate, write_sample  # noqa: PLC0415
    from synthflow.public.draw_sample import check_rows  # noqa: PLC0415
    from synthflow.resources import bundled_spec  # noqa: PLC0415
    from synthflow.sweep.job import run_sweep  # noqa: PLC0415

    how = recipe(name)
    base = base_name(name)  # births@120000 plans births for about 120,000 rows
    if rows is not None and data is not None:
        raise ConfigError("--rows sizes the seeded public draw: give it without --data")
    if rows is not None:
        check_rows(rows, least=1000)
    _check_counts(repeats=repeats, workers=workers, release_probability=release_probability)
    if max_total is not None and not (propose and max_total > 0):
        raise ConfigError(
            "--max-total is the proposed spec's ceiling: give it with --propose-thresholds, > 0"
        )
    if how is None:
        raise ConfigError(f"bundled spec {name!r} has no recipe in public_data/{RECIPES}")
    targets = {key: out / ship.format(name=name) for key, ship in FILES.items()}
    existing = [str(p) for p in targets.values() if p.exists()]
    if existing:
        raise ConfigError(f"{existing} exist; they are never overwritten: remove them first")
    out.mkdir(parents=True, exist_ok=True)
    work = out / f".{name}.plan.tmp"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    spec = load_spec(bundled_spec(base))
    seed = int(how["seed"])
    if store is not None:
        shutil.copyfile(store, work / "sweep.db")
    if data is None:
        data = work / "public_draw.csv.gz"
        calibration = Calibration.from_yaml(default_calibration_path())
        # Public data: a seeded simulation is fine (SPEC sec. 10).
        size = rows or int(how.get("rows", PUBLIC_ROWS))
        write_sample(simulate(calibration, size, np.random.default_rng(seed)), data)
        described = f"a seeded public draw ({size} rows simulated, seed {seed})"
    else:
        described = f"the public file {data.name}"
        size = 0  # counted only when a proposal needs it (reading the file is not free)

    def sweep(spec: Any, store: Path, epsilons: list[float] | None = None) -> None:
        run_sweep(
            spec,
            data,
            store,
            repeats=int(repeats or how["repeats"]),
            workers=workers,
            seed=seed,
            show_progress=show_progress,
            generator_epsilons=epsilons or [float(e) for e in how["generator_epsilon"]],
        )

    target = float(release_probability or how["release_probability"])

    def plan(spec_path: Path, store: Path, plan_dir: Path, max_total: float | None = None) -> None:
        plan_budget(spec_path, store, data, plan_dir, release_probability=target, seed=seed,
                    show_progress=show_progress, max_total=max_total)  # fmt: skip

    sweep(spec, work / "sweep.db")
    plan_dir = work / "plan"
    try:
        plan(bundled_spec(base), work / "sweep.db", plan_dir)
    except NoPlanError as exc:
        if not propose:
            raise _no_plan(exc, name, out, work, rows=rows, data=data, target=target) from None
        ladder = [float(e) for e in how["generator_epsilon"]]
        size = size or _rows_of(data)
        return _proposed(name, out, work, size=size, sweep=sweep, plan=plan, ladder=ladder,
                         described=described, max_total=max_total)  # fmt: skip
    _ship(name, work, plan_dir, targets, described)
    shutil.rmtree(work)
    found = _shipped_in(name, out)
    return found


def _no_plan(exc: NoPlanError, name: str, out: Path, work: Path, *, rows: int | None,
             data: Path, target: float) -> NoPlanError:  # fmt: skip
    """The sweep and the failed plan's report kept in sight, and the rerun that reuses them.

    The work directory is hidden (``.NAME.plan.tmp``) and removed; its sweep (minutes of
    runs) and plan.html move to ``OUT/NAME.no-plan/`` (a new name when that exists, never
    over a file), and the message names the reachable targets with their totals and the
    exact ``ship-plan`` command that plans at one of them without sweeping again.
    """
    keep = out / f"{name}.no-plan"
    k = 2
    while keep.exists():
        keep, k = out / f"{name}.no-plan-{k}", k + 1
    keep.mkdir()
    shutil.move(work / "sweep.db", keep / "sweep.db")
    for f in ("plan.html", "plan.json"):
        if (work / "plan" / f).is_file():
            shutil.move(work / "plan" / f, keep / f)
    shutil.rmtree(work)
    why = str(exc).split("; see ")[0]
    rerun = f"synthflow ship-plan {name}"
    if rows is not None:
        rerun += f" --rows {rows}"
    elif not str(data).startswith(str(work)):
        rerun += f" --data {data}"
    rerun += f" --store {keep / 'sweep.db'} --out {out}"
    if exc.reachable:
        levels = ", ".join(f"P(release) {p:g} at total epsilon {t:.3f}" for p, t in exc.reachable)
        p = exc.reachable[-1][0]
        fix = f"Reachable: {levels}. To plan at {p:g} without sweeping again: {rerun} " + (
            f"--release-probability {p:g}"
        )
    else:
        fix = (
            f"None of the lower P(release) levels the plan tries (below {target:g}, in "
            f"plan.html) is reachable either. The sweep is kept: {keep / 'sweep.db'}"
        )
    return NoPlanError(
        f"{why}. The sweep and the plan's report are kept in {keep} (plan.html shows why). " + fix,
        reachable=exc.reachable,
        report=keep / "plan.html",
    )


def _ship(name: str, work: Path, plan_dir: Path, targets: dict[str, Path], described: str,
          *, store: Path | None = None, source: str | None = None) -> None:  # fmt: skip
    """Copy the plan's files under their shipped names; paths in them become the names.

    ``store``: the sweep planned (default ``work/sweep.db``); ``source``: the planned
    spec's source file name (default the bundled spec's).
    """
    store = store or work / "sweep.db"
    store_name = targets["sweep.db"].name
    shutil.copyfile(store, targets["sweep.db"])
    for key in ("spec.yaml", "plan.html"):
        shutil.copyfile(plan_dir / key, targets[key])
    text = (plan_dir / "candidates.yaml").read_text(encoding="utf-8")
    text = text.replace(f"store: {store}", f"store: {store_name}")
    targets["candidates.yaml"].write_text(text, encoding="utf-8")
    plan = json.loads((plan_dir / "plan.json").read_text(encoding="utf-8"))
    plan["store"] = store_name
    plan["source_spec"]["path"] = source or f"{base_name(name)}.yaml"
    plan["made_by"] = f"synthflow ship-plan {name}: a sweep of {described}, then plan"
    targets["plan.json"].write_text(json.dumps(plan, indent=1) + "\n", encoding="utf-8")


def _proposed(name: str, out: Path, work: Path, *, size: int, sweep: Any, plan: Any,
              ladder: list[float], described: str,
              max_total: float | None) -> ProposedPlan:  # fmt: skip
    """Propose thresholds for ``size`` rows and ship their plan as ``BASE@SIZE`` (#61)."""
    at = f"{base_name(name)}@{size}"
    targets = {key: out / ship.format(name=at) for key, ship in FILES.items()}
    spec_out = out / f"{at}.proposed.yaml"
    existing = [str(p) for p in [*targets.values(), spec_out] if p.exists()]
    if existing:
        shutil.rmtree(work)
        raise ConfigError(f"{existing} exist; they are never overwritten: remove them first")
    try:
        found = propose_and_plan(at, size, work, sweep=sweep, plan=plan, recipe=ladder,
                                 reference_rows=int((recipe(base_name(name)) or {}).get(
                                     "rows", PUBLIC_ROWS)),
                                 max_total=max_total)  # fmt: skip
    except ProposalFailed as exc:
        way_on = keep_failed(work, out, at, exc)
        shutil.rmtree(work)
        raise NoPlanError(
            f"{str(exc).split('; see ')[0]}. {way_on}",
            reachable=exc.reachable,
            report=exc.report,
        ) from None
    shutil.copyfile(found.spec, spec_out)
    _ship(at, work, found.plan_dir, targets, described, store=found.store, source=spec_out.name)
    shutil.rmtree(work)
    content = json.loads(targets["plan.json"].read_text(encoding="utf-8"))
    return ProposedPlan(at, spec_out, targets["spec.yaml"], targets["candidates.yaml"],
                        targets["plan.json"], content, found)  # fmt: skip


def _rows_of(data: Path) -> int:
    """The public file's rows (the size a proposal is for)."""
    from synthflow._util.readers import read_table  # noqa: PLC0415

    return len(read_table(data))


def _shipped_in(name: str, out: Path) -> ShippedPlan:
    paths = {key: out / ship.format(name=name) for key, ship in FILES.items()}
    return plan_of(name, paths, json.loads(paths["plan.json"].read_text(encoding="utf-8")))

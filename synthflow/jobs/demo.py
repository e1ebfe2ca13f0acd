"""The main job: a whole release on the embedded default data (``synthflow demo``).

It runs what a steward runs for the default spec, ``births``, with no sweep:

1. The plan shipped for ``births`` (:mod:`~synthflow.release.shipped`): a public sweep
   of its 8 configurations at 3 generator budgets (10 runs each), and the budgets
   ``synthflow plan`` chose from it (a single attempt, total epsilon about 1.74, delta
   1e-6). They describe public data only, so shipping them reveals nothing; they are
   checked to belong to the bundled spec, and copied into the demo's ``plan/``.
   ``synthflow demo --screen`` remakes them first (a new sweep and plan, minutes).
2. The release with that plan (``release --plan``), on the committed default file
   standing in for the private data: an independent draw, treated as private (a dataset
   ledger, CSPRNG randomness, no per-rule counts shown).
3. The audit of the published package, as ``synthflow audit`` prints it.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
from dataclasses import dataclass
from pathlib import Path

from synthflow.config.model import DatasheetSpec
from synthflow.errors import ConfigError
from synthflow.jobs.ship import make_shipped_plan
from synthflow.loader import load_spec
from synthflow.privacy import head as ledger_head
from synthflow.privacy.ledger import read_ledger
from synthflow.release.audit import NOT_CHECKED, AuditReport, audit_release
from synthflow.release.job import run_release
from synthflow.release.reprovenance import first_to_do
from synthflow.release.shipped import FILES, ShippedPlan, shipped_plan
from synthflow.resources import public_data_file

__all__ = ["MainJobResult", "run_main_job"]

log = logging.getLogger(__name__)

DEFAULT_SPEC = "births"
"""The bundled spec of the main job (``configs/births.yaml``, shipped in the package)."""
DEFAULT_DATA = "nvss_like_2019.csv.gz"
"""The bundled default public data file (``public_data/``, shipped in the package)."""
DEMO_DATASHEET = DatasheetSpec(
    title="synthflow demo: DP synthetic births from the embedded NVSS-like sample",
    publisher="nobody: a demonstration made by 'synthflow demo', not a publication",
    licence="that of synthflow's embedded public data (public_data/DATASHEET.md)",
    source=f"synthflow's embedded file {DEFAULT_DATA}, simulated from published low-order "
    "summaries of the NVSS 2019 US natality file (public_data/DATASHEET.md)",
    population="singleton live births in the United States (as simulated)",
    period="calendar year 2019 (as simulated)",
    motivation="show the whole release pipeline on data anyone may read",
)
"""The demo's provenance: its data are the embedded stand-in, not the births registry."""
DELTA_MEANS = (
    "delta: the chance, at most, that the epsilon bound fails; 1e-06 is far below one "
    "birth in the file's 167,000"
)


@dataclass(frozen=True)
class MainJobResult:
    """Where the main job wrote what."""

    release_dir: Path | None
    """None when the single attempt failed (the plan predicts it about 1 time in 20)."""
    plan_dir: Path
    """The plan the release used (copied from the shipped one, or remade by --screen)."""
    audit: AuditReport | None
    """None without a release."""
    plan_total: float
    """The plan's total epsilon."""
    epsilon_spent: float
    """Epsilon the release charged the dataset's ledger."""
    delta_spent: float
    """Delta the release charged the dataset's ledger."""
    total_epsilon: float
    """The spec's total."""

    def summary(self) -> str:
        """What a person wants to see at the end of the demo, a line each."""
        lines = [
            f"plan         total epsilon {self.plan_total:.3g}, a single attempt "
            f"({self.plan_dir / 'plan.html'})",
            f"spent        epsilon {self.epsilon_spent:.3g} (delta {self.delta_spent:g}) "
            f"of {self.total_epsilon:g}",
            f"             ({DELTA_MEANS})",
        ]
        if self.release_dir is None or self.audit is None:
            return "\n".join(
                [
                    *lines,
                    "release      none: the single attempt failed a criterion (the plan "
                    "predicts this about 1 time in 20) and its budget is spent; run the demo "
                    "again into a new directory (a new ledger: the embedded data is public)",
                ]
            )
        audit = "passed" if self.audit.ok else f"FAILED ({len(self.audit.failures)} checks)"
        if self.audit.warnings:
            audit += f", {len(self.audit.warnings)} warnings"
        return "\n".join(
            [
                *lines,
                f"audit        {audit} ({len(self.audit.checks)} checks)",
                f"release      {self.release_dir}",
                f"datasheet    {self.release_dir / 'README.md'}",
            ]
        )


def run_main_job(
    out: Path,
    *,
    screen: bool = False,
    screen_data: Path | None = None,
    repeats: int | None = None,
    workers: int | None = None,
    max_attempts: int = 1000,
    show_progress: bool = True,
    prescreen_out: Path | None = None,
    seed: int | None = None,
) -> MainJobResult:
    """The shipped plan (or, with ``screen``, a new one), the release and its audit.

    ``screen``: remake the plan first, by the recipe of ``public_data/shipped_plans.yaml``
    (on ``screen_data``, default the seeded public draw; ``repeats`` overrides the
    recipe's); ``prescreen_out`` then also receives it under its shipped names
    (``public_data/`` refreshes the shipped plan). ``seed``: a reproducible release (the
    embedded data is public; without it, CSPRNG randomness as for private data). See the
    module docstring.

    Raises:
        ConfigError: If ``out`` exists, or the shipped plan is not the bundled spec's.
    """
    # Long: the demo's steps (plan, release, audit) and its summary.
    if out.exists():
        raise ConfigError(f"{str(out)!r} exists; the main job writes a new directory")
    if prescreen_out is not None and not screen:
        raise ConfigError("--prescreen-out needs --screen (it saves a new plan)")
    if not screen and (screen_data is not None or repeats is not None):
        raise ConfigError("--screen-data and --repeats need --screen (they remake the plan)")
    data_path = public_data_file(DEFAULT_DATA)
    shipped = None if screen else shipped_plan(DEFAULT_SPEC)  # checked before anything is made
    out.mkdir(parents=True)
    # The demo's ledger lives in the directory just made: a head recorded for that path
    # belongs to an earlier demo removed since (rm -rf), never to a rollback.
    ledger_head.forget(out / "enclave" / "dataset_ledger.jsonl")
    if shipped is None:
        made = make_shipped_plan(
            DEFAULT_SPEC,
            out / "new_plan",
            data=screen_data,
            repeats=repeats,
            workers=workers,
            show_progress=show_progress,
        )
        if not isinstance(made, ShippedPlan):  # only a proposal (never asked here) is not
            raise TypeError("make_shipped_plan proposed thresholds it was not asked for")
        shipped = made
        if prescreen_out is not None:
            _copy(shipped, prescreen_out, shipped=True)
    plan = _copy(shipped, out / "plan", shipped=False)
    release_dir = run_release(
        plan / "spec.yaml",
        data_path,
        plan / "candidates.yaml",
        out / "release",
        out / "enclave",
        show_progress=show_progress,
        max_attempts=max_attempts,
        plan_path=plan / "plan.json",
        seed=seed,
        public=seed is not None,  # a seed is for public data only; the embedded file is
        # The default file stands in for private data: it gets a dataset ledger, as a
        # real private file must.
        ledger_path=out / "enclave" / "dataset_ledger.jsonl",
        note=(
            "This is a demonstration (`synthflow demo`). Its 'original' data is not a "
            "registry: it is synthflow's embedded NVSS-like public file "
            f"(`{DEFAULT_DATA}`, simulated from published NVSS 2019 summaries), treated as "
            "if it were private."
        ),
        datasheet=DEMO_DATASHEET,  # the demo's own provenance, not the births spec's
    )
    spec = load_spec(plan / "spec.yaml")
    ledger = read_ledger(out / "enclave" / "dataset_ledger.jsonl")
    result = MainJobResult(
        release_dir=release_dir,
        plan_dir=plan,
        audit=None,
        plan_total=float(shipped.content["total_epsilon"]),
        epsilon_spent=ledger.spent_epsilon,
        delta_spent=ledger.spent_delta,
        total_epsilon=spec.privacy.total_epsilon,
    )
    if release_dir is None:  # the single attempt failed: its budget is spent
        return result
    report = audit_release(release_dir)
    # What 'synthflow audit' prints: every check, the warnings, what cannot be checked.
    first = first_to_do(report, release_dir)  # an unconfirmed provenance comes first
    lines = [first] if first else []
    lines += [f"{'PASS' if ok else 'FAIL'}  {name}  {detail}" for name, ok, detail in report.checks]
    lines += [f"WARN  {w}" for w in report.warnings]
    lines += ["not checked (cannot be, from the published files):"]
    lines += [f"  - {item}" for item in NOT_CHECKED]
    (out / "audit.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return dataclasses.replace(result, audit=report)


def _copy(plan: ShippedPlan, dest: Path, *, shipped: bool) -> Path:
    """The plan's files into ``dest``: under their shipped names, or a plan directory's."""
    dest.mkdir(parents=True, exist_ok=True)
    sources = {
        "spec.yaml": plan.spec,
        "candidates.yaml": plan.candidates,
        "plan.json": plan.plan,
        "plan.html": plan.html,
        "sweep.db": plan.store,
    }
    for key, source in sources.items():
        target = dest / (FILES[key].format(name=plan.name) if shipped else key)
        if target.exists():
            raise ConfigError(f"{target} exists; it is never overwritten: remove it first")
        shutil.copyfile(source, target)
    return dest

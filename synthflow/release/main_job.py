"""The main job: a whole release on the embedded default data (``synthflow demo``).

By default the job starts from the **shipped pre-screen** (:data:`PRESCREEN`): the sweep
store, shortlist and sweep report of step 1-2 below, made once on public data (seed
2024) and shipped in ``public_data/``. They are public (a simulated draw, seeded), so
shipping them reveals nothing; ``synthflow demo --screen`` re-makes them (minutes), and
``--screen --prescreen-out public_data/`` refreshes the shipped copies. The release itself
(step 3) always runs.

1. Simulate a public draw of NVSS-like data from the committed calibration (a seed
   other than the committed default's) and pre-screen the ``workload`` configurations
   with the release's binning on it (sweep on local worker processes, SQLite store).
   PrivBayes is not screened by default: with correctly calibrated noise it almost never passes the
   regression criterion (README, generator table).
2. Shortlist the configurations whose pass rate with release noise is at least
   ``min_pass`` (10%, as the release did). If none reaches it, the job stops with
   advice; the old fallback to configurations that pass only *without* noise is behind
   the explicit ``exact_fallback=True`` (``synthflow demo --exact-fallback``), which
   logs a loud warning: selection over such candidates may never end.
3. Run private selection (total epsilon 9.98, as the 2024 release), write the release
   package and audit it, on the committed
   default file standing in for the private data: an independent draw, treated as
   private (CSPRNG randomness, no per-rule counts shown).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from synthflow import _ledger_head
from synthflow.config.load import load_spec
from synthflow.config.model import DatasheetSpec
from synthflow.errors import ConfigError
from synthflow.jobs.release import run_release
from synthflow.ledger import Ledger
from synthflow.release.audit import NOT_CHECKED, AuditReport, audit_release
from synthflow.release.prescreen import (
    PRESCREEN,
    copy_prescreen,
    restrict_transformations,
    save_prescreen,
    screen_public_draw,
)
from synthflow.resources import bundled_spec, public_data_file

__all__ = [
    "PRESCREEN",
    "MainJobResult",
    "restrict_transformations",
    "run_main_job",
    "save_prescreen",
]

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
SEED = 2024


@dataclass(frozen=True)
class MainJobResult:
    """Where the main job wrote what."""

    release_dir: Path
    shortlist: Path
    sweep_store: Path
    audit: AuditReport
    sweep_report: Path
    shortlisted: int
    """Configurations on the shortlist."""
    screened: int
    """Configurations the sweep screened."""
    epsilon_spent: float
    """Epsilon the release charged the dataset's ledger."""
    total_epsilon: float
    """The spec's total."""

    def summary(self) -> str:
        """What a person wants to see at the end of the demo, a line each."""
        audit = "passed" if self.audit.ok else f"FAILED ({len(self.audit.failures)} checks)"
        if self.audit.warnings:
            audit += f", {len(self.audit.warnings)} warnings"
        return "\n".join(
            [
                f"shortlisted  {self.shortlisted} of {self.screened} configurations "
                f"({self.shortlist})",
                f"spent        epsilon {self.epsilon_spent:.4g} of the spec's total "
                f"{self.total_epsilon:g}",
                f"audit        {audit} ({len(self.audit.checks)} checks)",
                f"release      {self.release_dir}",
                f"datasheet    {self.release_dir / 'README.md'}",
                f"sweep report {self.sweep_report}",
            ]
        )


def run_main_job(
    out: Path,
    *,
    screen: bool = False,
    sample: int | None = None,
    repeats: int = 2,
    workers: int | None = None,
    min_pass: float = 0.10,
    seed: int = SEED,
    max_attempts: int = 1000,
    show_progress: bool = True,
    models: tuple[str, ...] = ("workload",),
    exact_fallback: bool = False,
    prescreen_out: Path | None = None,
) -> MainJobResult:
    """Pre-screen (shipped, or ``screen``), private selection, release and audit.

    ``prescreen_out``: with ``screen``, also copy the new pre-screen there under its
    shipped names (:data:`PRESCREEN`). See the module docstring.

    Raises:
        ConfigError: If ``out`` exists or no configuration reaches ``min_pass``.
    """
    from synthflow.sweep.report import write_report  # noqa: PLC0415
    from synthflow.sweep.shortlist import estimate, write_shortlist  # noqa: PLC0415

    if out.exists():
        raise ConfigError(f"{str(out)!r} exists; the main job writes a new directory")
    if prescreen_out is not None and not screen:
        raise ConfigError("--prescreen-out needs --screen (it saves a new pre-screen)")
    spec_path = bundled_spec(DEFAULT_SPEC)
    data_path = public_data_file(DEFAULT_DATA)
    spec = load_spec(spec_path)
    out.mkdir(parents=True)
    # The demo's ledger lives in the directory just made: a head recorded for that path
    # belongs to an earlier demo removed since (rm -rf), never to a rollback.
    _ledger_head.forget(out / "enclave" / "dataset_ledger.jsonl")
    store = out / "sweep.db"
    if screen:
        screen_public_draw(
            spec,
            out,
            sample=sample,
            repeats=repeats,
            workers=workers,
            seed=seed,
            models=models,
            show_progress=show_progress,
        )
    else:
        copy_prescreen(spec, out)
    estimates = estimate(store, basis="dp")
    basis: Literal["dp", "exact"] = "dp"
    threshold = min_pass
    if not any(e.p >= min_pass for e in estimates) and exact_fallback:
        log.warning(
            "NO configuration passed with DP noise in >= %.0f%% of runs; --exact-fallback: "
            "shortlisting those passing WITHOUT noise in >= 50%% of runs. Private selection "
            "over them may need very many attempts or never release",
            100 * min_pass,
        )
        estimates, basis, threshold = estimate(store, basis="exact"), "exact", 0.5
    shortlist = out / "candidates.yaml"
    if screen:
        write_shortlist(store, estimates, shortlist, min_pass=threshold, basis=basis)
        write_report(store, out / "sweep_report.html", min_pass=threshold, basis=basis, spec=spec)
        if prescreen_out is not None:
            save_prescreen(out, prescreen_out)
    if not any(e.p >= threshold for e in estimates):
        raise ConfigError(
            f"no configuration of the {len(estimates)} screened passed with DP noise in "
            f">= {min_pass:.0%} of runs; widen the sweep (--sample, --repeats, --models) "
            "or, knowingly, --exact-fallback"
        )
    release_dir = run_release(
        spec_path,
        data_path,
        shortlist,
        out / "release",
        out / "enclave",
        show_progress=show_progress,
        max_attempts=max_attempts,
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
    if release_dir is None:  # only with a stop probability, which the main job does not use
        raise ConfigError("private selection ended without a release")
    report = audit_release(release_dir)
    # What 'synthflow audit' prints: every check, the warnings, what cannot be checked.
    lines = [f"{'PASS' if ok else 'FAIL'}  {name}  {detail}" for name, ok, detail in report.checks]
    lines += [f"WARN  {w}" for w in report.warnings]
    lines += ["not checked (cannot be, from the published files):"]
    lines += [f"  - {item}" for item in NOT_CHECKED]
    (out / "audit.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    spent = Ledger(
        total_epsilon=spec.privacy.total_epsilon,
        total_delta=spec.privacy.total_delta,
        path=out / "enclave" / "dataset_ledger.jsonl",
    ).spent_epsilon
    return MainJobResult(
        release_dir=release_dir,
        shortlist=shortlist,
        sweep_store=store,
        audit=report,
        sweep_report=out / "sweep_report.html",
        shortlisted=sum(e.p >= threshold for e in estimates),
        screened=len(estimates),
        epsilon_spent=spent,
        total_epsilon=spec.privacy.total_epsilon,
    )

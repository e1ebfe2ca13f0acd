"""The job layer: from paths and options to a finished computation.

Each job loads the spec, opens itself with :func:`open_job` (the one place the rules
every computation on data follows are applied: a CSPRNG, or a seed on public data only;
public-only generators refused on private data; the data read and cleaned; the
dataset's ledger for data not declared public), checks what it can before its first
charge (outputs, rows, budget), runs the library and writes its files. Only this
package opens ledgers and builds randomness (``tests/unit/test_architecture.py``), with
two exceptions that belong to it: :func:`open_job` itself, in ``synthflow/_job_open.py``
below this package so that the release job can call it, and the release job
(:mod:`synthflow.release.job`: its pre-flight, selection and publication live in
``release/``, which never imports this package; :func:`run_release` and
:func:`why_hopeless` are exported here). A stage that owns its job keeps it in its own
package: the release (:mod:`synthflow.release.job`), the plan
(:mod:`synthflow.plan.job`: public sweep results only, no ledger), the sweep
(:mod:`synthflow.sweep.job`, its workers in :mod:`synthflow.sweep.workers`, each run
opened by :func:`open_job`), the evaluation of one candidate
(:mod:`synthflow.acceptance.job`) and the table protections (:mod:`synthflow.tables.job`).
What stays here runs across stages: one configuration's run, the demo, and ship-plan
(a sweep and a plan, with its threshold proposals).
The command line (:mod:`synthflow.cli`: argparse and printing only) and the Python API call the same
functions: run, evaluate, sweep (its workers included), plan, release, the demo,
ship-plan and the table protections.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from synthflow._util.lazy import lazy_package

if TYPE_CHECKING:  # the exports, imported on first use (synthflow/_util/lazy.py)
    from synthflow._job_open import Job, open_job
    from synthflow.acceptance.job import evaluate_files, load_codes
    from synthflow.jobs.run import RUN_FILES, run_configuration
    from synthflow.plan.job import plan_budget
    from synthflow.release.hopeless import why_hopeless
    from synthflow.release.job import run_release
    from synthflow.release.spend import selection_spend_line

__all__ = [
    "RUN_FILES",
    "Job",
    "evaluate_files",
    "load_codes",
    "open_job",
    "plan_budget",
    "run_configuration",
    "run_release",
    "selection_spend_line",
    "why_hopeless",
]

lazy_package(__name__)

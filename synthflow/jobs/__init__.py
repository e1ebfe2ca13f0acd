"""The job layer: from paths and options to a finished computation.

Each job loads the spec, opens itself with :func:`open_job` (the one place the rules
every computation on data follows are applied: a CSPRNG, or a seed on public data only;
public-only generators refused on private data; the data read and cleaned; the
dataset's ledger for data not declared public), checks what it can before its first
charge (outputs, rows, budget), runs the library and writes its files. Only this
package opens ledgers and builds randomness (``tests/unit/test_architecture.py``). The
command line (:mod:`synthflow.cli`: argparse and printing only) and the Python API call
the same functions: run, evaluate, sweep (its workers included), plan, release, the
demo, ship-plan and the table protections.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from synthflow._lazy import lazy_package

if TYPE_CHECKING:  # the exports, imported on first use (synthflow/_lazy.py)
    from synthflow.jobs._open import Job, open_job
    from synthflow.jobs.evaluate import evaluate_files, load_codes
    from synthflow.jobs.plan import plan_budget
    from synthflow.jobs.release import run_release, why_hopeless
    from synthflow.jobs.run import RUN_FILES, run_configuration

__all__ = [
    "RUN_FILES",
    "Job",
    "evaluate_files",
    "load_codes",
    "open_job",
    "plan_budget",
    "run_configuration",
    "run_release",
    "why_hopeless",
]

lazy_package(__name__)

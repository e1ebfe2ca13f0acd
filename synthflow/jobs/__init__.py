"""The job layer: from paths and options to a finished computation.

Each job loads the spec and the data, applies the rules every computation on data
follows (a seed only on public data, :func:`synthflow.jobs._rules.privacy_rng`; the
dataset's ledger for data not declared public; outputs checked before anything is
charged), runs the library and writes its files. The command line (``synthflow/*/cli.py``:
argparse and printing only) and the Python API call the same functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from synthflow._lazy import lazy_package

if TYPE_CHECKING:  # the exports, imported on first use (synthflow/_lazy.py)
    from synthflow.jobs.evaluate import evaluate_files, load_codes
    from synthflow.jobs.plan import plan_budget
    from synthflow.jobs.release import hopeless_release, run_release
    from synthflow.jobs.run import RUN_FILES, run_configuration

__all__ = [
    "RUN_FILES",
    "evaluate_files",
    "hopeless_release",
    "load_codes",
    "plan_budget",
    "run_configuration",
    "run_release",
]

lazy_package(__name__)

"""Pre-screening the configuration space on public data (issue 5).

Map of the package, in pipeline order:

* :mod:`~synthflow.sweep.evaluation`: what one run measures (exact values and the
  would-be DP decision); the evaluator plug-in point.
* :mod:`~synthflow.sweep.store`: the resumable SQLite store written by the driver.
* :mod:`~synthflow.sweep.job`: runs (configuration, repeat) pairs on local worker
  processes (:mod:`~synthflow.sweep.workers.runs`) or a running Dask cluster.
* :mod:`~synthflow.sweep.shortlist`: Wilson estimates and the candidate file.
* :mod:`~synthflow.sweep.report`: the HTML report.
* :mod:`~synthflow.cli.sweep`: ``sweep``, ``shortlist`` and ``sweep-report``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from synthflow._util.lazy import lazy_package

if TYPE_CHECKING:  # the exports, imported on first use (synthflow/_util/lazy.py)
    from synthflow.sweep._select import run_seed, select_configurations
    from synthflow.sweep.evaluation import (
        AcceptanceEvaluator,
        CriterionOutcome,
        Evaluator,
        RunEvaluation,
        load_evaluator,
    )
    from synthflow.sweep.store import RunRecord, StoreError, SweepStore

__all__ = [
    "AcceptanceEvaluator",
    "CriterionOutcome",
    "Evaluator",
    "RunEvaluation",
    "RunRecord",
    "StoreError",
    "SweepStore",
    "load_evaluator",
    "run_seed",
    "select_configurations",
]

lazy_package(__name__)

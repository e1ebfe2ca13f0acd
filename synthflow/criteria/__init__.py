"""Acceptance-criterion kinds as plugins, the way generators are (one module per kind).

Each kind (:class:`~synthflow.criteria.protocol.CriterionKind`) owns everything about
it: its parameters (a frozen ``Params`` dataclass parsed from the spec, whose fields
also generate the spec's JSON Schema), its exact value, its DP release (sensitivity,
threshold, charge), the public parameters a release publishes for the audit and the
planner, its datasheet sentence, the marginals it reads (what the ``workload``
generator measures), the noise check's best case and its section of the evaluation
report. Evaluation, publishing, audit, planner, noise check, datasheet, report and
``workload`` call the kind (``c.impl``); no code outside this package compares a
criterion's kind name. :data:`KINDS` lists them; :func:`register` adds one defined
outside the package (docs/adding-a-criterion.md). Other packages take the helpers they
share with the kinds from here: :func:`code_matrix` (a release's codes as a checked
matrix) and the criteria's keys in the spec's JSON Schema (:data:`COMMON_KEYS`,
:func:`params_schema`).
"""

from __future__ import annotations

from synthflow.criteria._common import code_matrix
from synthflow.criteria._params import COMMON_KEYS, params_schema
from synthflow.criteria.measurement import PlannedMeasurement
from synthflow.criteria.protocol import CriterionKind
from synthflow.criteria.registry import (
    KINDS,
    kind_of,
    one_released_once,
    parse_criteria,
    register,
    releasable_once,
    release_once,
    released_once,
)

__all__ = [
    "COMMON_KEYS",
    "KINDS",
    "CriterionKind",
    "PlannedMeasurement",
    "code_matrix",
    "kind_of",
    "one_released_once",
    "params_schema",
    "parse_criteria",
    "register",
    "releasable_once",
    "release_once",
    "released_once",
]

"""Acceptance-criterion kinds as plugins, the way generators are (one module per kind).

Each kind (:class:`~synthflow.criteria.protocol.CriterionKind`) owns what used to be
dispatched on its name across the package: its sensitivity and (pseudo-)threshold from
public parameters, the public parameters a release publishes for the audit, and the
sentence a datasheet prints. :func:`kind_of` is the one place a kind is looked up.

Migration ([criteria], in progress): the exact values and DP releases of an
evaluation (in the order the kinds ask for), the DP sensitivities and thresholds
(:func:`synthflow.acceptance.dp.laplace_terms`), the release's published parameters
(:func:`synthflow.release.publish.public_parameters`), the datasheet sentence, the audit
and the selection's cost go through the registry; the kinds still call the statistic's
functions in :mod:`synthflow.acceptance.exact` and :mod:`synthflow.acceptance.dp`. The
noise check, the planner, the report, the workload generator's marginals and the spec's
criterion parameters still dispatch on the kind's name and move here next.
"""

from __future__ import annotations

from synthflow.criteria.protocol import CriterionKind
from synthflow.criteria.registry import KINDS, kind_of, releasable_once, released_once

__all__ = ["KINDS", "CriterionKind", "kind_of", "releasable_once", "released_once"]

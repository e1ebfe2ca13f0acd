"""synthflow: differentially private synthetic microdata a government can publish.

The public API, for notebooks and scripts (the CLI calls the same functions)::

    import synthflow

    spec = synthflow.load_spec("births-2024")            # or a YAML file
    # a new dataset: synthflow.draft_spec(public_frame).write("spec.yaml"), then review
    synthflow.expand_space(spec)[:3]                     # the configuration space
    s = synthflow.Synthesizer(spec, "privbayes-a1076afd5b")
    data = synthflow.load_data("nvss.csv", spec, public=True).frame
    candidate = s.fit(data, public=True).sample()        # bin labels
    report = synthflow.evaluate_candidate(
        spec, s.configuration, data, candidate, exact=True, public=True
    )
    report                                               # a table in a notebook

Pre-screening: :func:`run_sweep`, :class:`SweepStore` (``.runs()`` is a DataFrame),
:func:`estimate_pass_rates`, :func:`write_shortlist`, :func:`write_sweep_report`.
Release: :func:`run_release` (private selection, then the package) and
:func:`audit_release`. Everything is imported on first use (``import synthflow`` is
instant); the modules behind each name are the reference (:mod:`synthflow.config`,
:mod:`synthflow.flow`, :mod:`synthflow.acceptance`, :mod:`synthflow.sweep`,
:mod:`synthflow.release`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from synthflow._util.lazy import lazy_package

__version__ = "0.1.0"

if TYPE_CHECKING:  # the exports, imported on first use (synthflow/_util/lazy.py)
    from synthflow.acceptance.evaluate import evaluate
    from synthflow.acceptance.results import AcceptanceReport, CriterionResult
    from synthflow.api import Synthesizer, evaluate_candidate
    from synthflow.config.model import ReleaseSpec
    from synthflow.data import load_data
    from synthflow.errors import (
        BudgetExceededError,
        ConfigError,
        DataError,
        InfeasibleConfigurationError,
        NotEnoughRowsError,
        SelectionPaused,
        StoreError,
    )
    from synthflow.flow import FlowResult, run_flow
    from synthflow.init.draft import DraftSpec, draft_spec
    from synthflow.loader import load_spec
    from synthflow.plan.job import plan_budget
    from synthflow.privacy.ledger import Ledger, dataset_ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.release.audit import AuditReport, audit_release
    from synthflow.release.job import run_release as run_release
    from synthflow.release.publish import public_parameters, sha256_file
    from synthflow.release.shipped import ShippedPlan, shipped_plan
    from synthflow.space import Configuration, expand_space, find_configuration
    from synthflow.sweep.job import run_sweep
    from synthflow.sweep.report import pass_rates_by
    from synthflow.sweep.report import write_report as write_sweep_report
    from synthflow.sweep.shortlist import estimate as estimate_pass_rates
    from synthflow.sweep.shortlist import write_shortlist
    from synthflow.sweep.store import SweepStore
    from synthflow.transform import Transformer

__all__ = [
    "AcceptanceReport",
    "AuditReport",
    "BudgetExceededError",
    "ConfigError",
    "Configuration",
    "CriterionResult",
    "DataError",
    "DraftSpec",
    "FlowResult",
    "InfeasibleConfigurationError",
    "Ledger",
    "NotEnoughRowsError",
    "PrivacyRNG",
    "ReleaseSpec",
    "SelectionPaused",
    "ShippedPlan",
    "StoreError",
    "SweepStore",
    "Synthesizer",
    "Transformer",
    "__version__",
    "audit_release",
    "dataset_ledger",
    "draft_spec",
    "estimate_pass_rates",
    "evaluate",
    "evaluate_candidate",
    "expand_space",
    "find_configuration",
    "load_data",
    "load_spec",
    "pass_rates_by",
    "plan_budget",
    "public_parameters",
    "run_flow",
    "run_release",
    "run_sweep",
    "sha256_file",
    "shipped_plan",
    "write_shortlist",
    "write_sweep_report",
]

lazy_package(__name__)

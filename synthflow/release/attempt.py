"""One attempt of the release's private selection: a flow, then its DP evaluation.

:func:`~synthflow.release.selection.private_selection` runs the release's attempts with
:func:`flow_attempt` (a test may give it another :data:`Attempt`); each returns an
:class:`AttemptResult` to the loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from synthflow.acceptance import evaluate
from synthflow.config.model import ReleaseSpec
from synthflow.errors import (
    InfeasibleConfigurationError,
    NotEnoughRowsError,
)
from synthflow.flow import run_flow
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.space import Configuration

__all__ = ["Attempt", "AttemptResult", "flow_attempt"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class AttemptResult:
    """What one attempt returns to the loop."""

    passed: bool
    transcript: dict[str, Any]
    """Enclave-only record of the attempt (released values, noise)."""
    payload: Any = None
    """The release candidate and its report, kept only for a passing attempt."""


Attempt = Callable[[Configuration, Ledger, PrivacyRNG, Any], AttemptResult]


def flow_attempt(spec: ReleaseSpec, raw: Any, *, show_progress: bool, public: bool) -> Attempt:
    """The release's attempt on the cleaned data ``raw``: one flow, then its DP evaluation."""

    def attempt(cfg: Configuration, ledger: Ledger, rng: PrivacyRNG, fit: Any) -> AttemptResult:
        try:
            return _attempt(cfg, ledger, rng, fit)
        except (NotEnoughRowsError, InfeasibleConfigurationError) as exc:
            # Both depend on public quantities or on the DP model only: a failed attempt.
            return AttemptResult(passed=False, transcript={"error": type(exc).__name__})

    def _attempt(cfg: Configuration, ledger: Ledger, rng: PrivacyRNG, fit: Any) -> AttemptResult:
        result = run_flow(
            spec, cfg, raw, ledger=ledger, rng=rng, public=public, show_progress=show_progress
        )
        report = evaluate(
            spec,
            result.transformer,
            result.original,
            result.candidate,
            exact=False,
            ledger=ledger,
            rng=rng,
            released_once=fit,
        )
        exact = evaluate(spec, result.transformer, result.original, result.candidate, exact=True)
        transcript = {
            "released": {c.name: c.value for c in report.criteria},
            "thresholds": {c.name: c.threshold for c in report.criteria},
            "noise": {
                c.name: c.value - e.value
                for c, e in zip(report.criteria, exact.criteria, strict=True)
            },
            "spent_epsilon": ledger.spent_epsilon,
        }
        dominated = [c for c in report.criteria if c.noise_dominated]
        if dominated:  # public: each figure comes from the candidate's public parameters
            transcript["noise_dominated"] = {c.name: c.noise_sd for c in dominated}
            # At info (-v), as every failed attempt: by default the number of attempts is
            # not shown, and a line per failed attempt would show it.
            log.info(
                "configuration %s: %s decided by noise at this candidate's own groups or "
                "counts (noise sd %s against threshold %s): failed whatever the value",
                cfg.id,
                ", ".join(c.name for c in dominated),
                ", ".join(f"{c.noise_sd:.3g}" for c in dominated),
                ", ".join(f"{c.threshold:.3g}" for c in dominated),
            )
        # Only the candidate (public once released) and its report: never D_T.
        extra = {"projection_rows": result.projection_rows}
        payload = (result.candidate, report, extra) if report.passed else None
        return AttemptResult(passed=report.passed, transcript=transcript, payload=payload)

    return attempt

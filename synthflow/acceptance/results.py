"""The result objects of an evaluation: one criterion's decision, and all of them.

Plain frozen records with a useful ``repr``, a DataFrame view and a notebook view; they
hold only released (DP) values or, in exact mode, public-data measures.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

__all__ = ["AcceptanceReport", "CriterionResult"]


@dataclass(frozen=True, kw_only=True)
class CriterionResult:
    """One criterion's measure and decision."""

    name: str
    kind: str
    value: float
    """The measure: exact, or the DP-released (noisy) value."""
    threshold: float
    """Threshold the value was compared with (the pseudo-threshold where one applies)."""
    passed: bool
    """``value < threshold``."""
    epsilon: float | None = None
    """Budget charged for this criterion in this evaluation (None in exact mode)."""
    mechanism: str | None = None
    sensitivity: float | None = None
    noise_sd: float | None = None
    public: dict[str, Any] = field(default_factory=dict)
    """Public parameters of the DP release (candidate's counts, the DP regression fit and
    D_R's OLS); never a statistic of D_T. Empty in exact mode."""
    noise_dominated: bool = False
    """The release's noise at the candidate's own public parameters decides more than the
    candidate (:func:`synthflow.criteria.context.release_dominated`): failed whatever the
    value. Never true in a published package (every criterion passed)."""

    def to_json(self) -> dict[str, Any]:
        """The JSON object of the CLI's ``criteria`` list.

        ``noise_dominated: true`` only where the noise decided (a failed criterion, so
        never in a published package's acceptance.json).
        """
        out = {
            "name": self.name,
            "value": self.value,
            "threshold": self.threshold,
            "passed": self.passed,
            "epsilon": self.epsilon,
            "mechanism": self.mechanism,
            "sensitivity": self.sensitivity,
            "noise_sd": self.noise_sd,
        }
        if self.noise_dominated:
            out["noise_dominated"] = True
        return out


@dataclass(frozen=True, kw_only=True)
class AcceptanceReport:
    """All criteria of one evaluation."""

    criteria: tuple[CriterionResult, ...]
    passed: bool
    """True iff every criterion passed."""
    epsilon_total: float
    """Budget charged by this evaluation (0 in exact mode)."""
    exact: bool
    regression_fit_reused: bool = False
    """Whether a once-per-release regression fit was reused (charged elsewhere)."""

    def criterion(self, name: str) -> CriterionResult:
        """The result called ``name``."""
        for c in self.criteria:
            if c.name == name:
                return c
        raise KeyError(f"no criterion {name!r}; have {[c.name for c in self.criteria]}")

    def __repr__(self) -> str:
        mode = "exact" if self.exact else f"DP, epsilon {self.epsilon_total:g}"
        ok = sum(c.passed for c in self.criteria)
        verdict = "PASSED" if self.passed else "FAILED"
        return f"<AcceptanceReport {verdict}: {ok} of {len(self.criteria)} criteria ({mode})>"

    def __str__(self) -> str:
        """``print(report)``: the verdict, then one line per criterion."""
        lines = [repr(self)]
        width = max((len(c.name) for c in self.criteria), default=0)
        for c in self.criteria:
            noise = "" if self.exact or c.noise_sd is None else f"  (noise sd {c.noise_sd:.3g})"
            if c.noise_dominated:
                noise += (" - decided by noise at this candidate's groups or counts: failed "
                          "whatever the value")  # fmt: skip
            sign = "<" if c.value < c.threshold else ">="
            lines.append(
                f"  {'PASS' if c.passed else 'FAIL'}  {c.name:<{width}}  {c.value:.4g} "
                f"{sign} {c.threshold:.4g}{noise}"
            )
        return "\n".join(lines)

    def to_frame(self) -> pd.DataFrame:
        """One row per criterion: value, threshold, passed, epsilon, noise sd."""
        return pd.DataFrame(
            [
                {
                    "criterion": c.name,
                    "kind": c.kind,
                    "value": c.value,
                    "threshold": c.threshold,
                    "passed": c.passed,
                    "epsilon": c.epsilon,
                    "noise_sd": c.noise_sd,
                }
                for c in self.criteria
            ]
        ).set_index("criterion")

    def _repr_html_(self) -> str:
        """A notebook's view: the verdict and the criteria table."""
        table = self.to_frame()
        if self.exact:
            table = table.drop(columns=["epsilon", "noise_sd"])
        caption = html.escape(repr(self))
        return f"<p><b>{caption}</b></p>" + table.to_html(float_format=lambda x: f"{x:.4g}")

    def to_json(self) -> dict[str, Any]:
        """``{"criteria": [...], "passed": bool, "epsilon_total": float}`` plus the mode."""
        return {
            "criteria": [c.to_json() for c in self.criteria],
            "passed": self.passed,
            "epsilon_total": self.epsilon_total,
            "exact": self.exact,
            "regression_fit_reused": self.regression_fit_reused,
        }

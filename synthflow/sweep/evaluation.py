"""What one sweep run measures: exact criterion values and the would-be DP decision.

A sweep on public data needs two answers per run (issue 5): the exact value of every
acceptance criterion (noise-free, possible only because the data are public) and
whether the candidate would have passed with the evaluation noise drawn as in a real
release. An :class:`Evaluator` turns a :class:`~synthflow.flow.FlowResult` into a
:class:`RunEvaluation` holding both. The default, :class:`AcceptanceEvaluator`, drives
``synthflow.acceptance.evaluate``; another evaluator can be plugged in by import path
(``module:attribute``), e.g. for new criteria or for tests.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from synthflow.errors import ConfigError

if TYPE_CHECKING:  # the sweep's driver imports this module: it stays light
    from synthflow.config.model import ReleaseSpec
    from synthflow.flow import FlowResult
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG

__all__ = [
    "AcceptanceEvaluator",
    "CriterionOutcome",
    "Evaluator",
    "FitOnceEvaluator",
    "RunEvaluation",
    "load_evaluator",
]


@dataclass(frozen=True, kw_only=True)
class CriterionOutcome:
    """One criterion of one run."""

    name: str
    value: float
    """Exact (noise-free) measure on public data."""
    threshold: float
    passed_exact: bool
    """Exact measure below the threshold."""
    passed_dp: bool
    """Noisy measure (drawn as in a release) below the (pseudo-)threshold."""
    noisy_value: float | None = None
    """The noisy measure, where the evaluator reports it."""


@dataclass(frozen=True, kw_only=True)
class RunEvaluation:
    """All criteria of one run, with the exact and the would-be DP decision."""

    criteria: tuple[CriterionOutcome, ...]
    planning: dict[str, Any] | None = None
    """Per criterion, the statistic the DP noise was added to and its public parameters
    (public data only): lets ``synthflow plan`` re-draw the noise at other budgets."""

    @property
    def passed_exact(self) -> bool:
        """Every exact measure passes."""
        return all(c.passed_exact for c in self.criteria)

    @property
    def passed_dp(self) -> bool:
        """Every noisy measure passes (the decision a release would have made)."""
        return all(c.passed_dp for c in self.criteria)


@runtime_checkable
class Evaluator(Protocol):
    """Evaluates one flow's candidate; must be picklable (it runs on sweep workers)."""

    def __call__(
        self, spec: ReleaseSpec, result: FlowResult, *, rng: PrivacyRNG, ledger: Ledger
    ) -> RunEvaluation:
        """Exact values and the would-be DP decision for ``result``.

        ``ledger``: the run's evaluation ledger (budget eps_eval), opened by the sweep's job.
        """
        ...


class AcceptanceEvaluator:
    """The release's acceptance criteria (``synthflow.acceptance.evaluate``).

    Uses ``synthflow.acceptance.evaluate_exact_and_noisy``: the criteria once exactly
    (values) and once with the DP evaluation noise on the run's evaluation ledger of
    budget eps_eval (decisions). The noise comes from ``rng``, seeded per run in a sweep.
    """

    fit_once: bool = False

    def __call__(
        self, spec: ReleaseSpec, result: FlowResult, *, rng: PrivacyRNG, ledger: Ledger
    ) -> RunEvaluation:
        """Exact values and the would-be DP decision for ``result``."""
        from synthflow.acceptance import evaluate_exact_and_noisy  # noqa: PLC0415  heavy
        from synthflow.criteria import release_once  # noqa: PLC0415

        fit = (
            release_once(spec, result.transformer, result.original, ledger=ledger, rng=rng)
            if self.fit_once
            else None
        )
        both = evaluate_exact_and_noisy(
            spec,
            result.transformer,
            result.original,
            result.candidate,
            rng=rng,
            ledger=ledger,
            released_once=fit,
        )
        noisy = {c.name: c for c in both.noisy.criteria}
        return RunEvaluation(
            criteria=tuple(
                CriterionOutcome(
                    name=c.name,
                    value=float(c.value),
                    threshold=float(c.threshold),
                    passed_exact=bool(c.passed),
                    passed_dp=c.name in noisy and bool(noisy[c.name].passed),
                    noisy_value=float(noisy[c.name].value) if c.name in noisy else None,
                )
                for c in both.exact.criteria
            ),
            planning={
                **both.planning,
                "_run": {"fit_once": self.fit_once, "n": len(result.original)},
            },
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class FitOnceEvaluator(AcceptanceEvaluator):
    """Sweep evaluator that decides as ``synthflow release --fit-once`` would.

    Use it with ``synthflow sweep --evaluator synthflow.sweep.evaluation:FitOnceEvaluator``.
    The DP regression fit of D_T is made first (on a throw-away ledger: public data)
    and reused by the criteria, so the would-be DP decision carries the noise of the
    once-per-release fit rather than of a per-candidate fit.
    """

    fit_once = True


def load_evaluator(path: str | None) -> Evaluator:
    """The evaluator named ``module:attribute`` (a class is instantiated); default: acceptance.

    Raises:
        ConfigError: If the path is malformed, cannot be imported, or is not callable.
    """
    if not path:
        return AcceptanceEvaluator()
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(
            f"--evaluator ({path!r}) must be 'module:attribute', e.g. "
            "'synthflow.sweep.evaluation:AcceptanceEvaluator'"
        )
    try:
        obj: Any = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"--evaluator ({path!r}) cannot be imported: {exc}") from exc
    if isinstance(obj, type):
        obj = obj()
    if not callable(obj):
        raise ConfigError(f"--evaluator ({path!r}) is not callable")
    return obj

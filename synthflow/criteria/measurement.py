"""What a kind released once per release declares: its release, cost and measurement.

:class:`ReleasedOnce` holds the members a kind with ``once_per_release`` implements
(every :class:`~synthflow.criteria.protocol.CriterionKind` has their defaults), and
:class:`PlannedMeasurement` is what it returns to the planner:
:class:`synthflow.plan.optimize.Planner` searches its budgets beside the Laplace
criteria's, weighs its cost, and never names the kind (the regression fit's:
:mod:`synthflow.criteria.regression.plan`; a plug-in's: docs/adding-a-criterion.md).
Selection (``release_once``), cost and exact accounting (``once_mechanisms``) and the
audit ask the same members.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from synthflow.config.model import CriterionSpec, ReleaseSpec
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.transform import Transformer

__all__ = ["PlannedMeasurement", "ReleasedOnce"]


class PlannedMeasurement(Protocol):
    """A once-per-release measurement as the planner sees it (:mod:`synthflow.plan.optimize`).

    Its kind declares it (:meth:`CriterionKind.planned_measurement`). It decides the
    criteria it names (the kind's own, and any that read what it releases: the
    regression fit decides its coefficients and TSTR), each with a budget variable and
    a grid of budgets, and re-draws the noise of its release on public figures. The
    planner searches its variables with the Laplace criteria's, weighs its cost, and
    never names the kind. ``idx``: variable -> index into its grid. ``letters``: the
    transformation set of a measurement released once (None: one per candidate).
    """

    criteria: tuple[CriterionSpec, ...]
    """The criteria it decides, in the spec's order; one budget variable each."""
    grids: dict[str, np.ndarray]
    """Variable (a criterion's name) -> the budgets tried, increasing."""
    once: str
    """The variable whose budget the release charges once (the measurement itself)."""
    delta: float
    """The delta its release spends (0: pure DP)."""

    def pass_draws(
        self, rows: np.ndarray, letters: tuple[tuple[str, str], ...] | None, idx: dict[str, int]
    ) -> tuple[np.ndarray, float]:
        """Per run of ``rows``: P(passing its criteria); P(its noise fails a perfect one).

        The first is (runs, 1), averaged over fresh draws per candidate, or (runs, draws)
        for one shared draw per release.
        """
        ...

    def mechanisms(
        self, letters: tuple[tuple[str, str], ...] | None, epsilon: float
    ) -> tuple[Any, ...] | None:
        """Its release at ``epsilon`` as privacy-loss mechanisms (None: it has no PLD).

        :class:`synthflow.privacy.pld.Mechanism` s, for exact accounting.
        """
        ...

    def details(self, c: CriterionSpec, point: Any) -> dict[str, Any]:
        """plan.json's entry for ``c`` (not a Laplace release) at the plan ``point``."""
        ...

    def describe(self) -> dict[str, Any]:
        """What its predictions rest on (plan.json's ``basis``)."""
        ...


class ReleasedOnce:
    """The members of a kind released once per release; defaults for every other kind."""

    name: ClassVar[str]

    once_per_release: ClassVar[bool] = False
    """Whether the original's side can be released once per release (``--fit-once``)
    and reused by every attempt as post-processing: such a kind implements
    :meth:`release_once` and :meth:`planned_measurement`, which selection, cost,
    planner and audit call without naming the kind."""
    reads_measurement: ClassVar[bool] = False
    """Its statistic reads what a ``once_per_release`` kind releases (TSTR reads the
    regression fit): the planner draws it with that kind's measurement, never alone."""

    def release_once(
        self,
        c: CriterionSpec,
        spec: ReleaseSpec,
        transformer: Transformer,
        original: pd.DataFrame,
        *,
        ledger: Ledger,
        rng: PrivacyRNG,
    ) -> Any:
        """A ``once_per_release`` kind's original side, released once for every attempt.

        Charges ``ledger`` first (its ``epsilon``, once), then adds noise. Every
        attempt's evaluation finds the result under
        :data:`~synthflow.criteria.context.RELEASED_ONCE` and reuses it (post-processing).
        """
        raise NotImplementedError(f"criterion kind {self.name!r} is not released once")

    def once_mechanisms(
        self,
        c: CriterionSpec,
        transformer: Transformer,
        epsilon: float | None = None,
        weights: Any = None,
    ) -> tuple[Any, ...]:
        """A ``once_per_release`` kind's release as :class:`synthflow.privacy.pld.Mechanism` s.

        At ``c``'s budget or ``epsilon`` (the planner's grid), for exact accounting of a
        release made once. ``weights``: whatever its law read off the public sample, as
        a package published it (an audit without that sample). Default: one Laplace
        (pure) mechanism at the budget.
        """
        from synthflow.privacy.pld import Mechanism

        return (Mechanism.pure(f"acceptance {c.name}", c.epsilon if epsilon is None else epsilon),)

    def planned_measurement(
        self, c: CriterionSpec, spec: ReleaseSpec, frame: pd.DataFrame, planner: Any
    ) -> PlannedMeasurement | None:
        """A ``once_per_release`` kind's measurement as the planner draws it (None: none).

        ``frame``: the public data the sweep ran on. ``planner``: the
        :class:`synthflow.plan.optimize.Planner` being built, read for its ``records``,
        ``arms``, ``arm_of``, options ``o`` (``fit_draws``, ``seed``), Laplace law
        ``law``, ``laplace_grid`` and ``stage(label, steps)`` (progress). Called once,
        after the planner's Laplace tables are made.
        """
        return None

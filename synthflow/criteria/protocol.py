"""The protocol every acceptance-criterion kind implements."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, ClassVar

from synthflow.config.model import CriterionParams
from synthflow.criteria.measurement import ReleasedOnce
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping

    import numpy as np

    from synthflow.config.model import Column, CriterionSpec, ReleaseSpec
    from synthflow.criteria.context import Context, Released
    from synthflow.criteria.noise import NoiseFigure
    from synthflow.privacy.ledger import Ledger
    from synthflow.privacy.rng import PrivacyRNG
    from synthflow.transform import Transformer

__all__ = ["CriterionKind"]


class CriterionKind(ReleasedOnce):
    """One kind of acceptance criterion.

    It owns its parameters (``Params``, parsed from the spec), its exact value, its DP
    release (sensitivity, threshold, charge), the public parameters a release publishes
    for the audit and the planner, its datasheet sentence, the marginals it reads (what
    the ``workload`` generator measures) and its section of the evaluation report.
    Instances are stateless; the spec's criterion (``CriterionSpec``) carries the
    parameters, and ``c.impl`` is its kind.

    A concrete kind declares ``name`` and its own ``Params`` (a frozen, keyword-only
    subclass of :class:`~synthflow.config.model.CriterionParams`); defining the class
    ties the two (``Params.impl`` is the kind). A kind released once per release adds
    the members of :class:`~synthflow.criteria.measurement.ReleasedOnce`.
    """

    name: ClassVar[str]
    """The kind's name in a spec (``kind:``)."""
    Params: ClassVar[type[CriterionParams]]
    """The kind's parameters: frozen, keyword-only, each field's JSON Schema in its
    metadata (:func:`synthflow.criteria._params.param`)."""
    mechanism: ClassVar[str] = "laplace"
    """``laplace`` (the statistic plus Laplace noise) or ``functional`` (the
    regression's functional mechanism)."""
    release_first: ClassVar[bool] = False
    """Released before the others in an evaluation (what another kind reuses: the
    regression fit, which TSTR reads)."""
    perfect_value: ClassVar[float] = 0.0
    """The statistic of a candidate equal to the original (1 for a ratio)."""
    pseudo_threshold: ClassVar[bool] = False
    """Its release threshold is a pseudo-threshold set by a false-positive rate (the
    planner needs no separate false-pass control)."""
    reads_every_pair: ClassVar[bool] = False
    """It reads every pair of a column set (marginals, faithfulness): on a wide table the
    ``workload`` generator covers those pairs with a selected tree."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            return  # an abstract intermediate class
        params = cls.__dict__.get("Params")
        if params is None or not issubclass(params, CriterionParams):
            raise TypeError(
                f"criterion kind {cls.__name__} must declare its own Params (a subclass of "
                "CriterionParams)"
            )
        params.impl = cls()

    def parse(self, where: str, raw: Mapping[str, Any], columns: Mapping[str, Column]) -> Any:
        """The kind's ``Params`` from the spec's criterion mapping ``raw``.

        ``raw``'s keys are already checked against ``Params``' fields.

        Raises:
            ConfigError: Naming the key and the fix.
        """
        raise NotImplementedError

    def check(
        self, c: CriterionSpec, criteria: tuple[CriterionSpec, ...], columns: Mapping[str, Column]
    ) -> None:
        """Checks that need the whole spec (e.g. criteria that share a fit); none by default.

        Raises:
            ConfigError: Naming the criteria and the fix.
        """

    def check_spec(self, c: CriterionSpec, spec: ReleaseSpec) -> None:
        """Checks against the whole loaded spec (its ``public_sample``, ...); none by default.

        Run by the loader, so a spec that could fail only after a charge is refused first.

        Raises:
            ConfigError: Naming the key and the fix.
        """

    def delta(self, c: CriterionSpec) -> float:
        """The delta the criterion's release spends (0: pure DP, the default)."""
        return 0.0

    def pairs_read(self, c: CriterionSpec, spec: ReleaseSpec) -> set[tuple[str, ...]]:
        """The pairs of columns the criterion reads (what ``workload`` measures).

        In any order: the workload orders each pair as the spec's columns are.
        """
        return set()

    def linear_relation(
        self, c: CriterionSpec, spec: ReleaseSpec
    ) -> tuple[str, tuple[str, ...]] | None:
        """The (target, features) of a linear relation the criterion reads (None: none).

        A seeded public draw (:mod:`synthflow.public.draw`) keeps each such relation, so
        that a criterion reading it is swept on data where it holds.
        """
        return None

    def marginal_family(
        self, c: CriterionSpec, names: tuple[str, ...]
    ) -> list[tuple[int, ...]] | None:
        """The family of marginals the criterion compares (None: it compares none)."""
        return None

    def best_case_public(
        self,
        c: CriterionSpec,
        transformer: Transformer,
        n: int,
        public: np.ndarray | None = None,
    ) -> dict:
        """The public parameters a perfect candidate's release would be read from.

        ``public``: the codes of the spec's public sample, for kinds whose parameters
        depend on the data (a conditional mean's smallest group): a perfect candidate is
        a sample like it, scaled to ``n`` rows. Without one, the most favourable
        parameters (the smallest noise possible).
        """
        return {"n": n}

    def noise_figure(
        self,
        c: CriterionSpec,
        spec: ReleaseSpec,
        transformer: Transformer,
        n: int,
        public: np.ndarray | None = None,
        *,
        fit_once: bool = False,
    ) -> NoiseFigure:
        """How often a perfect candidate passes the release at ``n`` rows (the one rule).

        :mod:`synthflow.acceptance.noise_check` says what the figure is. This default is
        Laplace noise at the best-case public parameters. ``public``: the codes of the
        spec's public sample, for kinds whose noise depends on the data's design (the
        regression); None when the spec names none.
        """
        from synthflow.criteria.noise import NoiseFigure, laplace_perfect_pass

        best = self.best_case_public(c, transformer, n, public)
        sens, threshold = self.sensitivity_and_threshold(c, spec, best, c.epsilon)
        room = threshold - self.perfect_value
        return NoiseFigure(
            criterion=c.name,
            noise=math.sqrt(2) * sens / c.epsilon,
            room=room,
            perfect_pass=laplace_perfect_pass(room, sens / c.epsilon),
        )

    def planning_extra(self, c: CriterionSpec, ctx: Context) -> dict[str, Any]:
        """What the planner needs besides the statistic to re-draw the release."""
        return {}

    def report_section(
        self,
        c: CriterionSpec,
        transformer: Transformer,
        t: np.ndarray | None,
        r: np.ndarray,
        released: Released | None,
    ) -> str:
        """The criterion's section of the evaluation report (HTML; none by default).

        ``t`` (the original's codes) is None in a DP report.
        """
        return ""

    def exact(self, c: CriterionSpec, ctx: Context) -> float:
        """The exact (non-private) value between ``ctx``'s original and candidate."""
        raise NotImplementedError

    def release(self, c: CriterionSpec, ctx: Context, ledger: Ledger, rng: PrivacyRNG) -> Released:
        """The DP release: charge ``ledger`` first, then add noise from ``rng``."""
        raise NotImplementedError

    def sensitivity_and_threshold(
        self, c: CriterionSpec, spec: ReleaseSpec, public: dict[str, Any], epsilon: float
    ) -> tuple[float, float]:
        """Replace-one sensitivity of the statistic, and the threshold it is compared with.

        From public parameters only (``n`` and the kind's own).

        Raises:
            ConfigError: For a kind not released by the Laplace mechanism.
        """
        raise ConfigError(f"criterion {c.name!r} (kind {c.kind!r}) is not a Laplace release")

    def published(
        self,
        c: CriterionSpec,
        spec: ReleaseSpec,
        transformer: Transformer,
        codes: np.ndarray,
        *,
        fit_once: bool,
    ) -> dict[str, Any]:
        """The public parameters a release publishes for this criterion.

        ``sensitivity`` included, from the spec and the released (synthetic) codes only,
        so that a reviewer recomputes them from the published files.
        """
        n = len(codes)
        sens, _ = self.sensitivity_and_threshold(c, spec, {"n": n}, c.epsilon)
        return {"n": n, "sensitivity": sens}

    def published_noise_sd(
        self, c: CriterionSpec, sensitivity: float, *, reused: bool
    ) -> float | None:
        """The noise sd a release publishes at ``sensitivity`` (None: nothing to check).

        What the audit recomputes. Laplace at ``c``'s budget: sqrt(2) sensitivity /
        epsilon; none for a criterion that reused a release made once (it added no
        noise of its own) or spent nothing.
        """
        if reused or c.epsilon <= 0 or self.mechanism != "laplace":
            return None
        return math.sqrt(2.0) * sensitivity / c.epsilon

    def relaxed(self, c: CriterionSpec, threshold: float) -> dict[str, float]:
        """The fields that change when the criterion is proposed ``threshold`` (a looser one).

        Only ``threshold`` by default; a kind whose statistic is clipped at or below
        the new threshold moves its clip too (else the proposal could never bind).
        Used by :mod:`synthflow.plan.propose`, which proposes, never decides.
        """
        return {"threshold": threshold}

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """One sentence for the datasheet: what the criterion measures, with its unit."""
        raise NotImplementedError

    @staticmethod
    def unit(c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The unit of the criterion's column (the datasheet's wording)."""
        col = spec.column(c.column) if c.column else None
        return (col.unit or "the column's units") if col is not None else ""

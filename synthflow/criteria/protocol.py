"""The protocol every acceptance-criterion kind implements."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from synthflow.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

    from synthflow.acceptance.dp import Released
    from synthflow.acceptance.exact import Context
    from synthflow.config import CriterionSpec, ReleaseSpec
    from synthflow.ledger import Ledger
    from synthflow.rng import PrivacyRNG
    from synthflow.transform import Transformer

__all__ = ["CriterionKind"]


class CriterionKind:
    """One kind of acceptance criterion.

    It owns its DP release's terms, its published parameters and its datasheet
    sentence. Instances are stateless; the spec's criterion (``CriterionSpec``) carries
    the parameters.
    """

    name: ClassVar[str]
    """The kind's name in a spec (``kind:``)."""
    mechanism: ClassVar[str] = "laplace"
    """``laplace`` (the statistic plus Laplace noise) or ``functional`` (the
    regression's functional mechanism)."""
    once_per_release: ClassVar[bool] = False
    """Whether the original's side can be released once per release (``--fit-once``)
    and reused by every attempt as post-processing."""
    release_first: ClassVar[bool] = False
    """Released before the others in an evaluation (the regression fit, which TSTR
    reuses)."""

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

    def meaning(self, c: CriterionSpec, spec: ReleaseSpec) -> str:
        """One sentence for the datasheet: what the criterion measures, with its unit."""
        raise NotImplementedError

    @staticmethod
    def unit(c: CriterionSpec, spec: ReleaseSpec) -> str:
        """The unit of the criterion's column (the datasheet's wording)."""
        col = spec.column(c.column) if c.column else None
        return (col.unit or "the column's units") if col is not None else ""

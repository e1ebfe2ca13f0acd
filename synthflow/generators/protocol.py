"""The protocol every generator implements, and the hyperparameter base class."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from synthflow.errors import DataError, InfeasibleConfigurationError
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Domain

if TYPE_CHECKING:
    from synthflow.privacy.pld import Mechanism

__all__ = [
    "Generator",
    "GeneratorBase",
    "PrivacyCost",
    "check_codes",
    "largest_columns",
    "refuse_dense_domain",
]


@dataclass(frozen=True, kw_only=True)
class PrivacyCost:
    """What a fitted generator charged: pure DP when delta is 0."""

    epsilon: float
    delta: float = 0.0


@runtime_checkable
class Generator(Protocol):
    """A DP generator over integer-coded data with a public domain.

    ``fit`` charges the ledger (before releasing anything) exactly the generator's
    configured budget; ``sample`` is post-processing of the fitted model and must never
    read private rows.
    """

    name: ClassVar[str]
    Hyperparameters: ClassVar[type]
    requires_public_data: ClassVar[bool]
    """It reads its input as public data (a leak not fixed): refused on private data."""
    needs_transformer: ClassVar[bool]
    """Its constructor takes ``transformer=`` (measurements derived from the spec)."""

    def __init__(self, hyperparameters: Any, *, epsilon: float) -> None:
        """Store validated hyperparameters and the budget; no data is touched."""
        ...

    def fit(
        self, data: pd.DataFrame, *, domain: Domain, ledger: Ledger, rng: PrivacyRNG
    ) -> Generator:
        """Fit on transformed data; return self."""
        ...

    def sample(self, n: int, *, rng: np.random.Generator) -> pd.DataFrame:
        """Draw ``n`` rows of codes with the domain's columns."""
        ...

    @property
    def privacy_cost(self) -> PrivacyCost:
        """Budget the fit spends."""
        ...

    def check_feasible(self, domain: Domain, n: int) -> None:
        """Refuse before any charge when the fit cannot run on this public domain and n.

        Raises:
            InfeasibleConfigurationError: Naming the cause (e.g. the columns whose sizes
                make a model too large) and what to change.
        """
        ...

    def zcdp_rho(self) -> float | None:
        """The rho of one fit if it is rho-zCDP as a whole (composable in zCDP), else None."""
        ...

    def renyi(self, n: int) -> np.ndarray:
        """Replace-one Renyi DP curve of one fit on ``n`` (public) rows."""
        ...


class GeneratorBase:
    """Shared construction of generators: validated hyperparameters and the budget.

    Subclasses set ``name`` and ``Hyperparameters``; a hyperparameter class with a
    ``delta`` field makes the generator (epsilon, delta)-DP, otherwise it is pure.
    ``requires_public_data`` marks generators whose leaks could not be fixed: flows
    refuse them on data not declared public.
    """

    name: ClassVar[str]
    Hyperparameters: ClassVar[type]
    requires_public_data: ClassVar[bool] = False
    needs_transformer: ClassVar[bool] = False

    def __init__(self, hyperparameters: Any, *, epsilon: float) -> None:
        if not isinstance(hyperparameters, self.Hyperparameters):
            raise TypeError(
                f"hyperparameters must be a {self.Hyperparameters.__name__} instance, got "
                f"{type(hyperparameters).__name__}"
            )
        if not epsilon > 0:
            raise ValueError(f"epsilon ({epsilon}) must be > 0")
        self.hyperparameters: Any = hyperparameters
        self.epsilon = float(epsilon)

    @property
    def privacy_cost(self) -> PrivacyCost:
        """The configured epsilon, and the hyperparameters' delta if they have one."""
        return PrivacyCost(
            epsilon=self.epsilon, delta=float(getattr(self.hyperparameters, "delta", 0.0))
        )

    def check_feasible(self, domain: Domain, n: int) -> None:
        """No limit beyond the data's own size (generators with one override this)."""

    def zcdp_rho(self) -> float | None:
        """The rho of one fit if it is rho-zCDP as a whole (composable in zCDP), else None."""
        return None

    def mechanisms(self, domain: Domain) -> tuple[Mechanism, ...] | None:
        """One fit's mechanisms for exact accounting (:mod:`synthflow.privacy.pld`), or None.

        A pure-DP generator is one epsilon-DP mechanism, whatever it does inside; an
        (epsilon, delta) generator without an override has no PLD (None: the release
        falls back to its other accounting). Public: the domain and the settings only.
        """
        from synthflow.privacy.pld import Mechanism  # noqa: PLC0415

        if self.privacy_cost.delta > 0:
            return None
        return (Mechanism.pure(f"{self.name} (epsilon-DP)", self.epsilon),)

    def renyi(self, n: int) -> np.ndarray:
        """Replace-one Renyi DP curve of one fit on ``n`` (public) rows.

        At :data:`synthflow.privacy.accounting.RENYI_ORDERS`; private selection over (epsilon,
        delta) candidates (Papernot-Steinke) needs it. A pure-DP generator has the curve
        of any epsilon-DP mechanism; an (epsilon, delta) generator must override this.

        Raises:
            InfeasibleConfigurationError: For an (epsilon, delta) generator without a curve.
        """
        from synthflow.privacy.accounting import pure_renyi  # noqa: PLC0415

        if self.privacy_cost.delta > 0:
            raise InfeasibleConfigurationError(
                f"{self.name} is (epsilon, delta)-DP and states no Renyi DP curve, so private "
                "selection cannot account it; shortlist generators that do (pure DP, dpctgan, "
                "patectgan, mst, aim)"
            )
        return pure_renyi(self.epsilon)


def largest_columns(domain: Domain, top: int = 3) -> str:
    """The ``top`` largest columns with their sizes, for error messages (public)."""
    ranked = sorted(zip(domain.names, domain.sizes, strict=True), key=lambda x: -x[1])
    return ", ".join(f"{name} ({size} bins)" for name, size in ranked[:top])


def refuse_dense_domain(name: str, domain: Domain, max_cells: int) -> None:
    """Refuse a generator that holds the whole contingency cube when it is too large.

    Raises:
        InfeasibleConfigurationError: When ``domain.cells > max_cells``.
    """
    cells = domain.cells
    if cells > max_cells:
        raise InfeasibleConfigurationError(
            f"{name} holds the whole contingency table: {cells:.3g} cells over "
            f"{len(domain.names)} columns ({cells * 8 / 2**30:.3g} GiB per copy) exceeds its "
            f"limit of {max_cells:.3g} cells. Largest columns: {largest_columns(domain)}. "
            f"Coarsen their bins, or use a generator whose model is factored "
            "(workload, mst, aim, privbayes)"
        )


def check_codes(data: pd.DataFrame, domain: Domain) -> None:
    """Reject data whose columns or codes fall outside the public domain (before fitting).

    Raises:
        DataError: Naming the column and the domain size (never the offending values).
    """
    if tuple(data.columns) != domain.names:
        raise DataError(
            f"generator input has columns {list(data.columns)} but the domain declares "
            f"{list(domain.names)}; transform the data with the configuration's Transformer"
        )
    if len(data) == 0:
        raise DataError("generator input has no rows")
    for name, size in zip(domain.names, domain.sizes, strict=True):
        v = data[name].to_numpy()
        if not np.issubdtype(v.dtype, np.integer):
            raise DataError(f"column {name!r} must hold integer codes, got dtype {v.dtype}")
        if v.min() < 0 or v.max() >= size:
            raise DataError(
                f"column {name!r} holds codes outside the public domain 0..{size - 1}; "
                "values must be binned with the spec's transformations"
            )

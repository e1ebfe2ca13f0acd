"""Domain exceptions and warnings.

Every message names the offending key or argument, shows the (public) value and says
how to fix it. Messages never contain private data values: only column names, public
domain values, counts that the caller has declared public, and file paths.
"""

from __future__ import annotations

__all__ = [
    "BudgetExceededError",
    "ConfigError",
    "DataError",
    "InfeasibleConfigurationError",
    "NoPlanError",
    "NotEnoughRowsError",
    "PrivacyLeakWarning",
    "SelectionEnded",
    "SelectionPaused",
    "SpentError",
    "StoreError",
    "SweepWorkerError",
]


class ConfigError(ValueError):
    """The release spec (YAML) or an option is invalid."""


class DataError(ValueError):
    """Input data cannot be used: missing columns, wrong types, out-of-domain values."""


class StoreError(RuntimeError):
    """A sweep store file is corrupt, foreign, or made for another spec or data."""


class SweepWorkerError(RuntimeError):
    """A sweep's worker process died or could not run a task; finished runs are stored."""


class BudgetExceededError(RuntimeError):
    """A charge would take the ledger past its total privacy budget."""


class NotEnoughRowsError(RuntimeError):
    """Rejection sampling could not produce the requested number of valid rows."""


class PrivacyLeakWarning(UserWarning):
    """A computation would read bounds or categories from private data."""


class NoPlanError(ConfigError):
    """No budget meets the targets: a negative result (exit 1), the frontier written.

    ``reachable``: (P(release), total epsilon) of the lower targets the options do allow
    (public figures of the plan); ``report``: the plan.html that shows why.
    """

    def __init__(
        self,
        message: str,
        *,
        reachable: tuple[tuple[float, float], ...] = (),
        report: object = None,
    ) -> None:
        super().__init__(message)
        self.reachable = reachable
        self.report = report


class SelectionPaused(RuntimeError):
    """Private selection reached its attempt cap; re-running continues it."""


class SelectionEnded(ConfigError):
    """A selection that already ended without a release was run again (its budget is spent)."""


class SpentError(RuntimeError):
    """A command failed after it charged a ledger; the message says what and how to resume."""


class InfeasibleConfigurationError(ValueError):
    """A configuration cannot run on data of this (public) size under its budget.

    Raised before anything is charged, from public quantities only (n, hyperparameters,
    epsilon): sweeps store such a run as failed and private selection counts it as a
    failed attempt.
    """

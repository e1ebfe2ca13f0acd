"""Optional parts of the install, and the one refusal when one is missing.

The base install is what a steward's release needs (``release``, ``audit``, ``demo``,
``tables protect``). The rest are extras, each refused with its install command before
any work (and so before any charge) when absent:

* ``reports`` (matplotlib): the HTML reports with figures (``plan``, ``sweep-report``,
  ``evaluate --report``, ``tables compare``, ``demo --screen``); ``ship-plan`` writes its
  plan.html without figures on the base install;
* ``sign`` (cryptography): Ed25519 signatures (``keygen``, ``release --sign``,
  ``audit --key``);
* ``schema`` (jsonschema): the JSON-Schema layer of ``validate`` (skipped with a note
  without it: the loader's own checks always run);
* ``pgm`` (mbi, jax): Private-PGM, for workload models too large for synthflow's own
  estimators (refused by the generator itself, :func:`synthflow.generators.workload`).
"""

from __future__ import annotations

import importlib.util

from synthflow.errors import ConfigError

__all__ = ["EXTRAS", "has", "require"]

EXTRAS = {"matplotlib": "reports", "cryptography": "sign", "jsonschema": "schema", "mbi": "pgm"}
"""Module -> the extra that installs it."""


def has(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent missing, or a module blocked in sys.modules
        return False


def require(module: str, *, what: str) -> None:
    """Refuse ``what`` when ``module`` is not installed, naming the extra to install.

    Raises:
        ConfigError: ``what needs MODULE, which is not installed: pip install ...``.
    """
    if not has(module):
        extra = EXTRAS[module]
        raise ConfigError(
            f"{what} needs {module}, which is not installed: "
            f"pip install 'synthflow-dp[{extra}]' (the '{extra}' extra)"
        )

"""``private_selection`` as the release job calls it: with the enclave's own ledger.

The job opens the selection's ledger (``enclave_dir / "ledger.jsonl"``, the spec's
totals); tests that drive the selection directly get it opened the same way here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from synthflow.privacy.ledger import Ledger
from synthflow.release import private_selection as _private_selection


def enclave_ledger(spec: Any, enclave_dir: str | Path) -> Ledger:
    """The selection's own ledger, as ``release/job.py`` opens it."""
    return Ledger(
        total_epsilon=spec.privacy.total_epsilon,
        total_delta=spec.privacy.total_delta,
        path=Path(enclave_dir) / "ledger.jsonl",
    )


def private_selection(spec: Any, candidates: Any, **kwargs: Any) -> Any:
    """:func:`synthflow.release.private_selection` with the enclave's ledger opened."""
    kwargs.setdefault("enclave_ledger", enclave_ledger(spec, kwargs["enclave_dir"]))
    return _private_selection(spec, candidates, **kwargs)

"""Release pre-flight checks on the files a release reads and writes, made before any charge.

A release charges the dataset's ledger once, then selects, saves and publishes: a file
it cannot write after the charge loses the budget. These checks read what can be read up
front (#58): outputs that cannot be written, the process's file-size limit, a --ledger
that is one of the enclave's own files, and a shortlist or plan made from --data itself.
:mod:`synthflow.release.preflight` runs them in order.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from synthflow.config.model import ReleaseSpec
    from synthflow.space import Configuration

__all__ = [
    "ENCLAVE_FILES",
    "check_ledger_outside_enclave",
    "check_not_screened_on",
    "check_room_for_release",
    "check_writable_output",
]


def check_writable_output(option: str, path: Path) -> None:
    """Refuse an output that cannot be written (read-only, not a directory) up front."""
    from synthflow._util.outputs import check_writable  # noqa: PLC0415

    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise ConfigError(f"{option} {str(path)!r}: {str(existing)!r} is not a directory")
    check_writable(path, option=option)


def check_room_for_release(spec: ReleaseSpec, candidates: list[Configuration], rows: int) -> None:
    """Refuse, before any charge, a file-size limit the release's largest file would hit.

    The largest file is the published ``synthetic.csv`` (or the enclave's saved result):
    at most ``rows`` lines of each column's longest label, quoted, plus separators, for
    the candidate whose labels are longest (public: the spec's bins).
    """
    from synthflow._util.outputs import check_file_size_limit  # noqa: PLC0415
    from synthflow.transform import Transformer  # noqa: PLC0415

    widest = 0
    for letters in {tuple(sorted(c.transformations.items())) for c in candidates}:
        tr = Transformer(spec, dict(letters))
        line = sum(
            3 + max(len(str(x)) for x in tr.transformations[name].labels)
            for name in tr.domain.names
        )
        widest = max(widest, line, 8 * len(tr.domain.names))  # the saved codes' pickle
    check_file_size_limit(
        (rows + 1) * (widest + 1) + 65536, what="the release's synthetic data file"
    )


ENCLAVE_FILES = (
    "ledger.jsonl",
    "transcript.jsonl",
    "outcome.json",
    "selected.pkl",
    "regression_fit.pkl",
    ".lock",
)
"""The files a selection writes in its --private-dir (synthflow.release.enclave)."""


def check_ledger_outside_enclave(ledger: Path, enclave: Path) -> None:
    """Refuse a dataset --ledger that is one of the enclave's own files (before any charge).

    The dataset's charge would land in the file the selection then opens as its own
    ledger, whose charge fails on it: the budget would be spent with nothing released.
    """
    target = ledger.resolve()
    attempts = enclave / "attempts"
    if target in {enclave / name for name in ENCLAVE_FILES} or attempts in target.parents:
        raise ConfigError(
            f"--ledger {str(ledger)!r} is a file the selection itself writes in --private-dir "
            f"({target.name}): the dataset's ledger must be a file of its own, e.g. "
            f"{str(enclave / 'budget.jsonl')!r} or one beside --private-dir. Nothing was spent"
        )


def check_not_screened_on(data: Path, candidates: Path, plan: dict[str, Any] | None) -> None:
    """Refuse private --data that the shortlist or plan was itself made from (by file hash).

    A sweep and a plan read exact statistics of their data (pass rates, budgets, the
    plan's figures): made from the private file, they publish those statistics
    uncharged. Their ``public_data_sha256`` names the file they were made from.

    Raises:
        ConfigError: Naming which was made from --data and the fix.
    """
    import yaml  # noqa: PLC0415

    from synthflow.privacy.ledger import file_sha256  # noqa: PLC0415

    try:
        doc = yaml.safe_load(candidates.read_text("utf-8"))
    except (OSError, ValueError, yaml.YAMLError, RecursionError):
        doc = None  # read_candidates has refused what it cannot read
    made = {
        "--candidates": doc.get("public_data_sha256") if isinstance(doc, dict) else None,
        "--plan": plan.get("public_data_sha256") if isinstance(plan, dict) else None,
    }
    if not any(isinstance(v, str) for v in made.values()):
        return
    sha = file_sha256(data)
    for option, made_from in made.items():
        if made_from == sha:
            raise ConfigError(
                f"the {option} file was made from --data itself (the same file, by its "
                "SHA-256): a sweep or plan reads exact statistics of its data, so one made "
                "from the private file publishes them without a charge. Screen and plan on "
                "public data (a public sample, or a 'synthflow public-data draw' from one), "
                "or add --public if --data is public. Nothing was spent"
            )

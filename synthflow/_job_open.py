"""The one place a computation on data starts: :func:`open_job` applies the rules once.

Every command and the Python API open their job here (``run``, ``evaluate``,
``release``, the demo, ``tables``, sweep workers and :class:`synthflow.Synthesizer`),
so the rules exist once:

* randomness: a CSPRNG (:meth:`PrivacyRNG.secure`), or a seed (a seeded
  :class:`PrivacyRNG`) on data declared public only: a seed makes the noise
  reproducible, so anyone who knows it can subtract it;
* generators that read their input as public data (``requires_public_data``) run on
  data declared public only;
* data: a file is read and cleaned against the spec (:func:`synthflow.data.load_data`);
  a frame given to the Python API is cleaned the same way (:func:`synthflow.data.clean_frame`:
  the command line's checks, before any charge); the commands' own frames (a sweep
  worker's) are taken as already cleaned;
* the ledger: data not declared public charge their dataset's persistent ledger
  (``--ledger FILE``, or ``ledger=synthflow.dataset_ledger(...)`` in Python) bound to
  these very data; public data may charge a ledger of their own (in memory, or
  ``out/ledger.jsonl``).

Nothing is charged here: a job checks what it can (outputs, rows, budget) after opening
and before its first charge.

It lies below the job layer (:mod:`synthflow.jobs` re-exports it) so that the release
job, :mod:`synthflow.release.job`, opens its data the same way without importing the
layer above it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from synthflow.errors import ConfigError
from synthflow.privacy.ledger import Ledger, command_ledger, data_fingerprint
from synthflow.privacy.rng import PrivacyRNG

if TYPE_CHECKING:
    import pandas as pd

    from synthflow.config.model import ReleaseSpec
    from synthflow.data import LoadedData

__all__ = ["Job", "open_job"]


@dataclass(frozen=True, kw_only=True)
class Job:
    """What a computation on data starts from: its randomness, ledger and clean data."""

    spec: ReleaseSpec
    public: bool
    rng: PrivacyRNG
    ledger: Ledger | None
    """The ledger the job charges (None for a job that charges nothing)."""
    loaded: LoadedData | None
    """The data file as read and cleaned (None when a frame or no data was given)."""
    frame: pd.DataFrame | None
    """The cleaned data (None when the job was opened without data)."""
    extra_columns: tuple[str, ...] = ()
    api: bool = False

    def open_ledger(
        self,
        ledger: Ledger | str | Path | None = None,
        *,
        out: str | Path | None = None,
        budget: tuple[float, float] | None = None,
    ) -> Ledger:
        """The ledger this job charges, opened once its checks have passed.

        A dataset ledger's file gets its header when first opened, so a job that checks
        more after reading its data (outputs, rows, budget) opens it here, last.
        """
        if ledger is None and not self.public:
            _private_ledger_refusal(self.api)
        return _ledger(
            self.spec,
            self.frame,
            ledger,
            public=self.public,
            out=out,
            budget=budget,
            extra_columns=self.extra_columns,
        )


def open_job(
    spec: ReleaseSpec,
    data: str | Path | pd.DataFrame | None = None,
    *,
    public: bool,
    seed: int | None = None,
    rng: PrivacyRNG | None = None,
    ledger: Ledger | str | Path | None = None,
    out: str | Path | None = None,
    budget: tuple[float, float] | None = None,
    models: tuple[str, ...] = (),
    extra_columns: tuple[str, ...] = (),
    charges: bool = True,
    api: bool = False,
) -> Job:
    """Apply the rules every computation on data follows and open its job.

    Args:
        spec: The release spec.
        data: A data file (read and cleaned), a frame (cleaned when ``api``, else taken
            as already cleaned), or None.
        public: Whether the data are declared public.
        seed: A seed for the noise (public data only; the command line's ``--seed``).
        rng: A :class:`PrivacyRNG` (the Python API's form; seeded: public data only).
        ledger: A :class:`Ledger` (the API), a dataset ledger's path (``--ledger``), or
            None: public data then get a ledger of their own, private data are refused.
        out: Where a public job's own ledger is kept (``out/ledger.jsonl``).
        budget: The total (epsilon, delta) of a public job's own ledger (default: the
            spec's totals).
        models: Generators the job will run (those that need public data are checked).
        extra_columns: Columns read beside the release columns (not part of the dataset,
            so not of its ledger's fingerprint).
        charges: False for a job that charges nothing (no ledger is opened).
        api: Phrase refusals for the Python API (``public=True``) instead of the CLI.

    Raises:
        ConfigError: A seed on data not declared public, a public-only generator on
            them, or data not declared public without their dataset ledger.
        DataError: The data file, or the API's frame, fails the data checks (a value
            outside its column's public domain, a wrong type; never quoting a value).
    """
    from synthflow._job_rules import check_rng, privacy_rng  # noqa: PLC0415

    rng = check_rng(rng, public=public) if rng is not None else privacy_rng(seed, public=public)
    if models and not public:  # the registry imports every generator: only when it matters
        from synthflow.generators.registry import check_public_only  # noqa: PLC0415

        check_public_only(models, public=public, api=api)
    if api and charges and ledger is None and not public:  # the API's: before reading data
        _private_ledger_refusal(api)
    loaded = None
    frame = data
    if isinstance(data, (str, Path)):
        from synthflow.data import load_data  # noqa: PLC0415

        loaded = load_data(data, spec, public=public, extra_columns=extra_columns)
        frame = loaded.frame
    elif api and data is not None:  # a frame from the user: the file's checks, not trust
        from synthflow.data import check_release_columns, clean_frame  # noqa: PLC0415

        check_release_columns(data, spec)
        frame = clean_frame(data, spec, public=public, extra_columns=extra_columns).frame
    job = Job(
        spec=spec,
        public=public,
        rng=rng,
        ledger=None,
        loaded=loaded,
        frame=frame,
        extra_columns=extra_columns,
        api=api,
    )
    if not charges:
        return job
    return dataclasses.replace(job, ledger=job.open_ledger(ledger, out=out, budget=budget))


def _private_ledger_refusal(api: bool) -> None:
    if api:
        raise ConfigError(
            "DP computations on data not declared public charge the dataset's persistent "
            "ledger: pass ledger=synthflow.dataset_ledger(PATH, data, total_epsilon=...) (one "
            "file per private dataset, shared with the command line), or public=True if the "
            "data are public"
        )
    command_ledger(data=None, public=False, ledger_path=None, total_epsilon=1.0)  # its refusal


def _ledger(
    spec: ReleaseSpec,
    frame: pd.DataFrame | None,
    ledger: Ledger | str | Path | None,
    *,
    public: bool,
    out: str | Path | None,
    budget: tuple[float, float] | None,
    extra_columns: tuple[str, ...],
) -> Ledger:
    total_epsilon, total_delta = budget or (
        spec.privacy.total_epsilon,
        spec.privacy.total_delta,
    )
    if isinstance(ledger, Ledger):
        if not public:
            _check_bound(ledger, frame)
        return ledger
    if ledger is not None:  # a dataset ledger's path (--ledger)
        if frame is None:
            raise ValueError("a dataset ledger needs the cleaned data (its fingerprint)")
        return command_ledger(
            data=frame.drop(columns=list(extra_columns)) if extra_columns else frame,
            public=public,
            ledger_path=ledger,
            total_epsilon=spec.privacy.total_epsilon,
            total_delta=spec.privacy.total_delta,
        )
    path = Path(out) / "ledger.jsonl" if out is not None else None
    return Ledger(total_epsilon=total_epsilon, total_delta=total_delta, path=path)


def _check_bound(ledger: Ledger, frame: pd.DataFrame | None) -> None:
    """A private job's ledger is its dataset's: a header bound to these very data."""
    if ledger.header is None:
        _private_ledger_refusal(api=True)
    if frame is not None and (ledger.header or {}).get("dataset_sha256") != data_fingerprint(frame):
        raise ConfigError(
            f"the ledger {str(ledger.path)!r} belongs to another dataset (its fingerprint "
            "differs from these data's): pass the ledger of these data"
        )

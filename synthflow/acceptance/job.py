"""Evaluating a candidate file against the original (``synthflow evaluate``)."""

from __future__ import annotations

import logging
import math
from pathlib import Path
from typing import TYPE_CHECKING

from synthflow._job_open import open_job
from synthflow.acceptance.evaluate import evaluate
from synthflow.data import load_data, read_table
from synthflow.errors import ConfigError, DataError
from synthflow.public_sample import check_public_sample_is_public, public_sample_path
from synthflow.space import find_configuration
from synthflow.transform import Transformer

if TYPE_CHECKING:
    import pandas as pd

    from synthflow.acceptance.evaluate import AcceptanceReport
    from synthflow.config.model import ReleaseSpec

__all__ = ["evaluate_files", "load_codes"]

log = logging.getLogger(__name__)


def load_codes(
    path: str | Path, spec: ReleaseSpec, transformer: Transformer, *, public: bool
) -> pd.DataFrame:
    """Codes of a file: a candidate written by ``synthflow run`` (bin labels) or raw data.

    A file whose release columns all hold bin labels of the configuration is read as a
    candidate; anything else is cleaned (:func:`~synthflow.data.load_data`) and binned.
    """
    table = read_table(path)
    if set(transformer.domain.names) <= set(table.columns):
        try:
            return transformer.from_labels(table[list(transformer.domain.names)].astype(str))
        except DataError:
            pass  # not bin labels: a raw file in release-column form
    return transformer.forward(load_data(path, spec, public=public).frame)


def evaluate_files(
    spec: ReleaseSpec,
    config_id: str,
    original: str | Path,
    candidate: str | Path,
    *,
    exact: bool,
    ledger_path: str | Path | None = None,
    seed: int | None = None,
    public: bool = False,
) -> tuple[AcceptanceReport, Transformer, pd.DataFrame, pd.DataFrame]:
    """Load both files, evaluate, and return the report with the codes used.

    ``public`` declares the original public (its cleaning counts are logged); ``exact``
    (exact, non-private values) and ``seed`` need it.

    Raises:
        ConfigError: ``exact`` or ``seed`` on data not declared public.
    """
    if exact and not public:
        # Exact statistics of private data are not private: inside an enclave a steward
        # evaluates with DP (drop --exact; it charges the dataset's --ledger).
        raise ConfigError(
            "--exact prints exact, non-private statistics of --data and is for public data "
            "only: add --public if the data are public, or drop --exact to evaluate with DP "
            "noise charged to the dataset's --ledger"
        )
    configuration = find_configuration(spec, config_id)
    transformer = Transformer(spec, configuration.transformations)
    orig = load_codes(original, spec, transformer, public=public)
    cand = load_codes(candidate, spec, transformer, public=True)
    if len(orig) != len(cand):
        # The criteria compare tables of one size (matching, counts, thresholds scaled by
        # n): a candidate of another original would be judged on the wrong scale.
        raise DataError(
            f"the candidate has {len(cand)} rows but the cleaned original has {len(orig)}; the "
            "criteria need equal sizes (n is public): evaluate the candidate made from this "
            "original ('synthflow run' on the same --data)"
        )
    if exact:
        return evaluate(spec, transformer, orig, cand, exact=True), transformer, orig, cand
    public_sample_path(spec)  # the DP report reads it after the charge: refuse a missing one now
    job = open_job(
        spec,
        original if not public or ledger_path else None,  # a dataset ledger's fingerprint
        public=public,
        seed=seed,
        charges=False,  # the ledger is opened below, once the public sample is checked
    )
    if not public and job.frame is not None:
        check_public_sample_is_public(spec, job.frame, [transformer])  # published uncharged
    ledger, rng = job.open_ledger(ledger_path), job.rng
    # Every criterion's charge held at once: refused with nothing charged if not all fit.
    with ledger.reserve(
        spec.evaluation_epsilon,
        math.fsum(c.impl.delta(c) for c in spec.criteria),
        what="synthflow evaluate (every criterion)",
    ):
        report = evaluate(spec, transformer, orig, cand, exact=False, ledger=ledger, rng=rng)
    return report, transformer, orig, cand

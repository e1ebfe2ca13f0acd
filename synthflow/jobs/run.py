"""One flow on a data file (``synthflow run``): load, fit, write a release candidate."""

from __future__ import annotations

import json
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

from synthflow import __version__
from synthflow._job_open import open_job
from synthflow._util.files import replaced_atomically
from synthflow._util.outputs import check_output_dir, removed_if_refused
from synthflow.config.model import ReleaseSpec
from synthflow.data import CleaningReport
from synthflow.errors import ConfigError
from synthflow.flow import FlowResult, run_flow
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.release.cost import delta_of
from synthflow.space import Configuration

__all__ = ["RUN_FILES", "run_configuration", "write_candidate"]

RUN_FILES = ("candidate.csv", "ledger.jsonl", "run.json")
"""What ``run`` writes into its output directory."""


def _check_out(out: Path) -> None:
    if (out / "MANIFEST.json").exists():
        raise ConfigError(
            f"--out {str(out)!r} holds a release package; a run never writes into a release "
            "(the audit would fail): choose a new --out"
        )
    clash = [f for f in RUN_FILES if (out / f).exists()]
    if clash:
        raise ConfigError(
            f"output directory {str(out)!r} already holds a run ({', '.join(clash)}); "
            "choose a new --out (earlier results are never overwritten)"
        )
    check_output_dir(out, option="--out")  # nor mixed with files of another's


def _prepare_out(out: Path) -> None:
    """Create ``out`` and check it is writable, before anything is charged.

    A run whose budget is spent must be able to write its result; an OSError here
    becomes a clear CLI error with nothing spent.
    """
    out.mkdir(parents=True, exist_ok=True)
    probe = out / ".synthflow-write-test"
    probe.write_bytes(b"")
    probe.unlink()


def run_configuration(
    spec: ReleaseSpec,
    configuration: Configuration,
    data: str | Path,
    out: Path,
    *,
    seed: int | None = None,
    public: bool = False,
    show_progress: bool = True,
    ledger_path: str | Path | None = None,
) -> Path:
    """Load the data, run one flow and write a candidate; returns the output directory.

    Nothing is written when the spec, options or data are invalid. Data not declared
    public need ``ledger_path``, the dataset's persistent ledger (:func:`command_ledger`).
    """
    _check_out(out)
    # Made before anything is charged (a charged run must be able to write its result);
    # removed again while empty if the run is refused (private data without --ledger).
    with removed_if_refused(out):
        _prepare_out(out)
        job = open_job(
            spec,
            data,
            public=public,
            seed=seed,
            ledger=ledger_path,
            out=out,
            models=(configuration.model,),
        )
        assert job.ledger is not None and job.loaded is not None
        ledger, rng, loaded = job.ledger, job.rng, job.loaded
        # The whole cost held before the generator's first charge (a structure step, then
        # its counts): a run that cannot afford it all is refused with nothing charged.
        with ledger.reserve(
            spec.privacy.generator_epsilon,
            delta_of(configuration),
            what=f"synthflow run {configuration.id}",
        ):
            result = run_flow(
                spec,
                configuration,
                loaded.frame,
                ledger=ledger,
                rng=rng,
                public=public,
                show_progress=show_progress,
            )
        write_candidate(
            result,
            out,
            spec=spec,
            ledger=ledger,
            rng=rng,
            cleaning=loaded.report,
            data_path=str(data),
        )
    return out


def _atomic_write(path: Path, writer: Callable[[Path], None]) -> None:
    with replaced_atomically(path) as tmp:
        writer(tmp)


def _write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def write_candidate(
    result: FlowResult,
    out_dir: Path,
    *,
    spec: ReleaseSpec,
    ledger: Ledger,
    rng: PrivacyRNG,
    cleaning: CleaningReport,
    data_path: str,
) -> Path:
    """Write ``candidate.csv`` (bin labels) and ``run.json`` into ``out_dir``.

    The ledger writes ``ledger.jsonl`` itself as it is charged. Files are written
    atomically (temporary file, then rename).

    Returns:
        The path of ``candidate.csv``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / "candidate.csv"
    _atomic_write(csv_path, lambda p: result.transformer.write_labels_csv(result.candidate, p))
    meta: dict[str, Any] = {
        "synthflow_version": __version__,
        "python": platform.python_version(),
        "spec": {"name": spec.name, "path": spec.path, "sha256": spec.sha256},
        "data": data_path,
        "configuration": result.configuration.to_json(),
        "rows": len(result.candidate),
        "rows_filtered": result.rows_filtered,
        "sampling_rounds": result.sampling_rounds,
        "projection_rows": result.projection_rows,
        "timings_s": {k: round(v, 4) for k, v in result.timings.items()},
        "randomness": rng.describe(),
        "cleaning": cleaning.to_json(),
        "privacy": ledger.summary(),
    }
    text = json.dumps(meta, indent=2) + "\n"
    _atomic_write(out_dir / "run.json", lambda p: _write_text(p, text))
    return csv_path

"""The table protections as jobs (``synthflow tables protect`` and ``tables compare``).

Each opens its job (:func:`synthflow.jobs.open_job`): the randomness, the data and the
ledger a DP method charges (the dataset's ``--ledger`` for data not declared public; a
public run's own ``out/ledger.jsonl`` sized to the method's budget).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from synthflow._job_open import open_job
from synthflow.errors import DataError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from synthflow.config.model import ReleaseSpec
    from synthflow.tables import TableSpec
    from synthflow.tables.compare import Comparison
    from synthflow.tables.methods import TableMethod

__all__ = ["compare_tables", "protect_tables"]


def protect_tables(
    spec: ReleaseSpec,
    tables: Sequence[TableSpec],
    method: TableMethod,
    data: str | Path,
    *,
    out: Path,
    seed: int | None,
    public: bool,
    ledger_path: str | Path | None,
    not_dp_statement: str,
    tables_file: str,
    what: str,
) -> list[Path]:
    """Protect every table with ``method``; write them, and what was done in tables.json."""
    from synthflow.tables.protect import protect, write_metadata, write_tables  # noqa: PLC0415
    from synthflow.tables.tabulate import Microdata  # noqa: PLC0415

    # A DP method charges: the dataset's ledger (private data, or --ledger given), else
    # this public run's own, sized to the method's budget.
    budget = method.budget
    job = open_job(
        spec,
        data,
        public=public,
        seed=seed,
        ledger=ledger_path,
        out=out,
        budget=budget,
        extra_columns=method.extra_columns,
        charges=method.is_dp,
    )
    assert job.loaded is not None
    microdata = Microdata(job.loaded.frame, spec)
    ledger = job.ledger
    if ledger is not None:
        assert budget is not None  # only a DP method charges
        # The method's whole budget held before its first table is charged: refused with
        # nothing charged (and no table lost) if the ledger cannot afford it all.
        with ledger.reserve(*budget, what=what):
            published = protect(microdata, tables, method, rng=job.rng, ledger=ledger)
    else:
        published = protect(microdata, tables, method, rng=job.rng, ledger=None)
    files = write_tables(published, out)
    method.write_public_files(out)
    meta = {
        "method": method.describe(),
        "spec": {"path": spec.path, "sha256": spec.sha256},
        "tables_file": tables_file,
        "data": str(data),
        "files": [f.name for f in files],
        "randomness": job.rng.describe(),
        "cleaning": job.loaded.report.to_json(),
        "privacy": (
            {"differentially_private": True, **ledger.summary()}
            if ledger
            else {"differentially_private": False, "statement": not_dp_statement}
        ),
    }
    write_metadata(out / "tables.json", meta)
    return files


def compare_tables(
    spec: ReleaseSpec,
    tables: Sequence[TableSpec],
    data: str | Path,
    *,
    release_path: str | Path | None,
    seed: int | None,
    epsilons: tuple[float, ...] | None,
    delta: float,
    neighbouring: str | None,
    nonnegative: bool,
) -> Comparison:
    """Every method on every table of the PUBLIC ``data``, and a release's own tables."""
    from synthflow.tables.compare import (  # noqa: PLC0415
        DEFAULT_EPSILONS,
        compare,
        comparison_budget,
        read_release,
    )
    from synthflow.tables.tabulate import Microdata  # noqa: PLC0415

    epsilons = epsilons or DEFAULT_EPSILONS
    job = open_job(
        spec, data, public=True, seed=seed, budget=comparison_budget(epsilons, delta=delta)
    )
    assert job.frame is not None and job.ledger is not None
    release = release_eps = None
    if release_path:
        frame, release_eps = read_release(release_path)
        if len(frame) != len(job.frame):
            raise DataError(
                f"the release in {str(release_path)!r} holds {len(frame)} rows but --data has "
                f"{len(job.frame)} after cleaning; a release of these data has exactly as "
                "many rows (n is public): pass the data the release was made from"
            )
        release = Microdata(frame, spec, labelled=True)
    return compare(
        Microdata(job.frame, spec),
        tables,
        rng=job.rng,
        release=release,
        release_epsilon=release_eps,
        epsilons=epsilons,
        delta=delta,
        neighbouring=neighbouring or spec.privacy.neighbouring,  # type: ignore[arg-type]
        nonnegative=nonnegative,
        ledger=job.ledger,
    )

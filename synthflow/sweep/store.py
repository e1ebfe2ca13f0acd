"""The sweep store: one embedded SQLite file, written by the driver alone.

Each finished run is committed in its own transaction (WAL journal), keyed by
``UNIQUE(config_id, generator_epsilon, repeat)``, so a crash loses at most the runs in
flight and a re-run skips finished ones. Each run also keeps its *planning record*
(the statistic every DP criterion was released from and its public parameters) for
``synthflow plan``. A ``meta`` table records the schema version and the
SHA-256 of the spec and of the public data: opening a store made for other inputs, or
a file that is not a synthflow store, raises :class:`StoreError` and leaves the file
untouched (nothing is written before the checks pass).
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from synthflow.errors import InfeasibleConfigurationError, NotEnoughRowsError, StoreError
from synthflow.space import Configuration
from synthflow.sweep._store_schema import (
    _APP,
    _SCHEMA,
    SCHEMA_VERSION,
    _check_existing,
)
from synthflow.sweep.evaluation import RunEvaluation

__all__ = ["SCHEMA_VERSION", "RunRecord", "StoreError", "SweepStore"]


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """One finished run, as the worker returns it and the store keeps it."""

    config_id: str
    repeat: int
    seed: int
    seconds: float
    generator_epsilon: float
    evaluation: RunEvaluation | None = None
    """None when the flow failed (e.g. rejection sampling did not converge)."""
    error: str | None = None

    @property
    def passed_exact(self) -> bool:
        """Passed every criterion without noise (False for a failed flow)."""
        return self.evaluation is not None and self.evaluation.passed_exact

    @property
    def passed_dp(self) -> bool:
        """Would have passed with release noise (False for a failed flow)."""
        return self.evaluation is not None and self.evaluation.passed_dp


REFUSALS = (NotEnoughRowsError.__name__, InfeasibleConfigurationError.__name__)
"""Error classes of a run that a configuration's size decides (refused on every try); a
failed run's error starts with its class name (:mod:`synthflow.sweep.workers.runs`)."""


class SweepStore:
    """A sweep's results on disk. Use :meth:`open` or :meth:`open_existing`."""

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self._conn = conn
        self.path = path

    def __repr__(self) -> str:
        try:
            runs = self._conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        except sqlite3.ProgrammingError:  # closed
            return f"SweepStore({str(self.path)!r}, closed)"
        return f"SweepStore({str(self.path)!r}, runs={runs})"

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        spec_sha256: str,
        data_sha256: str,
        seed: int,
        spec_generator_epsilon: float | None = None,
    ) -> SweepStore:
        """Open or create the store for this spec, public data and base seed.

        ``spec_generator_epsilon`` (the spec's eps_gen) is recorded on creation: the
        shortlist keeps runs at that budget unless told another.

        Raises:
            StoreError: The file is not a synthflow store, is corrupt, or was made for
                another spec, data file or seed. The file is not modified.
        """
        p = Path(path)
        expected = {"spec_sha256": spec_sha256, "data_sha256": data_sha256, "seed": str(seed)}
        if p.exists():
            conn = _check_existing(p)
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            for key, what in (
                ("spec_sha256", "spec"),
                ("data_sha256", "public data file"),
                ("seed", "--seed"),
            ):
                if meta.get(key) != expected[key]:
                    conn.close()
                    raise StoreError(
                        f"store {str(p)!r} holds runs of another {what} ({key} "
                        f"{meta.get(key)}, this sweep has {expected[key]}); it was left "
                        "untouched: use a new --store path, or the spec, data and seed it was "
                        "made with"
                    )
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(p)
            with conn:
                conn.executescript(_SCHEMA)
                rows = {
                    "app": _APP,
                    "schema_version": str(SCHEMA_VERSION),
                    "created_at": str(time.time()),
                    **expected,
                    **(
                        {"spec_generator_epsilon": repr(float(spec_generator_epsilon))}
                        if spec_generator_epsilon is not None
                        else {}
                    ),
                }
                conn.executemany("INSERT INTO meta VALUES (?, ?)", rows.items())
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        return cls(conn, p)

    @classmethod
    def open_existing(cls, path: str | Path) -> SweepStore:
        """Open a store for reading (shortlist, report).

        Raises:
            StoreError: If it is missing, corrupt or not a synthflow store.
        """
        p = Path(path)
        if p.is_dir():
            raise StoreError(f"store {str(p)!r} is a directory; give the sweep's results file")
        if not p.is_file():
            raise StoreError(f"store {str(p)!r} does not exist; run 'synthflow sweep' first")
        return cls(_check_existing(p), p)

    def close(self) -> None:
        """Close the database connection."""
        self._conn.close()

    def __enter__(self) -> SweepStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writing
    def add_configurations(self, configs: list[Configuration]) -> None:
        """Record the configurations (idempotent)."""
        with self._conn:
            self._conn.executemany(
                "INSERT OR IGNORE INTO configurations VALUES (?, ?, ?, ?, ?)",
                [
                    (c.id, c.model, c.min_count, c.letters, json.dumps(c.to_json(), default=str))
                    for c in configs
                ],
            )

    def add_run(self, run: RunRecord) -> bool:
        """Store one run in one transaction; False if the pair was already stored."""
        try:
            with self._conn:
                self._conn.execute(
                    "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        run.config_id,
                        run.generator_epsilon,
                        run.repeat,
                        run.seed,
                        "ok" if run.evaluation is not None else "error",
                        int(run.passed_exact),
                        int(run.passed_dp),
                        run.error,
                        run.seconds,
                        time.time(),
                    ),
                )
                if run.evaluation is not None:
                    self._conn.executemany(
                        "INSERT INTO criteria VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [
                            (
                                run.config_id,
                                run.generator_epsilon,
                                run.repeat,
                                c.name,
                                c.value,
                                c.noisy_value,
                                c.threshold,
                                int(c.passed_exact),
                                int(c.passed_dp),
                            )
                            for c in run.evaluation.criteria
                        ],
                    )
                    if run.evaluation.planning is not None:
                        self._conn.execute(
                            "INSERT INTO planning VALUES (?, ?, ?, ?)",
                            (
                                run.config_id,
                                run.generator_epsilon,
                                run.repeat,
                                json.dumps(run.evaluation.planning, allow_nan=False),
                            ),
                        )
        except sqlite3.IntegrityError:
            return False
        return True

    # ------------------------------------------------------------------ reading
    def meta(self) -> dict[str, str]:
        """The metadata table (app, schema version, spec/data hashes, seed)."""
        return dict(self._conn.execute("SELECT key, value FROM meta").fetchall())

    def finished(self) -> set[tuple[str, float, int]]:
        """The stored (config_id, generator_epsilon, repeat) triples."""
        return {
            (c, float(e), int(r))
            for c, e, r in self._conn.execute(
                "SELECT config_id, generator_epsilon, repeat FROM runs"
            )
        }

    def crashed(self) -> dict[tuple[str, float, int], str]:
        """Stored runs that crashed (not a refusal of the configuration): key -> error.

        A configuration refused for its size (:class:`NotEnoughRowsError`,
        :class:`InfeasibleConfigurationError`) is refused again on every try: it is a
        result. Any other error (a missing extra, a memory error, a bug) is a crash, which
        a resumed sweep runs again (:meth:`forget`).
        """
        refusals = tuple(f"{name}%" for name in REFUSALS)
        rows = self._conn.execute(
            "SELECT config_id, generator_epsilon, repeat, error FROM runs "
            "WHERE status = 'error' AND "
            + " AND ".join("COALESCE(error, '') NOT LIKE ?" for _ in refusals),
            refusals,
        )
        return {(c, float(e), int(r)): str(err or "") for c, e, r, err in rows}

    def forget(self, keys: set[tuple[str, float, int]]) -> None:
        """Remove these failed runs (crashed ones a resumed sweep runs again).

        In one transaction; a successful run is never removed.
        """
        with self._conn:
            self._conn.executemany(
                "DELETE FROM runs WHERE config_id = ? AND generator_epsilon = ? AND repeat = ? "
                "AND status = 'error'",
                sorted(keys),
            )

    def runs(self) -> pd.DataFrame:
        """One row per run, joined with its configuration's model, letters and min_count."""
        return pd.read_sql_query(
            "SELECT r.*, c.model, c.min_count, c.letters, c.config_json FROM runs r "
            "JOIN configurations c USING (config_id) "
            "ORDER BY r.config_id, r.generator_epsilon, r.repeat",
            self._conn,
        )

    def criteria(self) -> pd.DataFrame:
        """One row per (run, criterion)."""
        return pd.read_sql_query("SELECT * FROM criteria", self._conn)

    def planning(self) -> list[tuple[str, float, int, dict[str, Any]]]:
        """(config_id, generator_epsilon, repeat, planning record) of every successful run."""
        return [
            (c, float(e), int(r), json.loads(blob))
            for c, e, r, blob in self._conn.execute(
                "SELECT config_id, generator_epsilon, repeat, record FROM planning "
                "ORDER BY config_id, generator_epsilon, repeat"
            )
        ]

    def configurations(self) -> dict[str, dict[str, Any]]:
        """config_id -> the configuration's JSON form."""
        return {
            cid: json.loads(blob)
            for cid, blob in self._conn.execute("SELECT config_id, config_json FROM configurations")
        }

"""The sweep store's SQLite schema and the check of an existing file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from synthflow.errors import StoreError

__all__ = ["SCHEMA_VERSION", "_APP", "_SCHEMA", "_SQLITE_MAGIC", "_check_existing"]


SCHEMA_VERSION = 2

_APP = "synthflow-sweep"

_SQLITE_MAGIC = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE configurations (
    config_id TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    min_count INTEGER NOT NULL,
    letters TEXT NOT NULL,
    config_json TEXT NOT NULL
);
CREATE TABLE runs (
    config_id TEXT NOT NULL REFERENCES configurations(config_id),
    generator_epsilon REAL NOT NULL,
    repeat INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
    passed_exact INTEGER NOT NULL,
    passed_dp INTEGER NOT NULL,
    error TEXT,
    seconds REAL NOT NULL,
    finished_at REAL NOT NULL,
    UNIQUE (config_id, generator_epsilon, repeat)
);
CREATE TABLE criteria (
    config_id TEXT NOT NULL,
    generator_epsilon REAL NOT NULL,
    repeat INTEGER NOT NULL,
    name TEXT NOT NULL,
    value REAL,
    noisy_value REAL,
    threshold REAL NOT NULL,
    passed_exact INTEGER NOT NULL,
    passed_dp INTEGER NOT NULL,
    UNIQUE (config_id, generator_epsilon, repeat, name)
);
CREATE TABLE planning (
    config_id TEXT NOT NULL,
    generator_epsilon REAL NOT NULL,
    repeat INTEGER NOT NULL,
    record TEXT NOT NULL,
    UNIQUE (config_id, generator_epsilon, repeat)
);
"""


def _check_existing(path: Path) -> sqlite3.Connection:
    """Open an existing file read-write only if it is a synthflow store; write nothing."""
    if path.is_dir():
        raise StoreError(f"store {str(path)!r} is a directory; give a file path (e.g. results.db)")
    size = path.stat().st_size
    with path.open("rb") as fh:
        head = fh.read(len(_SQLITE_MAGIC))
    if size == 0 or head != _SQLITE_MAGIC:
        raise StoreError(
            f"store {str(path)!r} exists but is not an SQLite database (corrupt or foreign "
            "file); it was left untouched: choose another --store path"
        )
    conn = sqlite3.connect(f"file:{path}?mode=rw", uri=True)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not {"meta", "runs", "criteria", "configurations"} <= tables:
            raise StoreError(
                f"store {str(path)!r} is an SQLite database but not a synthflow sweep store; "
                "it was left untouched: choose another --store path"
            )
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreError(
            f"store {str(path)!r} is corrupt ({exc}); it was left untouched: choose another "
            "--store path"
        ) from exc
    except StoreError:
        conn.close()
        raise
    if meta.get("app") != _APP:
        conn.close()
        raise StoreError(
            f"store {str(path)!r} is an SQLite database but not a synthflow sweep store; "
            "it was left untouched: choose another --store path"
        )
    if meta.get("schema_version") != str(SCHEMA_VERSION):
        conn.close()
        raise StoreError(
            f"store {str(path)!r} has schema version {meta.get('schema_version')}, this "
            f"synthflow reads version {SCHEMA_VERSION} (version 2 added the generator epsilon "
            "and the planning records); it was left untouched: re-run the sweep into a new "
            "--store path"
        )
    return conn

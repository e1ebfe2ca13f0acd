import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from synthflow.sweep.evaluation import CriterionOutcome, RunEvaluation
from synthflow.sweep.store import RunRecord, StoreError, SweepStore

KEYS: dict[str, Any] = {"spec_sha256": "a" * 64, "data_sha256": "b" * 64, "seed": 7}


def _record(
    cid: str = "privbayes-x", repeat: int = 0, passed: bool = True, eps: float = 4.0
) -> RunRecord:
    crit = CriterionOutcome(
        name="c1", value=0.1, threshold=0.2, passed_exact=passed, passed_dp=passed
    )
    planning = {"c1": {"statistic": 0.1, "public": {"n": 100}}}
    return RunRecord(
        config_id=cid,
        generator_epsilon=eps,
        repeat=repeat,
        seed=1,
        seconds=0.1,
        evaluation=RunEvaluation(criteria=(crit,), planning=planning),
    )


def test_create_add_and_resume(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SweepStore.open(path, **KEYS) as db:
        assert db.add_run(_record())
        assert not db.add_run(_record())  # UNIQUE(config_id, generator_epsilon, repeat)
        assert db.add_run(_record(eps=2.0))  # another generator budget is another run
        assert db.add_run(
            RunRecord(
                config_id="privbayes-x",
                generator_epsilon=4.0,
                repeat=1,
                seed=2,
                seconds=0.0,
                error="NotEnoughRowsError: x",
            )
        )
    with SweepStore.open(path, **KEYS) as db:
        assert db.finished() == {
            ("privbayes-x", 4.0, 0),
            ("privbayes-x", 2.0, 0),
            ("privbayes-x", 4.0, 1),
        }
        assert db.meta()["schema_version"] == "2"
        assert len(db.criteria()) == 2
        # the failed run keeps no planning record; the others keep theirs, as stored
        assert [(c, e, r) for c, e, r, _ in db.planning()] == [
            ("privbayes-x", 2.0, 0),
            ("privbayes-x", 4.0, 0),
        ]
        assert db.planning()[0][3] == {"c1": {"statistic": 0.1, "public": {"n": 100}}}


def _unchanged(path: Path, exc_match: str, **keys: object) -> None:
    before = path.read_bytes()
    with pytest.raises(StoreError, match=re.escape(exc_match)):
        SweepStore.open(path, **{**KEYS, **keys})
    assert path.read_bytes() == before
    assert not path.with_name(path.name + "-wal").exists()


def test_foreign_text_file_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    path.write_text("not a database\n")
    _unchanged(
        path,
        f"store {str(path)!r} exists but is not an SQLite database (corrupt or "
        "foreign file); it was left untouched: choose another --store path",
    )


def test_empty_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    path.touch()
    _unchanged(path, "exists but is not an SQLite database")


def test_corrupt_sqlite_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "results.db"
    with SweepStore.open(path, **KEYS) as db:
        db.add_run(_record())
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # wreck the schema page, keep the header
    path.write_bytes(bytes(data))
    _unchanged(path, f"store {str(path)!r} is corrupt (")


def test_foreign_sqlite_is_refused_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    conn.close()
    _unchanged(
        path,
        f"store {str(path)!r} is an SQLite database but not a synthflow sweep "
        "store; it was left untouched: choose another --store path",
    )


@pytest.mark.parametrize(
    ("key", "value", "what"),
    [
        ("spec_sha256", "c" * 64, "spec"),
        ("data_sha256", "d" * 64, "public data file"),
        ("seed", 8, "--seed"),
    ],
)
def test_other_inputs_are_refused(tmp_path: Path, key: str, value: object, what: str) -> None:
    path = tmp_path / "s.db"
    SweepStore.open(path, **KEYS).close()
    _unchanged(
        path,
        f"holds runs of another {what} ({key} {KEYS[key]}, this sweep has {value})",
        **{key: value},
    )


def test_open_existing_missing(tmp_path: Path) -> None:
    path = tmp_path / "none.db"
    with pytest.raises(StoreError, match=re.escape("run 'synthflow sweep' first")):
        SweepStore.open_existing(path)
    assert not path.exists()

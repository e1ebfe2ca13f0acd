"""#60 item 4: ``init`` groups a drafted conditional mean only by columns the noise affords.

Fair's affairs survey (statsmodels ships it; a real table) with the respondent's
occupation as a category, students (41 rows) left out: the rarest occupation, "occ6", is
109 of 6,325 rows (1.7%). At 4,456 private rows the resize margin (ceil(0.01 n) + 1 = 46)
leaves that group about 30 rows, and the release's noise at the drafted epsilon (0.1)
is larger than the threshold: a perfect candidate would pass too few releases. The
draft leaves occupation out of the grouping and says why; at 100,000 rows the same group
holds about 700 rows after the margin and is kept. (A group under the margin's 1% share
is resized to one row at any n: never affordable.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from synthflow.cli import main
from synthflow.loader import load_spec


@pytest.fixture(scope="module")
def survey(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("statsmodels")
    from synthflow.public.affairs import affairs_frame

    frame = affairs_frame().drop(columns=["occupation_husb"])
    frame = frame[frame["occupation"] != 1]
    frame["occupation"] = frame["occupation"].map(lambda v: f"occ{v}")
    path = tmp_path_factory.mktemp("survey") / "affairs.csv"
    frame.to_csv(path, index=False)
    return path


def _draft(survey: Path, tmp_path: Path, rows: int) -> str:
    out = tmp_path / f"draft_{rows}.yaml"
    assert main(["init", "--data", str(survey), "--public", "--out", str(out),
                 "--rows", str(rows), "-q"]) == 0  # fmt: skip
    load_spec(out)  # the draft loads as it is
    return out.read_text()


def _group_by(text: str) -> list[str]:
    body = re.search(r"kind: conditional_mean.*?group_by: \[([^\]]*)\]", text, re.S)
    assert body is not None
    return [g.strip().lstrip("#").strip() for g in body.group(1).replace("\n", " ").split(",")]


def test_a_group_the_noise_cannot_afford_is_left_out_and_named(survey, tmp_path):
    text = _draft(survey, tmp_path, 4456)
    assert "occupation" not in _group_by(text)
    assert "none" in _group_by(text)
    note = " ".join(x.strip("# ") for x in text.splitlines() if x.lstrip().startswith("#"))
    assert "not grouped by occupation: at 4,456 rows its smallest group" in note
    assert "a perfect candidate passes" in note


def test_a_large_enough_registry_keeps_it(survey, tmp_path):
    assert "occupation" in _group_by(_draft(survey, tmp_path, 100_000))

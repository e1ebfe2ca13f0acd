"""The mutant catalogue stays in step with the code it plants bugs in.

``tests/mutants/run.py`` runs after the test suite in CI; a mutant whose text a refactor
moved is an *error* there, found only at the end of a long run. This checks, in seconds,
that each mutant's text occurs exactly once in its file (so the planted bug lands where
it was meant to) and that its tests exist.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
MUTANTS = yaml.safe_load((REPO / "tests" / "mutants" / "catalogue.yaml").read_text())


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m["id"] for m in MUTANTS])
def test_mutant_text_occurs_once_in_its_file(mutant: dict) -> None:
    text = (REPO / mutant["file"]).read_text()
    count = text.count(mutant["find"])
    assert count == 1, (
        f"{mutant['id']}: its text occurs {count} times in {mutant['file']}; "
        "update tests/mutants/catalogue.yaml"
    )
    assert mutant["replace"] != mutant["find"], f"{mutant['id']} changes nothing"


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m["id"] for m in MUTANTS])
def test_mutant_tests_exist(mutant: dict) -> None:
    paths = [t for t in mutant["tests"] if t.startswith("tests/")]
    assert paths, f"{mutant['id']} names no test file"
    for target in paths:
        assert (REPO / target.split("::")[0]).exists(), f"{mutant['id']}: {target} is missing"

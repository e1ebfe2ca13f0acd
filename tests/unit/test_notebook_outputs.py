"""The notebooks are committed with their outputs, from one clean run each.

The documentation site renders notebooks/ as committed (mkdocs-jupyter, never executed at
build time). ``python tests/integration/nbrun.py`` re-makes the outputs (seeded public runs,
tests/integration/nbrun.py's PUBLISHED settings); this test reads the committed files only.
The integration tests (tests/integration/test_*_notebook.py) re-execute every notebook, so
that a committed notebook whose code no longer runs fails there, not here; nothing is
executed twice.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))

# What each committed run must show (the notebook's own checks, as its test reads them).
SHOWS = {
    "audit_a_release.ipynb": ["audit passed", "audit FAILED:", "the rarest record appears"],
    "prescreening.ipynb": ["'runs_new': 0", "spec_sha256", "Sweep report"],
    "steward_release.ipynb": ["shortlisted configuration(s)", "released: ", "audit passed"],
    "choosing_a_budget.ipynb": ["total epsilon", "P(release)", "image/png"],
}


def _code_cells(path: Path) -> list[dict]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def test_every_notebook_has_its_expectations() -> None:
    assert sorted(p.name for p in NOTEBOOKS) == sorted(SHOWS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_with_outputs_of_one_clean_run(path: Path) -> None:
    cells = _code_cells(path)
    # Every code cell ran, once, top to bottom, in one fresh kernel: 1, 2, ..., n.
    counts = [c.get("execution_count") for c in cells]
    assert counts == list(range(1, len(cells) + 1)), (
        f"{path.name}: execution counts {counts}; re-make the outputs with "
        "python tests/integration/nbrun.py"
    )
    outputs = [o for c in cells for o in c.get("outputs", [])]
    assert outputs, f"{path.name} is committed without outputs"
    errors = [o for o in outputs if o.get("output_type") == "error"]
    assert not errors, f"{path.name}: {errors[0].get('ename')}: {errors[0].get('evalue')}"
    text = json.dumps(outputs)
    for shown in SHOWS[path.name]:
        assert shown in text, f"{path.name}: the committed outputs do not show {shown!r}"
    assert "Traceback" not in text

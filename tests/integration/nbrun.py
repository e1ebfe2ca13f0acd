"""Run a notebook of ``notebooks/`` headless; re-make the committed outputs.

The tests call :func:`run_notebook` (settings from the environment, often small data) and
read what the code cells printed. The notebooks are committed *with* their outputs (the
documentation site renders them as they are): ``python tests/integration/nbrun.py`` executes
each one on the seeded public runs of :data:`PUBLISHED` and writes it back in place;
``tests/unit/test_notebook_outputs.py`` checks that what is committed is such a run.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
SHARED = REPO.parent / "shared" / "public_data"


def execute(name: str, *, timeout: int = 300) -> Any:
    """Execute ``notebooks/<name>`` in a ``python3`` kernel (settings come from the env)."""
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    ).execute()
    return nb


def outputs_of(nb: Any) -> tuple[str, list[dict[str, Any]]]:
    """The text of every output (stream text and plain-text results) and the raw outputs."""
    raw = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    text = "".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", "")) for o in raw
    )
    return text, raw


def run_notebook(name: str, *, timeout: int = 300) -> tuple[str, list[dict[str, Any]]]:
    """Execute ``notebooks/<name>`` and return its outputs' text and raw outputs.

    Returns the text of every output (stream text and plain-text results) and the raw
    output objects (to look for images).
    """
    return outputs_of(execute(name, timeout=timeout))


def _choosing_a_budget(work: Path) -> dict[str, str]:
    # The notebook's defaults: the 8 Gaussian workload configurations of births at
    # generator budgets 0.75, 1 and 1.25, 10 repeats, on the public NVSS 160K sample (the
    # real frontier; about 12 minutes on 2 cores with its three plans). Its test runs a
    # small loose-threshold version instead (tests/integration/test_plan_notebook.py).
    return {"SYNTHFLOW_PLAN_WORK": str(work / "plan_work")}


# The committed outputs: each notebook's settings (environment variables) for the run that
# is written back. Every run is on public data and seeded, except the steward's private
# selection, which takes no seed by design (it stands in for private data).
PUBLISHED: dict[str, Callable[[Path], dict[str, str]]] = {
    "audit_a_release.ipynb": lambda work: {},  # its default: a seeded demonstration release
    "prescreening.ipynb": lambda work: {},  # its default: the embedded NVSS-like file
    "steward_release.ipynb": lambda work: {},  # its default: the shipped plan, about 30 s
    "choosing_a_budget.ipynb": _choosing_a_budget,
}
# Settings the published runs must not inherit from the caller's environment.
_CLEARED = (
    "SYNTHFLOW_RELEASE_DIR",
    "SYNTHFLOW_SHORTLIST",
    "SYNTHFLOW_PRIVATE_DATA",
    "SYNTHFLOW_NOTEBOOK_DATA",
    "SYNTHFLOW_NOTEBOOK_SAMPLE",
    "SYNTHFLOW_NOTEBOOK_REPEATS",
    "SYNTHFLOW_NOTEBOOK_MODELS",
)


def _coalesce_streams(outputs: list[Any]) -> list[Any]:
    """Join consecutive stream outputs; keep only what a terminal shows of ``\\r`` lines.

    A progress bar writes one output per update; the committed notebook keeps its last state.
    """
    merged: list[Any] = []
    for out in outputs:
        if (
            out.get("output_type") == "stream"
            and merged
            and merged[-1].get("output_type") == "stream"
            and merged[-1].get("name") == out.get("name")
        ):
            merged[-1]["text"] += out["text"]
        else:
            merged.append(out)
    for out in merged:
        if out.get("output_type") == "stream":
            lines = out["text"].replace("\r\n", "\n").split("\n")
            shown = [([part for part in line.split("\r") if part] or [""])[-1] for line in lines]
            out["text"] = "\n".join(shown)
    return merged


def publish(name: str, *, timeout: int = 1800) -> Path:
    """Execute ``notebooks/<name>`` on its :data:`PUBLISHED` settings and write it back."""
    saved = dict(os.environ)
    try:
        with tempfile.TemporaryDirectory(prefix="nbrun-") as tmp:
            for key in _CLEARED:
                os.environ.pop(key, None)
            os.environ["SYNTHFLOW_REPO"] = str(REPO)
            os.environ.update(PUBLISHED[name](Path(tmp)))
            nb = execute(name, timeout=timeout)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # no timings: a re-run changes only outputs
        if cell.cell_type == "code":
            cell.outputs = _coalesce_streams(cell.outputs)
    path = NOTEBOOKS / name
    nbformat.write(nb, path)
    return path


def main(argv: list[str] | None = None) -> None:
    """Re-make the committed outputs of the named notebooks (all by default)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("names", nargs="*", help="notebooks/NAME.ipynb (default: all)")
    args = parser.parse_args(argv)
    for name in args.names or sorted(PUBLISHED):
        start = time.monotonic()
        path = publish(Path(name).name)
        print(f"{path.relative_to(REPO)}: executed in {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()

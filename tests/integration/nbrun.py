"""Run a notebook of ``notebooks/`` headless and return what its code cells printed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]


def run_notebook(name: str, *, timeout: int = 300) -> tuple[str, list[dict[str, Any]]]:
    """Execute ``notebooks/<name>`` in a ``python3`` kernel (settings come from the env).

    Returns the text of every output (stream text and plain-text results) and the raw
    output objects (to look for images).
    """
    nb = nbformat.read(REPO / "notebooks" / name, as_version=4)
    NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO / "notebooks")}},
    ).execute()
    raw = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    text = "".join(
        str(o.get("text", "")) + str(o.get("data", {}).get("text/plain", "")) for o in raw
    )
    return text, raw

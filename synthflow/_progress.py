"""Progress bars that work in a terminal and in Jupyter alike.

``tqdm.auto`` picks the notebook widget in Jupyter and, when ipywidgets is not installed
(an enclave rarely has it), warns "IProgress not found" and shows nothing useful. Here
the widget is used only when ipywidgets can be imported; otherwise the plain text bar,
which Jupyter renders fine.
"""

from __future__ import annotations

import importlib.util

__all__ = ["tqdm"]

if importlib.util.find_spec("ipywidgets") is not None:
    from tqdm.auto import tqdm
else:
    from tqdm.std import tqdm

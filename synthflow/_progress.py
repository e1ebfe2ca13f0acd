"""Progress bars that work in a terminal and in Jupyter alike.

``tqdm.auto`` picks the notebook widget in Jupyter and, when ipywidgets is not installed
(an enclave rarely has it), warns "IProgress not found" and shows nothing useful. Here
the widget is used only when ipywidgets can be imported; otherwise the plain text bar,
which Jupyter renders fine.

:func:`elapsed_line` is the line of work whose progress is private (private selection:
the number of attempts depends on the data): it shows only how long the work has run,
redrawn every second by its own clock, never by the work's events, so the moments the
line changes say nothing about when an attempt ended.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["ELAPSED_FORMAT", "elapsed_line", "private_count_line", "ticking", "tqdm"]

if importlib.util.find_spec("ipywidgets") is not None:
    from tqdm.auto import tqdm
else:
    from tqdm.std import tqdm

ELAPSED_FORMAT = "{desc}: running for {elapsed}"
"""The only fields a private progress line shows: what runs, and for how long."""


@contextmanager
def ticking(bar: Any, interval: float = 1.0) -> Iterator[Any]:
    """Redraw ``bar`` every ``interval`` seconds from a thread of its own, until exit.

    tqdm redraws only when it is updated; a line that is never updated (or must not be,
    as its updates would be private) would otherwise freeze at 00:00.
    """
    if getattr(bar, "disable", False):
        yield bar
        return
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(interval):
            bar.refresh()

    thread = threading.Thread(target=tick, name="synthflow-progress", daemon=True)
    thread.start()
    try:
        yield bar
    finally:
        stop.set()
        thread.join()


@contextmanager
def elapsed_line(
    desc: str, *, disable: bool = False, interval: float = 1.0, **kw: Any
) -> Iterator[Any]:
    """A progress line showing ``desc`` and the elapsed time only, redrawn every second.

    The bar it yields is for nothing but display: do not ``update`` it (an update would
    redraw it at the moment of a private event). ``kw`` goes to tqdm (``file``).
    """
    bar = tqdm(desc=desc, disable=disable, bar_format=ELAPSED_FORMAT, **kw)
    try:
        with ticking(bar, interval):
            yield bar
    finally:
        bar.close()


@contextmanager
def private_count_line(
    desc: str,
    *,
    unit: str,
    show_count: bool,
    disable: bool = False,
    interval: float = 1.0,
    **kw: Any,
) -> Iterator[Callable[[int], None]]:
    """A line for work whose count is private; yields ``set_count(n)``.

    With ``show_count`` (the steward's own terminal inside the enclave) the count is
    shown and redrawn as it changes; otherwise ``set_count`` does nothing and the line
    is :func:`elapsed_line`. Either way the line is redrawn every second.
    """
    if not show_count:
        with elapsed_line(desc, disable=disable, interval=interval, **kw):
            yield lambda n: None
        return
    bar = tqdm(desc=desc, unit=unit, disable=disable, **kw)
    try:
        with ticking(bar, interval):
            yield lambda n: bar.update(n - bar.n)
    finally:
        bar.close()

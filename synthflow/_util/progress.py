"""Progress bars that work in a terminal and in Jupyter alike.

``tqdm.auto`` picks the notebook widget in Jupyter and, when ipywidgets is not installed
(an enclave rarely has it), warns "IProgress not found" and shows nothing useful. Here
the widget is used only when ipywidgets can be imported; otherwise the plain text bar,
which Jupyter renders fine.

:func:`elapsed_line` is the line of work whose progress is private (private selection:
the number of attempts depends on the data): it shows only how long the work has run,
redrawn every second by its own clock, never by the work's events, so the moments the
line changes say nothing about when an attempt ended. When its stream is not a terminal
(a log file, CI), a redrawn line would run together into one; it is written as plain
lines instead, one every ``plain_interval`` seconds by the same clock ([ux] 4).
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import time
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
def _every(interval: float, action: Callable[[], None]) -> Iterator[None]:
    """Call ``action`` every ``interval`` seconds from a thread of its own, until exit."""
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(interval):
            action()

    thread = threading.Thread(target=tick, name="synthflow-progress", daemon=True)
    thread.start()
    try:
        yield None
    finally:
        stop.set()
        thread.join()


@contextmanager
def ticking(bar: Any, interval: float = 1.0) -> Iterator[Any]:
    """Redraw ``bar`` every ``interval`` seconds from a thread of its own, until exit.

    tqdm redraws only when it is updated; a line that is never updated (or must not be,
    as its updates would be private) would otherwise freeze at 00:00.
    """
    if getattr(bar, "disable", False):
        yield bar
        return
    with _every(interval, bar.refresh):
        yield bar


def _is_terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty is not None and isatty())


@contextmanager
def _plain_lines(desc: str, stream: Any, interval: float) -> Iterator[None]:
    """``desc: running for MM:SS`` as whole lines, by the line's own clock.

    One at the start, one every ``interval`` seconds, one at the end (which is when the
    command returns anyway).
    """
    start = time.monotonic()

    def write() -> None:
        elapsed = tqdm.format_interval(time.monotonic() - start)
        stream.write(ELAPSED_FORMAT.format(desc=desc, elapsed=elapsed) + "\n")
        stream.flush()

    write()
    try:
        with _every(interval, write):
            yield None
    finally:
        write()


@contextmanager
def elapsed_line(
    desc: str,
    *,
    disable: bool = False,
    interval: float = 1.0,
    plain_interval: float = 30.0,
    **kw: Any,
) -> Iterator[Any]:
    """A progress line showing ``desc`` and the elapsed time only, redrawn every second.

    The bar it yields is for nothing but display: do not ``update`` it (an update would
    redraw it at the moment of a private event). ``kw`` goes to tqdm (``file``). On a
    stream that is not a terminal, plain lines every ``plain_interval`` seconds instead
    (and None is yielded).
    """
    stream = kw.get("file") or sys.stderr
    if not disable and not _is_terminal(stream):
        with _plain_lines(desc, stream, plain_interval):
            yield None
        return
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

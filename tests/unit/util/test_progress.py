"""The private progress line: elapsed time only, redrawn by its own clock every second."""

from __future__ import annotations

import io
import re
import time

from synthflow._util.progress import elapsed_line, private_count_line, ticking, tqdm


class _Terminal(io.StringIO):
    """A stream that says it is a terminal (redrawn lines, as on the steward's screen)."""

    def isatty(self) -> bool:
        return True


def _frames(text: str) -> list[str]:
    """The distinct redraws of a tqdm line written to a file."""
    return [f.strip() for f in re.split(r"[\r\n]", text) if f.strip()]


def test_the_elapsed_line_redraws_itself_without_updates() -> None:
    out = _Terminal()
    with elapsed_line("private selection", file=out, interval=0.05):
        time.sleep(0.6)
    frames = _frames(out.getvalue())
    # tqdm alone would draw it twice (open, close); the clock redraws it in between
    assert len(frames) >= 4  # about 12 at this interval; a loaded machine draws fewer
    assert set(frames) == {"private selection: running for 00:00"}


def test_the_count_is_hidden_and_does_not_trigger_a_redraw() -> None:
    """Neither what the line shows nor when it changes depends on the private count."""
    out = _Terminal()
    with private_count_line(
        "private selection", unit="attempt", show_count=False, file=out, interval=3600
    ) as set_count:
        for k in range(1, 50):
            set_count(k)
    frames = _frames(out.getvalue())
    assert frames == ["private selection: running for 00:00"] * len(frames)
    assert len(frames) <= 2  # drawn when it opens and when it closes, never per attempt


def test_show_count_shows_the_count_on_the_stewards_terminal() -> None:
    out = io.StringIO()
    with private_count_line(
        "private selection", unit="attempt", show_count=True, file=out, interval=0.05
    ) as set_count:
        set_count(4)
        time.sleep(0.2)
    assert re.search(r"private selection: 4attempt", out.getvalue())


def test_a_disabled_line_starts_no_thread() -> None:
    import threading

    def ours() -> list[str]:
        return [t.name for t in threading.enumerate() if t.name == "synthflow-progress"]

    with elapsed_line("quiet", disable=True, interval=0.01):
        assert ours() == []
    bar = tqdm(disable=True)
    with ticking(bar, 0.01):
        assert ours() == []
    with elapsed_line("shown", file=_Terminal(), interval=0.01):
        assert ours() == ["synthflow-progress"]
    assert ours() == []  # stopped and joined on exit


def test_off_a_terminal_the_line_is_plain_lines_by_its_own_clock() -> None:
    """[ux] 4: in a log, a redrawn line ran together ("running for 00:00private ...").

    Off a terminal: whole lines, at the start, every ``plain_interval`` seconds and at
    the end, never as the (private) count changes.
    """
    out = io.StringIO()
    with private_count_line(
        "private selection", unit="attempt", show_count=False, file=out, plain_interval=0.05
    ) as set_count:
        for k in range(1, 50):
            set_count(k)
        time.sleep(0.3)
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue() and len(lines) >= 4  # about 8 at this interval
    assert set(lines) == {"private selection: running for 00:00"}
    quiet = io.StringIO()
    with private_count_line(
        "private selection", unit="attempt", show_count=False, file=quiet, plain_interval=3600
    ):
        pass
    assert quiet.getvalue().splitlines() == ["private selection: running for 00:00"] * 2

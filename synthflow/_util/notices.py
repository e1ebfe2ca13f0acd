"""What a job tells the person running it: warnings and notes, one line each, on stderr.

Modules outside ``cli/`` never print ([shape]): they call :func:`say`, which logs the
line on the ``synthflow.notices`` logger. Its own handler writes each line as it is to
the *current* ``sys.stderr`` (so a test's captured stream, or a caller's redirect, gets
it), and it does not propagate: the CLI's ``--verbose`` log format and a library user's
root handlers do not garble or repeat it. A library user silences the notes with
``logging.getLogger("synthflow.notices").setLevel(logging.ERROR)`` or routes them with
their own handler. Lines hold public figures only (the spec, n, budgets), never data.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["LOGGER", "say"]

LOGGER = logging.getLogger("synthflow.notices")


class _CurrentStderr(logging.Handler):
    """Writes a record's message, as it is, to whatever ``sys.stderr`` is at the time."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(record.getMessage() + "\n")
            sys.stderr.flush()
        except Exception:  # a closed stream: as logging does, never raise from a note
            self.handleError(record)


if not any(isinstance(h, _CurrentStderr) for h in LOGGER.handlers):
    LOGGER.addHandler(_CurrentStderr())
LOGGER.propagate = False
LOGGER.setLevel(logging.INFO)


def say(line: str) -> None:
    """Tell the user ``line`` (a whole line, e.g. ``synthflow release: warning: ...``)."""
    LOGGER.warning(line)

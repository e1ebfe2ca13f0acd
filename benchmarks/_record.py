"""Keep ``benchmarks/README.md``'s table of figures up to date.

Every benchmark script calls :func:`record` for each headline figure it prints. The
table has one row per figure (figure, value, command, date, machine); a new
measurement of a figure replaces its row, so the table always shows the latest run of
each command and where the README's numbers come from.
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import shlex
import sys
from pathlib import Path

README = Path(__file__).resolve().parent / "README.md"
BEGIN = "<!-- figures:begin -->"
END = "<!-- figures:end -->"
HEADER = "| figure | value | command | date | machine |\n|---|---|---|---|---|"


def _machine() -> str:
    return f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}"


def command_line() -> str:
    """The command that ran this script, as a user would type it."""
    script = Path(sys.argv[0])
    try:
        script = script.resolve().relative_to(README.parent.parent)
    except ValueError:
        pass
    return "python " + " ".join(shlex.quote(a) for a in [str(script), *sys.argv[1:]])


def record(figure: str, value: str, *, command: str | None = None) -> None:
    """Put ``figure = value`` (measured by ``command``, default this script) in the table."""
    row = (
        f"| {figure} | {value} | `{command or command_line()}` | "
        f"{dt.date.today().isoformat()} | {_machine()} |"
    )
    text = README.read_text("utf-8")
    head, rest = text.split(BEGIN, 1)
    body, tail = rest.split(END, 1)
    rows = [r for r in body.strip().splitlines()[2:] if r.startswith("| ")]
    rows = [r for r in rows if r.split(" | ")[0] != f"| {figure}"] + [row]
    rows.sort(key=lambda r: r.split(" | ")[0].lower())
    README.write_text(
        f"{head}{BEGIN}\n{HEADER}\n" + "\n".join(rows) + f"\n{END}{tail}", encoding="utf-8"
    )

"""One rule for output files: never overwrite silently (``--force`` to replace).

Every command that writes a named output file checks it here first, before any work
(and before any budget is spent), so a typo cannot replace a sweep store, a shortlist
or a report without the user asking for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from synthflow.errors import ConfigError

__all__ = ["check_output_file"]


def check_output_file(
    path: str | Path, *, force: bool, option: str, protected: Iterable[str | Path] = ()
) -> Path:
    """Validate an output file path; returns it as a Path.

    Args:
        path: Where the command will write.
        force: Replace an existing file (``--force``).
        option: The option's name, for the message (e.g. ``--out``).
        protected: Inputs of the command that must never be replaced (e.g. the store).

    Raises:
        ConfigError: If the path is a directory, an input of the command, exists without
            ``force``, or its directory does not exist.
    """
    p = Path(path)
    for other in protected:
        if p.resolve() == Path(other).resolve():
            raise ConfigError(
                f"{option} {str(p)!r} is also an input of this command; choose another file"
            )
    if p.is_dir():
        raise ConfigError(f"{option} {str(p)!r} is a directory; give a file path")
    if p.exists() and not force:
        raise ConfigError(
            f"{option} {str(p)!r} exists and is never overwritten silently; choose a new file "
            "or add --force to replace it"
        )
    if not p.parent.exists():
        raise ConfigError(f"the directory of {option} {str(p)!r} does not exist; create it first")
    return p

"""One rule for output files: never overwrite silently (``--force`` to replace).

Every command that writes a named output file checks it here first, before any work
(and before any budget is spent), so a typo cannot replace a sweep store, a shortlist
or a report without the user asking for it. A command refused after it made its output
directory removes that directory again while it is empty (:func:`removed_if_refused`),
so that a refusal leaves nothing behind.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from synthflow.errors import ConfigError

__all__ = ["check_output_dir", "check_output_file", "check_writable", "removed_if_refused"]


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
        if p.resolve() == Path(other).resolve() or _same_file(p, Path(other)):
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
    check_writable(p.parent, option=option, path=p)
    return p


def _same_file(a: Path, b: Path) -> bool:
    """Whether two existing paths are one file (a hard link has its own path)."""
    try:
        return a.exists() and b.exists() and a.samefile(b)
    except OSError:
        return False


def check_writable(directory: Path, *, option: str, path: Path | None = None) -> None:
    """Prove ``directory`` (or its nearest existing parent) takes a file, by writing one.

    A permission bit says nothing to root, and a read-only mount or a full quota shows
    only when a file is made: a command that spends budget makes one here, before the
    charge, so that its result is never lost to an unwritable output.

    Raises:
        ConfigError: With the operating system's reason.
    """
    import tempfile  # noqa: PLC0415

    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(
            f"{option} {str(path or directory)!r} lies under {str(existing)!r}, which is a "
            "file, not a directory; choose another path. Nothing was spent"
        )
    try:
        with tempfile.NamedTemporaryFile(dir=existing, prefix=".synthflow-probe-"):
            pass
    except OSError as exc:
        raise ConfigError(
            f"{option} {str(path or directory)!r} cannot be written ({exc.strerror or exc} in "
            f"{str(existing)!r}); choose a writable place. Nothing was spent"
        ) from None


def check_file_size_limit(need: int, *, what: str) -> None:
    """Refuse when the process's file-size limit (``ulimit -f``) is below ``need`` bytes.

    A write past the limit fails (EFBIG; Python ignores SIGXFSZ), so a command that
    spends budget and then writes its result checks the limit before the charge, where
    it can be read: a result lost to it would have spent the budget for nothing.

    Raises:
        ConfigError: Naming the limit, what needs more and the fix.
    """
    try:
        import resource  # noqa: PLC0415  (POSIX)
    except ImportError:  # pragma: no cover - no such limit elsewhere
        return
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft == resource.RLIM_INFINITY or soft >= need:
        return
    raise ConfigError(
        f"this process's file-size limit (ulimit -f) is {soft:,} bytes, and {what} needs "
        f"up to {need:,} bytes in one file: the result would be lost after the charge. "
        "Raise the limit (ulimit -f unlimited) and run the command again. Nothing was spent"
    )


def check_output_dir(
    path: str | Path, *, option: str, own: Iterable[str] = (), force: bool = False
) -> Path:
    """An output directory: new, or empty, or (with ``force``) holding only ``own`` files.

    A command writes several files into its output directory: one that already holds
    other files would mix its results with someone else's (or replace them), so it is
    refused before any work, and before any budget is spent.

    Raises:
        ConfigError: If the path is a file, or a directory holding other entries.
    """
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ConfigError(f"{option} {str(p)!r} is a file; give a new directory")
    check_writable(p, option=option)
    if p.is_dir():
        entries = sorted(e.name for e in p.iterdir())
        mine = [e for e in entries if e in set(own)]
        other = [e for e in entries if e not in set(own)]
        if other or (mine and not force):
            shown = ", ".join((other or mine)[:3]) + (" ..." if len(other or mine) > 3 else "")
            how = " or add --force to replace its own files" if own and not other else ""
            raise ConfigError(
                f"{option} {str(p)!r} is not empty ({shown}); its files are never mixed with "
                f"or overwritten silently: choose a new directory{how}"
            )
    return p


def _missing(path: Path) -> list[Path]:
    """``path`` and its ancestors that do not exist yet, deepest first."""
    out = []
    p = Path(path).absolute()
    while not p.exists() and p != p.parent:
        out.append(p)
        p = p.parent
    return out


@contextmanager
def removed_if_refused(*paths: str | Path) -> Iterator[None]:
    """Remove the directories the block made for ``paths`` if it raises while they are empty.

    ``paths`` and their missing parents, deepest first. Only empty directories go
    (``rmdir``): whatever the command wrote (a charged ledger, a partial result) stays.
    A path that existed before the block is never touched.
    """
    new = [d for p in paths for d in _missing(Path(p))]
    try:
        yield
    except BaseException:
        for d in sorted(set(new), key=lambda d: len(d.parts), reverse=True):
            try:
                d.rmdir()
            except OSError:  # not empty, not a directory, or never made
                pass
        raise

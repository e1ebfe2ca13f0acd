"""Command-line interface: a thin layer, one library call per subcommand.

Subcommands live next to the code they drive; each module listed in
``_COMMAND_MODULES`` exposes ``register(subparsers)`` which adds its parsers and sets
``func`` (a callable taking the parsed namespace and returning an exit code).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import os
import signal
import sys
from collections.abc import Sequence

from synthflow.cli.conventions import EXIT_PAUSED, EXIT_SPENT, EXIT_USAGE, HelpFormatter
from synthflow.errors import (
    BudgetExceededError,
    ConfigError,
    DataError,
    InfeasibleConfigurationError,
    NotEnoughRowsError,
    SelectionPaused,
    SpentError,
    StoreError,
    SweepWorkerError,
)

__all__ = ["build_parser", "entry", "main"]

_COMMAND_MODULES = (
    "synthflow.cli.commands",
    "synthflow.cli.init",
    "synthflow.cli.evaluate",
    "synthflow.cli.public",
    "synthflow.cli.tables",
    "synthflow.cli.sweep",
    "synthflow.cli.release",
    "synthflow.cli.audit",
    "synthflow.cli.plan",
    "synthflow.cli.ledger",
)


def build_parser() -> argparse.ArgumentParser:
    """The ``synthflow`` argument parser with every available subcommand."""
    from synthflow import __version__

    parser = argparse.ArgumentParser(
        prog="synthflow",
        description="Differentially private synthetic microdata: spec -> flow -> release.",
        epilog="Exit codes: 0 success; 1 a negative result (criteria or audit failed, empty "
        "shortlist, no release); 2 usage or input error (nothing spent); 3 paused, resumable; "
        "4 an error or interrupt after budget was charged (the message says what was spent, "
        "what is left and the ledger's path). "
        "'synthflow COMMAND --help' describes each command.",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"synthflow {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log details")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars or lines")
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE",
        help="import a module or .py file that registers its own generators or criterion "
        "kinds (repeatable; installed 'synthflow.plugins' entry points load too)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):  # optional command module absent
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:  # noqa: PLR0911  (one per outcome)
    """Console-script entry point (``synthflow``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_USAGE
    before = _charged()
    ledgers = _charged_by_ledger()  # each ledger's spend before this command
    try:
        from synthflow.plugins import load_plugins

        load_plugins(getattr(args, "plugin", []))
        return int(args.func(args) or 0)
    except SelectionPaused as exc:
        print(f"synthflow {args.command}: paused: {exc}", file=sys.stderr)
        return EXIT_PAUSED
    except SpentError as exc:
        print(f"synthflow {args.command}: error after spending: {exc}", file=sys.stderr)
        for line in _spend_lines(ledgers):
            print(f"synthflow {args.command}: {line}", file=sys.stderr)
        return EXIT_SPENT
    except (
        ConfigError,
        DataError,
        BudgetExceededError,
        InfeasibleConfigurationError,
        NotEnoughRowsError,
        SweepWorkerError,
        StoreError,
        FileNotFoundError,
    ) as exc:
        if _charged() > before:
            return _spent(args.command, str(exc), before, ledgers)
        print(f"synthflow {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        if _charged() > before:
            return _spent(args.command, "interrupted", before, ledgers)
        print(
            f"synthflow {args.command}: interrupted; what was finished is kept (re-run the "
            "same command to resume a sweep or a selection)",
            file=sys.stderr,
        )
        return 130
    except BrokenPipeError:
        # The reader went away (``synthflow space | head``): not an error of ours. Point
        # stdout at devnull so that the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:
        # Disk full, a path under a file, an unwritable directory: the operating system's
        # reason and the file, never a traceback. Nothing spent is lost: ledgers and
        # selections are written before anything they cover is released.
        where = f" ({exc.filename})" if exc.filename else ""
        if _charged() > before:
            return _spent(args.command, f"{exc.strerror or exc}{where}", before, ledgers)
        print(
            f"synthflow {args.command}: error: {exc.strerror or exc}{where}; "
            f"{_os_advice(exc)}, then re-run the same command",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except Exception as exc:
        # Anything else is a fault of ours; after a charge it is still an exit 4 that says
        # what was spent (the type only: a message could hold values), never a bare
        # traceback that reads as "nothing happened".
        if _charged() > before:
            return _spent(
                args.command, f"an internal error ({type(exc).__name__})", before, ledgers
            )
        raise


def _charged() -> float:
    """Epsilon this process has charged to dataset ledgers (0 before the ledger loads)."""
    ledger = sys.modules.get("synthflow.privacy.ledger")  # not imported: nothing was charged
    return 0.0 if ledger is None else float(ledger.charged_to_datasets())


def _charged_by_ledger() -> dict[str, tuple[float, float]]:
    """Per dataset ledger, what this process has charged (empty before the ledger loads)."""
    ledger = sys.modules.get("synthflow.privacy.ledger")
    return {} if ledger is None else dict(ledger.charged_by_ledger())


def _spend_lines(before: dict[str, tuple[float, float]]) -> list[str]:
    ledger = sys.modules.get("synthflow.privacy.ledger")
    return [] if ledger is None else list(ledger.spend_lines(before))


def _spent(command: str, error: str, before: float, ledgers: dict[str, tuple[float, float]]) -> int:
    """An error after this command charged the dataset ledger: exit 4, never "nothing spent"."""
    print(
        f"synthflow {command}: error after spending: {error}. This command had already "
        f"charged epsilon {_charged() - before:g} to the dataset ledger, which stays charged; "
        "fix the cause, then re-run (a release continues its selection without a new charge; "
        "an attempt that was cut short counts as a failed attempt)",
        file=sys.stderr,
    )
    for line in _spend_lines(ledgers):
        print(f"synthflow {command}: {line}", file=sys.stderr)
    return EXIT_SPENT


def entry() -> None:
    """The ``synthflow`` executable and ``python -m synthflow``: :func:`main`, then exit.

    When the command has returned, everything it opened is closed (stores, ledgers and
    files by their context managers). Freezing the heap then spares the interpreter's
    final garbage collection, which walks every object pandas, numpy and scipy created
    at import: 0.1 s of each command's exit (``benchmarks/cli.py``). Finalizers that
    matter at exit (multiprocessing's, ``weakref.finalize``, ``atexit``) still run.
    """
    _start_sweep_workers_early(sys.argv[1:])
    # SIGTERM (a scheduler, 'kill') is handled as Ctrl-C: the command's own clean-up runs
    # and, after a charge, it exits 4 saying what was spent.
    signal.signal(signal.SIGTERM, _interrupt)
    code = main()
    gc.freeze()
    sys.exit(code)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _start_sweep_workers_early(argv: list[str]) -> None:
    """For ``synthflow sweep`` on local workers: start the fork server first thing.

    Its imports of the flow (about 0.7 s) are what a sweep's first run waits for;
    started here they do not also wait for the parser of every command to be built
    (about 0.1 s). A usage error then leaves it idle; it exits with this process.
    """
    if _is_local_sweep(argv):
        from synthflow.sweep.workers.forkserver import start_fork_server

        start_fork_server()


def _is_local_sweep(argv: Sequence[str]) -> bool:
    """``argv`` runs ``sweep`` on local workers (not ``--help``, not ``--address``)."""
    command = next((a for a in argv if not a.startswith("-")), None)
    other = any(a.split("=")[0] in ("-h", "--help", "--address") for a in argv)
    return command == "sweep" and not other


if __name__ == "__main__":
    entry()


def _os_advice(exc: OSError) -> str:
    """What to do about an operating-system error, by its cause (not always free space)."""
    import errno

    by_kind = (
        (IsADirectoryError, "that path is a directory where a file is expected: give a file path"),
        (NotADirectoryError, "a part of that path is a file, not a directory: choose another path"),
        (
            FileExistsError,
            "something is already there (a file where a directory is needed, or a file "
            "that is never overwritten): choose another path",
        ),
        (
            PermissionError,
            "it is not permitted: choose a path you may write, or fix its permissions",
        ),
        (FileNotFoundError, "it does not exist: check the path"),
    )
    for kind, advice in by_kind:
        if isinstance(exc, kind):
            return advice
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return "free space (or raise the file-size limit) or choose another path"
    return "choose another path"

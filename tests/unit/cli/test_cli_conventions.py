"""Every subcommand follows the one CLI convention (synthflow/cli/conventions.py, README)."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys

import pytest

from synthflow import __version__
from synthflow.cli import build_parser, main
from synthflow.cli.conventions import EXIT_NEGATIVE, EXIT_OK, EXIT_PAUSED, EXIT_USAGE, HelpFormatter


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append(((*path, name), sub))
                out.extend(_commands(sub, (*path, name)))
    return out


COMMANDS = _commands(build_parser())
LEAVES = [
    (path, p)
    for path, p in COMMANDS
    if not any(isinstance(a, argparse._SubParsersAction) for a in p._actions)
]


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {s: a for a in parser._actions for s in a.option_strings}


def test_every_command_is_found():
    names = {" ".join(path) for path, _ in COMMANDS}
    expected = {"space", "run", "demo", "evaluate", "sweep", "shortlist", "sweep-report"}
    expected |= {"release", "audit", "plan", "tables protect", "tables compare"}
    expected |= {"public-data calibrate", "public-data simulate"}
    assert expected <= names, expected - names


@pytest.mark.parametrize("path, parser", LEAVES, ids=[" ".join(p) for p, _ in LEAVES])
def test_command_follows_the_convention(path, parser):
    opts = _options(parser)
    # -v/--verbose and -q/--quiet everywhere, after the subcommand too.
    assert {"-v", "--verbose", "-q", "--quiet"} <= set(opts)
    assert parser.formatter_class is HelpFormatter
    # The spec is positional, never an option.
    assert "--spec" not in opts
    positionals = [a.dest for a in parser._actions if not a.option_strings]
    if "spec" in positionals:
        assert positionals[0] == "spec" or path == ("audit",)  # audit: RELEASE_DIR [SPEC]
    # One meaning per shared option.
    if "--public" in opts:
        assert opts["--public"].nargs == 0, "--public is a switch"
    for name in ("--json", "--data", "--out", "--store"):
        if name in opts:
            assert opts[name].nargs != 0, f"{name} takes a value"
    if "--sample" in opts:
        assert opts["--sample"].type is int, "--sample is a count"
    if "--seed" in opts:
        assert opts["--seed"].type is int
    # Help describes the tool, not the births release's figures.
    text = parser.format_help()
    for figure in ("9.98", "9.55", "21,590"):
        assert figure not in text


@pytest.mark.parametrize("flags", [("-q", "run"), ("run", "-q"), ("-v", "run"), ("run", "-v")])
def test_quiet_and_verbose_before_or_after_the_subcommand(flags):
    # A subcommand's own default must not undo a switch given before it (README).
    rest = ["births", "--data", "d.csv", "--config", "c", "--out", "o"]
    args = build_parser().parse_args([*flags, *rest])
    assert (args.quiet, args.verbose) == ("-q" in flags, "-v" in flags)


def test_defaults_are_shown_in_help():
    text = build_parser()._subparsers._group_actions[0].choices["shortlist"].format_help()
    assert "(default: 0.1)" in text and "(default: dp)" in text
    assert "(default: None)" not in text and "(default: False)" not in text


def test_verbose_after_the_subcommand_and_version(capsys):
    parser = build_parser()
    assert parser.parse_args(["space", "births-2024", "-v"]).verbose is True
    assert parser.parse_args(["-v", "space", "births-2024"]).verbose is True
    assert getattr(parser.parse_args(["space", "births-2024"]), "verbose", False) is False
    with pytest.raises(SystemExit) as exc:
        parser.parse_args(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"synthflow {__version__}"


def test_exit_codes(tmp_path, capsys):
    assert (EXIT_OK, EXIT_NEGATIVE, EXIT_USAGE, EXIT_PAUSED) == (0, 1, 2, 3)
    # usage: argparse's own errors, and input errors raised by the commands
    with pytest.raises(SystemExit) as exc:
        main(["space"])
    assert exc.value.code == EXIT_USAGE
    assert main(["space", "births-2024", "--model", "foo"]) == EXIT_USAGE
    assert "--model foo: not in the spec's space" in capsys.readouterr().err
    assert main(["space", str(tmp_path / "missing.yaml")]) == EXIT_USAGE
    assert main([]) == EXIT_USAGE


def test_space_json_path_is_never_overwritten(tmp_path):
    out = tmp_path / "space.json"
    assert main(["space", "births-2024", "--json", str(out)]) == EXIT_OK
    assert out.read_text().startswith("[")
    assert main(["space", "births-2024", "--json", str(out)]) == EXIT_USAGE


def test_bundled_spec_by_name_outside_a_checkout(tmp_path):
    # The spec is found by name where no configs/ directory exists.
    proc = subprocess.run(
        [sys.executable, "-m", "synthflow", "space", "example_small", "--json", "-"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert re.search(r'"model": "privbayes"', proc.stdout)


HEAVY = ("pandas", "scipy", "sklearn", "networkx", "matplotlib", "dask", "distributed",
         "torch", "snsynth", "diffprivlib", "mbi", "jinja2", "pyarrow")  # fmt: skip


def _imported_by(code: str) -> list[str]:
    """The heavy libraries a fresh interpreter holds after ``code`` (a real process)."""
    probe = f"{code}\nimport sys\nprint(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return eval(out.strip().splitlines()[-1])  # a printed list of names


def test_cli_starts_without_the_library():
    # Building the parser (every command's --help) imports no scientific library...
    assert _imported_by("from synthflow.cli import build_parser; build_parser()") == []
    # ...and 'space' only what it uses (numpy, yaml): a command pays for its own work.
    used = _imported_by(
        "import contextlib, io\nfrom synthflow.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['space', 'births-2024', '--json', '-']) == 0"
    )
    assert used == []
    # The probe can fail: a command that loads data does import pandas.
    assert "pandas" in _imported_by("import synthflow.data")


def test_each_table_method_reads_only_the_flags_it_declares():
    """[shape] Table methods own their CLI options: one registry, every flag declared.

    Each method's settings, computed from only the flags it declares (plus the command's
    own), equal those from the whole parsed command line; a method reading a flag it did
    not declare would get None for it and differ here.
    """
    from synthflow.cli import build_parser
    from synthflow.loader import load_spec
    from synthflow.tables.methods import FLAGS, METHODS

    spec = load_spec("births")
    parser = build_parser()
    common = {"spec", "tables", "neighbouring", "method", "out", "ledger", "data", "public"}
    for name, method in METHODS.items():
        assert set(method.flags) <= set(FLAGS), name
        argv = ["tables", "protect", "births", "--tables", "t.yaml", "--data", "d.csv",
                "--method", name, "--out", "o", "--epsilon", "1", "--threshold", "7",
                "--base", "3", "--split", "0.5,0.5"]  # fmt: skip
        everything = vars(parser.parse_args(argv))
        declared = {k: v for k, v in everything.items() if k in common or k in method.flags}
        if "epsilon" not in method.flags:
            everything = dict(everything, epsilon=None)  # a flag it ignores
        assert method.settings(declared, spec) == method.settings(everything, spec), name
        assert method.build(**method.settings(declared, spec)).is_dp == method.is_dp, name
    # Every flag is added once, in a group naming the methods that read it.
    text = parser._subparsers._group_actions[0].choices["tables"]  # type: ignore[union-attr]
    protect_help = text._subparsers._group_actions[0].choices["protect"].format_help()
    assert protect_help.count("--rate-small") == 2  # usage line and its group
    assert "read by ten-five, round" in protect_help  # --base


def test_only_a_local_sweep_starts_its_workers_before_parsing() -> None:
    from synthflow.cli import _is_local_sweep

    assert _is_local_sweep(["sweep", "spec.yaml", "--data", "d.csv", "--workers", "2"])
    assert _is_local_sweep(["-q", "sweep", "spec.yaml"])
    assert not _is_local_sweep(["sweep", "spec.yaml", "--address", "tcp://h:8786"])
    assert not _is_local_sweep(["sweep", "spec.yaml", "--address=tcp://h:8786"])
    assert not _is_local_sweep(["sweep", "--help"])
    assert not _is_local_sweep(["shortlist", "--store", "sweep"])
    assert not _is_local_sweep([])


def test_a_store_of_another_spec_is_an_error_line_not_a_traceback(tmp_path, capsys):
    """ship-plan --store with another spec's sweep: exit 2, one line, the store untouched."""
    from synthflow.resources import public_data_file

    other = tmp_path / "pure.sweep.db"
    other.write_bytes(public_data_file("births-pure.sweep.db").read_bytes())
    before = other.read_bytes()
    code = main(["ship-plan", "births", "--store", str(other), "--out", str(tmp_path / "o"), "-q"])
    err = capsys.readouterr().err
    assert code == EXIT_USAGE
    assert "holds runs of another spec" in err and "Traceback" not in err
    assert other.read_bytes() == before

"""``synthflow release``.

A thin layer over the release job (:mod:`synthflow.release.job`), imported when the
command runs so that the CLI starts fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from synthflow.cli.conventions import (
    EXIT_NEGATIVE,
    EXIT_OK,
    add_command,
    check_json,
    print_result,
    write_json,
)

__all__ = ["register"]


def _release(args: argparse.Namespace) -> int:
    from synthflow.errors import SelectionEnded
    from synthflow.release.receipt import next_steps, released_receipt
    from synthflow.release.spend import selection_spend_line

    inputs = (args.spec, args.data, *([args.candidates] if args.candidates else []))
    check_json(args.json, force=args.force, protected=inputs)
    try:
        out = _run(args)
    except SelectionEnded as exc:
        print(f"synthflow release: {exc}", file=sys.stderr)
        print(f"synthflow release: {selection_spend_line(Path(args.private_dir), args.ledger)}",
              file=sys.stderr)  # fmt: skip
        return EXIT_NEGATIVE
    if out is None:
        print("private selection stopped without a release", file=sys.stderr)
        print(f"synthflow release: {selection_spend_line(Path(args.private_dir), args.ledger)}",
              file=sys.stderr)  # fmt: skip
        print(f"synthflow release: {next_steps(Path(args.private_dir), args.ledger)}",
              file=sys.stderr)  # fmt: skip
        if args.json:
            write_json(args.json, {"released": False})
        return EXIT_NEGATIVE
    receipt = released_receipt(Path(out).resolve(), Path(args.private_dir).resolve(),
                               args.ledger, args.spec)  # fmt: skip
    print(f"synthflow release: {receipt}", file=sys.stderr)
    if args.json:
        write_json(args.json, {"released": True, "release_dir": str(Path(out).resolve())})
    print_result(str(Path(out).resolve()), args.json)
    return EXIT_OK


def _public_rows(args: argparse.Namespace) -> int | None:
    """The data's row count when the spec makes it public (replace-one neighbours), else None.

    It picks, of the plans shipped for a bundled spec, the one made nearest this size
    (``births@120000`` for a registry of 118,000 births). Under add/remove neighbours n is
    private, and the spec's own plan is used.
    """
    from synthflow.data import load_data
    from synthflow.errors import ConfigError, DataError
    from synthflow.loader import load_spec
    from synthflow.privacy.ledger import file_sha256
    from synthflow.release.shipped import shipped_sizes
    from synthflow.resources import bundled_spec_of, resolve_spec_path

    path = resolve_spec_path(args.spec)
    if not path.is_file() or args.data is None:
        return None
    name = bundled_spec_of(file_sha256(path))
    if name is None or len(shipped_sizes(name)) < 2:  # one plan: nothing to choose
        return None
    spec = load_spec(path)
    if spec.privacy.neighbouring != "replace_one":
        return None
    try:
        return len(load_data(args.data, spec, public=args.public).frame)
    except (ConfigError, DataError, OSError):
        return None  # the release's own checks say what is wrong with the file


def _shipped(args: argparse.Namespace) -> None:
    """No --candidates and no --plan: the plan shipped for a bundled spec, or the fix."""
    from synthflow.errors import ConfigError
    from synthflow.release.shipped import shipped_plan_of

    if args.candidates is not None:
        return
    if args.plan is not None:
        raise ConfigError(
            "--plan needs --candidates: the candidates.yaml written beside that plan.json"
        )
    shipped = shipped_plan_of(args.spec, rows=_public_rows(args))
    if shipped is None:
        raise ConfigError(
            f"no --candidates, and {args.spec!r} is not a bundled spec with a shipped plan "
            "(births, births-pure): give --candidates (a shortlist from 'synthflow "
            "shortlist', or candidates.yaml from 'synthflow plan' with its --plan)"
        )
    print(f"synthflow release: using {shipped.describe()}", file=sys.stderr)
    args.spec, args.candidates, args.plan = (
        str(shipped.spec),
        str(shipped.candidates),
        str(shipped.plan),
    )


def _run(args: argparse.Namespace) -> Path | None:
    from synthflow.release.job import run_release

    _shipped(args)
    return run_release(
        args.spec,
        args.data,
        Path(args.candidates),
        Path(args.out),
        Path(args.private_dir),
        stop_probability=args.stop_probability,
        fit_once=True if args.fit_once else None,
        seed=args.seed,
        public=args.public,
        show_progress=not args.quiet,
        max_attempts=args.max_attempts,
        show_attempts=args.show_attempts,
        ledger_path=args.ledger,
        plan_path=args.plan,
        force=args.force,
        sign=args.sign,
        datasheet=args.datasheet,
    )


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``release``."""
    # Long: the command's options, one argparse call each.
    p = add_command(
        sub,
        "release",
        help="private selection and the release package",
        options=("data", "public", "seed", "force", "json"),
    )
    p.add_argument("spec", help="release spec file, or the name of a bundled spec (births)")
    p.add_argument(
        "--candidates",
        metavar="PATH",
        help="shortlist from 'synthflow shortlist', or candidates.yaml from 'synthflow plan' "
        "(default for a bundled spec: its shipped plan, 'synthflow space NAME' says which)",
    )
    p.add_argument("--out", required=True, metavar="RELEASE_DIR", help="only the publishable files")
    p.add_argument(
        "--private-dir",
        required=True,
        metavar="ENCLAVE_DIR",
        help="ledger and transcript (never leave the enclave)",
    )
    p.add_argument(
        "--stop-probability",
        type=float,
        metavar="G",
        help="gamma in [0, 1]: chance to stop empty-handed after a failed attempt (default: "
        "the plan's, else 0). Pure-DP shortlists cost 2 x one attempt for any gamma < 1 "
        "(Liu-Talwar); gamma 1 is a single attempt, which costs 1 x (basic composition) "
        "but releases only if that attempt passes; a shortlist with (epsilon, delta) "
        "candidates (dpctgan, mst, aim) and gamma < 1 is accounted by Papernot-Steinke and "
        "needs gamma > 0: a larger gamma costs less epsilon but gives fewer attempts "
        "(mean 1/gamma)",
    )
    p.add_argument(
        "--plan",
        metavar="PLAN_JSON",
        help="plan.json of 'synthflow plan' that wrote SPEC: its fit mode and stop probability "
        "are used and its hash is published",
    )
    p.add_argument(
        "--fit-once",
        action="store_true",
        help="compute the DP regression fit once before the loop instead of once per "
        "attempt (a smaller total epsilon; SPEC sec. 8)",
    )
    p.add_argument(
        "--max-attempts",
        type=int,
        metavar="N",
        help="pause (exit code 3) after N attempts in all; re-run with a larger N to continue",
    )
    p.add_argument(
        "--ledger",
        metavar="FILE",
        help="the data's persistent privacy ledger, shared with run/evaluate/tables "
        "(required unless --public)",
    )
    p.add_argument(
        "--show-attempts",
        action="store_true",
        help="show the number of attempts (private: inside the enclave only)",
    )
    p.add_argument(
        "--sign",
        metavar="PRIVATE_KEY",
        help="sign the package with this Ed25519 key ('synthflow keygen'): its public key is "
        "published beside the release and in the datasheet; reviewers check it with 'audit "
        "--key'",
    )
    p.add_argument(
        "--datasheet",
        metavar="FILE",
        help="the release's provenance (title, publisher, source, population, period, "
        "licence, ...; the spec's datasheet keys in YAML, docs/datasheet-template.yaml), "
        "replacing the spec's; without it a bundled spec's provenance is published under a "
        "warning that it was not confirmed for these data",
    )
    p.epilog = (
        "--force also releases although the pre-flight finds a criterion that two public "
        "samples of the data's size already fail without noise, a noise-dominated criterion "
        "(a perfect candidate would pass it in fewer than 2 releases in 3; the epsilon it "
        "would need is named) or no candidate that passed on public data."
    )
    p.set_defaults(func=_release)

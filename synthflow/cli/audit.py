"""``synthflow audit``, ``synthflow keygen`` and ``synthflow datasheet``.

The reviewer's check of a published release (:mod:`synthflow.release.audit`), the
publisher's signing key pair (:mod:`synthflow.release.signing`) and the publisher's
re-render of a package with confirmed provenance (:mod:`synthflow.release.reprovenance`),
imported when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from synthflow.cli.conventions import EXIT_NEGATIVE, EXIT_OK, add_command, check_json, write_json

__all__ = ["register"]


def _audit(args: argparse.Namespace) -> int:
    from synthflow.release.audit import NOT_CHECKED, audit_release

    check_json(args.json, protected=(args.release_dir,))
    root = Path(args.release_dir).resolve()
    if args.json and args.json != "-" and root in Path(args.json).resolve().parents:
        from synthflow.errors import ConfigError

        raise ConfigError(
            f"--json {args.json!r} is inside the package it audits: a file added to a "
            "release fails every later audit (its file set); write the report elsewhere"
        )
    from synthflow.release.reprovenance import first_to_do

    report = audit_release(args.release_dir, spec_path=args.spec, key_path=args.key)
    first = first_to_do(report, args.release_dir)
    if first and not args.json:
        print(first)
    if args.json:
        write_json(
            args.json,
            {
                "passed": report.ok,
                "complete": report.complete,
                "audited_against": report.audited_against,
                "checks": [
                    {"check": name, "passed": ok, "detail": detail}
                    for name, ok, detail in report.checks
                ],
                "not_checkable": [{"check": name, "why": why} for name, why in report.unchecked],
                "warnings": report.warnings,
                "not_checked": list(NOT_CHECKED),
                "disclosure_risk": report.risk.to_json() if report.risk else None,
            },
        )
    if report.audited_against:
        print(
            f"audited against {report.audited_against}: the package's spec.yaml is that file "
            "(by SHA-256), which 'synthflow release' uses with the shipped plan: the spec "
            "given, with the criteria's epsilons its plan chose"
        )
    for name, ok, detail in report.checks:
        line = f"{'PASS' if ok else 'FAIL'}  {name}"
        print(line + (f"  ({detail})" if detail and not ok else ""))
    _print_unchecked(report.unchecked, args.release_dir)
    if report.risk is not None:
        r = report.risk
        print(f"disclosure risk of the released file (key variables {', '.join(r.key_variables)}):")
        print(f"  sample uniques {r.sample_uniques}; k-anonymity level {r.k_anonymity}", end="")
        if r.sensitive:
            print(f"; l-diversity of {r.sensitive} {r.l_diversity}", end="")
        print(f"; records with special uniques (<= {r.max_msu_size} keys) {r.records_with_msu}")
        if r.sensitive and r.l_diversity == 1:
            print(
                f"  (l-diversity 1: some records sharing all key variables share one "
                f"{r.sensitive}; in a real file their key variables would reveal it, here "
                "only a value of the synthetic file)"
            )
    for warning in report.warnings:
        print(f"WARN  {warning}")
    print("not checked (cannot be, from the published files):")
    for item in NOT_CHECKED:
        print(f"  - {item}")
    if report.failures:
        more = f"; {len(report.unchecked)} more not run" if report.unchecked else ""
        print(f"audit FAILED: {len(report.failures)} check(s){more}")
    elif report.unchecked:
        print(
            f"audit INCOMPLETE: the {len(report.checks)} checks that could be run passed; "
            f"{len(report.unchecked)} could not be run (listed above as NOT CHECKED)"
        )
    else:
        print("audit passed")
    return EXIT_OK if report.ok else EXIT_NEGATIVE


def _datasheet(args: argparse.Namespace) -> int:
    from synthflow.release.reprovenance import replace_provenance

    out, report = replace_provenance(args.release_dir, args.datasheet, args.out, sign=args.sign)
    print(
        f"nothing charged: {out} is {args.release_dir} with the provenance of "
        f"{args.datasheet} (README.md re-rendered from the package's own files; no data, "
        "enclave or ledger read)"
    )
    verdict = "passed" if report.ok else "incomplete (run 'synthflow audit' with the spec)"
    print(f"audit of the new package: {verdict}; publish {out}, not {args.release_dir}")
    for warning in report.warnings:
        print(f"WARN  {warning}")
    return EXIT_OK


def _print_unchecked(unchecked: list[tuple[str, str]], release_dir: str) -> None:
    """The checks that could not be run, grouped by why, and how to run them."""
    reasons: dict[str, list[str]] = {}
    for name, why in unchecked:
        reasons.setdefault(why, []).append(name)
    for why, names in reasons.items():
        for name in names:
            print(f"NOT CHECKED  {name}")
        print(f"  ({len(names)} check(s) above: {why})")
    if unchecked:
        print(
            "  to run them, put the public sample beside a copy of the package's spec.yaml "
            f"and give that copy: synthflow audit {release_dir} DIR/spec.yaml"
        )


def _keygen(args: argparse.Namespace) -> int:
    from synthflow.release.signing import generate_keypair

    private, public = Path(f"{args.out}.key"), Path(f"{args.out}.pub")
    fp = generate_keypair(private, public)
    print(
        f"private key {private} (keep it in the enclave; 'release --sign {private}'), public "
        f"key {public} (publish it; fingerprint {fp})",
        file=sys.stderr,
    )
    print(public.resolve())
    return EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``audit``, ``keygen`` and ``datasheet``."""
    p = add_command(
        sub, "audit", help="check a published release from its files", options=("json",)
    )
    p.add_argument("release_dir", metavar="RELEASE_DIR", help="the published release directory")
    p.add_argument(
        "spec",
        nargs="?",
        help="the reviewer's own copy of the spec (default: the release's spec.yaml)",
    )
    p.add_argument(
        "--key",
        metavar="PUBLIC_KEY",
        help="the publisher's Ed25519 public key (PEM), obtained from the publisher: the "
        "package must carry its valid signature",
    )
    p.set_defaults(func=_audit)

    p = add_command(sub, "keygen", help="make an Ed25519 key pair to sign releases with")
    p.add_argument(
        "--out",
        required=True,
        metavar="PREFIX",
        help="writes PREFIX.key (private: keep it in the enclave) and PREFIX.pub (publish it)",
    )
    p.set_defaults(func=_keygen)

    p = add_command(
        sub,
        "datasheet",
        help="replace a release's provenance (a re-render: nothing charged)",
    )
    p.add_argument("release_dir", metavar="RELEASE_DIR", help="the release package to re-render")
    p.add_argument(
        "--datasheet",
        required=True,
        metavar="FILE",
        help="the confirmed provenance (the spec's datasheet keys in YAML; template "
        "docs/datasheet-template.yaml)",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="NEW_DIR",
        help="a new directory for the re-rendered package (never overwritten)",
    )
    p.add_argument(
        "--sign",
        metavar="PRIVATE_KEY",
        help="sign the new package (required when the original is signed: a new datasheet "
        "changes what its signature covers)",
    )
    p.epilog = (
        "The provenance is not a statistic of the data: acceptance.json records the new "
        "datasheet, README.md is regenerated from the package's files as the audit does, "
        "and the manifest is rewritten. No data file, enclave or ledger is read, and the "
        "new package must pass its audit before it is written."
    )
    p.set_defaults(func=_datasheet)

"""Replace a published package's provenance: a re-render, nothing charged (#61 item 7).

A release made with a bundled spec publishes that spec's provenance under a warning that
nobody confirmed it for these data. Releasing again with ``--datasheet`` would charge the
privacy budget a second time for the same data; the provenance is not a statistic of
the data, so it is replaced here from the published package alone: acceptance.json
records the new datasheet (and drops the warning), README.md is regenerated from the
package's own files exactly as the audit regenerates it, and the manifest (and the
signature, with ``sign``) is rewritten. No data file, enclave or ledger is read.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Any

from synthflow.config.datasheet import load_datasheet
from synthflow.errors import ConfigError, DataError
from synthflow.release import signing
from synthflow.release.audit import AuditReport, audit_release
from synthflow.release.publish import MANIFEST, sha256_file

__all__ = ["first_to_do", "replace_provenance", "replace_provenance_line"]


def replace_provenance_line(release_dir: str | Path) -> str:
    """What to do first when a package's provenance is a bundled spec's, unconfirmed."""
    return (
        "FIRST  confirm or replace the provenance before publishing: the datasheet's title, "
        "source and period are a bundled spec's, not confirmed for these data. "
        f"synthflow datasheet {release_dir} --datasheet FILE --out NEW_DIR re-renders the "
        "package with your provenance, nothing charged (template: "
        "docs/datasheet-template.yaml)"
    )


def first_to_do(report: AuditReport, release_dir: str | Path) -> str | None:
    """The audit's first line when the provenance is unconfirmed (else None)."""
    if any(w.startswith("provenance not confirmed") for w in report.warnings):
        return replace_provenance_line(release_dir)
    return None


def _rewrite_manifest(tmp: Path, key: Any) -> None:
    files = sorted(p.name for p in tmp.iterdir() if p.name not in {MANIFEST, signing.SIGNATURE})
    manifest = {"files": {f: sha256_file(tmp / f) for f in files}}
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    if key is not None:
        signature = signing.sign(key, (tmp / MANIFEST).read_bytes())
        (tmp / signing.SIGNATURE).write_text(signature + "\n", "ascii")


def replace_provenance(
    release_dir: str | Path,
    datasheet_path: str | Path,
    out_dir: str | Path,
    *,
    sign: str | Path | None = None,
) -> tuple[Path, AuditReport]:
    """Write ``release_dir`` with the provenance of ``datasheet_path`` into ``out_dir``.

    Returns:
        The new package's directory and its audit (run on it before it is renamed into
        place).

    Raises:
        ConfigError: ``out_dir`` exists (never overwritten), a bad datasheet file, a signed
            package without ``sign`` (its signature would no longer hold), a bad key.
        DataError: ``release_dir`` is not a release, or fails its own audit (a damaged or
            edited package is not re-rendered: get the publisher's original).
    """
    root, out = Path(release_dir), Path(out_dir)
    datasheet = load_datasheet(datasheet_path)  # checked before anything is written
    if out.exists():
        raise ConfigError(
            f"--out {str(out)!r} exists; it is never overwritten: give a new directory "
            "(the package in it stays as it is)"
        )
    before = audit_release(root)
    if before.failures:
        raise DataError(
            f"{str(root)!r} fails its own audit ({before.failures[0]}); a damaged or edited "
            "package is not re-rendered: start from the publisher's original package"
        )
    acc = json.loads((root / "acceptance.json").read_text("utf-8"))
    signed = (root / signing.SIGNATURE).exists() or "signed_by" in acc
    if signed and sign is None:
        raise ConfigError(
            f"{str(root)!r} is signed, and a new datasheet changes the files its signature "
            "covers: give --sign KEY (the publisher's Ed25519 key, 'synthflow keygen') to "
            "sign the new package"
        )
    key = signing.load_private_key(sign) if sign is not None else None
    tmp = out.with_name(f".{out.name}.partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    try:
        shutil.copytree(root, tmp)
        acc["datasheet"] = dataclasses.asdict(datasheet)
        acc.pop("provenance_warning", None)
        if key is not None:
            acc["signed_by"] = {
                "algorithm": signing.ALGORITHM,
                "public_key_sha256": signing.fingerprint(signing.public_pem(key)),
            }
            (tmp / signing.PUBLIC_KEY).write_bytes(signing.public_pem(key))
        (tmp / "acceptance.json").write_text(json.dumps(acc, indent=2) + "\n", "utf-8")
        _rewrite_manifest(tmp, key)
        readme = audit_release(tmp).datasheet  # the README the new files give
        if readme is None:
            raise DataError(
                f"the datasheet of {str(root)!r} cannot be regenerated from its files; "
                "nothing was written"
            )
        (tmp / "README.md").write_text(readme, "utf-8")
        _rewrite_manifest(tmp, key)
        after = audit_release(tmp)
        if after.failures:  # never publish a package that fails its audit
            raise DataError(
                f"the re-rendered package fails its audit ({after.failures[0]}); nothing "
                "was written"
            )
        os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return out, after

"""The release package: only what may be published.

``RELEASE_DIR`` holds the synthetic data (``synthetic.csv``, bin labels), a copy of the
spec (``spec.yaml``), ``acceptance.json`` (per criterion the DP value, threshold,
decision, epsilon, mechanism, sensitivity, noise sd and the public parameters the
sensitivity used; the budget and its composition), a datasheet ``README.md`` and
``MANIFEST.json`` with the SHA-256 of every file. Nothing about failed attempts, their
number included, is written here.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pandas as pd

from synthflow import __version__
from synthflow.acceptance import AcceptanceReport
from synthflow.acceptance.noise_check import noise_figures, public_sample, public_sample_source
from synthflow.config.model import DatasheetSpec, ReleaseSpec
from synthflow.criteria import code_matrix
from synthflow.privacy.ledger import file_sha256
from synthflow.release._datasheet import render_datasheet
from synthflow.release.cost import SelectionCost
from synthflow.space import Configuration
from synthflow.transform import Transformer

__all__ = ["MANIFEST", "public_parameters", "sha256_file", "write_release"]

MANIFEST = "MANIFEST.json"
DATA_FILE = "synthetic.csv"


def sha256_file(path: Path) -> str:
    """SHA-256 of a file's bytes (the ledger's hashing, one implementation)."""
    return file_sha256(path)


def public_parameters(
    spec: ReleaseSpec, transformer: Transformer, synthetic: pd.DataFrame, *, fit_once: bool
) -> dict[str, dict[str, Any]]:
    """Each criterion's sensitivity and the public parameters it uses.

    Computed from the spec and the (public) synthetic data only, so a reviewer can
    recompute it from the published files. n = |D_R| = |D_T| is public.
    """
    from synthflow.criteria import kind_of  # noqa: PLC0415

    codes = code_matrix(synthetic, transformer, what="synthetic")
    out: dict[str, dict[str, Any]] = {}
    for c in spec.criteria:
        out[c.name] = kind_of(c).published(c, spec, transformer, codes, fit_once=fit_once)
    return out


RELEASE_FILES = (DATA_FILE, "acceptance.json", "spec.yaml", "README.md", MANIFEST)
"""Exactly the files of a release package (the audit refuses any other)."""


def write_release(
    out_dir: Path,
    *,
    spec: ReleaseSpec,
    configuration: Configuration,
    transformer: Transformer,
    candidate: pd.DataFrame,
    report: AcceptanceReport,
    cost: SelectionCost,
    plan: dict[str, Any] | None = None,
    projection_rows: int | None = None,
    note: str | None = None,
    signing_key: Any = None,
    provenance_warning: str | None = None,
    datasheet: DatasheetSpec | None = None,
    dataset_spent: tuple[float, float] | None = None,
) -> Path:
    """Write the release package into a new directory ``out_dir`` (atomically).

    ``plan``: provenance of planned budgets (``plan_sha256``, ``planned_spec_sha256``,
    ``predicted_release_probability``, ``total_epsilon``), published in acceptance.json.
    ``projection_rows``: rows the min-count projection replaced (a statistic of the
    DP sample, published). ``note``: a prominent note in the datasheet.
    ``provenance_warning``: printed above the datasheet (provenance copied from a bundled
    spec). ``datasheet``: provenance from a ``--datasheet`` file, replacing the spec's
    (recorded in acceptance.json, so that the audit regenerates the datasheet).
    ``dataset_spent``: the data's ledger's (epsilon, delta) spent, this release included:
    published (acceptance.json and the datasheet) when above this release's own total.
    ``signing_key``: an Ed25519 private key (:mod:`synthflow.release.signing`): its
    public key is published beside the release and in the datasheet, and SIGNATURE
    signs MANIFEST.json.
    """
    # Long: the release package's files, written into one directory then renamed.
    from synthflow.release import signing  # noqa: PLC0415

    signed_by = None
    if signing_key is not None:
        signed_by = signing.fingerprint(signing.public_pem(signing_key))
    tmp = out_dir.with_name(f".{out_dir.name}.partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    transformer.write_labels_csv(candidate, tmp / DATA_FILE)
    shutil.copyfile(spec.path, tmp / "spec.yaml")
    data_sha256 = sha256_file(tmp / DATA_FILE)
    params = public_parameters(spec, transformer, candidate, fit_once=cost.fit_once)
    # The one noise rule's figures at the release's size (public sample and n only).
    figures = noise_figures(
        spec, transformer, len(candidate), public_sample(spec), fit_once=cost.fit_once
    )
    criteria = []
    for r in report.criteria:
        entry = r.to_json()
        entry["public_parameters"] = {k: v for k, v in params[r.name].items() if k != "sensitivity"}
        criteria.append(entry)
    acceptance = {
        "synthflow_version": __version__,
        "spec": {"name": spec.name, "sha256": spec.sha256, "file": "spec.yaml"},
        "configuration": configuration.to_json(),
        "rows": len(candidate),
        "data_sha256": data_sha256,
        "neighbouring": spec.privacy.neighbouring,
        "criteria": criteria,
        "passed": report.passed,
        "evaluation_epsilon_charged": report.epsilon_total,
        "budget": cost.to_json(),
        "noise_figures": [f.as_dict() for f in figures],
    }
    source = public_sample_source(spec)
    if source is not None:  # which file the noise figures came from
        acceptance["public_sample"] = source
    if projection_rows is not None:
        acceptance["projection_rows"] = projection_rows
    if plan is not None:
        acceptance["budget_plan"] = plan
    if note is not None:  # the datasheet's note, so that the audit can regenerate it
        acceptance["note"] = note
    if provenance_warning is not None:
        acceptance["provenance_warning"] = provenance_warning
    spent = None
    if dataset_spent is not None and dataset_spent[0] > cost.total * (1 + 1e-9) + 1e-12:
        spent = {"epsilon": float(dataset_spent[0]), "delta": float(dataset_spent[1])}
        acceptance["dataset_ledger_spent"] = spent  # earlier work on the same data
    if datasheet is not None:  # a --datasheet file replaces the spec's provenance
        acceptance["datasheet"] = dataclasses.asdict(datasheet)
        spec = dataclasses.replace(spec, datasheet=datasheet)
    if signed_by is not None:
        acceptance["signed_by"] = {"algorithm": signing.ALGORITHM, "public_key_sha256": signed_by}
        (tmp / signing.PUBLIC_KEY).write_bytes(signing.public_pem(signing_key))
    (tmp / "acceptance.json").write_text(json.dumps(acceptance, indent=2) + "\n", "utf-8")
    (tmp / "README.md").write_text(
        render_datasheet(
            spec=spec,
            configuration=configuration,
            transformer=transformer,
            candidate=candidate,
            report=report,
            cost=cost,
            plan=plan,
            projection_rows=projection_rows,
            note=note,
            signed_by=signed_by,
            provenance_warning=provenance_warning,
            noise=figures,
            dataset_spent=spent,
        ),
        "utf-8",
    )
    files = sorted(p.name for p in tmp.iterdir())
    allowed = set(RELEASE_FILES) - {MANIFEST} | ({signing.PUBLIC_KEY} if signed_by else set())
    if set(files) != allowed:  # never publish anything else
        raise RuntimeError(f"release package holds unexpected files {files}")
    manifest = {"files": {f: sha256_file(tmp / f) for f in files}}
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    if signing_key is not None:
        signature = signing.sign(signing_key, (tmp / MANIFEST).read_bytes())
        (tmp / signing.SIGNATURE).write_text(signature + "\n", "ascii")
    if out_dir.exists():
        out_dir.rmdir()  # only an empty directory may be replaced (checked by the caller)
    os.replace(tmp, out_dir)
    return out_dir

"""The release package: only what may be published.

``RELEASE_DIR`` holds the synthetic data (``synthetic.csv``, bin labels), a copy of the
spec (``spec.yaml``), ``acceptance.json`` (per criterion the DP value, threshold,
decision, epsilon, mechanism, sensitivity, noise sd and the public parameters the
sensitivity used; the budget and its composition), a datasheet ``README.md`` and
``MANIFEST.json`` with the SHA-256 of every file. Nothing about failed attempts, their
number included, is written here.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthflow import __version__
from synthflow.acceptance import (
    AcceptanceReport,
    condmean,
    faithfulness,
    marginals,
    ratio,
    regression,
)
from synthflow.acceptance._common import code_matrix
from synthflow.acceptance.exact import ratio_min_count
from synthflow.config import ReleaseSpec
from synthflow.ledger import file_sha256
from synthflow.release._datasheet import render_datasheet
from synthflow.release.selection import SelectionCost
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
    codes = code_matrix(synthetic, transformer, what="synthetic")
    n = len(codes)
    out: dict[str, dict[str, Any]] = {}
    for c in spec.criteria:
        p: dict[str, Any] = {"n": n}
        if c.kind == "marginals":
            p["sensitivity"] = marginals.marginal_sensitivity(n)
        elif c.kind == "faithfulness":
            p["sensitivity"] = faithfulness.faithfulness_sensitivity(n)
        elif c.kind == "one_way_ratio":
            assert c.clip is not None
            m = ratio_min_count(c, codes, transformer)
            p.update(m=m, clip=c.clip)
            p["sensitivity"] = ratio.one_way_ratio_sensitivity(m, clip=c.clip)
            if c.false_positive_rate is not None:
                p["pseudo_threshold"] = ratio.release_threshold(
                    threshold=c.threshold,
                    clip=c.clip,
                    epsilon=c.epsilon,
                    false_positive_rate=c.false_positive_rate,
                    assumed_min_count=c.assumed_min_count,
                    min_count=m,
                )
                p["false_positive_rate"] = c.false_positive_rate
                p["assumed_min_count"] = c.assumed_min_count
        elif c.kind == "conditional_mean":
            assert c.column is not None
            sizes: dict[str, list[int]] = {}
            for by in c.group_by:
                table, labels = condmean.group_index(transformer, by)
                g = (
                    np.zeros(n, dtype=np.int64)
                    if by is None
                    else table[codes[:, transformer.domain.names.index(by)]]
                )
                s = np.bincount(g, minlength=len(labels))
                m_v = condmean.resize_sizes(
                    s, n=n, margin_fraction=c.margin_fraction, margin_plus=c.margin_plus
                )
                sizes[by or "none"] = [int(x) for x in m_v[s > 0]]
            min_size = min(min(v) for v in sizes.values())
            bounds = spec.column(c.column).bounds
            assert bounds is not None
            p.update(
                resize_sizes=sizes,
                margin=math.ceil(c.margin_fraction * n) + c.margin_plus,
                bounds=list(bounds),
                sensitivity=condmean.cond_mean_sensitivity(bounds, min_size),
            )
        elif c.kind in ("regression_coefficients", "regression_tstr"):
            assert c.column is not None
            x, y, _, xb, yb = regression.design(codes, transformer, c.column, c.features)
            p["target_bounds"] = list(yb)
            if c.kind == "regression_tstr":
                p["sensitivity"] = regression.tstr_sensitivity(yb, n)
            else:
                std = (
                    regression.Standardization.from_bounds(xb, yb)
                    if fit_once
                    else regression.Standardization.from_data(x, y, xb, yb)
                )
                p["standardization"] = "public bounds" if fit_once else "synthetic data"
                p["sensitivity"] = float(
                    regression.functional_mechanism_sensitivity(*std.box(xb, yb)).sum()
                )
        out[c.name] = p
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
) -> Path:
    """Write the release package into a new directory ``out_dir`` (atomically).

    ``plan``: provenance of planned budgets (``plan_sha256``, ``planned_spec_sha256``,
    ``predicted_release_probability``, ``total_epsilon``), published in acceptance.json.
    ``projection_rows``: rows the min-count projection replaced (a statistic of the
    DP sample, published). ``note``: a prominent note in the datasheet.
    ``signing_key``: an Ed25519 private key (:mod:`synthflow.release.signing`): its
    public key is published beside the release and in the datasheet, and SIGNATURE
    signs MANIFEST.json.
    """
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
    }
    if projection_rows is not None:
        acceptance["projection_rows"] = projection_rows
    if plan is not None:
        acceptance["budget_plan"] = plan
    if note is not None:  # the datasheet's note, so that the audit can regenerate it
        acceptance["note"] = note
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

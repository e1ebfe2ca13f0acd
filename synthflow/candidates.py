"""The candidates file: the one format ``shortlist`` (and ``plan``) write and ``release`` reads.

A YAML mapping with the spec's SHA-256 (``spec_sha256``), provenance fields, and
``configurations``: a list of mappings each with at least the configuration ``id``
(the other fields, estimates and intervals, are for people). Owning the format here
keeps the release path free of the sweep machinery (worker processes, Dask, SQLite).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from synthflow._util.files import write_atomic
from synthflow.config.model import ReleaseSpec
from synthflow.errors import ConfigError
from synthflow.space import Configuration, find_configuration

__all__ = ["read_candidates", "read_pass_rates", "write_candidates"]


def write_candidates(
    path: Path, *, header: Mapping[str, Any], configurations: Sequence[Mapping[str, Any]]
) -> Path:
    """Write a candidates file atomically (temporary file, then rename).

    ``header`` must hold ``spec_sha256``; each configuration must hold ``id``.
    """
    if "spec_sha256" not in header:
        raise ValueError("a candidates file records the spec's sha256 (spec_sha256)")
    if any("id" not in c for c in configurations):
        raise ValueError("every candidate needs its configuration id")
    doc = {**header, "configurations": [dict(c) for c in configurations]}
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(path, yaml.safe_dump(doc, sort_keys=False))


def read_candidates(spec: ReleaseSpec, path: Path) -> list[Configuration]:
    """The candidates in ``path``, checked against ``spec``.

    Raises:
        ConfigError: If the file is missing, not YAML, malformed, empty, lists an id
            that is not in the spec's space, or was made for another spec.
    """
    if path.exists() and not path.is_file():
        what = "a directory" if path.is_dir() else "not a regular file (a pipe or a device)"
        raise ConfigError(
            f"candidates file {str(path)!r} is {what}; pass the candidates.yaml that "
            "'synthflow shortlist' or 'synthflow plan' wrote"
        )
    if not path.is_file():
        raise ConfigError(
            f"candidates file {str(path)!r} does not exist; run 'synthflow shortlist'"
        )
    try:
        doc = yaml.safe_load(path.read_text("utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError) as exc:
        raise ConfigError(
            f"{str(path)!r} is not a readable YAML file ({_why(exc)}); pass the "
            "candidates.yaml written by 'synthflow shortlist'"
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("configurations"), list):
        raise ConfigError(
            f"{str(path)!r} is not a candidates file (a mapping with a 'configurations' list); "
            "pass the file written by 'synthflow shortlist'"
        )
    if doc.get("spec_sha256") != spec.sha256:
        raise ConfigError(
            f"{str(path)!r} was screened with another spec (sha256 {doc.get('spec_sha256')!r}); "
            f"re-run the sweep and shortlist with {spec.path}"
        )
    eps = doc.get("generator_epsilon")
    if eps is not None and (isinstance(eps, bool) or not isinstance(eps, (int, float))):
        raise ConfigError(
            f"{str(path)!r}: generator_epsilon must be a number; pass the candidates.yaml "
            "written by 'synthflow plan' or 'synthflow shortlist' unedited"
        )
    if eps is not None and float(eps) != spec.privacy.generator_epsilon:
        raise ConfigError(
            f"{str(path)!r} lists configurations screened at generator epsilon {eps:g}, but the "
            f"spec spends {spec.privacy.generator_epsilon:g} per fit: their pass estimates do "
            "not hold; use 'synthflow plan', which writes a spec and candidates that agree"
        )
    entries = doc["configurations"]
    bad = [i for i, c in enumerate(entries) if not (isinstance(c, dict) and "id" in c)]
    if bad:
        raise ConfigError(
            f"{str(path)!r}: configuration entries {bad} have no 'id'; each entry needs the "
            "configuration id from 'synthflow space'"
        )
    if not entries:
        raise ConfigError(
            f"{str(path)!r} lists no configurations: the shortlist is empty; widen the sweep "
            "or lower --min-pass"
        )
    ids = [str(c["id"]) for c in entries]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        # Selection draws a candidate uniformly from the list: a repeated id would weigh
        # that configuration more than the shortlist says.
        raise ConfigError(
            f"{str(path)!r} lists {', '.join(repeated)} more than once; each configuration "
            "may appear once (selection draws uniformly from the list)"
        )
    return [find_configuration(spec, i) for i in ids]


def read_pass_rates(path: Path) -> list[float | None]:
    """Each candidate's estimated pass rate on public data (None where the file has none).

    Call after :func:`read_candidates` has checked the file.
    """
    doc = yaml.safe_load(path.read_text("utf-8"))
    out: list[float | None] = []
    for c in doc["configurations"]:
        rate = c.get("pass_rate")
        out.append(float(rate) if isinstance(rate, (int, float)) else None)
    return out


def _why(exc: BaseException) -> str:
    """Why a YAML file could not be read, in a few words."""
    return "nested too deeply" if isinstance(exc, RecursionError) else type(exc).__name__

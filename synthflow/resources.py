"""Files that ship inside the package: the bundled specs and the default public data.

The checkout's top-level ``configs/`` and ``public_data/`` are installed as the
packages ``synthflow._configs`` and ``synthflow._public_data`` (``pyproject.toml``), so
an installed wheel (an enclave installs a wheel, not a checkout) finds them exactly as
an editable install does, through :mod:`importlib.resources`.
"""

from __future__ import annotations

import dataclasses
import functools
from importlib import resources
from pathlib import Path
from typing import Any

from synthflow.errors import ConfigError

__all__ = [
    "bundled_provenance_of",
    "bundled_spec",
    "bundled_specs",
    "public_data_file",
    "resolve_spec_path",
]


def _directory(package: str) -> Path:
    # Installed wheels and editable installs both unpack to real files; a zipped install
    # (not something pip produces) is refused with a clear message.
    root = resources.files(package)
    path = Path(str(root))
    if not path.is_dir():
        raise ConfigError(
            f"the package data {package!r} is not a directory ({root!s}); install synthflow "
            "with pip (not as a zip file)"
        )
    return path


def bundled_specs() -> list[str]:
    """Names of the release specs shipped with synthflow (``births``, ...)."""
    return sorted(p.stem for p in _directory("synthflow._configs").glob("*.yaml"))


def bundled_spec_of(sha256: str) -> str | None:
    """The name of the bundled spec whose file has this SHA-256 (a copy counts), or None."""
    import hashlib  # noqa: PLC0415

    for name in bundled_specs():
        if hashlib.sha256(bundled_spec(name).read_bytes()).hexdigest() == sha256:
            return name
    return None


def bundled_provenance_of(spec: Any) -> str | None:
    """The bundled spec whose provenance ``spec`` publishes, or None.

    By content, not by name: the bundled file itself (or a copy), or any spec that
    states the same datasheet as a bundled one: a spec written by ``synthflow plan``
    from it (budgets changed), a copy with other thresholds. Such a release publishes
    the bundled spec's provenance for data nobody checked, so it carries the warning.
    """
    name = bundled_spec_of(spec.sha256)
    if name is not None:
        return name
    sheet = spec.datasheet
    if not any(dataclasses.asdict(sheet).values()):
        return None
    for name in bundled_specs():
        other = _bundled_datasheet(name)
        if other is not None and other == sheet:
            return name
    return None


@functools.cache
def _bundled_datasheet(name: str) -> Any:
    from synthflow.config.load import load_spec  # noqa: PLC0415

    try:
        return load_spec(bundled_spec(name)).datasheet
    except ConfigError:  # a bundled file that is not a release spec (tables_births)
        return None


def bundled_spec(name: str) -> Path:
    """The path of a bundled spec, by name with or without ``.yaml``.

    Raises:
        ConfigError: If no bundled spec has that name.
    """
    stem = name.removesuffix(".yaml").removesuffix(".yml")
    path = _directory("synthflow._configs") / f"{stem}.yaml"
    if not path.is_file():
        raise ConfigError(
            f"no bundled spec named {name!r}; the bundled specs are {bundled_specs()}"
        )
    return path


def resolve_spec_path(spec: str | Path) -> Path:
    """``spec`` as given when it exists; else a bundled spec of that name.

    ``configs/births.yaml`` therefore works from a checkout and, with no such file in
    the working directory, also from an installed wheel (it names the bundled
    ``births.yaml``). An existing file always wins.
    """
    path = Path(spec)
    if path.exists():
        return path
    if path.parent in (Path("."), Path("configs")) and path.suffix in ("", ".yaml", ".yml"):
        try:
            return bundled_spec(path.name)
        except ConfigError:
            pass
    return path


def public_data_file(name: str) -> Path:
    """A file of the default public data (``nvss_like_2019.csv.gz``, ...).

    Raises:
        ConfigError: If the installation lacks it.
    """
    path = _directory("synthflow._public_data") / name
    if not path.is_file():
        raise ConfigError(
            f"the default public data file {name!r} is missing from this installation "
            f"({path.parent}); reinstall synthflow"
        )
    return path

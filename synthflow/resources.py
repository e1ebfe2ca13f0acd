"""Files that ship inside the package: the bundled specs and the default public data.

The checkout's top-level ``configs/`` and ``public_data/`` are installed as the
packages ``synthflow._configs`` and ``synthflow._public_data`` (``pyproject.toml``), so
an installed wheel (an enclave installs a wheel, not a checkout) finds them exactly as
an editable install does, through :mod:`importlib.resources`.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from synthflow.errors import ConfigError

__all__ = [
    "bundled_public_data",
    "bundled_spec",
    "bundled_specs",
    "is_bundled_public_data",
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


def bundled_public_data() -> list[str]:
    """Names of the public data files shipped with synthflow."""
    return sorted(
        p.name
        for p in _directory("synthflow._public_data").iterdir()
        if p.is_file() and not p.name.startswith("_")
    )


def is_bundled_public_data(path: Path) -> bool:
    """Whether ``path`` is (resolves to) a file of synthflow's own public data."""
    root = _directory("synthflow._public_data").resolve()
    target = Path(path).resolve()
    return target.parent == root and target.is_file()


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

    ``name`` is a bare file name: a path (absolute, or with a folder) names no bundled
    file, even when it leads to one, so that a user's file never counts as one synthflow
    ships (a bundled file is public; a user's file must be checked).

    Raises:
        ConfigError: If the installation lacks it, or ``name`` is a path.
    """
    if not name or Path(name).name != name or name in (".", ".."):
        raise ConfigError(
            f"{name!r} is a path, not the name of a public data file synthflow ships; the "
            f"bundled files are {bundled_public_data()}"
        )
    path = _directory("synthflow._public_data") / name
    if not path.is_file():
        raise ConfigError(
            f"the default public data file {name!r} is missing from this installation "
            f"({path.parent}); reinstall synthflow"
        )
    return path

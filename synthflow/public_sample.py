"""The spec's ``public_sample``: public data like the private data, read once per process.

The noise figures, the release's pre-flight and the weighted regression fit
(``noise_weights: public_sample``) read it; it must never be the private file
(:func:`synthflow.acceptance.noise_check.check_public_sample_is_public`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from synthflow.data import load_data
from synthflow.errors import ConfigError
from synthflow.resources import public_data_file

if TYPE_CHECKING:
    import pandas as pd

    from synthflow.config.model import ReleaseSpec

__all__ = ["public_sample", "public_sample_path"]


def public_sample_path(spec: ReleaseSpec) -> Path | None:
    """Where the spec's ``public_sample`` is (None if it names none), without reading it.

    Raises:
        ConfigError: If the named file is neither beside the spec nor bundled.
    """
    if not spec.public_sample:
        return None
    beside = Path(spec.path).parent / spec.public_sample
    if beside.is_file():
        return beside
    try:
        return public_data_file(spec.public_sample)
    except ConfigError:
        raise ConfigError(
            f"the spec's public_sample {spec.public_sample!r} is neither beside the spec "
            f"({str(beside)!r}) nor a bundled public data file: put the file there or fix "
            "public_sample"
        ) from None


_SAMPLES: dict[tuple[str, int, int, int], pd.DataFrame] = {}
"""Cleaned public samples read so far, by file (path, size, mtime) and the spec's columns
and raw constraints (what reading and cleaning depend on)."""


def public_sample(spec: ReleaseSpec) -> pd.DataFrame | None:
    """The spec's ``public_sample``, cleaned (None if it names none; :func:`public_sample_path`).

    Read once per process and file (the noise figures, the pre-flight and the weighted
    regression fit all read it); the caller gets a copy.
    """
    path = public_sample_path(spec)
    if path is None:
        return None
    st = path.stat()
    cleaning = hash((spec.columns, spec.raw_constraints))
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns, cleaning)
    if key not in _SAMPLES:
        if len(_SAMPLES) >= 4:
            _SAMPLES.clear()
        _SAMPLES[key] = load_data(path, spec, public=True).frame
    return _SAMPLES[key].copy()

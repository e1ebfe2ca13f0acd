"""Embedded default public data: an NVSS-like simulator and an NVSS natality loader.

Map of the package:

* :mod:`synthflow.public.nvss`: :func:`calibrate` a :class:`Calibration` (1-way and
  2-way summaries only) from a real NVSS sample, save it as YAML, and :func:`simulate`
  any number of NVSS-like births from it.
* :mod:`synthflow.public.natality`: :func:`load_nvss_natality` reads a full NVSS
  natality public-use CSV (NBER layout) into the NVSS sample format.
* :mod:`synthflow.cli.public`: the ``synthflow public-data`` command.

The committed default, ``public_data/nvss_like_2019.csv.gz`` (167,000 rows), is
simulated from ``public_data/nvss2019_calibration.yaml``; see ``public_data/DATASHEET.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from synthflow._util.lazy import lazy_package

if TYPE_CHECKING:  # the exports, imported on first use (synthflow/_util/lazy.py)
    from synthflow.public._io import SAMPLE_COLUMNS, read_sample, write_sample
    from synthflow.public.natality import load_nvss_natality
    from synthflow.public.nvss import Calibration, calibrate, default_calibration_path, simulate

__all__ = [
    "SAMPLE_COLUMNS",
    "Calibration",
    "calibrate",
    "default_calibration_path",
    "load_nvss_natality",
    "read_sample",
    "simulate",
    "write_sample",
]

lazy_package(__name__)

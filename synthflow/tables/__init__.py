"""Frequency-table protection as statistical offices use it today, next to DP.

The package reads like the workflow:

* :mod:`~synthflow.tables._spec` -- the tables file (columns, bins, geography
  hierarchy, structural zeros); :mod:`~synthflow.tables.tabulate` -- microdata or a
  synthetic release to counts over the spec's public bins, and tables to CSV.
* :mod:`~synthflow.tables.ptable` -- p-tables generated from parameters;
  :mod:`~synthflow.tables.cellkey` -- record, cell and category keys, perturbation.
* :mod:`~synthflow.tables.rounding` -- the 10-5 rule, suppression, rounding to a base.
* :mod:`~synthflow.tables.dpnoise` -- independent Laplace / geometric / Gaussian noise;
  :mod:`~synthflow.tables.topdown` -- the top-down method with largest-remainder
  rounding (additive at every level).
* :mod:`~synthflow.tables.measures` -- utility and risk measures.
* :mod:`~synthflow.tables.methods` -- the methods: one class per method (its CLI
  options, settings and privacy), registered by name; :mod:`~synthflow.tables.protect`
  -- one method on every table (``tables protect``);
  :mod:`~synthflow.tables.compare` and :mod:`~synthflow.tables.report` -- every
  method side by side as an HTML report (``tables compare``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from synthflow._util.lazy import lazy_package

if TYPE_CHECKING:  # the exports, imported on first use (synthflow/_util/lazy.py)
    from synthflow.tables._spec import LevelSpec, TableSpec, load_tables, parse_tables
    from synthflow.tables.cellkey import (
        cell_key_perturbation,
        draw_category_keys,
        draw_record_keys,
        record_keys_from_ids,
    )
    from synthflow.tables.compare import Comparison, ComparisonRow, compare, read_release
    from synthflow.tables.dpnoise import NoiseOptions, independent_noise
    from synthflow.tables.measures import (
        BANDS,
        Measures,
        cramers_v,
        entropy_risk,
        hellinger,
        measure,
        transition_matrix,
    )
    from synthflow.tables.methods import (
        METHODS,
        CellKey,
        IndependentNoise,
        Rounding,
        TableMethod,
        TopDown,
        build_method,
    )
    from synthflow.tables.protect import protect, write_tables
    from synthflow.tables.ptable import PRESETS, PTable, PTableParams, make_ptable
    from synthflow.tables.report import render_html, write_report
    from synthflow.tables.rounding import (
        RoundingOptions,
        apply_rounding,
        round_to_base,
        suppress,
        ten_five,
    )
    from synthflow.tables.tabulate import (
        CountTable,
        Microdata,
        ReleasedTable,
        tabulate,
        tabulate_all,
    )
    from synthflow.tables.topdown import (
        ONS_SPLIT,
        TopDownOptions,
        default_split,
        largest_remainder,
        proportional_allocation,
        top_down,
    )

__all__ = [
    "BANDS",
    "METHODS",
    "ONS_SPLIT",
    "PRESETS",
    "CellKey",
    "Comparison",
    "ComparisonRow",
    "CountTable",
    "IndependentNoise",
    "LevelSpec",
    "Measures",
    "Microdata",
    "NoiseOptions",
    "PTable",
    "PTableParams",
    "ReleasedTable",
    "Rounding",
    "RoundingOptions",
    "TableMethod",
    "TableSpec",
    "TopDown",
    "TopDownOptions",
    "apply_rounding",
    "build_method",
    "cell_key_perturbation",
    "compare",
    "cramers_v",
    "default_split",
    "draw_category_keys",
    "draw_record_keys",
    "entropy_risk",
    "hellinger",
    "independent_noise",
    "largest_remainder",
    "load_tables",
    "make_ptable",
    "measure",
    "parse_tables",
    "proportional_allocation",
    "protect",
    "read_release",
    "record_keys_from_ids",
    "render_html",
    "round_to_base",
    "suppress",
    "tabulate",
    "tabulate_all",
    "ten_five",
    "top_down",
    "transition_matrix",
    "write_report",
    "write_tables",
]

lazy_package(__name__)

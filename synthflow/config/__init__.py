"""The release spec: one YAML file, loaded once into typed, frozen objects.

The spec loader, :func:`synthflow.loader.load_spec`, reads ``configs/<name>.yaml`` and
returns a :class:`ReleaseSpec`; past that point no untyped dictionary travels through the
pipeline. Everything
dataset-specific (columns, public domains and bounds, transformation alternatives,
constraints, acceptance criteria, the configuration space) lives in the YAML, never in
package code. Errors name the key, the value and the fix.

The package's modules, in import order: :mod:`.values` (the YAML reader and the checks
every section uses), :mod:`.model` (the frozen objects), :mod:`.columns` (columns,
constraints, the matching rule), :mod:`.datasheet`. The loader lives above this package
(:mod:`synthflow.loader`) because it reads the criterion and generator registries, which
import these objects. Code inside synthflow imports from the module; this package
re-exports the public names.
"""

from typing import TYPE_CHECKING

from synthflow._util.lazy import lazy_package

# The exports, imported on first use (synthflow/_util/lazy.py).
if TYPE_CHECKING:
    from synthflow._bins import parse_bin
    from synthflow.config.model import (
        Clause,
        Column,
        ColumnSource,
        Constraint,
        CriterionSpec,
        DatasheetSpec,
        DisclosureSpec,
        MatchRule,
        ModelGrid,
        PrivacySpec,
        ReleaseSpec,
        SamplingSpec,
        Transformation,
    )
    from synthflow.config.values import (
        MAX_CATEGORIES,
        MAX_INTEGER,
        MAX_SPEC_BYTES,
        MAX_SPEC_DEPTH,
        MAX_SPEC_NODES,
        brief,
        read_yaml,
    )

__all__ = [
    "MAX_CATEGORIES",
    "MAX_INTEGER",
    "MAX_SPEC_BYTES",
    "MAX_SPEC_DEPTH",
    "MAX_SPEC_NODES",
    "Clause",
    "Column",
    "ColumnSource",
    "Constraint",
    "CriterionSpec",
    "DatasheetSpec",
    "DisclosureSpec",
    "MatchRule",
    "ModelGrid",
    "PrivacySpec",
    "ReleaseSpec",
    "SamplingSpec",
    "Transformation",
    "brief",
    "parse_bin",
    "read_yaml",
]

lazy_package(__name__)

"""The release spec's typed, frozen objects (what :func:`synthflow.config.load_spec` returns)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from synthflow._bins import Bin
from synthflow.config.criterion import CriterionParams, CriterionSpec, MatchRule
from synthflow.errors import ConfigError

__all__ = [
    "Clause",
    "Column",
    "ColumnSource",
    "Constraint",
    "CriterionParams",
    "CriterionSpec",
    "DatasheetSpec",
    "DisclosureSpec",
    "MatchRule",
    "ModelGrid",
    "PrivacySpec",
    "ReleaseSpec",
    "SamplingSpec",
    "Transformation",
]


@dataclass(frozen=True, kw_only=True)
class Transformation:
    """One binning alternative of a column, named by a letter (``a``, ``b``, ``c``)."""

    name: str
    """Letter naming the alternative in configs, ids and outputs."""
    bins: tuple[Bin, ...]
    """Bins in ascending order; codes are indices into this tuple."""

    @property
    def size(self) -> int:
        """Number of bins (the transformed column's public domain size)."""
        return len(self.bins)

    @property
    def labels(self) -> tuple[str, ...]:
        """Bin labels in code order."""
        return tuple(b.label for b in self.bins)

    def numbers(self) -> np.ndarray:
        """Numeric value of each bin code (SPEC sec. 5 bins-to-numbers rule)."""
        return np.array([b.number() for b in self.bins], dtype=float)


@dataclass(frozen=True, kw_only=True)
class ColumnSource:
    """How a release column is read from an input file in another format."""

    source: str
    """Column of the input file."""
    values: tuple[tuple[str, str], ...] = ()
    """Value mapping (input value as lower-case text -> release value)."""
    parse: Literal["month", None] = None
    """``month``: take the month (1..12) of an ISO date."""


@dataclass(frozen=True, kw_only=True)
class Column:
    """A release column with its public domain."""

    name: str
    """Column name in the release."""
    kind: Literal["int", "categorical"]
    """Integer-valued or categorical."""
    domain: tuple[float, float] | None = None
    """Public raw domain [lo, hi] of an integer column; values outside are an error."""
    categories: tuple[str, ...] = ()
    """Public categories of a categorical column, in code order."""
    bounds: tuple[float, float] | None = None
    """Public bounds [L, U] of the numerified column, used for sensitivities."""
    groups: tuple[Bin, ...] = ()
    """Coarse group-by bins (raw units) for conditional-mean criteria."""
    transformations: tuple[Transformation, ...] = ()
    """Binning alternatives, keyed by letter."""
    source: ColumnSource | None = None
    """How to read the column from an input in another format."""
    description: str = ""
    """What the column means, for the release's codebook."""
    unit: str = ""
    """Unit of the raw values (e.g. ``grams``, ``completed weeks``), for the codebook."""

    def transformation(self, letter: str) -> Transformation:
        """The alternative named ``letter``."""
        for t in self.transformations:
            if t.name == letter:
                return t
        raise ConfigError(
            f"column {self.name!r} has no transformation {letter!r}; available: "
            f"{[t.name for t in self.transformations]}"
        )


@dataclass(frozen=True, kw_only=True)
class Clause:
    """``column op value`` with a strict or non-strict comparison."""

    column: str
    op: str
    value: float


@dataclass(frozen=True, kw_only=True)
class Constraint:
    """A plausibility rule: rows for which the condition holds are dropped."""

    id: int
    """Rule number, as in the SPEC."""
    name: str
    """What the rule says, in words."""
    mode: Literal["all", "any"]
    """Drop when all clauses hold (``all``) or when any holds (``any``)."""
    clauses: tuple[Clause, ...]


@dataclass(frozen=True, kw_only=True)
class ModelGrid:
    """One grid of hyperparameters of a generator family."""

    model: str
    grid: tuple[tuple[str, tuple[Any, ...]], ...]
    """(hyperparameter, values) pairs; the grid is their cartesian product."""
    require: tuple[tuple[str, str, Any], ...] = ()
    """Exclusion rule: keep a combination only if every (left, op, right) holds; right
    may be a number or another hyperparameter's name."""


@dataclass(frozen=True, kw_only=True)
class PrivacySpec:
    """Privacy setup of the release."""

    total_epsilon: float
    """Total budget of the whole release."""
    generator_epsilon: float
    """Budget of one generator fit (eps_gen)."""
    total_delta: float = 0.0
    neighbouring: Literal["replace_one"] = "replace_one"
    """Neighbouring relation: datasets differ by replacing one record; n is public."""


@dataclass(frozen=True, kw_only=True)
class SamplingSpec:
    """Rejection sampling against the synthetic constraints."""

    max_rounds: int = 50
    """Rounds of sampling before giving up with NotEnoughRowsError."""
    oversample: float = 1.2
    """Factor on the missing rows drawn per round after the first (which draws exactly n)."""


@dataclass(frozen=True, kw_only=True)
class DatasheetSpec:
    """What the release's datasheet says about provenance and distribution.

    Every field is optional text; the datasheet lists the missing ones in one line
    ("Not stated in the spec: ..."), so that a reader sees what the publisher left out.
    """

    title: str = ""
    publisher: str = ""
    contact: str = ""
    licence: str = ""
    citation: str = ""
    source: str = ""
    """Where the original data come from (register, survey, file)."""
    population: str = ""
    """Who the rows describe."""
    period: str = ""
    """When (reference period of the original data)."""
    motivation: str = ""
    """Why the release is made and for whom."""
    maintenance: str = ""
    """Who maintains it, how errors are reported, whether it will be updated."""


@dataclass(frozen=True, kw_only=True)
class DisclosureSpec:
    """Disclosure-risk measures on the released microdata (public: no budget)."""

    key_variables: tuple[str, ...] = ()
    """Quasi-identifiers an intruder could know (sdcMicro's key variables)."""
    sensitive: str | None = None
    """A sensitive column for l-diversity."""
    max_msu_size: int = 3
    """Largest subset of key variables searched for minimal sample uniques (SUDA)."""


@dataclass(frozen=True, kw_only=True)
class ReleaseSpec:
    """Everything dataset-specific about a release."""

    def __repr__(self) -> str:
        return (
            f"ReleaseSpec(name={self.name!r}, path={self.path!r}, columns={len(self.columns)}, "
            f"criteria={len(self.criteria)}, total_epsilon={self.privacy.total_epsilon:g})"
        )

    name: str
    columns: tuple[Column, ...]
    privacy: PrivacySpec
    raw_constraints: tuple[Constraint, ...]
    synthetic_constraints: tuple[Constraint, ...]
    criteria: tuple[CriterionSpec, ...]
    models: tuple[ModelGrid, ...]
    min_count: tuple[int, ...]
    sampling: SamplingSpec = field(default_factory=SamplingSpec)
    unit: str = "record"
    """What one row is, in words (e.g. ``birth``, ``person``): used in datasheets."""
    datasheet: DatasheetSpec = field(default_factory=DatasheetSpec)
    """Provenance and distribution fields of the release's datasheet."""
    disclosure: DisclosureSpec = field(default_factory=DisclosureSpec)
    """Key variables and sensitive column of the disclosure-risk measures."""
    description: str = ""
    """What the release is, in a sentence or two."""
    public_sample: str = ""
    """A public sample like the private data (a bundled public data file's name, or a
    path relative to the spec): the noise check simulates the regression's design on it."""
    public_sample_published: bool = False
    """The public sample was published before this release (e.g. a public-use extract of
    the same registry), so rows it shares with the private file are public: the check
    that it holds no private rows is skipped, and the release records the declaration."""
    path: str = ""
    """File the spec was read from."""
    sha256: str = ""
    """SHA-256 of the spec file's bytes."""

    @property
    def column_names(self) -> tuple[str, ...]:
        """Release columns in spec order."""
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        """The column called ``name``."""
        for c in self.columns:
            if c.name == name:
                return c
        raise ConfigError(
            f"spec {self.name!r} has no column {name!r}; columns: {self.column_names}"
        )

    def regression_features(self, target: str, features: tuple[str, ...] = ()) -> tuple[str, ...]:
        """A regression's feature columns: its ``features``, else the int columns.

        The default is every int column but the target; categorical columns enter only
        when listed (one-hot encoded).
        """
        if features:
            return features
        return tuple(c.name for c in self.columns if c.kind == "int" and c.name != target)

    def criterion(self, name: str) -> CriterionSpec:
        """The acceptance criterion called ``name``."""
        for c in self.criteria:
            if c.name == name:
                return c
        raise ConfigError(
            f"spec has no criterion {name!r}; criteria: {[c.name for c in self.criteria]}"
        )

    @property
    def evaluation_epsilon(self) -> float:
        """Sum of the criteria budgets (eps_eval)."""
        return math.fsum(c.epsilon for c in self.criteria)


# --------------------------------------------------------------------------- parsing

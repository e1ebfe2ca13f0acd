"""The release spec: one YAML file, loaded once into typed, frozen objects.

:func:`load_spec` reads ``configs/<name>.yaml`` and returns a :class:`ReleaseSpec`; past
that point no untyped dictionary travels through the pipeline. Everything
dataset-specific (columns, public domains and bounds, transformation alternatives,
constraints, acceptance criteria, the configuration space) lives in the YAML, never in
package code. Errors name the key, the value and the fix.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml

from synthflow._bins import Bin, expand_bins, parse_bin
from synthflow._grids import validate_grids
from synthflow._ops import COMPARATORS
from synthflow.errors import ConfigError
from synthflow.spec_schema import CRITERION_KINDS, section_keys

__all__ = [
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
    "load_spec",
]

_OPS = set(COMPARATORS)

MAX_SPEC_BYTES = 1_000_000
"""A spec is a few kilobytes; a larger file is refused before it is parsed."""
MAX_SPEC_NODES = 100_000
"""Values in the parsed spec with YAML aliases expanded (an alias bomb is refused)."""
MAX_SPEC_DEPTH = 32
"""Nesting depth of the parsed spec."""
MAX_INTEGER = 10**15
"""Largest integer a spec may hold (domains, bins, seeds): far past any public bound."""
MAX_CATEGORIES = 10_000
"""Categories of one column (its domain: every table and marginal is sized by it)."""


def brief(value: Any) -> str:  # noqa: PLR0911  (one per kind of value)
    """A short, content-free description of a value for error messages.

    Short one-line text and numbers are shown; anything else by type and size only, so
    that a private file passed where a spec goes is never echoed.
    """
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        text = repr(value)
        return text if len(text) <= 40 else f"a number of {len(text)} digits"
    if isinstance(value, str):
        if len(value) <= 40 and "\n" not in value:
            return repr(value)
        return f"text of {len(value):,} characters"
    if isinstance(value, dict):
        return f"a mapping of {len(value):,} keys"
    if isinstance(value, (list, tuple)):
        if len(value) <= 6 and all(
            isinstance(v, (str, int, float, bool)) and len(repr(v)) <= 20 for v in value
        ):
            return repr(list(value))
        return f"a list of {len(value):,} items"
    return type(value).__name__


def _keys(where: str, raw: Any, required: set[str], optional: set[str]) -> dict[str, Any]:
    """Check a YAML mapping's keys; return it as a dict."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping, got {brief(raw)}")
    unknown = set(raw) - required - optional
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {sorted(map(str, unknown))}; allowed keys are "
            f"{sorted(required | optional)}"
        )
    missing = required - set(raw)
    if missing:
        raise ConfigError(f"{where}: missing required key(s) {sorted(missing)}")
    return raw


def _number(
    where: str,
    value: Any,
    *,
    lo: float = -math.inf,
    lo_open: bool = False,
    hi: float = math.inf,
    hi_open: bool = False,
) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise ConfigError(f"{where}: expected a number, got {brief(value)}")
    if not math.isfinite(value):
        raise ConfigError(f"{where}: must be a finite number, got {brief(value)}")
    if value < lo or (lo_open and value == lo):
        op = ">" if lo_open else ">="
        raise ConfigError(f"{where}: must be {op} {lo}, got {brief(value)}")
    if value > hi or (hi_open and value == hi):
        op = "<" if hi_open else "<="
        raise ConfigError(f"{where}: must be {op} {hi}, got {brief(value)}")
    return float(value)


class _SpecLoader(yaml.SafeLoader):
    """YAML 1.2 numbers (``3.0e1`` is a float) and no duplicate keys."""


def _mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    keys = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in keys:
            raise ConfigError(
                f"duplicate key {key!r} (line {key_node.start_mark.line + 1}); YAML would keep "
                "only the last one: remove or rename one of them"
            )
        keys.add(key)
    return loader.construct_mapping(node, deep=deep)


_SpecLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
_SpecLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+$"),
    list("-+0123456789."),
)


# YAML 1.2 booleans: only true/false. YAML 1.1 also reads yes/no/on/off as booleans, so
# that `categories: [no, yes]` would be [False, True].
_SpecLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in _SpecLoader.yaml_implicit_resolvers.items()
}
_SpecLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)
for _first, _resolvers in list(_SpecLoader.yaml_implicit_resolvers.items()):
    if not _resolvers:
        del _SpecLoader.yaml_implicit_resolvers[_first]


def _int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    digits = str(node.value).lstrip("+-0") or "0"
    if len(digits) > 16 and "_" not in digits:
        raise ConfigError(
            f"a number of {len(digits)} digits (line {node.start_mark.line + 1}); spec numbers "
            f"are at most {MAX_INTEGER:.0e}"
        )
    value = yaml.SafeLoader.construct_yaml_int(loader, node)
    if abs(value) > MAX_INTEGER:
        raise ConfigError(
            f"the number on line {node.start_mark.line + 1} is larger than {MAX_INTEGER:.0e}, "
            "the largest a spec may hold"
        )
    return value


_SpecLoader.add_constructor("tag:yaml.org,2002:int", _int)


def read_yaml(data: bytes | str) -> Any:
    """Parse YAML the way specs are read: 1.2 floats and booleans, duplicate keys refused.

    Bounded: a spec of at most :data:`MAX_SPEC_BYTES`, nested at most
    :data:`MAX_SPEC_DEPTH` deep, with at most :data:`MAX_SPEC_NODES` values once its
    aliases are expanded (an alias bomb is refused before anything walks it), and integers
    of at most :data:`MAX_INTEGER`. Each refusal names the limit.
    """
    if len(data) > MAX_SPEC_BYTES:
        raise ConfigError(
            f"the spec is {len(data):,} bytes; a spec is at most {MAX_SPEC_BYTES:,} bytes (is "
            "this a data file? the spec comes first, the data after --data)"
        )
    depth = 0
    for event in yaml.parse(data, Loader=_SpecLoader):  # events: no recursion, stops early
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_SPEC_DEPTH:
                mark = event.start_mark
                line = f" (line {mark.line + 1})" if mark is not None else ""
                raise ConfigError(
                    f"the spec is nested more than {MAX_SPEC_DEPTH} levels deep{line}"
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    try:
        raw = yaml.load(data, Loader=_SpecLoader)  # a SafeLoader subclass: no arbitrary objects
    except RecursionError:
        raise ConfigError(
            f"the spec is nested too deeply (at most {MAX_SPEC_DEPTH} levels)"
        ) from None
    _check_size(raw)
    return raw


def _check_size(raw: Any) -> None:
    """Refuse a parsed spec too deep or too large once aliases are expanded."""
    sizes: dict[int, int] = {}

    def size(value: Any, depth: int) -> int:
        if depth > MAX_SPEC_DEPTH:
            raise ConfigError(f"the spec is nested more than {MAX_SPEC_DEPTH} levels deep")
        if not isinstance(value, (dict, list)):
            return 1
        if id(value) in sizes:  # an alias: the same object again, counted in full
            return sizes[id(value)]
        children = value.values() if isinstance(value, dict) else value
        total = 1
        for child in children:
            total += size(child, depth + 1)
            if total > MAX_SPEC_NODES:
                raise ConfigError(
                    f"the spec holds more than {MAX_SPEC_NODES:,} values once its YAML aliases "
                    "are expanded; write it out without deeply nested aliases"
                )
        sizes[id(value)] = total
        return total

    size(raw, 0)


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
class MatchRule:
    """When two records may be matched for the faithfulness criterion (SPEC sec. 6)."""

    exact: tuple[str, ...]
    """Columns that must be equal."""
    near: tuple[str, ...]
    """Columns of which at most ``max_near_differences`` may differ."""
    max_near_differences: int = 1
    max_bin_distance: int = 1
    exceptions: tuple[tuple[str, str, str], ...] = ()
    """(column, transformation letter, bin label) triples that must match exactly."""
    ignore: tuple[str, ...] = ()
    """Columns not compared at all (every column in no list must be equal)."""


@dataclass(frozen=True, kw_only=True)
class CriterionSpec:
    """One acceptance criterion: threshold, budget and kind-specific parameters."""

    name: str
    kind: Literal[
        "marginals",
        "one_way_ratio",
        "conditional_mean",
        "regression_coefficients",
        "regression_tstr",
        "faithfulness",
    ]
    threshold: float
    """The candidate passes this criterion iff the (noisy) measure is below this."""
    epsilon: float
    """Budget for releasing the measure with DP."""
    column: str | None = None
    """Measured column (conditional means) or regression target."""
    group_by: tuple[str | None, ...] = ()
    """Group-by columns of a conditional mean (``None``: no grouping)."""
    clip: float | None = None
    """Clipping constant c of the 1-way ratio."""
    false_positive_rate: float | None = None
    """p_fp used to derive the pseudo-threshold of a clipped criterion."""
    assumed_min_count: int | None = None
    """Smallest 1-way count m assumed when deriving the pseudo-threshold."""
    margin_fraction: float = 0.01
    """Resize margin = ceil(margin_fraction * n) + margin_plus."""
    margin_plus: int = 1
    match: MatchRule | None = None
    features: tuple[str, ...] = ()
    """Regression features; empty: every int column but the target. A categorical
    feature is one-hot encoded over its public bins (first bin the reference)."""
    max_order: int | None = None
    """Marginals: largest number of columns in a covered marginal (None: all, as in 2024)."""
    columns: tuple[str, ...] = ()
    """Marginals, 1-way ratio: the columns covered (empty: every column)."""


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

    Every field is optional text; the datasheet says "not stated in the spec" for a
    missing one, so that a reader sees what the publisher left out.
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


def _parse_column(name: str, raw: Any, source: ColumnSource | None) -> Column:
    where = f"columns.{name}"
    raw = _keys(where, raw, *section_keys("column"))
    kind = raw["type"]
    if kind not in ("int", "categorical"):
        raise ConfigError(f"{where}.type: must be 'int' or 'categorical', got {kind!r}")
    domain = None
    categories: tuple[str, ...] = ()
    if kind == "int":
        d = raw.get("domain")
        if not (isinstance(d, list) and len(d) == 2):
            raise ConfigError(f"{where}.domain: an int column needs domain [lo, hi], got {d!r}")
        domain = (_number(f"{where}.domain", d[0]), _number(f"{where}.domain", d[1]))
        if domain[0] > domain[1]:
            raise ConfigError(f"{where}.domain: lo {domain[0]} is above hi {domain[1]}")
    else:
        cats = raw.get("categories")
        if isinstance(cats, list) and len(cats) > MAX_CATEGORIES:
            raise ConfigError(
                f"{where}.categories: {len(cats):,} categories; a column has at most "
                f"{MAX_CATEGORIES:,} (group rare ones into a public 'other')"
            )
        if isinstance(cats, list) and any(isinstance(c, bool) for c in cats):
            raise ConfigError(
                f"{where}.categories: true/false are YAML booleans; quote categories that "
                "look like them, e.g. ['true', 'false']"
            )
        if not (
            isinstance(cats, list)
            and len(cats) >= 2
            and all(isinstance(c, (str, int, float)) for c in cats)
            and len({unicodedata.normalize("NFC", str(c)) for c in cats}) == len(cats)
        ):
            raise ConfigError(
                f"{where}.categories: a categorical column needs a list of at least two distinct "
                f"categories (text or numbers), got {brief(cats)}"
            )
        categories = tuple(str(c) for c in cats)
    bounds = None
    if "bounds" in raw:
        b = raw["bounds"]
        if not (isinstance(b, list) and len(b) == 2):
            raise ConfigError(f"{where}.bounds: expected [L, U] with L < U, got {b!r}")
        bounds = (_number(f"{where}.bounds", b[0]), _number(f"{where}.bounds", b[1]))
        if not bounds[0] < bounds[1]:
            raise ConfigError(f"{where}.bounds: expected [L, U] with L < U, got {b!r}")
    groups: tuple[Bin, ...] = ()
    if "groups" in raw:
        groups = tuple(expand_bins(raw["groups"], where=f"{where}.groups")) if kind == "int" else ()
    trans_raw = raw["transformations"]
    if not isinstance(trans_raw, dict) or not trans_raw:
        raise ConfigError(f"{where}.transformations: expected a mapping letter -> bins")
    transformations = []
    for letter, items in trans_raw.items():
        if not (
            isinstance(letter, str) and len(letter) == 1 and letter.isalpha() and letter.islower()
        ):
            raise ConfigError(
                f"{where}.transformations: name alternatives by one lower-case letter (a, b, c), "
                f"got {letter!r}"
            )
        tw = f"{where}.transformations.{letter}"
        if kind == "categorical":
            if items != "identity" and list(map(str, items)) != list(categories):
                raise ConfigError(f"{tw}: a categorical column's transformation must be 'identity'")
            bins = [Bin(label=c, lo=i, hi=i) for i, c in enumerate(categories)]
        else:
            assert domain is not None
            bins = expand_bins(items, where=tw)
            if bins[0].lo > domain[0] or bins[-1].hi < domain[1]:
                raise ConfigError(
                    f"{tw}: bins {bins[0].label}..{bins[-1].label} do not cover the domain "
                    f"[{domain[0]:g}, {domain[1]:g}]; add open bins such as '<a' and '>b'"
                )
        transformations.append(Transformation(name=letter, bins=tuple(bins)))
    return Column(
        name=name,
        kind=kind,
        domain=domain,
        categories=categories,
        bounds=bounds,
        groups=groups,
        transformations=tuple(transformations),
        source=source,
        description=_text(f"{where}.description", raw.get("description", ""), 400),
        unit=_text(f"{where}.unit", raw.get("unit", ""), 40),
    )


def _parse_source(name: str, raw: Any) -> ColumnSource:
    where = f"input.mapping.{name}"
    raw = _keys(where, raw, *section_keys("source"))
    parse = raw.get("parse")
    if parse not in (None, "month"):
        raise ConfigError(f"{where}.parse: only 'month' is supported, got {parse!r}")
    values = raw.get("values", {})
    if not isinstance(values, dict):
        raise ConfigError(f"{where}.values: expected a mapping input value -> release value")
    return ColumnSource(
        source=str(raw["from"]),
        values=tuple((str(k).lower(), str(v)) for k, v in values.items()),
        parse=parse,
    )


def _parse_clause(where: str, raw: Any, columns: Mapping[str, Column]) -> Clause:
    if not (isinstance(raw, list) and len(raw) == 3):
        raise ConfigError(f"{where}: a clause is [column, op, value], got {brief(raw)}")
    col, op, value = raw
    if col not in columns:
        raise ConfigError(f"{where}: unknown column {col!r}; columns: {sorted(columns)}")
    if columns[col].kind != "int":
        raise ConfigError(f"{where}: column {col!r} is categorical; clauses compare int columns")
    if op not in _OPS:
        raise ConfigError(f"{where}: unknown operator {op!r}; use one of {sorted(_OPS)}")
    return Clause(column=col, op=op, value=_number(where, value))


def _parse_constraints(
    raw: Any, columns: Mapping[str, Column]
) -> tuple[tuple[Constraint, ...], tuple[Constraint, ...]]:
    raw = _keys("constraints", raw, *section_keys("constraints"))
    rules: list[Constraint] = []
    for i, r in enumerate(raw["raw"] or []):
        where = f"constraints.raw[{i}]"
        r = _keys(where, r, *section_keys("rule"))
        if ("all" in r) == ("any" in r):
            raise ConfigError(f"{where}: give exactly one of 'all' (and) or 'any' (or)")
        mode: Literal["all", "any"] = "all" if "all" in r else "any"
        clauses = tuple(_parse_clause(f"{where}.{mode}", c, columns) for c in r[mode])
        if not clauses:
            raise ConfigError(f"{where}.{mode}: needs at least one clause")
        rules.append(Constraint(id=int(r["id"]), name=str(r["name"]), mode=mode, clauses=clauses))
    ids = [r.id for r in rules]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"constraints.raw: rule ids must be unique, got {ids}")
    by_id = {r.id: r for r in rules}
    synthetic = []
    for sid in raw.get("synthetic") or []:
        if sid not in by_id:
            raise ConfigError(f"constraints.synthetic: no raw rule with id {sid!r}; ids: {ids}")
        synthetic.append(by_id[sid])
    return tuple(rules), tuple(synthetic)


def _parse_match(where: str, raw: Any, columns: Mapping[str, Column]) -> MatchRule:
    raw = _keys(where, raw, *section_keys("match"))
    ignore = raw.get("ignore") or []
    if not isinstance(ignore, list):
        raise ConfigError(f"{where}.ignore: expected a list of columns")
    named = [*raw["exact"], *raw["near"], *ignore]
    for col in named:
        if col not in columns:
            raise ConfigError(f"{where}: unknown column {col!r}")
    twice = sorted({c for c in named if named.count(c) > 1})
    if twice:
        raise ConfigError(
            f"{where}: columns {twice} are listed more than once among exact, near and ignore"
        )
    exceptions = []
    for e in raw.get("exceptions") or []:
        e = _keys(f"{where}.exceptions", e, *section_keys("exception"))
        col = columns.get(e["column"])
        if col is None:
            raise ConfigError(f"{where}.exceptions: unknown column {e['column']!r}")
        t = col.transformation(str(e["transformation"]))
        if str(e["bin"]) not in t.labels:
            raise ConfigError(
                f"{where}.exceptions: bin {e['bin']!r} is not a bin of {col.name} "
                f"alternative {t.name}; bins: {list(t.labels)}"
            )
        exceptions.append((col.name, t.name, str(e["bin"])))
    return MatchRule(
        exact=tuple(raw["exact"]),
        near=tuple(raw["near"]),
        max_near_differences=int(raw.get("max_near_differences", 1)),
        max_bin_distance=int(raw.get("max_bin_distance", 1)),
        exceptions=tuple(exceptions),
        ignore=tuple(str(c) for c in ignore),
    )


def _parse_criteria(raw: Any, columns: Mapping[str, Column]) -> tuple[CriterionSpec, ...]:
    if not isinstance(raw, list) or not raw:
        raise ConfigError("acceptance.criteria: expected a non-empty list of criteria")
    kinds = set(CRITERION_KINDS)
    out = []
    for i, c in enumerate(raw):
        where = f"acceptance.criteria[{i}]"
        c = _keys(where, c, *section_keys("criterion"))
        if c["kind"] not in kinds:
            raise ConfigError(
                f"{where}.kind: unknown kind {c['kind']!r}; use one of {sorted(kinds)}"
            )
        col = c.get("column")
        if col is not None and col not in columns:
            raise ConfigError(f"{where}.column: unknown column {col!r}")
        if c["kind"] in ("conditional_mean", "regression_coefficients", "regression_tstr"):
            if col is None:
                raise ConfigError(f"{where}: kind {c['kind']!r} needs 'column'")
            if columns[col].bounds is None:
                raise ConfigError(
                    f"{where}: column {col!r} needs public 'bounds' for its sensitivity"
                )
        group_by = tuple(None if g in (None, "none") else str(g) for g in c.get("group_by", []))
        for g in group_by:
            if g is not None and g not in columns:
                raise ConfigError(f"{where}.group_by: unknown column {g!r}")
        if c["kind"] == "faithfulness" and "match" not in c:
            raise ConfigError(f"{where}: a faithfulness criterion needs a 'match' rule")
        out.append(
            CriterionSpec(
                name=str(c["name"]),
                kind=c["kind"],
                threshold=_number(f"{where}.threshold", c["threshold"]),
                epsilon=_number(f"{where}.epsilon", c["epsilon"], lo=0, lo_open=True),
                column=col,
                group_by=group_by,
                clip=None
                if c.get("clip") is None
                else _number(f"{where}.clip", c["clip"], lo=1, lo_open=True),
                false_positive_rate=c.get("false_positive_rate"),
                assumed_min_count=c.get("assumed_min_count"),
                margin_fraction=float(c.get("margin_fraction", 0.01)),
                margin_plus=int(c.get("margin_plus", 1)),
                match=_parse_match(f"{where}.match", c["match"], columns) if "match" in c else None,
                features=_parse_features(where, c, columns),
                **_parse_marginal_family(where, c, columns),
            )
        )
    names = [c.name for c in out]
    targets: dict[str, tuple[str, ...]] = {}
    for crit in out:
        if crit.kind in ("regression_coefficients", "regression_tstr") and crit.column:
            if targets.setdefault(crit.column, crit.features) != crit.features:
                raise ConfigError(
                    f"acceptance.criteria: the regression criteria on {crit.column!r} must use "
                    "the same features (they share one DP fit); give them the same 'features'"
                )
    if len(set(names)) != len(names):
        raise ConfigError(f"acceptance.criteria: names must be unique, got {names}")
    return tuple(out)


def _parse_features(
    where: str, c: Mapping[str, Any], columns: Mapping[str, Column]
) -> tuple[str, ...]:
    if "features" not in c:
        return ()
    feats = c["features"]
    if c["kind"] not in ("regression_coefficients", "regression_tstr"):
        raise ConfigError(f"{where}.features: only regression criteria take features")
    if not isinstance(feats, list) or not feats or len(set(map(str, feats))) != len(feats):
        raise ConfigError(f"{where}.features: expected a non-empty list of distinct columns")
    for f in feats:
        if f not in columns:
            raise ConfigError(f"{where}.features: unknown column {f!r}")
        if f == c.get("column"):
            raise ConfigError(f"{where}.features: {f!r} is the target, not a feature")
    return tuple(str(f) for f in feats)


def _check_groups_align(criteria: Sequence[CriterionSpec], columns: Mapping[str, Column]) -> None:
    """Every bin of every alternative of a group-by column lies inside exactly one group.

    Checked at load (public spec only) so that no configuration of the space fails on a
    worker, or after a release has charged its ledger.
    """
    seen: set[str] = set()
    for c in criteria:
        if c.kind != "conditional_mean":
            continue
        for by in c.group_by:
            if by is None or by in seen or not columns[by].groups:
                continue
            seen.add(by)
            col = columns[by]
            for t in col.transformations:
                for b in t.bins:
                    inside = [g for g in col.groups if g.lo <= b.lo and b.hi <= g.hi]
                    if len(inside) != 1:
                        raise ConfigError(
                            f"columns.{by}.groups: bin {b.label!r} of transformation "
                            f"{t.name!r} does not lie inside exactly one group "
                            f"{[g.label for g in col.groups]} (criterion {c.name!r} groups "
                            "by it); align the groups with every alternative's bins"
                        )


def _parse_marginal_family(
    where: str, c: Mapping[str, Any], columns: Mapping[str, Column]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "max_order" in c and c["kind"] != "marginals":
        raise ConfigError(f"{where}: only a marginals criterion takes max_order")
    if "columns" in c and c["kind"] not in ("marginals", "one_way_ratio"):
        raise ConfigError(f"{where}: only marginals and one_way_ratio criteria take columns")
    if "columns" in c:
        cols = c["columns"]
        if not isinstance(cols, list) or not cols or len(set(map(str, cols))) != len(cols):
            raise ConfigError(f"{where}.columns: expected a non-empty list of distinct columns")
        for col in cols:
            if col not in columns:
                raise ConfigError(
                    f"{where}.columns: unknown column {col!r}; columns: {list(columns)}"
                )
        out["columns"] = tuple(str(col) for col in cols)
    if "max_order" in c:
        k = c["max_order"]
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(
                f"{where}.max_order: expected an integer >= 1 (2: every 1- and 2-way "
                f"marginal), got {k!r}"
            )
        out["max_order"] = k
    return out


def _parse_models(raw: Any) -> tuple[ModelGrid, ...]:
    if not isinstance(raw, list) or not raw:
        raise ConfigError("space.models: expected a non-empty list of {model, grid} entries")
    out = []
    for i, m in enumerate(raw):
        where = f"space.models[{i}]"
        m = _keys(where, m, *section_keys("model"))
        grid = m["grid"]
        if not isinstance(grid, dict):
            raise ConfigError(f"{where}.grid: expected a mapping hyperparameter -> list of values")
        pairs = []
        for k, v in grid.items():
            values = tuple(v) if isinstance(v, list) else (v,)
            if not values:
                raise ConfigError(f"{where}.grid.{k}: needs at least one value")
            pairs.append((str(k), values))
        req = []
        for r in m.get("require") or []:
            if not (isinstance(r, list) and len(r) == 3 and r[1] in _OPS and r[0] in grid):
                raise ConfigError(
                    f"{where}.require: each rule is [hyperparameter, op, value or hyperparameter] "
                    f"with op in {sorted(_OPS)}, got {r!r}"
                )
            req.append((str(r[0]), str(r[1]), r[2]))
        out.append(ModelGrid(model=str(m["model"]), grid=tuple(pairs), require=tuple(req)))
    return tuple(out)


def _text(where: str, value: Any, limit: int) -> str:
    """An optional one-line text field (datasheet metadata)."""
    if not isinstance(value, str) or len(value) > limit:
        raise ConfigError(
            f"{where}: expected text of at most {limit} characters, got {brief(value)}"
        )
    return " ".join(value.split())


def _parse_datasheet(raw: Any) -> DatasheetSpec:
    d = _keys("datasheet", raw or {}, *section_keys("datasheet"))
    return DatasheetSpec(**{k: _text(f"datasheet.{k}", d.get(k, ""), 1000) for k in d})


def _parse_disclosure(raw: Any, columns: dict[str, Column]) -> DisclosureSpec:
    d = _keys("disclosure", raw or {}, *section_keys("disclosure"))
    keys = d.get("key_variables", [])
    if not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
        raise ConfigError(f"disclosure.key_variables: expected a list of columns, got {keys!r}")
    unknown = sorted(set(keys) - set(columns))
    if unknown:
        raise ConfigError(
            f"disclosure.key_variables: {unknown} are not columns of the spec ({list(columns)})"
        )
    sensitive = d.get("sensitive")
    if sensitive is not None and (sensitive not in columns or sensitive in keys):
        raise ConfigError(
            f"disclosure.sensitive: {sensitive!r} must be a column of the spec that is not a "
            "key variable"
        )
    size = d.get("max_msu_size", 3)
    if not (isinstance(size, int) and 1 <= size <= 6):
        raise ConfigError(f"disclosure.max_msu_size: expected an integer 1-6, got {size!r}")
    return DisclosureSpec(key_variables=tuple(keys), sensitive=sensitive, max_msu_size=size)


def _unit(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 40:
        raise ConfigError(
            f"unit: expected a short noun for one row (e.g. birth, person), got {brief(value)}"
        )
    return value.strip()


def load_spec(path: str | Path) -> ReleaseSpec:
    """Read and validate a release spec.

    Raises:
        ConfigError: With the offending key, its value and how to fix it.
    """
    from synthflow.resources import bundled_specs, resolve_spec_path  # noqa: PLC0415

    p = resolve_spec_path(path)
    if not p.is_file():
        raise ConfigError(
            f"spec file {str(p)!r} does not exist; pass a spec file or the name of a bundled "
            f"spec ({', '.join(bundled_specs())})"
        )
    if p.stat().st_size > MAX_SPEC_BYTES:
        raise ConfigError(
            f"spec file {str(p)!r} is {p.stat().st_size:,} bytes; a spec is at most "
            f"{MAX_SPEC_BYTES:,} bytes (is this a data file? the spec comes first, the data "
            "after --data)"
        )
    data = p.read_bytes()
    try:
        raw = read_yaml(data)
    except yaml.YAMLError as exc:
        # The position only: the parser's message may quote the file's content.
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise ConfigError(f"spec file {str(p)!r} is not valid YAML{where}: {problem}") from None
    except ConfigError as exc:
        raise ConfigError(f"spec file {str(p)!r}: {exc}") from exc
    try:
        return _build_spec(p, data, raw)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError) as exc:
        if isinstance(exc, ConfigError):
            raise
        # A value of the wrong kind that no specific check named: say so, never a
        # traceback (and never the value: the file may not be a spec at all).
        raise ConfigError(
            f"spec file {str(p)!r} is malformed: a value has the wrong type or shape "
            f"({type(exc).__name__}); 'synthflow validate {p}' lists every problem against "
            "the spec's schema (docs/spec.md)"
        ) from None


def _build_spec(p: Path, data: bytes, raw: Any) -> ReleaseSpec:
    """The spec's objects from its parsed YAML (``load_spec`` names any failure)."""
    raw = _keys(str(p), raw, *section_keys("root"))
    inp = _keys("input", raw.get("input") or {}, *section_keys("input"))
    mapping = inp.get("mapping") or {}
    if not isinstance(raw["columns"], dict) or not raw["columns"]:
        raise ConfigError("columns: expected a mapping column name -> column spec")
    normal = [unicodedata.normalize("NFC", str(name)) for name in raw["columns"]]
    if len(set(normal)) != len(normal):
        raise ConfigError(
            "columns: two column names differ only in their Unicode form (e.g. a composed "
            "and a decomposed accent); rename one of them"
        )
    unknown_map = set(mapping) - set(raw["columns"])
    if unknown_map:
        raise ConfigError(f"input.mapping: {sorted(unknown_map)} are not columns of the spec")
    columns = {
        name: _parse_column(
            name, c, _parse_source(name, mapping[name]) if name in mapping else None
        )
        for name, c in raw["columns"].items()
    }
    for name, col in columns.items():
        for g in col.groups:
            if col.domain and (g.hi < col.domain[0] or g.lo > col.domain[1]):
                raise ConfigError(
                    f"columns.{name}.groups: group {g.label!r} lies outside the domain"
                )
    pr = _keys("privacy", raw["privacy"], *section_keys("privacy"))
    if pr.get("neighbouring", "replace_one") != "replace_one":
        raise ConfigError(
            "privacy.neighbouring: only 'replace_one' (n public) is supported, got "
            f"{pr['neighbouring']!r}"
        )
    privacy = PrivacySpec(
        total_epsilon=_number("privacy.total_epsilon", pr["total_epsilon"], lo=0, lo_open=True),
        generator_epsilon=_number(
            "privacy.generator_epsilon", pr["generator_epsilon"], lo=0, lo_open=True
        ),
        total_delta=_number(
            "privacy.total_delta", pr.get("total_delta", 0.0), lo=0, hi=1, hi_open=True
        ),
    )
    raw_rules, syn_rules = _parse_constraints(raw["constraints"], columns)
    acc = _keys("acceptance", raw["acceptance"], *section_keys("acceptance"))
    criteria = _parse_criteria(acc["criteria"], columns)
    _check_groups_align(criteria, columns)
    space = _keys("space", raw["space"], *section_keys("space"))
    mc = space["min_count"]
    if not (isinstance(mc, list) and mc and all(isinstance(x, int) and x >= 1 for x in mc)):
        raise ConfigError(f"space.min_count: expected a list of integers >= 1, got {mc!r}")
    samp = _keys("sampling", raw.get("sampling") or {}, *section_keys("sampling"))
    sampling = SamplingSpec(
        max_rounds=int(samp.get("max_rounds", 50)),
        oversample=_number("sampling.oversample", samp.get("oversample", 1.2), lo=1),
    )
    if sampling.max_rounds < 1:
        raise ConfigError(f"sampling.max_rounds: must be >= 1, got {sampling.max_rounds}")
    spec = ReleaseSpec(
        name=str(raw["name"]),
        columns=tuple(columns.values()),
        privacy=privacy,
        raw_constraints=raw_rules,
        synthetic_constraints=syn_rules,
        criteria=criteria,
        models=_parse_models(space["models"]),
        min_count=tuple(mc),
        sampling=sampling,
        unit=_unit(raw.get("unit", "record")),
        datasheet=_parse_datasheet(raw.get("datasheet")),
        disclosure=_parse_disclosure(raw.get("disclosure"), columns),
        description=_text("description", raw.get("description", ""), 2000),
        path=str(p),
        sha256=hashlib.sha256(data).hexdigest(),
    )
    if spec.privacy.generator_epsilon + spec.evaluation_epsilon > spec.privacy.total_epsilon:
        raise ConfigError(
            f"privacy: generator_epsilon {privacy.generator_epsilon:g} plus the criteria budgets "
            f"{spec.evaluation_epsilon:g} exceed total_epsilon {privacy.total_epsilon:g}; "
            "raise the total or lower the budgets"
        )
    # Validate the configuration space (model names and hyperparameters) eagerly.
    validate_grids(spec)
    return spec


__all__ += ["parse_bin"]


def with_generator_epsilon(spec: ReleaseSpec, epsilon: float) -> ReleaseSpec:
    """``spec`` with another generator budget (a swept eps_gen on public data).

    The file hash stays the spec's: stored runs record the budget they ran at.

    Raises:
        ConfigError: If ``epsilon`` is not a finite positive number, or it and the
            criteria budgets exceed ``total_epsilon``.
    """
    if not (isinstance(epsilon, int | float) and math.isfinite(epsilon) and epsilon > 0):
        raise ConfigError(f"generator epsilon ({epsilon!r}) must be a finite number > 0")
    if epsilon + spec.evaluation_epsilon > spec.privacy.total_epsilon:
        raise ConfigError(
            f"generator epsilon {epsilon:g} plus the criteria budgets "
            f"{spec.evaluation_epsilon:g} exceed the spec's total_epsilon "
            f"{spec.privacy.total_epsilon:g}; choose a smaller generator epsilon"
        )
    if epsilon == spec.privacy.generator_epsilon:
        return spec
    privacy = dataclasses.replace(spec.privacy, generator_epsilon=float(epsilon))
    return dataclasses.replace(spec, privacy=privacy)


__all__ += ["with_generator_epsilon"]

"""Parsing the spec's columns, constraints and matching rule (public domains only)."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any, Literal

from synthflow._bins import Bin, expand_bins
from synthflow._ops import COMPARATORS
from synthflow.config.model import (
    Clause,
    Column,
    ColumnSource,
    Constraint,
    MatchRule,
    Transformation,
)
from synthflow.config.sections import section_keys
from synthflow.config.values import MAX_CATEGORIES, brief, check_keys, number, text
from synthflow.errors import ConfigError

__all__ = ["parse_column", "parse_columns", "parse_constraints", "parse_match", "parse_source"]

_OPS = set(COMPARATORS)


def parse_columns(raw: Any, mapping: Any) -> dict[str, Column]:
    """The spec's ``columns``, each read through ``input.mapping`` where it names one."""
    if not isinstance(raw, dict) or not raw:
        raise ConfigError("columns: expected a mapping column name -> column spec")
    normal = [unicodedata.normalize("NFC", str(name)) for name in raw]
    if len(set(normal)) != len(normal):
        raise ConfigError(
            "columns: two column names differ only in their Unicode form (e.g. a composed "
            "and a decomposed accent); rename one of them"
        )
    unknown_map = set(mapping) - set(raw)
    if unknown_map:
        raise ConfigError(f"input.mapping: {sorted(unknown_map)} are not columns of the spec")
    columns = {
        name: parse_column(name, c, parse_source(name, mapping[name]) if name in mapping else None)
        for name, c in raw.items()
    }
    for name, col in columns.items():
        for g in col.groups:
            if col.domain and (g.hi < col.domain[0] or g.lo > col.domain[1]):
                raise ConfigError(
                    f"columns.{name}.groups: group {g.label!r} lies outside the domain"
                )
    return columns


def parse_column(name: str, raw: Any, source: ColumnSource | None) -> Column:
    """One column of ``columns``: its public domain, bins and groups."""
    where = f"columns.{name}"
    raw = check_keys(where, raw, *section_keys("column"))
    kind = raw["type"]
    if kind not in ("int", "categorical"):
        raise ConfigError(f"{where}.type: must be 'int' or 'categorical', got {kind!r}")
    domain = None
    categories: tuple[str, ...] = ()
    if kind == "int":
        domain = _parse_domain(where, raw.get("domain"))
    else:
        categories = _parse_categories(where, raw.get("categories"))
    bounds = None
    if "bounds" in raw:
        b = raw["bounds"]
        if not (isinstance(b, list) and len(b) == 2):
            raise ConfigError(f"{where}.bounds: expected [L, U] with L < U, got {b!r}")
        bounds = (number(f"{where}.bounds", b[0]), number(f"{where}.bounds", b[1]))
        if not bounds[0] < bounds[1]:
            raise ConfigError(f"{where}.bounds: expected [L, U] with L < U, got {b!r}")
    groups: tuple[Bin, ...] = ()
    if "groups" in raw:
        groups = tuple(expand_bins(raw["groups"], where=f"{where}.groups")) if kind == "int" else ()
    return Column(
        name=name,
        kind=kind,
        domain=domain,
        categories=categories,
        bounds=bounds,
        groups=groups,
        transformations=_parse_transformations(where, raw["transformations"], domain, categories),
        source=source,
        description=text(f"{where}.description", raw.get("description", ""), 400),
        unit=text(f"{where}.unit", raw.get("unit", ""), 40),
    )


def _parse_domain(where: str, d: Any) -> tuple[float, float]:
    """An int column's ``domain: [lo, hi]``."""
    if not (isinstance(d, list) and len(d) == 2):
        raise ConfigError(f"{where}.domain: an int column needs domain [lo, hi], got {d!r}")
    domain = (number(f"{where}.domain", d[0]), number(f"{where}.domain", d[1]))
    if domain[0] > domain[1]:
        raise ConfigError(f"{where}.domain: lo {domain[0]} is above hi {domain[1]}")
    return domain


def _parse_categories(where: str, cats: Any) -> tuple[str, ...]:
    """A categorical column's ``categories``: at least two, distinct, never booleans."""
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
    return tuple(str(c) for c in cats)


def _parse_transformations(
    where: str,
    trans_raw: Any,
    domain: tuple[float, float] | None,
    categories: tuple[str, ...],
) -> tuple[Transformation, ...]:
    """A column's ``transformations``: one bin list per letter (``identity`` if categorical).

    ``domain`` is None for a categorical column (its ``categories`` are its bins).
    """
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
        if domain is None:  # categorical
            if items != "identity" and list(map(str, items)) != list(categories):
                raise ConfigError(f"{tw}: a categorical column's transformation must be 'identity'")
            bins = [Bin(label=c, lo=i, hi=i) for i, c in enumerate(categories)]
        else:
            bins = expand_bins(items, where=tw)
            if bins[0].lo > domain[0] or bins[-1].hi < domain[1]:
                raise ConfigError(
                    f"{tw}: bins {bins[0].label}..{bins[-1].label} do not cover the domain "
                    f"[{domain[0]:g}, {domain[1]:g}]; add open bins such as '<a' and '>b'"
                )
        transformations.append(Transformation(name=letter, bins=tuple(bins)))
    return tuple(transformations)


def parse_source(name: str, raw: Any) -> ColumnSource:
    """How the column ``name`` is read from an input in another format."""
    where = f"input.mapping.{name}"
    raw = check_keys(where, raw, *section_keys("source"))
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
    return Clause(column=col, op=op, value=number(where, value))


def parse_constraints(
    raw: Any, columns: Mapping[str, Column]
) -> tuple[tuple[Constraint, ...], tuple[Constraint, ...]]:
    """The raw constraints and the synthetic ones (rules chosen by id)."""
    raw = check_keys("constraints", raw, *section_keys("constraints"))
    rules: list[Constraint] = []
    for i, r in enumerate(raw["raw"] or []):
        where = f"constraints.raw[{i}]"
        r = check_keys(where, r, *section_keys("rule"))
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


def parse_match(where: str, raw: Any, columns: Mapping[str, Column]) -> MatchRule:
    """A faithfulness matching rule (SPEC sec. 6)."""
    raw = check_keys(where, raw, *section_keys("match"))
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
        e = check_keys(f"{where}.exceptions", e, *section_keys("exception"))
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

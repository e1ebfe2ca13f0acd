"""The pieces of ``synthflow init``: a public file's columns typed, then written as YAML.

:mod:`synthflow.init.draft` drives them: kinds, domains, bins and groups from the file,
scalars quoted where YAML needs it, review comments on every drafted value.

Everything here is read from a file declared public; every value written is marked for
review (a spec's domains, bounds and categories must be public facts).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from synthflow.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

    from synthflow.init.codebook import Codebook

__all__ = [
    "MAX_BINS",
    "MAX_DRAFT_CATEGORIES",
    "REVIEW",
    "DraftColumn",
    "column_yaml",
    "flow",
    "line",
    "q",
    "type_column",
    "typed_columns",
]

MAX_BINS = 20
"""An int column's drafted bins: one per value up to this many values, else about this many."""
MAX_DRAFT_CATEGORIES = 1000
"""More distinct text values than this (or than half the rows) is an id or free text."""


@dataclass
class DraftColumn:
    """One column of the draft: its name, kind and the domain read or given for it."""

    name: str
    kind: str
    note: str
    domain: tuple[int, int] | None = None
    bounds: tuple[int, int] | None = None
    categories: tuple[str, ...] = ()
    bins: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    source: str | None = None
    distinct: int = 0
    origin: str = ""
    """Where the domain or categories come from (``the codebook FILE``); empty: observed
    in the public file."""


def _int_bins(lo: int, hi: int) -> tuple[list[str], list[int]]:
    """Bins covering [lo, hi] (as spec items) and each bin's first value."""
    if hi - lo + 1 <= MAX_BINS:
        return [f"{{from: {lo}, to: {hi}}}"], list(range(lo, hi + 1))
    width = next(
        w
        for e in range(19)
        for m in (1, 2, 2.5, 5)
        if (w := int(m * 10**e)) == m * 10**e and math.ceil((hi - lo + 1) / w) <= MAX_BINS
    )
    a = -(-lo // width) * width  # the first multiple of width at or above lo
    b = (hi + 1) // width * width - 1  # the last full bin's end at or below hi
    items, starts = [], [lo] if a > lo else []
    if a > lo:
        items.append(f'"<{a}"')
    items.append(f"{{from: {a}, to: {b}, width: {width}}}")
    starts += list(range(a, b + 1, width))
    if b < hi:
        items.append(f'">{b}"')
        starts.append(b + 1)
    return items, starts


def _groups(starts: list[int], values: pd.Series) -> list[str]:
    """Three coarse groups, cut at the bin starts nearest the public terciles."""
    if len(starts) < 4:
        return []
    inner = starts[1:]
    cuts = sorted({min(inner, key=lambda s: abs(s - q)) for q in values.quantile([1 / 3, 2 / 3])})
    if len(cuts) < 2:
        return []
    c1, c2 = cuts
    middle = str(c1) if c2 - 1 == c1 else f"{c1}-{c2 - 1}"
    return [f'"<{c1}"', f'"{middle}"', f'">{c2 - 1}"']


def _skip_hint(name: str) -> str:
    return f"; leave it out with --skip {name!r}"


def type_column(name: str, series: pd.Series, codebook: Codebook | None = None) -> DraftColumn:
    """The spec column drafted from one public column (DataError when it has no type).

    Its domain or categories come from ``codebook`` when it has an entry for the column
    (ConfigError when the entry does not fit), else from the public values themselves.
    """
    import pandas as pd  # noqa: PLC0415

    values = series.dropna()
    if values.empty:
        raise DataError(
            f"column {name!r} is empty in the public file; cannot type it" + _skip_hint(name)
        )
    if pd.api.types.is_datetime64_any_dtype(values):
        if codebook is not None:
            codebook.refuse_date(name)
        months = int(values.dt.month.nunique())
        return DraftColumn(
            name=f"{name}_month",
            kind="int",
            note=f"int: the month of the date column {name!r}",
            domain=(1, 12),
            bins=["{from: 1, to: 12}"],
            source=name,
            distinct=months,
        )
    distinct = int(values.nunique())
    if distinct < 2:
        raise DataError(
            f"column {name!r} holds a single value in the public file: nothing to synthesise"
            + _skip_hint(name)
        )
    if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
        text = values.astype(str)
        if distinct > MAX_DRAFT_CATEGORIES or (distinct > 50 and distinct > len(values) / 2):
            raise DataError(
                f"column {name!r} holds {distinct:,} distinct text values in {len(values):,} "
                "rows: an identifier or free text, not a category; group its values into "
                "public categories first" + _skip_hint(name)
            )
        cats = tuple(sorted(text.unique()))
        listed = codebook.categories(name, cats) if codebook is not None else None
        return DraftColumn(
            name=name,
            kind="categorical",
            note=f"categorical: {distinct} categories in the file",
            categories=listed or cats,
            bounds=(0, 1) if len(listed or cats) == 2 else None,
            distinct=distinct,
            origin=codebook.origin if codebook is not None and listed else "",
        )
    arr = values.to_numpy(dtype=float)
    if not (arr == arr.round()).all() or not math.isfinite(arr.max() - arr.min()):
        raise DataError(
            f"column {name!r} holds fractional numbers; a spec column is 'int' (whole numbers, "
            "binned) or 'categorical': store it in whole units (e.g. grams, tenths)"
            + _skip_hint(name)
        )
    lo, hi = int(arr.min()), int(arr.max())
    known = codebook.domain(name, (lo, hi)) if codebook is not None else None
    bins, starts = _int_bins(*(known or (lo, hi)))
    return DraftColumn(
        name=name,
        kind="int",
        note=f"int: {lo}..{hi} in the file ({distinct} values)",
        domain=known or (lo, hi),
        bounds=(lo, hi),
        bins=bins,
        groups=_groups(starts, values.astype(float)),
        distinct=distinct,
        origin=codebook.origin if codebook is not None and known else "",
    )


def typed_columns(
    frame: pd.DataFrame, where: str, skip: tuple[str, ...], codebook: Codebook | None
) -> list[DraftColumn]:
    """Every column of ``frame`` but ``skip``, typed (every problem named at once)."""
    unknown = sorted(set(skip) - {str(c) for c in frame.columns})
    if unknown:
        raise DataError(f"--skip {unknown}: not columns of {where}")
    if frame.empty:
        raise DataError(f"{where} has a header but no rows; draft from a public sample")
    if codebook is not None:
        codebook.check_columns([str(c) for c in frame.columns])
    cols, problems = [], []
    for c in frame.columns:
        if str(c) not in skip:
            try:
                cols.append(type_column(str(c), frame[c], codebook))
            except DataError as exc:  # every column that cannot be typed, at once
                problems.append(str(exc))
    if problems:
        many = f"{len(problems)} columns cannot be typed:\n  " if len(problems) > 1 else ""
        raise DataError(many + "\n  ".join(problems))
    if not cols:
        raise DataError("every column is skipped: nothing to draft")
    names = [c.name for c in cols]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DataError(
            f"the drafted columns {twice} would appear twice; rename the file's columns"
        )
    return cols


REVIEW = "# REVIEW: drafted from the public file"
OBSERVED = "# REVIEW: observed in the public file, not a codebook"
"""A domain or categories seen in the public sample: the private data may hold more."""
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"}


def q(value: object) -> str:
    """A YAML scalar: plain when safe, else double-quoted (JSON strings are YAML)."""
    s = str(value)
    if _PLAIN.match(s) and s.lower() not in _YAML_WORDS:
        return s
    return json.dumps(s, ensure_ascii=False)


def flow(items: list[str]) -> str:
    """A YAML flow list of already-quoted items."""
    return "[" + ", ".join(items) + "]"


def line(text: str, comment: str = "", width: int = 44) -> str:
    """``text`` and its comment, the comments aligned in one column."""
    if not comment:
        return text
    return f"{text:<{width}} {comment}" if len(text) < width else f"{text}  {comment}"


def _keyed(prefix: str, items: list[str], comment: str = REVIEW, width: int = 88) -> list[str]:
    """``prefix [items]`` with its comment; a long list wrapped, the comment above it."""
    one = f"{prefix}{flow(items)}"
    if len(line(one, comment)) <= width + 12:
        return [line(one, comment)]
    indent = " " * (len(prefix) - len(prefix.lstrip()))
    if len(one) <= width:
        return [f"{indent}{comment}", one]
    lines, current = [], f"{prefix}["
    for i, item in enumerate(items):
        piece = item + ("]" if i == len(items) - 1 else ",")
        if len(current) + len(piece) + 1 > width and not current.endswith("["):
            lines.append(current)
            current = " " * len(prefix) + " " + piece
        else:
            current += ("" if current.endswith("[") else " ") + piece
    return [f"{indent}{comment}", *lines, current]


def column_yaml(c: DraftColumn) -> list[str]:
    """The lines of one column under ``columns:``, every drafted value marked."""
    out = [line(f"  {q(c.name)}:", f"# REVIEW: {c.note}")]
    out.append(line('    description: ""', "# REVIEW: what it means (the codebook)"))
    out.append(line(f"    type: {c.kind}", REVIEW))
    known = f"# from {c.origin}" if c.origin else ""
    if c.domain:
        why = "# REVIEW: the months of the year" if c.source else known or OBSERVED
        out.append(line(f"    domain: [{c.domain[0]}, {c.domain[1]}]", why))
    if c.categories:
        out += _keyed("    categories: ", [q(x) for x in c.categories], known or OBSERVED)
    if c.bounds:
        out.append(line(f"    bounds: [{c.bounds[0]}, {c.bounds[1]}]", REVIEW))
    if c.groups:
        out += _keyed("    groups: ", c.groups, f"{REVIEW} (terciles)")
    out.append("    transformations:")
    if c.kind == "categorical":
        out.append(line("      a: identity", "# REVIEW: one bin per category"))
    else:
        out += _keyed("      a: ", c.bins)
    return out

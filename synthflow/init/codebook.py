"""``synthflow init --domains FILE``: public domains from a codebook, not from the sample.

A public sample holds only the values it happened to draw; the private data may hold
others (an older mother, a rarer country), which the release then refuses after draw,
sweep and plan. A codebook gives each column's documented domain instead. Its format,
JSON or YAML, is one mapping of the public file's column names to:

- an ``int`` column (whole numbers in the file): its range ``[MIN, MAX]`` or
  ``{min: MIN, max: MAX}``, or a size ``N``, the codes ``0 .. N-1`` (the ``domain.json``
  of Private-PGM and dpmm);
- a ``categorical`` column (text or booleans in the file): the list of its categories.

Columns left out keep the domain observed in the public file (marked for review in the
draft). A codebook names public facts only: it must cover every value of the public file,
and it is refused, naming the entry and the fix, when it names a column the file lacks or
gives an entry of the wrong form.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthflow.config.values import MAX_CATEGORIES, brief
from synthflow.errors import ConfigError

__all__ = ["Codebook", "read_codebook"]

_FORMAT = (
    "an int column's entry is [MIN, MAX], {min: MIN, max: MAX} or a size N (the codes "
    "0..N-1); a text column's entry is the list of its categories"
)


@dataclass(frozen=True)
class Codebook:
    """A codebook's entries, as read; each parsed when its column is typed."""

    origin: str
    """Where the entries come from, for the draft's comments (``the codebook FILE``)."""
    entries: Mapping[str, Any]

    def check_columns(self, columns: Collection[str]) -> None:
        """Refuse entries naming no column of the public file (a typo, another file)."""
        unknown = sorted(set(self.entries) - set(columns))
        if unknown:
            raise ConfigError(
                f"{self.origin}: {unknown} are not columns of the public data (its columns: "
                f"{sorted(columns)}); fix the names or remove those entries"
            )

    def domain(self, name: str, observed: tuple[int, int]) -> tuple[int, int] | None:
        """The int column ``name``'s public range, if the codebook gives one.

        Raises:
            ConfigError: The entry is not a range or a size, or does not cover
                ``observed``, the public file's own range.
        """
        if name not in self.entries:
            return None
        raw = self.entries[name]
        where = f"{self.origin}: column {name!r}"
        if isinstance(raw, Mapping) and set(raw) == {"min", "max"}:
            pair = [raw["min"], raw["max"]]
        elif isinstance(raw, list) and len(raw) == 2:
            pair = list(raw)
        elif _whole(raw):
            if raw < 1:
                raise ConfigError(f"{where}: a size must be at least 1, got {raw}")
            pair = [0, raw - 1]
        else:
            raise ConfigError(
                f"{where} holds whole numbers in the public file, so its entry is [MIN, MAX], "
                f"{{min: MIN, max: MAX}} or a size N (the codes 0..N-1); got {brief(raw)}"
            )
        if not all(_whole(v) for v in pair):
            raise ConfigError(f"{where}: the range's ends must be whole numbers, got {pair}")
        lo, hi = int(pair[0]), int(pair[1])
        if lo > hi:
            raise ConfigError(f"{where}: the range [{lo}, {hi}] has its min above its max")
        if observed[0] < lo or observed[1] > hi:
            raise ConfigError(
                f"{where}: the range [{lo}, {hi}] does not cover the public file, whose "
                f"values run {observed[0]}..{observed[1]}; a codebook's range holds every "
                "value the data may take: fix the entry (or the public file)"
            )
        return lo, hi

    def categories(self, name: str, observed: Collection[str]) -> tuple[str, ...] | None:
        """The categorical column ``name``'s public categories, if the codebook lists them.

        Raises:
            ConfigError: The entry is not a list of distinct categories, or lacks a
                category of the public file.
        """
        if name not in self.entries:
            return None
        raw = self.entries[name]
        where = f"{self.origin}: column {name!r}"
        if not (
            isinstance(raw, list)
            and len(raw) >= 2
            and all(isinstance(c, (str, int, float, bool)) for c in raw)
        ):
            raise ConfigError(
                f"{where} holds text in the public file, so its entry is the list of its "
                f"categories (at least two); got {brief(raw)}"
            )
        cats = tuple(str(c) for c in raw)
        if len(set(cats)) != len(cats) or len(cats) > MAX_CATEGORIES:
            raise ConfigError(
                f"{where}: the categories must be distinct, at most {MAX_CATEGORIES:,}"
            )
        missing = sorted(set(observed) - set(cats))
        if missing:
            raise ConfigError(
                f"{where}: the public file holds categories the codebook lacks, {missing}; "
                "a codebook lists every category the data may hold: add them"
            )
        return cats

    def refuse_date(self, name: str) -> None:
        """A date column is drafted as its month (1..12): no codebook entry applies."""
        if name in self.entries:
            raise ConfigError(
                f"{self.origin}: column {name!r} is a date; its month's domain is 1..12 "
                "already: remove its entry"
            )


def _whole(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value == int(value)
    )


def read_codebook(source: str | Path | Mapping[str, Any]) -> Codebook:
    """A codebook from a JSON or YAML file (or, in Python, a mapping).

    Raises:
        ConfigError: The file is missing or unreadable, or is not one mapping of column
            names to entries.
    """
    import yaml  # noqa: PLC0415

    from synthflow.config.values import read_yaml  # noqa: PLC0415

    if isinstance(source, Mapping):
        origin, raw = "the codebook (domains=)", dict(source)
    else:
        path = Path(source)
        origin = f"the codebook {path.name}"
        if not path.is_file():
            raise ConfigError(
                f"--domains {str(path)!r}: no such file; give a JSON or YAML codebook"
            )
        try:
            raw = read_yaml(path.read_bytes())
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f" (line {mark.line + 1})" if mark is not None else ""
            raise ConfigError(f"{origin} is not valid JSON or YAML{line}") from None
        except ConfigError as exc:
            raise ConfigError(f"{origin}: {exc}") from None
    if not isinstance(raw, dict) or not raw or not all(isinstance(k, str) for k in raw):
        raise ConfigError(
            f"{origin} must be one mapping of column names to entries ({_FORMAT}); got {brief(raw)}"
        )
    return Codebook(origin=origin, entries=raw)

"""Reading a spec's values: the YAML loader, its size limits, and the checks every section uses.

Nothing here knows the spec's sections; :mod:`synthflow.loader` does.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from synthflow.errors import ConfigError

__all__ = [
    "MAX_CATEGORIES",
    "MAX_INTEGER",
    "MAX_SPEC_BYTES",
    "MAX_SPEC_DEPTH",
    "MAX_SPEC_NODES",
    "brief",
    "check_keys",
    "number",
    "read_yaml",
    "text",
]

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


def check_keys(where: str, raw: Any, required: set[str], optional: set[str]) -> dict[str, Any]:
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


def number(
    where: str,
    value: Any,
    *,
    lo: float = -math.inf,
    lo_open: bool = False,
    hi: float = math.inf,
    hi_open: bool = False,
) -> float:
    """A finite number within ``[lo, hi]`` (an end excluded where ``*_open``), as a float."""
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


def text(where: str, value: Any, limit: int) -> str:
    """An optional one-line text field (datasheet metadata).

    A number is read as its text (``period: 1994``: YAML reads a year as a number).
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or len(value) > limit:
        raise ConfigError(
            f"{where}: expected text of at most {limit} characters, got {brief(value)}"
        )
    return " ".join(value.split())

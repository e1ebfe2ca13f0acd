"""The release's provenance: the spec's ``datasheet`` section, or a ``--datasheet`` file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from synthflow.config.model import DatasheetSpec
from synthflow.config.sections import section_keys
from synthflow.config.values import check_keys, read_yaml, text
from synthflow.errors import ConfigError

__all__ = ["load_datasheet", "parse_datasheet"]

_HTML_TAG = re.compile(
    r"<\s*(/|!|\?|(script|style|iframe|img|svg|object|embed|link|meta|a|b|i|u|p|div|span|"
    r"br|hr|table|tr|td|th|form|input|button|details|summary|h[1-6])\b)",
    re.IGNORECASE,
)
"""An HTML tag in a datasheet value (a template's ``<what ...>`` placeholder is not one)."""


def parse_datasheet(raw: Any) -> DatasheetSpec:
    """The ``datasheet`` section (or a ``--datasheet`` file): one-line provenance texts."""
    d = check_keys("datasheet", raw or {}, *section_keys("datasheet"))
    values = {k: text(f"datasheet.{k}", d.get(k, ""), 1000) for k in d}
    for k, v in values.items():
        # Published in README.md (Markdown, shown as HTML by most viewers): a tag would
        # render. (Line breaks are folded into one line by text().)
        if _HTML_TAG.search(v):
            raise ConfigError(
                f"datasheet.{k}: plain text is expected (no HTML tag); write the text "
                "without markup"
            )
    return DatasheetSpec(**values)


DATASHEET_BYTES = 200_000
"""The largest datasheet file: a page of provenance, never a data table."""


def load_datasheet(path: str | Path) -> DatasheetSpec:
    """A datasheet file (``release --datasheet``): the spec's ``datasheet`` keys in YAML.

    docs/datasheet-template.yaml is a template.

    Raises:
        ConfigError: A missing or malformed file, or an unknown key (named).
    """
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"--datasheet {str(p)!r} is a directory; give the datasheet's YAML file")
    if not p.is_file():
        raise ConfigError(
            f"--datasheet {str(p)!r} does not exist; docs/datasheet-template.yaml is a template"
        )
    hint = (
        "a datasheet is a short YAML file of the spec's datasheet keys "
        "(docs/datasheet-template.yaml), not the data: is this the data file?"
    )
    size = p.stat().st_size
    if size > DATASHEET_BYTES:
        raise ConfigError(
            f"--datasheet {str(p)!r} is {size:,} bytes, more than a datasheet's "
            f"{DATASHEET_BYTES:,}; {hint}"
        )
    try:
        raw = read_yaml(p.read_bytes())
    except yaml.YAMLError:
        raise ConfigError(f"--datasheet {str(p)!r} is not valid YAML; {hint}") from None
    if not isinstance(raw, dict):
        raise ConfigError(
            f"--datasheet {str(p)!r} holds no mapping of datasheet keys "
            f"(it holds {type(raw).__name__}); {hint}"
        )
    try:
        return parse_datasheet(raw)
    except ConfigError as exc:
        raise ConfigError(f"--datasheet {str(p)!r}: {exc}") from None

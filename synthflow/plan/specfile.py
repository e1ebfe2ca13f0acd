"""Write the planned spec: the input spec's text with only its budgets changed.

The budgets are replaced in place in the YAML text, so the steward's comments and
layout survive; the result is then loaded and compared with the input spec field by
field: anything but ``privacy.generator_epsilon`` and the criteria's ``epsilon``
differing is a bug and raises rather than writing a wrong spec.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

from synthflow._util.files import replaced_atomically
from synthflow.config.model import ReleaseSpec
from synthflow.errors import ConfigError
from synthflow.loader import load_spec

__all__ = [
    "planned_spec_text",
    "replace_in_criterion",
    "replace_in_privacy",
    "write_planned_spec",
]

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def _number(x: float) -> str:
    text = repr(float(x))
    return text if "e" not in text else f"{x:.6g}"


def _replace_after(text: str, start: int, stop: int, *, key: str, value: float, what: str) -> str:
    pattern = re.compile(rf"(?<![A-Za-z_]){key}:(\s*)({_NUMBER})")
    m = pattern.search(text, start, stop)
    if m is None:
        raise ConfigError(f"cannot find {what}'s '{key}:' in the spec text to plan it")
    return text[: m.start(2)] + _number(value) + text[m.end(2) :]


_NAME = re.compile(r"(?<![A-Za-z_])name:\s*([A-Za-z0-9_.-]+)")


def replace_in_criterion(text: str, name: str, *, key: str, value: float) -> str:
    """``text`` with the number of criterion ``name``'s ``key:`` replaced by ``value``.

    The criterion's block runs from its ``name:`` to the next ``name:`` (its own keys,
    block or flow style). Raises ConfigError when the name is not found exactly once or
    the key is not a number there: nothing is guessed.
    """
    names = list(_NAME.finditer(text))
    hits = [i for i, m in enumerate(names) if m.group(1) == name]
    if len(hits) != 1:
        raise ConfigError(f"cannot find criterion {name!r} once in the spec text")
    i = hits[0]
    stop = names[i + 1].start() if i + 1 < len(names) else len(text)
    return _replace_after(
        text, names[i].end(), stop, key=key, value=value, what=f"criterion {name!r}"
    )


def replace_in_privacy(text: str, *, key: str, value: float) -> str:
    """``text`` with the number of the top-level ``privacy:`` block's ``key:`` replaced."""
    privacy = re.search(r"^privacy:", text, re.M)
    if privacy is None:
        raise ConfigError("the spec text has no top-level 'privacy:' block")
    return _replace_after(text, privacy.end(), len(text), key=key, value=value, what="privacy")


def planned_spec_text(
    source: str, *, generator_epsilon: float, epsilons: dict[str, float], header: str
) -> str:
    """``source`` (a spec's YAML text) with the generator and criteria budgets replaced."""
    text = replace_in_privacy(source, key="generator_epsilon", value=generator_epsilon)
    for name, eps in epsilons.items():
        text = replace_in_criterion(text, name, key="epsilon", value=eps)
    return header + text


def write_planned_spec(
    spec: ReleaseSpec,
    out: Path,
    *,
    generator_epsilon: float,
    epsilons: dict[str, float],
    header: str,
) -> ReleaseSpec:
    """Write the planned spec to ``out`` (atomically) and return it loaded.

    Raises:
        ConfigError: If the spec text cannot be edited safely or the result differs from
            the input in anything but its budgets.
    """
    source = Path(spec.path).read_text("utf-8")
    text = planned_spec_text(
        source, generator_epsilon=generator_epsilon, epsilons=epsilons, header=header
    )
    sample = _moved_public_sample(spec, out)
    if sample is not None:  # a file beside the input spec: named from the new place
        text, n = re.subn(
            r"(?m)^public_sample:.*$",
            lambda _: f"public_sample: {json.dumps(sample)}  # relative to this file",
            text,
        )
        if n != 1:
            raise ConfigError("cannot find the spec's 'public_sample:' line to move it")
    with replaced_atomically(out) as tmp:  # replaced only once the planned spec checks out
        tmp.write_text(text, encoding="utf-8")
        try:
            planned = load_spec(tmp)
        except ConfigError as exc:
            raise ConfigError(
                f"the planned spec does not load ({exc}); please report this"
            ) from exc
        expected = dataclasses.replace(
            spec,
            public_sample=spec.public_sample if sample is None else sample,
            privacy=dataclasses.replace(spec.privacy, generator_epsilon=generator_epsilon),
            criteria=tuple(dataclasses.replace(c, epsilon=epsilons[c.name]) for c in spec.criteria),
            path=planned.path,
            sha256=planned.sha256,
        )
        if planned != expected:
            raise ConfigError(
                "the planned spec differs from the input in more than its budgets; nothing was "
                "written (please report this)"
            )
    return dataclasses.replace(planned, path=str(out))


def _moved_public_sample(spec: ReleaseSpec, out: Path) -> str | None:
    """``public_sample`` as seen from ``out``'s folder, or None when it need not change.

    It changes when the input spec names a file beside itself that the new place would
    not find (a bundled public data file is found by name from anywhere).
    """
    if not spec.public_sample:
        return None
    beside = Path(spec.path).parent / spec.public_sample
    if not beside.is_file():
        return None  # a bundled public data file: found by name from anywhere
    there = out.parent / spec.public_sample
    if there.is_file() and there.resolve() == beside.resolve():
        return None
    return os.path.relpath(beside.resolve(), out.parent.resolve())

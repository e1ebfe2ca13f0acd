"""Loading a release spec: :func:`load_spec` reads one YAML file into a :class:`ReleaseSpec`."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from pathlib import Path
from typing import Any

import yaml

from synthflow._grids import validate_grids
from synthflow._ops import COMPARATORS
from synthflow.config.columns import parse_columns, parse_constraints
from synthflow.config.datasheet import load_datasheet, parse_datasheet
from synthflow.config.model import (
    Column,
    DisclosureSpec,
    ModelGrid,
    PrivacySpec,
    ReleaseSpec,
    SamplingSpec,
)
from synthflow.config.sections import section_keys
from synthflow.config.values import MAX_SPEC_BYTES, brief, check_keys, number, read_yaml, text
from synthflow.criteria.registry import parse_criteria
from synthflow.errors import ConfigError

__all__ = ["load_datasheet", "load_spec", "parse_datasheet", "with_generator_epsilon"]

_OPS = set(COMPARATORS)


def _parse_models(raw: Any) -> tuple[ModelGrid, ...]:
    if not isinstance(raw, list) or not raw:
        raise ConfigError("space.models: expected a non-empty list of {model, grid} entries")
    out = []
    for i, m in enumerate(raw):
        where = f"space.models[{i}]"
        m = check_keys(where, m, *section_keys("model"))
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


def _parse_disclosure(raw: Any, columns: dict[str, Column]) -> DisclosureSpec:
    d = check_keys("disclosure", raw or {}, *section_keys("disclosure"))
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


def _published(raw: dict[str, Any]) -> bool:
    value = raw.get("public_sample_published", False)
    if not isinstance(value, bool):
        raise ConfigError(f"public_sample_published: expected true or false, got {brief(value)}")
    if value and not raw.get("public_sample"):
        raise ConfigError(
            "public_sample_published: true declares the public_sample published before the "
            "release, but the spec names no public_sample: drop the key or name the file"
        )
    return value


def load_spec(path: str | Path) -> ReleaseSpec:
    """Read and validate a release spec.

    Raises:
        ConfigError: With the offending key, its value and how to fix it.
    """
    from synthflow.resources import bundled_specs, resolve_spec_path  # noqa: PLC0415

    p = resolve_spec_path(path)
    if p.exists() and not p.is_file():
        what = "a directory" if p.is_dir() else "not a regular file (a pipe or a device)"
        raise ConfigError(f"spec file {str(p)!r} is {what}; pass the spec's YAML file")
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
    raw = check_keys(str(p), raw, *section_keys("root"))
    inp = check_keys("input", raw.get("input") or {}, *section_keys("input"))
    columns = parse_columns(raw["columns"], inp.get("mapping") or {})
    pr = check_keys("privacy", raw["privacy"], *section_keys("privacy"))
    if pr.get("neighbouring", "replace_one") != "replace_one":
        raise ConfigError(
            "privacy.neighbouring: only 'replace_one' (n public) is supported, got "
            f"{pr['neighbouring']!r}"
        )
    privacy = PrivacySpec(
        total_epsilon=number("privacy.total_epsilon", pr["total_epsilon"], lo=0, lo_open=True),
        generator_epsilon=number(
            "privacy.generator_epsilon", pr["generator_epsilon"], lo=0, lo_open=True
        ),
        total_delta=number(
            "privacy.total_delta", pr.get("total_delta", 0.0), lo=0, hi=1, hi_open=True
        ),
    )
    raw_rules, syn_rules = parse_constraints(raw["constraints"], columns)
    acc = check_keys("acceptance", raw["acceptance"], *section_keys("acceptance"))
    criteria = parse_criteria(acc["criteria"], columns)
    space = check_keys("space", raw["space"], *section_keys("space"))
    mc = space["min_count"]
    if not (isinstance(mc, list) and mc and all(isinstance(x, int) and x >= 1 for x in mc)):
        raise ConfigError(f"space.min_count: expected a list of integers >= 1, got {mc!r}")
    samp = check_keys("sampling", raw.get("sampling") or {}, *section_keys("sampling"))
    sampling = SamplingSpec(
        max_rounds=int(samp.get("max_rounds", 50)),
        oversample=number("sampling.oversample", samp.get("oversample", 1.2), lo=1),
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
        datasheet=parse_datasheet(raw.get("datasheet")),
        disclosure=_parse_disclosure(raw.get("disclosure"), columns),
        description=text("description", raw.get("description", ""), 2000),
        public_sample=text("public_sample", raw.get("public_sample", ""), 400),
        public_sample_published=_published(raw),
        path=str(p),
        sha256=hashlib.sha256(data).hexdigest(),
    )
    for c in criteria:  # the kinds' checks that need the whole spec (public_sample, ...)
        c.impl.check_spec(c, spec)
    over = _over_total(spec, spec.privacy.generator_epsilon)
    if over:
        raise ConfigError(
            f"privacy: generator_epsilon {privacy.generator_epsilon:g} plus {over} exceed "
            f"total_epsilon {privacy.total_epsilon:g}; raise the total or lower the budgets"
        )
    spent_delta = math.fsum(c.impl.delta(c) for c in criteria)
    if spent_delta > privacy.total_delta:
        raise ConfigError(
            f"acceptance: the criteria spend delta {spent_delta:g} but privacy.total_delta is "
            f"{privacy.total_delta:g}; raise total_delta or use Laplace noise"
        )
    # Validate the configuration space (model names and hyperparameters) eagerly.
    validate_grids(spec)
    return spec


def _over_total(spec: ReleaseSpec, generator_epsilon: float) -> str:
    """What of the cheapest release exceeds the total ("" if it fits): the loader's check.

    With pure criteria the cheapest release is a single attempt charged by basic
    composition, the generator's budget plus every criterion's: "generator epsilon X
    plus <this> exceed ...". A Gaussian criterion (the regression fit) composes with a
    zCDP generator in zCDP, converted once at the sum of their deltas, for less than
    their sum, and even less than the generator's own epsilon at its own delta; only the
    shortlist's generators decide how much (``release/cost.py``). Then only the pure
    criteria are checked here, and the exact cost by ``validate``, ``plan`` and
    ``release``, before any charge.
    """
    total = spec.privacy.total_epsilon
    if generator_epsilon + spec.evaluation_epsilon <= total:
        return ""
    if any(c.impl.delta(c) > 0 for c in spec.criteria):
        pure = math.fsum(c.epsilon for c in spec.criteria if c.impl.delta(c) == 0)
        if pure <= total:
            return ""
        return f"the pure-DP criteria's budgets {pure:g} (alone)"
    return f"the criteria budgets {spec.evaluation_epsilon:g}"


def with_generator_epsilon(spec: ReleaseSpec, epsilon: float) -> ReleaseSpec:
    """``spec`` with another generator budget (a swept eps_gen on public data).

    The file hash stays the spec's: stored runs record the budget they ran at.

    Raises:
        ConfigError: If ``epsilon`` is not a finite positive number, or it and the
            criteria budgets exceed ``total_epsilon``.
    """
    if not (isinstance(epsilon, int | float) and math.isfinite(epsilon) and epsilon > 0):
        raise ConfigError(f"generator epsilon ({epsilon!r}) must be a finite number > 0")
    over = _over_total(spec, epsilon)
    if over:
        raise ConfigError(
            f"generator epsilon {epsilon:g} plus {over} exceed the spec's total_epsilon "
            f"{spec.privacy.total_epsilon:g}; choose a smaller generator epsilon"
        )
    if epsilon == spec.privacy.generator_epsilon:
        return spec
    privacy = dataclasses.replace(spec.privacy, generator_epsilon=float(epsilon))
    return dataclasses.replace(spec, privacy=privacy)

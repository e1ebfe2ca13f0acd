"""The release spec's JSON Schema (synthflow/spec_schema.py) and ``synthflow validate``."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest

from synthflow.cli import main
from synthflow.errors import ConfigError
from synthflow.loader import load_spec, read_yaml
from synthflow.resources import bundled_spec, bundled_specs
from synthflow.spec_schema import SPEC_SCHEMA, schema_errors, schema_json, schema_path

# tables_births is a table-protection spec (synthflow/tables/_spec.py), not a release spec.
RELEASE_SPECS = [name for name in bundled_specs() if name != "tables_births"]


def _raw(name: str) -> dict:
    return read_yaml(bundled_spec(name).read_bytes())


def _write(tmp_path: Path, raw: dict) -> Path:
    # JSON is YAML: the loader reads it as it reads the spec files.
    path = tmp_path / "spec.yaml"
    path.write_text(json.dumps(raw))
    return path


def test_shipped_file_is_the_schema():
    # `python -m synthflow.spec_schema > synthflow/spec.schema.json` regenerates it.
    assert schema_path().read_text() == schema_json()


def test_the_schema_is_valid_draft_2020_12():
    jsonschema.Draft202012Validator.check_schema(SPEC_SCHEMA)


def test_release_specs_are_found():
    assert {"births", "affairs", "example_small", "wide_census"} <= set(RELEASE_SPECS)


@pytest.mark.parametrize("name", RELEASE_SPECS)
def test_every_bundled_spec_validates(name):
    raw = _raw(name)
    jsonschema.validate(raw, SPEC_SCHEMA, cls=jsonschema.Draft202012Validator)
    assert schema_errors(raw) == []
    load_spec(name)  # and the loader, whose key sets come from the schema, agrees


@pytest.mark.parametrize(
    "where, edit",
    [
        ("(top level)", lambda r: r.__setitem__("colour", "blue")),
        ("privacy", lambda r: r["privacy"].__setitem__("total_epsilom", 5)),
        ("columns.birth_weight", lambda r: r["columns"]["birth_weight"].__setitem__("scale", 2)),
        ("acceptance.criteria[0]", lambda r: r["acceptance"]["criteria"][0].__setitem__("tol", 1)),
        ("space.models[0]", lambda r: r["space"]["models"][0].__setitem__("grids", {})),
    ],
)
def test_an_unknown_key_is_named(tmp_path, capsys, where, edit):
    raw = copy.deepcopy(_raw("births-2024"))
    edit(raw)
    errors = schema_errors(raw)
    assert len(errors) == 1 and errors[0].startswith(f"{where}:")
    unknown = errors[0].split("(")[-1].split("'")[1]
    # A section names the key as unexpected; a criterion as not one of its kind's keys.
    assert f"'{unknown}' was unexpected" in errors[0] or errors[0].startswith(
        f"{where}: '{unknown}' is not one of ['name', 'kind', 'threshold', 'epsilon'"
    )
    # The loader refuses it too, naming the key ...
    with pytest.raises(ConfigError, match=f"unknown key.*{unknown}"):
        load_spec(_write(tmp_path, raw))
    # ... and `synthflow validate` reports it as an input error (exit 2).
    assert main(["validate", str(_write(tmp_path, raw))]) == 2
    assert f"'{unknown}'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "edit",
    [
        lambda r: r["acceptance"]["criteria"][0].__setitem__("threshold", "0.01"),
        lambda r: r["acceptance"]["criteria"][0].__setitem__("epsilon", 0),
        lambda r: r["acceptance"]["criteria"][0].__setitem__("kind", "marginal"),
        lambda r: r["acceptance"]["criteria"][0].__setitem__("max_order", 0),
        lambda r: r["privacy"].__setitem__("total_delta", 1.0),
        lambda r: r["privacy"].__setitem__("neighbouring", "add_remove"),
        lambda r: r["columns"]["parity"].__setitem__("type", "float"),
        lambda r: r["columns"]["parity"]["transformations"].__setitem__("A", ["1", ">1"]),
        lambda r: r["space"].__setitem__("min_count", [0]),
        lambda r: r["disclosure"].__setitem__("max_msu_size", 9),
        lambda r: r.pop("space"),
    ],
)
def test_schema_and_loader_refuse_the_same_type_errors(tmp_path, edit):
    raw = copy.deepcopy(_raw("births-2024"))
    edit(raw)
    assert schema_errors(raw), "the schema accepted it"
    with pytest.raises(ConfigError):
        load_spec(_write(tmp_path, raw))


def test_validate_lists_every_schema_problem_at_once(tmp_path, capsys):
    raw = copy.deepcopy(_raw("births-2024"))
    raw["colour"] = "blue"
    raw["acceptance"]["criteria"][1]["threshold"] = "two"
    assert main(["validate", str(_write(tmp_path, raw))]) == 2
    err = capsys.readouterr().err
    assert "2 problem(s)" in err and "'colour' was unexpected" in err
    assert "acceptance.criteria[1].threshold: 'two' is not of type 'number'" in err


def test_schema_command(tmp_path, capsys):
    assert main(["schema"]) == 0
    assert Path(capsys.readouterr().out.strip()) == schema_path()
    out = tmp_path / "s.json"
    assert main(["schema", "--json", str(out)]) == 0
    assert json.loads(out.read_text()) == SPEC_SCHEMA
    assert main(["schema", "--json", str(out)]) == 2  # never overwritten silently
    assert main(["schema", "--json", str(out), "--force"]) == 0


def test_each_kinds_keys_in_the_schema_are_its_params_fields():
    import dataclasses

    from synthflow.criteria import KINDS
    from synthflow.criteria.registry import parse_criterion
    from synthflow.errors import ConfigError
    from synthflow.spec_schema import CRITERION_KINDS

    assert CRITERION_KINDS == tuple(KINDS)
    clauses = SPEC_SCHEMA["$defs"]["criterion"]["allOf"]
    by_kind = {c["if"]["properties"]["kind"]["const"]: c["then"] for c in clauses}
    assert set(by_kind) == set(KINDS)
    for name, kind in KINDS.items():
        fields = [f.name for f in dataclasses.fields(kind.Params)]
        assert by_kind[name]["propertyNames"]["enum"][4:] == fields
        # a key of another kind is refused for this one, by the schema and the loader
        foreign = next(
            k
            for k in SPEC_SCHEMA["$defs"]["criterion"]["properties"]
            if k not in ["name", "kind", "threshold", "epsilon", *fields]
        )
        assert kind.Params.impl is kind
        raw = {"name": "x", "kind": name, "threshold": 1, "epsilon": 1, foreign: 1}
        with pytest.raises(ConfigError, match=rf"unknown key\(s\) \['{foreign}'\] for a {name}"):
            parse_criterion("here", raw, {})

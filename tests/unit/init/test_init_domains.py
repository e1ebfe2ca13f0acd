"""#61 item 5: ``init --domains CODEBOOK`` and ``validate --data``, before any work.

A spec drafted from a public sample holds the sample's observed ranges; a private value
outside them surfaced only at the release, after draw, sweep and plan. The generated
wide census table (public by construction) stands in for both: a public sample of 400
rows misses ages, incomes and countries that the 6,000 private rows hold. ``validate
--data`` refuses those rows up front, naming every column and no value; with the table's
codebook (``configs/wide_census.yaml``) ``init`` drafts the documented domains, marks
them as from the codebook, and ``validate --data`` passes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from synthflow.cli import main
from synthflow.loader import load_spec
from synthflow.public.wide import make_wide_table

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("domains")
    public, private = tmp / "public.csv", tmp / "private.csv"
    make_wide_table(400, seed=2).to_csv(public, index=False)
    make_wide_table(6000, seed=1).to_csv(private, index=False)
    # The table's published codebook: int columns as [MIN, MAX] or {min, max}, text
    # columns as their categories; 'sex' left out (its domain stays the observed one).
    book: dict[str, object] = {}
    for name, col in yaml.safe_load((REPO / "configs" / "wide_census.yaml").read_text())[
        "columns"
    ].items():
        if name == "sex":
            continue
        if col["type"] == "int":
            lo, hi = col["domain"]
            book[name] = [lo, hi] if len(book) % 2 else {"min": lo, "max": hi}
        else:
            book[name] = col["categories"]
    (tmp / "codebook.yaml").write_text(yaml.safe_dump(book))
    return {"public": public, "private": private, "codebook": tmp / "codebook.yaml"}


def _outside(public: Path, private: Path) -> tuple[set[str], set[str]]:
    """The columns whose private values fall outside the public sample's, and those values."""
    pub, priv = pd.read_csv(public), pd.read_csv(private)
    columns, values = set(), set()
    for c in pub.columns:
        if pd.api.types.is_numeric_dtype(pub[c]):
            out = priv[c][(priv[c] < pub[c].min()) | (priv[c] > pub[c].max())]
        else:
            out = priv[c][~priv[c].isin(set(pub[c]))]
        if len(out):
            columns.add(c)
            values |= {str(v) for v in out.unique()}
    return columns, values


def _init(files: dict[str, Path], out: Path, *extra: str) -> int:
    argv = ["-q", "init", "--data", str(files["public"]), "--public", "--out", str(out)]
    return main([*argv, "--rows", "6000", *extra])


def test_validate_data_refuses_values_outside_the_drafted_domains_naming_no_value(
    files, tmp_path, capsys
):
    columns, values = _outside(files["public"], files["private"])
    assert {"age", "income", "country"} <= columns  # the sample misses them
    spec = tmp_path / "spec.yaml"
    assert _init(files, spec) == 0
    text = spec.read_text()
    # Every observed domain says so: one REVIEW line per int domain and category list.
    observed = text.count("observed in the public file, not a codebook")
    doc = yaml.safe_load(text)["columns"]
    assert observed == len(doc) and "from the codebook" not in text
    capsys.readouterr()
    assert main(["validate", str(spec), "--data", str(files["private"])]) == 2
    captured = capsys.readouterr()
    err = captured.err
    assert "Traceback" not in err and "valid;" not in captured.out
    for c in columns:  # every failing column named at once, with the fix
        assert repr(c) in err, c
    assert "--domains" in err and "clean the data" in err
    # no private value, nor a count of rows, is shown
    shown = set(re.findall(r"[A-Za-z0-9_]+", err))
    assert not (values - {str(v) for c in doc.values() for v in c.get("domain", [])}) & shown
    # The public sample itself fits its own draft.
    assert main(["validate", str(spec), "--data", str(files["public"])]) == 0
    assert "every value lies in the spec's public domains" in capsys.readouterr().out


def test_a_codebook_gives_the_documented_domains_and_validate_passes(files, tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    assert _init(files, spec, "--domains", str(files["codebook"])) == 0
    text = spec.read_text()
    book = yaml.safe_load(files["codebook"].read_text())
    loaded = load_spec(spec)
    for name, entry in book.items():
        col = loaded.column(name)
        if col.kind == "int":
            lo, hi = entry if isinstance(entry, list) else (entry["min"], entry["max"])
            assert col.domain == (lo, hi), name
        else:
            assert col.categories == tuple(entry), name
    lines = text.splitlines()

    def block(name: str) -> str:  # the column's first lines: its domain or categories
        i = next(k for k, x in enumerate(lines) if x.startswith(f"  {name}:"))
        return "\n".join(lines[i : i + 6])

    for name in book:
        assert "# from the codebook codebook.yaml" in block(name), name
    assert "# REVIEW: observed in the public file" in block("sex")
    assert "from the codebook" not in block("sex")
    assert main(["validate", str(spec), "--data", str(files["private"])]) == 0
    out = capsys.readouterr().out
    assert "valid;" in out and "every value lies in the spec's public domains" in out


@pytest.mark.parametrize(
    "entry, why",
    [
        ({"no_such_column": [0, 1]}, r"\['no_such_column'\] are not columns of the public data"),
        ({"age": ["a", "b", "c"]}, "column 'age' holds whole numbers in the public file"),
        ({"age": [30, 60]}, r"column 'age': the range \[30, 60\] does not cover the public"),
        ({"age": {"min": 60, "max": 30}}, "min above its max"),
        ({"country": {"min": 0, "max": 5}}, "column 'country' holds text in the public file"),
        ({"country": ["c00", "c01"]}, "the public file holds categories the codebook lacks"),
        ([["age", 0, 99]], "must be one mapping of column names to entries"),
    ],
)
def test_a_bad_codebook_is_refused_with_the_entry_and_the_fix(files, tmp_path, capsys, entry, why):
    book, spec = tmp_path / "book.json", tmp_path / "spec.yaml"
    book.write_text(json.dumps(entry))  # JSON is a codebook format too
    assert _init(files, spec, "--domains", str(book)) == 2
    err = capsys.readouterr().err
    assert re.search(why, err) and "Traceback" not in err, err
    assert not spec.exists()


def test_a_size_is_the_codes_zero_to_n_minus_one(files, tmp_path):
    book, spec = tmp_path / "book.json", tmp_path / "spec.yaml"
    book.write_text(json.dumps({"occupation": 30, "hours": 100}))
    assert _init(files, spec, "--domains", str(book)) == 0
    loaded = load_spec(spec)
    assert loaded.column("occupation").domain == (0, 29)
    assert loaded.column("hours").domain == (0, 99)

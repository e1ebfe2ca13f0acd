"""``synthflow init``: a spec drafted from a public file, valid and marked for review."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthflow.cli import main
from synthflow.data import load_data
from synthflow.loader import load_spec
from synthflow.space import expand_space

# Lines that hold a drafted value (every one must carry a REVIEW comment, on the line or
# on the comment line just above a wrapped list).
_DRAFTED = re.compile(r"^\s+(type|domain|bounds|categories|groups|a):")


@pytest.fixture(scope="module")
def wide_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("wide") / "wide.csv"
    assert main(["public-data", "wide", "--seed", "1", "--rows", "4000", "--out", str(path)]) == 0
    return path


def _init(data: Path, out: Path, *extra: str) -> int:
    return main(["-q", "init", "--data", str(data), "--out", str(out), "--public", *extra])


def _uncommented(text: str) -> str:
    """The draft with its commented-out example criteria switched on."""
    return re.sub(r"(?m)^    # (- |   )", lambda m: "    " + m.group(1), text)


def test_births_draft_validates_marks_review_and_runs_end_to_end(nvss_10k, tmp_path, capsys):
    out = tmp_path / "births.yaml"
    assert _init(nvss_10k, out, "--name", "births_draft") == 0
    assert capsys.readouterr().out.strip() == str(out.resolve())  # stdout: the path only
    text = out.read_text()
    header = "\n".join(text.splitlines()[:11])
    assert nvss_10k.name in header and "PUBLIC" in header
    assert "must be PUBLIC FACTS" in header and "never read from private" in header
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _DRAFTED.match(line):
            assert "# REVIEW" in line or lines[i - 1].strip().startswith("# REVIEW"), line
    assert main(["validate", str(out)]) == 0
    spec = load_spec(out)
    assert spec.name == "births_draft"
    kinds = {c.name: c.kind for c in spec.columns}
    assert kinds == {
        "mother_age": "int",
        "parity": "int",
        "gestation_week": "int",
        "is_female": "categorical",
        "birth_weight": "int",
        "date_of_birth_month": "int",  # the month of the date column, read by input.mapping
    }
    assert spec.column("date_of_birth_month").domain == (1, 12)
    frame = pd.read_csv(nvss_10k)
    weight = frame.birth_weight
    assert spec.column("birth_weight").domain == (weight.min(), weight.max())
    assert spec.column("is_female").categories == ("False", "True")
    # The public file loads under the draft unchanged (domains cover it), and one quick
    # configuration runs end to end on it.
    assert len(load_data(nvss_10k, spec, public=True).frame) == len(frame)
    config = next(
        c
        for c in expand_space(spec)
        if c.model == "privbayes" and c.hyperparameters["degree"] == 1 and c.min_count == 1
    )
    run = tmp_path / "run"
    argv = ["-q", "run", str(out), "--config", config.id, "--data", str(nvss_10k)]
    assert main([*argv, "--public", "--seed", "1", "--out", str(run)]) == 0
    assert len(pd.read_csv(run / "candidate.csv")) == len(frame)


def test_wide_draft_validates_with_its_examples_switched_on(wide_csv, tmp_path):
    out = tmp_path / "wide.yaml"
    assert _init(wide_csv, out) == 0
    assert main(["validate", str(out)]) == 0
    spec = load_spec(out)
    assert len(spec.columns) == 15 and spec.name == "wide"
    country = spec.column("country")
    assert country.kind == "categorical" and len(country.categories) > 30
    assert len(load_data(wide_csv, spec, public=True).frame) == 4000
    # The commented-out criteria of the other kinds are valid once uncommented.
    on = tmp_path / "wide_on.yaml"
    on.write_text(_uncommented(out.read_text()))
    assert main(["validate", str(on)]) == 0
    kinds = {c.kind for c in load_spec(on).criteria}
    assert {"conditional_mean", "regression_coefficients", "faithfulness"} <= kinds


def test_births_examples_switched_on_validate(nvss_10k, tmp_path):
    out = tmp_path / "b.yaml"
    assert _init(nvss_10k, out) == 0
    on = tmp_path / "b_on.yaml"
    on.write_text(_uncommented(out.read_text()))
    assert main(["validate", str(on)]) == 0
    assert len(load_spec(on).criteria) == 5


def test_refuses_an_existing_out_unless_force(small_csv, tmp_path, capsys):
    out = tmp_path / "spec.yaml"
    out.write_text("mine\n")
    assert _init(small_csv, out) == 2
    assert "--force" in capsys.readouterr().err
    assert out.read_text() == "mine\n"  # untouched
    assert _init(small_csv, out, "--force") == 0
    assert main(["validate", str(out)]) == 0


def test_refuses_data_not_declared_public(small_csv, tmp_path, capsys):
    out = tmp_path / "spec.yaml"
    assert main(["init", "--data", str(small_csv), "--out", str(out)]) == 2
    assert "--public" in capsys.readouterr().err
    assert not out.exists()


def test_awkward_names_quoted_dates_and_parquet(tmp_path):
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame(
        {
            "yes": rng.choice(["no", "yes"], n),  # a YAML word as name and category
            "a b": rng.integers(-30, 30, n),  # a space, negative values
            "score": rng.integers(0, 100, n).astype(float),  # whole numbers as floats
            "when": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 365, n), "D"),
        }
    )
    frame.loc[3, "score"] = np.nan  # missing values are left out of the draft
    data = tmp_path / "awkward.parquet"
    frame.to_parquet(data)
    out = tmp_path / "spec.yaml"
    assert _init(data, out) == 0
    assert main(["validate", str(out)]) == 0
    spec = load_spec(out)
    assert [c.name for c in spec.columns] == ["yes", "a b", "score", "when_month"]
    assert spec.column("yes").categories == ("no", "yes")
    assert spec.column("a b").domain == (frame["a b"].min(), frame["a b"].max())
    assert len(load_data(data, spec, public=True).frame) == n - 1


@pytest.mark.parametrize(
    "column, values, why",
    [
        ("ratio", lambda r, n: r.normal(size=n), "fractional numbers"),
        ("person_id", lambda r, n: [f"p{i}" for i in range(n)], "identifier or free text"),
        ("constant", lambda r, n: [7] * n, "single value"),
        ("empty", lambda r, n: [np.nan] * n, "empty"),
    ],
)
def test_a_column_that_cannot_be_typed_is_named_with_the_fix(tmp_path, capsys, column, values, why):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"age": rng.integers(0, 90, 100), column: values(rng, 100)})
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "spec.yaml"
    assert _init(data, out) == 2
    err = capsys.readouterr().err
    assert why in err and repr(column) in err and "--skip" in err
    assert "Traceback" not in err and not out.exists()
    assert _init(data, out, "--skip", column) == 0  # the fix the message names
    assert main(["validate", str(out)]) == 0


def test_every_untypable_column_is_named_at_once_and_unreadable_files_are_errors(tmp_path, capsys):
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({"a": rng.normal(size=50), "b": [1] * 50, "c": rng.integers(0, 5, 50)})
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    out = tmp_path / "spec.yaml"
    assert _init(data, out) == 2
    err = capsys.readouterr().err
    assert "2 columns cannot be typed" in err and "'a'" in err and "'b'" in err
    assert _init(tmp_path / "missing.csv", out) == 2
    assert "does not exist" in capsys.readouterr().err
    header_only = tmp_path / "h.csv"
    header_only.write_text("a,b\n")
    assert _init(header_only, out) == 2
    assert "no rows" in capsys.readouterr().err
    binary = tmp_path / "b.csv"
    binary.write_bytes(bytes(range(256)) * 4)
    assert _init(binary, out) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert _init(data, out, "--skip", "zz") == 2
    assert "zz" in capsys.readouterr().err
    assert not out.exists()


def test_init_starts_without_pandas():
    import subprocess
    import sys

    probe = "import synthflow.init.draft, sys; print(json.dumps('pandas' in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", "import json; " + probe], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) is False


def test_thresholds_are_met_by_two_real_samples_of_the_private_size(nvss_10k, tmp_path, capsys):
    """[ux] 3: init --rows N drafts thresholds two samples of N public rows pass, and says so.

    At 944 rows the old defaults were unattainable (two real samples' 2-way mean TVD is
    about 0.1 against a default 0.05). The drafted thresholds are at least MARGIN (1.5)
    times the 90th percentile of 20 pairs of samples (seeds 0-19). Pairs drawn with
    other seeds must pass too: in 40 draws the largest score was at most 1.15 times the
    90th percentile for every criterion, so a margin of 1.5 leaves room; we allow one
    failure in 20 per criterion for the heavy-tailed regression error.
    """
    from synthflow.acceptance.attainable import without_noise
    from synthflow.acceptance.noise_check import public_sample
    from synthflow.init.criteria import MARGIN
    from synthflow.transform import Transformer

    out = tmp_path / "b.yaml"
    assert _init(nvss_10k, out, "--rows", "944") == 0
    text = out.read_text()
    said = re.findall(r"samples of 944 rows of the file score at most ([0-9.e-]+)\s", text)
    assert len(said) == 5  # one line above each criterion, the examples included
    on = tmp_path / "b_on.yaml"
    on.write_text(_uncommented(text))
    spec = load_spec(on)
    for c, score in zip(spec.criteria, map(float, said), strict=True):
        assert c.threshold >= MARGIN * score * 0.999, c.name  # 3 digits printed
    sample = public_sample(spec)
    tr = Transformer(spec, {})
    draws = [without_noise(spec, tr, 944, sample, seed=seed) for seed in range(100, 120)]
    for c in spec.criteria:
        fails = sum(d[c.name] >= c.threshold for d in draws)
        assert fails <= 1, (c.name, fails)
    # The defaults alone would not be met at this size (what the calibration is for).
    tvd = spec.criterion("marginal_mean_tvd")
    assert tvd.threshold > 0.05
    assert all(d["marginal_mean_tvd"] >= 0.05 for d in draws)


def test_rows_must_be_positive(nvss_10k, tmp_path, capsys):
    out = tmp_path / "b.yaml"
    assert _init(nvss_10k, out, "--rows", "0") == 2
    err = capsys.readouterr().err
    assert "--rows (0) must be at least 1" in err and "Traceback" not in err
    assert not out.exists()

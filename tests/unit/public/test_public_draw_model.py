"""``synthflow public-data draw``: a non-private model of a small public sample (#38).

The model (synthflow/public/draw.py) is fitted on a 3,238-row sample of the generated
wide table and drawn at other sizes; these tests check what a sweep relies on: the
spec's domain, its structural zeros, the row count, the seed, and the sample's 2-way
marginals.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthflow.cli import main
from synthflow.config.model import ReleaseSpec
from synthflow.data import load_data
from synthflow.filtering import raw_violations
from synthflow.loader import load_spec
from synthflow.public.draw import PublicModel, cell_edges, fit_public_model
from synthflow.public.draw_sample import _rows, draw
from synthflow.public.wide import make_wide_table
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[3]
WIDE = REPO / "configs" / "wide_census.yaml"


@pytest.fixture(scope="module")
def spec() -> ReleaseSpec:
    return load_spec(WIDE)


@pytest.fixture(scope="module")
def public() -> pd.DataFrame:
    return make_wide_table(3238, seed=2)


@pytest.fixture(scope="module")
def model(spec: ReleaseSpec, public: pd.DataFrame) -> PublicModel:
    return fit_public_model(spec, public)


def test_cells_respect_every_binning_group_and_constraint(spec: ReleaseSpec) -> None:
    age = cell_edges(spec, spec.column("age"))
    assert {16, 26, 36, 56, 94}.issubset(age) and 17 not in age  # a: width 2; b, groups: 10
    # Rule 2 (children > 1 and household < 3): cut at children 2 and household 3 (the
    # per-value bins hold them already); hours: "<10", width 5 to 69, ">69".
    assert list(cell_edges(spec, spec.column("hours")))[:3] == [0, 10, 15]
    assert cell_edges(spec, spec.column("hours"))[-1] == 70


def test_domain_row_count_and_columns(
    spec: ReleaseSpec, model: PublicModel, public: pd.DataFrame
) -> None:
    for n in (1, 7, 5000):
        frame = draw(model, n, np.random.default_rng(n))
        assert len(frame) == n and list(frame.columns) == list(spec.column_names)
    for col in spec.columns:
        values = frame[col.name]
        if col.kind == "categorical":
            assert set(values) <= set(col.categories)
        else:
            assert col.domain is not None
            assert values.between(*col.domain).all()
            if col.name not in ("income",):  # the regression target is drawn by OLS
                assert set(values) <= set(public[col.name])  # raw values the sample holds


def test_structural_zeros_stay_empty(tmp_path: Path, public: pd.DataFrame) -> None:
    """A rule the model alone breaks: no one under 30 earns more than 100 (made up)."""
    doc = yaml.safe_load(WIDE.read_text())
    doc["constraints"]["raw"].append(
        {"id": 3, "name": "young and rich", "all": [["age", "<", 30], ["income", ">", 100]]}
    )
    doc["constraints"]["synthetic"] = [2, 3]
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    spec = load_spec(path)
    rules = spec.raw_constraints
    clean = public.loc[~raw_violations(public, rules[1])].reset_index(drop=True)
    model = fit_public_model(spec, clean)
    assert {30, 101}.issubset(
        cell_edges(spec, spec.column("income")).tolist()
        + cell_edges(spec, spec.column("age")).tolist()
    )
    # Without the rejection step the model breaks it (income is drawn from age by OLS)...
    raw = _rows(model, 20_000, np.random.default_rng(3))
    assert raw_violations(raw, rules[1]).sum() > 10
    # ...with it, no drawn row breaks either rule, and the row count holds.
    frame = draw(model, 20_000, np.random.default_rng(3))
    assert len(frame) == 20_000
    for rule in rules:
        assert not raw_violations(frame, rule).any()


def test_the_seed_makes_the_draw(model: PublicModel) -> None:
    a = draw(model, 2000, np.random.default_rng(11))
    pd.testing.assert_frame_equal(a, draw(model, 2000, np.random.default_rng(11)))
    assert not a.equals(draw(model, 2000, np.random.default_rng(12)))


def _tvd(tr: Transformer, a: pd.DataFrame, b: pd.DataFrame) -> dict[tuple[str, str], float]:
    """Total variation distance of every 2-way marginal (release binning)."""
    ca, cb = tr.forward(a).to_numpy(np.int64), tr.forward(b).to_numpy(np.int64)
    s, names = tr.domain.sizes, tr.domain.names
    out = {}
    for i, j in itertools.combinations(range(len(s)), 2):
        pa = np.bincount(ca[:, i] * s[j] + ca[:, j], minlength=s[i] * s[j]) / len(ca)
        pb = np.bincount(cb[:, i] * s[j] + cb[:, j], minlength=s[i] * s[j]) / len(cb)
        out[names[i], names[j]] = 0.5 * float(np.abs(pa - pb).sum())
    return out


def test_reproduces_the_samples_two_way_marginals(
    spec: ReleaseSpec, model: PublicModel, public: pd.DataFrame
) -> None:
    """The draw's 2-way tables are the public sample's, within the sample's own error.

    Tolerance: a 3,238-row sample's 2-way tables differ from their population's by
    sampling error alone; another 3,238-row sample of the same table (seed 4) measures
    it (mean TVD over the 105 pairs 0.092, largest 0.245; the draw: 0.056, 0.177). A
    model whose draw differs from the sample by less than two samples differ from each
    other reproduces it within what the sample can say.

    The tree's own edges (those not touching the regression target, drawn again by OLS)
    are the sample's up to the draw's multinomial noise: E|x_k - p_k| <= sd_k, so
    E[TVD] <= 1/2 sum_k sqrt(p_k / N). The TVD is a sum over the table's cells, its
    spread a fraction of its mean (on the 10-cell health x disability table about a
    third), so 1.5 times the bound is more than two standard deviations away.
    """
    n = 100_000
    tr = Transformer(spec, {c: "a" for c in spec.column_names})
    drawn = draw(model, n, np.random.default_rng(5))
    to_public = _tvd(tr, drawn, public)
    floor = _tvd(tr, make_wide_table(3238, seed=4), public)
    assert np.mean(list(to_public.values())) < np.mean(list(floor.values()))
    assert max(to_public.values()) < max(floor.values())
    redrawn = {"income", "tenure"}  # the target and its non-feature tree child
    edges = [e for e in model.tree_edges if not redrawn & set(e)]
    assert len(edges) >= 8
    codes = tr.forward(public).to_numpy(np.int64)
    s, names = tr.domain.sizes, tr.domain.names
    for a, b in edges:
        key = (a, b) if names.index(a) < names.index(b) else (b, a)
        i, j = names.index(key[0]), names.index(key[1])
        p = np.bincount(codes[:, i] * s[j] + codes[:, j], minlength=s[i] * s[j]) / len(codes)
        bound = 0.5 * np.sqrt(p / n).sum()
        assert to_public[key] < 1.5 * bound, (key, to_public[key], bound)


def test_regression_target_follows_its_features(
    spec: ReleaseSpec, model: PublicModel, public: pd.DataFrame
) -> None:
    """income on age, education, hours and sex: the sample's coefficients, not the tree's."""
    drawn = draw(model, 100_000, np.random.default_rng(6))

    def ols(f: pd.DataFrame) -> np.ndarray:
        x = np.column_stack(
            [np.ones(len(f)), f.age, f.education, f.hours, (f.sex == "M").astype(float)]
        )
        return np.linalg.lstsq(x, f.income.to_numpy(float), rcond=None)[0]

    # Each slope within 0.1 of the sample's (its standard errors at 3,238 rows are about
    # 0.02, 0.1, 0.03 and 0.5; the tree alone gave hours 0.01 against 0.76).
    np.testing.assert_allclose(ols(drawn)[1:4], ols(public)[1:4], atol=0.1)
    assert abs(ols(drawn)[4] - ols(public)[4]) < 1.0


# ------------------------------------------------------------------------------- CLI


def test_cli_writes_refuses_and_explains(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src = tmp_path / "public.csv"
    frame = make_wide_table(500, seed=2)
    frame.assign(note="x").to_csv(src, index=False)
    out = tmp_path / "draw.csv"
    argv = ["public-data", "draw", str(WIDE), "--from", str(src), "--public", "--rows", "700",
            "--seed", "3", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == str(out.resolve())
    assert "'note'" in captured.err  # a column the spec does not name is said, not drawn
    spec = load_spec(WIDE)
    assert len(load_data(out, spec, public=True).frame) == 700
    first = out.read_bytes()
    # Never over a user's file without --force; with it, the same seed gives the same file.
    assert main(argv) == 2
    assert "--force" in capsys.readouterr().err and out.read_bytes() == first
    assert main([*argv, "--force"]) == 0 and out.read_bytes() == first
    # A sample that lacks a spec column: named, nothing written.
    frame.drop(columns="commute").to_csv(src, index=False)
    other = tmp_path / "other.csv"
    assert main([*argv[:-1], str(other)]) == 2
    assert "commute" in capsys.readouterr().err and not other.exists()
    # Rows must be positive.
    assert main([*argv[:6], "--rows", "0", "--out", str(other)]) == 2
    assert "--rows" in capsys.readouterr().err and not other.exists()

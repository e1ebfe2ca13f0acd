"""Embedded default public data: NVSS-like simulator, calibration file, natality loader."""

from __future__ import annotations

import argparse
import dataclasses
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthflow.cli.public import register
from synthflow.errors import ConfigError, DataError
from synthflow.public import (
    SAMPLE_COLUMNS,
    Calibration,
    calibrate,
    load_nvss_natality,
    read_sample,
    simulate,
)
from synthflow.public._groups import group_index
from synthflow.public._model import age_parity_joint, gestation_given_age_parity

REPO = Path(__file__).parents[3]
SHARED = REPO.parent / "shared" / "public_data"
REAL_160K = SHARED / "nvss2019_singleton_160k.csv.gz"
REAL_10K = SHARED / "nvss2019_singleton_10k.csv"
DEFAULT = REPO / "public_data" / "nvss_like_2019.csv.gz"
CALIBRATION = REPO / "public_data" / "nvss2019_calibration.yaml"
FIXTURE = REPO / "tests" / "fixtures" / "nvss_natality_small.csv"
REGENERATE = (
    "python -m synthflow public-data simulate --calibration public_data/nvss2019_calibration.yaml"
    " --rows 167000 --seed 2019 --out public_data/nvss_like_2019.csv.gz"
)

needs_real = pytest.mark.skipif(
    not REAL_160K.is_file(),
    reason=f"real NVSS samples not found in {SHARED} (they live beside the repo, never in it)",
)


@pytest.fixture(scope="module")
def real() -> pd.DataFrame:
    return read_sample(REAL_160K)


@pytest.fixture(scope="module")
def default() -> pd.DataFrame:
    return read_sample(DEFAULT)


@pytest.fixture(scope="module")
def calibration() -> Calibration:
    return Calibration.from_yaml(CALIBRATION)


# --- (a) the committed default vs the real 160K sample ---------------------------------


def _finest_bins(frame: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each column binned with its finest alternative of the release (SPEC sec. 3)."""
    w = frame["birth_weight"].to_numpy()
    return {
        # <18, single years 18..44, >44
        "mother_age": np.clip(frame["mother_age"].to_numpy(), 17, 45),
        # 1..10, >10
        "parity": np.clip(frame["parity"].to_numpy(), 1, 11),
        # <29, single weeks 29..41, >41
        "gestation_week": np.clip(frame["gestation_week"].to_numpy(), 28, 42),
        # <1500, 100 g bins 1500-1599 ... 4400-4499, >4499
        "birth_weight": np.where(w < 1500, 14, np.where(w > 4499, 45, w // 100)),
        "birth_month": pd.to_datetime(frame["date_of_birth"]).dt.month.to_numpy(),
        "is_female": frame["is_female"].to_numpy().astype(int),
    }


def _tvd(x: np.ndarray, y: np.ndarray) -> float:
    values = np.union1d(x, y)
    px = np.array([(x == v).mean() for v in values])
    py = np.array([(y == v).mean() for v in values])
    return 0.5 * float(np.abs(px - py).sum())


def test_default_file_shape_and_dtypes(default: pd.DataFrame) -> None:
    raw = pd.read_csv(DEFAULT)
    assert list(raw.columns) == list(SAMPLE_COLUMNS)
    assert len(raw) == 167_000
    assert raw["is_female"].dtype == bool
    for column in ("mother_age", "parity", "gestation_week", "birth_weight"):
        assert raw[column].dtype == np.int64
    assert raw["date_of_birth"].str.fullmatch(r"2019-(0[1-9]|1[0-2])-15").all()
    assert DEFAULT.stat().st_size < 5_000_000


@needs_real
@pytest.mark.parametrize(
    "column",
    ["mother_age", "parity", "gestation_week", "birth_weight", "birth_month", "is_female"],
)
def test_default_one_way_tvd(real: pd.DataFrame, default: pd.DataFrame, column: str) -> None:
    tvd = _tvd(_finest_bins(real)[column], _finest_bins(default)[column])
    assert tvd <= 0.03, f"{column}: TVD {tvd:.4f} > 0.03"


@needs_real
def test_default_preterm_and_low_birth_weight_rates(
    real: pd.DataFrame, default: pd.DataFrame
) -> None:
    for name, real_rate, sim_rate in [
        ("preterm", (real.gestation_week < 37).mean(), (default.gestation_week < 37).mean()),
        ("lbw", (real.birth_weight < 2500).mean(), (default.birth_weight < 2500).mean()),
    ]:
        assert abs(real_rate - sim_rate) <= 0.01, f"{name}: {sim_rate:.4f} vs {real_rate:.4f}"


def test_default_is_what_the_documented_command_writes(
    calibration: Calibration, default: pd.DataFrame
) -> None:
    regenerated = simulate(calibration, 167_000, np.random.default_rng(2019))
    pd.testing.assert_frame_equal(
        regenerated, default, obj=f"committed default (regenerate with: {REGENERATE})"
    )


@needs_real
def test_committed_calibration_comes_from_the_160k_sample(real: pd.DataFrame) -> None:
    committed = yaml.safe_load(CALIBRATION.read_text())
    fresh = calibrate(real, source=committed["source"]).to_dict()
    assert fresh["summaries"] == committed["summaries"]
    assert fresh["sample_rows"] == committed["sample_rows"] == 160_000


# --- (b) the calibration file holds low-order summaries only ---------------------------


def _depth(x: object) -> int:
    return 1 + max((_depth(v) for v in x), default=0) if isinstance(x, list) else 0


def test_calibration_yaml_has_no_table_over_two_variables() -> None:
    text = CALIBRATION.read_text()
    assert len(text.encode()) < 100_000
    header = [line for line in text.splitlines() if line.startswith("#")]
    assert any("Source:" in line and "nvss2019_singleton_160k" in line for line in header)
    assert any("Created:" in line for line in header)
    data = yaml.safe_load(text)
    assert set(data) == {"format", "source", "created", "sample_rows", "year", "summaries"}
    n_numbers = 0
    for name, summary in data["summaries"].items():
        variables = summary["variables"]
        assert 1 <= len(variables) <= 2, f"{name} spans {variables}"
        assert len(set(variables)) == len(variables)
        for key, value in summary.items():
            if key != "variables" and isinstance(value, list):
                assert _depth(value) <= len(variables), f"{name}.{key} is nested too deep"
                n_numbers += int(np.size(value))
        if "groups" in summary:
            per_group = [
                summary[k] for k in ("probabilities", "quantiles", "means") if k in summary
            ]
            assert len(per_group) == 1, f"{name}: one table per summary"
            assert len(per_group[0]) == len(summary["groups"])
    assert n_numbers < 5_000  # summaries, not rows (the sample holds 960,000 numbers)


def test_calibration_yaml_round_trip(calibration: Calibration, tmp_path: Path) -> None:
    again = Calibration.from_yaml(calibration.to_yaml(tmp_path / "cal.yaml"))
    assert again == calibration


# --- (c) randomness only through rng ---------------------------------------------------


def test_simulate_reproducible_with_seed(calibration: Calibration) -> None:
    a = simulate(calibration, 2_000, np.random.default_rng(7))
    b = simulate(calibration, 2_000, np.random.default_rng(7))
    c = simulate(calibration, 2_000, np.random.default_rng(8))
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)
    assert list(a.columns) == list(SAMPLE_COLUMNS)
    assert a["is_female"].dtype == bool
    assert (a.dtypes.drop(["is_female", "date_of_birth"]) == np.int64).all()


@pytest.mark.skipif(not REAL_10K.is_file(), reason=f"real 10K NVSS sample not found in {SHARED}")
def test_calibrate_on_10k_sample_and_simulate() -> None:
    cal = calibrate(read_sample(REAL_10K), source=REAL_10K.name)
    frame = simulate(cal, 500, np.random.default_rng(0))
    assert len(frame) == 500
    assert frame["mother_age"].isin(cal.mother_age.values).all()


# --- (d) the natality loader -----------------------------------------------------------


def test_load_nvss_natality_fixture() -> None:
    raw = pd.read_csv(FIXTURE)
    frame = load_nvss_natality(FIXTURE)
    assert list(frame.columns) == list(SAMPLE_COLUMNS)
    assert len(frame) == 12  # 21 rows - 4 multiples - 4 unknown codes - 1 blank
    assert frame["is_female"].dtype == bool
    assert (frame.dtypes.drop(["is_female", "date_of_birth"]) == np.int64).all()
    assert (frame["birth_weight"] != 9999).all()
    assert (frame["gestation_week"] != 99).all()
    assert frame["parity"].max() == 11  # priorlive 9 + priordead 1 + 1 (lbo_rec says 8)
    singles = raw[(raw.dplural == 1)]
    assert len(singles) == 17
    first = frame.iloc[0].to_dict()
    assert first == {
        "mother_age": 33,
        "parity": 2,
        "gestation_week": 39,
        "is_female": False,
        "birth_weight": 3490,
        "date_of_birth": "2019-01-15",
    }


def test_load_nvss_natality_sample_rows() -> None:
    a = load_nvss_natality(FIXTURE, n_rows=5, rng=np.random.default_rng(1))
    b = load_nvss_natality(FIXTURE, n_rows=5, rng=np.random.default_rng(1))
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 5
    full = load_nvss_natality(FIXTURE)
    assert a.merge(full, how="left", indicator=True)["_merge"].eq("both").all()


# --- (e) bad input ---------------------------------------------------------------------


def test_calibrate_missing_column(calibration: Calibration) -> None:
    frame = simulate(calibration, 50, np.random.default_rng(0)).drop(columns="parity")
    with pytest.raises(DataError, match=re.escape("missing column(s) ['parity']")):
        calibrate(frame)


def test_calibrate_empty_frame() -> None:
    with pytest.raises(DataError, match="no rows"):
        calibrate(pd.DataFrame(columns=list(SAMPLE_COLUMNS)))


def test_calibrate_bad_values(calibration: Calibration) -> None:
    frame = simulate(calibration, 50, np.random.default_rng(0))
    frame.loc[3, "date_of_birth"] = "March 2019"
    with pytest.raises(DataError, match="must hold dates written YYYY-MM-DD"):
        calibrate(frame)


def test_read_sample_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="does not exist"):
        read_sample(tmp_path / "nope.csv")
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(DataError, match="is empty"):
        read_sample(tmp_path / "empty.csv")
    (tmp_path / "header.csv").write_text(",".join(SAMPLE_COLUMNS) + "\n")
    with pytest.raises(DataError, match="has a header but no rows"):
        read_sample(tmp_path / "header.csv")


def test_natality_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="does not exist"):
        load_nvss_natality(tmp_path / "natl2019.csv")
    raw = pd.read_csv(FIXTURE)
    raw.drop(columns="combgest").to_csv(tmp_path / "nogest.csv", index=False)
    with pytest.raises(DataError, match=re.escape("missing column(s) ['combgest']")):
        load_nvss_natality(tmp_path / "nogest.csv")
    raw.assign(dplural=2).to_csv(tmp_path / "twins.csv", index=False)
    with pytest.raises(DataError, match=re.escape("no singleton birth (dplural == 1)")):
        load_nvss_natality(tmp_path / "twins.csv")
    with pytest.raises(DataError, match=re.escape("n_rows (13) exceeds the 12 usable")):
        load_nvss_natality(FIXTURE, n_rows=13, rng=np.random.default_rng(0))
    with pytest.raises(ConfigError, match="n_rows needs rng"):
        load_nvss_natality(FIXTURE, n_rows=3)


def test_simulate_bad_arguments(calibration: Calibration) -> None:
    with pytest.raises(ConfigError, match=re.escape("n_rows (0) must be a positive integer")):
        simulate(calibration, 0, np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng must be a numpy Generator"):
        simulate(calibration, 5, 42)  # type: ignore[arg-type]


def test_calibration_bad_files(calibration: Calibration, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        Calibration.from_yaml(tmp_path / "missing.yaml")
    data = calibration.to_dict()
    del data["summaries"]["mother_age"]
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="malformed calibration"):
        Calibration.from_yaml(tmp_path / "bad.yaml")
    with pytest.raises(ConfigError, match=re.escape("female_share (1.5) must be in [0, 1]")):
        dataclasses.replace(calibration, female_share=1.5)


# --- CLI -------------------------------------------------------------------------------


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return int(args.func(args))


def test_cli_simulate_and_from_nvss(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sim.csv.gz"
    argv = ["public-data", "simulate", "--calibration", str(CALIBRATION), "--rows", "300"]
    assert _run([*argv, "--seed", "3", "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == str(out)
    assert len(read_sample(out)) == 300
    out2 = tmp_path / "nat.csv"
    assert _run(["public-data", "from-nvss", "--data", str(FIXTURE), "--out", str(out2)]) == 0
    pd.testing.assert_frame_equal(read_sample(out2), load_nvss_natality(FIXTURE))
    cal = tmp_path / "cal.yaml"
    assert _run(["public-data", "calibrate", "--data", str(out), "--out", str(cal)]) == 0
    assert Calibration.from_yaml(cal).sample_rows == 300


# --- the joint model honours the 2-way summaries it is fitted to -------------------------


def test_gestation_model_reproduces_both_two_way_tables(calibration: Calibration) -> None:
    joint = gestation_given_age_parity(calibration) * age_parity_joint(calibration)[:, :, None]
    by_age = joint.sum(1) / joint.sum((1, 2))[:, None]
    by_parity = joint.sum(0) / joint.sum((0, 2))[:, None]
    np.testing.assert_allclose(by_age, calibration.gestation_by_age.probabilities, atol=1e-5)
    np.testing.assert_allclose(by_parity, calibration.gestation_by_parity.probabilities, atol=1e-5)


def test_simulated_mean_weight_by_group_matches_calibration(
    calibration: Calibration, default: pd.DataFrame
) -> None:
    cal = calibration
    for summary, column in [
        (cal.weight_mean_by_parity, "parity"),
        (cal.weight_mean_by_age, "mother_age"),
    ]:
        gi = group_index(default[column].to_numpy(), summary.groups, variable=column)
        sim = default.groupby(gi)["birth_weight"].mean().to_numpy()
        counts = np.bincount(gi)
        big = counts >= 2_000  # sampling error of a group mean ~ 600 g / sqrt(rows)
        np.testing.assert_allclose(sim[big], np.asarray(summary.means)[big], atol=30)

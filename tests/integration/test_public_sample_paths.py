"""The public-sample check cannot be sidestepped by how the file is named or read (#58).

An independent audit found three ways around :func:`check_public_sample_is_public`:

1. an absolute ``public_sample`` path counted as a file synthflow ships (its name was
   looked up among the bundled files, and an absolute name "found" itself), so the
   private file, renamed, gzipped, subset or mixed, was accepted and charged;
8. ``public_sample_published: true`` skipped every check, even for the private file
   itself;
12. rows were compared as read, while the published figures read them binned: the
   private rows with each birth weight redrawn inside its 100 g bin passed, and gave
   the same published fit weights.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthflow.cli import main
from synthflow.data import load_data
from synthflow.errors import ConfigError
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.public_sample import check_public_sample_is_public
from synthflow.space import expand_space
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[2]


def _cands(tmp_path, spec):
    path = tmp_path / "candidates.yaml"
    configurations = [c.to_json() for c in expand_space(spec) if c.letters == "aaaa"]
    path.write_text(yaml.safe_dump({"spec_sha256": spec.sha256, "configurations": configurations}))
    return path


def _spec(tmp_path, small_spec, sample: str, **extra):
    doc = yaml.safe_load(open(small_spec.path).read()) | {"public_sample": sample} | extra
    path = tmp_path / "spec" / "spec.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return load_spec(path)


def _refused(tmp_path, spec, data, capsys) -> str:
    ledger = tmp_path / "budget.jsonl"
    argv = ["release", spec.path, "--data", str(data), "--candidates",
            str(_cands(tmp_path, spec)), "--out", str(tmp_path / "r"), "--private-dir",
            str(tmp_path / "e"), "--ledger", str(ledger), "--quiet", "--force"]  # fmt: skip
    assert main(argv) == 2
    assert not ledger.exists() or Ledger(total_epsilon=100, path=ledger).charges == ()
    return capsys.readouterr().err


def _forms(small_csv, tmp_path) -> dict[str, object]:
    """The private file in the forms the audit tried, each at an absolute path."""
    private = pd.read_csv(small_csv)
    forms = tmp_path / "forms"
    forms.mkdir()
    with open(small_csv, "rb") as src, gzip.open(forms / "renamed.csv.gz", "wb") as dst:
        dst.write(src.read())
    private.sample(frac=1.0, random_state=4).to_csv(forms / "shuffled.csv", index=False)
    private.sample(frac=0.5, random_state=5).to_csv(forms / "half.csv", index=False)
    private.sample(frac=1.0, replace=True, random_state=6).to_csv(
        forms / "bootstrap.csv", index=False
    )
    return {
        "itself": small_csv.resolve(),
        "renamed-gzipped": (forms / "renamed.csv.gz").resolve(),
        "shuffled": (forms / "shuffled.csv").resolve(),
        "half": (forms / "half.csv").resolve(),
        "bootstrap": (forms / "bootstrap.csv").resolve(),
    }


@pytest.mark.parametrize("form", ["itself", "renamed-gzipped", "shuffled", "half", "bootstrap"])
def test_an_absolute_public_sample_path_is_checked(tmp_path, small_spec, small_csv, capsys, form):
    path = _forms(small_csv, tmp_path)[form]
    spec = _spec(tmp_path, small_spec, str(path))
    err = _refused(tmp_path, spec, small_csv, capsys)
    assert "public_sample" in err and "Nothing was spent" in err
    # the DP evaluate refuses it too, before its ledger is opened
    ledger = tmp_path / "eval.jsonl"
    config = expand_space(spec)[0].id
    argv = ["evaluate", spec.path, "--original", str(small_csv), "--candidate",
            str(small_csv), "--config", config, "--ledger", str(ledger)]  # fmt: skip
    assert main(argv) == 2
    assert "public_sample" in capsys.readouterr().err
    assert not ledger.exists() or Ledger(total_epsilon=100, path=ledger).charges == ()


def test_only_a_file_synthflow_ships_is_exempt_and_only_by_where_it_lies(tmp_path):
    from synthflow.resources import is_bundled_public_data, public_data_file

    shipped = public_data_file("nvss_like_2019.csv.gz")
    assert is_bundled_public_data(shipped)
    copy = tmp_path / "nvss_like_2019.csv.gz"
    shutil.copy(shipped, copy)
    assert not is_bundled_public_data(copy)  # the same name elsewhere is the user's file
    for name in (str(copy), str(shipped), "../public_data/nvss_like_2019.csv.gz", "", ".."):
        with pytest.raises(ConfigError, match="not the name of a public data file"):
            public_data_file(name)


def test_a_published_public_sample_that_is_the_private_file_is_refused(
    tmp_path, small_spec, small_csv, capsys
):
    # The declaration speaks for an extract published before; the whole private file
    # (the same rows, in any order or form) is never one.
    shuffled = tmp_path / "extract.csv"
    pd.read_csv(small_csv).sample(frac=1.0, random_state=2).to_csv(shuffled, index=False)
    spec = _spec(tmp_path, small_spec, str(shuffled), public_sample_published=True)
    err = _refused(tmp_path, spec, small_csv, capsys)
    assert "holds the same rows as --data" in err


def _jittered(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Each birth weight in 1500-4499 g redrawn inside its 100 g bin (births' letter a)."""
    w = frame["birth_weight"].to_numpy()
    inside = (w >= 1500) & (w <= 4499)
    noise = np.random.default_rng(seed).integers(0, 100, size=len(w))
    return frame.assign(birth_weight=np.where(inside, w // 100 * 100 + noise, w))


def test_private_rows_redrawn_inside_their_bins_are_refused(tmp_path, nvss_10k):
    # Births: the release reads weights in 100 g bins, so rows redrawn inside their bins
    # publish the private rows' figures; as read they share few rows (chance level).
    spec = load_spec(REPO / "configs" / "births.yaml")
    private = load_data(nvss_10k, spec).frame
    config = next(c for c in expand_space(spec) if c.transformations["birth_weight"] == "a")
    binning = [Transformer(spec, config.transformations)]

    def spec_with(frame: pd.DataFrame):
        frame.to_csv(tmp_path / "sample.csv", index=False)
        doc = yaml.safe_load((REPO / "configs" / "births.yaml").read_text())
        doc["public_sample"] = str(tmp_path / "sample.csv")
        (tmp_path / "births.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
        return load_spec(tmp_path / "births.yaml")

    whole = spec_with(_jittered(private, seed=1))
    check_public_sample_is_public(whole, private)  # as read, it passes (the old check)
    with pytest.raises(ConfigError, match="same rows as --data \\(as the release reads it"):
        check_public_sample_is_public(whole, private, binning)
    part = spec_with(_jittered(private.sample(frac=0.3, random_state=2), seed=3))
    with pytest.raises(ConfigError, match="is part of --data"):
        check_public_sample_is_public(part, private, binning)
    # An independent sample of births (the embedded file, 3,000 rows) shares most of its
    # binned rows (about 0.8) but not all of them: not refused.
    others = pd.read_csv(REPO / "public_data" / "nvss_like_2019.csv.gz").sample(
        n=3000, random_state=4
    )
    check_public_sample_is_public(spec_with(others), private, binning)

"""#61 item 1, in part: a registry too small for a criterion gets no plan suggestion.

At 20,000 births (the first rows of the real NVSS 2019 sample) faithfulness fails
without any noise: two real samples of that size score about 0.125 against its
threshold 0.05. ``release births`` used to suggest ``ship-plan births --rows 19807`` (a
15-minute dead end: no plan can make it pass). Now the refusal names the threshold
that size can meet and the one command that proposes every threshold the size meets
and plans them (``ship-plan --propose-thresholds``); nothing is spent.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from synthflow.cli import main

REPO = Path(__file__).resolve().parents[2]
NVSS_160K = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_160k.csv.gz"


def test_a_size_no_plan_can_reach_names_the_threshold_it_can_meet(tmp_path, capsys):
    if not NVSS_160K.exists():
        pytest.skip("needs ../shared/public_data (the NVSS 2019 sample)")
    data = tmp_path / "registry_20k.csv"
    pd.read_csv(NVSS_160K, nrows=20_000).to_csv(data, index=False)
    ledger = tmp_path / "budget.jsonl"
    out, enclave = tmp_path / "out", tmp_path / "enclave"
    rc = main(["release", "births", "--data", str(data), "--ledger", str(ledger),
               "--out", str(out), "--private-dir", str(enclave)])  # fmt: skip
    err = " ".join(capsys.readouterr().err.split())
    assert rc == 2
    assert "faithfulness_unmatched fails even without noise" in err
    assert "a threshold this size can meet (about" in err
    # no plan of the spec's thresholds is suggested (a dead end at this size) ...
    assert not re.search(r"ship-plan births --rows \d+ --out", err)
    # ... but the one command that proposes what this size can meet and plans it
    assert re.search(
        r"what this size can reach, and the plan that gets it .* synthflow ship-plan births "
        r"--rows 19\d\d\d --propose-thresholds --out plans/",
        err,
    )
    assert "faithfulness_unmatched 0." in err
    assert "Nothing was spent" in err
    assert not ledger.exists() or len(ledger.read_text().splitlines()) <= 1


def test_births_ships_a_plan_for_a_smaller_registry():
    """#61 item 1: plans for several sizes ship with births; the nearest size is picked."""
    from synthflow.release import shipped

    assert shipped.shipped_sizes("births") == ["births", "births@120000"]
    small = shipped.shipped_plan("births@120000")
    assert small is not None and small.rows is not None
    assert abs(small.rows - 120_000) / 120_000 < 0.02  # its draw, after cleaning
    assert small.content["release_probability"] >= 0.9  # the recipe's target
    assert small.content["total_epsilon"] <= 2.0  # within the spec's total
    own = shipped.shipped_plan("births")
    assert own is not None and own.rows is not None and own.rows > 150_000
    pick = {n: shipped.shipped_plan_of("births", rows=n).name for n in
            (None, 170_000, 140_000, 118_000, 60_000)}  # fmt: skip
    assert pick == {None: "births", 170_000: "births", 140_000: "births",
                    118_000: "births@120000", 60_000: "births@120000"}  # fmt: skip


def test_release_births_at_118k_rows_uses_the_plan_made_for_its_size(tmp_path, capsys):
    """Another country's registry (118K births) releases in one command, no sweep."""
    import numpy as np

    from synthflow.release import audit_release
    from synthflow.resources import public_data_file

    full = pd.read_csv(public_data_file("nvss_like_2019.csv.gz"))
    rows = np.random.default_rng(1).choice(len(full), 118_000, replace=False)
    data = tmp_path / "registry_118k.csv"
    full.iloc[np.sort(rows)].to_csv(data, index=False)
    out = tmp_path / "release"
    rc = main(["release", "births", "--data", str(data), "--public", "--seed", "5",
               "--out", str(out), "--private-dir", str(tmp_path / "enclave"),
               "--quiet"])  # fmt: skip
    err = " ".join(capsys.readouterr().err.split())
    assert "using the plan shipped for 'births@120000'" in err
    assert "Nothing was spent" not in err  # within 20% of its size: not refused
    assert rc == 0, err[-1500:]  # this seeded release passes its single attempt
    report = audit_release(out, spec_path="births")
    assert report.ok, report.failures
    assert report.audited_against and "births@120000" in report.audited_against

"""#61 item 1, in part: a registry too small for a criterion gets no plan suggestion.

At 20,000 births (the first rows of the real NVSS 2019 sample) faithfulness fails
without any noise: two real samples of that size score about 0.125 against its
threshold 0.05. ``release births`` used to suggest ``ship-plan births --rows 19807`` (a
15-minute dead end: no plan can make it pass). Now the refusal names the threshold
that size can meet and suggests no plan; nothing is spent.
"""

from __future__ import annotations

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
    assert "ship-plan" not in err
    assert "Nothing was spent" in err
    assert not ledger.exists() or len(ledger.read_text().splitlines()) <= 1

"""Screen at the private file's size with ``public-data draw`` (#38 item 7).

The wide table's public sample is a tenth of the private file (3,238 rows against
32,384, both from ``synthflow.public.wide``): a sweep on the sample shortlists nothing,
a sweep on 32,384 rows drawn from a model of the sample shortlists the configuration,
and the release on the private file passes. Every step through the CLI. The spec is
``configs/wide_census.yaml`` cut to one configuration (workload, cell power 1, the
release binning, min_count 1) so that the test runs three flows or so, not the space.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from synthflow.cli import main
from synthflow.public.wide import write_wide_table
from synthflow.release.audit import audit_release

REPO = Path(__file__).resolve().parents[2]
PRIVATE_ROWS, PUBLIC_ROWS = 32_384, 3_238


def _one_configuration_spec(path: Path) -> Path:
    doc = yaml.safe_load((REPO / "configs" / "wide_census.yaml").read_text())
    del doc["columns"]["age"]["transformations"]["b"]
    doc["space"] = {
        "min_count": [1],
        "models": [
            {
                "model": "workload",
                "grid": {
                    "one_way_share": 0.1,
                    "constrained_share": 0.05,
                    "select_share": 0.05,
                    "cell_power": 1.0,
                    # the configuration measured below (pass rates 2 in 5): the tree
                    # only, as before extra pairs became the default
                    "extra_pairs": 0,
                },
            }
        ],
    }
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.slow
def test_screening_a_draw_at_the_private_size_shortlists_and_releases(tmp_path: Path) -> None:
    spec = str(_one_configuration_spec(tmp_path / "wide.yaml"))
    private, public = tmp_path / "private.csv", tmp_path / "public.csv"
    write_wide_table(str(private), PRIVATE_ROWS, seed=1)
    write_wide_table(str(public), PUBLIC_ROWS, seed=2)

    def sweep(data: Path, store: Path, repeats: int) -> None:
        assert main(["sweep", spec, "--data", str(data), "--public", "--repeats",
                     str(repeats), "--workers", "1", "--store", str(store), "--seed", "1",
                     "--quiet"]) == 0  # fmt: skip

    # On the small sample: nothing passes (measured: faithfulness 0.77 unmatched against
    # 0.35, conditional mean 27 against 8, coefficient error 18-25 against 8), so the
    # shortlist is empty (exit 1) and the release could not start.
    sweep(public, tmp_path / "small.db", 1)
    empty = tmp_path / "small.yaml"
    assert main(["shortlist", "--store", str(tmp_path / "small.db"), "--out", str(empty)]) == 1

    # Drawn at the private size from the small sample: the same configuration passes.
    drawn = tmp_path / "drawn.csv"
    assert main(["public-data", "draw", spec, "--from", str(public), "--public", "--rows",
                 str(PRIVATE_ROWS), "--seed", "1", "--out", str(drawn)]) == 0  # fmt: skip
    # Three runs, the shortlist needing one pass (10%). Measured on this draw: 5 of 5
    # runs pass without noise, 2 of 5 with the release's noise (the failures: the
    # regression's DP fit noise, coefficient error 3.0 and 4.7 read as 8.4 and 10.4
    # against 8; the release meets the same noise). The sweep is seeded: with --seed 1
    # the third run passes; unseeded, three runs at 2 in 5 would all fail 22% of the time.
    sweep(drawn, tmp_path / "drawn.db", 3)
    cands = tmp_path / "candidates.yaml"
    assert main(["shortlist", "--store", str(tmp_path / "drawn.db"), "--out", str(cands)]) == 0
    assert len(yaml.safe_load(cands.read_text())["configurations"]) == 1

    rel = tmp_path / "release"
    code = main(["release", spec, "--data", str(private), "--candidates", str(cands),
                 "--out", str(rel), "--private-dir", str(tmp_path / "enclave"), "--public",
                 "--seed", "5", "--quiet", "--max-attempts", "8"])  # fmt: skip
    assert code == 0, "no release within 8 attempts"
    assert audit_release(rel).ok

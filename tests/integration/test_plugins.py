"""A generator and a criterion kind from outside the package run from the CLI
(``--plugin``), built from docs/adding-a-generator.md and docs/adding-a-criterion.md as
written. Each command runs in a fresh interpreter: a plug-in registers for its process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

from synthflow.sweep.store import SweepStore

REPO = Path(__file__).resolve().parents[2]


def _page_code(page: str) -> str:
    return re.search(r"```python\n(.*?)```", (REPO / "docs" / page).read_text(), re.S).group(1)


def _synthflow(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "synthflow", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=cwd,
    )


def _spec(tmp_path: Path, edit) -> Path:
    raw = yaml.safe_load((REPO / "configs" / "births-2024.yaml").read_text())
    edit(raw)
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_a_generator_from_outside_the_package_runs_from_the_cli(tmp_path, nvss_10k):
    (tmp_path / "independent.py").write_text(_page_code("adding-a-generator.md"))

    def independent_only(raw):
        raw["space"]["models"] = [{"model": "independent", "grid": {}}]

    spec = _spec(tmp_path, independent_only)
    refused = _synthflow("space", str(spec), cwd=tmp_path)
    assert refused.returncode == 2 and "independent" in refused.stderr  # unknown without it

    listed = _synthflow(
        "--plugin", "independent.py", "space", str(spec), "--json", "-", cwd=tmp_path
    )
    assert listed.returncode == 0, listed.stderr
    configs = json.loads(listed.stdout)
    rows = configs["configurations"] if isinstance(configs, dict) else configs
    config_id = rows[0]["id"]
    assert config_id.startswith("independent-")

    out = tmp_path / "run"
    run = _synthflow(
        "--plugin", "independent.py", "run", str(spec), "--config", config_id,
        "--data", str(nvss_10k), "--public", "--seed", "1", "--out", str(out), cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    ledger = [json.loads(x) for x in (out / "ledger.jsonl").read_text().splitlines()]
    charges = [x for x in ledger if str(x.get("what", "")).startswith("independent ")]
    spec_eps = yaml.safe_load(spec.read_text())["privacy"]["generator_epsilon"]
    assert abs(sum(x["epsilon"] for x in charges) - spec_eps) < 1e-9  # the page's charges
    assert (out / "candidate.csv").stat().st_size > 0

    # A local sweep's workers, forked from a server started before the plug-in was
    # loaded, load it too: every run is the page's generator, and none failed.
    store = tmp_path / "sweep.db"
    swept = _synthflow(
        "--plugin", "independent.py", "sweep", str(spec), "--data", str(nvss_10k), "--public",
        "--seed", "1", "--repeats", "2", "--workers", "2", "--store", str(store), "--quiet",
        cwd=tmp_path,
    )  # fmt: skip
    assert swept.returncode == 0, swept.stderr[-2000:]
    with SweepStore.open_existing(store) as db:
        runs = db.runs()
    assert len(runs) == 2 * len(rows) and set(runs.model) == {"independent"}
    assert (runs.status == "ok").all(), runs.error.dropna().tolist()


def test_a_criterion_from_outside_the_package_runs_from_the_cli(tmp_path, nvss_10k):
    (tmp_path / "column_mean.py").write_text(_page_code("adding-a-criterion.md"))

    def with_column_mean(raw):
        raw["acceptance"]["criteria"].append(
            {"name": "mean_birth_weight", "kind": "column_mean", "column": "birth_weight",
             "threshold": 20, "epsilon": 0.05}
        )  # fmt: skip
        raw["privacy"]["total_epsilon"] += 0.05

    spec = _spec(tmp_path, with_column_mean)
    refused = _synthflow("validate", str(spec), cwd=tmp_path)
    assert refused.returncode == 2 and "column_mean" in refused.stderr

    ok = _synthflow("--plugin", "column_mean.py", "validate", str(spec), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    listed = _synthflow(
        "--plugin", "column_mean.py", "space", str(spec), "--json", "-", cwd=tmp_path
    )
    configs = json.loads(listed.stdout)
    config_id = (configs["configurations"] if isinstance(configs, dict) else configs)[0]["id"]
    report = tmp_path / "report.json"
    evaluated = _synthflow(
        "--plugin", "column_mean.py", "evaluate", str(spec), "--config", config_id,
        "--data", str(nvss_10k), "--candidate", str(nvss_10k), "--exact", "--public",
        "--json", str(report), cwd=tmp_path,
    )  # fmt: skip
    assert evaluated.returncode in (0, 1), evaluated.stderr  # 1: some criterion failed
    criteria = {c["name"]: c for c in json.loads(report.read_text())["criteria"]}
    assert criteria["mean_birth_weight"]["value"] == 0.0  # a table against itself


def test_a_dask_clusters_workers_load_the_commands_plugins(tmp_path, nvss_10k):
    """--address: the cluster's workers import the plug-in before they read the spec."""
    from distributed import LocalCluster

    (tmp_path / "independent.py").write_text(_page_code("adding-a-generator.md"))

    def independent_only(raw):
        raw["space"]["models"] = [{"model": "independent", "grid": {}}]

    spec = _spec(tmp_path, independent_only)
    store = tmp_path / "dask.db"
    with LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        swept = _synthflow(
            "--plugin", "independent.py", "sweep", str(spec), "--data", str(nvss_10k),
            "--public", "--seed", "1", "--repeats", "1", "--store", str(store), "--quiet",
            "--address", cluster.scheduler_address, cwd=tmp_path,
        )  # fmt: skip
    assert swept.returncode == 0, swept.stderr[-2000:]
    with SweepStore.open_existing(store) as db:
        runs = db.runs()
    assert len(runs) > 0 and set(runs.model) == {"independent"}
    assert (runs.status == "ok").all(), runs.error.dropna().tolist()

"""Shared fixtures: specs, public NVSS samples and small made-up frames."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthflow.config import ReleaseSpec
from synthflow.loader import load_spec

REPO = Path(__file__).resolve().parents[1]
# Ledger heads (synthflow/privacy/head.py) recorded by tests never reach the user's
# ~/.synthflow, even from fixtures set up before the per-test one below.
os.environ.setdefault("SYNTHFLOW_HOME", tempfile.mkdtemp(prefix="synthflow-home-"))
SHARED_DATA = REPO.parent / "shared" / "public_data"
NVSS_10K = SHARED_DATA / "nvss2019_singleton_10k.csv"
NVSS_160K = SHARED_DATA / "nvss2019_singleton_160k.csv.gz"


def pytest_configure(config: pytest.Config) -> None:
    """One OpenMP thread per xdist worker (torch reads it when first imported).

    ``-n 2`` already runs one test process per core; torch's default of one intra-op
    thread per core then puts four busy threads on two cores, and the GANs' many small
    ops wait on each other (a tiny GAN fit took several times longer than alone).
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(autouse=True)
def _synthflow_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Each test's own record of ledger heads (never the user's ~/.synthflow).

    Subprocesses a test starts inherit it.
    """
    monkeypatch.setenv("SYNTHFLOW_HOME", str(tmp_path_factory.mktemp("synthflow-home")))


@pytest.fixture(scope="session")
def births_spec() -> ReleaseSpec:
    return load_spec(REPO / "configs" / "births-2024.yaml")


@pytest.fixture(scope="session")
def small_spec() -> ReleaseSpec:
    return load_spec(REPO / "configs" / "example_small.yaml")


@pytest.fixture(scope="session")
def nvss_10k() -> Path:
    if not NVSS_10K.exists():
        pytest.skip(f"public NVSS sample not found at {NVSS_10K} (../shared beside the repo)")
    return NVSS_10K


@pytest.fixture(scope="session")
def nvss_160k() -> Path:
    if not NVSS_160K.exists():
        pytest.skip(f"public NVSS sample not found at {NVSS_160K} (../shared beside the repo)")
    return NVSS_160K


def make_small_frame(n: int, seed: int) -> pd.DataFrame:
    """Made-up clinic visits for configs/example_small.yaml, with some structure."""
    g = np.random.default_rng(seed)
    age = g.integers(0, 100, n)
    smoker = np.where(g.random(n) < 0.1 + 0.3 * (age > 30), "yes", "no")
    visits = np.clip(g.poisson(1 + age / 25 + 2 * (smoker == "yes")), 1, 50)
    region = g.choice(["north", "south", "east", "west"], n, p=[0.4, 0.3, 0.2, 0.1])
    return pd.DataFrame({"age": age, "visits": visits, "region": region, "smoker": smoker})


@pytest.fixture(scope="session")
def make_frame():
    """:func:`make_small_frame` itself: other draws of the made-up clinic table (a bare
    ``import conftest`` in a test module may find another directory's conftest)."""
    return make_small_frame


@pytest.fixture(scope="session")
def small_frame() -> pd.DataFrame:
    """The made-up clinic visits of ``small_csv`` (600 rows), as a frame."""
    return make_small_frame(600, seed=7)


@pytest.fixture()
def small_csv(tmp_path: Path) -> Path:
    path = tmp_path / "clinic.csv"
    make_small_frame(600, seed=7).to_csv(path, index=False)
    return path


@pytest.fixture(scope="session")
def mixed_shortlist(tmp_path_factory) -> tuple[ReleaseSpec, list]:
    """example_small.yaml with a delta budget and a small DPCTGAN grid, and a shortlist
    of two PrivBayes configurations and one DPCTGAN (pure and (epsilon, delta) mixed).

    DPCTGAN: 2 epochs at batch 60 on 600 rows are 20 Poisson steps at q = 0.1.
    """
    import yaml

    from synthflow.space import expand_space

    raw = yaml.safe_load((REPO / "configs" / "example_small.yaml").read_text())
    raw["privacy"].update(total_delta=1e-6, total_epsilon=8.0)
    raw["space"]["models"].append(
        {
            "model": "dpctgan",
            "grid": {
                "delta": 1e-8,
                "epochs": 2,
                "batch_size": 60,
                "noise_multiplier": 5.0,  # the 20 steps cost 0.91 of training's half of 2
                "embedding_dim": 16,
                "hidden": 32,
            },
        }
    )
    path = tmp_path_factory.mktemp("mixed") / "spec.yaml"
    path.write_text(yaml.safe_dump(raw))
    spec = load_spec(path)
    cands = [c for c in expand_space(spec) if c.letters == "aaaa"]
    shortlist = [c for c in cands if c.model == "privbayes"][:2] + [
        c for c in cands if c.model == "dpctgan"
    ][:1]
    return spec, shortlist


@pytest.fixture()
def tmpfs(tmp_path: Path):
    """Mount a real tmpfs: ``tmpfs("size=96k")`` or ``tmpfs("ro,size=64k")``.

    Root only (CI and the dev machines run as root); skipped where mount(8) cannot.
    Unmounted when the test ends.
    """
    import shutil
    import subprocess

    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    mounts: list[Path] = []

    def mount(options: str) -> Path:
        where = tmp_path / f"tmpfs{len(mounts)}"
        where.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
        mounts.append(where)
        return where

    yield mount
    for where in mounts:
        subprocess.run(["umount", "-l", str(where)], check=False)

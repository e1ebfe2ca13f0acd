"""The base install is what the main job needs ([ux] 8): 22 packages where it was 52.

Private-PGM (mbi, jax) and diffprivlib (scikit-learn) left the base dependencies: mbi is
the ``pgm`` extra, diffprivlib a dev dependency the tests compare against; matplotlib
(``reports``), cryptography (``sign``) and jsonschema (``schema``) are extras too. These
tests run the real CLI in a fresh interpreter in which those packages cannot be
imported, as on a base install: the demo releases and audits, DP table noise works, and
what needs an extra is refused with its install command before any work or charge.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BLOCKED = ("mbi", "jax", "diffprivlib", "sklearn", "matplotlib", "cryptography", "jsonschema")
RUN = (
    "import importlib.machinery as m, sys\n"
    f"BLOCKED = {BLOCKED!r}\n"
    "class Hide(m.PathFinder):  # finds nothing of BLOCKED: as when it is not installed\n"
    "    @classmethod\n"
    "    def find_spec(cls, name, path=None, target=None):\n"
    "        if name.split('.')[0] in BLOCKED:\n"
    "            return None\n"
    "        return m.PathFinder.find_spec(name, path, target)\n"
    "sys.meta_path = [Hide if f is m.PathFinder else f for f in sys.meta_path]\n"
    # not sys.modules[m] = None: that leaves the name in sys.modules, where scipy's
    # array-API helpers take it for an imported jax (a base install has no such entry)
    "from synthflow.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)
REPO = Path(__file__).resolve().parents[2]


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUN, *argv], cwd=cwd, capture_output=True, text=True, check=False
    )


@pytest.mark.slow
def test_the_demo_runs_without_private_pgm_diffprivlib_or_scikit_learn(tmp_path):
    proc = _cli("demo", "--out", "demo", "--seed", "3", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "audit        passed" in proc.stderr
    assert (tmp_path / "demo" / "release" / "synthetic.csv").is_file()


def test_gaussian_table_noise_needs_no_diffprivlib(tmp_path, nvss_10k):
    proc = _cli(
        "tables", "protect", str(REPO / "configs" / "births-2024.yaml"), "--data",
        str(nvss_10k), "--public", "--seed", "1", "--tables",
        str(REPO / "configs" / "tables_births.yaml"), "--method", "gaussian", "--epsilon", "1",
        "--delta", "1e-6", "--out", str(tmp_path / "t"), "--quiet", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert any((tmp_path / "t").iterdir())


def test_a_model_that_needs_private_pgm_is_refused_before_any_charge(tmp_path):
    data = tmp_path / "wide.csv"
    made = _cli("public-data", "wide", "--out", str(data), "--rows", "3000", "--seed", "1",
                "--quiet", cwd=tmp_path)  # fmt: skip
    assert made.returncode == 0, made.stderr
    ledger = tmp_path / "ledger.jsonl"
    # wide_census's workload configurations run in tree mode (2^53-cell joint).
    proc = _cli(
        "run", "wide_census", "--data", str(data), "--config", "workload-778295eb86",
        "--ledger", str(ledger), "--out", str(tmp_path / "r"), "--quiet", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'synthflow-dp[pgm]'" in proc.stderr
    assert not (tmp_path / "r").exists()
    # Nothing was charged: the ledger holds no charge (at most its header line).
    lines = ledger.read_text().splitlines() if ledger.exists() else []
    assert not any('"what"' in line for line in lines)


def test_what_needs_an_extra_is_refused_with_its_install_command(tmp_path, nvss_10k):
    spec = str(REPO / "configs" / "births-2024.yaml")
    for argv, extra in (
        (("plan", spec, "--store", str(tmp_path / "none.db"), "--data", str(nvss_10k),
          "--public", "--out", str(tmp_path / "plan")), "reports"),
        (("keygen", "--out", str(tmp_path / "key")), "sign"),
    ):  # fmt: skip
        proc = _cli(*argv, "--quiet", cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert f"pip install 'synthflow-dp[{extra}]'" in proc.stderr
    assert not (tmp_path / "plan").exists() and not list(tmp_path.glob("key*"))
    checked = _cli("validate", spec, cwd=tmp_path)  # the loader's checks run without it
    assert checked.returncode == 0, checked.stderr[-2000:]
    assert "pip install 'synthflow-dp[schema]'" in checked.stderr


def test_evaluate_report_without_matplotlib_is_refused_before_the_charge(tmp_path, nvss_10k):
    ledger = tmp_path / "ledger.jsonl"
    spec = str(REPO / "configs" / "births-2024.yaml")
    proc = _cli(
        "evaluate", spec, "--config", "privbayes-a1076afd5b", "--data", str(nvss_10k),
        "--candidate", str(nvss_10k), "--ledger", str(ledger), "--report",
        str(tmp_path / "r.html"), "--quiet", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "pip install 'synthflow-dp[reports]'" in proc.stderr
    assert not ledger.exists()  # nothing charged, no ledger made

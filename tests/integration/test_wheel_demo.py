"""The README's first command from an installed wheel, outside the checkout.

An enclave installs a wheel, not an editable checkout: the wheel must carry the bundled
specs (``configs/``), the default public data (``public_data/``) and the report
templates, and ``synthflow demo`` must make an audited release from them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _build_wheel(tmp_path: Path) -> Path:
    # Build from a copy so that the checkout gets no build/ or egg-info directories.
    src = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")
    for name in ("synthflow", "configs", "public_data"):
        shutil.copytree(REPO / name, src / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    import setuptools

    # Without build isolation when the installed setuptools can build it (offline);
    # otherwise pip fetches setuptools>=77 from the package index (CI may).
    isolation = [] if int(setuptools.__version__.split(".")[0]) < 77 else ["--no-build-isolation"]
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *isolation, "-w", str(dist),
         str(src)],
        check=True,
    )  # fmt: skip
    (wheel,) = dist.glob("synthflow_dp-*.whl")  # the distribution synthflow-dp
    return wheel


@pytest.mark.slow
def test_wheel_runs_the_demo_outside_the_checkout(tmp_path):
    wheel = _build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "synthflow/_configs/births.yaml",
        "synthflow/_configs/example_small.yaml",
        "synthflow/_public_data/nvss_like_2019.csv.gz",
        "synthflow/_public_data/nvss2019_calibration.yaml",
        "synthflow/_configs/births-2024.yaml",
        "synthflow/_configs/births-pure.yaml",
        "synthflow/_public_data/shipped_plans.yaml",  # the shipped plans and their recipes
        "synthflow/_public_data/births.plan.json",
        "synthflow/_public_data/births.plan.spec.yaml",
        "synthflow/_public_data/births.plan.candidates.yaml",
        "synthflow/_public_data/births.plan.html",
        "synthflow/_public_data/births.sweep.db",
        "synthflow/_public_data/births-pure.plan.json",
        "synthflow/templates/style.css",
        "synthflow/templates/base.html.j2",
        "synthflow/spec.schema.json",
    ):
        assert needed in names, needed
    # A fresh venv; its dependencies come from this environment, synthflow from the wheel.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    subprocess.run(
        [str(bindir / "python"), "-m", "pip", "install", "--no-deps", "-q", str(wheel)], check=True
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = subprocess.run(
        [str(bindir / "python"), "-c", "import synthflow; print(synthflow.__file__)"],
        cwd=elsewhere, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert Path(where).is_relative_to(venv), where  # the wheel's copy, not the checkout's
    # The spec schema an editor reads, from the installed package.
    schema = subprocess.run(
        [str(bindir / "synthflow"), "schema"], cwd=elsewhere, capture_output=True, text=True,
        check=True,
    ).stdout.strip()  # fmt: skip
    assert Path(schema).is_relative_to(venv) and json.loads(Path(schema).read_text())["$defs"]
    # The shipped plan, no sweep; a seed fixes a single attempt that releases (the
    # embedded data is public).
    proc = subprocess.run(
        [str(bindir / "synthflow"), "demo", "--out", "demo", "--seed", "3", "--quiet"],
        cwd=elsewhere, capture_output=True, text=True, check=False,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    release = Path(proc.stdout.strip().splitlines()[-1])
    assert release.is_absolute() and release == (elsewhere / "demo" / "release").resolve()
    assert sorted(p.name for p in release.iterdir()) == [
        "MANIFEST.json",
        "README.md",
        "acceptance.json",
        "spec.yaml",
        "synthetic.csv",
    ]
    acceptance = json.loads((release / "acceptance.json").read_text())
    assert acceptance["passed"] is True
    plan = json.loads((elsewhere / "demo" / "plan" / "plan.json").read_text())
    assert acceptance["budget"]["total_epsilon"] == pytest.approx(plan["total_epsilon"])
    assert plan["total_epsilon"] <= 2 and acceptance["budget"]["total_delta"] <= 1e-6
    # the number of attempts stays in the enclave
    outcome = json.loads((elsewhere / "demo" / "enclave" / "outcome.json").read_text())
    assert outcome["attempts"] >= 1
    assert "attempts" not in (release / "acceptance.json").read_text()
    assert "attempts" not in (release / "README.md").read_text().replace("how many attempts", "")
    assert (elsewhere / "demo" / "plan" / "plan.html").is_file()
    # The demo ends with a summary a person reads (#38): plan, spend, audit, paths.
    summary = proc.stderr[proc.stderr.index("synthflow demo finished:") :]
    assert f"spent        epsilon {plan['total_epsilon']:.3g} (delta 1e-06) of 2" in summary
    assert "audit        passed" in summary
    assert "datasheet    demo/release/README.md" in summary
    # Its datasheet states the demo's own provenance, not the births registry's.
    assert "Provenance not confirmed" not in (release / "README.md").read_text()
    assert (
        "- Source: synthflow's embedded file nvss_like_2019.csv.gz"
        in (release / "README.md").read_text()
    )
    # The datasheet says the "private" data was the public stand-in, and has every section.
    readme = (release / "README.md").read_text()
    assert "This is a demonstration" in readme and "nvss_like_2019.csv.gz" in readme
    for section in ("## Composition: the codebook", "## Quality checks", "## Privacy",
                    "## Disclosure risk of the released file", "## Distribution"):  # fmt: skip
        assert section in readme
    assert "replaced by copies of other records" in readme
    audit = subprocess.run(
        [str(bindir / "synthflow"), "audit", str(release)], cwd=elsewhere, capture_output=True,
        text=True, check=False,
    )  # fmt: skip
    assert audit.returncode == 0 and "audit passed" in audit.stdout

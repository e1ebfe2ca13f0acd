"""The whole pipeline on two tables that are not births (#15 [generality]).

* **affairs**: a real survey shipped with statsmodels (Fair 1978; 6,366 women), split
  into a public and a private file by ``synthflow public-data affairs``; the spec
  ``configs/affairs.yaml`` was written from ``docs/spec.md``. Sweep on the public part,
  shortlist, release the private part, audit: every step through the CLI.
* **wide**: a generated 15-column table (~10^16 binned cells, 32,000 rows) under
  ``configs/wide_census.yaml``: every generator runs or refuses before charging, every
  criterion and both reports run, and a release passes its spec (2-way marginals within
  0.03, a regression on four chosen features).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthflow.acceptance import evaluate
from synthflow.acceptance.evaluate import marginal_family
from synthflow.cli import main
from synthflow.criteria import marginals
from synthflow.data import load_data
from synthflow.errors import InfeasibleConfigurationError
from synthflow.flow import run_flow
from synthflow.generators import REGISTRY
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.public.wide import write_wide_table
from synthflow.release.audit import audit_release
from synthflow.space import Configuration, expand_space
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[2]
AFFAIRS = REPO / "configs" / "affairs.yaml"
WIDE = REPO / "configs" / "wide_census.yaml"


def _ids(spec_path: Path, model: str, **hp: object) -> list[str]:
    spec = load_spec(spec_path)
    return [
        c.id
        for c in expand_space(spec)
        if c.model == model and all(c.hyperparameters.get(k) == v for k, v in hp.items())
    ]


# --------------------------------------------------------------------------- affairs


@pytest.fixture(scope="module")
def affairs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("statsmodels")
    out = tmp_path_factory.mktemp("affairs")
    assert main(["public-data", "affairs", "--out", str(out)]) == 0
    return out


@pytest.mark.slow
def test_affairs_sweep_shortlist_release_audit(affairs: Path, tmp_path: Path) -> None:
    """Every step through the CLI; one workload configuration keeps it to minutes.

    At the public part's 1,910 rows no configuration meets the spec's thresholds (the
    sweep's pass estimate is 0; at the private part's 4,456 rows the same generator
    does), so the shortlist keeps it with ``--min-pass 0`` and the release needs
    ``--force`` past the pre-flight's "nothing ever passed" refusal, which is checked.
    """
    public, private = affairs / "public.csv", affairs / "private.csv"
    spec = load_spec(AFFAIRS)
    assert len(load_data(public, spec, public=True).frame) == 1910
    ids = _ids(AFFAIRS, "workload", one_way_share=0.1)
    ids = [i for i in ids if next(c for c in expand_space(spec) if c.id == i).min_count == 1]
    store, cands = tmp_path / "sweep.db", tmp_path / "candidates.yaml"
    assert main(["sweep", str(AFFAIRS), "--data", str(public), "--public", "--repeats", "1",
                 "--store", str(store), "--workers", "1", "--ids", ids[0],
                 "--quiet"]) == 0  # fmt: skip
    assert main(["shortlist", "--store", str(store), "--min-pass", "0",
                 "--out", str(cands)]) == 0  # fmt: skip
    shortlisted = yaml.safe_load(cands.read_text())["configurations"]
    assert [c["id"] for c in shortlisted] == ids[:1]
    rel = tmp_path / "release"
    argv = ["release", str(AFFAIRS), "--data", str(private), "--candidates", str(cands),
            "--out", str(rel), "--private-dir", str(tmp_path / "enclave"), "--public",
            "--seed", "1", "--quiet", "--max-attempts", "25"]  # fmt: skip
    # Enough attempts, not a chosen seed: an attempt passes with probability about 0.15
    # here (seed 1 released at its 7th attempt; seeds 3-6, 8 and 9 found no pass within
    # 6), so 25 attempts fail to release for fewer than 2% of seeds (0.85^25 = 0.017).
    if shortlisted[0]["pass_rate"] == 0:
        assert main(argv) == 2 and not (tmp_path / "enclave").exists()
        argv.append("--force")
    assert main(argv) == 0
    assert audit_release(rel).ok
    acceptance = json.loads((rel / "acceptance.json").read_text())
    assert acceptance["passed"]
    readme = (rel / "README.md").read_text()
    assert "respondent" in readme and "birth" not in readme.lower()


# --------------------------------------------------------------------------- randhie


def test_randhie_split_spec_and_two_real_halves_pass_every_criterion(tmp_path: Path) -> None:
    """The real 10-column table: its split, and the spec's thresholds against two halves.

    ``configs/randhie.yaml`` says two random halves of the table pass every criterion
    with room (the figures beside each threshold). Checked on three splits other than
    the ones that set them: each criterion at most 0.8 of its threshold (the halves'
    largest figure over 50 splits was at most 0.6 of it: the conditional mean's 0.59).
    """
    pytest.importorskip("statsmodels")
    import numpy as np

    from synthflow.acceptance import exact_values
    from synthflow.public.randhie import RANDHIE_COLUMNS

    out = tmp_path / "randhie"
    assert main(["public-data", "randhie", "--out", str(out)]) == 0
    assert main(["public-data", "randhie", "--out", str(out)]) == 2  # never overwritten
    spec = load_spec(REPO / "configs" / "randhie.yaml")
    public = load_data(out / "public.csv", spec, public=True).frame
    private = load_data(out / "private.csv", spec, public=True).frame
    assert (len(public), len(private)) == (6057, 14133)
    assert tuple(public.columns) == RANDHIE_COLUMNS
    full = pd.concat([public, private], ignore_index=True)
    tr = Transformer(spec, {})
    half = len(full) // 2
    for seed in (101, 102, 103):
        order = np.random.default_rng(seed).permutation(len(full))
        a, b = (tr.forward(full.iloc[order[i * half : (i + 1) * half]].reset_index(drop=True))
                for i in (0, 1))  # fmt: skip
        values = exact_values(spec, tr, a, b)
        for c in spec.criteria:
            assert values[c.name] <= 0.8 * c.threshold, (seed, c.name, values[c.name])


# ------------------------------------------------------------------------------ wide


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("wide")
    private, public = out / "private.csv", out / "public.csv"
    write_wide_table(str(private), 32000, seed=1)
    write_wide_table(str(public), 32000, seed=2)
    return private, public


def test_wide_domain_is_wide() -> None:
    spec = load_spec(WIDE)
    tr = Transformer(spec, {c: "a" for c in spec.column_names})
    assert len(spec.columns) >= 15 and tr.domain.cells >= 10**15


FAST = {  # settings that keep each generator within the CI budget on 32K rows
    "workload": {"one_way_share": 0.1, "constrained_share": 0.05, "cell_power": 1.0,
                 "iters": 1000},
    "privbayes": {"flavor": "degree", "epsilon_split": 0.1, "degree": 1},
    "mwem": {"num_query": 512, "num_iterations": 100},
    "pep": {"num_query": 512, "num_iterations": 100, "marginal": 2},
    "mst": {"delta": 1e-9},
    "aim": {"delta": 1e-9, "rounds": 16, "max_model_size": 5.0},
    "dpctgan": {"delta": 1e-9, "epochs": 1, "batch_size": 500, "noise_multiplier": 2.0},
    "patectgan": {"delta": 1e-9, "epochs": 3, "batch_size": 500, "noise_multiplier": 5.0},
}  # fmt: skip
# The GANs run on fewer rows (the domain is as wide): DPCTGAN needs 4,000 for one epoch of
# batch 500 to fit in epsilon 4; PATECTGAN gets 40 teachers of 100 rows.
GAN_ROWS = {"dpctgan": 4000, "patectgan": 4000}


@pytest.mark.slow
@pytest.mark.parametrize("model", sorted(REGISTRY))
def test_wide_every_generator_runs_or_refuses_before_charging(
    wide: tuple[Path, Path], model: str
) -> None:
    if model in ("mst", "aim"):
        pytest.importorskip("snsynth")
    if model in ("dpctgan", "patectgan"):
        pytest.importorskip("torch")
        pytest.importorskip("dp_accounting")
    spec = load_spec(WIDE)
    raw = load_data(wide[1], spec, public=True).frame
    if model in GAN_ROWS:
        raw = raw.iloc[: GAN_ROWS[model]]
    cfg = Configuration(
        model=model,
        hyperparameters_items=tuple(sorted(FAST[model].items())),
        transformations_items=tuple((c, "a") for c in spec.column_names),
        min_count=1,
    )
    ledger = Ledger(total_epsilon=10.0, total_delta=1e-6)
    try:
        result = run_flow(
            spec, cfg, raw, ledger=ledger, rng=PrivacyRNG.from_seed(1), public=True,
            show_progress=False,
        )  # fmt: skip
    except InfeasibleConfigurationError as exc:
        # only the dense-cube generators (MWEM, PEP) refuse: their cube is too big
        assert model in ("mwem", "pep"), f"{model} refused: {exc}"
        assert "Largest columns: country (42 bins)" in str(exc)
        assert ledger.spent_epsilon == 0 and not ledger.charges  # refused before any charge
        return
    assert ledger.spent_epsilon == pytest.approx(spec.privacy.generator_epsilon)
    report = evaluate(spec, result.transformer, result.original, result.candidate, exact=True)
    assert {c.name for c in report.criteria} == {c.name for c in spec.criteria}
    assert all(np.isfinite(c.value) for c in report.criteria)


@pytest.mark.slow
def test_wide_evaluate_reports_and_a_release_that_passes(
    wide: tuple[Path, Path], tmp_path: Path
) -> None:
    private, public = wide
    spec = load_spec(WIDE)
    space = {c.id: c for c in expand_space(spec)}
    ids = [
        i
        for i in _ids(WIDE, "workload", cell_power=1.0)
        if space[i].min_count == 1 and set(space[i].letters) == {"a"}
    ]
    assert len(ids) == 1
    # Exact evaluation and its HTML report on the public table (a "candidate" that is
    # another sample: what a perfect generator would score).
    out = tmp_path / "eval"
    assert main(["evaluate", str(WIDE), "--original", str(private), "--candidate", str(public),
                 "--config", ids[0], "--exact", "--public", "--json", str(out) + ".json",
                 "--report", str(out) + ".html"]) in (0, 1)  # fmt: skip
    html = (tmp_path / "eval.html").read_text()
    assert "120 marginals of order 1 to 2" in html
    cands = tmp_path / "candidates.yaml"
    cands.write_text(yaml.safe_dump({"spec_sha256": spec.sha256,
                                     "configurations": [{"id": ids[0]}]}))  # fmt: skip
    rel = tmp_path / "release"
    code = main(["release", str(WIDE), "--data", str(private), "--candidates", str(cands),
                 "--out", str(rel), "--private-dir", str(tmp_path / "enclave"), "--public",
                 "--seed", "5", "--quiet", "--max-attempts", "8"])  # fmt: skip
    assert code == 0, "no release within 8 attempts"
    assert audit_release(rel).ok
    # The figure: the released file's worst 2-way marginal error <= 0.03.
    tr = Transformer(spec, {c: "a" for c in spec.column_names})
    raw = load_data(private, spec, public=True).frame
    labels = pd.read_csv(rel / "synthetic.csv", dtype=str, keep_default_na=False)
    t, r = tr.forward(raw).to_numpy(np.int64), tr.from_labels(labels).to_numpy(np.int64)
    family = marginal_family(spec.criterion("marginal_2way_error"), tr.domain.names)
    worst = marginals.marginal_max_abs_error(t, r, tr.domain.sizes, family)
    print(f"worst 2-way marginal error of the wide release: {worst:.4f}")  # for the notes
    assert worst <= 0.03


@pytest.mark.slow
def test_wide_marginal_tvd_validates_sweeps_and_plans(
    wide: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The marginal_tvd kind (one module) on the wide table: validate, sweep, plan.

    The release and audit of the same spec are the test above.
    """
    from synthflow.plan.job import plan_budget
    from synthflow.sweep.job import run_sweep
    from synthflow.sweep.store import SweepStore

    public = wide[1]
    spec = load_spec(WIDE)
    assert spec.criterion("marginal_mean_tvd").impl.name == "marginal_tvd"
    assert main(["validate", str(WIDE), "--rows", "32000"]) == 0
    out = capsys.readouterr().out
    assert "valid; 15 columns, 7 criteria" in out
    assert "marginal_mean_tvd" not in out  # its noise (sd 0.0044) decides nothing
    space = {c.id: c for c in expand_space(spec)}
    ids = [
        i
        for i in _ids(WIDE, "workload", cell_power=1.0)
        if space[i].min_count == 1 and set(space[i].letters) == {"a"}
    ]
    store = tmp_path / "sweep.db"
    run_sweep(spec, public, store, repeats=2, workers=1, ids=ids, show_progress=False)
    with SweepStore.open_existing(store) as s:
        rows = s.criteria().query("name == 'marginal_mean_tvd'")
    assert len(rows) == 2 and ((rows["value"] > 0) & (rows["value"] < 0.06)).all()
    out = tmp_path / "plan"
    plan = plan_budget(WIDE, store, public, out, show_progress=False, release_probability=0.5)
    tvd = next(c for c in plan["criteria"] if c["name"] == "marginal_mean_tvd")
    # Planned like any Laplace kind: a budget, and a pass probability at least the
    # joint one (measured: epsilon 0.0013, P(pass) 0.83; the sweep's values ~0.03).
    assert tvd["epsilon"] > 0
    assert tvd["predicted_pass_probability"] >= plan["pass_probability"] - 1e-9

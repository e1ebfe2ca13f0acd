"""[stages] #62: a once-per-release kind added from outside, touching no synthflow module.

docs/adding-a-criterion.md builds ``column_mean_once``: the original's mean released
once per release (Laplace, (U - L) / n) and every attempt compares with it. The kind
and its planner measurement are the page's code, loaded as a plug-in; nothing in
synthflow names it. This runs it as written: its sensitivity on neighbouring datasets,
one charge for many attempts, then ``sweep``, ``plan`` (which draws it by its declared
measurement), ``release --fit-once`` and ``audit`` through the CLI in a fresh
interpreter (a plug-in registers for its process).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthflow.acceptance.evaluate import evaluate
from synthflow.criteria import registry
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "adding-a-criterion.md"
NAME = "column_mean_once"


def page_code() -> str:
    """The page's block that defines the once-per-release kind."""
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    return next(b for b in blocks if f'name = "{NAME}"' in b)


def write_spec(tmp_path: Path, threshold: float = 2.0, epsilon: float = 0.2) -> Path:
    """example_small (clinic visits) with the kind on ``visits`` (public bounds [1, 20])."""
    raw = yaml.safe_load((REPO / "configs" / "example_small.yaml").read_text())
    raw["acceptance"]["criteria"].append(
        {"name": "mean_visits_once", "kind": NAME, "column": "visits",
         "threshold": threshold, "epsilon": epsilon}
    )  # fmt: skip
    raw["privacy"]["total_epsilon"] += 1.0
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))  # plan rewrites budgets in place
    return path


@pytest.fixture
def kind(monkeypatch):
    monkeypatch.setattr(registry, "KINDS", dict(registry.KINDS))  # undone after the test
    module = types.ModuleType("column_mean_once_from_docs")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # dataclasses look it up
    exec(compile(page_code(), str(PAGE), "exec"), module.__dict__)
    return module


def _codes(transformer: Transformer, frame: pd.DataFrame) -> pd.DataFrame:
    return transformer.forward(frame)


def test_its_sensitivity_holds_on_neighbouring_datasets(kind, tmp_path, small_frame):
    spec = load_spec(write_spec(tmp_path))
    c = spec.criterion("mean_visits_once")
    transformer = Transformer(spec, {name: "a" for name in ("age", "visits", "region", "smoker")})
    codes = _codes(transformer, small_frame)
    numbers = transformer.transformations["visits"].numbers()
    sens, _ = c.impl.sensitivity_and_threshold(c, spec, {"n": len(codes)}, c.epsilon)
    lo, hi = spec.column("visits").bounds
    assert sens == pytest.approx((hi - lo) / len(codes))
    # Every value the column can take lies within its public bounds, so replacing one
    # row moves the mean by at most (U - L) / n; the worst replacement (its least value
    # for its largest) moves it by exactly the spread of those values over n.
    assert lo <= numbers.min() and numbers.max() <= hi
    low, high = codes.copy(), codes.copy()
    low.loc[0, "visits"], high.loc[0, "visits"] = int(np.argmin(numbers)), int(np.argmax(numbers))
    moved = abs(numbers[high["visits"]].mean() - numbers[low["visits"]].mean())
    assert moved == pytest.approx((numbers.max() - numbers.min()) / len(codes))
    assert moved <= sens + 1e-12


def test_released_once_it_is_charged_once_for_every_attempt(kind, tmp_path, small_frame):
    spec = load_spec(write_spec(tmp_path))
    c = spec.criterion("mean_visits_once")
    transformer = Transformer(spec, {name: "a" for name in ("age", "visits", "region", "smoker")})
    original = _codes(transformer, small_frame)
    ledger = Ledger(total_epsilon=10.0)
    rng = PrivacyRNG.from_seed(3)
    once = registry.release_once(spec, transformer, original, ledger=ledger, rng=rng)
    assert [x.epsilon for x in ledger.charges] == [c.epsilon]  # charged first, once
    assert "once per release" in ledger.charges[0].what
    for seed in (1, 2, 3):  # three attempts, three candidates
        candidate = original.sample(frac=1.0, replace=True, random_state=seed)
        candidate = candidate.reset_index(drop=True)
        report = evaluate(spec, transformer, original, candidate, exact=False,
                          ledger=ledger, rng=rng, released_once=once)  # fmt: skip
        mine = next(r for r in report.criteria if r.name == c.name)
        numbers = transformer.transformations["visits"].numbers()
        assert mine.value == pytest.approx(abs(once - numbers[candidate["visits"]].mean()))
        assert mine.epsilon == 0.0 and mine.mechanism == "laplace mean (fit once per release)"
    # the other criteria were charged per attempt; this one never again
    assert sum(x.epsilon for x in ledger.charges if c.name in x.what) == c.epsilon


def test_sweep_plan_release_fit_once_and_audit_through_the_cli(tmp_path, small_frame):
    plugin = tmp_path / "column_mean_once.py"
    plugin.write_text(page_code())
    spec = write_spec(tmp_path)
    data = tmp_path / "clinic.csv"
    small_frame.to_csv(data, index=False)
    driver = textwrap.dedent(
        f"""
        import sys
        from synthflow.cli import main
        p = ["--plugin", {str(plugin)!r}]
        spec, data, out = {str(spec)!r}, {str(data)!r}, {str(tmp_path)!r}
        def run(*args):
            code = main([*p, *args])
            print("EXIT", args[0], code, flush=True)
            return code
        run("sweep", spec, "--data", data, "--public", "--repeats", "2", "--store",
            out + "/sweep.db", "--workers", "1", "--seed", "6", "--quiet")
        run("plan", spec, "--store", out + "/sweep.db", "--data", data, "--public", "--out",
            out + "/plan", "--seed", "7", "--release-probability", "0.7", "--quiet")
        planned = out + "/plan/spec.yaml"
        run("release", planned, "--data", data, "--candidates", out + "/plan/candidates.yaml",
            "--plan", out + "/plan/plan.json", "--fit-once", "--out", out + "/release",
            "--private-dir", out + "/enclave", "--public", "--seed", "8", "--quiet")
        run("audit", out + "/release", planned)
        """
    )
    done = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True,
                          check=False, cwd=tmp_path)  # fmt: skip
    exits = dict(re.findall(r"EXIT (\w+) (\d+)", done.stdout))
    said = done.stdout[-3000:] + done.stderr[-3000:]
    assert exits == {"sweep": "0", "plan": "0", "release": "0", "audit": "0"}, said

    # The planner drew it by its declared measurement: its budget, its noise, its draws.
    plan = json.loads((tmp_path / "plan" / "plan.json").read_text())
    mine = next(c for c in plan["criteria"] if c["name"] == "mean_visits_once")
    assert mine["mechanism"] == "laplace (the original's mean)"
    assert mine["noise_sd"] == pytest.approx(np.sqrt(2) * mine["sensitivity"] / mine["epsilon"])
    assert mine["sensitivity"] == pytest.approx((20 - 1) / len(small_frame))
    assert plan["fit_once"]  # here the cheapest plan releases it once
    assert plan["basis"]["mean_visits_once_draws"] > 0
    assert "mean_visits_once" in plan["binding"]

    # The release charged it once, before the attempts, and each attempt reused it.
    charges = [json.loads(line) for line in (tmp_path / "enclave" / "ledger.jsonl").open()]
    mine_charged = [x for x in charges if "mean_visits_once" in json.dumps(x)]
    assert len(mine_charged) == 1, mine_charged
    acceptance = json.loads((tmp_path / "release" / "acceptance.json").read_text())
    planned = mine["epsilon"]
    assert mine_charged[0]["epsilon"] == pytest.approx(planned)
    assert acceptance["budget"]["regression_fit_once_epsilon"] == pytest.approx(planned)
    published = next(c for c in acceptance["criteria"] if c["name"] == "mean_visits_once")
    assert published["epsilon"] == 0.0
    assert published["mechanism"] == "laplace mean (fit once per release)"


def test_two_kinds_released_once_are_refused_before_any_charge(tmp_path, small_frame):
    # --fit-once makes one release once and every attempt finds it under one key: a second
    # such criterion would read the first's release as its own and count as charged
    # (it once loaded, priced and ran). Refused at the price, before any charge.
    plugin = tmp_path / "column_mean_once.py"
    plugin.write_text(page_code())
    spec = write_spec(tmp_path)
    raw = yaml.safe_load(spec.read_text())
    raw["acceptance"]["criteria"].append(
        {"name": "coef_visits", "kind": "regression_coefficients", "column": "visits",
         "features": ["age"], "threshold": 5.0, "epsilon": 0.3}
    )  # fmt: skip
    raw["privacy"]["total_epsilon"] += 0.3
    spec.write_text(yaml.safe_dump(raw, sort_keys=False))
    data = tmp_path / "clinic.csv"
    small_frame.to_csv(data, index=False)
    ledger = tmp_path / "enclave" / "ledger.jsonl"
    driver = textwrap.dedent(
        f"""
        import yaml
        from synthflow.cli import main
        from synthflow.loader import load_spec
        from synthflow.plugins import load_plugin
        from synthflow.space import expand_space
        load_plugin({str(plugin)!r})
        spec = load_spec({str(spec)!r})
        cfg = next(c for c in expand_space(spec) if c.letters == "aaaa")
        with open({str(tmp_path / "cands.yaml")!r}, "w") as f:
            yaml.safe_dump({{"spec_sha256": spec.sha256, "configurations": [cfg.to_json()]}}, f)
        code = main(["--plugin", {str(plugin)!r}, "release", {str(spec)!r}, "--data",
                     {str(data)!r}, "--candidates", {str(tmp_path / "cands.yaml")!r},
                     "--fit-once", "--out", {str(tmp_path / "release")!r}, "--private-dir",
                     {str(ledger.parent)!r}, "--public", "--seed", "8", "--max-attempts", "3",
                     "--quiet"])
        print("EXIT", code)
        """
    )
    done = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True,
                          check=False, cwd=tmp_path)  # fmt: skip
    said = done.stdout[-2000:] + done.stderr[-2000:]
    assert "EXIT 2" in done.stdout, said
    assert "--fit-once releases one criterion once per release" in done.stderr, said
    assert "(mean_visits_once, coef_visits)" in done.stderr, said  # both named
    assert not ledger.exists() or ledger.read_text().strip() == ""  # nothing charged
    assert not (tmp_path / "release").exists()

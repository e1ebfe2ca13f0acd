"""Planning a release's budgets from a public sweep (``synthflow plan``).

:func:`plan_budget` reads the sweep store and the public file it was made with, searches
the budgets, and writes :data:`PLAN_FILES`; public data only, nothing is spent.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from synthflow._util.files import write_atomic
from synthflow._util.notices import say
from synthflow._util.outputs import check_output_dir
from synthflow.acceptance.noise_check import binning_figures
from synthflow.candidates import write_candidates
from synthflow.data import load_data
from synthflow.errors import ConfigError, NoPlanError
from synthflow.loader import load_spec
from synthflow.plan import PLAN_FILES
from synthflow.plan.costing import by_release_probability, exact_cost
from synthflow.plan.optimize import Planner, PlanOptions
from synthflow.plan.report import write_plan_html
from synthflow.plan.simulate import load_arms
from synthflow.plan.specfile import write_planned_spec
from synthflow.privacy.ledger import file_sha256
from synthflow.sweep.shortlist import THIN_RUNS, wilson_interval

__all__ = ["PLAN_FILES", "NoPlanError", "plan_budget"]


def _point_json(p: Any) -> dict[str, Any]:
    return {
        "total_epsilon": round(p.total_epsilon, 6),
        "release_probability": round(p.release_probability, 4),
        "pass_probability": round(p.pass_probability, 4),
        "expected_attempts": round(p.expected_attempts, 3),
        "epsilons": p.epsilons,
    }


def _thin_evidence(arms: list[Any]) -> list[str]:
    """A warning when the plan's probabilities rest on few runs per configuration."""
    runs = [len(a.records) for a in arms]
    if not runs or min(runs) >= THIN_RUNS:
        return []
    n = min(runs)
    low, high = wilson_interval((n + 1) // 2, n)
    counts = f"{n}" if n == max(runs) else f"{n} to {max(runs)}"
    return [
        f"THIN EVIDENCE: the plan rests on {counts} run{'s' if max(runs) > 1 else ''} per "
        f"configuration and budget; with {n}, a configuration passing half its runs has a "
        f"95% Wilson interval of [{low:.2f}, {high:.2f}], so the predicted pass and release "
        f"probabilities are uncertain. Sweep more repeats (--repeats {THIN_RUNS}) and re-plan."
    ]


def plan_budget(
    spec_path: str | Path,
    store: str | Path,
    public: str | Path,
    out: Path,
    *,
    target_pass: float = 0.3,
    stop_probability: float = 0.05,
    release_probability: float = 0.9,
    max_total: float | None = None,
    seed: int = 0,
    force: bool = False,
    show_progress: bool = True,
    single_attempt: bool = True,
) -> dict[str, Any]:
    """Plan the budgets; writes :data:`PLAN_FILES` into ``out`` and returns plan.json's content.

    Public data only: reads the sweep store and the public file it was made with.

    Raises:
        ConfigError: Bad options, an output that exists (without ``force``), a store of
            another spec or data, or no plan meeting the constraints (plan.html and
            plan.json are still written, showing the frontier and why).
    """
    # Long: the plan's stages in order (read, simulate, optimise, write), each reported.
    options = PlanOptions(
        target_pass=target_pass,
        stop_probability=stop_probability,
        release_probability=release_probability,
        max_total=max_total,
        seed=seed,
        single_attempt=single_attempt,
    )
    options.check()
    check_output_dir(out, option="--out", own=PLAN_FILES, force=force)
    spec = load_spec(spec_path)
    # The spec's total caps every plan: a plan above it would be refused by release.
    cap = min(max_total if max_total is not None else math.inf, spec.privacy.total_epsilon)
    options = dataclasses.replace(options, max_total=cap)
    arms, meta = load_arms(spec, store)
    if file_sha256(public) != meta["data_sha256"]:
        raise ConfigError(
            f"--data {str(public)!r} is not the file the sweep ran on (sha256 differs); "
            "give the same public data file"
        )

    def progress(msg: str) -> None:
        if show_progress:
            say(f"plan: {msg}")

    frame = load_data(public, spec, public=True).frame
    planner = Planner(spec, arms, frame, options, progress=progress)
    chosen, paths = planner.search(progress=progress)
    out.mkdir(parents=True, exist_ok=True)
    plan: dict[str, Any] = {
        "source_spec": {"path": str(spec.path), "sha256": spec.sha256},
        "store": str(store),
        "public_data_sha256": meta["data_sha256"],
        "options": {
            "target_pass": target_pass,
            "stop_probability": stop_probability,
            "release_probability": release_probability,
            "perfect_candidate_fail": options.perfect_fail,
            "false_pass_at": options.false_pass_at,
            "false_pass_rate": options.false_pass_rate,
            "max_total": max_total,
            "min_candidate_pass": options.min_candidate_pass,
            "seed": seed,
        },
        "basis": planner.describe(),
        "spec_budgets": {  # the input spec's own, beside the planned ones in plan.html
            "total_epsilon": spec.privacy.total_epsilon,
            "generator_epsilon": spec.privacy.generator_epsilon,
            "criteria": {c.name: c.epsilon for c in spec.criteria},
        },
        "warnings": _thin_evidence(arms),
        "frontier": {label: [_point_json(p) for p in path] for label, path in paths.items()},
        "by_release_probability": by_release_probability(
            planner, chosen, spec=spec, rows=len(frame), options=options, progress=progress
        ),
    }
    if chosen is None:
        ends = [p[-1] for p in paths.values()]
        feasible = [p for p in ends if p.feasible(options)]
        wanted = f"P(per-attempt pass) >= {target_pass}, P(release) >= {release_probability}"
        if feasible:  # only the cap is in the way
            cheapest = min(feasible, key=lambda p: p.total_epsilon)
            plan["reason"] = (
                f"meeting {wanted} needs total epsilon {cheapest.total_epsilon:.3f} "
                f"({cheapest.mode}), above "
                + (
                    f"--max-total {max_total:g}"
                    if cap == max_total
                    else f"the spec's total_epsilon {spec.privacy.total_epsilon:g}"
                )
            )
        else:
            best = max(ends, key=lambda p: p.release_probability)
            plan["reason"] = (
                f"no generator budget and fit mode meets {wanted}; the best even at the "
                f"largest budgets ({best.mode}) reaches P(release) "
                f"{best.release_probability:.3f}, per-attempt pass {best.pass_probability:.3f}"
            )
        plan["reason"] += _size_cannot_pass(spec, arms, frame)
        reachable = [
            r
            for r in plan["by_release_probability"]
            if r["total_epsilon"] and r["release_probability"] < release_probability
        ]
        if reachable:  # a lower target the options do allow
            r = reachable[-1]
            plan["reason"] += (
                f" (P(release) >= {r['release_probability']:g} is reachable at total "
                f"{r['total_epsilon']:.3f}: --release-probability {r['release_probability']:g})"
            )
        _write_json(out / "plan.json", plan)
        write_plan_html(out / "plan.html", plan, paths, None)
        raise NoPlanError(
            "".join(w + " " for w in plan["warnings"])
            + f"no plan: {plan['reason']}; see {out / 'plan.html'}. Sweep better "
            "configurations, larger generator budgets, or relax --target-pass / --max-total",
            reachable=tuple(
                (float(r["release_probability"]), float(r["total_epsilon"])) for r in reachable
            ),
            report=out / "plan.html",
        )
    cost, problem = exact_cost(spec, chosen, len(frame), chosen.stop_probability, max_total)
    if problem:
        plan["reason"] = problem
        _write_json(out / "plan.json", plan)
        write_plan_html(out / "plan.html", plan, paths, None)
        raise ConfigError(f"no plan: {problem}; see {out / 'plan.html'}")
    planned = write_planned_spec(
        spec,
        out / "spec.yaml",
        generator_epsilon=chosen.generator_epsilon,
        epsilons=chosen.epsilons,
        header=(
            f"# Budgets planned by 'synthflow plan' from the public sweep {Path(store).name}\n"
            f"# (see plan.json beside this file); everything else is {Path(spec.path).name}.\n"
        ),
    )
    configs = {cid: arms_cfg for cid, arms_cfg in ((a.config_id, a.configuration) for a in arms)}
    # The one noise rule at the planned budgets and the plan's n: the figures the
    # pre-flight, validate, the DP report and the datasheet give at that n.
    checked = binning_figures(
        planned,
        [configs[cid]["transformations"] for cid in chosen.candidates],
        len(frame),
        fit_once=chosen.fit_once,
    )
    plan["noise_figures"] = checked["figures"]
    if checked["problem"]:
        plan["reason"] = checked["problem"]
        _write_json(out / "plan.json", plan)
        write_plan_html(out / "plan.html", plan, paths, None)
        raise NoPlanError(f"no plan: {checked['problem']}; see {out / 'plan.html'}")
    write_candidates(
        out / "candidates.yaml",
        header={
            "spec_sha256": planned.sha256,
            "public_data_sha256": meta["data_sha256"],
            "seed": int(meta["seed"]),
            "store": str(store),
            "min_pass": options.min_candidate_pass,
            "basis": "plan (predicted DP pass probability at the planned budgets)",
            "generator_epsilon": chosen.generator_epsilon,
            "fit_once": chosen.fit_once,
        },
        configurations=[
            {**configs[cid], "predicted_pass_probability": round(p, 4)}
            for cid, p in sorted(chosen.candidates.items(), key=lambda kv: -kv[1])
        ],
    )
    plan.update(
        {
            "planned_spec_sha256": planned.sha256,
            "generator_epsilon": chosen.generator_epsilon,
            "fit_once": chosen.fit_once,
            "fit_once_transformations": dict(chosen.transformations or ()) or None,
            "stop_probability": chosen.stop_probability,
            "selection": cost.theorem,
            "criteria": planner.criterion_details(chosen),
            "total_epsilon": cost.total,
            "total_delta": cost.total_delta,
            "formula": cost.to_json()["formula"],
            "pass_probability": chosen.pass_probability,
            "release_probability": chosen.release_probability,
            "expected_attempts": chosen.expected_attempts,
            "perfect_candidate_fail_probability": chosen.perfect_fail,
            "binding": planner.binding(chosen, paths),
            "candidates": chosen.candidates,
            "predictions": chosen.all_configurations,
        }
    )
    _write_json(out / "plan.json", plan)
    write_plan_html(out / "plan.html", plan, paths, chosen, configurations=configs)
    return plan


def _size_cannot_pass(spec: Any, arms: Any, frame: Any) -> str:
    """Why no plan, when it is the data's size: the criteria two public samples fail.

    Two samples of the public file at its own size (noise aside) are what a perfect
    generator scores; a criterion they fail is failed by every budget, and the steward
    is told the threshold that size can meet (:func:`attainability_warnings`).
    """
    from synthflow.acceptance.attainable import attainability_warnings  # noqa: PLC0415
    from synthflow.space import expand_space  # noqa: PLC0415

    ids = {a.config_id for a in arms}
    configs = [c for c in expand_space(spec) if c.id in ids]
    lines = attainability_warnings(spec, configs, len(frame), frame) if configs else []
    return "".join(f". {line}" for line in lines)


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    write_atomic(path, json.dumps(doc, indent=1, default=float) + "\n")

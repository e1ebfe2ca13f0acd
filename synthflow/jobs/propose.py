"""``ship-plan NAME --rows N --propose-thresholds``: thresholds a size can meet, and their plan.

When a bundled spec's thresholds find no plan at a registry's size (births at 20,000
rows), this proposes looser thresholds for the criteria that size fails
(:mod:`synthflow.plan.propose`, public sweep results only), sweeps the proposed spec on
the same public draw, and plans it. It repeats at most :data:`ROUNDS` times: a
clipped statistic (the 1-way ratio) shows its real size only once its clip has moved.
Everything is public; nothing is spent. Whether to publish at those thresholds is the
data's users' decision: the spec written says so at its top, and the release's datasheet
states every threshold it was judged by.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthflow.errors import NoPlanError

__all__ = [
    "ROUNDS",
    "ProposalFailed",
    "Proposed",
    "ProposedPlan",
    "keep_failed",
    "ladder",
    "propose_and_plan",
]

ROUNDS = 3
"""Rounds of proposals at most, after the first sweep at the raised total alone."""


@dataclass(frozen=True)
class Proposed:
    """The proposed spec, its sweep and plan directory, and what was proposed."""

    spec: Path
    store: Path
    plan_dir: Path
    proposals: tuple[Any, ...]
    cell: str
    rounds: int

    def lines(self) -> list[str]:
        """One line per proposed criterion: old and new threshold, and what it rests on."""
        return [
            f"  {p.describe()}  (the generator's 90th percentile there: {p.observed:.3g})"
            for p in self.proposals
        ]


def _header(name: str, n: int, proposals: list[Any], cell: str, total: str) -> str:
    lines = [
        f"# PROPOSED THRESHOLDS for a registry of about {n:,} rows, by 'synthflow ship-plan",
        f"# {name.split('@', 1)[0]} --rows {n} --propose-thresholds' from a public sweep:",
        f"# {cell}.",
        "# At this size the bundled spec's thresholds find no plan. Which thresholds to",
        "# publish is for the data's users to agree: review them first.",
        *(f"#   {p.describe()}" for p in proposals),
        *([f"#   {total}"] if total else []),
    ]
    return "\n".join(lines) + "\n"


def _merge(old: list[Any], new: list[Any]) -> list[Any]:
    """Per criterion, the larger proposal (a later round never tightens an earlier one)."""
    merged = {p.name: p for p in old}
    for p in new:
        if p.name not in merged or p.proposed > merged[p.name].proposed:
            merged[p.name] = p
    return list(merged.values())


def ladder(recipe: list[float], ceiling: float) -> list[float]:
    """The recipe's generator budgets, then doubling up to 3/4 of ``ceiling`` and that.

    A smaller registry needs a larger generator budget for the same noise relative to
    its counts (births at 20,000 rows: 1-way ratios of 2.7 at 1.25 against 1.8 at 4), so
    the sweeps of a proposal reach as far as the proposed total leaves room for.
    """
    top = 0.75 * ceiling
    out = [e for e in recipe if e <= top]
    e = max(out, default=top)
    while 2 * e < top:
        e *= 2
        out.append(round(e, 6))
    if top not in out and top > max(out, default=0):
        out.append(round(top, 6))
    return sorted(set(out))


def propose_and_plan(
    name: str,
    n: int,
    work: Path,
    *,
    sweep: Any,
    plan: Any,
    recipe: list[float],
    reference_rows: int,
    max_total: float | None = None,
) -> Proposed:
    """Sweep at a raised total, propose from the sweep, sweep and plan again, repeat.

    The first round keeps the bundled spec's thresholds and only raises its total to
    the ceiling (``max_total``; default the spec's total times ``reference_rows / n``,
    the size the spec's own plan was made for over this one, and at least twice it: a
    smaller registry pays more for the same noise); each later round proposes from the
    last sweep.
    ``sweep(spec, store, epsilons)`` and ``plan(spec_path, store, plan_dir, max_total)``
    run the recipe's sweep and plan (raising :class:`NoPlanError`); the generator
    budgets are :func:`ladder` of ``recipe``. ``work``: a private working folder.

    Raises:
        NoPlanError: If no round finds a plan (the last plan's error, with the
            proposals and the rounds said first).
    """
    from synthflow.acceptance.attainable import nice_up  # noqa: PLC0415
    from synthflow.loader import load_spec  # noqa: PLC0415
    from synthflow.plan.propose import propose_thresholds, proposed_spec_text  # noqa: PLC0415
    from synthflow.resources import bundled_spec  # noqa: PLC0415

    source_path = bundled_spec(name.split("@", 1)[0])
    source = load_spec(source_path)
    text = Path(source_path).read_text(encoding="utf-8")
    # A smaller registry pays more for the same noise relative to its counts (noise
    # scales as 1 / (n epsilon)): the default ceiling scales the spec's total by the
    # size its own plan was made for over this one (at least twice the spec's).
    scale = max(2.0, reference_rows / n)
    ceiling = float(max_total or nice_up(source.privacy.total_epsilon * scale))
    total = (
        f"privacy.total_epsilon {source.privacy.total_epsilon:g} -> {ceiling:g} (a ceiling: "
        "the release spends its plan's total)"
        if ceiling != source.privacy.total_epsilon
        else ""
    )
    budgets = ladder(recipe, ceiling)
    proposals: list[Any] = []
    cell = f"generator budgets {', '.join(f'{e:g}' for e in budgets)}"
    failed: list[tuple[float, int, NoPlanError]] = []  # (best reachable P, round, error)
    for k in range(ROUNDS + 1):
        spec_path = work / f"proposed-{k}.yaml"
        header = _header(name, n, proposals, cell, total)
        spec_path.write_text(
            proposed_spec_text(text, proposals, header=header, total_epsilon=ceiling),
            encoding="utf-8",
        )
        store, plan_dir = work / f"proposed-{k}.sweep.db", work / f"proposed-{k}.plan"
        sweep(load_spec(spec_path), store, budgets)
        try:
            plan(spec_path, store, plan_dir, max_total=ceiling)
        except NoPlanError as exc:
            failed.append((max((p for p, _ in exc.reachable), default=0.0), k, exc))
            more, cell = propose_thresholds(source, store)
            merged = _merge(proposals, more)
            if [(p.name, p.proposed) for p in merged] == [(p.name, p.proposed) for p in proposals]:
                break  # the rule proposes nothing new: more rounds would change nothing
            proposals = merged
            continue
        return Proposed(spec_path, store, plan_dir, tuple(proposals), cell, k + 1)
    _, best, error = max(failed, key=lambda f: (f[0], -f[1]))  # most reachable, earliest
    raise ProposalFailed(
        f"no plan meets the target at a total of at most {ceiling:g} after {len(failed)} "
        f"round(s) of proposals for {n:,} rows; the round reaching the most ({best}) said: "
        f"{error}",
        reachable=error.reachable,
        report=error.report,
        best_round=best,
        ceiling=ceiling,
    )


class ProposalFailed(NoPlanError):
    """No round's proposal met the target; ``round``: the one that reached the most."""

    def __init__(self, message: str, *, best_round: int, ceiling: float, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.round = best_round
        self.ceiling = ceiling


@dataclass(frozen=True)
class ProposedPlan:
    """A plan at thresholds proposed for a size: the files written, and what to agree."""

    name: str
    spec: Path
    """The proposed spec (the bundled one with the proposed thresholds, commented)."""
    planned: Path
    candidates: Path
    plan: Path
    content: dict[str, Any]
    proposed: Proposed

    def describe(self) -> str:
        """What was proposed, what the plan spends, and the exact release command."""
        c = self.content
        return "\n".join(
            [
                f"a plan at thresholds PROPOSED for '{self.name}' ({self.plan}): total epsilon "
                f"{c['total_epsilon']:.3f} (delta {c.get('total_delta', 0.0):g}), predicted "
                f"P(release) {c['release_probability']:.2f}; the spec's thresholds find no "
                f"plan at this size. Proposed ({self.proposed.rounds} round(s) of public "
                f"sweeps; {self.proposed.cell}), in {self.spec}:",
                *self.proposed.lines(),
                "Agree these thresholds with the data's users (the spec owner's decision; "
                "the datasheet states each one), then release:",
                f"  synthflow release {self.planned} --candidates {self.candidates} --plan "
                f"{self.plan} --data YOUR_FILE --ledger LEDGER --out OUT --private-dir ENCLAVE",
            ]
        )


def keep_failed(work: Path, out: Path, name: str, failed: ProposalFailed) -> str:
    """Keep the round that reached the most in ``OUT/NAME.no-plan/``; the way on from it.

    Its proposed spec, sweep, plan report and the public draw move there (a new name
    when that exists, never over a file); the text returned names the reachable release
    probabilities with their totals and the exact ``plan`` command that plans at the
    highest from the kept sweep, then the release command.
    """
    import shutil  # noqa: PLC0415

    keep, k = out / f"{name}.no-plan", 2
    while keep.exists():
        keep, k = out / f"{name}.no-plan-{k}", k + 1
    keep.mkdir()
    stem = f"proposed-{failed.round}"
    shutil.move(work / f"{stem}.yaml", keep / "proposed.yaml")
    shutil.move(work / f"{stem}.sweep.db", keep / "sweep.db")
    if (work / "public_draw.csv.gz").is_file():
        shutil.move(work / "public_draw.csv.gz", keep / "public_draw.csv.gz")
    for f in ("plan.html", "plan.json"):
        if (work / f"{stem}.plan" / f).is_file():
            shutil.move(work / f"{stem}.plan" / f, keep / f)
    said = f"The proposed spec, its sweep and the plan's report are kept in {keep}"
    if not failed.reachable or not (keep / "public_draw.csv.gz").is_file():
        return said + " (plan.html shows why); no lower release probability is reachable either"
    levels = ", ".join(f"P(release) {p:g} at total epsilon {t:.3f}" for p, t in failed.reachable)
    p = failed.reachable[-1][0]
    return (
        f"{said}. Reachable: {levels}. To plan at {p:g} from the kept sweep (public, "
        f"seconds):\n  synthflow plan {keep / 'proposed.yaml'} --store {keep / 'sweep.db'} "
        f"--data {keep / 'public_draw.csv.gz'} --public --release-probability {p:g} "
        f"--max-total {failed.ceiling:g} --out plan/\n  then: synthflow release plan/spec.yaml "
        "--candidates plan/candidates.yaml --plan plan/plan.json --data YOUR_FILE --ledger "
        "LEDGER --out OUT --private-dir ENCLAVE"
    )

"""Choose the budgets: the least total epsilon of private selection that still releases.

Variables: each criterion's epsilon (a geometric grid), the budgets of a
once-per-release measurement (the regression fit: its kind declares them,
:class:`~synthflow.criteria.measurement.PlannedMeasurement`) and whether it is drawn once
per release, and the generator epsilon among those the sweep ran. For one generator
epsilon and fit mode the search is greedy: start with every budget at its largest grid
value and repeatedly lower the one budget that saves the most total epsilon per unit of
log-probability of a release lost, while every constraint still holds. The path it
walks is the frontier the report plots; its last feasible point is that mode's plan;
the plan is the cheapest over modes.

Each mode is also searched as a **single attempt** (stop probability 1: charged once,
not twice, by basic composition; it releases only if its one attempt passes, so its
P(release) is the per-attempt pass probability), unless ``single_attempt`` is off.

Constraints (issue #14): the candidates' mean per-attempt pass probability >= the
target; the probability that selection with stop probability G releases >= the
release probability; for a once-per-release fit, the probability that the fit's own
noise fails a perfect candidate (D_R = D_T) <= ``perfect_fail``; the 1-way ratio's
pseudo-threshold is re-derived at every budget by the evaluation's own function.

One more, so that no criterion is weakened into a coin toss by a tiny budget: a
candidate whose true value is ``false_pass_at`` times a criterion's threshold must pass
that criterion by the noise alone with probability <= ``false_pass_rate`` (SPEC sec. 5's
false-positive control, applied to every Laplace criterion; the clipped ratio has its
pseudo-threshold). For the regression coefficients the perfect-candidate bound gives the
same: if the fit's own error stays below the threshold t, a candidate at 2t cannot pass.

Kept whole: the planner's search and the constraints it checks are one algorithm.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from synthflow.config.model import CriterionSpec, ReleaseSpec
from synthflow.criteria.context import laplace_terms
from synthflow.criteria.measurement import PlannedMeasurement
from synthflow.errors import ConfigError
from synthflow.plan._stages import Stage
from synthflow.plan.simulate import Arm, NoiseLaw, laplace_pass_table
from synthflow.release.cost import LIU_TALWAR, SINGLE_ATTEMPT, SelectionCost, joint_cost
from synthflow.transform import Transformer

__all__ = ["EPS_GRID", "PlanOptions", "PlanPoint", "Planner"]

EPS_GRID = np.array([float(f"{x:.3g}") for x in np.geomspace(0.0005, 2.0, 37)])
"""Budgets tried for each Laplace criterion (ratio ~1.26 between neighbours), 3 digits."""


@dataclass(frozen=True, kw_only=True)
class PlanOptions:
    """What a plan must achieve (CLI flags of ``synthflow plan``)."""

    target_pass: float = 0.3
    stop_probability: float = 0.05
    release_probability: float = 0.9
    perfect_fail: float = 0.01
    false_pass_at: float = 2.0
    false_pass_rate: float = 0.05
    max_total: float | None = None
    single_attempt: bool = True
    """Also search single-attempt selections (stop probability 1, charged 1x not 2x)."""
    min_candidate_pass: float = 0.10
    fit_draws: int = 1000
    """A once-per-release measurement's draws per budget (the regression fit: once per
    release; a fifth of them per candidate)."""
    seed: int = 0

    def check(self) -> None:
        """Raises ConfigError for an option out of range."""
        for name in ("target_pass", "release_probability", "min_candidate_pass"):
            v = getattr(self, name)
            if not 0 < v <= 1:
                raise ConfigError(f"--{name.replace('_', '-')} ({v}) must be in (0, 1]")
        if not 0 <= self.stop_probability < 1:
            raise ConfigError(f"--stop-probability ({self.stop_probability}) must be in [0, 1)")
        if not 0 < self.perfect_fail < 1:
            raise ConfigError(f"perfect_fail ({self.perfect_fail}) must be in (0, 1)")
        if not 0 < self.false_pass_rate < 1 or not self.false_pass_at > 1:
            raise ConfigError(
                f"false_pass_rate ({self.false_pass_rate}) must be in (0, 1) and "
                f"false_pass_at ({self.false_pass_at}) above 1"
            )
        if self.max_total is not None and not self.max_total > 0:
            raise ConfigError(f"--max-total ({self.max_total}) must be > 0")


@dataclass(frozen=True, kw_only=True)
class PlanPoint:
    """One budget assignment and what it is predicted to give."""

    generator_epsilon: float
    fit_once: bool
    transformations: tuple[tuple[str, str], ...] | None
    """The one transformation set of a once-per-release fit (None otherwise)."""
    epsilons: dict[str, float]
    """Criterion name -> epsilon (a once-per-release measurement's own: the fit's)."""
    total_epsilon: float
    pass_probability: float
    """Mean per-attempt pass probability over the candidates."""
    release_probability: float
    expected_attempts: float
    """Expected attempts until selection ends (a release or a stop)."""
    perfect_fail: float
    """P(a once-per-release measurement's noise alone fails a perfect candidate); 0
    without one."""
    false_pass_ok: bool = True
    """Every Laplace criterion's noise keeps a candidate at ``false_pass_at`` x threshold
    from passing with probability above ``false_pass_rate``."""
    candidates: dict[str, float] = field(default_factory=dict)
    """config_id -> predicted per-attempt pass probability (those >= the cut)."""
    all_configurations: dict[str, float] = field(default_factory=dict)
    grid_index: dict[str, int] = field(default_factory=dict)
    """The budget variables' grid positions (one per criterion, by its name)."""
    stop_probability: float = 0.0
    """The selection's gamma at this point (1: a single attempt)."""
    total_delta: float = 0.0
    """The selection's delta (a single attempt: its largest candidate's plus a Gaussian
    fit's); a point above the spec's ``total_delta`` is infeasible."""
    max_delta: float = 1.0
    """The spec's ``privacy.total_delta`` (the bound ``total_delta`` must meet)."""
    zcdp_only: bool = False
    """Only the zCDP configurations were candidates (their single attempt composes the
    generator and a Gaussian fit in zCDP, which one pure-DP candidate would undo)."""

    def feasible(self, o: PlanOptions) -> bool:
        """Whether every constraint of ``o`` holds (the total cap aside)."""
        return (
            bool(self.candidates)
            and self.pass_probability >= o.target_pass
            and self.release_probability >= o.release_probability
            and self.perfect_fail <= o.perfect_fail
            and self.false_pass_ok
            and self.total_delta <= self.max_delta * (1 + 1e-9)
        )

    @property
    def mode(self) -> str:
        """Short label of the generator budget and fit mode."""
        fit = "fit once" if self.fit_once else "fit per candidate"
        letters = "".join(v for _, v in self.transformations) if self.transformations else ""
        one = ", single attempt" if self.stop_probability >= 1 else ""
        return (
            f"eps_gen {self.generator_epsilon:g}, {fit}"
            + (f" ({letters})" if letters else "")
            + one
            + (", zCDP configurations only" if self.zcdp_only else "")
        )


def _arm_privacy(arm: Arm) -> tuple[float, float | None]:
    """(delta, zCDP rho or None) of one fit of ``arm``'s configuration (public)."""
    from synthflow.generators import make_generator  # noqa: PLC0415

    cfg = arm.configuration
    gen = make_generator(cfg["model"], cfg["hyperparameters"], epsilon=arm.generator_epsilon)
    return gen.privacy_cost.delta, gen.zcdp_rho()


def _release_probability(q: np.ndarray, gamma: float) -> np.ndarray:
    """P(selection releases) when each attempt passes with probability ``q``."""
    q = np.asarray(q, dtype=float)
    denom = q + (1 - q) * gamma
    return np.where(denom > 0, q / np.where(denom > 0, denom, 1.0), 0.0)


class Planner:
    """Precomputed pass tables of every run, and the greedy search over budgets."""

    def __init__(
        self,
        spec: ReleaseSpec,
        arms: list[Arm],
        frame: pd.DataFrame,
        options: PlanOptions,
        *,
        progress: Callable[[str], None] = lambda _: None,
    ) -> None:
        options.check()
        privacy = [_arm_privacy(a) for a in arms]
        deltas = [d for d, _ in privacy]
        too_large = sorted({a.config_id for a, d in zip(arms, deltas, strict=True)
                            if d > spec.privacy.total_delta})  # fmt: skip
        if too_large:
            progress(
                f"left out {len(too_large)} configuration(s) whose delta exceeds the spec's "
                f"total_delta {spec.privacy.total_delta:g}: {', '.join(too_large[:3])}"
            )
        keep = [d <= spec.privacy.total_delta for d in deltas]
        arms = [a for a, k in zip(arms, keep, strict=True) if k]
        self.arm_delta = [d for d, k in zip(deltas, keep, strict=True) if k]
        """Per arm: the delta its generator spends. (epsilon, delta) arms enter only the
        single-attempt modes: Liu-Talwar's 2x needs pure-DP candidates."""
        self.arm_rho = [r for (_, r), k in zip(privacy, keep, strict=True) if k]
        """Per arm: its generator's zCDP rho (None: not zCDP), for joint composition."""
        self._arm_mechanisms: dict[int, Any] = {}
        self._fit_mechanisms: dict[Any, Any] = {}
        self._exact_totals: dict[Any, float | None] = {}
        """Exact accounting's parts, made on first use (:meth:`_exact`)."""
        self.spec, self.arms, self.o, self.frame = spec, arms, options, frame
        self.progress = progress
        once = [c for c in spec.criteria if c.impl.once_per_release]
        if len(once) > 1:  # the release charges one measurement once (release_once)
            raise ConfigError(
                "synthflow plan handles at most one criterion released once per release; "
                f"the spec has {[c.name for c in once]}"
            )
        self.records = [r for a in arms for r in a.records]
        self.arm_of = np.repeat(np.arange(len(arms)), [len(a.records) for a in arms])
        self.laplace = [
            c
            for c in spec.criteria
            if c.impl.mechanism == "laplace"
            and not c.impl.once_per_release
            and not c.impl.reads_measurement
        ]
        """The criteria drawn as a Laplace release of their recorded statistic."""
        self.floor = self._noise_floor()
        self.law = NoiseLaw(options.seed)
        stage = Stage(
            progress, f"Laplace criteria ({len(self.records)} runs x {len(EPS_GRID)} budgets)",
            len(self.laplace),
        )  # fmt: skip
        self.tables = {}
        for c in self.laplace:
            self.tables[c.name] = laplace_pass_table(spec, c, self.records, EPS_GRID, self.law)
            stage.step()
        stage.done()
        self.measurements = self._measurements(once, frame)
        self.grids: dict[str, np.ndarray] = {
            **{c.name: EPS_GRID for c in self.laplace},
            **{v: g for m in self.measurements for v, g in m.grids.items()},
        }
        """Budget variable (a criterion's name) -> its grid, in the search's order."""
        self.false_pass = {
            c.name: self._false_pass_table(c, self.grids[c.name])
            for c in spec.criteria
            if c.impl.mechanism == "laplace"
            and not c.impl.pseudo_threshold  # the pseudo-threshold is the control
        }

    def _measurements(
        self, once: list[CriterionSpec], frame: pd.DataFrame
    ) -> list[PlannedMeasurement]:
        """Each once-per-release kind's measurement; every other criterion must be Laplace.

        A measurement decides its criteria (and any that read it); the planner draws it
        by what its kind declares, never by the kind's name.

        Raises:
            ConfigError: Naming the criteria nothing here can plan.
        """
        out = [
            m
            for c in once
            if (m := c.impl.planned_measurement(c, self.spec, frame, self)) is not None
        ]
        owned = {c.name for m in out for c in m.criteria}
        unknown = [
            c.name for c in self.spec.criteria if c.name not in owned and c not in self.laplace
        ]
        if unknown:
            raise ConfigError(
                "synthflow plan draws Laplace criteria and the criteria a once-per-release "
                f"measurement decides; it cannot plan {unknown}"
            )
        return out

    def _noise_floor(self) -> dict[str, int]:
        """Per Laplace criterion: the least grid index the one noise rule admits.

        The rule of the release's pre-flight (:mod:`synthflow.acceptance.noise_check`):
        below it, a perfect candidate would pass the criterion's release in fewer than
        2 in 3 attempts at the sweep's n, on some swept binning. So the plan never picks
        a budget that ``validate`` and the pre-flight would call noise-dominated.
        """
        from synthflow.acceptance.noise_check import PERFECT_PASS_MIN  # noqa: PLC0415

        if not self.records:
            return {}
        n = int(self.records[0]["_run"]["n"])
        transformers = [Transformer(self.spec, dict(t)) for t in {a.letters for a in self.arms}]
        # A perfect candidate is a sample like the sweep's public data (#60): group sizes
        # are read from it, not spread evenly.
        codes = [tr.forward(self.frame).to_numpy(np.int64) for tr in transformers]
        floor: dict[str, int] = {}
        for c in self.laplace:
            floor[c.name] = len(EPS_GRID)
            for k, eps in enumerate(EPS_GRID):
                at = dataclasses.replace(c, epsilon=float(eps))
                if all(
                    at.impl.noise_figure(at, self.spec, tr, n, cd).perfect_pass >= PERFECT_PASS_MIN
                    for tr, cd in zip(transformers, codes, strict=True)
                ):
                    floor[c.name] = k
                    break
        return floor

    laplace_grid = EPS_GRID
    """The grid of a Laplace release's budget (a measurement's Laplace criteria use it)."""

    def stage(self, label: str, total: int) -> Stage:
        """A progress stage of ``total`` steps on the planner's progress callback."""
        return Stage(self.progress, label, total)

    def _false_pass_table(self, c: CriterionSpec, grid: np.ndarray) -> np.ndarray:
        """Per budget: whether a candidate at ``false_pass_at`` x threshold passes rarely enough."""
        ok = np.ones(len(grid), dtype=bool)
        for k, eps in enumerate(grid):
            for i in range(len(self.records)):
                if self._false_pass_probability(c, i, float(eps)) > self.o.false_pass_rate:
                    ok[k] = False
                    break
        return ok

    def _false_pass_probability(self, c: CriterionSpec, i: int, eps: float) -> float:
        """P(a candidate at ``false_pass_at`` x threshold passes ``c`` by noise), run ``i``."""
        sens, thr = laplace_terms(c, self.spec, self._public(c, i), eps)
        return float(
            self.law.pass_probability(self.o.false_pass_at * c.threshold, sens, eps, thr)[()]
        )

    # ------------------------------------------------------------------ evaluation
    def evaluate(
        self,
        generator_epsilon: float,
        letters: tuple[tuple[str, str], ...] | None,
        idx: dict[str, int],
        single: bool = False,
        zcdp_only: bool = False,
    ) -> PlanPoint:
        """Predictions for one budget assignment (``idx``: grid index per variable).

        ``letters`` set means a once-per-release fit on that transformation set;
        ``single``: a single attempt (stop probability 1, basic composition).
        """
        fit_once = letters is not None
        arms = [
            j
            for j, a in enumerate(self.arms)
            if a.generator_epsilon == generator_epsilon
            and (letters is None or a.letters == letters)
            and (single or self.arm_delta[j] == 0)
            and (not zcdp_only or self.arm_rho[j] is not None)
        ]
        rows = np.flatnonzero(np.isin(self.arm_of, arms))
        base = np.ones(len(rows))
        for c in self.laplace:
            base *= self.tables[c.name][rows, idx[c.name]]
        gamma = 1.0 if single else self.o.stop_probability
        weights = np.zeros((len(arms), len(rows)))
        for col, i in enumerate(rows):
            weights[arms.index(int(self.arm_of[i])), col] = 1.0
        weights /= weights.sum(axis=1, keepdims=True)
        per_draw, perfect = self._per_draw(base, rows, letters, idx)
        p_arm_draw = weights @ per_draw  # (arms, draws)
        p_arm = p_arm_draw.mean(axis=1)
        keep = p_arm >= self.o.min_candidate_pass
        if keep.any():
            q_draw = p_arm_draw[keep].mean(axis=0)
        else:
            q_draw = np.zeros(p_arm_draw.shape[1])
        release = float(_release_probability(q_draw, gamma).mean())
        attempts = float(np.mean(1.0 / np.maximum(q_draw + (1 - q_draw) * gamma, 1e-12)))
        kept = [arms[a] for a in np.flatnonzero(keep)]
        epsilons, cost = self._cost(generator_epsilon, letters, idx, kept, single=single)
        by_config = {self.arms[a].config_id: float(p) for a, p in zip(arms, p_arm, strict=True)}
        return PlanPoint(
            generator_epsilon=generator_epsilon,
            fit_once=fit_once,
            transformations=letters,
            epsilons=epsilons,
            total_epsilon=cost.total,
            total_delta=cost.total_delta,
            max_delta=self.spec.privacy.total_delta,
            pass_probability=float(q_draw.mean()),
            release_probability=release,
            expected_attempts=attempts,
            perfect_fail=perfect,
            false_pass_ok=all(bool(t[idx[n]]) for n, t in self.false_pass.items()),
            candidates={cid: p for cid, p in by_config.items() if p >= self.o.min_candidate_pass},
            all_configurations=by_config,
            grid_index=dict(idx),
            stop_probability=gamma,
            zcdp_only=zcdp_only,
        )

    def _per_draw(
        self,
        base: np.ndarray,
        rows: np.ndarray,
        letters: tuple[tuple[str, str], ...] | None,
        idx: dict[str, int],
    ) -> tuple[np.ndarray, float]:
        """Per run and draw: P(passing every criterion); P(a measurement fails a perfect one).

        ``base``: per run of ``rows``, P(passing the Laplace criteria). Each once-per-release
        measurement multiplies in its own criteria's pass probability: averaged over its
        fresh draws per candidate, or per shared draw once per release.
        """
        per_draw, perfect = base[:, None], 0.0
        for m in self.measurements:
            ok, fails = m.pass_draws(rows, letters, idx)
            per_draw = per_draw * ok
            perfect = max(perfect, fails)
        return per_draw, perfect

    def _cost(
        self,
        generator_epsilon: float,
        letters: tuple[tuple[str, str], ...] | None,
        idx: dict[str, int],
        kept: list[int],
        *,
        single: bool,
    ) -> tuple[dict[str, float], SelectionCost]:
        """Each criterion's epsilon at ``idx``, and the selection's cost over ``kept`` arms."""
        fit_once = letters is not None
        epsilons = {v: float(grid[idx[v]]) for v, grid in self.grids.items()}
        once = [(epsilons[m.once], m.delta) for m in self.measurements]
        fit_eps = math.fsum(e for e, _ in once)
        fit_delta = math.fsum(d for _, d in once)
        cost = SelectionCost(
            generator_epsilon=generator_epsilon,
            evaluation_epsilon=math.fsum(epsilons.values()),
            fit_epsilon=fit_eps if fit_once else 0.0,
            theorem=SINGLE_ATTEMPT if single else LIU_TALWAR,
            attempt_delta=max((self.arm_delta[j] for j in kept), default=0.0)
            + (0.0 if fit_once else fit_delta),
            fit_delta=fit_delta if fit_once else 0.0,
        )
        if fit_delta > 0:
            gauss = [(e, d) for e, d in once if d > 0]
            cost = joint_cost(cost, [self.arm_rho[j] for j in kept], gauss)
        # the release's exact accounting (synthflow.privacy.pld)
        if single and cost.total_delta > 0:
            cost = self._exact(cost, kept, letters, fit_eps, epsilons)
        return epsilons, cost

    def _exact(
        self,
        cost: SelectionCost,
        kept: list[int],
        letters: tuple[tuple[str, str], ...] | None,
        fit_eps: float,
        epsilons: dict[str, float],
    ) -> SelectionCost:
        """``cost`` composed by its PLD where every part has one and it is cheaper.

        The figure ``release`` will charge (:func:`synthflow.release.exact_cost.exact_cost`), so
        the search weighs each budget at what it costs.
        """
        from synthflow.release import exact_cost as _exact_cost  # noqa: PLC0415  (dp-accounting)

        gens = []
        for j in kept:
            if j not in self._arm_mechanisms:
                a = self.arms[j]
                cfg = a.configuration
                self._arm_mechanisms[j] = _exact_cost.generator_mechanisms(
                    self.spec, cfg["model"], cfg["hyperparameters"], a.letters,
                    a.generator_epsilon,
                )  # fmt: skip
            gens.append(self._arm_mechanisms[j])
        fit: tuple[Any, ...] | None = ()
        others = dict(epsilons)
        for m in self.measurements:
            eps = others.pop(m.once)
            key = (id(m), letters, eps)
            if key not in self._fit_mechanisms:
                self._fit_mechanisms[key] = m.mechanisms(letters, eps)
            part = self._fit_mechanisms[key]
            fit = None if fit is None or part is None else (*fit, *part)
        point = (tuple(sorted(set(kept))), letters, fit_eps, tuple(sorted(others.values())))
        if point not in self._exact_totals:  # the searches at each P(release) share points
            self._exact_totals[point] = _exact_cost.planned_epsilon(
                gens, fit, list(others.values()), delta=cost.total_delta
            )
        exact = self._exact_totals[point]
        if exact is None or exact >= cost.total:
            return cost
        return dataclasses.replace(cost, exact_epsilon=exact)

    # ------------------------------------------------------------------ search
    @property
    def _gaussian_fit(self) -> bool:
        return any(m.delta > 0 for m in self.measurements)

    def _variables(self) -> dict[str, int]:
        return {v: len(grid) - 1 for v, grid in self.grids.items()}

    def greedy(
        self,
        generator_epsilon: float,
        letters: tuple[tuple[str, str], ...] | None,
        single: bool = False,
        zcdp_only: bool = False,
    ) -> list[PlanPoint]:
        """The greedy path from the largest budgets down; feasible points only (may be empty)."""
        idx = self._variables()
        point = self.evaluate(generator_epsilon, letters, idx, single, zcdp_only)
        if not point.feasible(self.o):
            return [point]
        path = [point]
        while True:
            best: tuple[float, dict[str, int], PlanPoint] | None = None
            for var, k in idx.items():
                if k <= self.floor.get(var, 0):
                    continue
                trial = {**idx, var: k - 1}
                cand = self.evaluate(generator_epsilon, letters, trial, single, zcdp_only)
                if not cand.feasible(self.o):
                    continue
                saved = point.total_epsilon - cand.total_epsilon
                lost = math.log(max(point.release_probability, 1e-12)) - math.log(
                    max(cand.release_probability, 1e-12)
                )
                score = saved / max(lost, 1e-6)
                if best is None or score > best[0]:
                    best = (score, trial, cand)
            if best is None:
                return path
            _, idx, point = best
            path.append(point)

    def modes(self) -> list[tuple[float, tuple[tuple[str, str], ...] | None, bool, bool]]:
        """(generator epsilon, fit-once transformation set or None, single attempt, zCDP only).

        A single attempt is also searched with the zCDP configurations alone when the
        sweep holds both kinds and the fit is Gaussian: one pure-DP candidate in the draw
        makes the attempt's worst case basic composition.
        """
        out: list[tuple[float, tuple[tuple[str, str], ...] | None, bool, bool]] = []
        singles = (False, True) if self.o.single_attempt else (False,)
        for eps in sorted({a.generator_epsilon for a in self.arms}):
            for single in singles:
                at = [
                    (a, d, r)
                    for a, d, r in zip(self.arms, self.arm_delta, self.arm_rho, strict=True)
                    if a.generator_epsilon == eps and (single or d == 0)
                ]
                mixed = len({r is not None for _, _, r in at}) == 2
                only = (False, True) if single and self._gaussian_fit and mixed else (False,)
                for zcdp_only in only:
                    live = [a for a, _, r in at if not zcdp_only or r is not None]
                    if not live:  # only (epsilon, delta) arms: no Liu-Talwar mode
                        continue
                    if single or not self._gaussian_fit:  # a Gaussian fit per attempt: 1x only
                        out.append((eps, None, single, zcdp_only))
                    if self.measurements:
                        letters = sorted({a.letters for a in live})
                        out.extend((eps, lt, single, zcdp_only) for lt in letters)
        return out

    def search(
        self, progress: Callable[[str], None] = lambda _: None
    ) -> tuple[PlanPoint | None, dict[str, list[PlanPoint]]]:
        """The cheapest feasible plan over every mode (None if none), and every mode's path."""
        paths: dict[str, list[PlanPoint]] = {}
        best: PlanPoint | None = None
        modes = self.modes()
        stage = Stage(progress, "search (modes)", len(modes))
        for eps, letters, single, zcdp_only in modes:
            path = self.greedy(eps, letters, single, zcdp_only)
            stage.step()
            label = path[0].mode
            paths[label] = path
            end = path[-1]
            progress(
                f"{label}: "
                + (
                    f"total {end.total_epsilon:.3f}, P(release) {end.release_probability:.2f}"
                    if end.feasible(self.o)
                    else f"infeasible (P(release) at most {end.release_probability:.2f})"
                )
            )
            if not end.feasible(self.o):
                continue
            if self.o.max_total is not None and end.total_epsilon > self.o.max_total:
                continue
            if best is None or end.total_epsilon < best.total_epsilon:
                best = end
        stage.done()
        return best, paths

    def cheapest_at(self, release_probability: float) -> PlanPoint | None:
        """The plan :meth:`search` would choose were ``release_probability`` the target.

        The other options stay as they are (the total cap included); None if no mode
        meets them. A search of its own (seconds: the simulations are shared).
        """
        saved = self.o
        self.o = dataclasses.replace(saved, release_probability=release_probability)
        try:
            best, _ = self.search()
        finally:
            self.o = saved
        return best

    def broken(self, point: PlanPoint) -> list[str]:
        """The constraints of the options that ``point`` breaks, in words (public figures)."""
        o, out = self.o, []
        if not point.candidates:
            out.append(f"no candidate keeps a predicted pass >= {o.min_candidate_pass:g}")
        if point.pass_probability < o.target_pass:
            out.append(f"per-attempt pass {point.pass_probability:.4f} < {o.target_pass:g}")
        if point.release_probability < o.release_probability:
            out.append(f"P(release) {point.release_probability:.4f} < {o.release_probability:g}")
        if point.perfect_fail > o.perfect_fail:
            out.append(
                f"the fit alone fails a perfect candidate {point.perfect_fail:.3f} > "
                f"{o.perfect_fail:g}"
            )
        if point.total_delta > point.max_delta * (1 + 1e-9):
            out.append(
                f"delta {point.total_delta:g} (the generator's and the fit's) > the spec's "
                f"total_delta {point.max_delta:g}"
            )
        if not point.false_pass_ok:
            out.append(
                f"a candidate at {o.false_pass_at:g} x a threshold passes by noise more than "
                f"{o.false_pass_rate:g}"
            )
        return out

    def binding(
        self, point: PlanPoint, paths: dict[str, list[PlanPoint]] | None = None
    ) -> dict[str, str]:
        """Per budget variable of ``point``: why it cannot go one grid step lower.

        With the search's ``paths``, also ``generator_epsilon``: how each mode at a lower
        swept generator budget ended.
        """
        single = point.stop_probability >= 1
        out: dict[str, str] = {}
        for var, k in point.grid_index.items():
            if k == 0:
                reason = "at the grid's smallest budget"
            elif k <= self.floor.get(var, 0):
                reason = (
                    "the one noise rule: one step lower, a perfect candidate would pass its "
                    "release in fewer than 2 of 3 attempts (the pre-flight would refuse it)"
                )
            else:
                trial = {**point.grid_index, var: k - 1}
                lower = self.evaluate(
                    point.generator_epsilon, point.transformations, trial, single, point.zcdp_only
                )
                reason = "; ".join(self.broken(lower)) or "feasible, but above --max-total"
            out[var] = reason
        if paths is not None:
            ends = [
                f"{label}: "
                + (
                    f"total {path[-1].total_epsilon:.3f}"
                    if path[-1].feasible(self.o)
                    else "; ".join(self.broken(path[-1])) + " even at its largest budgets"
                )
                for label, path in paths.items()
                if path[0].generator_epsilon < point.generator_epsilon
            ]
            out["generator_epsilon"] = " | ".join(ends) or "the smallest swept generator budget"
        return out

    def criterion_details(self, point: PlanPoint) -> list[dict[str, Any]]:
        """Per criterion of ``point``: budget, mechanism, sensitivity, noise, predicted pass."""
        rows = [
            i
            for i, a in enumerate(self.arm_of)
            if self.arms[a].config_id in point.candidates
            and self.arms[a].generator_epsilon == point.generator_epsilon
        ]
        out: list[dict[str, Any]] = []
        for c in self.spec.criteria:
            eps = point.epsilons[c.name]
            item: dict[str, Any] = {
                "name": c.name,
                "kind": c.kind,
                "epsilon": eps,
                "threshold": c.threshold,
            }
            if c.impl.mechanism == "laplace":
                sens, thr = zip(
                    *(laplace_terms(c, self.spec, self._public(c, i), eps) for i in rows),
                    strict=True,
                )
                item.update(
                    mechanism="laplace",
                    sensitivity={"min": min(sens), "max": max(sens)},
                    noise_sd={
                        "min": math.sqrt(2) * min(sens) / eps,
                        "max": math.sqrt(2) * max(sens) / eps,
                    },
                    release_threshold={"min": min(thr), "max": max(thr)},
                    public_parameters=sorted(set(self._public(c, rows[0])) - {"n"}) or ["n"],
                )
                if c in self.laplace:
                    k = point.grid_index[c.name]
                    item["predicted_pass_probability"] = float(self.tables[c.name][rows, k].mean())
                if not c.impl.pseudo_threshold:
                    item["false_pass_probability"] = max(
                        self._false_pass_probability(c, i, eps) for i in rows
                    )
            else:
                owner = next(m for m in self.measurements if c in m.criteria)
                item.update(owner.details(c, point))
            out.append(item)
        return out

    def _public(self, c: CriterionSpec, i: int) -> dict[str, Any]:
        rec = self.records[i]
        return rec[c.name]["public"] if c.name in rec else {"n": rec["_run"]["n"]}

    def describe(self) -> dict[str, Any]:
        """What the predictions rest on (for plan.json)."""
        return {
            "runs": len(self.records),
            "arms": len(self.arms),
            "laplace_noise_draws": len(self.law.z),
            "epsilon_grid": [float(x) for x in EPS_GRID],
            **{k: v for m in self.measurements for k, v in m.describe().items()},
        }

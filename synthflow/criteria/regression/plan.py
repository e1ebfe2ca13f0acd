"""The regression fit as the planner's measurement: its budgets, draws and cost.

:class:`RegressionMeasurement` is what ``regression_coefficients`` declares
(:meth:`~synthflow.criteria.protocol.CriterionKind.planned_measurement`). It decides
the coefficients criterion (its budget: the functional mechanism's, on :data:`REG_GRID`)
and a TSTR criterion reading the same fit (a Laplace release of its own, on the
planner's Laplace grid). Per candidate, each attempt re-draws the fit from the
candidate's standardisation; once per release, one fit from the public bounds is shared
by every attempt, so its draws are kept whole (one per simulated release). All figures
are public: the sweep's records and the public frame it ran on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from synthflow.criteria.context import laplace_terms, noise_decides
from synthflow.criteria.regression import fit as regression
from synthflow.criteria.regression.sim import RegressionSim, standardization_from_json
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

    from synthflow.config.model import CriterionSpec, ReleaseSpec

__all__ = ["REG_GRID", "RegressionMeasurement"]

REG_GRID = np.array([0.1, 0.15, 0.2, 0.3, 0.43, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0])
"""Budgets tried for the functional-mechanism regression fit."""

Letters = tuple[tuple[str, str], ...]


class RegressionMeasurement:
    """The functional-mechanism fit of one target, and the TSTR criterion that reads it.

    Built once per plan: the fits per candidate (runs x budgets) and once per release
    (binnings x budgets) are drawn here, so the search only indexes them.
    """

    def __init__(
        self, coef: CriterionSpec, spec: ReleaseSpec, frame: pd.DataFrame, planner: Any
    ) -> None:
        tstr = [c for c in spec.criteria if c.impl.reads_measurement]  # TSTR reads the fit
        if len(tstr) > 1:
            raise ConfigError(
                "synthflow plan handles at most one TSTR criterion on the regression fit; "
                f"the spec has {[c.name for c in tstr]}"
            )
        self.coef, self.tstr = coef, (tstr[0] if tstr else None)
        self.spec, self.planner, self.o = spec, planner, planner.o
        self.criteria = tuple(c for c in spec.criteria if c is coef or c is self.tstr)
        self.once = coef.name
        self.delta = coef.impl.delta(coef)
        self.grids: dict[str, np.ndarray] = {coef.name: REG_GRID}
        if self.tstr is not None:
            self.grids[self.tstr.name] = planner.laplace_grid
        self.sims: dict[Letters, RegressionSim] = {}
        for a in planner.arms:
            if a.letters not in self.sims:
                self.sims[a.letters] = RegressionSim.from_frame(spec, frame, dict(a.letters), coef)
        stage = planner.stage("regression fit per candidate (runs)", len(planner.records))
        self.per_candidate = self._candidate_fits(stage)
        stage.done()
        self.perfect_per_candidate = np.max(
            [self._perfect(sim, sim.std_data) for sim in self.sims.values()], axis=0
        )
        stage = planner.stage(
            "regression fit once (binnings x budgets)", len(self.sims) * len(REG_GRID)
        )
        self.shared = {letters: self._once_fits(letters, stage) for letters in self.sims}
        stage.done()

    @property
    def _tstr_name(self) -> str | None:
        return self.tstr.name if self.tstr is not None else None

    def _candidate_fits(self, stage: Any) -> tuple[np.ndarray, np.ndarray]:
        """Coefficient errors and TSTR statistics (run, budget, draw), fit per candidate."""
        records = self.planner.records
        draws = max(50, self.o.fit_draws // 5)
        coef = np.empty((len(records), len(REG_GRID), draws))
        tstr = np.zeros_like(coef)
        i = 0
        for a in self.planner.arms:
            sim = self.sims[a.letters]
            for rec in a.records:
                std = standardization_from_json(
                    rec[self.coef.name]["public"]["candidate_standardization"]
                )
                for k, eps in enumerate(REG_GRID):
                    fits = sim.draws(std, float(eps), draws, seed=self.o.seed + 7919 * i + 1)
                    c, t = sim.errors(fits, rec, self.coef.name, self._tstr_name)
                    coef[i, k] = c
                    if t is not None:
                        tstr[i, k] = t
                i += 1
                stage.step()
        return coef, tstr

    def _perfect(self, sim: RegressionSim, std: Any) -> np.ndarray:
        """Per fit budget: P(the fit's noise alone fails a perfect candidate)."""
        out = np.empty(len(REG_GRID))
        for k, eps in enumerate(REG_GRID):
            fits = sim.draws(std, float(eps), self.o.fit_draws, seed=self.o.seed + 104_729)
            pc, pt = sim.perfect_errors(fits)
            fail = pc >= self.coef.threshold
            if self.tstr is not None:
                fail |= pt >= self.tstr.threshold
            out[k] = float(fail.mean())
        return out

    def _once_fits(self, letters: Letters, stage: Any) -> tuple[np.ndarray, ...]:
        """Per budget: errors (run, draw) of the shared fit, and the perfect-candidate failure."""
        planner = self.planner
        sim = self.sims[letters]
        std = sim.bounds_standardization()
        runs = [i for i, a in enumerate(planner.arm_of) if planner.arms[a].letters == letters]
        coef = np.empty((len(runs), len(REG_GRID), self.o.fit_draws))
        tstr = np.zeros_like(coef)
        for k, eps in enumerate(REG_GRID):
            fits = sim.draws(std, float(eps), self.o.fit_draws, seed=self.o.seed + 104_729)
            for row, i in enumerate(runs):
                c, t = sim.errors(fits, planner.records[i], self.coef.name, self._tstr_name)
                coef[row, k] = c
                if t is not None:
                    tstr[row, k] = t
            stage.step()
        return np.asarray(runs), coef, tstr, self._perfect(sim, std)

    def _tstr_pass(self, stats: np.ndarray, k: int | None) -> np.ndarray:
        """P(the TSTR criterion passes); 1 for a spec without one."""
        if self.tstr is None or k is None:
            return np.ones_like(stats)
        eps = float(self.grids[self.tstr.name][k])
        n = int(self.planner.records[0]["_run"]["n"])
        sens, threshold = laplace_terms(self.tstr, self.spec, {"n": n}, eps)
        if noise_decides(self.tstr, sens, threshold, eps):  # the evaluation fails it
            return np.zeros_like(stats)
        return self.planner.law.pass_probability(stats, sens, eps, threshold)

    def pass_draws(
        self, rows: np.ndarray, letters: Letters | None, idx: dict[str, int]
    ) -> tuple[np.ndarray, float]:
        """Per run of ``rows``: P(coefficients and TSTR pass); P(the fit fails a perfect one)."""
        k, t = idx[self.coef.name], idx.get(self._tstr_name or "")
        if letters is None:
            coef, tstr = self.per_candidate
            ok = (coef[rows, k] < self.coef.threshold) * self._tstr_pass(tstr[rows, k], t)
            return ok.mean(axis=1)[:, None], float(self.perfect_per_candidate[k])
        runs, coef, tstr, perfect = self.shared[letters]
        pos = {int(r): p for p, r in enumerate(runs)}
        sel = [pos[int(i)] for i in rows]
        ok = (coef[sel, k] < self.coef.threshold) * self._tstr_pass(tstr[sel, k], t)
        return ok, float(perfect[k])

    def mechanisms(self, letters: Letters | None, epsilon: float) -> tuple[Any, ...] | None:
        """The fit at ``epsilon``: once from the bounds; a Laplace fit per attempt too."""
        from synthflow.privacy.pld import Mechanism
        from synthflow.transform import Transformer

        if self.delta == 0:  # a Laplace fit: epsilon-DP either way
            return (Mechanism.pure(self.coef.name, epsilon),)
        if letters is None:  # a Gaussian fit per attempt: its law follows the candidate
            return None
        transformer = Transformer(self.spec, dict(letters))
        return self.coef.impl.once_mechanisms(self.coef, transformer, epsilon)

    def details(self, c: CriterionSpec, point: Any) -> dict[str, Any]:
        """The fit's mechanism, sensitivity and noise at the plan's budget."""
        sim = next(iter(self.sims.values()))
        std = sim.bounds_standardization() if point.fit_once else sim.std_data
        law = regression.fit_noise(
            *std.box(sim.xb, sim.yb), point.epsilons[c.name], kind=sim.noise, delta=sim.delta
        )
        return {
            "mechanism": f"functional mechanism ({law.kind})",
            "fit_once": point.fit_once,
            "sensitivity": law.sensitivity,
            "noise_sd": law.sd,
            "standardization": "public bounds" if point.fit_once else "candidate (D_R)",
            "perfect_candidate_fail_probability": point.perfect_fail,
        }

    def describe(self) -> dict[str, Any]:
        """The fits drawn per budget, and the fit's budget grid."""
        return {
            "regression_fit_draws": self.o.fit_draws,
            "regression_epsilon_grid": [float(x) for x in REG_GRID],
        }

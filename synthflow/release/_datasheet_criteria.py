"""The datasheet's criterion table and budget split, from the acceptance report.

Split from :mod:`synthflow.release._datasheet`: one row per criterion (what it measures,
its threshold, released value, noise and verdict, flagged when the one noise rule calls
it decided by noise), the notes under the table, and the sentence splitting the budget.
"""

from __future__ import annotations

import math

from synthflow.acceptance import AcceptanceReport
from synthflow.acceptance.noise_check import NoiseFigure
from synthflow.config.model import CriterionSpec, ReleaseSpec
from synthflow.release.cost import SelectionCost

__all__ = ["NOISE_ABOVE_PREFLIGHT", "criterion_meaning"]

NOISE_ABOVE_PREFLIGHT = 2.0
"""A released criterion whose noise sd exceeds the pre-flight's figure by this factor is
named under the datasheet's table (#60)."""


def criterion_meaning(c: CriterionSpec, spec: ReleaseSpec) -> str:
    """One sentence saying what a criterion measures, with its unit (its kind's)."""
    from synthflow.criteria import kind_of  # noqa: PLC0415

    return kind_of(c).meaning(c, spec)


def _g(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.4g}"


def _verdict(passed: bool, figure: NoiseFigure | None) -> str:
    """'passed'/'failed', flagged when the noise decides more than the candidate.

    The flag is the one noise rule (:mod:`synthflow.acceptance.noise_check`): a perfect
    candidate would pass this release less than ``PERFECT_PASS_MIN`` of the time.
    """
    verdict = "passed" if passed else "failed"
    if figure is not None and figure.dominated:
        verdict += "; **decided mostly by noise**"
    return verdict


def _criteria(
    spec: ReleaseSpec,
    report: AcceptanceReport,
    figures: dict[str, NoiseFigure],
) -> tuple[list[dict[str, str]], list[str]]:
    by_name = {c.name: c for c in spec.criteria}
    rows, notes = [], []
    for r in report.criteria:
        c = by_name[r.name]
        threshold = f"{r.threshold:.4g}"
        if not math.isclose(r.threshold, c.threshold):
            threshold = f"{r.threshold:.4g} (spec {c.threshold:g}; see below)"
            fpr = getattr(c.params, "false_positive_rate", None)
            notes.append(
                f"`{r.name}`: its released value was compared with a *pseudo-threshold* of "
                f"{r.threshold:.4g}, below the spec's {c.threshold:g}. The value is capped "
                "and its noise is large next to the cap, so a lower bar keeps a candidate "
                "whose true value is above the spec's threshold from passing by luck more "
                f"than {fpr:.0%} of the time (SPEC sec. 5)."
                if c.impl.pseudo_threshold and fpr is not None
                else f"`{r.name}`: its released value was compared with {r.threshold:.4g}, "
                f"not with the spec's threshold {c.threshold:g}."
            )
        noise = _g(r.noise_sd)
        figure = figures.get(r.name)
        if (
            figure is not None
            and not figure.simulated
            and r.noise_sd is not None
            and figure.noise > 0
            and r.noise_sd > NOISE_ABOVE_PREFLIGHT * figure.noise
        ):
            notes.append(
                f"`{r.name}`: its release noise (sd {r.noise_sd:.4g}) was "
                f"{r.noise_sd / figure.noise:.1f} times what the pre-flight expected "
                f"(sd {figure.noise:.4g}, for a sample like the public one at this size): "
                "this candidate's smallest group or count was smaller than a public "
                "sample's. Its verdict says more about the noise draw than the others'."
            )
        if figure is not None and figure.simulated:
            noise = "in the fit (see below)"  # the note gives the simulated median value
            notes.append(
                f"`{r.name}`: its DP noise is added to the regression fit's statistics, not "
                f"to the value. Re-drawing that noise on the spec's public sample "
                f"({spec.public_sample}) resampled "
                f"to the release's size gives a candidate identical to the "
                f"original a median value of {figure.noise:.4g}; it would pass "
                f"{figure.perfect_pass:.0%} of releases (a simulation on public data)."
            )
        rows.append(
            {
                "name": r.name,
                "meaning": criterion_meaning(c, spec),
                "threshold": threshold,
                "value": f"{r.value:.4g}",
                "noise": noise,
                "perfect": "-" if figure is None else f"{figure.perfect_pass:.0%}",
                "verdict": _verdict(r.passed, figure),
            }
        )
    if any(r.value < 0 for r in report.criteria):
        notes.append(
            "A negative released value is a value near zero plus negative noise: the true "
            "value of these measures is never negative."
        )
    return rows, notes


def _split(cost: SelectionCost, report: AcceptanceReport) -> str:
    if cost.exact_epsilon:
        return _exact_split(cost, report)
    if cost.joint_epsilon is not None:
        return _joint_split(cost, report)
    parts = ", ".join(f"`{r.name}` {r.epsilon:g}" for r in report.criteria if r.epsilon)
    formula = "Papernot-Steinke" if cost.papernot_steinke else cost.to_json()["formula"]
    text = (
        f"{formula} = {cost.total:g}: the generator {cost.generator_epsilon:g} "
        f"and the checks {cost.evaluation_epsilon:g} ({parts})"
    )
    if cost.fit_once:
        text += f", the regression fit made once for all tries ({cost.fit_epsilon:g})"
    return text + "."


def _exact_split(cost: SelectionCost, report: AcceptanceReport) -> str:
    """A single attempt composed by its privacy loss distribution, in words."""
    laplace = [
        r for r in report.criteria if r.epsilon and not (r.mechanism or "").startswith("functional")
    ]
    parts = ", ".join(f"`{r.name}` {r.epsilon:g}" for r in laplace)
    basic = cost.generator_epsilon + cost.evaluation_epsilon
    fit = f", the regression fit's discrete Gaussian ({cost.fit_epsilon:g} on its own)"
    fit = fit if cost.fit_once else ""
    return (
        f"{cost.total:.4g} at delta {cost.total_delta:g}, composed exactly. Each part's "
        "privacy loss (how much more likely this output is on the data than on the data "
        "with one record replaced) was described by its distribution, and those "
        "distributions were combined as the parts ran, one after another: the generator "
        f"({cost.generator_epsilon:g} on its own)"
        + fit
        + f", and the other checks ({parts}), each counted as its worst case at its "
        "epsilon. Losses were rounded up, so the figure is an upper bound; adding the parts' "
        f"own epsilons would give {basic:.4g}."
    )


def _joint_split(cost: SelectionCost, report: AcceptanceReport) -> str:
    """A single attempt whose Gaussian parts were composed in zCDP, in words."""
    joint = float(cost.joint_epsilon or 0.0)
    fit = cost.joint_parts_epsilon - cost.generator_epsilon
    pure = cost.total - joint
    laplace = [
        r for r in report.criteria if r.epsilon and not (r.mechanism or "").startswith("functional")
    ]
    parts = ", ".join(f"`{r.name}` {r.epsilon:g}" for r in laplace)
    return (
        f"{joint:.4g} + {pure:.4g} = {cost.total:g}. The generator ({cost.generator_epsilon:g} "
        f"alone) and the regression fit ({fit:.4g} alone) add discrete Gaussian noise: each "
        "is zero-concentrated DP (zCDP), whose parameters rho add up, so they were composed "
        f"as one, rho {cost.joint_rho:.4g}, which is epsilon {joint:.4g} at delta "
        f"{cost.total_delta:g}, where adding their epsilons (basic composition) would give "
        f"{cost.joint_parts_epsilon:.4g}. The other checks add discrete Laplace noise and add "
        f"up: {pure:.4g} ({parts})."
    )

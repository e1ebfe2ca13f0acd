"""The datasheet (README.md) of a release package, from a template."""

from __future__ import annotations

import math
from string import Template
from typing import Any

from synthflow.acceptance import AcceptanceReport, CriterionResult
from synthflow.config import ReleaseSpec
from synthflow.release.selection import SelectionCost
from synthflow.space import Configuration

__all__ = ["render_datasheet"]

_TEMPLATE = Template("""# Synthetic data release: $name

Differentially private (DP) synthetic microdata made with synthflow $version.
Files: `synthetic.csv` (the data, $rows rows), `acceptance.json` (what was checked and
how), `spec.yaml` (the release spec), `MANIFEST.json` (SHA-256 of every file).

## Intended use
Exploratory analysis, teaching, and the analyses the acceptance criteria cover:
$criteria_list

Each criterion was released with DP and had to be below its threshold for the data to
be published. Analyses outside these criteria (other subgroups, rare combinations,
models with other variables or interactions) carry **no accuracy guarantee**.

## What the privacy guarantee means
The whole release is $total-differentially private with respect to replacing any one
record of the original data ($neighbouring; the number of records is public). In plain
words: whatever any single person's record had been, the probability of publishing
these files would have changed by at most a factor of e^$total (about $factor).
A synthetic record can coincide with a real person's record by chance (records are
coarse bins); what the guarantee bounds is how much any one person could influence
what was published. No record appears fewer than $min_count times (face privacy).

## Budget
$formula = epsilon $total, with eps_gen = $eps_gen (generator), eps_eval = $eps_eval
(acceptance criteria)$fit_line. The factor 2 pays for private selection (Liu & Talwar
2019): configurations were drawn at random from a shortlist screened on public data
until one passed; how many attempts that took is not published.$plan_line

## How the data were made
1. The original data were cleaned with the spec's raw constraints and binned with
   public bins (transformations: $letters).
2. A `$model` generator ($hyperparameters) was fitted with epsilon $eps_gen.
3. Rows violating the synthetic constraints were dropped and replaced by new samples.
4. Records were duplicated so none appears fewer than $min_count times.
5. The acceptance criteria were computed with DP noise; all passed.

## Limitations
- The data are synthetic: no row is a real $unit, and joint patterns the generator
  did not capture are lost or distorted.
- Accuracy is checked only for the criteria above; the DP noise on those checks means
  a criterion may pass by chance when the true value is close to its threshold.
- Binned values keep only the public bins listed in `spec.yaml`.
- Floating point: the Laplace noise is drawn from 53-bit uniforms, so its magnitude is
  bounded (about 73.5 times its scale) and the exponential mechanism's smallest
  probabilities round to zero; pure DP fails only on events of probability below about
  1e-30. The guarantee is therefore (epsilon, delta) with delta below 1e-30 on top of the
  epsilon above (details: synthflow's `docs/privacy.md`).
""")


NOISE_DOMINATES = 0.5
"""A decision is flagged as decided mostly by noise when the released value's noise sd
exceeds this share of the threshold's magnitude (one typical draw could flip it)."""


def _criterion_line(r: CriterionResult) -> str:
    line = f"- `{r.name}` ({r.kind}): threshold {r.threshold:g}, released value {r.value:.4g}"
    if r.noise_sd is not None and (r.mechanism or "").startswith("functional"):
        # The functional mechanism's noise is added to the fit's sufficient statistics;
        # its effect on this value is not a Laplace sd on the value's scale.
        line += (
            f" (functional mechanism: noise sd {r.noise_sd:.3g} on the regression fit's "
            "sufficient statistics, not on this value)"
        )
    elif r.noise_sd is not None:
        line += f" (noise sd {r.noise_sd:.3g})"
        if r.noise_sd > NOISE_DOMINATES * abs(r.threshold):
            line += (
                "; **decided mostly by noise**: the noise sd is large next to the threshold, "
                "so this pass says little about the data"
            )
    return line


def render_datasheet(
    *,
    spec: ReleaseSpec,
    configuration: Configuration,
    report: AcceptanceReport,
    cost: SelectionCost,
    rows: int,
    plan: dict[str, Any] | None = None,
) -> str:
    """The datasheet text (``plan``: the budget plan's provenance, if the spec came from one)."""
    from synthflow import __version__  # noqa: PLC0415

    criteria_list = "\n".join(_criterion_line(r) for r in report.criteria)
    fit_line = (
        f", and the regression fit made once (eps_fit = {cost.fit_epsilon:g})"
        if cost.fit_once
        else ""
    )
    return _TEMPLATE.substitute(
        name=spec.name,
        unit=spec.unit,
        version=__version__,
        rows=rows,
        criteria_list=criteria_list,
        total=f"{cost.total:g}",
        factor=f"{math.exp(cost.total):,.0f}",
        neighbouring="replace-one neighbours",
        min_count=configuration.min_count,
        formula=cost.to_json()["formula"],
        eps_gen=f"{cost.generator_epsilon:g}",
        eps_eval=f"{cost.evaluation_epsilon:g}",
        fit_line=fit_line,
        plan_line=(
            "\nThe budgets were chosen by `synthflow plan` on public data only (plan.json "
            f"SHA-256 {plan['plan_sha256']}), which predicted a release with probability "
            f"{plan['predicted_release_probability']:.2f} at this total."
            if plan
            else ""
        ),
        letters=", ".join(f"{k} {v}" for k, v in configuration.transformations.items()),
        model=configuration.model,
        hyperparameters=", ".join(f"{k}={v}" for k, v in configuration.hyperparameters.items()),
    )

"""The datasheet (README.md) of a release package, from ``templates/datasheet.md.j2``.

Sections follow "Datasheets for Datasets" (Gebru et al. 2021) where they apply. Every
number in it is public: the spec's fields and bins, DP-released values with their
noise, the budget, statistics of the released synthetic file (disclosure-risk
measures, the projection's row count) and the one noise rule's figures (simulations on
the spec's public sample at the release's size). Nothing is read from the original data.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from synthflow._util.html import render
from synthflow.acceptance import AcceptanceReport
from synthflow.acceptance.noise_check import PERFECT_PASS_MIN, NoiseFigure
from synthflow.config.model import ReleaseSpec
from synthflow.release._datasheet_criteria import (  # _verdict: re-exported for tests
    _criteria,
    _split,
    _verdict,  # noqa: F401
    criterion_meaning,
)
from synthflow.release._provenance import (  # re-exported: one import for the datasheet
    bundled_provenance_of,
    earlier_provenance_warnings,
    legacy_provenance_warning,
    provenance_warning,
)
from synthflow.release.cost import SelectionCost
from synthflow.release.risk import risk_measures
from synthflow.space import Configuration
from synthflow.transform import Transformer

__all__ = [
    "PLACEHOLDERS",
    "bundled_provenance_of",
    "criterion_meaning",
    "earlier_provenance_warnings",
    "legacy_provenance_warning",
    "placeholders",
    "provenance_warning",
    "render_datasheet",
]

PLACEHOLDERS = ("set by the publisher", "set it for a real release", "state it here")
"""Phrases of a provenance field left for the publisher to fill in (the bundled specs')."""


def placeholders(spec: ReleaseSpec) -> list[str]:
    """The datasheet fields still holding a placeholder or left empty."""
    out = []
    for f in dataclasses.fields(spec.datasheet):
        value = getattr(spec.datasheet, f.name)
        if not value:
            out.append(f"{f.name}: not stated")
        elif any(p in value.lower() for p in PLACEHOLDERS) or ("<" in value and ">" in value):
            out.append(f"{f.name}: {value!r}")
    return out


_PROVENANCE = (
    "motivation",
    "source",
    "population",
    "period",
    "publisher",
    "licence",
    "citation",
    "contact",
    "maintenance",
)
"""The spec's datasheet fields the datasheet prints, in its order (title has a default)."""


def _plural(n: int, word: str, words: str | None = None) -> str:
    """``1 rule``, ``2 rules``, ``0 rules`` (``words``: an irregular plural)."""
    return f"{n:,} {word if n == 1 else words or word + 's'}"


def _missing(spec: ReleaseSpec) -> str:
    """The one line listing every provenance field the spec leaves out ('' if none).

    The datasheet says this once, at the top, instead of "not stated" in every section.
    """
    missing = [f for f in _PROVENANCE if not getattr(spec.datasheet, f)]
    blank = [f"`{c.name}`" for c in spec.columns if not c.description]
    if len(blank) == len(spec.columns) and blank:
        missing.insert(1, "the meaning of every column")
    elif blank:
        missing.insert(1, f"the meaning of {_plural(len(blank), 'column')} ({', '.join(blank)})")
    return ", ".join(missing)


def _values(labels: tuple[str, ...]) -> str:
    shown = [f"`{v}`" for v in labels]
    if len(shown) > 12:
        shown = [*shown[:6], f"... ({len(labels) - 9} more) ...", *shown[-3:]]
    return ", ".join(shown)


def _spent_words(spent: dict[str, float] | None) -> dict[str, str] | None:
    """The data's cumulative spend as the datasheet prints it (None: nothing earlier)."""
    if not spent:
        return None
    delta = f"{spent['delta']:g}" if spent.get("delta") else ""
    return {"epsilon": f"{spent['epsilon']:.6g}", "delta": delta}


def render_datasheet(
    *,
    spec: ReleaseSpec,
    configuration: Configuration,
    transformer: Transformer,
    candidate: pd.DataFrame,
    report: AcceptanceReport,
    cost: SelectionCost,
    plan: dict[str, Any] | None = None,
    projection_rows: int | None = None,
    note: str | None = None,
    signed_by: str | None = None,
    provenance_warning: str | None = None,
    noise: Sequence[NoiseFigure] | None = None,
    dataset_spent: dict[str, float] | None = None,
) -> str:
    """The datasheet text.

    Args:
        spec: The release spec (codebook, provenance, key variables).
        configuration: The selected configuration.
        transformer: Its transformations.
        candidate: The released data (codes).
        report: The DP acceptance report that passed.
        cost: The selection's budget.
        plan: The budget plan's provenance, if the spec came from ``synthflow plan``.
        projection_rows: Rows the min-count projection replaced (a public statistic).
        note: A prominent note for readers (e.g. that the data stood in for private data).
        signed_by: SHA-256 fingerprint of the publisher's Ed25519 key, if signed.
        provenance_warning: Printed above everything when the provenance fields may
            not describe these data (:func:`provenance_warning`).
        noise: The one noise rule's figures at the release's n
            (:func:`synthflow.acceptance.noise_check.noise_figures`, recorded in
            acceptance.json): a criterion they call noise-dominated is flagged.
        dataset_spent: The data's ledger's cumulative spend (``epsilon``, ``delta``)
            when it exceeds this release's own (earlier work on the same data).
    """
    ds = spec.datasheet
    risk = _risk_words(spec, transformer.to_labels(candidate))
    figures = {f.criterion: f for f in noise or ()}
    criteria, notes = _criteria(spec, report, figures)
    n = len(candidate)
    return render(
        "datasheet.md.j2",
        title=ds.title or f"Synthetic data release: {spec.name}",
        note=note,
        provenance_warning=provenance_warning,
        perfect_min=f"{PERFECT_PASS_MIN:.0%}",
        description=spec.description or f"Synthetic microdata, one row per {spec.unit}.",
        rows=f"{n:,}",
        unit=spec.unit,
        # "one birth's record", but "one record" (not "one record's record")
        ones_record="one record" if spec.unit == "record" else f"one {spec.unit}'s record",
        missing=_missing(spec),
        motivation=ds.motivation,
        meanings=any(c.description for c in spec.columns),
        units=any(c.unit for c in spec.columns),  # no column of "-" when none states one
        codebook=_codebook(spec, transformer),
        collection=_stated(spec, ("source", "population", "period")),
        model=configuration.model,
        hyperparameters=", ".join(f"{k}={v}" for k, v in configuration.hyperparameters.items())
        or "defaults",
        eps_gen=f"{cost.generator_epsilon:g}",
        raw_rules=_plural(len(spec.raw_constraints), "rule"),
        syn_rules=_plural(len(spec.synthetic_constraints), "rule"),
        letters=", ".join(f"{k} {v}" for k, v in configuration.transformations.items()),
        min_count=configuration.min_count,
        projection=_projection_words(projection_rows, n),
        criteria=criteria,
        criteria_notes=notes,
        **_budget_words(cost, report, n, plan=plan, dataset_spent=dataset_spent),
        risk=risk,
        distribution=_stated(spec, ("publisher", "licence", "citation", "contact")),
        maintenance=ds.maintenance,
        signed_by=signed_by,
    )


def _stated(spec: ReleaseSpec, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """The datasheet fields of ``names`` the spec states, capitalised, in that order."""
    ds = spec.datasheet
    return [(name.capitalize(), getattr(ds, name)) for name in names if getattr(ds, name)]


def _projection_words(projection_rows: int | None, n: int) -> str:
    """What the min-count projection changed, as the datasheet says it."""
    return (
        f"{projection_rows:,} of {n:,} rows ({projection_rows / n:.2%}) were replaced by "
        "copies of other records."
        if projection_rows is not None and n
        else "how many rows it changed was not recorded."
    )


def _risk_words(spec: ReleaseSpec, labels: pd.DataFrame) -> dict[str, Any]:
    """The released file's disclosure-risk measures as the datasheet prints them."""
    keys = spec.disclosure.key_variables or tuple(
        c for c in spec.column_names if c != spec.disclosure.sensitive
    )
    risk = risk_measures(
        labels,
        keys,
        sensitive=spec.disclosure.sensitive,
        max_msu_size=spec.disclosure.max_msu_size,
    )
    return {
        "key_list": ", ".join(f"`{k}`" for k in risk.key_variables),
        "sample_uniques": f"{risk.sample_uniques:,}",
        "k_anonymity": f"{risk.k_anonymity:,}",
        "sensitive": risk.sensitive,
        "l_diversity": risk.l_diversity,
        "records_with_msu": f"{risk.records_with_msu:,}",
        "max_msu_size": risk.max_msu_size,
    }


def _codebook(spec: ReleaseSpec, transformer: Transformer) -> list[dict[str, str]]:
    """One entry per column: its name, meaning, unit and labels."""
    return [
        {
            "name": c.name,
            "description": c.description or "-",
            "unit": c.unit or "-",
            "labels": _values(transformer.transformations[c.name].labels),
        }
        for c in spec.columns
    ]


def _budget_words(
    cost: SelectionCost,
    report: AcceptanceReport,
    n: int,
    *,
    plan: dict[str, Any] | None,
    dataset_spent: dict[str, float] | None,
) -> dict[str, Any]:
    """The budget section's words: the total, its split, delta, selection and plan."""
    return dict(
        total=f"{cost.total:g}",
        factor=f"{math.exp(cost.total):,.0f}" if cost.total < 700 else "astronomically many",
        split=_split(cost, report),
        delta_words=(f" with delta = {cost.total_delta:g}" if cost.total_delta > 0 else ""),
        delta_meaning=(
            f", except with a probability of at most {cost.total_delta:g} (delta; far below "
            f"one in the {n:,} records, 1/n = {1 / max(n, 1):.2g})"
            if cost.total_delta > 0
            else ""
        ),
        selection_words=(
            "Private selection was accounted by Papernot and Steinke (ICLR 2022, Theorem 2), "
            "because some shortlisted generators are (epsilon, delta)-DP: configurations were "
            "tried at random from a shortlist screened on public data until one passed every "
            f"check, stopping empty-handed after a failure with probability "
            f"{cost.stop_probability:g} (a mean of {1 / cost.stop_probability:g} tries); the "
            "bound combines the Renyi DP curves of the shortlisted generators and of the checks. "
            "How many tries that took is not published (it would leak information)."
            if cost.papernot_steinke
            else "The data come from a single attempt: one configuration was drawn at random "
            "from a shortlist screened on public data, generated once and checked once; had it "
            "failed a check, nothing would have been published and nothing tried again. So "
            "the release costs that one attempt, charged once: there is no factor 2, which "
            "pays for private selection trying again until one passes (Liu and Talwar)."
            if cost.single_attempt
            else "The factor 2 pays for private selection (Liu and Talwar, STOC 2019): "
            "configurations were tried at random from a shortlist screened on public data until "
            "one passed every check; how many tries that took is not published (it would leak "
            "information)."
        ),
        dataset_spent=_spent_words(dataset_spent),
        plan_line=(
            " The budgets were chosen by `synthflow plan` on public data only (plan.json "
            f"SHA-256 {plan['plan_sha256']}), which predicted a release with probability "
            f"{plan['predicted_release_probability']:.2f} at this total."
            if plan
            else ""
        ),
    )

"""Thresholds a registry of another size can meet, read off a public sweep ([ux] #61).

A small registry may fail a spec's thresholds whatever its budget: births at 20,000
rows fails faithfulness even between two real samples, and its generator's 1-way ratio
and regression coefficients fail at any generator budget the spec's total allows. Which
threshold to publish is the spec owner's decision, never made here: this module only
*proposes* one per failing criterion, from public sweep results, for the data's users to
agree, so that ``synthflow ship-plan NAME --rows N --propose-thresholds`` ends in a plan
(or says exactly how far the size is from one) instead of a dead end.

The rule, on a sweep of a public draw of the registry's size: each (configuration,
generator budget) cell's criteria have a 90th percentile of their exact values over the
cell's runs (:data:`QUANTILE`); the cell needing the least relaxation (the smallest
largest ratio of that percentile to its threshold) is the model of what the size can
reach, and each criterion it fails is proposed :data:`MARGIN` times its percentile,
rounded up (the margin leaves room for the release's own noise). A criterion it passes
keeps its threshold: nothing is ever made stricter or looser than needed. A kind may
need more than its threshold moved (a clipped statistic moves its clip with it,
:meth:`~synthflow.criteria.protocol.CriterionKind.relaxed`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from synthflow.acceptance.attainable import nice_up
from synthflow.config.model import ReleaseSpec
from synthflow.criteria.registry import kind_of
from synthflow.errors import ConfigError
from synthflow.plan.specfile import replace_in_criterion, replace_in_privacy
from synthflow.sweep.store import SweepStore

__all__ = ["MARGIN", "QUANTILE", "Proposal", "propose_thresholds", "proposed_spec_text"]

QUANTILE = 0.9
"""The share of a cell's runs whose exact value the proposed threshold clears."""

MARGIN = 1.5
"""A proposed threshold is this many times the cell's :data:`QUANTILE` value: the rest is
room for the release's DP noise (the planner then sets each criterion's epsilon)."""


@dataclass(frozen=True)
class Proposal:
    """One criterion's proposed threshold (and the other fields its kind moves with it)."""

    name: str
    threshold: float
    proposed: float
    observed: float
    """The cell's :data:`QUANTILE` exact value the proposal rests on."""
    fields: tuple[tuple[str, float], ...]
    """Every field of the criterion that changes, ``threshold`` first."""

    def describe(self) -> str:
        """``name threshold T -> P`` and the other fields moved."""
        extra = "".join(f", {k} {v:g}" for k, v in self.fields if k != "threshold")
        return f"{self.name} {self.threshold:g} -> {self.proposed:g}{extra}"


def propose_thresholds(
    spec: ReleaseSpec, store: str | Path, *, margin: float = MARGIN
) -> tuple[list[Proposal], str]:
    """The proposals of the module's rule, and the cell they rest on (its description).

    ``store``: a sweep of ``spec`` on public data of the registry's size. Only criteria
    the chosen cell fails at ``margin`` are proposed; an empty list means the spec's
    thresholds already fit that cell.

    Raises:
        ConfigError: If the store holds no finished run of ``spec``'s criteria.
    """
    with SweepStore.open_existing(store) as s:
        rows = s.criteria()
    rows = rows[rows["name"].isin([c.name for c in spec.criteria]) & rows["value"].notna()]
    if rows.empty:
        raise ConfigError(f"the sweep {str(store)!r} holds no finished run to propose from")
    q = (
        rows.groupby(["config_id", "generator_epsilon", "name"])["value"]
        .quantile(QUANTILE)
        .unstack("name")
    )
    thresholds = {c.name: c.threshold for c in spec.criteria}
    need = (q / np.array([thresholds[n] for n in q.columns])).max(axis=1, skipna=False)
    need = need.dropna()
    if need.empty:
        raise ConfigError(f"no cell of the sweep {str(store)!r} scored every criterion")
    # The least relaxation; ties go to the smaller generator budget (cheaper release).
    best = min(need.index, key=lambda k: (round(float(need[k]), 9), k[1], k[0]))
    proposals = []
    for c in spec.criteria:
        observed = float(q.loc[best, c.name])
        wanted = nice_up(margin * observed)
        if wanted <= c.threshold:
            continue
        fields = kind_of(c).relaxed(c, wanted)
        proposals.append(
            Proposal(c.name, c.threshold, wanted, observed, tuple(sorted(
                fields.items(), key=lambda kv: kv[0] != "threshold"
            )))
        )  # fmt: skip
    config, eps = best
    return proposals, f"configuration {config} at generator epsilon {eps:g}"


def proposed_spec_text(
    source: str, proposals: list[Proposal], *, header: str, total_epsilon: float | None = None
) -> str:
    """``source`` (a spec's YAML text) with each proposal's fields replaced.

    The text is edited in place (comments and layout survive); ``header`` (comment
    lines) goes first. ``total_epsilon``: a new ceiling for the plan (None: unchanged).
    """
    text = source
    for p in proposals:
        for key, value in p.fields:
            text = replace_in_criterion(text, p.name, key=key, value=value)
    if total_epsilon is not None:
        text = replace_in_privacy(text, key="total_epsilon", value=total_epsilon)
    return header + text

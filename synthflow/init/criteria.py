"""``synthflow init``'s criteria, and their thresholds from two samples of the public file.

:func:`drafted_criteria` drafts a marginal criterion or two (switched on) and one of
each other kind (commented out) for the file's columns; :func:`criterion_yaml` writes one.

A threshold that two real samples of the private size already fail can be met by no
generator at any epsilon ([ux] 3: ``init`` drafted 0.05 for faithfulness where two
samples of 944 rows score 0.17). So each drafted criterion's threshold is the larger of
its default and :data:`MARGIN` times the 90th percentile, over :data:`DRAWS` draws, of
the exact value between two disjoint samples of ``rows`` rows of the PUBLIC file
(:func:`synthflow.acceptance.attainable.without_noise`: public data, seeded, nothing
charged), and the drafted spec says so above it. One draw is not enough: between two
samples of 944 births a regression coefficient differs by 35 to 168 grams (40 draws).
"""

from __future__ import annotations

import dataclasses
import re
import tempfile
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synthflow.acceptance.attainable import MARGIN, nice_up
from synthflow.init.columns import DraftColumn, flow, q

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DRAWS",
    "MARGIN",
    "QUANTILE",
    "Calibration",
    "DraftCriterion",
    "calibrate",
    "criterion_yaml",
    "drafted_criteria",
    "nice_up",
    "public_file",
    "threshold",
]

DRAWS = 20
"""Pairs of samples drawn (seeds 0 to DRAWS - 1)."""
QUANTILE = 0.9
"""The pairs' score that the margin multiplies: nine pairs in ten score at most this."""


@dataclass(frozen=True)
class Calibration:
    """Two samples of the public file scored against each other, exactly."""

    rows: int
    """Rows in each sample (the private data's size, or half the public file)."""
    replaced: bool
    """Sampled with replacement: the public file holds fewer than ``2 rows`` rows, so the
    scores are lower bounds (repeated rows flatter faithfulness)."""
    scores: dict[str, float]
    """Each criterion's :data:`QUANTILE` over the draws, the worst over the binnings."""
    unaffordable: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per conditional mean: the group-by columns whose rarest group (in the public file,
    scaled to ``rows``, less the resize margin) makes its release noise decide at the
    drafted epsilon and threshold (the one noise rule), each with why. Left out of the
    draft, and said so."""

    def kept_body(self, c: DraftCriterion) -> str:
        """``c``'s body without its unaffordable group-by columns."""
        drop = self.unaffordable.get(c.name)
        if not drop:
            return c.body
        match = re.search(r"group_by: \[([^\]]*)\]", c.body)
        if match is None:
            return c.body
        kept = [g.strip() for g in match.group(1).split(",") if g.strip() not in drop]
        return c.body.replace(match.group(0), f"group_by: {flow(kept)}")

    def comment(self, c: DraftCriterion) -> list[str]:
        """The drafted spec's lines above ``c``, saying where its threshold came from."""
        how = "samples drawn with replacement" if self.replaced else "disjoint samples"
        value = self.scores.get(c.name)
        wrap = lambda text: textwrap.wrap(  # noqa: E731
            text, 88, initial_indent="    # ", subsequent_indent="    # "
        )
        if value is None:
            return [f"    # {c.name}: default threshold (two {how} gave no value)"]
        lines = wrap(
            f"two {how} of {self.rows:,} rows of the file score at most {value:.3g} in "
            f"{QUANTILE:.0%} of {DRAWS} draws: threshold max({c.default:g}, {MARGIN:g} x that)"
        )
        for col, why in self.unaffordable.get(c.name, {}).items():
            lines += wrap(f"not grouped by {col}: {why}")
        return lines


@contextmanager
def public_file(frame: pd.DataFrame, path: Path | None) -> Iterator[Path]:
    """The public file the thresholds are calibrated on: ``path``, or the frame saved."""
    if path is not None:
        yield path
        return
    with tempfile.TemporaryDirectory() as tmp:
        saved = Path(tmp) / "public.parquet"
        text = frame.select_dtypes(include=["object"]).columns
        # Text as text (an object column may mix numbers and text): typed as it is read.
        frame.astype({c: "string" for c in text}).to_parquet(saved, index=False)
        yield saved


def threshold(c: DraftCriterion, calibration: Calibration | None) -> float:
    """``c``'s drafted threshold: its default, raised to MARGIN x the two samples' score."""
    return _raised(c.default, None if calibration is None else calibration.scores.get(c.name))


def _raised(default: float, score: float | None) -> float:
    """``default``, raised to MARGIN x the two samples' ``score`` (QUANTILE) when known."""
    return default if score is None else max(default, nice_up(MARGIN * score))


def calibrate(draft: str, public_file: Path, rows: int) -> Calibration:
    """Score every criterion of ``draft`` (all switched on) on two samples of the file.

    ``draft`` is the spec's text with every criterion active and ``public_sample`` naming
    ``public_file`` by its absolute path; it is loaded from a temporary directory.
    """
    from synthflow.acceptance.attainable import pairs  # noqa: PLC0415
    from synthflow.acceptance.noise_check import public_sample  # noqa: PLC0415
    from synthflow.loader import load_spec  # noqa: PLC0415
    from synthflow.transform import Transformer  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "draft.yaml"
        path.write_text(draft, encoding="utf-8")
        spec = load_spec(path)
        sample = public_sample(spec)
    if sample is None:  # a path too long for the draft to name: the defaults stand
        return Calibration(rows=rows, replaced=False, scores={})
    import numpy as np  # noqa: PLC0415

    letters = sorted({t.name for col in spec.columns for t in col.transformations})
    scores: dict[str, float] = {}
    for letter in letters or ["a"]:
        chosen = {
            col.name: letter
            for col in spec.columns
            if any(t.name == letter for t in col.transformations)
        }
        tr = Transformer(spec, chosen)
        draws = pairs(spec, tr, rows, sample, seeds=range(DRAWS))
        for c in spec.criteria:
            values = np.array([d[c.name] for d in draws], dtype=float)
            values = values[~np.isnan(values)]  # a draw with no value here: left out
            if len(values):
                v = float(np.quantile(values, QUANTILE))
                scores[c.name] = max(scores.get(c.name, v), v)
    calibration = Calibration(rows=rows, replaced=len(sample) < 2 * rows, scores=scores)
    unaffordable = {}
    for c in spec.criteria:  # every kind that groups (today the conditional mean)
        if getattr(c.params, "group_by", None):
            drop = _unaffordable_groups(
                spec, c, letters, sample, rows=rows, calibration=calibration
            )
            if drop:
                unaffordable[c.name] = drop
    return dataclasses.replace(calibration, unaffordable=unaffordable)


def _unaffordable_groups(
    spec: Any, c: Any, letters: list[str], sample: Any, *, rows: int, calibration: Calibration
) -> dict[str, str]:
    """The group-by columns of ``c`` (a kind that groups) whose noise decides at ``rows``.

    Each grouping alone, at its drafted threshold and epsilon, by the one noise rule on
    the public file's own groups (public data only), the worst over the binnings.
    """
    import numpy as np  # noqa: PLC0415

    from synthflow.transform import Transformer  # noqa: PLC0415

    # c.threshold is the draft's default here, raised as threshold() raises it.
    draft_thr = _raised(c.threshold, calibration.scores.get(c.name))
    binnings = []  # each binning's transformer and the sample's codes, made once
    for letter in letters or ["a"]:
        chosen = {col.name: letter for col in spec.columns
                  if any(t.name == letter for t in col.transformations)}  # fmt: skip
        tr = Transformer(spec, chosen)
        binnings.append((tr, tr.forward(sample).to_numpy(np.int64)))
    out: dict[str, str] = {}
    for g in [g for g in c.group_by if g is not None]:
        one = dataclasses.replace(
            c, threshold=draft_thr, params=dataclasses.replace(c.params, group_by=(g,))
        )
        for tr, codes in binnings:
            figure = one.impl.noise_figure(one, spec, tr, rows, codes)
            if figure.dominated:
                m = one.impl.best_case_public(one, tr, rows, codes)["min_group_size"]
                out[g] = (
                    f"at {rows:,} rows its smallest group, resized, holds about {m:,} row(s), so "
                    f"the release's noise (sd {figure.noise:.3g} at epsilon {c.epsilon:g}) "
                    f"would decide against the threshold {draft_thr:g}: a perfect candidate "
                    f"passes {figure.perfect_pass:.0%} of releases (raise its epsilon, or "
                    "coarsen that column's groups, to group by it)"
                )
                break
    return out


def _nice(x: float) -> float:
    """``x`` rounded to one significant digit (a default threshold, not a fitted one)."""
    if x <= 0:
        return 1.0
    return float(f"{x:.0e}")


@dataclass(frozen=True)
class DraftCriterion:
    """One drafted criterion: its YAML flow mapping, ``@T@`` where the threshold goes."""

    name: str
    default: float
    """The drafted threshold before calibration on the public file's two halves."""
    body: str
    active: bool = False
    """Written as a criterion (else commented out, an example to switch on)."""


def criterion_yaml(c: DraftCriterion, threshold: float, *, active: bool | None = None) -> list[str]:
    """The lines of one criterion under ``criteria:`` (commented out when not active)."""
    text = c.body.replace("@T@", f"{threshold:g}")
    on = c.active if active is None else active
    first, rest = ("    - ", "       ") if on else ("    # - ", "    #    ")
    return textwrap.wrap(
        text, 88, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False
    )


def drafted_criteria(cols: list[DraftColumn]) -> list[DraftCriterion]:
    """The draft's criteria: two marginal ones, then one example of each other kind."""
    ints = [c for c in cols if c.kind == "int" and c.bounds]
    few = [c for c in cols if c.kind == "categorical" and c.distinct <= 10]
    out = [
        DraftCriterion("marginal_max_abs_error", 0.05, "{name: marginal_max_abs_error, kind: "
                       "marginals, max_order: 2, threshold: @T@, epsilon: 0.05}", active=True),
        DraftCriterion("marginal_mean_tvd", 0.05, "{name: marginal_mean_tvd, kind: marginal_tvd, "
                       "max_order: 2, threshold: @T@, epsilon: 0.05}", active=True),
    ]  # fmt: skip
    if ints:
        y = max(ints, key=lambda c: c.distinct)
        assert y.bounds is not None
        span = y.bounds[1] - y.bounds[0]
        by = [c.name for c in cols if c is not y and c.groups][:2] + [c.name for c in few][:1]
        name = "cond_mean_" + y.name
        out.append(DraftCriterion(name, _nice(span * 0.05), (
            f"{{name: {q(name)}, kind: conditional_mean, column: {q(y.name)}, "
            f"group_by: {flow([*map(q, by), 'none'])}, threshold: @T@, epsilon: 0.1}}"
        )))  # fmt: skip
        features = [q(c.name) for c in ints if c is not y][:3]
        if features:
            name = "regression_coef_" + y.name
            out.append(DraftCriterion(name, _nice(span * 0.01), (
                f"{{name: {q(name)}, kind: regression_coefficients, column: {q(y.name)}, "
                f"features: {flow(features)}, threshold: @T@, epsilon: 0.5}}"
            )))  # fmt: skip
    exact = [c.name for c in few][:2]
    near = [c.name for c in cols if c.kind == "int" and c.name not in exact][:4]
    ignore = [c.name for c in cols if c.name not in exact + near]
    out.append(DraftCriterion("faithfulness_unmatched", 0.3, (
        "{name: faithfulness_unmatched, kind: faithfulness, threshold: @T@, epsilon: 0.05, "
        f"match: {{exact: {flow([*map(q, exact)])}, near: {flow([*map(q, near)])}, "
        f"ignore: {flow([*map(q, ignore)])}}}}}"
    )))  # fmt: skip
    return out

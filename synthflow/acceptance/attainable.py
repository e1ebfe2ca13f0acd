"""Whether a criterion can pass at n rows even without noise ([ux] 3).

Two samples of the same population differ: at small n, even two independent samples of
the spec's public sample may score above a threshold (births at 20,000 rows:
faithfulness about 0.17 unmatched against 0.05). No epsilon makes such a criterion
pass, and a noise check cannot say so. :func:`without_noise` scores two disjoint
samples of ``n`` rows of the public sample against each other, exactly: public data
only, seeded, nothing charged. :func:`attainability_warnings` says which criteria the
median of :data:`DRAWS` such pairs fails (a perfect generator would then fail more
often than not): ``validate --rows N``, ``space --rows N`` and the release's pre-flight,
which refuses such a release without ``--force``, print the same lines.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from synthflow.acceptance.evaluate import exact_values

if TYPE_CHECKING:
    import pandas as pd

    from synthflow.config.model import ReleaseSpec
    from synthflow.space import Configuration
    from synthflow.transform import Transformer

__all__ = [
    "DRAWS",
    "MARGIN",
    "attainability_warnings",
    "nice_up",
    "pairs",
    "typical",
    "unattainable",
    "unattainable_criteria",
    "without_noise",
]

MARGIN = 1.5
"""A threshold a good generator can meet is at least this many times what two real
samples score (no generator beats a second real sample): ``init`` drafts thresholds at
it, and a refusal at a size no threshold fits names the one that size can meet."""

DRAWS = 5
"""Pairs of samples drawn (seeds 0 to DRAWS - 1); their median is the figure judged."""


def without_noise(
    spec: ReleaseSpec, transformer: Transformer, n: int, public: pd.DataFrame, *, seed: int = 0
) -> dict[str, float]:
    """Each criterion's exact value between two samples of ``n`` rows of ``public``.

    Disjoint samples without replacement when the public sample holds ``2 n`` rows or
    more, else two samples with replacement (rows may then repeat across the two, which
    flatters faithfulness: the figure is then a lower bound).
    """
    return pairs(spec, transformer, n, public, seeds=[seed])[0]


def pairs(
    spec: ReleaseSpec,
    transformer: Transformer,
    n: int,
    public: pd.DataFrame,
    *,
    seeds: Iterable[int],
) -> list[dict[str, float]]:
    """:func:`without_noise` for each seed, the public sample binned once."""
    codes = transformer.forward(public)
    m = len(codes)
    out = []
    for seed in seeds:
        gen = np.random.default_rng(seed)  # a public computation: seeded
        if m >= 2 * n:
            order = gen.permutation(m)
            a, b = order[:n], order[n : 2 * n]
        else:
            a, b = gen.integers(0, m, n), gen.integers(0, m, n)
        first = codes.iloc[a].reset_index(drop=True)
        second = codes.iloc[b].reset_index(drop=True)
        out.append(exact_values(spec, transformer, first, second))
    return out


def typical(
    spec: ReleaseSpec, transformer: Transformer, n: int, public: pd.DataFrame
) -> dict[str, float]:
    """Each criterion's median value over :data:`DRAWS` pairs of samples.

    One pair varies too much: births' regression coefficients differ by 35 to 168 grams
    between pairs of 944 rows (40 pairs).
    """
    draws = pairs(spec, transformer, n, public, seeds=range(DRAWS))
    return {c.name: float(np.nanmedian([d[c.name] for d in draws])) for c in spec.criteria}


def unattainable_criteria(
    spec: ReleaseSpec, configurations: Iterable[Configuration], n: int, public: pd.DataFrame
) -> dict[str, tuple[str, float]]:
    """Each criterion two public samples of n rows already fail: (its line, a reachable threshold).

    Each distinct binning of ``configurations`` is scored once (:func:`typical`); the
    line gives the range over the binnings that fail and how many of them do, and the
    threshold that size can meet (:data:`MARGIN` times the worst score, rounded up).
    """
    from synthflow.transform import Transformer  # noqa: PLC0415

    binnings: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for c in configurations:
        binnings.setdefault(tuple(sorted(c.transformations.items())), []).append(c.letters)
    failing: dict[str, list[float]] = {}
    for key in binnings:
        scores = typical(spec, Transformer(spec, dict(key)), n, public)
        for name, value in unattainable(spec, scores).items():
            failing.setdefault(name, []).append(value)
    out = {}
    for name, values in failing.items():
        low, high = min(values), max(values)
        shown = f"{low:.3g}" if low == high else f"{low:.3g} to {high:.3g}"
        reachable = nice_up(MARGIN * high)
        out[name] = (
            f"at n = {n} rows, {name} fails even without noise: two independent samples of "
            f"{n} rows of the public sample score {shown} (median of {DRAWS} pairs) against "
            f"its threshold {spec.criterion(name).threshold:g} ({len(values)} of "
            f"{len(binnings)} binnings). No epsilon makes it pass, and no plan: release more "
            f"rows, or agree with the data's users a threshold this size can meet (about "
            f"{reachable:g}: {MARGIN:g} times what two real samples score), then plan at this "
            "size",
            reachable,
        )
    return out


def attainability_warnings(
    spec: ReleaseSpec, configurations: Iterable[Configuration], n: int, public: pd.DataFrame
) -> list[str]:
    """One line per criterion that two public samples of n rows already fail, noise aside.

    The lines of :func:`unattainable_criteria`.
    """
    return [line for line, _ in unattainable_criteria(spec, configurations, n, public).values()]


def agreed_threshold_path(
    spec: ReleaseSpec,
    n: int,
    reachable: dict[str, float],
    *,
    source: str | Path | None = None,
    bundled: str | None = None,
) -> str:
    """What this size can reach, and the exact command(s) that get it ('' if none).

    ``reachable``: criterion -> the threshold n rows can meet
    (:func:`unattainable_criteria`). ``bundled``: the bundled spec's name when ``spec``
    is one (or its shipped plan's): then one public-data command proposes every
    threshold this size meets (the one above and any the generator fails at this
    size), plans them and prints the release command (``ship-plan --rows N
    --propose-thresholds``, minutes, nothing spent). Otherwise ``source`` (default
    ``spec``'s own file) is copied and the steward's own commands follow. Either way
    the thresholds are the spec owner's decision, never made here.
    """
    from synthflow.public_sample import public_sample_path  # noqa: PLC0415

    agreed = [f"{name} {value:g}" for name, value in reachable.items()]
    if not agreed:
        return ""
    if bundled is not None:
        return (
            f"what this size can reach, and the plan that gets it (public data, minutes; "
            f"nothing is spent): synthflow ship-plan {bundled} --rows {n} "
            "--propose-thresholds --out plans/\n"
            "  It proposes the thresholds a registry of this size meets ("
            + ", ".join(agreed)
            + " above, and any the generator fails at this size), plans them for the data's "
            "users to agree, and prints the exact release command."
        )
    sample = public_sample_path(spec)
    if sample is None:
        return ""
    source = source or spec.path
    return (
        "the commands that plan at this size once a threshold is agreed (public data until "
        "the last; the plan says whether the spec's budgets reach a release at this size, "
        "and a smaller file may need larger ones: sweep --generator-epsilon):\n"
        f"  cp {source} my_spec.yaml   # then set the threshold of "
        + ", ".join(agreed)
        + " in it\n"
        f"  synthflow public-data draw my_spec.yaml --from {sample} --rows {n} "
        "--out draw.csv.gz --public\n"
        "  synthflow sweep my_spec.yaml --data draw.csv.gz --public --repeats 10 "
        "--store sweep.db\n"
        "  synthflow plan my_spec.yaml --store sweep.db --data draw.csv.gz --public "
        "--out plan/\n"
        "  synthflow release plan/spec.yaml --candidates plan/candidates.yaml --plan "
        "plan/plan.json --data YOUR_FILE --ledger LEDGER --out OUT --private-dir ENCLAVE"
    )


def nice_up(x: float) -> float:
    """``x`` rounded up to two significant digits (a threshold that stays above ``x``)."""
    if not x > 0 or not math.isfinite(x):
        return x
    step = 10 ** (math.floor(math.log10(x)) - 1)
    return float(f"{math.ceil(x / step - 1e-9) * step:.3g}")


def unattainable(spec: ReleaseSpec, scores: dict[str, float]) -> dict[str, float]:
    """The criteria that two samples already fail (value at or above the threshold)."""
    return {c.name: scores[c.name] for c in spec.criteria if scores[c.name] >= c.threshold}

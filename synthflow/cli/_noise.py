"""``validate --rows N`` and ``space --rows N``: what decides pass or fail at n rows.

Two reports, public facts only: the criteria that two independent samples of n rows of
the public sample already fail without any noise (:mod:`synthflow.acceptance.attainable`),
and those whose release noise decides (the one noise rule), said once and tabulated by
binning.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from synthflow.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

    from synthflow.config.model import ReleaseSpec
    from synthflow.space import Configuration

__all__ = ["noise_report"]


def noise_report(spec: ReleaseSpec, configs: list[Configuration], n: int) -> None:
    """``space --rows N``: the criteria whose release noise decides pass or fail at n."""
    from synthflow.acceptance.noise_check import (
        describe,
        needed_epsilon,
        noise_warnings,
        public_sample,
    )
    from synthflow.transform import Transformer

    if n < 1:
        raise ConfigError(f"--rows ({n}) must be at least 1")
    sample = public_sample(spec)
    binnings: dict[tuple[tuple[str, str], ...], list[str]] = {}
    for c in configs:  # the noise depends on the bins only: each binning once
        binnings.setdefault(tuple(sorted(c.transformations.items())), []).append(c.letters)
    found = []  # (binning letters, its noise-dominated criteria)
    for key, letters in binnings.items():
        warnings = noise_warnings(spec, Transformer(spec, dict(key)), n, sample)
        if warnings:
            found.append((", ".join(sorted(set(letters))), warnings))
    _attainability_report(spec, binnings, n, sample)
    if not found:
        print(f"noise check at n = {n}: no criterion is dominated by its noise", file=sys.stderr)
        return
    shown, first = found[0]  # said in words once; every binning in one table ([ux] 3)
    print(f"warning: {describe(first, n)}\n  (binning {shown})", file=sys.stderr)
    tr = Transformer(spec, dict(next(k for k, v in binnings.items() if shown in v)))
    needs = []
    for w in first:
        e = needed_epsilon(spec, tr, n, sample, w.criterion)
        now = spec.criterion(w.criterion).epsilon
        needs.append(
            f"{w.criterion} {e:.3g} (now {now:g})"
            if e is not None
            else f"{w.criterion}: not by its own epsilon (up to 100 times {now:g})"
        )
    print(
        "  the epsilon each would need for a perfect candidate to pass two releases in three "
        f"(the other budgets as they are): {'; '.join(needs)}",
        file=sys.stderr,
    )
    if len(found) > 1:
        names = list(dict.fromkeys(w.criterion for _, ws in found for w in ws))
        width = max(len(x) for x in names)
        lines = [f"    {'binning':<8}" + "".join(f"  {x:>{width}}" for x in names)]
        for binning, ws in found:
            rate = {w.criterion: f"{w.perfect_pass:.0%}" for w in ws}
            lines.append(
                f"    {binning:<8}" + "".join(f"  {rate.get(x, '-'):>{width}}" for x in names)
            )
        print(
            f"  {len(found)} of {len(binnings)} binnings warn; a perfect candidate's pass rate "
            "per release, by binning ('-': not noise-dominated there):\n" + "\n".join(lines),
            file=sys.stderr,
        )


def _attainability_report(
    spec: ReleaseSpec,
    binnings: dict[tuple[tuple[str, str], ...], list[str]],
    n: int,
    sample: pd.DataFrame | None,
) -> None:
    """``--rows N``: criteria that two public samples of n rows already fail, noise aside."""
    if sample is None:
        return
    from synthflow.acceptance.attainable import unattainable, without_noise
    from synthflow.transform import Transformer

    failing: dict[str, list[tuple[str, float]]] = {}
    for key, letters in binnings.items():
        tr = Transformer(spec, dict(key))
        for name, value in unattainable(spec, without_noise(spec, tr, n, sample)).items():
            failing.setdefault(name, []).append((", ".join(sorted(set(letters))), value))
    for name, rows in failing.items():
        c = spec.criterion(name)
        low, high = min(v for _, v in rows), max(v for _, v in rows)
        shown = f"{low:.3g}" if low == high else f"{low:.3g} to {high:.3g}"
        print(
            f"warning: at n = {n} rows, {name} fails even without noise: two independent "
            f"samples of {n} rows of the public sample score {shown} against its threshold "
            f"{c.threshold:g} ({len(rows)} of {len(binnings)} binnings). No epsilon makes it "
            "pass: release more rows, or raise its threshold",
            file=sys.stderr,
        )

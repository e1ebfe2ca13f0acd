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
    from synthflow.config.model import ReleaseSpec
    from synthflow.space import Configuration

__all__ = ["noise_report"]


def noise_report(spec: ReleaseSpec, configs: list[Configuration], n: int) -> None:
    """``space --rows N``: the criteria whose release noise decides pass or fail at n."""
    from synthflow.acceptance.needed import needed_line
    from synthflow.acceptance.noise_check import describe, noise_warnings, public_sample
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
    if sample is not None:
        from synthflow.acceptance.attainable import attainability_warnings

        for line in attainability_warnings(spec, configs, n, sample):
            print(f"warning: {line}", file=sys.stderr)
    if not found:
        print(f"noise check at n = {n}: no criterion is dominated by its noise", file=sys.stderr)
        return
    shown, first = found[0]  # said in words once; every binning in one table ([ux] 3)
    print(f"warning: {describe(first, n)}\n  (binning {shown})", file=sys.stderr)
    tr = Transformer(spec, dict(next(k for k, v in binnings.items() if shown in v)))
    print(f"  {needed_line(spec, tr, n, sample, first)}", file=sys.stderr)
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

"""Sections of the evaluation report that hold in both modes (the candidate is public).

Each takes D_R's codes and, in exact mode only, D_T's (``t`` is ``None`` in DP mode:
a DP report never reads the original beyond its public size).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthflow.config.model import ReleaseSpec
from synthflow.criteria.plots import (
    CAND,
    ORIG,
    bars,
    bin_labels,
    grid,
    heading,
    html_table,
    png,
)
from synthflow.filtering import binned_violations
from synthflow.transform import Transformer


def _one_way(transformer: Transformer, t: np.ndarray | None, r: np.ndarray) -> str:
    names = transformer.domain.names
    fig, axes = grid(len(names))
    for j, (ax, name) in enumerate(zip(axes, names, strict=False)):
        size = transformer.domain.sizes[j]
        series = []
        if t is not None:
            series.append(("original", np.bincount(t[:, j], minlength=size) / len(t), ORIG))
        series.append(("candidate", np.bincount(r[:, j], minlength=size) / len(r), CAND))
        bars(ax, bin_labels(transformer, name), series)
        ax.set_title(name, fontsize=9)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return png(fig)


def _violations(
    spec: ReleaseSpec, transformer: Transformer, frames: dict[str, pd.DataFrame]
) -> str:
    rules = spec.synthetic_constraints
    rows = [
        {"rule": f"{rule.id}: {rule.name}"}
        | {k: int(binned_violations(f, [rule], transformer).sum()) for k, f in frames.items()}
        for rule in rules
    ]
    total = {"rule": "any rule"} | {
        k: int(binned_violations(f, rules, transformer).sum()) for k, f in frames.items()
    }
    return heading(
        2, "Constraint violations (rows of the binned table each synthetic rule drops)"
    ) + html_table(pd.DataFrame([*rows, total]))

"""Sections of the evaluation report that hold in both modes (the candidate is public).

Each takes D_R's codes and, in exact mode only, D_T's (``t`` is ``None`` in DP mode:
a DP report never reads the original beyond its public size).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from synthflow.acceptance import condmean, regression
from synthflow.acceptance._report_plots import (
    _CAND,
    _ORIG,
    _bars,
    _grid,
    _h,
    _labels,
    _plt,
    _png,
    _table,
)
from synthflow.config.model import CriterionSpec, ReleaseSpec
from synthflow.filtering import binned_violations
from synthflow.transform import Transformer


def _one_way(transformer: Transformer, t: np.ndarray | None, r: np.ndarray) -> str:
    names = transformer.domain.names
    fig, axes = _grid(len(names))
    for j, (ax, name) in enumerate(zip(axes, names, strict=False)):
        size = transformer.domain.sizes[j]
        series = []
        if t is not None:
            series.append(("original", np.bincount(t[:, j], minlength=size) / len(t), _ORIG))
        series.append(("candidate", np.bincount(r[:, j], minlength=size) / len(r), _CAND))
        _bars(ax, _labels(transformer, name), series)
        ax.set_title(name, fontsize=9)
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return _png(fig)


def _by(by: str | None) -> str:
    return by if by is not None else "(overall)"


def _condmean_plot(
    rows: list[condmean.GroupMean], column: str, *, with_original: bool, threshold: float
) -> str:
    """Dot plot per group-by option: means (filled) and medians (hollow) per group.

    A grey band of +-``threshold`` around each reference mean (the original's, or the
    candidate's in DP mode) gives the scale: a difference inside the band is within the
    criterion's threshold, however large it looks on a zoomed axis.
    """
    options = list(dict.fromkeys(g.by for g in rows))
    fig, axes = _grid(len(options), width=12.0, row_h=3.4, ncols=min(3, len(options)))
    for ax, by in zip(axes, options, strict=False):
        sel = [g for g in rows if g.by == by]
        x = np.arange(len(sel))
        ref = [g.mean_original if with_original else g.mean_candidate for g in sel]
        for i, m in enumerate(ref):
            ax.fill_between(
                [i - 0.35, i + 0.35],
                m - threshold,
                m + threshold,
                color="0.85",
                zorder=0,
                label="threshold band" if i == 0 else None,
            )
        series = [("candidate", 0.12, _CAND, "mean_candidate", "median_candidate")]
        if with_original:
            series.insert(0, ("original", -0.12, _ORIG, "mean_original", "median_original"))
            for i, g in enumerate(sel):  # the error the criterion measures
                ax.plot([i - 0.12, i + 0.12], [g.mean_original, g.mean_candidate], color="gray")
        for name, off, color, mean, median in series:
            ax.plot(
                x + off, [getattr(g, mean) for g in sel], "o", color=color, label=f"{name} mean"
            )
            ax.plot(
                x + off,
                [getattr(g, median) for g in sel],
                "D",
                mfc="none",
                color=color,
                ms=6,
                label=f"{name} median",
            )
        labels = [g.group if by is not None else "everyone" for g in sel]
        ax.set_xticks(x, labels, fontsize=9, rotation=30 if len(sel) > 5 else 0)
        ax.set_xlim(-0.6, len(sel) - 0.4)
        ax.tick_params(axis="y", labelsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.set_title(f"{column}: {'by ' + by if by is not None else 'overall'}", fontsize=11)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return _png(fig)


def _condmean_section(
    c: CriterionSpec, transformer: Transformer, t: np.ndarray | None, r: np.ndarray
) -> str:
    column = c.column or ""
    exact = t is not None
    # DP mode passes the candidate twice and shows only its side.
    rows = condmean.cond_mean_table(r if t is None else t, r, transformer, column, c.group_by)
    if exact:
        df = pd.DataFrame([{**vars(g), "by": _by(g.by), "error": g.error} for g in rows])
    else:
        df = pd.DataFrame(
            [
                {
                    "by": _by(g.by),
                    "group": g.group,
                    "size_candidate": g.size_candidate,
                    "mean_candidate": g.mean_candidate,
                    "median_candidate": g.median_candidate,
                }
                for g in rows
            ]
        )
    title = f"Conditional means and medians: {column}" + ("" if exact else " (candidate only)")
    plot = _condmean_plot(rows, column, with_original=exact, threshold=c.threshold)
    return _h(2, title) + plot + _table(df)


def _regression_section(
    c: CriterionSpec,
    transformer: Transformer,
    t: np.ndarray | None,
    r: np.ndarray,
    dp_fit: dict[str, Any] | None = None,
) -> str:
    target = c.column or ""
    xr, yr, feats, _, _ = regression.design(r, transformer, target, c.features)
    models = {"candidate (OLS)": regression.ols(xr, yr, feats)}
    if t is not None:
        xo, yo, _, _, _ = regression.design(t, transformer, target, c.features)
        models = {"original (OLS)": regression.ols(xo, yo, feats), **models}
    elif dp_fit is not None:  # DP mode: the released fit of D_T (DP, so publishable)
        fit = regression.LinearModel(
            features=feats, intercept=float(dp_fit["intercept"]), coef=tuple(dp_fit["coef"])
        )
        models = {"original (DP fit)": fit, **models}
    terms = ["intercept", *feats]
    df = pd.DataFrame({"term": terms, **{k: [m.intercept, *m.coef] for k, m in models.items()}})
    if len(models) == 2:
        first, second = list(models)
        df["abs difference"] = (df[first] - df[second]).abs()
    plt = _plt()
    fig, (ax0, ax1) = plt.subplots(
        1, 2, figsize=(11, 0.45 * len(terms) + 1.2), gridspec_kw={"width_ratios": [1, 4]}
    )
    colors = [_ORIG, _CAND] if len(models) == 2 else [_CAND]
    h = 0.8 / len(models)
    for i, ((name, m), color) in enumerate(zip(models.items(), colors, strict=True)):
        off = (i - (len(models) - 1) / 2) * h
        ax0.barh([off], [m.intercept], h, color=color)
        ax1.barh(np.arange(len(feats)) + off, m.coef, h, color=color, label=name)
    ax0.set_yticks([0], ["intercept"])
    ax1.set_yticks(np.arange(len(feats)), feats)
    ax1.invert_yaxis()
    for ax in (ax0, ax1):
        ax.axvline(0, color="black", lw=0.8)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(labelsize=8)
    ax1.set_title(f"coefficients of {target} (raw units per unit of feature)", fontsize=9)
    ax1.legend(fontsize=8)
    fig.tight_layout()
    if t is not None:
        head = _h(2, "Regression coefficients (raw units)")
    elif dp_fit is not None:
        head = _h(2, "Regression coefficients (raw units; DP fit of the original vs candidate)")
        head += (
            "<p class='note'>The original's coefficients are the functional-mechanism fit "
            "released under this criterion's budget (noisy, DP); the criterion compares them "
            "with the candidate's OLS in the candidate's standardisation.</p>"
        )
    else:
        head = _h(2, "Regression coefficients (raw units; candidate)")
    return head + _png(fig) + _table(df)


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
    return _h(
        2, "Constraint violations (rows of the binned table each synthetic rule drops)"
    ) + _table(pd.DataFrame([*rows, total]))

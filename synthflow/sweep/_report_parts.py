"""The sweep report's parts: pass rates by factor, bars, and the DP thresholds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthflow._util.html import fmt
from synthflow.config.model import ReleaseSpec
from synthflow.sweep.store import SweepStore

__all__ = ["_dp_thresholds", "_factors", "_hbar", "_share", "_sort_key", "pass_rates_by"]


def _factors(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs with one column per hyperparameter and per transformed column."""
    rows = []
    for blob in runs["config_json"]:
        cfg = json.loads(blob)
        row: dict[str, Any] = {f"hp:{k}": v for k, v in cfg["hyperparameters"].items()}
        row.update({f"transform:{k}": v for k, v in cfg["transformations"].items()})
        rows.append(row)
    # Column by column as objects: an integer setting missing from other models stays
    # 500 (a frame built from the dicts would make it 500.0 beside NaN).
    names = list(dict.fromkeys(k for row in rows for k in row))
    extra = pd.DataFrame({k: pd.Series([row.get(k) for row in rows], dtype=object) for k in names})
    return pd.concat([runs.reset_index(drop=True), extra], axis=1)


def _sort_key(value: Any) -> tuple[int, float, str]:
    """Numbers in numeric order (16 before 100), then text."""
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def pass_rates_by(runs: pd.DataFrame, factor: str) -> pd.DataFrame:
    """Runs, DP pass rate and exact pass rate per value of ``factor`` (numeric order).

    Runs where ``factor`` does not apply (a hyperparameter of another model) are left out.
    """
    sel = runs[runs[factor].notna()]
    keys = sel[factor].map(lambda v: json.dumps(v) if isinstance(v, list | dict) else v)
    g = sel.groupby(keys, dropna=True)
    table = pd.DataFrame(
        {
            "runs": g.size(),
            "pass_rate_dp": g["passed_dp"].mean(),
            "pass_rate_exact": g["passed_exact"].mean(),
        }
    )
    return table.loc[sorted(table.index, key=_sort_key)]


def _share(x: float) -> str:
    return f"{x:.0%}" if x in (0.0, 1.0) else f"{x:.1%}"


def _hbar(
    labels: list[str],
    series: list[tuple[str, np.ndarray, str]],
    xlabel: str,
    *,
    legend: bool = True,
) -> Any:
    from matplotlib.figure import Figure  # noqa: PLC0415  (heavy; only when a report is written)

    fig = Figure(figsize=(8.5, 0.9 + 0.32 * len(labels) * len(series)))
    ax = fig.subplots()
    y = np.arange(len(labels))
    height = 0.8 / len(series)
    for i, (name, values, colour) in enumerate(series):
        ax.barh(y + (i - (len(series) - 1) / 2) * height, values, height, label=name, color=colour)
    ax.set_yticks(y, labels, fontsize=11)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel(xlabel, fontsize=11)
    ax.tick_params(axis="x", labelsize=10)
    ax.grid(axis="x", alpha=0.3)
    if legend:  # outside the axes, so that it never covers a bar
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=10, frameon=False)
    return fig


def _dp_thresholds(store: str | Path, spec: ReleaseSpec) -> dict[str, str]:
    """Per Laplace-released criterion, the thresholds its DP decisions used (range)."""
    from synthflow.criteria.context import laplace_terms  # noqa: PLC0415

    found: dict[str, list[float]] = {}
    with SweepStore.open_existing(store) as db:
        records = db.planning()
    by_name = {c.name: c for c in spec.criteria}
    for _, _, _, record in records:
        for name, entry in record.items():
            c = by_name.get(name)
            if c is None or not isinstance(entry, dict):
                continue
            try:  # ConfigError (a ValueError): not a Laplace release (the regression fit)
                _, threshold = laplace_terms(c, spec, entry["public"], c.epsilon)
            except (KeyError, ValueError):
                continue
            found.setdefault(name, []).append(threshold)
    out = {}
    for name, values in found.items():
        lo, hi = min(values), max(values)
        out[name] = fmt(lo) if np.isclose(lo, hi) else f"{fmt(lo)} to {fmt(hi)}"
    return out

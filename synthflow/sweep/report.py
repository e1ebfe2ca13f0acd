"""A self-contained HTML report of a sweep: pass rates, failing criteria, shortlist.

Shows pass rates (with and without the release noise) by model, hyperparameter,
transformation and min_count, how often each criterion fails, and the expected number
of private-selection attempts 1/p for the shortlisted configurations. Plots are
matplotlib PNGs (Figure objects, no pyplot state) embedded as base64, so the file travels alone.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from synthflow.sweep.shortlist import estimate
from synthflow.sweep.store import SweepStore

__all__ = ["pass_rates_by", "write_report"]


def _factors(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs with one column per hyperparameter and per transformed column."""
    rows = []
    for blob in runs["config_json"]:
        cfg = json.loads(blob)
        row = {f"hp:{k}": str(v) for k, v in cfg["hyperparameters"].items()}
        row.update({f"transform:{k}": v for k, v in cfg["transformations"].items()})
        rows.append(row)
    return pd.concat([runs.reset_index(drop=True), pd.DataFrame(rows)], axis=1)


def pass_rates_by(runs: pd.DataFrame, factor: str) -> pd.DataFrame:
    """Runs, DP pass rate and exact pass rate per value of ``factor``."""
    g = runs.groupby(factor, dropna=True)
    return pd.DataFrame(
        {
            "runs": g.size(),
            "pass_rate_dp": g["passed_dp"].mean(),
            "pass_rate_exact": g["passed_exact"].mean(),
        }
    )


def _png(fig: Figure) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return (
        f'<img alt="plot" src="data:image/png;base64,{base64.b64encode(buf.getvalue()).decode()}">'
    )


def _bar(table: pd.DataFrame, title: str, columns: list[str], ylabel: str) -> str:
    fig = Figure(figsize=(max(4.0, 0.6 * len(table) + 2), 3))
    ax = fig.subplots()
    table[columns].plot.bar(ax=ax, rot=45)
    ax.set_title(title)
    ax.set_ylabel(ylabel)
    ax.set_xlabel("")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return _png(fig)


def _table(frame: pd.DataFrame) -> str:
    return frame.to_html(float_format=lambda x: f"{x:.3f}", border=0, classes="t")


def write_report(store: str | Path, out: Path, *, min_pass: float = 0.10) -> Path:
    """Write the HTML report of ``store`` to ``out`` (atomically); returns ``out``.

    Raises:
        StoreError: If the store is missing, corrupt or foreign.
    """
    with SweepStore.open_existing(store) as db:
        meta = db.meta()
        runs = db.runs()
        crit = db.criteria()
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>synthflow sweep report</title>",
        "<style>body{font-family:sans-serif;max-width:70em;margin:auto}"
        ".t td,.t th{padding:2px 8px;text-align:right}</style></head><body>",
        "<h1>Sweep report</h1>",
        f"<p>Store <code>{html.escape(str(store))}</code>; spec sha256 "
        f"<code>{meta['spec_sha256'][:16]}</code>; public data sha256 "
        f"<code>{meta['data_sha256'][:16]}</code>; seed {html.escape(meta['seed'])}.</p>",
    ]
    if runs.empty:
        parts.append("<p>The store holds no runs yet.</p></body></html>")
    else:
        runs = _factors(runs)
        errors = int((runs["status"] == "error").sum())
        parts.append(
            f"<p>{runs['config_id'].nunique()} configurations, {len(runs)} runs "
            f"({errors} failed flows). Pass rate with release noise "
            f"{runs['passed_dp'].mean():.1%}, without noise {runs['passed_exact'].mean():.1%}."
            "</p>"
        )
        parts.append("<h2>Which criterion fails most</h2>")
        if not crit.empty:
            fails = crit.groupby("name").agg(
                runs=("value", "size"),
                fail_rate_exact=("passed_exact", lambda s: 1 - s.mean()),
                fail_rate_dp=("passed_dp", lambda s: 1 - s.mean()),
                median_value=("value", "median"),
                threshold=("threshold", "first"),
            )
            fails = fails.sort_values("fail_rate_dp", ascending=False)
            parts.append(
                _bar(
                    fails,
                    "failure rate per criterion",
                    ["fail_rate_dp", "fail_rate_exact"],
                    "share of runs failing",
                )
            )
            parts.append(_table(fails))
        factors = ["model", "min_count", "letters", "generator_epsilon"]
        factors += sorted(c for c in runs.columns if c.startswith("transform:"))
        factors += sorted(c for c in runs.columns if c.startswith("hp:"))
        parts.append("<h2>Pass rates by model, transformation and hyperparameter</h2>")
        constant = [f for f in factors if runs[f].nunique(dropna=True) <= 1]
        if constant:
            parts.append(
                "<p>The same in every run (no comparison to show): "
                + ", ".join(
                    f"{html.escape(f)} = {html.escape(str(runs[f].dropna().iloc[0]))}"
                    for f in constant
                    if runs[f].notna().any()
                )
                + ".</p>"
            )
        for factor in factors:
            table = pass_rates_by(runs, factor)
            if table.empty or factor in constant:
                continue
            parts.append(f"<h3>{html.escape(factor)}</h3>")
            parts.append(_bar(table, factor, ["pass_rate_dp", "pass_rate_exact"], "pass rate"))
            parts.append(_table(table))
        parts.append(f"<h2>Shortlist (DP pass rate &ge; {min_pass:g})</h2>")
        short = [e for e in estimate(store, basis="dp") if e.p >= min_pass]
        if short:
            table = pd.DataFrame(
                {
                    "model": [e.configuration["model"] for e in short],
                    "generator_epsilon": [e.generator_epsilon for e in short],
                    "runs": [e.runs for e in short],
                    "pass_rate": [e.p for e in short],
                    "wilson_low": [e.low for e in short],
                    "wilson_high": [e.high for e in short],
                    "expected_attempts (1/p)": [e.expected_attempts for e in short],
                },
                index=pd.Index([e.config_id for e in short], name="config_id"),
            )
            parts.append(
                f"<p>{len(short)} (configuration, generator epsilon) pairs. Private selection "
                "draws uniformly from the configurations at one generator epsilon: expected "
                "attempts 1/mean(p) = "
                + ", ".join(
                    f"{1 / g['pass_rate'].mean():.2f} at {eps:g}"
                    for eps, g in table.groupby("generator_epsilon")
                )
                + ".</p>"
            )
            parts.append(_table(table))
        else:
            parts.append("<p>No configuration reaches the threshold.</p>")
        parts.append("</body></html>")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text("\n".join(parts), encoding="utf-8")
    os.replace(tmp, out)
    return out

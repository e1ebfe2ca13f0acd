"""A self-contained HTML report of a sweep: pass rates, failing criteria, shortlist.

Shows how often each criterion fails (with and without the release noise, beside its
spec threshold and the threshold a DP decision uses), why flows failed, pass rates by
model, hyperparameter, transformation and min_count (values in numeric order; settings
of one model family marked as such), and the shortlist on the same basis as
``synthflow shortlist`` (``--basis``). Rendered from ``templates/sweep_report.html.j2``;
plots are matplotlib PNGs embedded as data URIs, so the file travels alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from synthflow._util.files import write_atomic
from synthflow._util.html import Markup, png, render
from synthflow.config.model import ReleaseSpec
from synthflow.sweep._report_parts import (
    _dp_thresholds,
    _factors,
    _hbar,
    _share,
    pass_rates_by,
)
from synthflow.sweep.shortlist import estimate, thin_evidence
from synthflow.sweep.store import StoreError, SweepStore

__all__ = ["pass_rates_by", "write_report"]

_DP, _EXACT = "#4c72b0", "#aab6c8"


def _context(
    store: str | Path,
    *,
    min_pass: float,
    basis: Literal["dp", "exact"],
    spec: ReleaseSpec | None,
) -> dict[str, Any]:
    with SweepStore.open_existing(store) as db:
        meta = db.meta()
        runs = db.runs()
        crit = db.criteria()
    if spec is not None and spec.sha256 != meta["spec_sha256"]:
        raise StoreError(
            f"the spec {spec.path!r} is not the one the sweep in {str(store)!r} ran (sha256 "
            f"{spec.sha256[:12]}... vs {meta['spec_sha256'][:12]}...): give the sweep's spec"
        )
    ctx: dict[str, Any] = {
        "store": str(store),
        "spec_sha256": meta["spec_sha256"][:16],
        "data_sha256": meta["data_sha256"][:16],
        "seed": meta["seed"],
        "min_pass": min_pass,
        "basis": basis,
        "runs": len(runs),
        "with_spec": spec is not None,
        "colour_dp": _DP,
        "colour_exact": _EXACT,
        "thin_evidence": None,
    }
    if runs.empty:
        return ctx
    runs = _factors(runs)
    ctx.update(
        configurations=runs["config_id"].nunique(),
        budgets=runs["generator_epsilon"].nunique() if "generator_epsilon" in runs else 1,
        failed=int((runs["status"] == "error").sum()),
        pass_dp=_share(float(runs["passed_dp"].mean())),
        pass_exact=_share(float(runs["passed_exact"].mean())),
    )
    ctx["errors"] = _errors(runs)
    # Criteria: failure rates with and without noise; the DP decision thresholds.
    dp_thr = _dp_thresholds(store, spec) if spec is not None else {}
    ctx.update(_criteria(crit, dp_thr))
    ctx["constant"], ctx["factors"] = _settings(runs)
    ctx.update(_shortlist(store, min_pass=min_pass, basis=basis))
    return ctx


def _errors(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """Failed flows: the first line of each distinct reason, with the models it hit."""
    errors = []
    failed = runs[runs["status"] == "error"]
    if not failed.empty:
        reason = failed["error"].fillna("unknown").map(lambda e: str(e).strip().splitlines()[0])
        reason = reason.map(lambda e: e if len(e) <= 300 else e[:297] + "...")
        for text, group in failed.groupby(reason):
            errors.append(
                {
                    "reason": text,
                    "runs": len(group),
                    "models": ", ".join(sorted(group["model"].unique())),
                }
            )
        errors.sort(key=lambda e: -e["runs"])
    return errors


def _criteria(crit: pd.DataFrame, dp_thr: dict[str, Any]) -> dict[str, Any]:
    """The criteria's rows (``criteria``) and, if any ran, their plot (``criteria_plot``)."""
    out: dict[str, Any] = {}
    criteria = []
    if not crit.empty:
        table = crit.groupby("name").agg(
            runs=("value", "size"),
            fail_exact=("passed_exact", lambda s: 1 - s.mean()),
            fail_dp=("passed_dp", lambda s: 1 - s.mean()),
            median=("value", "median"),
            threshold=("threshold", "first"),
        )
        table = table.sort_values("fail_dp", ascending=False)
        for name, row in table.iterrows():
            criteria.append(
                {
                    "name": name,
                    "runs": int(row["runs"]),
                    "fail_dp": _share(float(row["fail_dp"])),
                    "fail_exact": _share(float(row["fail_exact"])),
                    "median": float(row["median"]),
                    "threshold": float(row["threshold"]),
                    "dp_threshold": dp_thr.get(str(name), "-"),
                }
            )
        out["criteria_plot"] = png(
            _hbar(
                [str(n) for n in table.index],
                [
                    ("with the release's noise", table["fail_dp"].to_numpy(), _DP),
                    ("without noise", table["fail_exact"].to_numpy(), _EXACT),
                ],
                "share of runs in which the criterion fails",
            ),
            alt="failure rate per criterion",
        )
    out["criteria"] = criteria
    return out


def _settings(runs: pd.DataFrame) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Pass rates by setting; a setting of one model family is compared within it.

    The settings of one value (``constant``) and those that vary (``factors``).
    """
    names = ["model", "min_count", "letters", "generator_epsilon"]
    names += sorted(c for c in runs.columns if c.startswith("transform:"))
    names += sorted(c for c in runs.columns if c.startswith("hp:"))
    all_models = set(runs["model"])
    constant, factors = [], []
    for name in names:
        values = runs[name].map(lambda v: json.dumps(v) if isinstance(v, list | dict) else v)
        applies = runs.loc[values.notna(), "model"].unique()
        only = ", ".join(sorted(applies)) if set(applies) != all_models else ""
        if values.nunique(dropna=True) <= 1:
            if values.notna().any():
                constant.append(
                    {"name": name, "value": str(values.dropna().iloc[0]), "models": only}
                )
            continue
        table = pass_rates_by(runs.assign(**{name: values}), name)
        rows = [
            {
                "value": str(v),
                "runs": int(r["runs"]),
                "dp": _share(float(r["pass_rate_dp"])),
                "exact": _share(float(r["pass_rate_exact"])),
            }
            for v, r in table.iterrows()
        ]
        factors.append(
            {"name": name, "models": only, "rows": rows, "plot": _pass_plot(table, name)}
        )
    return constant, factors


def _pass_plot(table: pd.DataFrame, name: str) -> Markup | None:
    """The pass rates by one setting as a plot, or None if no run of it passed."""
    if float(table[["pass_rate_dp", "pass_rate_exact"]].to_numpy().max()) > 0:
        return png(
            _hbar(
                [str(v) for v in table.index],
                [
                    ("with the release's noise", table["pass_rate_dp"].to_numpy(), _DP),
                    ("without noise", table["pass_rate_exact"].to_numpy(), _EXACT),
                ],
                "share of runs passing every criterion",
                legend=False,  # the page's legend above explains the colours
            ),
            alt=f"pass rate by {name}",
        )
    return None


def _shortlist(
    store: str | Path, *, min_pass: float, basis: Literal["dp", "exact"]
) -> dict[str, Any]:
    """The shortlist, on the same basis as `synthflow shortlist`."""
    estimates = estimate(store, basis=basis)
    short = [e for e in estimates if e.p >= min_pass]
    ctx: dict[str, Any] = {"thin_evidence": thin_evidence(estimates)}
    ctx["exact_shortlist"] = (
        sum(e.p >= min_pass for e in estimate(store, basis="exact")) if basis == "dp" else 0
    )
    ctx["shortlist"] = [
        {
            "config_id": e.config_id,
            "model": e.configuration["model"],
            "generator_epsilon": e.generator_epsilon,
            "runs": e.runs,
            "p": e.p,
            "low": e.low,
            "high": e.high,
            "attempts": e.expected_attempts,
        }
        for e in short
    ]
    by_eps: dict[float, list[float]] = {}
    for e in short:
        by_eps.setdefault(e.generator_epsilon, []).append(e.p)
    ctx["expected_attempts"] = ", ".join(
        (f"{1 / float(np.mean(ps)):.2f}" if np.mean(ps) > 0 else "infinite")
        + f" at generator epsilon {eps:g}"
        for eps, ps in sorted(by_eps.items())
    )
    return ctx


def write_report(
    store: str | Path,
    out: Path,
    *,
    min_pass: float = 0.10,
    basis: Literal["dp", "exact"] = "dp",
    spec: ReleaseSpec | None = None,
) -> Path:
    """Write the HTML report of ``store`` to ``out`` (atomically); returns ``out``.

    Args:
        store: The sweep's SQLite store.
        out: The HTML file to write.
        min_pass: The shortlist threshold (as ``synthflow shortlist --min-pass``).
        basis: ``dp`` (decisions with the release's noise) or ``exact``, as
            ``synthflow shortlist --basis``.
        spec: The spec the sweep ran: adds the thresholds DP decisions used (the 1-way
            ratio's pseudo-threshold).

    Raises:
        StoreError: If the store is missing, corrupt or foreign, or ``spec`` is not the
            sweep's.
    """
    text = render(
        "sweep_report.html.j2", **_context(store, min_pass=min_pass, basis=basis, spec=spec)
    )
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(out, text)

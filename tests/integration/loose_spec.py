"""A births spec with loose thresholds, so that PrivBayes on 10K public rows can pass.

Used by the planner's tests: what they test is the machinery (a plan exists), not the
release's thresholds.
"""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
LOOSE = {
    "marginal_max_abs_error": 0.3,
    "cond_mean_error_parity": 1.5,
    "cond_mean_error_birth_weight": 600,
    "cond_mean_error_gestation_week": 3,
    "regression_coef_error": 600,
    "regression_tstr_mae_error": 40,
    "faithfulness_unmatched": 0.6,
}


def release_binning_ids(spec: object) -> list[str]:
    """Configuration ids of the release's binning (mother_age b, the others a)."""
    from synthflow.space import expand_space

    want = {"mother_age": "b"}
    return [
        c.id
        for c in expand_space(spec)  # type: ignore[arg-type]
        if all(v == want.get(k, "a") for k, v in c.transformations.items())
    ]


def write_loose_spec(path: Path, *, mean_tvd: bool = False) -> Path:
    """Write the loose spec to ``path`` (PrivBayes degree 2 only; min_count 2).

    ``mean_tvd``: add a ``marginal_tvd`` criterion (two halves of the 10K sample score
    0.046; PrivBayes degree 2 at generator epsilon 8 and 16 scored 0.021-0.044).
    """
    doc = yaml.safe_load((REPO / "configs" / "births-2024.yaml").read_text())
    if mean_tvd:
        doc["acceptance"]["criteria"].append(
            {
                "name": "marginal_mean_tvd",
                "kind": "marginal_tvd",
                "threshold": 0.08,
                "epsilon": 0.05,
            }
        )
    for c in doc["acceptance"]["criteria"]:
        if c["name"] in LOOSE:
            c["threshold"] = LOOSE[c["name"]]
        if c["kind"] == "one_way_ratio":  # PrivBayes leaves bins empty at 10K rows
            c["threshold"] = c["clip"] = 50.0
            # A pseudo-threshold far below the clip where a candidate's smallest count is
            # a few rows: the release would be decided by its noise, which the evaluation
            # fails (#60). A false pass of up to 45% at the clip keeps it decidable.
            c["false_positive_rate"] = 0.45
    doc["space"]["models"] = [
        {
            "model": "privbayes",
            "grid": {"flavor": "degree", "degree": 2, "epsilon_split": [0.1, 0.5]},
        }
    ]
    doc["space"]["min_count"] = [2]
    doc["privacy"]["total_epsilon"] = 40.0  # room for the swept generator budgets
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path

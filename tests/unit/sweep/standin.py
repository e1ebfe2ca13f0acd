"""A small local stand-in evaluator and tiny specs/data for the sweep tests.

The stand-in is passed to the engine as a parameter (dependency injection); the real
default is :class:`synthflow.sweep.evaluation.AcceptanceEvaluator`. Its two criteria
are cheap functions of the codes, released with Laplace noise from the run's rng.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from synthflow.config import ReleaseSpec
from synthflow.flow import FlowResult
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.sweep.evaluation import CriterionOutcome, RunEvaluation
from synthflow.sweep.job import SweepSummary

REPO = Path(__file__).resolve().parents[3]
NVSS_10K = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_10k.csv"
NVSS_160K = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_160k.csv.gz"


class StandInEvaluator:
    """Max 1-way error and max mean-code gap; ``SWEEP_STANDIN_DELAY`` seconds of sleep."""

    def __init__(self, threshold: float = 0.02) -> None:
        self.threshold = threshold

    def __call__(
        self, spec: ReleaseSpec, result: FlowResult, *, rng: PrivacyRNG, ledger: Ledger
    ) -> RunEvaluation:
        time.sleep(float(os.environ.get("SWEEP_STANDIN_DELAY", "0")))
        n = len(result.original)
        one_way = max(
            float(
                np.abs(
                    result.original[c]
                    .value_counts(normalize=True)
                    .sub(result.candidate[c].value_counts(normalize=True), fill_value=0)
                ).max()
            )
            for c in result.original.columns
        )
        gap = max(
            abs(float(result.original[c].mean()) - float(result.candidate[c].mean()))
            / max(int(result.original[c].max()) + 1, 1)
            for c in result.original.columns
        )
        out = []
        for name, value, threshold in (
            ("one_way_max_abs_error", one_way, self.threshold),
            ("mean_code_gap", gap, 0.05),
        ):
            noisy = float(rng.laplace(np.array([value]), sensitivity=1 / n, epsilon=0.1)[0])
            out.append(
                CriterionOutcome(
                    name=name,
                    value=value,
                    threshold=threshold,
                    passed_exact=value < threshold,
                    passed_dp=noisy < threshold,
                    noisy_value=noisy,
                )
            )
        return RunEvaluation(criteria=tuple(out))


def tiny_spec_file(directory: Path, *, theta: tuple[int, ...] = (4, 16), min_count=(2,)) -> Path:
    """births.yaml with one transformation per column except mother_age (a, b, c)."""
    raw = yaml.safe_load((REPO / "configs" / "births-2024.yaml").read_text())
    # No public sample: the sweep's noise check stays instant (loading 167K rows in a
    # worker made the killed-worker test's kill land while the check still ran).
    raw.pop("public_sample", None)
    for name, col in raw["columns"].items():
        if name != "mother_age":
            col["transformations"] = {"a": col["transformations"]["a"]}
    raw["space"] = {
        "min_count": list(min_count),
        "models": [
            {
                "model": "privbayes",
                "grid": {"flavor": "theta", "epsilon_split": [0.25, 0.5], "theta": list(theta)},
            }
        ],
    }
    path = directory / "tiny.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def small_data_file(directory: Path, rows: int = 1500) -> Path:
    """The first ``rows`` rows of the NVSS 10K sample."""
    path = directory / f"nvss_{rows}.csv"
    pd.read_csv(NVSS_10K, nrows=rows).to_csv(path, index=False)
    return path


@dataclass
class Swept:
    spec: ReleaseSpec
    data: Path
    store: Path
    summary: SweepSummary


class FailingEvaluator(StandInEvaluator):
    """The stand-in, except that one configuration's runs raise MemoryError."""

    def __init__(self, bad_id: str) -> None:
        super().__init__()
        self.bad_id = bad_id

    def __call__(
        self, spec: ReleaseSpec, result: FlowResult, *, rng: PrivacyRNG, ledger: Ledger
    ) -> RunEvaluation:
        if result.configuration.id == self.bad_id:
            raise MemoryError("simulated: the configuration does not fit in memory")
        return super().__call__(spec, result, rng=rng, ledger=ledger)


class DyingEvaluator(StandInEvaluator):
    """The stand-in, except that one configuration's run kills its worker process (as the
    kernel's out-of-memory killer would); by default the one ``SWEEP_STANDIN_DIE`` names."""

    def __init__(self, bad_id: str | None = None) -> None:
        super().__init__()
        self.bad_id = bad_id or os.environ.get("SWEEP_STANDIN_DIE", "")

    def __call__(
        self, spec: ReleaseSpec, result: FlowResult, *, rng: PrivacyRNG, ledger: Ledger
    ) -> RunEvaluation:
        if result.configuration.id == self.bad_id:
            os._exit(137)
        return super().__call__(spec, result, rng=rng, ledger=ledger)


class CrashingEvaluator(FailingEvaluator):
    """:class:`FailingEvaluator` for the CLI: the configuration ``SWEEP_STANDIN_CRASH`` names
    raises MemoryError (the run is stored as crashed; the sweep goes on)."""

    def __init__(self) -> None:
        super().__init__(os.environ.get("SWEEP_STANDIN_CRASH", ""))

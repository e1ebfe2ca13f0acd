"""One flow (SPEC sec. 1): transform -> fit -> sample and filter -> project.

:func:`run_flow` is pure library code: it takes cleaned data, a configuration, a ledger
and a :class:`~synthflow.rng.PrivacyRNG`, and returns a :class:`FlowResult`.
:func:`write_candidate` persists a result; the CLI only wires the two.
"""

from __future__ import annotations

import json
import logging
import math
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthflow import __version__
from synthflow._progress import tqdm
from synthflow.config.model import ReleaseSpec
from synthflow.data import CleaningReport
from synthflow.errors import ConfigError, InfeasibleConfigurationError, NotEnoughRowsError
from synthflow.filtering import binned_violations
from synthflow.generators import REGISTRY, Generator, make_generator
from synthflow.generators.registry import check_public_only
from synthflow.kanon import project
from synthflow.ledger import Ledger
from synthflow.rng import PrivacyRNG
from synthflow.space import Configuration
from synthflow.transform import Transformer

__all__ = ["FlowResult", "check_configurations", "run_flow", "sample_valid", "write_candidate"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, kw_only=True)
class FlowResult:
    """A release candidate (codes) and what it took to make it."""

    def __repr__(self) -> str:  # never the data: ``original`` is private
        return (
            f"FlowResult(configuration={self.configuration.id!r}, rows={len(self.candidate)}, "
            f"rows_filtered={self.rows_filtered}, projection_rows={self.projection_rows})"
        )

    configuration: Configuration
    transformer: Transformer
    original: pd.DataFrame
    """Transformed original D_T (private: never written by :func:`write_candidate`)."""
    candidate: pd.DataFrame
    """Release candidate D_R (codes), exactly ``len(original)`` rows."""
    timings: dict[str, float] = field(default_factory=dict)
    rows_filtered: int = 0
    """Sampled rows dropped by the synthetic constraints (a statistic of public data)."""
    sampling_rounds: int = 0
    projection_rows: int = 0
    """Rows the min-count projection replaced by copies of other records (public)."""


def sample_valid(
    generator: Generator,
    n: int,
    *,
    transformer: Transformer,
    spec: ReleaseSpec,
    rng: np.random.Generator,
    progress: Callable[[int], None] | None = None,
) -> tuple[pd.DataFrame, int, int]:
    """Sample until exactly ``n`` rows satisfy the synthetic constraints.

    The first round draws exactly ``n`` rows: a generator whose model gives the
    implausible cells no mass (``workload``'s structural zeros) is done in one round,
    and its sample keeps the sampler's own low-variance structure (a random subset of a
    larger systematic sample would add back sampling noise). Each later round draws
    ``oversample`` times the rows still missing.

    Returns:
        The rows, the number of rows dropped, and the number of rounds used.

    Raises:
        NotEnoughRowsError: After ``spec.sampling.max_rounds`` rounds.
    """
    parts: list[pd.DataFrame] = []
    need, dropped = n, 0
    for rounds in range(1, spec.sampling.max_rounds + 1):
        factor = spec.sampling.oversample if rounds > 1 else 1.0
        batch = generator.sample(max(math.ceil(need * factor), 1), rng=rng)
        bad = binned_violations(batch, spec.synthetic_constraints, transformer)
        dropped += int(bad.sum())
        good = batch.loc[~bad].iloc[:need]
        parts.append(good)
        need -= len(good)
        if progress:
            progress(len(good))
        if need == 0:
            return pd.concat(parts, ignore_index=True), dropped, rounds
    raise NotEnoughRowsError(
        f"after {spec.sampling.max_rounds} sampling rounds {need} of {n} rows still violate the "
        "synthetic constraints; the generator puts too much mass on implausible rows: raise "
        "sampling.max_rounds or sampling.oversample in the spec, or choose another configuration"
    )


def check_configurations(
    spec: ReleaseSpec, configurations: list[Configuration] | tuple[Configuration, ...], n: int
) -> None:
    """Pre-flight: every configuration can run on ``n`` rows (public facts only).

    Checks, before anything is charged, what would otherwise fail after a charge: the
    projection's ``min_count`` against n, and each generator's own limits on the public
    domain (a dense cube, a graphical model's size). Spends nothing, reads no data.

    Raises:
        InfeasibleConfigurationError: Listing every configuration that cannot run, why,
            and what to change.
    """
    problems: list[str] = []
    for cfg in configurations:
        if n < cfg.min_count:
            problems.append(f"{cfg.id}: {n} rows are fewer than min_count {cfg.min_count}")
            continue
        transformer = Transformer(spec, cfg.transformations)
        generator = make_generator(
            cfg.model,
            cfg.hyperparameters,
            epsilon=spec.privacy.generator_epsilon,
            transformer=transformer,
        )
        try:
            generator.check_feasible(transformer.domain, n)
        except InfeasibleConfigurationError as exc:
            problems.append(f"{cfg.id}: {exc}")
    if problems:
        shown = "\n  ".join(problems[:5])
        more = f"\n  ... and {len(problems) - 5} more" if len(problems) > 5 else ""
        raise InfeasibleConfigurationError(
            f"{len(problems)} of {len(configurations)} configuration(s) cannot run (checked "
            f"before any budget is spent):\n  {shown}{more}\nDrop them from the candidates "
            "(or the space), or change the spec as each message says"
        )


def run_flow(
    spec: ReleaseSpec,
    configuration: Configuration,
    raw: pd.DataFrame,
    *,
    ledger: Ledger,
    rng: PrivacyRNG,
    public: bool = False,
    show_progress: bool = True,
) -> FlowResult:
    """Run one flow on cleaned raw data and return the release candidate.

    Charges the ledger the generator budget ``spec.privacy.generator_epsilon`` (inside
    the generator's ``fit``, before anything is released).

    Args:
        spec: The release spec.
        configuration: The configuration to run.
        raw: Cleaned raw release columns (:func:`synthflow.data.load_data`).
        ledger: Charged the generator budget before anything is released.
        rng: Privacy-critical randomness (secure unless the data are public).
        public: Whether the data are declared public; generators that cannot be made
            private (``requires_public_data``) refuse to run otherwise.
        show_progress: Show progress bars.

    Raises:
        ConfigError: If the configuration's model is not registered, or needs public
            data and the data are not declared public.
        BudgetExceededError: If the ledger cannot afford the generator budget.
        NotEnoughRowsError: If rejection sampling does not converge.
    """
    if configuration.model not in REGISTRY:
        raise ConfigError(
            f"model {configuration.model!r} is not registered; available: {sorted(REGISTRY)}"
        )
    check_public_only((configuration.model,), public=public)
    timings: dict[str, float] = {}
    steps = tqdm(
        total=4,
        desc=f"flow {configuration.id}",
        unit="step",
        disable=not show_progress,
        leave=False,
    )
    t0 = time.perf_counter()
    transformer = Transformer(spec, configuration.transformations)
    original = transformer.forward(raw)
    n = len(original)
    timings["transform_s"] = time.perf_counter() - t0
    if n < configuration.min_count:  # n is public: refuse before anything is charged
        raise InfeasibleConfigurationError(
            f"{n} rows cannot be projected so that every record appears at least "
            f"{configuration.min_count} times (min_count); give more rows or a configuration "
            "with a smaller min_count"
        )
    steps.update()

    t0 = time.perf_counter()
    generator = make_generator(
        configuration.model,
        configuration.hyperparameters,
        epsilon=spec.privacy.generator_epsilon,
        transformer=transformer,
    )
    generator.check_feasible(transformer.domain, n)  # public; before the fit's charge
    generator.fit(original, domain=transformer.domain, ledger=ledger, rng=rng)
    timings["fit_s"] = time.perf_counter() - t0
    steps.update()

    t0 = time.perf_counter()
    post = rng.generator()
    with tqdm(total=n, desc="sample", unit="row", disable=not show_progress, leave=False) as bar:
        sampled, dropped, rounds = sample_valid(
            generator, n, transformer=transformer, spec=spec, rng=post, progress=bar.update
        )
    timings["sample_filter_s"] = time.perf_counter() - t0
    steps.update()

    t0 = time.perf_counter()
    candidate, projected = project(sampled, transformer.domain.sizes, configuration.min_count, post)
    timings["project_s"] = time.perf_counter() - t0
    steps.update()
    steps.close()
    return FlowResult(
        configuration=configuration,
        transformer=transformer,
        original=original,
        candidate=candidate,
        timings=timings,
        rows_filtered=dropped,
        sampling_rounds=rounds,
        projection_rows=projected,
    )


def _atomic_write(path: Path, writer: Callable[[Path], None]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    writer(tmp)
    os.replace(tmp, path)


def _write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def write_candidate(
    result: FlowResult,
    out_dir: Path,
    *,
    spec: ReleaseSpec,
    ledger: Ledger,
    rng: PrivacyRNG,
    cleaning: CleaningReport,
    data_path: str,
) -> Path:
    """Write ``candidate.csv`` (bin labels) and ``run.json`` into ``out_dir``.

    The ledger writes ``ledger.jsonl`` itself as it is charged. Files are written
    atomically (temporary file, then rename).

    Returns:
        The path of ``candidate.csv``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / "candidate.csv"
    _atomic_write(csv_path, lambda p: result.transformer.write_labels_csv(result.candidate, p))
    meta: dict[str, Any] = {
        "synthflow_version": __version__,
        "python": platform.python_version(),
        "spec": {"name": spec.name, "path": spec.path, "sha256": spec.sha256},
        "data": data_path,
        "configuration": result.configuration.to_json(),
        "rows": len(result.candidate),
        "rows_filtered": result.rows_filtered,
        "sampling_rounds": result.sampling_rounds,
        "projection_rows": result.projection_rows,
        "timings_s": {k: round(v, 4) for k, v in result.timings.items()},
        "randomness": rng.describe(),
        "cleaning": cleaning.to_json(),
        "privacy": ledger.summary(),
    }
    text = json.dumps(meta, indent=2) + "\n"
    _atomic_write(out_dir / "run.json", lambda p: _write_text(p, text))
    return csv_path

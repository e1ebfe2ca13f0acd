"""One flow (SPEC sec. 1): transform -> fit -> sample and filter -> project.

:func:`run_flow` is pure library code: it takes cleaned data, a configuration, a ledger
and a :class:`~synthflow.privacy.rng.PrivacyRNG`, and returns a :class:`FlowResult`.
:func:`write_candidate` persists a result; the CLI only wires the two.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from synthflow._util.progress import tqdm
from synthflow.config.model import ReleaseSpec
from synthflow.errors import ConfigError, InfeasibleConfigurationError, NotEnoughRowsError
from synthflow.filtering import binned_violations
from synthflow.generators import REGISTRY, Generator, make_generator
from synthflow.generators.registry import check_public_only
from synthflow.kanon import min_count_problem, project
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.space import Configuration
from synthflow.transform import Transformer

__all__ = [
    "FlowResult",
    "check_configurations",
    "draw_candidate",
    "fit_generator",
    "run_flow",
    "sample_valid",
]

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
        rows = min_count_problem(n, cfg.min_count)
        if rows:
            problems.append(f"{cfg.id}: {rows}")
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
    # Long: the flow's steps (transform, fit, sample, filter, project) with their timings.
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
    steps.update()

    t0 = time.perf_counter()
    generator = fit_generator(spec, configuration, transformer, original, ledger=ledger, rng=rng)
    timings["fit_s"] = time.perf_counter() - t0
    steps.update()

    with tqdm(total=n, desc="sample", unit="row", disable=not show_progress, leave=False) as bar:
        candidate, dropped, rounds, projected = draw_candidate(
            generator, n, spec=spec, configuration=configuration, transformer=transformer,
            rng=rng, progress=bar.update, timings=timings,
        )  # fmt: skip
    steps.update(2)
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


def fit_generator(
    spec: ReleaseSpec,
    configuration: Configuration,
    transformer: Transformer,
    original: pd.DataFrame,
    *,
    ledger: Ledger,
    rng: PrivacyRNG,
) -> Generator:
    """The flow's fit: refuse what cannot run (public facts), then fit, charging ``ledger``.

    ``original`` holds the codes (``transformer.forward``). The flow and
    :class:`synthflow.Synthesizer` both fit through here.

    Raises:
        InfeasibleConfigurationError: Fewer rows than ``min_count``, or a model the
            generator cannot build on this public domain (before any charge).
        BudgetExceededError: If the ledger cannot afford the generator budget.
    """
    n = len(original)
    rows = min_count_problem(n, configuration.min_count)
    if rows:  # n is public: refuse before anything is charged
        raise InfeasibleConfigurationError(rows)
    generator = make_generator(
        configuration.model,
        configuration.hyperparameters,
        epsilon=spec.privacy.generator_epsilon,
        transformer=transformer,
    )
    generator.check_feasible(transformer.domain, n)  # public; before the fit's charge
    generator.fit(original, domain=transformer.domain, ledger=ledger, rng=rng)
    return generator


def draw_candidate(
    generator: Generator,
    n: int,
    *,
    spec: ReleaseSpec,
    configuration: Configuration,
    transformer: Transformer,
    rng: PrivacyRNG,
    progress: Callable[[int], None] | None = None,
    timings: dict[str, float] | None = None,
) -> tuple[pd.DataFrame, int, int, int]:
    """The flow's draw (post-processing): sample, filter, project to ``min_count``.

    Returns the candidate's codes, the rows filtered, the sampling rounds and the rows
    the projection added. The flow and :meth:`synthflow.Synthesizer.sample` both draw
    through here.
    """
    t0 = time.perf_counter()
    post = rng.generator()
    sampled, dropped, rounds = sample_valid(
        generator, n, transformer=transformer, spec=spec, rng=post, progress=progress
    )
    t1 = time.perf_counter()
    candidate, projected = project(sampled, transformer.domain.sizes, configuration.min_count, post)
    if timings is not None:
        timings["sample_filter_s"] = t1 - t0
        timings["project_s"] = time.perf_counter() - t1
    return candidate, dropped, rounds, projected

"""Acceptance probability per configuration (Wilson interval) and the shortlist file.

The candidate set of private selection (SPEC sec. 8) is the configurations whose
estimated pass probability on public data is at least ``min_pass`` (the release: 10%).
The estimate is the share of stored runs that passed; the Wilson score interval
(Wilson 1927) says how sure it is.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from synthflow.candidates import write_candidates
from synthflow.errors import ConfigError
from synthflow.sweep.store import SweepStore

__all__ = [
    "PassEstimate",
    "estimate",
    "store_generator_epsilon",
    "thin_evidence",
    "wilson_interval",
    "write_shortlist",
]


def wilson_interval(passes: int, runs: int, *, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    >>> tuple(round(x, 4) for x in wilson_interval(2, 10))
    (0.0567, 0.5098)

    Raises:
        ValueError: If ``runs`` < 1 or ``passes`` is not in [0, runs].
    """
    if runs < 1:
        raise ValueError(f"runs ({runs}) must be at least 1")
    if not 0 <= passes <= runs:
        raise ValueError(f"passes ({passes}) must be in [0, runs={runs}]")
    from scipy.stats import binomtest, norm  # noqa: PLC0415

    level = 2.0 * float(norm.cdf(z)) - 1.0  # z = 1.96 -> 95%
    ci = binomtest(passes, runs).proportion_ci(confidence_level=level, method="wilson")
    return max(0.0, float(ci.low)), min(1.0, float(ci.high))


@dataclass(frozen=True, kw_only=True)
class PassEstimate:
    """Estimated acceptance probability of one configuration."""

    config_id: str
    configuration: dict[str, Any]
    generator_epsilon: float
    """Generator budget the runs were made at."""
    runs: int
    passes: int
    low: float
    high: float

    @property
    def p(self) -> float:
        """Share of runs that passed."""
        return self.passes / self.runs

    @property
    def expected_attempts(self) -> float:
        """Expected flows until one passes (1/p) if selection drew only this one."""
        return math.inf if self.passes == 0 else 1 / self.p

    def to_json(self) -> dict[str, Any]:
        """Entry of the shortlist file."""
        return {
            **self.configuration,
            "generator_epsilon": self.generator_epsilon,
            "runs": self.runs,
            "passes": self.passes,
            "pass_rate": round(self.p, 6),
            "wilson_low": round(self.low, 6),
            "wilson_high": round(self.high, 6),
            "expected_attempts": None if self.passes == 0 else round(self.expected_attempts, 3),
        }


THIN_RUNS = 10
"""Fewer runs per configuration than this make a pass rate thin evidence."""
THIN_WIDTH = 0.3
"""A 95% Wilson interval wider than this makes a pass rate thin evidence."""


def thin_evidence(estimates: list[PassEstimate]) -> str | None:
    """A headline warning when the pass rates rest on too few runs to be trusted.

    None when every configuration has at least :data:`THIN_RUNS` runs and a Wilson
    interval at most :data:`THIN_WIDTH` wide. Otherwise the run counts and the widest
    interval, with what the expected number of attempts could then be.

    >>> e = PassEstimate(config_id="c", configuration={}, generator_epsilon=1.0, runs=1,
    ...                  passes=1, low=0.21, high=1.0)
    >>> print(thin_evidence([e]))  # doctest: +ELLIPSIS
    THIN EVIDENCE: 1 run per configuration; c passed 1 of 1: ... [0.21, 1.00]...4.8. ...
    """
    if not estimates:
        return None
    fewest, most = min(e.runs for e in estimates), max(e.runs for e in estimates)
    widest = max(estimates, key=lambda e: (e.high - e.low, e.config_id))
    if fewest >= THIN_RUNS and widest.high - widest.low <= THIN_WIDTH:
        return None
    runs = f"{fewest}" if fewest == most else f"{fewest} to {most}"
    slow = "never (it may not pass at all)" if widest.low == 0 else f"{1 / widest.low:.1f}"
    # More than the sweep already ran: at least THIN_RUNS, else twice as many (#61 item 9:
    # a sweep of 10 repeats was told to sweep 10 repeats).
    more = THIN_RUNS if fewest < THIN_RUNS else 2 * fewest
    return (
        f"THIN EVIDENCE: {runs} run{'s' if most > 1 else ''} per configuration; "
        f"{widest.config_id} passed {widest.passes} of {widest.runs}: its 95% Wilson "
        f"interval is [{widest.low:.2f}, {widest.high:.2f}], so its expected attempts lie "
        f"between {1 / widest.high:.1f} and {slow}. Sweep more repeats (--repeats "
        f"{more}) before trusting pass rates, shortlists or plans made from them."
    )


def estimate(
    store: str | Path, *, basis: Literal["dp", "exact"] = "dp", z: float = 1.96
) -> list[PassEstimate]:
    """Pass estimates of every configuration with stored runs, best first.

    Args:
        store: Sweep store.
        basis: ``dp``: decision with release noise; ``exact``: without noise.
        z: Normal quantile of the Wilson interval.

    Raises:
        StoreError: If the store is missing, corrupt or foreign.
    """
    with SweepStore.open_existing(store) as db:
        runs = db.runs()
        configs = db.configurations()
    column = "passed_dp" if basis == "dp" else "passed_exact"
    out = []
    for (cid, eps), group in runs.groupby(["config_id", "generator_epsilon"], sort=True):
        k, n = int(group[column].sum()), len(group)
        low, high = wilson_interval(k, n, z=z)
        out.append(
            PassEstimate(
                config_id=str(cid),
                configuration=configs[str(cid)],
                generator_epsilon=float(eps),
                runs=n,
                passes=k,
                low=low,
                high=high,
            )
        )
    out.sort(key=lambda e: (-e.p, -e.low, e.config_id, e.generator_epsilon))
    return out


def store_generator_epsilon(store: str | Path, wanted: float | None = None) -> float:
    """The generator budget a shortlist of ``store`` is for.

    Default: the spec's own (recorded when the store was made). A store that swept
    several budgets needs one chosen; the release spec must then carry it.

    Raises:
        ConfigError: If ``wanted`` was not swept, or the default cannot be told.
    """
    with SweepStore.open_existing(store) as db:
        swept = sorted(set(db.runs()["generator_epsilon"].astype(float)))
        own = db.meta().get("spec_generator_epsilon")
    if wanted is None:
        if own is not None:
            return float(own)
        if len(swept) == 1:
            return swept[0]
        raise ConfigError(f"the store swept generator epsilons {swept}: pick one")
    if float(wanted) not in swept:
        raise ConfigError(
            f"--generator-epsilon {wanted:g} was not swept in this store (it has {swept})"
        )
    return float(wanted)


def write_shortlist(
    store: str | Path,
    estimates: list[PassEstimate],
    out: Path,
    *,
    min_pass: float,
    basis: str,
    z: float = 1.96,
    generator_epsilon: float | None = None,
) -> Path:
    """Write the configurations with estimate >= ``min_pass`` as YAML (atomically).

    The file records the spec and public-data hashes of the store, so that selection
    can check it runs on the spec the estimates were made for, and the generator
    budget of the runs (``generator_epsilon``: default the spec's), which selection
    checks against the spec it is given.

    Raises:
        ConfigError: If ``min_pass`` is not in [0, 1].
    """
    if not 0 <= min_pass <= 1:
        raise ConfigError(f"--min-pass ({min_pass}) must be in [0, 1]")
    with SweepStore.open_existing(store) as db:
        meta = db.meta()
    eps = store_generator_epsilon(store, generator_epsilon)
    kept = [e for e in estimates if e.p >= min_pass and e.generator_epsilon == eps]
    header = {
        "spec_sha256": meta["spec_sha256"],
        "public_data_sha256": meta["data_sha256"],
        "seed": int(meta["seed"]),
        "store": str(store),
        "min_pass": min_pass,
        "basis": basis,
        "estimator": f"share of passing runs; Wilson score interval with z = {z}",
        "configurations_screened": sum(e.generator_epsilon == eps for e in estimates),
        "generator_epsilon": eps,
    }
    write_candidates(
        out,
        header=header,
        configurations=[json.loads(json.dumps(e.to_json(), default=str)) for e in kept],
    )
    return out

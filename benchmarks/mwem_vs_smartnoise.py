"""Our vectorised MWEM against smartnoise-synth's ``MWEMSynthesizer`` (issue 4).

Both run on the public NVSS 10K sample, cleaned with ``load_data(..., public=True)`` and
binned with the release binning (``mother_age`` alternative b): integer codes on the
public domain (12, 10, 5, 6, 2, 32), 230,400 cells. Each generator is fitted at epsilon
4 (and 1), samples n rows, and is scored by the *exact* ``marginal_max_abs_error`` (max
abs difference of normalised counts over all 63 column subsets) against the original
codes; the table gives mean +- sd over ``--seeds`` fits.

Comparable settings. smartnoise runs with ``split_factor=6`` (one histogram over the
full cube, as ours), ``iterations=T``, ``mult_weights_iterations=M`` and ``q_count=Q``
*cuboids* (whole 1- to 3-way marginals; each measured cuboid is every slice of it, and
the 41 cuboids of width <= 3 are the largest distinct workload); ours runs with
``num_iterations=T``, ``num_inner_updates=M`` and ``num_query`` single range counts of
1 to 3 columns. The two workloads differ in kind (a cuboid is up to 3,840 counts), so
``num_query`` is not matched to ``q_count``; T and M are. smartnoise's multiplicative
weights loop over every measured slice in Python on the full cube, which is what makes
it slow, so T and M are kept small enough for a fit in about a minute or two.

Public domain (trap 3). smartnoise gets a ``TableTransformer`` fitted on a public frame
holding every code (``synthflow.generators._smartnoise.public_transformer``), never
inferred from data. Its ``MWEMSynthesizer`` would *still* size each histogram axis from
the min and max of the data (``_histogram_from_data_attributes``), which leaks whether
edge codes occur and drops their cells; :class:`PublicDomainMWEM` overrides that method
to build the histogram on the public sizes.

Randomness (trap 5). smartnoise draws its selection, slice choice and Laplace noise from
numpy's and Python's global generators (and opendp): it cannot be seeded and we do not
seed it (no ``np.random.seed``). Its repeats are therefore not reproducible; the sd
column shows their spread. Sampling from its fitted histogram is done here with our own
seeded numpy ``Generator`` (i.i.d. draws from the normalised histogram, the same
distribution as smartnoise's ``sample``, which loops ``np.random.choice`` per row). Ours
is seeded through :class:`~synthflow.privacy.rng.PrivacyRNG`.

Measured (9,898 rows, 2 CPU cores, 3 seeds; fit seconds mean, error mean +- sd)::

    epsilon  generator                        fit s   marginal error
          4  ours T=8 M=2 Q=512                 0.1   0.0493 +- 0.0072
          4  smartnoise T=8 M=2 q=41           12.8   0.1206 +- 0.0162
          4  ours sweep T=1000 M=25 Q=1024     12.5   0.1811 +- 0.0431
          1  ours T=8 M=2 Q=512                 0.1   0.0494 +- 0.0109
          1  smartnoise T=8 M=2 q=41           19.7   0.1078 +- 0.0164
          1  ours sweep T=1000 M=25 Q=1024     13.9   0.4870 +- 0.2132

Run (from the repository root; reads ../shared/public_data)::

    python benchmarks/mwem_vs_smartnoise.py                 # epsilon 4 and 1, 3 seeds
    python benchmarks/mwem_vs_smartnoise.py --epsilons 4 --seeds 2 --no-sweep
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthflow.criteria.marginals import marginal_max_abs_error
from synthflow.data import load_data
from synthflow.generators._smartnoise import public_transformer
from synthflow.generators.mwem import MWEM, MWEMHyperparameters
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Domain, Transformer

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_10k.csv"
SPEC = REPO / "configs" / "births.yaml"
LETTERS = {"mother_age": "b"}
EXPECTED_SIZES = (12, 10, 5, 6, 2, 32)


@dataclass(frozen=True)
class SmallSettings:
    """The small settings both generators share (smartnoise finishes in ~1-2 min)."""

    iterations: int = 8
    """smartnoise ``iterations`` / our ``num_iterations``."""
    inner: int = 2
    """smartnoise ``mult_weights_iterations`` / our ``num_inner_updates``."""
    q_count: int = 41
    """smartnoise ``q_count`` (cuboids; 41 = every 1- to 3-way marginal)."""
    num_query: int = 512
    """Our ``num_query`` (single range counts; our default)."""


SWEEP = MWEMHyperparameters(num_query=1024, num_iterations=1000, num_inner_updates=25)


def load_codes(path: Path = DATA) -> tuple[pd.DataFrame, Domain]:
    """The public sample as release codes, and the public domain."""
    spec = load_spec(SPEC)
    raw = load_data(path, spec, public=True).frame
    transformer = Transformer(spec, LETTERS)
    codes = transformer.forward(raw)
    if tuple(transformer.domain.sizes) != EXPECTED_SIZES:
        raise RuntimeError(f"unexpected domain sizes {transformer.domain.sizes}")
    return codes, transformer.domain


def public_domain_mwem_class() -> type:
    """smartnoise's ``MWEMSynthesizer`` with histograms sized by the public domain."""
    from snsynth.mwem import Histogram, MWEMSynthesizer  # noqa: PLC0415

    class PublicDomainMWEM(MWEMSynthesizer):
        """Builds each split's histogram on ``sizes`` (public), not the data's min/max."""

        def __init__(self, *args: Any, sizes: tuple[int, ...], **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.public_sizes = sizes

        def _histogram_from_data_attributes(self, data: np.ndarray, splits: Any = ()) -> list:
            histograms = []
            for split in splits:
                dims = [int(self.public_sizes[c]) for c in split]
                for c in split:
                    self.mins_maxes[str(c)] = (0, int(self.public_sizes[c]) - 1)
                    self.scale[str(c)] = 1
                edges = [np.arange(s + 1) - 0.5 for s in dims]
                hist, bins = np.histogramdd(data[:, split], bins=edges)
                histograms.append(Histogram(hist, dims, bins, split))
            return histograms

    return PublicDomainMWEM


def fit_smartnoise(
    codes: pd.DataFrame, domain: Domain, epsilon: float, s: SmallSettings
) -> np.ndarray:
    """Fit smartnoise MWEM on the public domain; returns its normalised joint cube."""
    cls = public_domain_mwem_class()
    synth = cls(
        epsilon=epsilon,
        q_count=s.q_count,
        iterations=s.iterations,
        mult_weights_iterations=s.inner,
        split_factor=len(domain.sizes),  # one split: the full cube, as ours
        marginal_width=3,
        sizes=tuple(domain.sizes),
    )
    rows = [tuple(int(v) for v in r) for r in codes.itertuples(index=False)]
    synth.fit(rows, transformer=public_transformer(domain), preprocessor_eps=0.0)
    ((fake, _, split),) = synth.synthetic_histograms
    if list(split) != list(range(len(domain.sizes))):
        raise RuntimeError(f"unexpected split {split}")
    # The public transformer's labels are the codes themselves (0..size-1, in order).
    joint = np.clip(np.asarray(fake, dtype=float), 0.0, None)
    return joint / joint.sum()


def sample_joint(joint: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` i.i.d. rows of codes from a normalised joint cube."""
    flat = rng.choice(joint.size, size=n, p=joint.ravel())
    return np.stack(np.unravel_index(flat, joint.shape), axis=1)


def run_ours(
    codes: pd.DataFrame, domain: Domain, epsilon: float, hp: MWEMHyperparameters, seed: int
) -> tuple[float, float]:
    """(fit seconds, marginal error) of one fit of our MWEM."""
    gen = MWEM(hp, epsilon=epsilon)
    start = time.perf_counter()
    gen.fit(
        codes,
        domain=domain,
        ledger=Ledger(total_epsilon=epsilon, total_delta=0.0),
        rng=PrivacyRNG.from_seed(seed),
    )
    seconds = time.perf_counter() - start
    sample = gen.sample(len(codes), rng=np.random.default_rng(seed + 10_000))
    err = marginal_max_abs_error(codes.to_numpy(), sample.to_numpy(), domain.sizes)
    return seconds, err


def run_smartnoise(
    codes: pd.DataFrame, domain: Domain, epsilon: float, s: SmallSettings, seed: int
) -> tuple[float, float]:
    """(fit seconds, marginal error) of one (unseedable) smartnoise fit."""
    start = time.perf_counter()
    joint = fit_smartnoise(codes, domain, epsilon, s)
    seconds = time.perf_counter() - start
    sample = sample_joint(joint, len(codes), np.random.default_rng(seed + 10_000))
    err = marginal_max_abs_error(codes.to_numpy(), sample, domain.sizes)
    return seconds, err


def summarise(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.4f} +- {sd:.4f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--epsilons", default="4,1")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=SmallSettings.iterations)
    parser.add_argument("--inner", type=int, default=SmallSettings.inner)
    parser.add_argument("--q-count", type=int, default=SmallSettings.q_count)
    parser.add_argument("--num-query", type=int, default=SmallSettings.num_query)
    parser.add_argument("--no-sweep", action="store_true", help="skip ours at sweep settings")
    parser.add_argument("--no-smartnoise", action="store_true")
    args = parser.parse_args()
    s = SmallSettings(args.iterations, args.inner, args.q_count, args.num_query)
    codes, domain = load_codes(args.data)
    small = MWEMHyperparameters(
        num_query=s.num_query, num_iterations=s.iterations, num_inner_updates=s.inner
    )
    print(f"rows {len(codes)}, domain {domain.sizes} ({domain.cells} cells), seeds {args.seeds}")
    print(
        f"small settings: T={s.iterations} inner={s.inner}; smartnoise q_count={s.q_count} "
        f"cuboids (width <= 3), split_factor=6; ours num_query={s.num_query}"
    )
    print("smartnoise's fit noise is unseedable (global numpy/Python RNG, opendp)")
    header = f"{'epsilon':>7}  {'generator':<40} {'fit s (mean)':>12}  marginal error mean +- sd"
    print(header)
    print("-" * len(header))
    for epsilon in (float(e) for e in args.epsilons.split(",")):
        runs: list[tuple[str, Any]] = [
            (f"ours T={s.iterations} M={s.inner} Q={s.num_query}", "ours-small")
        ]
        if not args.no_smartnoise:
            runs.append((f"smartnoise T={s.iterations} M={s.inner} q={s.q_count}", "smartnoise"))
        if not args.no_sweep:
            runs.append(("ours sweep T=1000 M=25 Q=1024", "ours-sweep"))
        for label, kind in runs:
            times, errs = [], []
            for seed in range(args.seeds):
                if kind == "smartnoise":
                    t, e = run_smartnoise(codes, domain, epsilon, s, seed)
                else:
                    hp = small if kind == "ours-small" else SWEEP
                    t, e = run_ours(codes, domain, epsilon, hp, seed)
                times.append(t)
                errs.append(e)
            print(
                f"{epsilon:>7g}  {label:<40} {statistics.fmean(times):>12.1f}  "
                f"{summarise(errs)}  [{', '.join(f'{e:.4f}' for e in errs)}]",
                flush=True,
            )


if __name__ == "__main__":
    main()

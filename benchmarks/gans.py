"""The GANs at 10K rows on the marginal criterion, with and without the 2-way tuning.

Side by side on each 10K sample (the shared 10K file, and fresh samples of the 160K file
drawn with ``--samples`` seeds), births spec, generator epsilon 4, all bins ``a``,
min_count 2 (the grid's PATECTGAN and DPCTGAN points with noise multiplier 5):

* **independent columns**: each column of the real rows shuffled on its own (the exact
  1-way marginals, no joint structure); the bar #18 asks the GANs to beat;
* each GAN **without tuning** (``pair_share`` 0: 1-way marginals, raking, training gets
  the rest) and **with** it (the default shares: 0.2 on the 1-way marginals, 0.3 on
  the 2-way tables the trained generator is tuned to, 0.5 training).

The figure is the exact max error over all 63 marginals between the transformed real
rows and the release candidate (``synthflow run``'s flow: fit, sample, filter, project),
mean and range over ``--fits`` seeded fits on public data. A PATECTGAN fit takes
about 25 s on 2 cores, a DPCTGAN fit 4-15 minutes, so DPCTGAN runs only when asked
(``--models patectgan,dpctgan``).

Usage: ``python benchmarks/gans.py [--samples 11,12] [--fits 3] [--models patectgan]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _record import record  # benchmarks/ is on sys.path when a script runs

from synthflow.criteria.marginals import marginal_max_abs_error
from synthflow.data import load_data
from synthflow.flow import run_flow
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.space import Configuration, expand_space
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[1]
PUBLIC = REPO.parent / "shared" / "public_data"


def _samples(seeds: list[int], spec) -> dict[str, pd.DataFrame]:
    out = {"shared 10K": load_data(PUBLIC / "nvss2019_singleton_10k.csv", spec, public=True).frame}
    if seeds:
        big = load_data(PUBLIC / "nvss2019_singleton_160k.csv.gz", spec, public=True).frame
        for s in seeds:
            out[f"160K sample {s}"] = big.sample(10_000, random_state=s).reset_index(drop=True)
    return out


def _independent(spec, cfg: Configuration, raw: pd.DataFrame, fits: int) -> list[float]:
    tr = Transformer(spec, cfg.transformations)
    real = tr.forward(raw).to_numpy()
    out = []
    for seed in range(fits):
        g = np.random.default_rng(seed)
        shuffled = np.column_stack([g.permutation(c) for c in real.T])
        out.append(marginal_max_abs_error(real, shuffled, tr.domain.sizes))
    return out


def _fits(spec, cfg: Configuration, raw: pd.DataFrame, fits: int) -> tuple[list[float], float]:
    errors, t0 = [], time.perf_counter()
    for seed in range(fits):
        ledger = Ledger(total_epsilon=10.0, total_delta=1e-6)
        result = run_flow(spec, cfg, raw, ledger=ledger, rng=PrivacyRNG.from_seed(seed),
                          public=True, show_progress=False)  # fmt: skip
        errors.append(
            marginal_max_abs_error(
                result.original.to_numpy(),
                result.candidate.to_numpy(),
                result.transformer.domain.sizes,
            )
        )
    return errors, (time.perf_counter() - t0) / fits


def _fmt(errors: list[float]) -> str:
    return f"{np.mean(errors):.4f} ({min(errors):.4f}-{max(errors):.4f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", default="11,12", help="seeds of fresh 160K samples")
    parser.add_argument("--fits", type=int, default=3)
    parser.add_argument("--models", default="patectgan")
    args = parser.parse_args()
    spec = load_spec(REPO / "configs" / "births.yaml")
    seeds = [int(s) for s in args.samples.split(",") if s]
    samples = _samples(seeds, spec)
    space = expand_space(spec)
    print(f"max error over all marginals, mean (range) of {args.fits} fits; epsilon 4")
    print(f"{'':38}" + "".join(f"{name:>26}" for name in samples))
    for model in args.models.split(","):
        cfg = next(
            c
            for c in space
            if c.model == model
            and c.hyperparameters["noise_multiplier"] == 5
            and c.min_count == 2
            and set(c.transformations.values()) == {"a"}
            and c.hyperparameters.get("max_per_sample_grad_norm", 1) == 1
            and c.hyperparameters.get("regularization", "none") == "none"
            and c.hyperparameters.get("loss", "cross_entropy") == "cross_entropy"
            and c.hyperparameters["generator_lr"] == 2e-4
            and c.hyperparameters["discriminator_lr"] == 2e-4
        )
        if model == args.models.split(",")[0]:
            row = [_fmt(_independent(spec, cfg, raw, args.fits)) for raw in samples.values()]
            print(f"{'independent columns':38}" + "".join(f"{r:>26}" for r in row))
        for label, shares in (("without tuning", {"pair_share": 0.0}), ("with tuning", {})):
            hp = dict(cfg.hyperparameters) | shares
            variant = dataclasses.replace(cfg, hyperparameters_items=tuple(sorted(hp.items())))
            row, secs = [], []
            for name, raw in samples.items():
                errors, per_fit = _fits(spec, variant, raw, args.fits)
                row.append(_fmt(errors))
                secs.append(per_fit)
                if label == "with tuning":
                    record(
                        f"{model} (noise 5) max marginal error at 10K, {name}, 2-way tuning",
                        f"{_fmt(errors)} over {args.fits} fits, {per_fit:.0f} s a fit",
                    )
            print(f"{cfg.id + ' ' + label:38}" + "".join(f"{r:>26}" for r in row), flush=True)
        print(f"  ({model}: {np.mean(secs):.0f} s a fit)")


if __name__ == "__main__":
    main()

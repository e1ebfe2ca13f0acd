"""How long DPCTGAN takes with the births grid's epochs, at 10K and 160K rows.

For the grid's configuration with noise multiplier 5 (batch 500, 300 epochs, clip 1,
delta 1e-9, generator epsilon 4), the accountant first plans the number of Poisson
steps the budget allows (``DPCTGAN.plan_steps``: 300 epochs are ``300 / q`` steps,
``q = 500 / n``). A full 160K fit is hours on 2 cores, so this script times
``--steps`` real DP-SGD steps (our loop, torch on the CPU, per-row gradients, noise
from the PrivacyRNG) on the public NVSS sample and extrapolates to the planned steps
(the cost of one step depends on the batch, about ``q n = 500`` rows, not on n).

Usage: ``python benchmarks/dpctgan.py [--steps 100] [--threads 2]``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import torch
from _record import record  # benchmarks/ is on sys.path when a script runs

from synthflow.data import load_data
from synthflow.generators import make_generator
from synthflow.generators.dpsgd import train_dpctgan
from synthflow.loader import load_spec
from synthflow.privacy.rng import PrivacyRNG
from synthflow.space import expand_space
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[1]
NVSS = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_160k.csv.gz"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    spec = load_spec(REPO / "configs" / "births.yaml")
    cfg = next(
        c
        for c in expand_space(spec)
        if c.model == "dpctgan"
        and c.hyperparameters["noise_multiplier"] == 5
        and c.hyperparameters["max_per_sample_grad_norm"] == 1
    )
    hp = cfg.hyperparameters
    raw = load_data(NVSS, spec, public=True).frame
    tr = Transformer(spec, cfg.transformations)
    codes = tr.forward(raw)
    domain = tr.domain
    print(f"{cfg.id}: {hp}")
    print(f"{args.threads} torch threads, {os.cpu_count()} cores; {args.steps} steps timed")
    for n in (10_000, len(codes)):
        sample = codes.sample(n=n, random_state=0) if n < len(codes) else codes
        gen = make_generator(cfg.model, hp, epsilon=spec.privacy.generator_epsilon)
        steps, eps = gen.plan_steps(n)
        offsets = np.concatenate([[0], np.cumsum(domain.sizes)[:-1]])
        onehot = np.zeros((n, int(sum(domain.sizes))), dtype=np.float32)
        onehot[np.arange(n)[:, None], sample[list(domain.names)].to_numpy() + offsets] = 1.0
        timed = min(args.steps, steps)
        t0 = time.perf_counter()
        train_dpctgan(
            onehot,
            tuple(domain.sizes),
            steps=timed,
            sample_rate=hp["batch_size"] / n,
            noise_multiplier=hp["noise_multiplier"],
            clip=hp["max_per_sample_grad_norm"],
            loss=hp["loss"],
            embedding_dim=128,
            hidden=256,
            generator_lr=hp["generator_lr"],
            discriminator_lr=hp["discriminator_lr"],
            generator_decay=hp["generator_decay"],
            discriminator_decay=hp["discriminator_decay"],
            generator=PrivacyRNG.from_seed(0).generator(),
        )
        per_step = (time.perf_counter() - t0) / timed
        total = per_step * steps
        epochs = steps * hp["batch_size"] / n
        print(
            f"n = {n:>7,}: {steps:,} steps planned ({epochs:.0f} epochs; accountant epsilon "
            f"{eps:.3g} at delta {hp['delta']:g}), {per_step * 1000:.0f} ms/step -> "
            f"{total / 60:.1f} min ({total / 3600:.2f} h) for the whole fit"
        )
        record(
            f"DPCTGAN fit with the grid's epochs (noise 5, batch 500), {n:,} rows, CPU",
            f"{total / 60:.1f} min extrapolated ({steps:,} steps x {per_step * 1000:.0f} ms, "
            f"{epochs:.0f} epochs)",
        )


if __name__ == "__main__":
    main()

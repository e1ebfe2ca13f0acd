"""Times and peak memory of one PrivBayes flow's stages at 10K and 160K rows.

Run: python benchmarks/flow.py   (reads the public NVSS samples from ../shared/public_data)
"""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

from _record import record  # benchmarks/ is on sys.path when a script runs

from synthflow.data import load_data
from synthflow.flow import sample_valid
from synthflow.generators import make_generator
from synthflow.kanon import project_min_count
from synthflow.loader import load_spec
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.space import match_configuration
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "public_data"
FILES = {
    "10K": DATA / "nvss2019_singleton_10k.csv",
    "160K": DATA / "nvss2019_singleton_160k.csv.gz",
}


def timed(fn):
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, elapsed, peak


def main() -> None:
    spec = load_spec(REPO / "configs" / "births.yaml")
    print(f"{'rows':>6} {'config':<34} {'stage':<14} {'time s':>8} {'peak MiB':>9}")
    for label, path in FILES.items():
        raw = load_data(path, spec, public=True).frame
        for hp in (
            {"flavor": "theta", "epsilon_split": 0.25, "theta": 16},
            {"flavor": "degree", "epsilon_split": 0.5, "degree": 3},
        ):
            cfg = match_configuration(
                spec,
                model="privbayes",
                hyperparameters=hp,
                transformations={"mother_age": "b"},
                min_count=3,
            )
            tr = Transformer(spec, cfg.transformations)
            codes = tr.forward(raw)
            rng = PrivacyRNG.from_seed(0)
            gen = make_generator(cfg.model, cfg.hyperparameters, epsilon=4.0)
            name = f"{hp['flavor']} {hp.get('theta', hp.get('degree'))}"
            stages = []
            _, t, m = timed(
                lambda: gen.fit(codes, domain=tr.domain, ledger=Ledger(total_epsilon=4), rng=rng)
            )
            stages.append(("fit", t, m))
            post = rng.generator()
            (sampled, _, _), t, m = timed(
                lambda: sample_valid(gen, len(codes), transformer=tr, spec=spec, rng=post)
            )
            stages.append(("sample+filter", t, m))
            _, t, m = timed(lambda: project_min_count(sampled, tr.domain.sizes, 3, post))
            stages.append(("projection", t, m))
            for stage, t, m in stages:
                print(f"{label:>6} {name:<34} {stage:<14} {t:>8.3f} {m:>9.1f}")
            record(
                f"PrivBayes flow stages at {label} rows ({name})",
                ", ".join(f"{stage} {t:.3f} s" for stage, t, _ in stages),
            )


if __name__ == "__main__":
    main()

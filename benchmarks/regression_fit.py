"""DP regression fit alternatives: standardisation, and the split of epsilon between blocks.

The functional mechanism releases the quadratic block ``A = sum u u^T`` (21 values) and
the linear block ``b = sum y u`` (6 values) of the least-squares objective with one
Laplace scale (L1 sensitivity of the whole vector / epsilon). Releasing the two blocks
separately (sequential composition, still pure epsilon-DP) lets the budget be split
otherwise. On the public 160K sample with the release binning and a perfect candidate
(D_R = D_T: only the fit's noise counts), this prints the median coefficient error and
P(error < 30) for both standardisations (public bounds: the once-per-release fit; D_R's
moments: the per-candidate fit) and several shares of epsilon for the linear block
("joint": proportional to the blocks' sensitivities, i.e. today's single release).

    python benchmarks/regression_fit.py [--draws 400]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from synthflow.criteria._common import code_matrix
from synthflow.criteria.regression import fit as regression
from synthflow.data import load_data
from synthflow.loader import load_spec
from synthflow.privacy.rng import PrivacyRNG
from synthflow.transform import Transformer

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_160k.csv.gz"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=400)
    args = ap.parse_args()
    spec = load_spec(REPO / "configs" / "births.yaml")
    raw = load_data(DATA, spec, public=True).frame
    tr = Transformer(spec, {c: "a" for c in spec.column_names} | {"mother_age": "b"})
    codes = code_matrix(tr.forward(raw), tr, what="original")
    feats_spec = spec.criterion("regression_coef_error").features
    x, y, feats, xb, yb = regression.design(codes, tr, "birth_weight", feats_spec)
    ols = regression.ols(x, y, feats)
    std_r = regression.Standardization.from_data(x, y, xb, yb)
    m = (len(feats) + 1) * (len(feats) + 2) // 2
    stds = {"bounds": regression.Standardization.from_bounds(xb, yb), "D_R sd": std_r}
    print(f"{'standardisation':<16} {'eps':>5} {'b share':>8} {'median':>7} {'P(<30)':>7}")
    for name, std in stds.items():
        sens = regression.functional_mechanism_sensitivity(*std.box(xb, yb))
        s_a, s_b = float(sens[:m].sum()), float(sens[m:].sum())
        stats = regression.functional_mechanism_statistics(x, y, std, xb, yb)
        for eps in (0.43, 1.0):
            for share in (None, 0.35, 0.5, 0.6, 0.7):
                e_b = eps * s_b / (s_a + s_b) if share is None else eps * share
                rng = PrivacyRNG.from_seed(0)
                errs = []
                for _ in range(args.draws):
                    a = rng.laplace(stats[:m], sensitivity=s_a, epsilon=eps - e_b)
                    b = rng.laplace(stats[m:], sensitivity=s_b, epsilon=e_b)
                    model = regression.model_from_noisy_statistics(
                        np.concatenate([a, b]), std, feats
                    )
                    errs.append(regression.coefficient_error(model, ols, std_r))
                e = np.asarray(errs)
                label = "joint" if share is None else f"{share:.2f}"
                print(
                    f"{name:<16} {eps:5.2f} {label:>8} {np.median(e):7.1f} {(e < 30).mean():7.2f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()

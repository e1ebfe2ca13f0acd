"""Exact marginal quality of every non-GAN generator at epsilon 4 on NVSS 160K (slow)."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

import numpy as np
import pytest

from synthflow.acceptance import exact_values
from synthflow.data import load_data
from synthflow.flow import run_flow
from synthflow.loader import load_spec, with_generator_epsilon
from synthflow.privacy.ledger import Ledger
from synthflow.privacy.rng import PrivacyRNG
from synthflow.space import Configuration

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_160k.csv.gz"
SETTINGS = {  # as benchmarks/generators.py
    "privbayes": {"flavor": "theta", "epsilon_split": 0.25, "theta": 16},
    "mwem": {"num_query": 1024, "num_iterations": 1000, "num_inner_updates": 25},
    "pep": {"num_query": 4096, "num_iterations": 100, "num_inner_updates": 25, "marginal": 2},
    "mst": {"delta": 1e-9},
    "aim": {"delta": 1e-9, "rounds": 48, "max_model_size": 20.0},
    "patectgan": {"delta": 1e-9, "noise_multiplier": 5.0},  # the grid's noise 5 point
}


def _independent_columns(spec, tr, original, seeds: int = 3) -> list[float]:
    """The bar, computed on the same rows: each column shuffled on its own (1-way
    marginals kept, every dependence lost), exact max marginal error. Measured: 0.028-
    0.032 on NVSS 10K, 0.0295-0.0304 on 160K (release binning)."""
    errors = []
    for seed in range(seeds):
        g = np.random.default_rng(seed)
        shuffled = original.copy()
        for col in shuffled.columns:
            shuffled[col] = g.permutation(shuffled[col].to_numpy())
        errors.append(exact_values(spec, tr, original, shuffled)["marginal_max_abs_error"])
    return errors


def _flow(name: str, *, data: Path = DATA, epsilon: float | None = None, seed: int = 0):
    if not data.exists():
        pytest.skip(f"public NVSS sample {data} not available")
    if name in ("mst", "aim") and importlib.util.find_spec("snsynth") is None:
        pytest.skip("needs the smartnoise extra")
    if name == "patectgan" and importlib.util.find_spec("torch") is None:
        pytest.skip("needs the gan extra")
    spec = load_spec(REPO / "configs" / "births-2024.yaml")
    if epsilon is not None:
        spec = with_generator_epsilon(spec, epsilon)
    raw = load_data(data, spec, public=True).frame
    letters = {c: "a" for c in spec.column_names} | {"mother_age": "b"}
    cfg = Configuration(
        model=name,
        hyperparameters_items=tuple(sorted(SETTINGS[name].items())),
        transformations_items=tuple(letters.items()),
        min_count=3,
    )
    ledger = Ledger(total_epsilon=10.0, total_delta=1e-6)
    result = run_flow(
        spec,
        cfg,
        raw,
        ledger=ledger,
        rng=PrivacyRNG.from_seed(seed),
        public=True,
        show_progress=False,
    )
    return spec, result


def _two_way_error(a: np.ndarray, b: np.ndarray, sizes: tuple[int, ...]) -> float:
    worst = 0.0
    for i, j in itertools.combinations(range(len(sizes)), 2):
        ka, kb = a[:, i] * sizes[j] + a[:, j], b[:, i] * sizes[j] + b[:, j]
        cells = sizes[i] * sizes[j]
        pa = np.bincount(ka, minlength=cells) / len(a)
        pb = np.bincount(kb, minlength=cells) / len(b)
        worst = max(worst, float(np.abs(pa - pb).max()))
    return worst


@pytest.mark.slow
@pytest.mark.parametrize("name", ["privbayes", "mwem", "pep", "mst", "aim"])
def test_marginal_error_below_independent_columns(name):
    spec, result = _flow(name)
    exact = exact_values(spec, result.transformer, result.original, result.candidate)
    # below the best of three independent-columns draws on the same 160K rows
    bar = min(_independent_columns(spec, result.transformer, result.original))
    assert exact["marginal_max_abs_error"] < bar
    if name in ("mst", "aim"):  # joint marginals, not only 1-way (trap 2)
        sizes = result.transformer.domain.sizes
        orig = result.original.to_numpy(dtype=np.int64)
        cand = result.candidate.to_numpy(dtype=np.int64)
        rng = np.random.default_rng(0)
        cols = orig.T.copy()
        for c in cols:  # independent columns: each column shuffled on its own
            rng.shuffle(c)
        independent = _two_way_error(orig, cols.T, sizes)
        assert _two_way_error(orig, cand, sizes) <= independent


def _errors_at_10k(
    name: str, *, epsilon: float = 4.0, seeds: int = 3
) -> tuple[list[float], list[float]]:
    """Exact max marginal errors of ``seeds`` seeded flows on the NVSS 10K sample, and
    of independent columns on the same rows."""
    small = REPO.parent / "shared" / "public_data" / "nvss2019_singleton_10k.csv"
    errors = []
    for seed in range(seeds):
        spec, result = _flow(name, data=small, epsilon=epsilon, seed=seed)
        exact = exact_values(spec, result.transformer, result.original, result.candidate)
        errors.append(exact["marginal_max_abs_error"])
    return errors, _independent_columns(spec, result.transformer, result.original)


def test_pep_matches_independent_columns_at_10k_rows():
    # NVSS 10K (public), epsilon 4, (4096, 100, 25, 2-way): 6 seeds measured 0.024-0.032,
    # mean 0.028 (sd 0.003, so the mean of 3 has sd ~0.002); independent columns on the
    # same rows 0.028-0.032 (mean 0.030). At 10K PEP is at the level of independent
    # columns, not clearly better: the test holds it there (mean within 5% of theirs,
    # about one sd of the mean above today's). Before PEP measured the 1-way marginals
    # first it scored 0.041-0.055, which this fails.
    errors, independent = _errors_at_10k("pep")
    assert float(np.mean(errors)) < 1.05 * float(np.mean(independent)), (errors, independent)


@pytest.mark.slow
def test_patectgan_beats_independent_columns_at_10k_rows():
    # NVSS 10K (public), epsilon 4, the grid's noise 5 with the default 2-way tuning
    # (mother_age b, min_count 3 here). Without the tuning PATECTGAN scored what
    # independent columns score (0.027-0.041 over 6 fits on two 10K samples, 0.031-0.035
    # for independent columns); with it, 9 fits on three 10K samples gave 0.010-0.016
    # (all bins a, min_count 2). The two fits here scored 0.0132 and 0.0122: 0.035, the
    # bar of independent columns on the same rows (0.028-0.032), is more than twice as
    # high: every fit must beat it by 40%.
    errors, independent = _errors_at_10k("patectgan", seeds=2)
    assert max(errors) < 0.6 * min(independent), (errors, independent)


def test_pep_error_decreases_with_epsilon():
    # NVSS 10K (public), PEP's cheapest 2-way grid point. Measured (3 seeds each): epsilon
    # 0.5 gives 0.10-0.21, epsilon 9 gives 0.020-0.024; the means differ by ~6x, so a
    # factor 2 between the means leaves a wide margin for other seeds and platforms.
    low = float(np.mean(_errors_at_10k("pep", epsilon=0.5)[0]))
    high = float(np.mean(_errors_at_10k("pep", epsilon=9.0)[0]))
    assert high < low / 2, (low, high)

"""Our vectorised MWEM is no worse than smartnoise's MWEMSynthesizer (issue 4).

Same small settings as ``benchmarks/mwem_vs_smartnoise.py`` (T=8 rounds, 2 inner
multiplicative-weights passes, epsilon 4, one histogram over the full public cube);
scored by the exact ``marginal_max_abs_error`` over all 63 marginals on the NVSS 10K
sample. smartnoise's noise comes from global RNGs that we do not seed, so the test
averages fits instead of fixing them.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
BENCHMARK = REPO / "benchmarks" / "mwem_vs_smartnoise.py"
EPSILON = 4.0
FITS = 3
# Tolerance from the spread measured with the benchmark (3 fits each, T=8, M=2, 10K rows):
# epsilon 4: ours 0.049 +- 0.007, smartnoise 0.121 +- 0.016 (per-fit sd); epsilon 1: ours
# 0.049 +- 0.011, smartnoise 0.108 +- 0.016. The sd of a difference of two 3-fit means is
# about sqrt(0.016^2 + 0.011^2) / sqrt(3) = 0.011, so 0.03 (~2.7 sd) keeps smartnoise's
# unseedable noise from failing the test, while a regression that makes ours worse than
# smartnoise by more than that (ours is now ~0.07 better) still fails.
TOLERANCE = 0.03


def _benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mwem_vs_smartnoise", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::FutureWarning")
def test_ours_not_worse_than_smartnoise(nvss_10k: Path) -> None:
    pytest.importorskip("snsynth.mwem")
    bench = _benchmark()
    codes, domain = bench.load_codes(nvss_10k)
    settings = bench.SmallSettings()
    hp = bench.MWEMHyperparameters(
        num_query=settings.num_query,
        num_iterations=settings.iterations,
        num_inner_updates=settings.inner,
    )
    ours = [bench.run_ours(codes, domain, EPSILON, hp, seed)[1] for seed in range(FITS)]
    theirs = [
        bench.run_smartnoise(codes, domain, EPSILON, settings, seed)[1] for seed in range(FITS)
    ]
    mean_ours, mean_theirs = statistics.fmean(ours), statistics.fmean(theirs)
    assert mean_ours <= mean_theirs + TOLERANCE, (
        f"ours {mean_ours:.4f} ({ours}) vs smartnoise {mean_theirs:.4f} ({theirs}); "
        f"tolerance {TOLERANCE}"
    )

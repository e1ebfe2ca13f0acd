"""The 1-way ratio's pseudo-threshold at the noise actually added (#59, SPEC sec. 5).

``threshold_at: actual`` derives the threshold at the candidate's own smallest 1-way
count m, the m its noise is scaled to; ``assumed`` (the 2024 rule) at min(50, m).
"""

from __future__ import annotations

import numpy as np
import pytest

from synthflow.criteria.one_way_ratio import one_way_ratio_sensitivity, release_threshold
from synthflow.loader import load_spec

CLIP, P_FP = 2.0, 0.05


def _threshold(m: int, eps: float, assumed: int | None) -> float:
    return release_threshold(
        threshold=2.0,
        clip=CLIP,
        epsilon=eps,
        false_positive_rate=P_FP,
        assumed_min_count=assumed,
        min_count=m,
    )


@pytest.mark.parametrize("m", [0, 1, 7, 50, 189, 1000, 50_000])
@pytest.mark.parametrize("eps", [0.2, 0.399])
def test_at_the_actual_m_a_candidate_at_the_clip_passes_exactly_p_fp(m: int, eps: float) -> None:
    """P(c + Lap(b_m) < t'_m) = p_fp, by the Laplace CDF, and by 400,000 seeded draws.

    The draws' standard error at p = 0.05 is sqrt(0.05 * 0.95 / 4e5) = 3.4e-4; 5 of them
    (1.7e-3) would fail a threshold off by a tenth of p_fp.
    """
    t = _threshold(m, eps, None)
    b = one_way_ratio_sensitivity(m, clip=CLIP) / eps
    # Laplace CDF below the clip: 0.5 exp(-(c - t) / b)
    assert 0.5 * np.exp(-(CLIP - t) / b) == pytest.approx(P_FP, rel=1e-12)
    draws = CLIP + np.random.default_rng(59).laplace(0.0, b, 400_000)
    assert abs(np.mean(draws < t) - P_FP) < 1.7e-3


def test_the_2024_rule_pays_for_noise_not_added() -> None:
    """At m = 189 and epsilon 0.399 (the births plan): assumed 50 gives 1.556 and a false
    pass of about 1e-4 at the clip; the actual m gives 1.879 and exactly 0.05."""
    assumed = _threshold(189, 0.399, 50)
    actual = _threshold(189, 0.399, None)
    assert assumed == pytest.approx(1.556, abs=1e-3)
    assert actual == pytest.approx(1.879, abs=1e-3)
    b = one_way_ratio_sensitivity(189, clip=CLIP) / 0.399
    assert 0.5 * np.exp(-(CLIP - assumed) / b) < 2e-4
    # below 50 both rules are the same (the noise is larger than 50 allowed)
    assert _threshold(20, 0.399, 50) == _threshold(20, 0.399, None)


@pytest.mark.parametrize(
    ("name", "rule"), [("births", "actual"), ("births-pure", "actual"), ("births-2024", "assumed")]
)
def test_each_bundled_spec_says_its_rule(name: str, rule: str) -> None:
    c = load_spec(name).criterion("one_way_max_ratio")
    assert c.threshold_at == rule and c.assumed_min_count == 50
    _, t = c.impl.sensitivity_and_threshold(c, None, {"min_count": 189}, c.epsilon)
    assert t == pytest.approx(_threshold(189, c.epsilon, None if rule == "actual" else 50))

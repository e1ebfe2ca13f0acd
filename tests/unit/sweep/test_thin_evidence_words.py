"""#61 item 9: a sweep of 10 repeats was told "Sweep more repeats (--repeats 10)"."""

from __future__ import annotations

from synthflow.sweep.shortlist import THIN_RUNS, PassEstimate, thin_evidence, wilson_interval


def _estimate(runs: int, passes: int) -> PassEstimate:
    low, high = wilson_interval(passes, runs)
    return PassEstimate(config_id="c", configuration={}, generator_epsilon=1.0, runs=runs,
                        passes=passes, low=low, high=high)  # fmt: skip


def test_the_advice_asks_for_more_repeats_than_were_run():
    # 5 of 10: the Wilson interval [0.24, 0.76] is wider than 0.3, so still thin.
    text = thin_evidence([_estimate(THIN_RUNS, THIN_RUNS // 2)])
    assert text is not None
    assert f"--repeats {2 * THIN_RUNS})" in text and f"--repeats {THIN_RUNS})" not in text
    # Fewer runs than THIN_RUNS: THIN_RUNS is more than was run.
    assert f"--repeats {THIN_RUNS})" in (thin_evidence([_estimate(3, 2)]) or "")

"""What a worst-case PATE-GAN could learn at the births budget: signal per teacher label.

A PATE-GAN's privacy cost is only in the teachers' votes on generated rows. Its
published accountants are data-dependent (the bound is computed from the private
votes), which this project does not use. Two data-independent designs are sized here
at generator epsilon 4 with a tenth kept for the 1-way marginals (3.6 left, delta
1e-9, replace-one neighbours):

1. **Laplace noisy votes** (PATE-GAN, smartnoise's ``noise_multiplier`` lambda is the
   inverse Laplace scale): every label is one pure ``lambda``-DP release (one teacher
   changes, the vote count moves by one); the RDP accountant of ``dp-accounting``
   composes them. Printed: how many labels fit and the chance that a unanimous vote
   of 10 teachers comes out right.
2. **Poisson-subsampled Gaussian over teachers**: each student step samples each
   teacher with probability q, sums the sampled teachers' centred votes on B generated
   rows (a replaced row changes one teacher, so the sum moves by at most twice the
   clip) and adds Gaussian noise; the accountant is DP-SGD's, with teachers in place of
   rows. Printed: the noise multiplier T steps can afford and the signal-to-noise
   ratio of one label, ``q k / (sigma sqrt(B))``.

Usage: ``python benchmarks/pate_sizing.py``. Pure arithmetic: no data is read.
"""

from __future__ import annotations

import math

from _record import record  # benchmarks/ is on sys.path when a script runs

from synthflow.privacy.accounting import dpsgd_epsilon

EPSILON, DELTA, ROWS_PER_STEP = 3.6, 1e-9, 500


def laplace_labels(lam: float) -> int:
    """Most lambda-DP Laplace votes whose RDP composition stays within (EPSILON, DELTA)."""
    import dp_accounting  # noqa: PLC0415

    def fits(count: int) -> bool:
        acc = dp_accounting.rdp.RdpAccountant()
        acc.compose(dp_accounting.LaplaceDpEvent(1.0 / lam), count)
        return acc.get_epsilon(DELTA) <= EPSILON

    if not fits(1):
        return 0
    lo, hi = 1, 2
    while fits(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def unanimous_right(lam: float, teachers: int = 10) -> float:
    """P(noisy vote > teachers / 2) when all teachers vote 1: Laplace of scale 1/lam."""
    margin = teachers / 2
    return 1.0 - 0.5 * math.exp(-margin * lam)


def gaussian_sigma(q: float, steps: int) -> float:
    """Smallest noise multiplier (bisection) with which ``steps`` steps fit the budget."""
    lo, hi = 0.3, 5000.0
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        if dpsgd_epsilon(sample_rate=q, noise_multiplier=mid, steps=steps, delta=DELTA) > EPSILON:
            lo = mid
        else:
            hi = mid
    return hi


def main() -> None:
    print(f"epsilon {EPSILON} at delta {DELTA:g}, replace-one\n")
    print("1. Laplace noisy votes (lambda = the grid's noise_multiplier)")
    print(f"{'lambda':>8} {'labels':>10} {'P(unanimous 10 right)':>22}")
    for lam in (0.001, 0.01, 0.1, 1.0, 5.0):
        labels = laplace_labels(lam)
        print(f"{lam:>8g} {labels:>10,} {unanimous_right(lam):>22.3f}")
        if lam == 0.001:
            record(
                "PATE Laplace votes at lambda 0.001 (eps 3.6, delta 1e-9): labels, P(right)",
                f"{labels:,} labels, P(unanimous 10 right) {unanimous_right(lam):.3f}",
            )
    print(f"\n2. Poisson-subsampled Gaussian over teachers, {ROWS_PER_STEP} generated rows a step")
    print(f"{'rows':>8} {'teachers':>8} {'rows each':>9} {'sampled':>7} {'steps':>6} "
          f"{'sigma':>8} {'SNR/label':>9}")  # fmt: skip
    best = 0.0
    for n, k in ((10_000, 100), (10_000, 1000), (160_000, 160), (160_000, 1600)):
        for sampled in (10, 50):
            for steps in (100, 1000):
                sigma = gaussian_sigma(sampled / k, steps)
                snr = sampled / (sigma * math.sqrt(ROWS_PER_STEP))
                print(f"{n:>8,} {k:>8} {n // k:>9} {sampled:>7} {steps:>6} {sigma:>8.2f} "
                      f"{snr:>9.3f}")  # fmt: skip
                if n == 10_000 and k == 100 and steps == 1000:
                    best = max(best, snr)
    record(
        "PATE subsampled-Gaussian votes, 10K rows, 100 teachers, 1,000 steps: SNR per label",
        f"{best:.3f}",
    )


if __name__ == "__main__":
    main()

"""Write the births spec with a low-epsilon configuration space (#37), for sweep and plan.

The bundled ``configs/births-2024.yaml`` up to its ``space:`` section, unchanged (criteria,
thresholds, bins, constraints, privacy), then a space of the ``workload`` generator with
discrete Laplace (pure DP) and discrete Gaussian (``noise: gaussian``) noise, each over
the same 4 budget splits, 12 binnings and 2 min_counts. With ``--fit-noise gaussian``
the regression criterion's functional mechanism is Gaussian too, and the spec's
``total_delta`` (1e-6) is split: half to the generator, half to the fit.

    python benchmarks/low_epsilon_spec.py /tmp/eps37g/births_low.yaml
    python benchmarks/low_epsilon_spec.py --fit-noise gaussian /tmp/eps37g/births_low2.yaml
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SPACE = """\
# #37: the workload generator with Laplace and Gaussian noise (benchmarks/low_epsilon_spec.py)
space:
  min_count: [2, 3]
  models:
    - model: workload
      grid:
        one_way_share: [0.1, 0.2]
        constrained_share: [0.2, 0.4]
    - model: workload
      grid:
        one_way_share: [0.1, 0.2]
        constrained_share: [0.2, 0.4]
        noise: gaussian
        delta: {delta}
"""


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="where to write the spec (refused if it exists)")
    ap.add_argument("--delta", type=float, default=None, help="the Gaussian generator's delta")
    ap.add_argument("--fit-noise", choices=("laplace", "gaussian"), default="laplace")
    args = ap.parse_args(argv)
    if args.out.exists():
        raise SystemExit(f"{args.out} exists; remove it or name another file")
    text = (ROOT / "configs" / "births-2024.yaml").read_text()
    total = 1e-6  # births-2024.yaml's privacy.total_delta
    gaussian_fit = args.fit_noise == "gaussian"
    delta = args.delta if args.delta is not None else (total / 2 if gaussian_fit else total)
    if gaussian_fit:
        old = "threshold: 30, epsilon: 0.43}"
        if old not in text:
            raise SystemExit("configs/births-2024.yaml's regression criterion changed; update this")
        text = text.replace(
            old, f"threshold: 30, epsilon: 0.43, noise: gaussian, delta: {total - delta:g}}}"
        )
    head = text[: text.index("\nspace:") + 1]
    lines = head.rstrip("\n").split("\n")
    while lines and lines[-1].startswith("#"):  # the bundled space's own comment
        lines.pop()
    args.out.write_text("\n".join(lines) + "\n\n" + SPACE.format(delta=f"{delta:g}"))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

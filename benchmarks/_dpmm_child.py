"""One dpmm fit, run by ``any_table.py --dpmm-python PY`` in dpmm's own environment.

dpmm pins numpy 1.26.4 and pandas 2.1.0 (../shared/DEPENDENCIES.md), so it cannot be
installed beside synthflow: this script imports only dpmm, numpy and pandas, reads the
table already coded to synthflow's bins (integers, one column per release column), fits
dpmm's MST or AIM on it with dpmm's own binning switched off (the domain is synthflow's
public one), and writes a candidate of the same size in the same codes. Public data only.

Usage: PY _dpmm_child.py CODES.csv DOMAIN.json OUT.csv {mst,aim} EPSILON SEED
"""

from __future__ import annotations

import json
import resource
import sys
import time

import pandas as pd


def main(argv: list[str]) -> int:
    codes_path, domain_path, out_path, model, epsilon, seed = argv
    from dpmm.pipelines import AIMPipeline, MSTPipeline  # noqa: PLC0415

    pipeline_class = {"mst": MSTPipeline, "aim": AIMPipeline}[model]
    codes = pd.read_csv(codes_path)
    with open(domain_path, encoding="utf-8") as fh:
        domain = {k: int(v) for k, v in json.load(fh).items()}
    # delta 1e-9 as the synthflow rows; n_jobs 2: the benchmark machine's cores
    pipe = pipeline_class(epsilon=float(epsilon), delta=1e-9, disable_processing=True, n_jobs=2)
    t0 = time.perf_counter()
    pipe.fit(codes, domain=domain, random_state=int(seed))
    synth = pipe.generate(n_records=len(codes), random_state=int(seed) + 1)
    wall = time.perf_counter() - t0
    synth[list(codes.columns)].to_csv(out_path, index=False)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("RESULT " + json.dumps({"flow_s": wall, "peak_rss_mib": peak}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

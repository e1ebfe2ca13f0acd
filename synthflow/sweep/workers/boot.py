"""What the sweep's fork server imports once; every local worker is forked from it, warm.

Spawned workers each start a fresh interpreter and import numpy, pandas and the flow
(about a second of CPU per worker, all at once on a small machine). The sweep starts
one fork server that does this once, while the driver reads the data; each worker is then
a ``fork`` of it. BLAS and OpenMP read their thread counts when numpy is first imported,
so the limit of one thread per worker (one run per core) is set here, in the fork
server's own environment, before anything imports numpy. The modules are the workers'
own list (:func:`~synthflow.sweep.workers.runs.warm_imports`, which a Dask cluster's workers
run too). The heap's padding (:func:`~synthflow.sweep.workers.forkserver.pad_heap`) is set here
too, and forked workers inherit it.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

from synthflow.sweep.workers.forkserver import pad_heap  # noqa: E402

pad_heap()  # inherited by every forked worker

from synthflow.sweep.workers.runs import warm_imports  # noqa: E402

warm_imports()

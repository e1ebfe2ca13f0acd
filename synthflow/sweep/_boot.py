"""What the sweep's fork server imports once; every worker is forked from it, warm.

Spawned workers each start a fresh interpreter and import Dask, numpy, pandas and the
flow (about 1.3 s of CPU per worker, all at once on a small machine). The sweep starts
one fork server that does this once, while the driver reads the data; each worker is then
a ``fork`` of it. BLAS and OpenMP read their thread counts when numpy is first imported,
so the limit of one thread per worker (one run per core) is set here, in the fork
server's own environment, before anything imports numpy. The modules are the engine's
own list (:func:`~synthflow.sweep.engine._warm_imports`, which spawned workers run too).
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import distributed  # noqa: E402, F401

from synthflow.sweep.engine import _warm_imports  # noqa: E402

_warm_imports()

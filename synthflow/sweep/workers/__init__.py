"""Where a sweep's runs execute: local worker processes or a running Dask cluster.

* :mod:`~synthflow.sweep.workers.runs`: one run (:func:`run_one`), and the local
  workers (forked from the fork server) and a cluster's, behind one interface;
* :mod:`~synthflow.sweep.workers.forkserver` and :mod:`~synthflow.sweep.workers.boot`:
  the fork server started early by the CLI, and what it preloads;
* :mod:`~synthflow.sweep.workers.cluster` and
  :mod:`~synthflow.sweep.workers.cluster_plugins`: joining a Dask scheduler, and the
  plug-ins every cluster worker loads.

The sweep's job (:mod:`synthflow.sweep.job`) is the only caller.
"""

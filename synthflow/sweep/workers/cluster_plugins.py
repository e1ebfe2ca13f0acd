"""A Dask worker plug-in that loads synthflow's plug-ins on every worker of a cluster.

A sweep given ``--address`` runs on a cluster's workers, which did not see the
command's ``--plugin`` (or the entry points it loaded). :func:`load_on_cluster` registers
:class:`LoadPlugins` with the scheduler, so every worker, including one that joins
later, imports the same plug-ins before it unpickles a spec that names them. A
plug-in given as a ``.py`` file must be at the same path on the workers (a local
cluster, a shared file system); a module name must be importable there.
"""

from __future__ import annotations

from typing import Any

from distributed.diagnostics.plugin import WorkerPlugin

from synthflow.errors import ConfigError
from synthflow.plugins import load_plugins

__all__ = ["LoadPlugins", "load_on_cluster"]

NAME = "synthflow-plugins"


class LoadPlugins(WorkerPlugin):
    """Imports the named plug-ins when a worker starts (or at once, on a running one)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names

    def setup(self, worker: Any) -> None:
        """Load the plug-ins in the worker's process."""
        load_plugins(self.names)


def load_on_cluster(client: Any, names: tuple[str, ...]) -> None:
    """Have every worker of ``client``'s cluster load ``names`` (nothing when empty).

    Raises:
        ConfigError: A worker could not load one (naming it and the fix).
    """
    if not names:
        return
    try:
        client.register_plugin(LoadPlugins(names), name=NAME)
    except Exception as exc:  # the worker's own error, re-raised by the client
        raise ConfigError(
            f"a Dask worker could not load the plug-ins {list(names)}: {exc}. Make them "
            "importable on every worker (install the module there, or put the .py file at "
            "the same path), or run the sweep without --address"
        ) from exc

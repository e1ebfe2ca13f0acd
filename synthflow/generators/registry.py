"""The generator registry: the names the spec's space uses -> generator classes."""

from __future__ import annotations

from synthflow.generators._gan import (
    DPCTGAN,
    PATECTGAN,
)
from synthflow.generators._smartnoise import AIM, MST
from synthflow.generators.mwem import MWEM
from synthflow.generators.pep import PEP
from synthflow.generators.privbayes import PrivBayes
from synthflow.generators.protocol import Generator
from synthflow.generators.workload import WorkloadGenerator
from synthflow.transform import Transformer

__all__ = ["REGISTRY", "make_generator"]

REGISTRY: dict[str, type[Generator]] = {
    "privbayes": PrivBayes,
    "workload": WorkloadGenerator,
    "mwem": MWEM,
    "pep": PEP,
    "mst": MST,
    "aim": AIM,
    "dpctgan": DPCTGAN,
    "patectgan": PATECTGAN,
}


def make_generator(
    model: str,
    hyperparameters: dict[str, object],
    *,
    epsilon: float,
    transformer: Transformer | None = None,
) -> Generator:
    """Instantiate the registered generator ``model``.

    ``transformer`` (public: the spec and the configuration's bins) is handed to
    generators that derive their measurements from the spec (``needs_transformer``).

    Raises:
        KeyError: If ``model`` is not registered.
        TypeError: For unknown hyperparameter names.
        ValueError: For invalid hyperparameter values.
    """
    cls = REGISTRY[model]
    hp = cls.Hyperparameters(**hyperparameters)
    if getattr(cls, "needs_transformer", False):
        return cls(hp, epsilon=epsilon, transformer=transformer)  # type: ignore[call-arg]
    gen: Generator = cls(hp, epsilon=epsilon)
    return gen

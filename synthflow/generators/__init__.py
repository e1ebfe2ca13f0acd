"""DP generators behind one protocol, keyed by the names the spec's space uses.

>>> sorted(REGISTRY)[:1]
['privbayes']
"""

from __future__ import annotations

from synthflow.generators._gan import (
    DPCTGAN,
    PATECTGAN,
    DPCTGANHyperparameters,
    PATECTGANHyperparameters,
)
from synthflow.generators._smartnoise import AIM, MST, AIMHyperparameters, MSTHyperparameters
from synthflow.generators.mwem import MWEM, MWEMHyperparameters
from synthflow.generators.privbayes import PrivBayes, PrivBayesHyperparameters
from synthflow.generators.protocol import Generator, PrivacyCost, check_codes
from synthflow.generators.workload import WorkloadGenerator, WorkloadHyperparameters
from synthflow.transform import Transformer

__all__ = [
    "AIM",
    "DPCTGAN",
    "MST",
    "MWEM",
    "PATECTGAN",
    "REGISTRY",
    "AIMHyperparameters",
    "DPCTGANHyperparameters",
    "Generator",
    "MSTHyperparameters",
    "MWEMHyperparameters",
    "PATECTGANHyperparameters",
    "PrivBayes",
    "PrivBayesHyperparameters",
    "PrivacyCost",
    "WorkloadGenerator",
    "WorkloadHyperparameters",
    "check_codes",
    "make_generator",
]

REGISTRY: dict[str, type[Generator]] = {
    "privbayes": PrivBayes,
    "workload": WorkloadGenerator,
    "mwem": MWEM,
    "mst": MST,
    "aim": AIM,
    "dpctgan": DPCTGAN,  # requires_public_data: see _gan.py
    "patectgan": PATECTGAN,  # requires_public_data: see _gan.py
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

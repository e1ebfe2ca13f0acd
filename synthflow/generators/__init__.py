"""DP generators behind one protocol, keyed by the names the spec's space uses.

>>> sorted(REGISTRY)[:1]
['privbayes']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from synthflow._util.lazy import lazy_package

if TYPE_CHECKING:  # the exports, imported on first use (synthflow/_util/lazy.py)
    from synthflow.generators._smartnoise import AIM, MST
    from synthflow.generators.gan import DPCTGAN, PATECTGAN
    from synthflow.generators.hyperparameters import (
        AIMHyperparameters,
        DPCTGANHyperparameters,
        MSTHyperparameters,
        MWEMHyperparameters,
        PATECTGANHyperparameters,
        PEPHyperparameters,
        PrivBayesHyperparameters,
        WorkloadHyperparameters,
    )
    from synthflow.generators.mwem import MWEM
    from synthflow.generators.pep import PEP
    from synthflow.generators.privbayes import PrivBayes
    from synthflow.generators.protocol import Generator, PrivacyCost, check_codes
    from synthflow.generators.registry import REGISTRY, make_generator, register
    from synthflow.generators.workload import WorkloadGenerator

__all__ = [
    "AIM",
    "DPCTGAN",
    "MST",
    "MWEM",
    "PATECTGAN",
    "PEP",
    "REGISTRY",
    "AIMHyperparameters",
    "DPCTGANHyperparameters",
    "Generator",
    "MSTHyperparameters",
    "MWEMHyperparameters",
    "PATECTGANHyperparameters",
    "PEPHyperparameters",
    "PrivBayes",
    "PrivBayesHyperparameters",
    "PrivacyCost",
    "WorkloadGenerator",
    "WorkloadHyperparameters",
    "check_codes",
    "make_generator",
    "register",
]

lazy_package(__name__)

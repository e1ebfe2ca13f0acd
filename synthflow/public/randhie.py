"""A third real dataset: the RAND Health Insurance Experiment (statsmodels ``randhie``).

Manning, Newhouse, Duan, Keeler, Leibowitz and Marquis, "Health Insurance and the
Demand for Medical Care: Evidence from a Randomized Experiment", American Economic
Review 77 (1987), 251-277: 20,190 person-years of the experiment, 10 columns, one row
per person-year (the unit of privacy here). The table ships with statsmodels
(``statsmodels.datasets.randhie``, public domain); install it with the ``dev`` extra or
``pip install statsmodels``. It is the [wide] issue's real table: 10 columns and more
than 20,000 rows, with a strong structure (visits fall with coinsurance).

What :func:`randhie_frame` changes, so that the spec (``configs/randhie.yaml``) can
describe it with integer and categorical columns (each a documented transformation of
the published variable, not a value read from the rows):

* ``lncoins`` = log(coinsurance + 1) becomes ``coinsurance``, the plan's rate in percent
  (0, 25, 50, 95 or 100), a category;
* ``idp`` (0/1) becomes a ``yes``/``no`` category; ``hlthg``, ``hlthf`` and ``hlthp``
  stay 0/1 integers (so that the spec's rules can say at most one is 1);
* ``lpi`` = log(incentive payment + 1) becomes ``incentive``, whole dollars (0-1,291);
* ``fmde`` = log of the maximum deductible expense becomes ``deductible``, whole
  dollars (exp(fmde), 1-4,000);
* ``physlm`` (physical limitation, imputed shares in between) becomes ``physlim``:
  ``none`` (0), ``some`` (below 0.5) or ``limited`` (0.5 or more);
* ``disea`` (chronic diseases, imputed fractions) is rounded to whole diseases;
* ``mdvis`` (outpatient visits) is kept.

**Public/private split** (a demonstration): the rows are split at random with a fixed
seed into a *public* share (default 30%, 6,057 rows) and a *private* share (14,133).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["RANDHIE_COLUMNS", "randhie_frame", "write_randhie"]

RANDHIE_COLUMNS = (
    "mdvis",
    "coinsurance",
    "idp",
    "incentive",
    "deductible",
    "physlim",
    "disea",
    "hlthg",
    "hlthf",
    "hlthp",
)


def randhie_frame() -> pd.DataFrame:
    """The 20,190 rows of the experiment as release columns (see the module docstring).

    Raises:
        ConfigError: If statsmodels is not installed.
    """
    from synthflow.public.split import statsmodels_table  # noqa: PLC0415

    raw = statsmodels_table("randhie", "RAND HIE")

    physlm = raw["physlm"].to_numpy()
    return pd.DataFrame(
        {
            "mdvis": raw["mdvis"].round().astype(int),
            "coinsurance": np.round(np.expm1(raw["lncoins"])).astype(int).astype(str),
            "idp": np.where(raw["idp"] > 0.5, "yes", "no"),
            "incentive": np.round(np.expm1(raw["lpi"])).astype(int),
            "deductible": np.round(np.exp(raw["fmde"])).astype(int),
            "physlim": np.select([physlm == 0, physlm < 0.5], ["none", "some"], "limited"),
            "disea": raw["disea"].round().astype(int),
            "hlthg": raw["hlthg"].round().astype(int),
            "hlthf": raw["hlthf"].round().astype(int),
            "hlthp": raw["hlthp"].round().astype(int),
        }
    )


def write_randhie(
    directory: str | Path, *, public_share: float = 0.3, seed: int = 1987
) -> tuple[Path, Path]:
    """Write ``public.csv`` and ``private.csv`` (a seeded random split) into ``directory``.

    Never overwrites: an existing file is an error.

    Raises:
        ConfigError: If a file exists, the share is outside (0, 1) or statsmodels is
            missing.
    """
    from synthflow.public.split import write_split  # noqa: PLC0415

    return write_split(randhie_frame(), directory, public_share=public_share, seed=seed)

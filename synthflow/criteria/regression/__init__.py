"""The regression family: one once-per-release measurement and the criteria that read it.

* :mod:`~synthflow.criteria.regression.fit`: the functional mechanism (its statistics,
  sensitivity, noise law and the fits drawn from it); re-exported here, so that
  ``from synthflow.criteria import regression`` reads ``regression.design``, ...;
* :mod:`~synthflow.criteria.regression.law`: the noise law a fit draws from (public
  bounds, the public sample's weights);
* :mod:`~synthflow.criteria.regression.coefficients` and
  :mod:`~synthflow.criteria.regression.tstr`: the two criterion kinds;
* :mod:`~synthflow.criteria.regression.sim`: the fit re-drawn on public figures, and
  :mod:`~synthflow.criteria.regression.figures`: its perfect-candidate noise figures;
* :mod:`~synthflow.criteria.regression.plan`: the fit as the planner's measurement
  (:class:`~synthflow.criteria.measurement.PlannedMeasurement`).

The release charges the fit once (``release_once``) and each attempt reads it as public
values; nothing outside this package names the family.
"""

from synthflow.criteria.regression import fit as _fit
from synthflow.criteria.regression.fit import *  # noqa: F403

__all__ = list(_fit.__all__)

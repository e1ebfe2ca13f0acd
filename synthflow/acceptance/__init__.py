"""DP acceptance criteria of a release candidate (SPEC sec. 5 and 6).

Map of the package:

* :mod:`.marginals` - max error over all k-way marginals;
* :mod:`.ratio` - clipped 1-way count ratio and its pseudo-threshold;
* :mod:`.condmean` - conditional-mean errors and the resize transformation;
* :mod:`.regression` - OLS, the functional mechanism, coefficient and TSTR errors;
* :mod:`.faithfulness` - maximum matching via types and max-flow;
* :mod:`.evaluate` - :func:`evaluate` (exact or DP), built from :mod:`.results` (the
  report objects), :mod:`.exact` (exact values) and :mod:`.dp` (the DP releases,
  :func:`fit_dp_regression`);
* :mod:`.report` - self-contained HTML report; :mod:`.cli` - ``synthflow evaluate``.

Each statistic has its sensitivity as a small pure function next to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from synthflow._util.lazy import lazy_package

if TYPE_CHECKING:  # the exports, imported on first use (synthflow/_util/lazy.py)
    from synthflow.acceptance.evaluate import (
        ExactAndNoisy,
        evaluate,
        evaluate_exact_and_noisy,
        exact_value,
        exact_values,
    )
    from synthflow.acceptance.results import AcceptanceReport, CriterionResult
    from synthflow.criteria.faithfulness import MatchingResult, maximum_matching
    from synthflow.criteria.regression import DPRegressionFit
    from synthflow.criteria.regression.coefficients import fit_dp_regression

__all__ = [
    "AcceptanceReport",
    "CriterionResult",
    "DPRegressionFit",
    "ExactAndNoisy",
    "MatchingResult",
    "evaluate",
    "evaluate_exact_and_noisy",
    "exact_value",
    "exact_values",
    "fit_dp_regression",
    "maximum_matching",
]

lazy_package(__name__)

"""The regression fit's noise law: the one place the functional mechanism's noise is made.

Release, audit, planner and noise rule all call :func:`fit_law`, so the law they
simulate is the law that is released. With ``noise_weights: public_sample`` the noise is
spread over the fit's coefficients by weights read off the spec's public sample
(:func:`synthflow.criteria.regression.noise_weights`): public data only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from synthflow.criteria.regression import fit as regression
from synthflow.errors import ConfigError

if TYPE_CHECKING:
    from synthflow.config.model import CriterionSpec
    from synthflow.transform import Transformer

__all__ = ["fit_law"]


def fit_law(
    c: CriterionSpec,
    transformer: Transformer,
    std: regression.Standardization,
    x_bounds: np.ndarray,
    y_bounds: tuple[float, float],
    *,
    epsilon: float | None = None,
    weights: np.ndarray | None = None,
) -> regression.FitNoise:
    """The fit's noise law for ``c`` in standardisation ``std`` (the one place it is made).

    Public inputs only: the bounds, the budget and, with ``noise_weights:
    public_sample``, the weights :func:`synthflow.criteria.regression.noise_weights`
    reads off the spec's public sample (never the private data). ``epsilon``: another
    budget than ``c``'s (the planner's grid). ``weights``: noise weights a package
    published, in place of reading them off a public sample not at hand (an audit).

    Raises:
        ConfigError: ``noise_weights: public_sample`` without a ``public_sample`` in the spec.
    """
    box = std.box(x_bounds, y_bounds)
    eps = c.epsilon if epsilon is None else epsilon
    if weights is None and c.noise_weights == "public_sample":
        x, y = _public_design(c, transformer)
        stats = regression.functional_mechanism_statistics(x, y, std, x_bounds, y_bounds)
        judge = regression.Standardization.from_data(x, y, x_bounds, y_bounds)
        ranges = regression.functional_mechanism_sensitivity(*box)
        weights = regression.noise_weights(stats, std, judge, ranges, str(c.noise))
    return regression.fit_noise(*box, eps, kind=c.noise, delta=c.delta, weights=weights)


_DESIGNS: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]] = {}


def _public_design(c: CriterionSpec, transformer: Transformer) -> tuple[np.ndarray, np.ndarray]:
    """The regression's design on the spec's public sample, binned like the release."""
    from synthflow.criteria._common import code_matrix
    from synthflow.public_sample import public_sample, public_sample_path

    spec = transformer.spec
    path = public_sample_path(spec)
    if path is None:
        raise ConfigError(
            f"criterion {c.name!r}: noise_weights 'public_sample' reads the spec's "
            "public_sample, and the spec names none: add 'public_sample: FILE' (public data "
            "like the private data) or set noise_weights: uniform. Nothing was spent"
        )
    letters = tuple((n, tuple(t.labels)) for n, t in transformer.transformations.items())
    cleaning = hash((spec.columns, spec.raw_constraints))
    read = (str(path.resolve()), path.stat().st_mtime_ns, cleaning)
    key = (read, letters, c.column, c.features)
    if key not in _DESIGNS:
        sample = public_sample(spec)
        assert sample is not None  # the path exists
        if len(_DESIGNS) >= 16:
            _DESIGNS.clear()
        codes = code_matrix(transformer.forward(sample), transformer, what="public sample")
        x, y, _, _, _ = regression.design(codes, transformer, str(c.column), c.features)
        _DESIGNS[key] = (x, y)
    return _DESIGNS[key]

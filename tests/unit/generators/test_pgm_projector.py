"""The sampler's numpy projection of a fitted mbi model equals mbi's own ``project``."""

from __future__ import annotations

import numpy as np
import pytest

mbi = pytest.importorskip("mbi")

from synthflow.generators._pgm_sampler import _Projector  # noqa: E402


@pytest.fixture(scope="module")
def model():
    domain = mbi.Domain(("a", "b", "c"), (3, 4, 2))
    g = np.random.default_rng(0)
    measurements = [
        mbi.LinearMeasurement(g.random(12).astype(np.float32) * 100, ("a", "b"), stddev=1.0),
        mbi.LinearMeasurement(g.random(8).astype(np.float32) * 100, ("b", "c"), stddev=1.0),
    ]
    return mbi.estimation.mirror_descent(domain, measurements, known_total=500.0, iters=50)


@pytest.mark.parametrize(
    "attrs",
    [("a", "b"), ("b", "a"), ("b",), ("c", "b"), ("a",), ("a", "c")],  # ("a", "c"): fallback
)
def test_projection_matches_mbi(model, attrs):
    ours = _Projector(model)(attrs)
    theirs = np.asarray(model.project(attrs).datavector(flatten=False), dtype=np.float64)
    assert ours.shape == theirs.shape
    # float32 marginals summed in another order: agreement to float32 precision.
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-3)

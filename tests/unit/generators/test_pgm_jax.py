"""Our mirror descent (generators/_pgm_jax.py): mbi's result, one compilation per structure."""

from __future__ import annotations

import numpy as np
import pytest
from mbi import CliqueVector, Domain, Factor, LinearMeasurement
from mbi.estimation import mirror_descent as mbi_mirror_descent

from synthflow.generators import _pgm_jax

TOTAL = 1000.0


def _model(names: tuple[str, ...], seed: int):
    """A small model: a chain of pairs, a 1-way marginal, a pair with forbidden cells."""
    r = np.random.default_rng(seed)
    domain = Domain(names, (3, 4, 2, 5))
    a, b, c, d = names
    measured = [(a, b), (b, c), (c, d), (a,)]
    potentials = CliqueVector.zeros(domain, [*measured, (a, d)])
    dtype = np.asarray(potentials[(a, b)].values).dtype
    for cl in measured:
        start = r.normal(0.0, 0.3, size=domain.project(cl).shape)
        potentials[cl] = Factor(domain.project(cl), start.astype(dtype))
    forbidden = np.zeros((3, 5))
    forbidden[0, 4] = -1e9  # a structural zero, as estimate() starts it
    potentials[(a, d)] = Factor(domain.project((a, d)), forbidden.astype(dtype))
    measurements = [
        (cl, r.uniform(0.0, 2 * TOTAL / domain.size(cl), size=domain.size(cl)).astype(dtype),
         float(r.uniform(1.0, 5.0)))
        for cl in measured
    ]  # fmt: skip
    return domain, potentials, measurements


def test_matches_mbi_mirror_descent_on_a_small_model():
    domain, potentials, measurements = _model(("a1", "b1", "c1", "d1"), seed=1)
    iters = 150
    ours = _pgm_jax.mirror_descent(potentials, measurements, total=TOTAL, iters=iters)
    linear = [LinearMeasurement(v, cl, stddev=s) for cl, v, s in measurements]
    ref = mbi_mirror_descent(domain, linear, known_total=TOTAL, potentials=potentials, iters=iters)
    # Tolerance: mbi turns on jax's float64 on import, so both run in float64 through the
    # same operations in the same order (same start, same Lipschitz power iteration, same
    # Armijo line search). They differ only in how XLA folds constants (mbi's measured
    # values and total are compile-time constants, ours are arguments) and in the power
    # iteration being one fori_loop here: rounding at float64's 1e-16, amplified by 150
    # steps to about 1e-12 of a count (measured), far below 1e-7 of the total, which a
    # single flipped line-search decision would exceed.
    assert ref.potentials.cliques == ours.potentials.cliques
    for cl in ref.marginals.cliques:
        got = np.asarray(ours.marginals[cl].values)
        want = np.asarray(ref.marginals[cl].values)
        assert np.max(np.abs(got - want)) < 1e-7 * TOTAL, cl
        assert got.sum() == pytest.approx(TOTAL, rel=1e-9)
    got_zero = np.asarray(ours.marginals[("a1", "d1")].values)[0, 4]
    assert got_zero == 0.0  # the forbidden cell stays at probability zero


def test_same_structure_compiles_once_and_values_are_arguments():
    names = ("a2", "b2", "c2", "d2")  # a structure no other test compiles
    # A trace runs the Python body once (TRACES counts it) and is what jax compiles: the
    # second fit, other values and another total, reuses the first's program. (jit's
    # dispatch-cache size is no count of compilations: it also keys on numpy-versus-jax
    # leaves and the like.)
    before = dict(_pgm_jax.TRACES)
    _, pot1, meas1 = _model(names, seed=2)
    _, pot2, meas2 = _model(names, seed=3)
    assert not np.allclose(meas1[0][1], meas2[0][1])  # different measured values
    m1 = _pgm_jax.mirror_descent(pot1, meas1, total=TOTAL, iters=5)
    m2 = _pgm_jax.mirror_descent(pot2, meas2, total=2 * TOTAL, iters=5)
    assert _pgm_jax.TRACES["step"] == before.get("step", 0) + 1
    assert _pgm_jax.TRACES["lipschitz"] == before.get("lipschitz", 0) + 1  # its power step
    m1_marg = np.asarray(m1.marginals[("a2", "b2")].values)
    m2_marg = np.asarray(m2.marginals[("a2", "b2")].values)
    assert m1_marg.sum() == pytest.approx(TOTAL) and m2_marg.sum() == pytest.approx(2 * TOTAL)
    # Another structure (other cliques) is another compilation.
    domain = Domain(names, (3, 4, 2, 5))
    other = [(("a2", "c2"), np.full(6, 100.0), 2.0), (("b2",), np.full(4, 150.0), 2.0)]
    _pgm_jax.mirror_descent(
        CliqueVector.zeros(domain, [cl for cl, _, _ in other]), other, total=TOTAL, iters=2
    )
    assert _pgm_jax.TRACES["step"] == before.get("step", 0) + 2


def test_no_measured_value_is_a_constant_of_the_compiled_step():
    names = ("a3", "b3", "c3", "d3")
    _, potentials, measurements = _model(names, seed=4)
    marker = 98765.4321  # a measured count that nothing else in the program could equal
    measurements[0][1][0] = marker
    y = tuple(np.asarray(v).ravel() for _, v, _ in measurements)
    sd = np.asarray([s for _, _, s in measurements])
    measured = tuple(cl for cl, _, _ in measurements)
    text = _pgm_jax._step.lower(
        potentials, np.float64(1e-3), y, sd, np.float64(TOTAL), measured=measured
    ).as_text()
    assert "98765" not in text and "9.87654" not in text
    assert str(TOTAL) not in text and "1.000000e+03" not in text

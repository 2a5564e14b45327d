"""Regressions from the eighth session's slope hunt (helper-50): turns and slopes of hulls decided
in float next to subnormal α, and the floor 1 − e^ε of optimistic readings, against exact
references (the breakpoints of a curve given by float points are rationals; mpmath for e^ε)."""

from __future__ import annotations

from fractions import Fraction as _Fr

import mpmath as _mp
import numpy as _np
from exact_fractions import at as _at
from exact_fractions import delta as _delta
from exact_fractions import hull as _hull
from exact_fractions import pair as _pair

import fdp as _fdp


def test_from_points_keeps_kinks_whose_cross_products_underflow():
    # lower_hull decided each turn from a float cross product (Δα₁Δβ₂ − Δβ₁Δα₂): next to α = 0
    # with subnormal Δα both products underflowed to 0, and a kink below the chord was dropped.
    # from_points([5e-316, 1e-315], [1 − 1.5e-12, 1 − 2e-12], exact=True) read f(5e-316) =
    # 1 − 1.0e-12 for the exact 1 − 1.5e-12
    a, b = [5e-316, 1e-315], [1 - 1.5e-12, 1 - 2e-12]
    ref = _hull([(_Fr(x), _Fr(y)) for x, y in zip(a, b, strict=True)])
    for f in (_fdp.from_points(a, b, exact=True), _fdp.PiecewiseLinear.from_points(a, b)):
        for x in (5e-316, 2.5e-316, 7e-316, 1e-315, 1e-320):
            assert _Fr(float(f(x))) <= _at(ref, x), (x, float(f(x)))
    # the breakpoints of from_distributions(P, Q) with subnormal P-masses (a hunt, seed 1106):
    # the kinks at α = 1.5e-323 and 3.5e-323 were dropped, and δ(740)'s upper end read 0 for
    # the exact 0.01753
    a = [0.0, 1.5e-323, 3.5e-323, 5.4e-323, 0.72412109375, 0.9697265625, 1.0]
    b = [1.0, 0.95654296875, 0.89990234375, 0.89208984375, 2.01e-308, 1e-310, 0.0]
    ref = _hull([(_Fr(x), _Fr(y)) for x, y in zip(a, b, strict=True)])
    f = _fdp.PiecewiseLinear.from_points(a, b)
    for x in (5e-324, 1.5e-323, 2.5e-323, 3.5e-323, 5.4e-323, 1e-322, 0.5, 0.9697265625):
        assert _Fr(float(f(x))) <= _at(ref, x), (x, float(f(x)))
    for e in (700.0, 730.0, 740.0, 742.0):
        hi = f.delta(e)
        with _mp.workdps(400):
            assert _mp.mpf(float(hi)) >= _delta(ref, e), (e, float(hi))


def test_optimistic_mixture_floor_below_one_minus_exp():
    # For ε ≤ log(1 − r) the add pair of Poisson subsampling at rate r has δ(ε) = 1 − e^ε
    # exactly (every loss of r f + (1 − r) Id is at least log(1 − r)); its optimistic reading
    # (the lower end of the bracket) took TradeOff.delta's floor −expm1(ε), rounded to nearest,
    # without the 2u that an upper curve's floor takes: poisson_subsample(G_1, 1e-6).add read
    # δ(−0.001)'s lower end 0.0009995001666250085, one ulp above 1 − e^{−0.001}
    base = _fdp.from_distributions([0.5, 0.5], [0.25, 0.75])
    cases = [(_fdp.Gaussian(1.0), 1e-6, (-0.001, -0.7, -3.0)),
             (_fdp.Laplace(1.0), 1e-6, (-0.001, -0.7)),
             (_fdp.EpsDelta(1.0), 1e-6, (-0.001, -0.7)),
             (base, 0.3, (-0.7, -1.0, -2.0))]
    for f, r, eps in cases:
        c = _fdp.poisson_subsample(f, r).add
        lo, hi = c.delta_bracket(_np.array(eps))
        with _mp.workdps(50):
            for e, lo_e, hi_e in zip(eps, lo, hi, strict=True):
                assert e <= _mp.log(1 - _mp.mpf(r))  # (so δ(ε) = 1 − e^ε)
                truth = 1 - _mp.exp(_mp.mpf(e))
                assert _mp.mpf(float(lo_e)) <= truth <= _mp.mpf(float(hi_e)), (f, r, e, lo_e)


def test_max_curve_stays_below_the_exact_maximum():
    from fdp.operations import max_curve

    # a hunt: the crossing of two curves next to α = 0 rounded onto a subnormal kink, and the
    # chord across it read f(1.4e-322) = 0.78574 for the exact 0.78516 (seed 288); kinks near
    # α = 1 that α rounds together lost one 1 − 3e-16 off: f(1 − 2⁻⁵²) read 7.6e-18 for the
    # exact 7.4e-101 (seed 143). Reference: max of the two exact curves (fractions)
    cases = [
        ([0.240234375, 0.228759765625, 0.3017578125, 7e-323, 0.229248046875],
         [0.2353515625, 1e-17, 0.45849609375, 0.21484375, 0.09130859375],
         [1e-310, 0.731689453125, 0.208740234375, 5e-324, 1e-310, 3e-322, 0.0595703125],
         [0.08740234375, 0.464111328125, 1.5e-323, 0.1455078125, 0.104736328125,
          0.1982421875, 1e-100]),
        ([0.24755859375, 0.7294921875, 0.02294921875, 1e-323],
         [1e-200, 0.86962890625, 0.008056640625, 0.122314453125],
         [3e-322, 2.5e-315, 2.5e-315, 0.9020996093749997, 0.097900390625, 3e-16],
         [0.123291015625, 0.246826171875, 0.078369140625, 0.3095703125, 0.241943359375,
          1e-100]),
    ]
    xs = [5e-324, 1e-323, 7e-323, 1.4e-322, 3e-322, 1e-310, 2e-310, 2.5e-315, 1e-300, 0.1, 0.5,
          0.9, 0.999, 1 - 1e-15, 1 - 2**-52, 1 - 2**-53]
    for P, Q, P2, Q2 in cases:
        c, c2 = _pair(P, Q), _pair(P2, Q2)
        m = max_curve(_fdp.from_distributions(P, Q), _fdp.from_distributions(P2, Q2))
        for x in xs:
            assert _Fr(float(m(x))) <= max(_at(c, x), _at(c2, x)), (x, float(m(x)))
    # f − g = 2e-200 at α = 0.9 and −5e-201 at 0.95: their product underflowed to −0, and the
    # crossing at 0.94 was lost: read 1.0e-200 there for the exact 6e-201
    a, b = [0.0, 0.5, 0.9, 0.95, 1.0], [1.0, 0.25, 3e-200, 1e-220, 0.0]
    a2, b2 = [0.0, 0.5, 0.9, 1.0], [1.0, 0.25, 1e-200, 0.0]
    m = max_curve(_fdp.PiecewiseLinear(_np.array(a), _np.array(b)),
                  _fdp.PiecewiseLinear(_np.array(a2), _np.array(b2)))
    c = [(_Fr(x), _Fr(y)) for x, y in zip(a, b, strict=True)]
    c2 = [(_Fr(x), _Fr(y)) for x, y in zip(a2, b2, strict=True)]
    for x in (0.9, 0.92, 0.94, 0.945, 0.95, 0.97):
        assert _Fr(float(m(x))) <= max(_at(c, x), _at(c2, x)), (x, float(m(x)))

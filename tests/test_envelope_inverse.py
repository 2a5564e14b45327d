"""Regressions from a hunt on min_envelope(f, g) of two discrete pairs with subnormal and tiny
masses and its inverse (helper-51, seeds 5051 and 5149), against the exact reference: every
breakpoint of T(P, Q) for float masses is a rational, min{f, g}** is the lower convex hull of
both curves' breakpoints and its inverse that hull reflected (mpmath for e^ε)."""

from __future__ import annotations

from fractions import Fraction as _Fr

import mpmath as _mp
from exact_fractions import at as _at
from exact_fractions import delta as _delta
from exact_fractions import epsilon as _epsilon
from exact_fractions import hull as _hull
from exact_fractions import pair as _pair

import fdp as _fdp
from fdp.operations import min_envelope

_EPS = [-1, 0, 0.5, 1, 5, 50, 200, 700]
_DELTAS = [1e-3, 1e-17, 1e-300]
_XS = [5e-324, 1e-323, 1e-310, 1e-300, 1e-17, 1e-3, 0.1, 0.5, 0.9, 1 - 1e-15, 1 - 2**-52,
       1 - 2**-53]


def _check(c, exact):
    for e in _EPS:
        lo, hi = c.delta_bracket(e)
        t = _delta(exact, e)
        assert _mp.mpf(float(lo)) <= t <= _mp.mpf(float(hi)), (e, float(lo), float(hi), t)
    for d in _DELTAS:
        lo, hi = c.epsilon_bracket(d)
        t = _epsilon(exact, d)
        t = t if t == _mp.inf else max(t, _mp.mpf(0))
        assert float(lo) <= 0 or _mp.mpf(float(lo)) <= t, (d, float(lo), t)
        assert _mp.mpf(float(hi)) >= t, (d, float(hi), t)
    up = c._as_upper()
    for x in _XS:
        t = _at(exact, x)
        assert _Fr(float(c(x))) <= t, (x, float(c(x)), float(t))
        assert _Fr(float(up(x))) >= t, (x, float(up(x)), float(t))


_CASES = [
    # seed 5051: ΔA between the parts read from their heads (1 + 2e-308 against 1 + 7e-323)
    # was 0 for the true 1e-17 below g's kink at loss −0.023; f stayed on top down to −∞ and
    # the envelope lost g's outcome P = 1e-17, Q = 1e-300 (loss −651.6): its inverse read
    # δ(0.5)'s upper end 0.0 for the exact 1e-17 (and at every ε from 1 to 200)
    ([2e-308, 7e-323, 1e-323, 1.0], [0.076416015625, 0.11962890625, 0.081787109375,
                                      0.72216796875],
     [1e-17, 1.0, 7e-323], [1e-300, 0.97705078125, 0.02294921875]),
    # the envelope's P-masses q e^{−ℓ} at a crossing carry ℓ's rounding (mass_rtol 7.6e-13 on
    # the inverse), and the inverse's optimistic reading took only 2e-15 for it:
    # inverse()._as_upper() read 0.3603515624999904 at α = 1e-310 for the exact 0.3603515625
    ([2e-308, 3e-16, 1.0, 1e-300, 3e-16],
     [0.279052734375, 0.548583984375, 1e-300, 1e-200, 0.17236328125],
     [0.6396484375, 0.03466796875, 0.32568359375, 5e-324, 1e-310],
     [1e-310, 0.38037109375, 0.40771484375, 0.2119140625, 1e-323]),
    ([0.18505859375, 1e-17, 0.562744140625, 5e-324, 0.252197265625],
     [0.59423828125, 1e-323, 1e-310, 1e-323, 0.40576171875],
     [7e-323, 1e-200, 2e-308, 1.0, 1e-200],
     [0.321044921875, 0.529296875, 0.087890625, 1e-300, 0.061767578125]),
]


def test_min_envelope_and_its_inverse_against_the_exact_hull():
    for P, Q, P2, Q2 in _CASES:
        f, g = _fdp.from_distributions(P, Q), _fdp.from_distributions(P2, Q2)
        exact = _hull(_pair(P, Q) + _pair(P2, Q2))
        h = min_envelope(f, g)
        _check(h, exact)
        _check(h.inverse(), _hull([(b, a) for a, b in exact]))


def test_envelope_inverse_keeps_the_tiny_outcome_seed_5051():
    P, Q = [2e-308, 7e-323, 1e-323, 1.0], [0.076416015625, 0.11962890625, 0.081787109375,
                                           0.72216796875]
    P2, Q2 = [1e-17, 1.0, 7e-323], [1e-300, 0.97705078125, 0.02294921875]
    inv = min_envelope(_fdp.from_distributions(P, Q), _fdp.from_distributions(P2, Q2)).inverse()
    for e in (0.5, 1.0, 200.0):
        lo, hi = inv.delta_bracket(e)
        assert float(lo) <= 1e-17 * (1 + 1e-15) and float(hi) >= 1e-17 * (1 - 1e-15), (e, lo, hi)

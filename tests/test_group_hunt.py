"""Regressions from the eighth session's hunt (seeds 404590, 403525; helper-53), against exact
references in rationals: every breakpoint of T(P, Q) of float masses, of its inverse, of a
mixture p f + (1 − p) Id, of a lower convex envelope and of a group curve 1 − (1 − f)^{∘k}
(the curve's inverse map composed k times) is rational."""

from __future__ import annotations

from fractions import Fraction as _Fr

import numpy as _np
from exact_fractions import at as _at
from exact_fractions import delta as _delta
from exact_fractions import env as _env
from exact_fractions import hull as _hull
from exact_fractions import inv as _inv
from exact_fractions import mix as _mix
from exact_fractions import pair as _pair
from exact_sums import mp_group_points as _group_points

import fdp as _fdp


def _exact_pair(P, Q):
    sp, sq = sum(map(_Fr, P)), sum(map(_Fr, Q))
    return _pair([_Fr(p) / sp for p in P], [_Fr(q) / sq for q in Q])


_P590 = [0.2579231287929872, 0.2420768712070128, 0.5, 2.7755575615628914e-17]
_Q590 = [9.094947017729282e-13, 9.094947017729282e-13, 0.4999999999990905,
         0.4999999999990905]


def test_group_optimistic_end_not_snapped_to_a_nearby_kink():
    # hunt seed 404590: 1 − g(2.8e-17) = 0.4999999999990905 lies within the relative 1e-10
    # of f's kink 0.5 at which a step of group reads f at the kink too and keeps the smaller
    # value; the optimistic twin's build kept it as well, 1.819e-12 for the exact 2.7285e-12,
    # and δ(0)'s lower end read 0.9999999999980661 for the exact 0.9999999999972715
    exact = _hull(_group_points(_exact_pair(_P590, _Q590), 2))
    g = _fdp.group(_fdp.from_distributions(_P590, _Q590), 2)
    for eps in (0.0, 1e-12, 1e-6, 0.01, 0.5, 1.0, 5.0):
        lo, hi = g.delta_bracket(eps)
        ref = _delta(exact, eps)
        assert lo <= ref, (eps, lo, float(ref))
        assert hi >= ref, (eps, hi, float(ref))
    for a, _ in exact:
        x = float(a)
        assert _Fr(float(g(x))) <= _at(exact, x), x


_P525 = [0.03374035989717223, 2.220446049250313e-16, 0.29080976863753205, 0.1754498714652956,
         0.4999999999999999, 2.0816681711721685e-17]
_Q525 = [0.08465387823179413, 9.094947017729282e-13, 0.4153461217678175, 0.0,
         0.49999999999947886, 2.7755575615628914e-17]


def _poisson(c, r):
    r = _Fr(r)
    add, rem = _mix(c, r), _inv(_mix(_inv(c), r))
    return add, rem, _env(add, _inv(add), rem, _inv(rem))


def test_poisson_remove_of_envelope_keeps_a_faint_kink():
    # hunt seed 403525: the symmetric curve S of poisson_subsample(group(T(P, Q), 2), 0.3) has
    # kinks at α = 0.32455 and 0.57018 where q/p changes by 6.25e-13 only; its inverse's losses
    # were pooled to one value (1.0e-9 ± 1e-9) over both sides of the first, and the mixture
    # of remove⁻¹ (from_masses) merged the outcomes as colinear within 1e-12: the chord read
    # the remove curve at rate 1 − 9.3e-10 f(0.5) = 0.39473007721863823 for the exact
    # 0.39473007721860515
    rate = 0.9999999990686774
    g = _hull(_group_points(_exact_pair(_P525, _Q525), 2))
    s = _poisson(g, 0.3)[2]
    exact = _poisson(s, rate)[1]
    f = _fdp.group(_fdp.from_distributions(_P525, _Q525), 2)
    h = _fdp.poisson_subsample(_fdp.poisson_subsample(f, 0.3).symmetric, rate).remove
    xs = sorted({float(a) for a, _ in exact} | {0.5, 0.57017994868476, 0.5701799486841899})
    for x in xs:
        assert _Fr(float(h(x))) <= _at(exact, x), (x, float(h(x)), float(_at(exact, x)))


def test_from_masses_equal_losses_not_colinear_keep_their_kink():
    # the same at its source: two outcomes given one loss (a bound of both) whose own q/p
    # differ by 2⁻⁴⁰ = 9.1e-13 are kept apart (convex order), not merged into their chord
    # (before: f(0.375) read 0.6249999999997433 for the exact 0.6249999999996589)
    p = [0.375, 0.125, 0.5]
    q = [0.375 + 0.375 * 2.0**-40, 0.125, 0.5 - 0.375 * 2.0**-40]  # (exact in float64)
    c = _pair(p, q)
    h = _fdp.PiecewiseLinear.from_masses(
        _np.array(p), _np.array(q), loss=_np.array([1e-9, 1e-9, -1e-12]),
        loss_err=_np.array([1e-9, 1e-9, 1e-9]))
    for a, _ in c:
        x = float(a)
        assert _Fr(float(h(x))) <= _at(c, x), (x, float(h(x)), float(_at(c, x)))

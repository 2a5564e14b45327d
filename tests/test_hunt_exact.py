"""Regressions from the seventh session's hunt (seeds 400191, 400220, 400213; helper-45),
against exact references: trade-off curves as lists of breakpoints in exact rationals (the masses
are floats, so every breakpoint of T(P, Q), of its inverse, of a mixture p f + (1 − p) Id and of a
lower convex envelope is a rational), and mpmath for randomized response's masses."""

from __future__ import annotations

from fractions import Fraction as _Fr

import mpmath as _mp
from exact_fractions import at as _at
from exact_fractions import delta as _delta
from exact_fractions import env as _env
from exact_fractions import inv as _inv
from exact_fractions import mix as _mix
from exact_fractions import pair as _pair

import fdp as _fdp
from fdp import mechanisms as _FM

_P191 = [0.966796875, 7.466108948025751e-301, 0.03320312499999999, 6.9388939039072276e-18,
         7.7037197775489426e-34, 8.552847072295025e-50, 9.495567745759798e-66,
         1.0542197943230522e-81, 1.1704190886730495e-97, 1.2994262207056123e-113,
         1.442652909029021e-129, 1.6016664761464806e-145, 1.7782069995880618e-161,
         1.9742063534922825e-177, 2.1918093490084028e-193, 2.4333972048578043e-209,
         2.7016136048916332e-225, 2.9993936277912616e-241, 3.3299958654878354e-257,
         3.6970380817711706e-273, 4.10453680129091e-289]
_Q191 = [0.5, 0.4306640625] + [0.002166748046875] * 6 + [0.00433349609375] * 13


def test_profile_lower_kinks_near_one_on_the_lower_side():
    # hunt seed 400191: the lower curve of an inverse mixture (tangent lines 1 − δ − e^ε α)
    # put its last kink 1.1e-16 right of the lines' near α = 1 − 5e-7, and read f 1.1e-16
    # there for the exact 6.95e-18; δ(ε)'s upper end came out 1.1e-16 below the truth
    f = _fdp.from_distributions(_P191, _Q191)
    x = _fdp.poisson_subsample(_fdp.poisson_subsample(f, 1.0).add, 1e-6).add.inverse()
    p = 0.9999999999999716
    h = _fdp.subsample(x, p)
    c = _pair(_P191, _Q191)
    fp = _mix(_inv(_mix(c, 1e-6)), p)
    ref = _env(fp, _inv(fp))  # C_p(f) = min{f_p, f_p⁻¹}**
    for a in (0.9999995021667479, 0.999999502166748, 1 - 1e-6, 0.5, 1e-3):
        t = _at(ref, a)
        assert _Fr(float(h(a))) <= t, (a, float(h(a)), float(t))
        assert _Fr(float(h.lower(a))) <= t
    for e in (0.0, 0.01, 0.1, 1.0):
        lo, hi = h.delta_bracket(e)
        t = _delta(ref, e)
        assert float(h.delta(e)) >= t and float(hi) >= t, (e, float(hi), t)
        assert float(lo) <= t


_P220 = [0.04751275510204081, 0.13042091836734693, 0.07557397959183673, 0.2464923469387755] + [
    0.015625] * 8 + [0.03125] * 12 + [2.7755575615628914e-17]
_Q220 = [9.094947017729282e-13, 5e-324, 0.181640625, 0.4794921875, 0.33886718749909045,
         5.551115123125782e-17, 6.162975822039154e-33, 6.84227765783602e-49,
         7.596454196607838e-65, 8.433758354584418e-81, 9.363352709384396e-97,
         1.0395409765644898e-112, 1.1541223272232168e-128, 1.2813331809171844e-144,
         1.4225655996704494e-160, 1.579365082793826e-176, 1.7534474792067222e-192,
         1.9467177638862434e-208, 2.1612908839133065e-224, 2.3995149022330093e-240,
         2.6639966923902683e-256, 2.9576304654169364e-272, 3.2836294410387006e-288,
         3.6455610097781983e-304, 4.047e-320]


def test_mixture_of_envelope_charges_derived_p_masses():
    # hunt seed 400220: min{f, f⁻¹}**'s P-masses are q e^{−ℓ} (losses near ±700, each to its
    # recorded bound): 3.6e-14 above the truth, and the mixture took them as exact; its
    # inverse (their Q-masses) read f(0.9968207908173234) 8e-15 relative above the exact value
    s = _fdp.symmetrize(_fdp.from_distributions(_P220, _Q220))
    h = _fdp.poisson_subsample(s, 0.01).symmetric
    c = _pair(_P220, _Q220)
    sc = _env(c, _inv(c))
    add = _mix(sc, 0.01)
    rem = _inv(_mix(_inv(sc), 0.01))
    ref = _env(add, _inv(add), rem, _inv(rem))
    for a in (0.9968207908163266, 0.9968207908163267, 0.9968207908173234, 0.9971332908163265,
              0.99, 0.5):
        t = _at(ref, a)
        assert _Fr(float(h(a))) <= t, (a, float(h(a)), float(t))
    from fdp.operations import _mixture_pl
    fai = _mixture_pl(s, 0.01).inverse()
    for a in (0.9968207908163266, 0.9968207908173234, 0.9974457908163266):
        t = _at(_inv(add), a)
        assert _Fr(float(fai(a))) <= t, (a, float(fai(a)), float(t))


def test_randomized_response_subnormal_q_on_the_lower_side():
    # hunt seed 400213: at ε = 745, q = e^{−ε}/(1 + (k − 1)e^{−ε}) = 2.8e-324 rounds to the least
    # subnormal 4.9e-324, and the merged outcome's (k − 2)q multiplied that by 998: f(2.82e-321)
    # read 2.06e-321 for the exact 2.8e-324
    for eps, k in ((745.0, 1000), (744.0, 1000), (744.0, 10**12), (745.0, 2), (740.0, 3)):
        h = _FM.randomized_response(eps, k)
        with _mp.workdps(1000):  # (1 − p ≈ 1e-321: digits enough for the cancellation)
            x = _mp.exp(_mp.mpf(eps))
            p, q = x / (x + k - 1), 1 / (x + k - 1)
            outs = [(q, p), ((k - 2) * q, (k - 2) * q), (p, q)]  # by loss ε, 0, −ε

            def truth(a, outs=outs):
                a, ca, cq = _mp.mpf(a), _mp.mpf(0), _mp.mpf(0)
                for pm, qm in outs:
                    if pm > 0 and ca + pm >= a:
                        return 1 - cq - (a - ca) / pm * qm
                    ca, cq = ca + pm, cq + qm
                return 1 - cq

            for a in (5e-324, 1e-323, 2.816e-321, 2.82e-321, 3e-321, 1e-315, 1e-300, 0.5):
                got = float(h(a))
                assert got <= truth(a), (eps, k, a, got, truth(a))

"""The bottom lines of from_eps_delta, through a Poisson pair, its group, inverse and
symmetrization, against an exact reference in mpmath (helper-62, hunt seed 410344).

from_eps_delta([0.1, 0.5, 1], [0.1, 1e-30, 0]) is sup_i f_{ε_i,δ_i}; near α = 1 the bottom line
of f_{1,0}, e^{−1}(1 − α), lies above that of f_{0.5,1e-30}, e^{−0.5}(1 − 1e-30 − α), on the
last 2.5e-30 of α. The hull of the lines compared the bottom lines in their δ = 1 − s(1 − δ_i),
which lose every δ_i below an ulp of 1, and dropped the line of f_{1,0}: the curve ended on a
P-atom 1e-30 at −∞ loss for the exact segment of loss −1 (P-mass 2.5e-30, Q-mass 9.3e-31), a
curve below the truth read as its own optimistic side. Through the Poisson add pair that atom
became the inverse's top loss log 10 (the exact top loss is 0.84), and
group(poisson_subsample(f, 0.9).add, 2).inverse() and its symmetrization read δ(1.39456)'s
lower end 1.99e-30 for the exact 6.37e-31 (δ(1.8694): 1.75e-30 for 0)."""

from __future__ import annotations

import mpmath as mp
import pytest
from exact_sums import mp_breakpoints, mp_group_points, mp_hull_pair, mp_points_delta

import fdp

#: working precision of the reference (digits) and the slack of its comparisons: δ is read as
#: 1 − β − e^ε α, which cancels from 1, so the reference is known to about 10^−(DPS − 10)
DPS = 200
SLACK = mp.mpf(10) ** -170


def _mp_envelope_pair(eps: list[float], delta: list[float]) -> tuple[list[mp.mpf], list[mp.mpf]]:
    """The pair (P, Q) of sup_i f_{ε_i,δ_i} (DRS Prop 2.12), exactly: the upper envelope of the
    lines 1 − δ_i − e^{ε_i} α, e^{−ε_i}(1 − δ_i − α) and 0, evaluated at all their pairwise
    intersections, then its lower convex hull's pair (exact_sums.mp_hull_pair)."""
    lines = [(mp.mpf(0), mp.mpf(0))]  # (intercept c, slope s): β = c − s α
    for e, d in zip(eps, delta, strict=True):
        e, d = mp.mpf(e), mp.mpf(d)
        lines += [(1 - d, mp.exp(e)), (mp.exp(-e) * (1 - d), mp.exp(-e))]
    xs = {mp.mpf(0), mp.mpf(1)}
    for i, (c1, s1) in enumerate(lines):
        for c2, s2 in lines[i + 1:]:
            if s1 != s2:
                x = (c1 - c2) / (s1 - s2)
                if 0 < x < 1:
                    xs.add(x)
    return mp_hull_pair([(x, max(c - s * x for c, s in lines)) for x in sorted(xs)])


def _exact(eps: list[float], delta: list[float], rate: float, direction: str,
           k: int) -> list[tuple[mp.mpf, mp.mpf]]:
    """Breakpoints of group(poisson_subsample(from_eps_delta(eps, delta), rate).<direction>, k),
    exactly: the add pair T(P, (1 − r)P + rQ), the remove pair T((1 − r)Q + rP, Q) (theory §7;
    1 − r in mpmath), and the group's kinks (DRS Thm 2.14)."""
    pm, qm = _mp_envelope_pair(eps, delta)
    r = mp.mpf(rate)
    if direction == "add":
        pair = (pm, [(1 - r) * a + r * b for a, b in zip(pm, qm, strict=True)])
    else:
        pair = ([(1 - r) * b + r * a for a, b in zip(pm, qm, strict=True)], qm)
    pts = mp_breakpoints(*pair)
    return mp_group_points(pts, k) if k > 1 else pts


def _mirror(pts: list[tuple[mp.mpf, mp.mpf]]) -> list[tuple[mp.mpf, mp.mpf]]:
    """The inverse curve's breakpoints."""
    return [(b, a) for a, b in pts][::-1]


def _check(curve: fdp.TradeOff, ref_pts: list[list[tuple[mp.mpf, mp.mpf]]], at: float,
           what: str) -> None:
    ref = max(mp_points_delta(p, mp.mpf(at)) for p in ref_pts)
    lo, hi = curve.delta_bracket(at)
    assert mp.mpf(lo) <= ref + SLACK, (what, at, lo, mp.nstr(ref, 17))
    assert mp.mpf(hi) >= ref - SLACK, (what, at, hi, mp.nstr(ref, 17))


def _kinks(pts: list[tuple[mp.mpf, mp.mpf]]) -> list[float]:
    """The losses of the curve's segments (the ε where δ has kinks), in [0, 40] (beyond, a
    difference at the reference's rounding, 1e-200, would read as a segment's loss)."""
    out = []
    for (a0, b0), (a1, b1) in zip(pts[:-1], pts[1:], strict=True):
        if a1 > a0 and b0 > b1:
            e = float(mp.log((b0 - b1) / (a1 - a0)))
            if 0.0 <= e <= 40.0:
                out.append(e)
    return out


EPS_AT = [0.0, 0.5, 1.0, 1.3945597152507612, 1.8694033280023326, 3.0]


def test_repro_seed_410344() -> None:
    """The hunt's case: the inverse and the symmetrization of the group of the add pair."""
    f0 = fdp.from_eps_delta([0.1, 0.5, 1.0], [0.1, 1e-30, 0.0])
    m = fdp.poisson_subsample(f0, 0.9).add
    g = fdp.group(m, 2)
    with mp.workdps(DPS):
        ex = _exact([0.1, 0.5, 1.0], [0.1, 1e-30, 0.0], 0.9, "add", 2)
        inv = _mirror(ex)
        # (before: δ(1.39456)'s lower end 1.99e-30 on both curves, the exact 6.37e-31 and 9.0e-31)
        assert mp_points_delta(inv, mp.mpf(1.3945597152507612)) < mp.mpf(7e-31)
        for at in EPS_AT + _kinks(ex) + _kinks(inv):
            _check(g, [ex], at, "group")
            _check(g.inverse(), [inv], at, "inverse")
            _check(fdp.symmetrize(g), [ex, inv], at, "symmetrize")
        # the pair itself: its inverse's top loss is 0.84 (it read log 10, δ(1) = 7.3e-31 for 0)
        one = _exact([0.1, 0.5, 1.0], [0.1, 1e-30, 0.0], 0.9, "add", 1)
        for at in (0.5, 0.8, 0.9, 1.0, 2.0):
            _check(m.inverse(), [_mirror(one)], at, "pair inverse")


CASES = [
    # (ε_i, δ_i, rate, direction, k)
    ([0.1, 0.5, 1.0], [0.1, 1e-30, 0.0], 0.3, "add", 2),
    ([0.1, 0.5, 1.0], [0.1, 1e-30, 0.0], 0.9, "add", 3),
    ([0.1, 0.5, 1.0], [0.1, 1e-30, 0.0], 0.9, "remove", 2),
    ([0.2, 1.0, 2.0], [1e-3, 1e-25, 1e-40], 0.7, "add", 2),
    ([0.3, 0.8, 1.5, 2.5], [0.05, 1e-20, 1e-35, 0.0], 0.5, "add", 2),
]


@pytest.mark.parametrize(("eps", "delta", "rate", "direction", "k"), CASES)
def test_variants(eps: list[float], delta: list[float], rate: float, direction: str,
                  k: int) -> None:
    f0 = fdp.from_eps_delta(eps, delta)
    m = getattr(fdp.poisson_subsample(f0, rate), direction)
    g = fdp.group(m, k)
    with mp.workdps(DPS):
        ex = _exact(eps, delta, rate, direction, k)
        inv = _mirror(ex)
        one = _mirror(_exact(eps, delta, rate, direction, 1))
        for at in sorted(set(EPS_AT + _kinks(ex) + _kinks(inv))):
            _check(g, [ex], at, "group")
            _check(g.inverse(), [inv], at, "inverse")
            _check(fdp.symmetrize(g), [ex, inv], at, "symmetrize")
            _check(m.inverse(), [one], at, "pair inverse")


@pytest.mark.parametrize(("eps", "delta"), [
    ([0.1, 0.5, 1.0], [0.1, 1e-30, 0.0]),
    ([0.5, 1.0, 2.0], [1e-30, 1e-40, 0.0]),
    ([1e-3, 2.0, 3.0], [1e-80, 1e-100, 0.0]),
])
def test_envelope_bottom_lines(eps: list[float], delta: list[float]) -> None:
    """from_eps_delta's masses near α = 1 (the bottom lines): its −∞ P-atom and its last
    segments' masses against the exact envelope's (before: a P-atom 1e-30 at −∞ for the exact
    segment of loss −1)."""
    f = fdp.from_eps_delta(eps, delta)
    p, q, loss = f._masses
    with mp.workdps(DPS):
        pm, qm = _mp_envelope_pair(eps, delta)
        ex = [(a, b) for a, b in zip(pm, qm, strict=True) if a > 0]
        # the exact curve has no P-mass at −∞ (its last line has a positive slope)
        assert all(b > 0 for _, b in ex)
        assert not ((p > 0) & (q == 0)).any(), (p, q, loss)
        # its last segment (the least loss; the reference's collinear pieces merged) and f's
        # last outcome agree to f's mass_rtol
        least = min(b / a for a, b in ex)
        last = [(a, b) for a, b in ex if b / a <= least * (1 + mp.mpf(10) ** -100)]
        a, b = mp.fsum(x for x, _ in last), mp.fsum(y for _, y in last)
        assert abs(float(loss[-1]) - mp.log(least)) <= 1e-15, (loss[-1], mp.log(least))
        assert abs(mp.mpf(float(p[-1])) - a) <= 1e-13 * a, (p[-1], a)
        assert abs(mp.mpf(float(q[-1])) - b) <= 1e-13 * b, (q[-1], b)

"""Exact references for trade-off curves given by breakpoints, independent of fdp: every
breakpoint of T(P, Q) for float masses is a rational, and so is every breakpoint of its inverse,
of a mixture p f + (1 − p) Id and of a lower convex envelope min{f, g}** (theory §3, §7); δ(ε)
from the breakpoints in mpmath (subnormal α need the digits)."""

from __future__ import annotations

from fractions import Fraction
from functools import cmp_to_key
from typing import Any

import mpmath as mp

Curve = list[tuple[Fraction, Fraction]]


def hull(pts: Any) -> Curve:
    """The lower convex hull of the points and (0, 1), (1, 0) (monotone chain, exact)."""
    pts = sorted(set(pts) | {(Fraction(0), Fraction(1)), (Fraction(1), Fraction(0))})
    h: Curve = []
    for pt in pts:
        while len(h) >= 2:
            (x1, y1), (x2, y2) = h[-2], h[-1]
            if (x2 - x1) * (pt[1] - y1) - (y2 - y1) * (pt[0] - x1) <= 0:
                h.pop()
            else:
                break
        h.append(pt)
    return h


def pair(p: list[float], q: list[float]) -> Curve:
    """The breakpoints of T(P, Q), each side normalized exactly (outcomes by decreasing q/p,
    Neyman–Pearson; Q-only outcomes the +∞ atom)."""
    sp, sq = sum(map(Fraction, p)), sum(map(Fraction, q))
    o = [(Fraction(a) / sp, Fraction(b) / sq) for a, b in zip(p, q, strict=True) if a or b]
    o.sort(key=cmp_to_key(lambda x, y: (y[1] * x[0] > x[1] * y[0]) - (y[1] * x[0] < x[1] * y[0])))
    pts, ca, cq = [(Fraction(0), Fraction(1))], Fraction(0), Fraction(0)
    for a, b in o:
        ca, cq = ca + a, cq + b
        pts.append((ca, 1 - cq))
    return hull(pts)


def inv(c: Curve) -> Curve:
    """The inverse: the curve reflected across the diagonal."""
    return hull([(b, a) for a, b in c])


def mix(c: Curve, p: float) -> Curve:
    """p f + (1 − p) Id."""
    r = Fraction(p)
    return hull([(a, r * b + (1 - r) * (1 - a)) for a, b in c])


def env(*cs: Curve) -> Curve:
    """min{…}**."""
    return hull([pt for c in cs for pt in c])


def at(c: Curve, x: float) -> Fraction:
    """The curve at α = x (the lower end of a vertical step)."""
    xf = Fraction(x)
    for (a0, b0), (a1, b1) in zip(c, c[1:], strict=False):
        if a0 <= xf <= a1:
            return min(b0, b1) if a1 == a0 else b0 + (b1 - b0) * (xf - a0) / (a1 - a0)
    raise ValueError(x)


def _q(r: Fraction) -> Any:
    return mp.mpf(r.numerator) / r.denominator


def delta(c: Curve, eps: float) -> Any:
    """δ(ε) = max over breakpoints of 1 − β − e^ε α (and 0), to 400 digits."""
    with mp.workdps(400):
        x = mp.exp(mp.mpf(eps))
        return max([mp.mpf(0)] + [1 - _q(b) - x * _q(a) for a, b in c])


def epsilon(c: Curve, d: float) -> Any:
    """inf{ε : δ(ε) ≤ d} from the breakpoints (∞ where a breakpoint at α = 0 exceeds d)."""
    with mp.workdps(400):
        best = mp.mpf("-inf")
        for a, b in c:
            v = 1 - _q(b) - mp.mpf(d)
            if v > 0:
                if a == 0:
                    return mp.inf
                best = max(best, mp.log(v / _q(a)))
        return best

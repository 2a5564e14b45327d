"""Private numerical helpers shared by several modules: standard-normal tails that keep relative
precision, the lower convex hull of points and the upper envelope of lines.
"""

from __future__ import annotations

import decimal
import math
import sys
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import special

__all__ = [
    "UNIT_ROUNDOFF", "norm_cdf", "norm_sf", "norm_isf", "lower_hull", "lower_hull_c",
    "line_envelope", "add_up", "add_up_array", "add_down", "sum_up", "mul_up", "div_up",
    "product_up", "quotient_up", "round_decimal", "merged_loss_err",
]

#: unit roundoff u of float64 (half the machine epsilon)
UNIT_ROUNDOFF = 2.0**-53
#: the least positive float64 (a subnormal, 2^-1074): a positive value rounded up is never below it
TINY = math.ulp(0.0)
#: the least positive normal float64 (below it a product keeps an absolute error of ~TINY)
MIN_NORMAL = sys.float_info.min
#: the largest finite float64, and the largest x with e^x finite
FLOAT_MAX = sys.float_info.max
LOG_FLOAT_MAX = math.log(FLOAT_MAX)


def merged_loss_err(count: np.ndarray | float, *mags: np.ndarray | float) -> np.ndarray:
    """A bound on the rounding of a merged loss λ = e + log m − log Σ_i m_i e^{∓(ℓ_i − e)} of
    ``count`` terms, each argument within (e, e + h]: the terms' arguments, exps and the sum
    within (count + 4) ulps, the logarithms and additions within 4 ulps of the magnitudes
    ``mags`` (|e|, |log m|, |log Σ|, the width h, …). Used where a bin's loss is merged from its
    outcomes' or sub-bins' given losses (:class:`fdp.tradeoff.LossBins`)."""
    mag = sum(np.abs(np.asarray(m, dtype=float)) for m in mags)
    return np.asarray((np.asarray(count, dtype=float) + 4.0 + 4.0 * mag) * UNIT_ROUNDOFF)


def moved_coordinate(
    v: np.ndarray, vc: np.ndarray, rho: float, up: bool, at_zero: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """A coordinate ``v`` of a trade-off curve (α or β, given with its complement ``vc``) moved
    up (or down) by ``rho`` relative in the coordinate that stores it (``v`` up to 1/2, the
    complement above), and by 8 least subnormals (with ``at_zero`` False: not where that
    coordinate is exactly 0). Returns the moved pair (v', 1 − v'), clipped to [0, 1]: a bound on
    any value within ``rho`` of the given one, on the side asked. Used by the directed reads of
    :meth:`fdp.tradeoff.PiecewiseLinear._eval_pair` and the group's kink caps
    (:func:`fdp.operations._read_down`)."""
    s = 1.0 if up else -1.0
    t = s * 8.0 * TINY
    m = np.clip(v * (1.0 + s * rho) + (t if at_zero else t * (v > 0.0)), 0.0, 1.0)
    mc = np.clip(vc * (1.0 - s * rho) - (t if at_zero else t * (vc > 0.0)), 0.0, 1.0)
    lo = v <= 0.5
    return np.where(lo, m, 1.0 - mc), np.where(lo, 1.0 - m, mc)


def add_up(a: float, b: float) -> float:
    """a + b rounded toward +∞ (not to nearest): the float sum, one ulp higher where it rounded
    down. The rounding error of s = fl(a + b) is exactly (a − (s − b')) + (b − b'), b' = s − a
    (Knuth's TwoSum; Higham 2002, §4.3), so s is raised only where the exact sum exceeds it. A
    probability bound that gathers masses (a +∞ atom plus a window's tail) keeps them all: 0.1 +
    1e-23 rounds to 0.1 to nearest, which read δ(ε) = 0.1 where the truth was above it.

    Examples
    --------
    >>> add_up(0.1, 1e-23) > 0.1, add_up(0.5, 0.25) == 0.75
    (True, True)
    """
    s = a + b
    if not math.isfinite(s):
        # (two finite terms whose sum overflowed below −max: the float above it is −max)
        return -sys.float_info.max if (s == -math.inf and math.isfinite(a)
                                       and math.isfinite(b)) else s
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return math.nextafter(s, math.inf) if err > 0.0 else s


def add_down(a: float, b: float) -> float:
    """a + b rounded toward −∞ (:func:`add_up` mirrored): for optimistic bounds.

    Examples
    --------
    >>> add_down(0.1, -1e-23) < 0.1, add_down(0.5, 0.25) == 0.75
    (True, True)
    """
    return -add_up(-a, -b)


def add_up_array(a: float | np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b elementwise (a scalar or an array of b's shape), rounded toward +∞
    (:func:`add_up` on arrays).

    Examples
    --------
    >>> bool(add_up_array(0.1, np.array([1e-23]))[0] > 0.1)
    True
    """
    b = np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        s = a + b
        bb = s - a
        err = (a - (s - bb)) + (b - bb)
        out = np.where(np.isfinite(s) & (err > 0.0), np.nextafter(s, np.inf), s)
    # (finite terms whose sum overflowed below −max: the float above it is −max, as add_up)
    return np.where((out == -np.inf) & np.isfinite(a) & np.isfinite(b), -sys.float_info.max,
                    out)


def sum_up(values: Any) -> float:
    """Σ values rounded toward +∞: ``math.fsum`` (correctly rounded to nearest), one ulp higher
    where the exact residual Σ values − s is positive (fsum of the values and −s has the
    residual's sign exactly: a nonzero residual of floats is at least the least subnormal).

    Examples
    --------
    >>> sum_up([0.1, 0.2]) >= 0.30000000000000004, sum_up([0.5, 0.25]) == 0.75
    (True, True)
    """
    vals = [float(v) for v in np.ravel(np.asarray(values, dtype=float))]
    try:
        s = math.fsum(vals)
        if math.isfinite(s) and math.fsum([*vals, -s]) > 0.0:
            s = math.nextafter(s, math.inf)
        return s
    except OverflowError:  # (fsum's partials overflowed, near ±1.8e308: the exact sum instead)
        if any(math.isinf(v) for v in vals):
            raise
        exact = sum((Fraction(v) for v in vals), Fraction(0))
        big = Fraction(sys.float_info.max)
        if exact > big:
            return math.inf
        if exact < -big:
            return -sys.float_info.max
        s = float(exact)
        return math.nextafter(s, math.inf) if Fraction(s) < exact else s


def mul_up(a: float, b: float) -> float:
    """a·b for a, b ≥ 0, rounded toward +∞ at every magnitude: IEEE multiplication rounds to
    nearest, subnormal and overflowing results included, so one ulp up is never below the exact
    product (a relative margin such as (1 + 4u) is lost where the product is subnormal).

    Examples
    --------
    >>> mul_up(1e-320, 0.3) > 0.0, mul_up(0.5, 0.5)
    (True, 0.25000000000000006)
    """
    p = a * b
    return math.nextafter(p, math.inf) if (a > 0.0 and b > 0.0 and p < math.inf) else p


def div_up(a: float, b: float) -> float:
    """a/b for a ≥ 0, b > 0, rounded toward +∞ at every magnitude (as :func:`mul_up`).

    Examples
    --------
    >>> div_up(1e-320, 3.0) >= 1e-320 / 3.0, div_up(1.0, 1e-320)
    (True, inf)
    """
    q = a / b
    return math.nextafter(q, math.inf) if (a > 0.0 and q < math.inf) else q


def product_up(k: float, x: float) -> float:
    """k·x rounded toward +∞ exactly (the float product compared with the rational one), as
    :func:`quotient_up`: group(G_μ, k) = G_{kμ} at a μ never below kμ; a positive product that
    underflows is the least subnormal, not 0.

    Examples
    --------
    >>> product_up(3, 0.5), product_up(3, 0.1) >= 3 * 0.1
    (1.5, True)
    """
    m = k * x
    if math.isfinite(m) and Fraction(m) < Fraction(k) * Fraction(x):
        m = math.nextafter(m, math.inf)
    return m


def quotient_up(a: float, b: float) -> float:
    """a/b for a ≥ 0, b > 0, rounded toward +∞ exactly: the IEEE quotient where it is exact,
    else one ulp above it (compared as rationals; :func:`div_up` always adds the ulp). For a
    mechanism's μ = Δ/b, so that its curve holds at the exact ratio (to nearest,
    ``laplace(16.453929007086575, 0.022000016697242608)`` was L at a μ half an ulp low, its
    δ(747.134028052022) 5e-14 relative below the truth; a hunt).

    Examples
    --------
    >>> quotient_up(1.0, 4.0), quotient_up(1.0, 3.0) > 1.0 / 3.0
    (0.25, True)
    """
    q = a / b
    if math.isfinite(q) and Fraction(q) < Fraction(a) / Fraction(b):
        q = math.nextafter(q, math.inf)
    return q


def div_down_array(a: np.ndarray, b: float) -> np.ndarray:
    """a/b for a ≥ 0 and 0 < b ≤ 1, rounded toward 0 exactly: the IEEE quotient (correctly
    rounded) where q·b ≤ a exactly, else one ulp below. The sign of a − q·b is exact by
    Dekker's two-product (Dekker 1971) and Sterbenz's lemma (q·b is within a factor 2 of a);
    below a = 2⁻⁹⁶⁰, where the product's error term could leave the normal range, the quotient
    is simply taken one ulp down (never above a/b, since it was within half an ulp). A
    relative margin instead made an exact quotient such as p/p = 1 read 1 − 2u.

    Examples
    --------
    >>> import numpy as np
    >>> div_down_array(np.array([0.3, 1e-320, 0.1]), 0.1).tolist()
    [2.9999999999999996, 9.9e-320, 1.0]
    """
    a = np.asarray(a, dtype=float)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        q = a / b
        split = 134217729.0  # 2²⁷ + 1
        cq, cb = split * q, split * b
        qh = cq - (cq - q)
        ql = q - qh
        bh = cb - (cb - b)
        bl = b - bh
        ph = q * b
        pl = ((qh * bh - ph) + qh * bl + ql * bh) + ql * bl
        over = (a - ph) - pl < 0.0
    # (below 2⁻⁹⁶⁰ the error term may leave the normal range, and above ~1.3e300 the split
    # q·(2²⁷ + 1) overflows, leaving NaN: one ulp down there, as for small a)
    small = (a < 2.0**-960) | ~np.isfinite(cq)
    down = np.nextafter(q, 0.0)
    out = np.where(np.isfinite(q) & (over | small) & (a > 0.0), down, q)
    # (a finite quotient beyond the float range: its floor is the largest float, not ∞)
    return np.where(np.isinf(q) & np.isfinite(a), sys.float_info.max, out)


def round_decimal(x: float, digits: int, side: str, fixed: bool = False) -> decimal.Decimal:
    """``x`` to ``digits`` significant decimal digits (``fixed``: to ``digits`` decimal places),
    rounded toward ``side``: "up" (ceiling:
    an ε, a σ, a bound on risk printed as a guarantee) or "down" (floor: a lower end, a largest
    μ). Printing a guarantee to nearest can show less than is certified: `%.6g` printed
    ε = 3.09943 for 3.0994303, whose δ is 1.000004e-10 > 1e-10. (Finite x.)

    Examples
    --------
    >>> str(round_decimal(3.0994303, 6, "up")), str(round_decimal(1.23456, 4, "down"))
    ('3.09944', '1.234')
    >>> str(round_decimal(2.381199995, 6, "down", fixed=True))
    '2.381199'
    """
    rnd = decimal.ROUND_CEILING if side == "up" else decimal.ROUND_FLOOR
    if fixed:
        # (a context wide enough for the integer part too: the default 28 digits raised
        # InvalidOperation for x = 1e16 at 12 places)
        ctx = decimal.Context(prec=max(28, digits + len(str(int(abs(x)))) + 2), rounding=rnd)
        return decimal.Decimal(x).quantize(decimal.Decimal(1).scaleb(-digits), context=ctx)
    return decimal.Context(prec=digits, rounding=rnd).create_decimal(x)


def echo_input(x: float, text: str) -> str:
    """``text`` (x as a report or the CLI prints it) if it reads back as the float x, else x's
    shortest round-trip digits. For the inputs a guarantee is computed at (δ, an FPR, α, μ):
    a δ of 2.817440941094162e-06 printed to nearest as 2.817e-06, next to an ε computed at
    the unprinted δ, read ε 1.9e-5 below the true ε(2.817e-06).

    Examples
    --------
    >>> echo_input(1e-05, "1.000e-05"), echo_input(0.1234567, "0.123457")
    ('1.000e-05', '0.1234567')
    """
    try:
        same = float(text) == x
    except ValueError:  # ("∞", "–": not numbers; printed as they are)
        same = True
    return text if same or not math.isfinite(x) else repr(float(x))


def norm_cdf(x: np.ndarray | float) -> np.ndarray:
    """Φ(x), accurate in both tails."""
    return special.ndtr(x)


def norm_sf(x: np.ndarray | float) -> np.ndarray:
    """1 - Φ(x) = Φ(-x), accurate in the upper tail."""
    return special.ndtr(-np.asarray(x, dtype=float))


def norm_isf(a: np.ndarray | float) -> np.ndarray:
    """Φ⁻¹(1 - a), accurate for tiny a and for a close to 1.

    Uses -Φ⁻¹(a) for a < 1/2 (no rounding of 1 - a) and Φ⁻¹(1 - a) otherwise (1 - a exact there).
    """
    a = np.asarray(a, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(a < 0.5, -special.ndtri(a), special.ndtri(1.0 - a))


def _ulps(v: float) -> int:
    """A finite float as an exact integer multiple of the least subnormal 2⁻¹⁰⁷⁴."""
    n, d = v.as_integer_ratio()
    return n << (1074 - d.bit_length() + 1)


def lower_hull(x: np.ndarray, y: np.ndarray, exact: bool = True) -> np.ndarray:
    """Indices of the lower convex hull of points sorted by x (Andrew's monotone chain).

    Points with equal x keep only the lowest. Returns indices into the input in increasing x.
    Each turn is decided exactly (``exact``; in float only, where any subset of the points
    will do: chords through points above a convex curve, :meth:`TradeOff.to_piecewise`).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    order = np.lexsort((y, x))
    xs, ys = x.tolist(), y.tolist()
    ix: list[int] = []
    iy: list[int] = []
    hull: list[int] = []
    last_x = None
    for i in order.tolist():
        if last_x is not None and xs[i] == last_x:
            continue  # same x, higher y: not on the lower hull
        last_x = xs[i]
        while len(hull) >= 2:
            o, a = hull[-2], hull[-1]
            t1 = (xs[a] - xs[o]) * (ys[i] - ys[o])
            t2 = (ys[a] - ys[o]) * (xs[i] - xs[o])
            cross = t1 - t2
            # A cross product within its rounding of 0 (each difference and product within u,
            # a product that underflowed within half a subnormal ulp) is taken exactly: next to
            # α = 0 the products of subnormal Δα and Δβ underflowed to 0, and a kink below the
            # chord was dropped: from_points([5e-316, 1e-315], [1 − 1.5e-12, 1 − 2e-12],
            # exact=True) read f(5e-316) = 1 − 1.0e-12 for the exact 1 − 1.5e-12
            if exact and abs(cross) <= 4.0 * UNIT_ROUNDOFF * (abs(t1) + abs(t2)) + 2.0 * TINY:
                if not ix:  # (the points as integer multiples of the least subnormal)
                    ix[:] = [_ulps(v) for v in xs]
                    iy[:] = [_ulps(v) for v in ys]
                turn = ((ix[a] - ix[o]) * (iy[i] - iy[o])
                        - (iy[a] - iy[o]) * (ix[i] - ix[o]))
                cross = 1.0 if turn > 0 else -1.0 if turn < 0 else 0.0
            if cross <= 0:
                hull.pop()
            else:
                break
        hull.append(int(i))
    return np.asarray(hull, dtype=int)


def lower_hull_c(
    a: np.ndarray, ac: np.ndarray, b: np.ndarray, bc: np.ndarray
) -> np.ndarray:
    """Indices of the lower convex hull of points (a, b) of a decreasing curve, sorted by a
    (ties broken by 1 − a), given with their complements ac = 1 − a and bc = 1 − b.

    Andrew's monotone chain with the slope between two points computed from whichever
    coordinates resolve it: differences of complements where both points are above 1/2, of the
    values otherwise. So points 1e-100 apart next to β = 1 (a privacy curve's tail at α → 0)
    keep their geometry, which a hull of the rounded values would lose. A point is dropped only
    if the chain does not turn counter-clockwise there.
    """
    a, ac, b, bc = (np.asarray(x, dtype=float).tolist() for x in (a, ac, b, bc))

    def slope(i: int, j: int) -> float | Fraction:
        da = ac[i] - ac[j] if min(a[i], a[j]) > 0.5 else a[j] - a[i]
        db = bc[i] - bc[j] if min(b[i], b[j]) > 0.5 else b[j] - b[i]
        if da <= 0.0:
            return -math.inf if db < 0.0 else 0.0
        s = db / da
        # A slope that overflowed is the exact ratio of the two differences instead: two
        # overflowed slopes were equal (−∞ ≥ −∞), and the middle point was dropped though it
        # lies below the chord. Next to α = 0 with subnormal P-masses, subsample(
        # from_distributions(P, Q), 0.9) (P[0] = 5e-324, next kink at 4.05e-320) lost its kink
        # (5e-324, 0.86904296875) between slopes −2.6e322 and −5.8e317, and read
        # f(5e-324) = 0.99983, 0.131 above the truth (a hunt).
        return Fraction(db) / Fraction(da) if math.isinf(s) else s

    hull: list[int] = []
    for i in range(len(a)):
        while len(hull) >= 2:
            s1, s2 = slope(hull[-2], hull[-1]), slope(hull[-1], i)
            # (no tolerance term: a slope overflowed to ±∞ times 0 is NaN, and the comparison
            # then kept a point that lies above the hull)
            if s1 >= s2:
                hull.pop()
            else:
                break
        hull.append(i)
    return np.asarray(hull, dtype=int)


def line_envelope(
    slopes: np.ndarray, intercepts: np.ndarray, complements: np.ndarray | None = None
) -> Any:
    """Breakpoints on [0, 1] of max(0, max_i (intercepts_i + slopes_i x)), a convex PL function.

    Returns ``(x, y)`` with x increasing from 0 to 1. Used to turn a list of affine minorants (for
    example the lines 1 - δ_i - e^{ε_i} α of a privacy profile) into a piecewise-linear curve.

    With ``complements`` (1 − intercepts_i, given exactly: the δ_i) the hull is taken from
    differences of the complements, so lines whose intercepts 1 − δ_i round to 1.0 keep their
    order (δ_i below 1e-16 were lost), and ``(x, y, y_c)`` is returned with y_c = 1 − y from
    the active line, d_i − s_i x, to full relative precision.
    """
    s = np.append(np.asarray(slopes, dtype=float), 0.0)
    c = np.append(np.asarray(intercepts, dtype=float), 0.0)
    cc = None if complements is None else np.append(np.asarray(complements, dtype=float), 1.0)
    # Upper envelope of lines: sort by slope, keep for equal slopes the largest intercept.
    order = np.lexsort((c, s)) if cc is None else np.lexsort((-cc, s))
    s, c = s[order], c[order]
    keep = np.append(s[1:] != s[:-1], True)
    s, c = s[keep], c[keep]
    if cc is not None:
        cc = cc[order][keep]
    # differences of intercepts: c_i − c_j, from the complements where given
    ccs = cc
    if ccs is None:
        def dc(i: int, j: int) -> float:
            return float(c[i] - c[j])
    else:
        def dc(i: int, j: int) -> float:
            return float(ccs[j] - ccs[i])
    # For a max of lines on [0, 1] the line active at x = 0 has the largest intercept; as x grows
    # the active line's slope increases. Standard convex-hull trick over lines sorted by slope.
    hs: list[int] = []
    for i in range(len(s)):
        while len(hs) >= 2:
            j, k = hs[-2], hs[-1]
            # line k is useless if intersection(j, i) <= intersection(j, k)
            if dc(i, j) * (s[k] - s[j]) >= dc(k, j) * (s[i] - s[j]):
                hs.pop()
            else:
                break
        hs.append(i)
    hs_arr = np.asarray(hs)
    s, c = s[hs_arr], c[hs_arr]
    if cc is not None:
        cc = cc[hs_arr]
    # line k is active on [xs[k-1], xs[k]]; intersections are increasing after the pruning
    if cc is None:
        xs = (c[:-1] - c[1:]) / (s[1:] - s[:-1])
    else:
        xs = (cc[1:] - cc[:-1]) / (s[1:] - s[:-1])
    k0 = int(np.searchsorted(xs, 0.0, side="right"))
    k1 = int(np.searchsorted(xs, 1.0, side="left"))
    inner = np.arange(k0, k1)
    pts_x = np.concatenate([[0.0], xs[inner], [1.0]])
    vals = np.concatenate([[c[k0]], c[inner] + s[inner] * xs[inner], [c[k1] + s[k1]]])
    if cc is None:
        return pts_x, vals
    comp = np.concatenate([[cc[k0]], cc[inner] - s[inner] * xs[inner], [cc[k1] - s[k1]]])
    return pts_x, np.where(comp < 0.5, 1.0 - comp, vals), comp


_LN_SQRT_2PI = 0.9189385332046727417803297


def norm_hazard(z: np.ndarray | float, log_cdf: np.ndarray | float) -> np.ndarray:
    """φ(z)/Φ(z) given log Φ(z): ≈ |z| for z → −∞ (taken as |z|(1 + 1e-12) below −1e6), → 0
    for z → +∞. It bounds how far log Φ moves per unit error in z (used for round-off bounds)."""
    z = np.asarray(z, dtype=float)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        hz = np.exp(np.minimum(-0.5 * z * z - _LN_SQRT_2PI - np.asarray(log_cdf), 700.0))
    return np.where(z < -1e6, -z * (1.0 + 1e-12), np.where(z > 40.0, 0.0, hz))


def _stirlerr(n: np.ndarray) -> np.ndarray:
    """log n! − [(n + ½) log n − n + log √(2π)] for n ≥ 1 (Loader 2000): the gamma function
    below 16, the Stirling–De Moivre series above (error below 1e-17)."""
    n = np.asarray(n, dtype=float)
    out = np.empty_like(n)
    small = n <= 15.0
    ns = n[small]
    out[small] = special.gammaln(ns + 1.0) - (ns + 0.5) * np.log(ns) + ns - _LN_SQRT_2PI
    nb = n[~small]
    nn = nb * nb
    out[~small] = (
        1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - 1 / (1188 * nn)) / nn) / nn) / nn
    ) / nb
    return out


def _bd0(x: np.ndarray | float, m: np.ndarray | float) -> np.ndarray:
    """x log(x/m) + m − x ≥ 0 without cancellation (Loader 2000: a series in (x − m)/(x + m)
    where x is close to m)."""
    x, m = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(m, dtype=float))
    out = np.empty(x.shape)
    close = np.abs(x - m) < 0.1 * (x + m)
    xc, mc = x[close], m[close]
    v = (xc - mc) / (xc + mc)
    s = (xc - mc) * v
    ej = 2.0 * xc * v
    v2 = v * v
    for j in range(1, 1000):  # |v| < 0.1: 16 terms reach float64 precision
        ej = ej * v2
        s1 = s + ej / (2 * j + 1)
        if np.array_equal(s1, s):
            break
        s = s1
    out[close] = s
    xf, mf = x[~close], m[~close]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out[~close] = np.where(xf == 0.0, mf, xf * np.log(xf / mf) + mf - xf)
    return out


def log_binomial_terms(n: int, a: float, b: float) -> tuple[np.ndarray, float]:
    """log[C(n, l) a^l b^{n−l}] for l = 0..n, and a bound on the relative error of exp of
    each (over the terms that do not underflow).

    Loader's saddle-point form (C. Loader, "Fast and accurate computation of binomial
    probabilities", 2000): log C(n, l) + l log a + (n − l) log b = s(n) − s(l) − s(n − l)
    − bd0(l, na) − bd0(n − l, nb) + n(a + b − 1) + ½ log(n / (2π l (n − l))), with s the
    Stirling error and bd0(x, m) = x log(x/m) + m − x, every term small near the mode. The
    naive gammaln sum cancels terms of size n log n (a relative 1e-11 at n = 1000, 1e-8 at
    n = 10⁷); this keeps each term to a few ulps of |log term| + 1.
    """
    out = np.empty(n + 1)
    out[0] = n * math.log(b) if b > 0 else -math.inf
    out[n] = n * math.log(a) if a > 0 else (0.0 if n == 0 else -math.inf)
    mag = np.abs(out.copy())
    if n >= 2:
        k = np.arange(1, n, dtype=float)
        with np.errstate(divide="ignore"):
            d1, d2 = _bd0(k, n * a), _bd0(n - k, n * b)
        s_n = float(_stirlerr(np.array([float(n)]))[0])
        corr = n * math.fsum([a, b, -1.0])  # the masses' sum, exactly rounded
        half = 0.5 * np.log(n / (2.0 * np.pi * k * (n - k)))
        out[1:-1] = s_n - _stirlerr(k) - _stirlerr(n - k) - d1 - d2 + corr + half
        mag[1:-1] = np.abs(out[1:-1]) + d1 + d2 + abs(corr) + np.abs(half) + 1.0
    keep = np.isfinite(out) & (out > -746.0)
    rtol = 16.0 * UNIT_ROUNDOFF * float(np.max(mag[keep] + 1.0)) if keep.any() else 0.0
    return out, rtol

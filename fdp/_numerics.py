"""Private numerical helpers shared by several modules: standard-normal tails that keep relative
precision, the lower convex hull of points and the upper envelope of lines.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

__all__ = [
    "UNIT_ROUNDOFF", "norm_cdf", "norm_sf", "norm_isf", "lower_hull", "lower_hull_c",
    "line_envelope",
]

#: unit roundoff u of float64 (half the machine epsilon)
UNIT_ROUNDOFF = 2.0**-53

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


def lower_hull(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the lower convex hull of points sorted by x (Andrew's monotone chain).

    Points with equal x keep only the lowest. Returns indices into the input in increasing x.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    order = np.lexsort((y, x))
    hull: list[int] = []
    last_x = None
    for i in order:
        if last_x is not None and x[i] == last_x:
            continue  # same x, higher y: not on the lower hull
        last_x = x[i]
        while len(hull) >= 2:
            o, a = hull[-2], hull[-1]
            cross = (x[a] - x[o]) * (y[i] - y[o]) - (y[a] - y[o]) * (x[i] - x[o])
            if cross <= 0:
                hull.pop()
            else:
                break
        hull.append(int(i))
    return np.asarray(hull, dtype=int)


def lower_hull_c(
    a: np.ndarray, ac: np.ndarray, b: np.ndarray, bc: np.ndarray, rtol: float = 0.0
) -> np.ndarray:
    """Indices of the lower convex hull of points (a, b) of a decreasing curve, sorted by a
    (ties broken by 1 − a), given with their complements ac = 1 − a and bc = 1 − b.

    Andrew's monotone chain with the slope between two points computed from whichever
    coordinates resolve it: differences of complements where both points are above 1/2, of the
    values otherwise. So points 1e-100 apart next to β = 1 (a privacy curve's tail at α → 0)
    keep their geometry, which a hull of the rounded values would lose. A point is dropped only
    if the chain does not turn counter-clockwise there by more than ``rtol`` in slope.
    """
    a, ac, b, bc = (np.asarray(x, dtype=float).tolist() for x in (a, ac, b, bc))

    def slope(i: int, j: int) -> float:
        da = ac[i] - ac[j] if min(a[i], a[j]) > 0.5 else a[j] - a[i]
        db = bc[i] - bc[j] if min(b[i], b[j]) > 0.5 else b[j] - b[i]
        if da <= 0.0:
            return -math.inf if db < 0.0 else 0.0
        return db / da

    hull: list[int] = []
    for i in range(len(a)):
        while len(hull) >= 2:
            s1, s2 = slope(hull[-2], hull[-1]), slope(hull[-1], i)
            if s1 >= s2 - rtol * max(abs(s1), abs(s2)):
                hull.pop()
            else:
                break
        hull.append(i)
    return np.asarray(hull, dtype=int)


def line_envelope(slopes: np.ndarray, intercepts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints on [0, 1] of max(0, max_i (intercepts_i + slopes_i x)), a convex PL function.

    Returns ``(x, y)`` with x increasing from 0 to 1. Used to turn a list of affine minorants (for
    example the lines 1 - δ_i - e^{ε_i} α of a privacy profile) into a piecewise-linear curve.
    """
    s = np.append(np.asarray(slopes, dtype=float), 0.0)
    c = np.append(np.asarray(intercepts, dtype=float), 0.0)
    # Upper envelope of lines: sort by slope, keep for equal slopes the largest intercept.
    order = np.lexsort((c, s))
    s, c = s[order], c[order]
    keep = np.append(s[1:] != s[:-1], True)
    s, c = s[keep], c[keep]
    # For a max of lines on [0, 1] the line active at x = 0 has the largest intercept; as x grows
    # the active line's slope increases. Standard convex-hull trick over lines sorted by slope.
    hs: list[int] = []
    for i in range(len(s)):
        while len(hs) >= 2:
            j, k = hs[-2], hs[-1]
            # line k is useless if intersection(j, i) <= intersection(j, k)
            if (c[i] - c[j]) * (s[k] - s[j]) >= (c[k] - c[j]) * (s[i] - s[j]):
                hs.pop()
            else:
                break
        hs.append(i)
    hs_arr = np.asarray(hs)
    s, c = s[hs_arr], c[hs_arr]
    # line k is active on [xs[k-1], xs[k]]; intersections are increasing after the pruning
    xs = (c[:-1] - c[1:]) / (s[1:] - s[:-1])
    k0 = int(np.searchsorted(xs, 0.0, side="right"))
    k1 = int(np.searchsorted(xs, 1.0, side="left"))
    inner = np.arange(k0, k1)
    pts_x = np.concatenate([[0.0], xs[inner], [1.0]])
    vals = np.concatenate([[c[k0]], c[inner] + s[inner] * xs[inner], [c[k1] + s[k1]]])
    return pts_x, vals

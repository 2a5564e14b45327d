"""General constructors of trade-off curves: from distributions, privacy profiles and points.

Each result is named after what it was built from (``T(P, Q) on 3 outcomes``, ``implied by 2
(ε, δ) pairs``, ``interpolation of 5 points``): that name is its ``repr`` and its default plot
label (:func:`fdp.plot.label`).
"""

from __future__ import annotations

import math
from typing import Any, TypeVar

import numpy as np

from ._checks import as_array, check_prob_vector
from ._numerics import UNIT_ROUNDOFF
from .tradeoff import Kind, PiecewiseLinear

__all__ = ["from_distributions", "from_eps_delta", "from_points"]

_PL = TypeVar("_PL", bound=PiecewiseLinear)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _named(f: _PL, name: str) -> _PL:
    """Give a freshly built curve its name (its ``repr`` and default plot label); returns f.

    Only for curves just created by the caller: the name is set in place.
    """
    f._name = name
    return f


def from_distributions(p: Any, q: Any) -> PiecewiseLinear:
    """The exact curve T(P, Q) of two discrete distributions on the same outcomes (theory §1).

    Neyman–Pearson: outcomes are ordered by likelihood ratio q_i/p_i (zeros allowed on either
    side: q_i > 0 = p_i is a loss of +∞, p_i > 0 = q_i of −∞); the curve is piecewise linear with a
    kink at every distinct ratio and randomizes at the atoms. Exact at every α.

    Parameters
    ----------
    p, q : probability vectors of the same length (each summing to 1 within 1e-9).

    Returns
    -------
    PiecewiseLinear
        The exact curve, named ``T(P, Q) on n outcomes``.

    Examples
    --------
    >>> f = from_distributions([0.75, 0.25], [0.25, 0.75])  # randomized response, ε = ln 3
    >>> float(f(0.1)), round(float(f.epsilon(0.0)), 12) == round(float(np.log(3.0)), 12)
    (0.7, True)
    >>> f
    T(P, Q) on 2 outcomes
    """
    p = check_prob_vector("p", p)
    q = check_prob_vector("q", q)
    if p.shape != q.shape:
        raise ValueError(f"p and q must have the same length, got {p.size} and {q.size}")
    name = f"T(P, Q) on {_plural(p.size, 'outcome')}"
    (pn, rp), (qn, rq) = _normalized(p), _normalized(q)
    out = PiecewiseLinear.from_masses(pn, qn, name=name, mass_rtol=max(rp, rq))
    # (not renormalized: the given floats are the masses, exact even below the normal range)
    out._exact_masses = rp == 0.0 and rq == 0.0
    return out


def _normalized(x: np.ndarray) -> tuple[np.ndarray, float]:
    """x / Σx and a bound on the relative error of its masses: x itself where it sums to 1
    exactly (math.fsum of x and −1 is 0 only then), else x over its correctly rounded sum
    (within u/2 of Σx, the quotient u/2 more: 2u). Over the float sum with nothing charged, a
    P summing to 1 exactly with p.sum() = 1 − 2⁻⁵³ had every mass raised and every loss
    lowered by 1.1e-16 (its log1p's bound is 4u of the loss): compose(T(P, Q), repeat=2)
    .delta(0.47989507016210936), 0.8 ulp below a joint loss, read 4.8392562335772e-07 for the
    exact 4.839256233607346e-07 (helper-44, hunt seed 400049)."""
    if math.fsum(np.append(x, -1.0)) == 0.0:
        return x, 0.0
    return x / math.fsum(x), 2.0 * UNIT_ROUNDOFF


def from_eps_delta(eps: Any, delta: Any) -> PiecewiseLinear:
    """The curve sup_i f_{ε_i, δ_i} implied by a privacy profile (DRS Prop 2.12). Exact.

    A mechanism that is (ε_i, δ_i)-DP for every i is f-DP for this f; it is the upper envelope of
    the lines 1 − δ_i − e^{ε_i} α and e^{−ε_i}(1 − δ_i − α) and 0.

    Parameters
    ----------
    eps : array of ε_i ≥ 0; delta : array of δ_i ∈ [0, 1], the same shape.

    Returns
    -------
    PiecewiseLinear
        The exact curve, named ``implied by n (ε, δ) pairs``.

    Examples
    --------
    >>> f = from_eps_delta([1.0], [0.01])
    >>> round(float(f(0.1)), 6)
    0.718172
    >>> f
    implied by 1 (ε, δ) pair
    """
    e = np.atleast_1d(as_array("eps", eps, low=0.0))
    d = np.atleast_1d(as_array("delta", delta, low=0.0, high=1.0))
    if e.shape != d.shape or e.ndim != 1:
        raise ValueError(
            f"eps and delta must be 1-D arrays of the same length, got shapes {e.shape} and "
            f"{d.shape}"
        )
    if e.size == 0:
        raise ValueError("eps and delta must hold at least one (ε, δ) pair, got none")
    # the envelope of the lines as the lower hull of their (slope, δ) points, with exact losses
    # (see _envelope_masses): the lines' intercepts 1 − δ_i lose every δ_i below 1e-16, and an
    # envelope of those dropped lines with tiny δ: from_eps_delta([0.5, 2], [1e-30, 1e-80])
    # read ε(1e-80) = 0.5 where the truth is 2
    f = _envelope_masses(e, d)
    f._exact_atom = True  # (its +∞ atom is min δ_i, an input)
    return _self_inverse(f)


def _self_inverse(f: PiecewiseLinear) -> PiecewiseLinear:
    """Mark an implied curve as its own inverse. Every f_{ε,δ} is symmetric, hence so is their
    upper envelope (DRS Prop 2.12); the computed curve lies at or below it (its rounding is
    charged down), and f ≤ g implies f⁻¹ ≤ g⁻¹, so using it as its inverse stays certified. The
    inverse built by swapping breakpoints lost the losses beyond e^700: the inverse of
    from_eps_delta(800, 0) read ε = ∞ where the curve itself reads 800."""
    f._self_inverse = True
    return f


def _envelope_masses(e: np.ndarray, d: np.ndarray) -> PiecewiseLinear:
    """from_eps_delta for any ε (e^ε may overflow), as the pair of masses with exact losses.

    A line β = (1 − δ) − sα (slope −s) is the point (s, δ) of the plane of (slope, δ): the
    profile's lines 1 − δ_i − e^{ε_i}α and e^{−ε_i}(1 − δ_i − α) are (e^{ε_i}, δ_i) and
    (e^{−ε_i}, 1 − e^{−ε_i}(1 − δ_i)), and β = 0 is (0, 1). The upper envelope of lines is the
    lower convex hull of the points (convex conjugacy): vertex k (slope s_k, by increasing s)
    is active on α ∈ [α_k, α_{k−1}] with α_k = (δ_k − δ_{k+1})/(s_{k+1} − s_k). The segment's
    P-mass is α_{k−1} − α_k, its Q-mass s_k times that, and its loss log s_k: exact, and every
    quantity is computed from ratios e^{λ_j − λ_k} ≤ 1 of slopes (λ = log s), never from e^{ε}.
    Beyond the point of smallest δ (the steepest line used) the curve drops to f(0) = 1 − min δ:
    the +∞ atom min δ_i.
    """
    lam = np.concatenate([e, -e, [-np.inf]])  # log-slopes
    src = np.concatenate([d, d, [1.0]])  # each point's own δ_i
    bottom = np.concatenate([np.zeros(e.size, bool), np.ones(e.size, bool), [False]])
    with np.errstate(under="ignore"):
        # each point's δ and 1 − δ (the latter exact for the bottom lines: e^{−ε}(1 − δ))
        cv = np.concatenate([1.0 - d, np.exp(-e) * (1.0 - d), [0.0]])
        dv = np.concatenate([d, -np.expm1(-e) + np.exp(-e) * d, [1.0]])
        # each point's δ as src + ex: ex = 0 for a top line and the zero line, and
        # (1 − δ_i)(1 − e^{−ε_i}) for a bottom line (its δ − δ_i, kept apart: below ε ≈ 1e-16
        # it vanishes in the rounded sum)
        ex = np.concatenate([np.zeros(e.size), (1.0 - d) * -np.expm1(-e), [0.0]])
    order = np.lexsort((dv, lam))  # by slope, then δ
    lam, dv, cv, src, bottom, ex = (lam[order], dv[order], cv[order], src[order], bottom[order],
                                    ex[order])
    first = np.append(True, lam[1:] != lam[:-1])  # equal slopes: the smallest δ
    lam, dv, cv, src, bottom, ex = (lam[first], dv[first], cv[first], src[first], bottom[first],
                                    ex[first])
    # past the smallest δ the hull is flat (those lines are never active); of points tied at
    # it in float, the one whose exact δ (src + ex, compared as differences) is smallest:
    # from_eps_delta([1e-16], [0.5])'s bottom line has δ = 0.5 + 5e-17, which rounds to 0.5,
    # and taking it (the shallower) dropped the top line, so δ(0) read 0.5 for the true
    # 0.5 + 2.5e-17 and ε(0.5) read 0 for 1e-16 (at 1e-17 the lines' 1 − δ tie as well)
    def gap_d(i: int, j: int) -> float:
        """δ_i − δ_j, from whichever form loses less: (δ'_i − δ'_j) + (ex_i − ex_j), δ' the
        lines' own δ (src; keeps a bottom line's ex far below the ulp of δ at tiny ε), or the
        complements 1 − δ where both are above 1/2 (exact for both kinds of line: a bottom
        line's e^{−ε}(1 − δ') at large ε, where ex is 1 − tiny)."""
        split = float((src[i] - src[j]) + (ex[i] - ex[j]))
        if min(dv[i], dv[j]) >= 0.5 and max(cv[i], cv[j]) < max(ex[i], ex[j]) + abs(
                src[i] - src[j]):
            return float(cv[j] - cv[i])
        return split

    # (near-ties: a bottom line's δ is computed, and numpy's exp need not round to nearest:
    # from_eps_delta(5e-17, 0.75)'s bottom line read 0.7499999999999999, below its top line's
    # 0.75, and the top line was dropped, so δ(0) read 0.7499999999999999 for the true
    # 0.75 + 6e-18; a bottom line's δ is never below its own top line's, so the exact
    # comparison picks the top line)
    ties = np.flatnonzero(dv <= dv.min() * (1.0 + 8.0 * 2.0**-53))
    key = np.array([gap_d(int(t), int(ties[0])) for t in ties])
    stop = int(ties[np.argmin(key)])  # (the first, the shallowest, of exact ties)
    lam, dv, cv = lam[: stop + 1], dv[: stop + 1], cv[: stop + 1]
    src, bottom, ex = src[: stop + 1], bottom[: stop + 1], ex[: stop + 1]

    def bottom_below(o: int, a: int, b: int) -> bool | None:
        """:func:`below` for bottom lines o, a, b (o may be the zero line), or None where
        rounding cannot decide. A bottom line e^{−ε}(1 − δ' − α) is the point
        (s, 1 − s + s δ') with s = e^{−ε}: the parts (s, 1 − s) of three such points are
        collinear, so a lies on or above the chord exactly when it does for the points
        (s, s δ') (the zero line is (0, 0)): scaled by s_b, (r_ab δ'_a − r_ob δ'_o)(1 − r_ob) ≥
        (δ'_b − r_ob δ'_o)(r_ab − r_ob). Their δ = 1 − s(1 − δ') lose every δ' below an ulp of
        1, and the test in them dropped the bottom line of f_{1,0} against that of
        f_{0.5,1e-30}, which meet the zero line 1e-30 apart: from_eps_delta([0.1, 0.5, 1],
        [0.1, 1e-30, 0]) ended on the P-atom 1e-30 at −∞ for the exact segment of loss −1
        (P-mass 2.5e-30), a curve below the truth read as its own optimistic side, whose
        Poisson add pair's inverse read δ(1)'s lower end 7.3e-31 for the exact 0 (hunt seed
        410344)."""
        r_ab = math.exp(lam[a] - lam[b])
        if np.isfinite(lam[o]):
            r_ob = math.exp(lam[o] - lam[b])
            one_minus = -math.expm1(lam[o] - lam[b])
            d_ao = lam[a] - lam[o]
            diff = r_ob * math.expm1(d_ao) if d_ao < 1.0 else r_ab - r_ob
            d_o, span = float(src[o]), float(lam[b] - lam[o])
        else:
            r_ob, one_minus, diff, d_o, span = 0.0, 1.0, r_ab, 0.0, float(lam[b] - lam[a])
        left = (r_ab * src[a] - r_ob * d_o) * one_minus
        right = (src[b] - r_ob * d_o) * diff
        # (each factor within (span + 4) ulps: the exps of rounded differences of λ)
        err = 16.0 * UNIT_ROUNDOFF * (span + 4.0) * (
            (r_ab * src[a] + r_ob * d_o) * one_minus + (src[b] + r_ob * d_o) * abs(diff))
        if left - right > err:
            return True
        if left - right < -err:
            return False
        return None

    def below(o: int, a: int, b: int) -> bool:
        """Point a on or above the chord o → b (o < a < b by slope): drop it. Scaled by s_b:
        (δ_a − δ_o)(1 − r_ob) ≥ (δ_b − δ_o)(r_ab − r_ob), r_xy = s_x/s_y ≤ 1."""
        if (bottom[o] or not np.isfinite(lam[o])) and bottom[a] and bottom[b]:
            with np.errstate(under="ignore", over="ignore"):
                got = bottom_below(o, a, b)
            if got is not None:
                return got
        # (1 − r_ob and r_ab − r_ob = r_ob (e^{λ_a − λ_o} − 1) by expm1: from two exps both
        # near 1 they kept no digit where the slopes differ by ~1e-16, and a vertex of the hull
        # was dropped — from_eps_delta([4e-17, 6e-17, 1], [1e-140, 1e-70, 0]) read δ(1e-10) =
        # 1e-70 for the true 1e-140, a helper's hunt)
        with np.errstate(under="ignore", over="ignore"):
            if not np.isfinite(lam[o]):
                # o is the zero line (slope 0, δ = 1): δ_a − 1 ≥ (δ_b − 1) r_ab, i.e.
                # (1 − δ_b) r_ab − (1 − δ_a) ≥ 0 in complements (exact where δ ≈ 1: the
                # bottom line of f_{300,0} against its top line, e^{−600} − e^{−300}), or
                # (δ_a − δ_b) + (1 − δ_b)(r_ab − 1) ≥ 0 (where the δ are small: δ − 1 kept no
                # digit of δ_a = 1e-30 beside r_ab − 1 = −5e-17), the form whose terms are
                # smaller
                r = math.exp(lam[a] - lam[b])
                em = math.expm1(lam[a] - lam[b])
                g = gap_d(a, b)
                vc, vd = cv[b] * r - cv[a], g + cv[b] * em
                ec = cv[b] * r + cv[a]
                ed = abs(g) + cv[b] * abs(em) + max(dv[a], dv[b])
                return bool((vc if ec <= ed else vd) >= 0.0)
            one_minus = -math.expm1(lam[o] - lam[b])
            d_ao = lam[a] - lam[o]
            # (r_ab − r_ob = r_ob (e^{λ_a − λ_o} − 1), by expm1 where that difference is small;
            # math.expm1 overflows past 709)
            diff = (math.exp(lam[o] - lam[b]) * math.expm1(d_ao) if d_ao < 1.0
                    else math.exp(lam[a] - lam[b]) - math.exp(lam[o] - lam[b]))
        return gap_d(a, o) * one_minus >= gap_d(b, o) * diff

    hull: list[int] = []
    for i in range(lam.size):
        while len(hull) >= 2 and below(hull[-2], hull[-1], i):
            hull.pop()
        hull.append(i)
    lam, dv, cv, src, bottom, ex = (lam[hull], dv[hull], cv[hull], src[hull], bottom[hull],
                                    ex[hull])
    m = lam.size
    # s_k α_k and s_{k+1} α_k at each breakpoint k (between vertices k and k + 1), as
    # (δ_k − δ_{k+1}) / (e^{λ_{k+1} − λ_k} − 1) and (δ_k − δ_{k+1}) / (1 − e^{λ_k − λ_{k+1}})
    dd = np.array([gap_d(i, i + 1) for i in range(m - 1)])
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        gap = lam[1:] - lam[:-1]
        sa_left = dd / np.expm1(gap)  # s_k α_k (0 where s_k = 0)
        sa_right = dd / -np.expm1(-gap)  # s_{k+1} α_k
        alpha = np.where(np.isfinite(lam[1:]), dd * np.exp(-lam[1:]) / -np.expm1(-gap), 0.0)
    sa_left = np.where(np.isfinite(lam[:-1]), sa_left, 0.0)
    # vertex k spans [α_k, α_{k−1}] (α_{−1} = 1 for the zero line, α_{m−1} = 0 at the top)
    a_hi = np.concatenate([[1.0], alpha])  # α_{k−1}
    a_lo = np.concatenate([alpha, [0.0]])  # α_k
    pm = np.maximum(a_hi - a_lo, 0.0)
    if m > 1:
        # the zero line's segment [α_0, 1]: 1 − α_0 = 1 − cv_1/s_1, which cancels near α = 1
        # (from_eps_delta(1e-17, 1e-17) lost its P-atom 1e-17 at −∞ there); for a bottom line
        # e^{−ε}(1 − δ − α) it is δ itself, for a top line (1 − e^{−ε}) + e^{−ε}δ
        with np.errstate(under="ignore"):
            pm[0] = float(src[1]) if bottom[1] else float(
                -np.expm1(-lam[1]) + np.exp(-lam[1]) * src[1])
    q_hi = np.concatenate([[0.0], sa_right])  # s_k α_{k−1}
    q_lo = np.concatenate([sa_left, [0.0]])  # s_k α_k
    qm = np.maximum(q_hi - q_lo, 0.0)
    qm[0] = 0.0  # the zero line (slope 0): P-mass only
    if m > 2:
        # Above α = 1/2 the masses from differences of α (and of s α) keep only an absolute
        # 1e-16: poisson_subsample(from_eps_delta(...), 0.9).remove.delta(1.0) read 5e-9
        # relative low (a P-mass 1.6e-8 there is the remove direction's Q-mass). There, from
        # the complements c_k = 1 − α_k = (w_{k+1} − w_k)/(s_{k+1} − s_k), w = s + δ − 1, i.e.
        # c_k = (r_{k+1} − r_k e^{−Δλ_k})/(1 − e^{−Δλ_k}) with r = w/s: δ_i itself for a bottom
        # line, (1 − e^{−ε}) + e^{−ε}δ_i for a top one, 0 for the zero line; P-mass
        # c_k − c_{k−1}, Q-mass s_k times it
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            r = np.where(bottom, src, -np.expm1(-lam) + np.exp(-lam) * src)
            r = np.where(np.isfinite(lam), r, 0.0)
            c = (r[1:] - r[:-1] * np.exp(-gap)) / -np.expm1(-gap)  # c_k, k = 0..m−2
        c_lo = np.concatenate([c, [1.0]])  # 1 − α_k
        c_hi = np.concatenate([[0.0], c])  # 1 − α_{k−1}
        top_half = (a_lo >= 0.5) & np.isfinite(c_lo) & np.isfinite(c_hi)
        top_half[0] = False  # (the zero line's segment: pm[0] above)
        pm = np.where(top_half, np.maximum(c_lo - c_hi, 0.0), pm)
        qm = np.where(top_half, np.exp(np.where(top_half, lam, 0.0)) * pm, qm)
    q_inf = float(dv[-1])
    keep = (pm > 0) | (qm > 0)
    name = f"implied by {_plural(e.size, '(ε, δ) pair')}"
    return PiecewiseLinear.from_masses(
        pm[keep], qm[keep], q_inf=q_inf, loss=lam[keep], name=name, mass_rtol=16 * 2.0**-53 * m,
    )


def from_points(alpha: Any, beta: Any, *, exact: bool = False) -> PiecewiseLinear:
    """The piecewise-linear curve through sampled points of a trade-off curve.

    Returns the lower convex envelope of the points together with (1, 0) (and (0, 1) when no
    point has α = 0). This is an interpolation, not a bound: chords of a convex curve lie above
    it, so the result is ≥ the sampled curve between the points (optimistic). Pass
    ``exact=True`` when the points are the exact breakpoints of a piecewise-linear curve.

    Points with β > 1 − α are an error.

    Returns
    -------
    PiecewiseLinear
        Named ``interpolation of n points`` (kind ``"approximation"``) or ``piecewise linear
        through n points`` (``exact=True``, kind ``"exact"``).

    Examples
    --------
    >>> f = from_points([0.0, 0.5], [0.8, 0.1], exact=True)
    >>> round(float(f(0.25)), 6)
    0.45
    >>> f, from_points([0.1, 0.3, 0.6], [0.6, 0.3, 0.1])
    (piecewise linear through 2 points, interpolation of 3 points)
    """
    kind: Kind = "exact" if exact else "approximation"
    a = np.atleast_1d(as_array("alpha", alpha, low=0.0, high=1.0)).ravel()
    b = np.atleast_1d(as_array("beta", beta, low=0.0, high=1.0)).ravel()
    if a.size == 0 or b.size == 0:
        raise ValueError("alpha and beta must contain at least one point, got none")
    what = "piecewise linear through" if exact else "interpolation of"
    f = PiecewiseLinear.from_points(a, b, kind=kind, name=f"{what} {_plural(a.size, 'point')}")
    if exact:
        # every given point must be a point of the curve: a point above the convex envelope
        # (not convex) or off it would be dropped, and the result would not be what was asked
        off = np.abs(np.asarray(f(a)) - np.minimum(b, 1.0 - a)) > 1e-12
        if off.any():
            i = int(np.argmax(off))
            raise ValueError(
                "exact=True needs the breakpoints of a convex, non-increasing curve; the point "
                f"alpha={float(a[i])!r}, beta={float(b[i])!r} is not on the convex envelope of the "
                "points (pass exact=False for an interpolation)"
            )
    return f

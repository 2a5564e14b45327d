"""Exact references for discrete pairs, independent of fdp: ε(δ) of a product of pairs by exact
sums over the joint outcomes in mpmath (theory §3: δ(ε) = Σ (Q − e^ε P)₊), and the pair of the
lower convex hull of exact breakpoints (min{f, g}**)."""

from __future__ import annotations

from typing import Any

import mpmath as mp


def mp_joint(steps: list[tuple[list[Any], list[Any]]]) -> list[tuple[Any, Any]]:
    """The (P, Q) masses of the joint outcomes of the product of the discrete pairs ``steps``."""
    joint = [(mp.mpf(1), mp.mpf(1))]
    for ps, qs in steps:
        joint = [(a * x, b * y) for a, b in joint for x, y in zip(ps, qs, strict=True)]
    return joint


def mp_delta(steps: list[tuple[list[Any], list[Any]]], eps: Any) -> Any:
    """δ(ε) of the product of the pairs ``steps``: Σ over joint outcomes of (Q − e^ε P)₊."""
    return mp.fsum(max(y - mp.exp(eps) * x, 0) for x, y in mp_joint(steps))


def mp_eps(steps: list[tuple[list[Any], list[Any]]], delta: float, top: float = 5000.0) -> Any:
    """ε(δ) of the product of the discrete pairs ``steps`` (P-masses, Q-masses), by bisection
    on δ(ε) = Σ over joint outcomes of (Q − e^ε P)₊ (at the caller's mpmath precision)."""
    joint = mp_joint(steps)

    def dlt(e: Any) -> Any:
        return mp.fsum(max(y - mp.exp(e) * x, 0) for x, y in joint)

    if dlt(mp.mpf(0)) <= delta:  # (ε is 0: the bisection would only approach it)
        return mp.mpf(0)
    lo, hi = mp.mpf(0), mp.mpf(top)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if dlt(mid) > delta else (lo, mid)
    return hi


def mp_pair(p: list[float], q: list[float]) -> tuple[list[Any], list[Any]]:
    """The float masses as exact mpmath numbers, each side normalized exactly."""
    pm, qm = [mp.mpf(x) for x in p], [mp.mpf(x) for x in q]
    sp, sq = mp.fsum(pm), mp.fsum(qm)
    return [x / sp for x in pm], [x / sq for x in qm]


def mp_breakpoints(pm: list[Any], qm: list[Any]) -> list[tuple[Any, Any]]:
    """The breakpoints (α, β) of T(P, Q), exact: outcomes by decreasing likelihood ratio."""
    fin = sorted(((a, b) for a, b in zip(pm, qm, strict=True) if a > 0), key=lambda t: -t[1] / t[0])
    q_inf = mp.fsum(b for a, b in zip(pm, qm, strict=True) if a == 0)
    pts = [(mp.mpf(0), mp.mpf(1)), (mp.mpf(0), 1 - q_inf)]
    for k in range(len(fin)):
        pts.append((mp.fsum(a for a, _ in fin[: k + 1]), mp.fsum(b for _, b in fin[k + 1:])))
    return pts + [(mp.mpf(1), mp.mpf(0))]


def mp_hull_pair(pts: list[tuple[Any, Any]]) -> tuple[list[Any], list[Any]]:
    """The pair (P, Q) of the lower convex hull of the points (monotone chain, exact)."""
    best: dict[Any, Any] = {}
    for a, b in pts:
        best[a] = min(b, best.get(a, b))
    hull: list[tuple[Any, Any]] = []
    for pt in sorted(best.items()):
        while len(hull) >= 2 and ((hull[-1][0] - hull[-2][0]) * (pt[1] - hull[-2][1])
                                  - (hull[-1][1] - hull[-2][1]) * (pt[0] - hull[-2][0])) <= 0:
            hull.pop()
        hull.append(pt)
    pm, qm = [mp.mpf(0)], [1 - hull[0][1]]
    for (a0, b0), (a1, b1) in zip(hull[:-1], hull[1:], strict=True):
        pm.append(a1 - a0)
        qm.append(b0 - b1)
    return pm, qm


def mp_poisson_symmetric_pair(p: list[float], q: list[float], rate: float) -> tuple[
    list[Any], list[Any]
]:
    """The pair of Poisson subsampling's symmetric curve min{A, A⁻¹, R, R⁻¹}** (theory §7),
    exactly: A = T(P, (1 − r)P + rQ), R = T((1 − r)Q + rP, Q), for the float pair (p, q) and
    rate r (1 − r in mpmath: in float it is rounded)."""
    pm, qm = mp_pair(p, q)
    return mp_poisson_symmetric_of(pm, qm, mp.mpf(rate))


def mp_poisson_symmetric_of(pm: list[Any], qm: list[Any], r: Any) -> tuple[list[Any], list[Any]]:
    """:func:`mp_poisson_symmetric_pair` of a pair already in mpmath (masses and rate)."""
    add = (pm, [(1 - r) * a + r * b for a, b in zip(pm, qm, strict=True)])
    rem = ([(1 - r) * b + r * a for a, b in zip(pm, qm, strict=True)], qm)
    pts = []
    for pair in (add, rem):
        bp = mp_breakpoints(*pair)
        pts += bp + [(b, a) for a, b in bp]
    return mp_hull_pair(pts)


def mp_subsampled_pair(steps: list[tuple[list[Any], list[Any]]], rate: Any) -> tuple[
    list[Any], list[Any]
]:
    """The pair of C_p(f) = min{f_p, f_p⁻¹}** (DRS Thm 4.2; theory §7) for f the product of
    the discrete pairs ``steps`` and p = ``rate``, exactly: f_p = T(A, (1 − p)A + pB) for the
    joint (A, B), and the hull of its breakpoints with their mirror images (f_p⁻¹'s)."""
    r = mp.mpf(rate)
    joint = mp_joint(steps)
    a = [x for x, _ in joint]
    m = [(1 - r) * x + r * y for x, y in joint]
    bp = mp_breakpoints(a, m)
    return mp_hull_pair(bp + [(y, x) for x, y in bp])


def _mp_pl_eval(pts: list[tuple[Any, Any]], x: Any) -> Any:
    """A convex piecewise-linear curve through ``pts`` (α increasing) at α = x."""
    if x <= pts[0][0]:
        return min(b for a, b in pts if a == pts[0][0])
    for (a0, b0), (a1, b1) in zip(pts[:-1], pts[1:], strict=True):
        if a0 <= x <= a1 and a1 > a0:
            return b0 + (x - a0) * (b1 - b0) / (a1 - a0)
    return pts[-1][1]


def _mp_pl_solve(pts: list[tuple[Any, Any]], y: Any) -> Any:
    """The least α at which the non-increasing curve through ``pts`` reaches y."""
    if y >= _mp_pl_eval(pts, pts[0][0]):
        return pts[0][0]
    for (a0, b0), (a1, b1) in zip(pts[:-1], pts[1:], strict=True):
        if b0 >= y >= b1 and b0 > b1:
            return a0 + (b0 - y) * (a1 - a0) / (b0 - b1)
    return pts[-1][0]


def mp_group_points(pts: list[tuple[Any, Any]], k: int) -> list[tuple[Any, Any]]:
    """Breakpoints of the group curve 1 − (1 − f)^{∘k} (DRS Thm 2.14) of the piecewise-linear
    f through ``pts``, exactly: g_{j+1}(α) = f(1 − g_j(α)), whose kinks are g_j's and the
    points where 1 − g_j meets a kink of f."""
    g = pts
    for _ in range(k - 1):
        xs = {a for a, _ in g} | {_mp_pl_solve(g, 1 - a) for a, _ in pts}
        g = [(x, _mp_pl_eval(pts, 1 - _mp_pl_eval(g, x))) for x in sorted(xs)]
    return g


def mp_points_delta(pts: list[tuple[Any, Any]], eps: Any) -> Any:
    """δ(ε) = max over breakpoints of 1 − β − e^ε α (and 0) of a convex curve (theory §3)."""
    return max([mp.mpf(0)] + [1 - b - mp.exp(eps) * a for a, b in pts])


def mp_exponential_pair(u: list[float], v: list[float], eps: float) -> tuple[list[Any], list[Any]]:
    """The exponential mechanism's (P, Q) masses on utilities u, u' (sensitivity 1), exactly:
    exp(ε u_i / 2) / Σ_j exp(ε u_j / 2) (McSherry & Talwar 2007)."""
    wp = [mp.exp(mp.mpf(eps) * mp.mpf(x) / 2) for x in u]
    wq = [mp.exp(mp.mpf(eps) * mp.mpf(x) / 2) for x in v]
    return [w / mp.fsum(wp) for w in wp], [w / mp.fsum(wq) for w in wq]


def mp_symmetrized(pts: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Breakpoints of min{f, f⁻¹}** (the lower convex hull of f's and f⁻¹'s breakpoints)."""
    return mp_breakpoints(*mp_hull_pair(pts + [(b, a) for a, b in pts]))


def mp_kink_losses(pts: list[tuple[Any, Any]], rel: float = 1e-13) -> list[float]:
    """The exact kinks' losses (the slopes' logs) as floats, with neighbours ``rel`` away."""
    out: set[float] = set()
    for (a0, b0), (a1, b1) in zip(pts[:-1], pts[1:], strict=True):
        if a1 > a0 and b0 > b1:
            x = float(mp.log((b0 - b1) / (a1 - a0)))
            out |= {x, x - rel * (abs(x) + 1.0), x + rel * (abs(x) + 1.0)}
    return sorted(out)


def assert_delta_brackets(name: str, curve: Any, pts: list[tuple[Any, Any]], at: list[float],
                          slack: Any = 0) -> None:
    """Each ε in ``at``: the curve's δ bracket holds the exact δ of the points (within the
    reference's own rounding ``slack``), lower end ≤ exact ≤ upper end."""
    for e in at:
        ref = mp_points_delta(pts, mp.mpf(e))
        lo, hi = curve.delta_bracket(e)
        assert mp.mpf(lo) <= ref + slack, (name, e, lo, float(ref))
        assert mp.mpf(hi) >= ref - slack, (name, e, hi, float(ref))

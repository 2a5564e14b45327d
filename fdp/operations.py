"""Operations on trade-off curves: group privacy, symmetrization and subsampling (theory §5–7).

- :func:`group`: f ↦ 1 − (1 − f)^{∘k} (DRS Thm 2.14): groups of k records.
- :func:`symmetrize`: min{f, f⁻¹}**, the two-sided guarantee from a one-sided one (add/remove
  neighbours; DRS Definition F.1, first case).
- :func:`subsample`: C_p(f) = min{f_p, f_p⁻¹}** with f_p = p f + (1 − p) Id: sampling m of n
  records without replacement (p = m/n), replace-one neighbours (DRS Thm 4.2).
- :func:`poisson_subsample`: the add and remove pairs of Poisson sampling at rate p and their
  symmetrization (Zhu, Dong & Wang 2022; BDLS).

Every result is exact where the mathematics gives a closed form or a piecewise-linear curve; for
other curves the result is a :class:`~fdp.numeric.Bracketed` curve built from certified
piecewise-linear lower and upper approximations (each operation here is monotone in f, so lower and
upper curves carry through).
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._checks import check_int, check_scalar
from ._numerics import (
    MIN_NORMAL,
    TINY,
    UNIT_ROUNDOFF,
    div_down_array,
    line_envelope,
    lower_hull_c,
    moved_coordinate,
    norm_cdf,
    norm_isf,
    product_up,
)
from .constructors import _named
from .families import EpsDelta, Gaussian, Identity, Laplace
from .numeric import Bracketed
from .tradeoff import (
    BaseBinsMixin,
    Inverse,
    LossBins,
    PiecewiseLinear,
    TradeOff,
    TwinOfBase,
    _log_cumsum,
    _swap_masses,
    inherit_twin,
    tiny_bins,
)

__all__ = [
    "group",
    "symmetrize",
    "subsample",
    "poisson_subsample",
    "Mixture",
    "Subsampled",
    "PoissonPairs",
    "GroupProfileBound",
    "min_envelope",
    "max_curve",
]


# ------------------------------------------------------------------------ piecewise-linear tools
def _bc(f: PiecewiseLinear) -> np.ndarray:
    return f._bc


def min_envelope(
    f: PiecewiseLinear, g: PiecewiseLinear, *, symmetric: bool = False
) -> PiecewiseLinear:
    """min{f, g}**, the lower convex envelope of the minimum of two PL curves. Exact.

    ``symmetric=True`` states that the result is its own inverse (g = f⁻¹, or both arguments
    symmetric): ``inverse()`` then returns it unchanged, rather than rebuilding it from
    swapped breakpoints, which cannot resolve masses far below an atom near α = 1.

    It is the lower convex hull of the breakpoints of both curves (a convex minorant of min{f, g}
    passes below every breakpoint, and the hull of the breakpoints is one), taken with slopes
    from the complements where the values cannot resolve them (:func:`lower_hull_c`). No
    breakpoint is pre-selected from the privacy profiles: near α = 1 the profiles of both
    curves are 1 − e^ε up to 1e-13, below their own summation rounding, and a pre-selection
    there dropped the curve that is lower. Where the parts are exact and a kink underflows
    (a P- or Q-mass below 2⁻¹⁰⁰⁰), the masses that δ, ε, products and the engine read come from
    the parts' own masses and losses instead (:func:`_envelope_masses`).
    """
    a = np.concatenate([f._a, g._a])
    b = np.concatenate([f._b, g._b])
    bc = np.concatenate([_bc(f), _bc(g)])
    ac = np.concatenate([f._ac, g._ac])
    # Q-mass above each point, apart from the common +∞ atom (precise next to a large atom)
    q_inf = max(f.q_inf, g.q_inf)
    qc = np.concatenate([(f.q_inf - q_inf) + f._qc, (g.q_inf - q_inf) + g._qc])
    # by α, then by 1 − α (equal α in float64 may still differ near 1), then lowest β first
    order = np.lexsort((b, -bc, -ac, a))
    a, b, bc, ac, qc = a[order], b[order], bc[order], ac[order], qc[order]
    first = np.concatenate([[True], (a[1:] != a[:-1]) | (ac[1:] != ac[:-1])])
    a, b, bc, ac, qc = a[first], b[first], bc[first], ac[first], qc[first]
    idx = lower_hull_c(a, ac, b, bc)
    a, b, bc, ac, qc = a[idx], b[idx], bc[idx], ac[idx], qc[idx]
    kind = "exact" if f.kind == g.kind == "exact" else f.kind
    masses = _envelope_masses(f, g) if _kinks_underflow(f, g) else None
    # (the parts' mass rounding stays charged: the mixture of subsample rounds p·q_∞ to
    # nearest, and without its rtol the envelope read δ a rounding below the truth at every ε
    # beyond the largest loss, and ε = 2e-15 at δ one ulp below p·q_∞, where the truth is ∞)
    out = PiecewiseLinear(
        a, b, alpha_c=ac, beta_c=bc, q_inf=q_inf, q_cum=np.maximum(qc, 0.0), kind=kind,
        mass_rtol=max(f._mass_rtol, g._mass_rtol),
        masses=None if masses is None else masses[:3],
        mass_q_inf=None if masses is None else max(f._mass_qinf, g._mass_qinf),
    )
    if masses is not None:
        out._loss_err = masses[3]
    if f._side == g._side == "upper":
        out = out._as_upper()
        out.__class__ = _UpperEnvelope
        out._parts = (f, g)  # type: ignore[attr-defined]
    elif f._side == g._side == "lower":
        out.__class__ = _LowerEnvelope
        out._parts = (f, g)  # type: ignore[attr-defined]
        out._twin_ok = f._has_twin() and g._has_twin()  # (its twin's profile is the parts')
        if out._twin_ok and not (f._twin_ok and g._twin_ok) and kind == "exact":
            # a part whose masses are a pessimistic garbling (a group's capped points, an
            # exact product's merged outcomes) passes it on to the hull's breakpoints: the
            # envelope's masses then have no optimistic reading of their own either, though
            # its δ and ε (the parts' twins') do. Whatever reads the masses optimistically
            # (subsample, a mixture, the engine, a JSON round trip) reads the envelope of
            # the parts' twins instead. (With _twin_ok True, symmetrize(group(exponential(
            # u, u', 5), 2)), its point 1 − α = 2.153167844155523e-22 for the exact
            # 2.1531678441552462e-22 (1.3e-13 relative, mass_rtol 1.4e-14), reloaded from
            # its spec read δ(0)'s lower end 2.0959513547704154e-22 for the exact
            # 2.0959513547703933e-22, and subsample(·, 0.3) of it δ(6.1326)'s
            # 1.5423987026481737e-23 for 1.5423987026481355e-23; helper-63, hunt seed 410105)
            out._twin_ok = False
            out._twin_build = functools.partial(_envelope_twin, f, g, False)
            out._inverse_twin_build = functools.partial(_envelope_twin, f, g, True)
    out._self_inverse = symmetric
    return out


def _envelope_twin(f: PiecewiseLinear, g: PiecewiseLinear, inverse: bool) -> PiecewiseLinear:
    """The optimistic reading of min{f, g}** (of its inverse, min{f⁻¹, g⁻¹}**, with
    ``inverse``): the envelope of the parts' twins (:meth:`PiecewiseLinear._twin_lower`),
    curves above f and g, read as an upper curve. min{·, ·}** is non-decreasing in each
    argument, so it lies above the true envelope; its δ and ε are its parts' twins'."""
    return min_envelope(f._twin_lower(inverse), g._twin_lower(inverse))._as_upper()


def _kinks_underflow(f: PiecewiseLinear, g: PiecewiseLinear) -> bool:
    """Whether min{f, g}**'s masses are built from the parts' (:func:`_envelope_masses`): both
    parts exact, read on the lower side from their own masses, and one of them has an outcome
    whose P- or Q-mass is below 2⁻¹⁰⁰⁰ (its kink underflows in the hull's breakpoints)."""
    for x in (f, g):
        if x.kind != "exact" or x._side != "lower" or x._offset != 0.0 or x._bound:
            return False
    for x in (f, g):
        p, q, loss = x._masses
        fin = np.isfinite(loss)
        if (fin & tiny_bins(p, q)).any():
            return True
    return False


def _envelope_masses(f: PiecewiseLinear, g: PiecewiseLinear) -> tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray
]:
    """The outcomes (P-masses, Q-masses, losses, loss rounding bounds) of min{f, g}**, from the
    parts' own masses and losses, sorted by decreasing loss.

    Its privacy profile is max(δ_f, δ_g) (:class:`_ProfileMax`). Between consecutive kinks
    K_k > K_{k+1} of either part each δ_X is linear in x = e^ε, δ_X = B_X − x A_X (B_X the
    Q-mass and A_X the P-mass of X's outcomes with loss ≥ K_k, plus X's +∞ atom), so the
    maximum has its kinks at the parts' kinks and at most one crossing x_c = ΔB/ΔA inside each
    interval. A kink where one part stays on top keeps that part's own mass; where the top part
    changes, and at a crossing, the mass is the change of B. A_X is kept in logs
    (log Σ q_i e^{−ℓ_i}), so no P-mass underflows: the hull's breakpoints lose kinks below
    α ≈ 1e-308, and min_envelope of two curves with losses near 720 composed twice read
    ε(1e-3) 1441.10 for the exact 1442.47 (below it). A crossing's loss
    log|ΔB| − log|ΔA| carries the rounding of both differences (relative to their sizes) and is
    kept within its interval.

    A subnormal mass is known only to the least subnormal (a product's Q-mass that underflowed
    is raised to it, :func:`fdp.composition._exp_up`): where a part's Q-mass is subnormal its
    P-mass is its own, not q e^{−ℓ}, and where an outcome's Q-mass is subnormal its P-mass is
    read on the P-side (the staying part's own P-mass at a kink, the change of A at a switched
    kink, |ΔA| at a crossing).
    """
    u = UNIT_ROUNDOFF
    parts = []
    p_only = 0.0  # the larger P-mass at loss −∞ (or with no Q-mass) of the parts
    p_inf = []  # each part's P-mass at loss −∞ (or with no Q-mass)
    for x in (f, g):
        p, q, loss = x._masses
        err = x._loss_errs()
        fin = np.isfinite(loss) & (q > 0.0)
        pf, qf, lf = p[fin], q[fin], loss[fin]
        # each outcome's P-mass: q e^{−ℓ} (no underflow in logs) where q is normal; where q is
        # subnormal it is known only to the least subnormal, and the P-mass is the part's own
        # (at most, where that is subnormal too, q e^{−ℓ}; an underflowed p stays 0 below loss
        # 0, where q e^{−ℓ} is no bound). Read as q e^{−ℓ}, compose(oue(700), grr(745, 5))'s
        # outcome P = 0.5, Q = 5e-324 (raised from ~1e-628), loss −1445 gave its symmetrization
        # a P-mass of 1.8e304 (and 1.75 at loss −745, 3.5x the true 4.9e-305 at −45), and
        # poisson_subsample(·, 0.5).symmetric and subsample(·, 0.9) read δ(0) = (1, 1) for the
        # true 0.5 and 0.9 (their lower ends above the truth)
        with np.errstate(divide="ignore", under="ignore"):
            lql = np.log(qf) - lf
            lpf = np.log(pf)
        sub = qf < MIN_NORMAL
        lp_own = np.where(pf >= MIN_NORMAL, lpf, np.minimum(
            lql, np.where((pf > 0.0) | (lf < 0.0), lpf, np.inf)))
        lpt = np.where(sub, lp_own, lql)
        with np.errstate(under="ignore"):
            pt = np.where(sub & (pf >= MIN_NORMAL), pf, np.exp(lpt))  # (p itself: no exp∘log)
        parts.append((qf, lf, err[fin], float(x._mass_qinf), lpt, pt))
        p_inf.append(float(p[~fin].sum()))
        p_only = max(p_only, p_inf[-1])
    kinks = np.unique(np.concatenate([pt[1] for pt in parts]))[::-1]  # decreasing
    m = kinks.size
    n_tot = sum(pt[0].size for pt in parts) + 4.0
    big_b, comp, log_a, own, own_err = [], [], [], [], []
    a_tails, own_p = [], []  # P-side: (A above K_k, A from K_k on, P-mass below K_k, to K_k)
    a_mag, a_err = [], []  # log A's charged rounding (units of 2u), its P-masses' loss bound
    for q, loss, err, qi, lpt, pt in parts:
        idx = np.searchsorted(-loss, -kinks, side="right")  # outcomes with loss ≥ K_k
        cq = np.concatenate([[0.0], np.cumsum(q)])
        rq = np.concatenate([np.cumsum(q[::-1])[::-1], [0.0]])  # Q-mass from i on
        big_b.append(qi + cq[idx])
        comp.append(rq[idx])
        # log A by blocks (:func:`fdp.tradeoff._log_cumsum`): within u·(|log A| + k) plus its
        # charged bound. np.logaddexp.accumulate rounds every step to an ulp of the running
        # log, a relative u·|log A| of A each time, and that drifts one way: k P-masses of
        # 0.45 ulp of A each after a large one were lost whole (A 1e-10 low for k = 2000 at
        # log A = −600, charged 2ku = 4.4e-13), and the crossing below min_envelope's kink
        # read 1e-10 low in loss for its charged 2.7e-12: compose(min_envelope(f, g), T(P, Q))
        # read δ's upper end 15% below the exact value (tests/test_envelope_logsum.py)
        la = np.full(lpt.size + 1, -np.inf)
        mag: np.ndarray | float = 0.0
        if lpt.size:
            la[1:], mag = _log_cumsum(lpt)
        mag = np.broadcast_to(mag, la.shape)
        log_a.append(la[idx])
        a_mag.append(mag[idx])
        # and each P-mass q e^{−ℓ} within its loss's bound of the truth (the largest so far)
        e_run = np.concatenate([[0.0], np.maximum.accumulate(err)]) if err.size else np.zeros(1)
        a_err.append(np.expm1(e_run[idx]))
        rp = np.concatenate([np.cumsum(pt[::-1])[::-1], [0.0]])  # P-mass from i on
        # the part's own mass at K_k: every outcome with that loss, [at, idx) (a part may hold
        # several: a crossing clipped onto a kink. Reading only the first lost the others' mass:
        # poisson_subsample(from_distributions([.5, .5, 3e-308], [0, .5, .5]), 1e-8).symmetric
        # kept 1 − 5e-9 of its Q-mass, and a product with it read δ(0) 4e-9 relative low)
        at = np.searchsorted(-loss, -kinks, side="left")
        hit = at < idx
        ends = np.stack([at[hit], idx[hit]], axis=1).ravel()
        with np.errstate(invalid="ignore"):
            grp = np.add.reduceat(np.append(q, 0.0), ends)[::2] if ends.size else ends
            grp_e = np.maximum.reduceat(np.append(err, 0.0), ends)[::2] if ends.size else ends
        o, oe = np.zeros(kinks.size), np.zeros(kinks.size)
        o[hit], oe[hit] = grp, grp_e
        own.append(o)
        own_err.append(oe)
        with np.errstate(invalid="ignore"):
            grp_p = np.add.reduceat(np.append(pt, 0.0), ends)[::2] if ends.size else ends
        op = np.zeros(kinks.size)
        op[hit] = grp_p
        own_p.append(op)
        with np.errstate(under="ignore"):
            a_tails.append((np.exp(la[at]), np.exp(la[idx]), rp[idx], rp[at]))
    bf, bg = big_b
    # ΔB from the tails or from the complements, whichever is smaller (the totals agree)
    small = bf + bg <= comp[0] + comp[1]
    d_b = np.where(small, bf - bg, comp[1] - comp[0])
    e_b = n_tot * u * np.where(small, bf + bg, comp[0] + comp[1])
    laf, lag = log_a
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        hi_a, lo_a = np.maximum(laf, lag), np.minimum(laf, lag)
        l_da = hi_a + np.log1p(-np.exp(lo_a - hi_a))  # log |ΔA|
        s_a = np.sign(laf - lag)
        s_a = np.where(laf == lag, 0.0, s_a)
        # each A's relative error: its sum's rounding u·(|log A| + k) + 2u·mag, k ≤ n_tot,
        # and its P-masses' (from the losses, within their bounds)
        mag_a = np.maximum(a_mag[0], a_mag[1])
        rho_a = (u * (np.abs(np.nan_to_num(hi_a, neginf=0.0)) + 2.0 * mag_a + 2.0 * n_tot + 4.0)
                 + np.maximum(a_err[0], a_err[1]))
        r_a = 2.0 * rho_a * np.exp(hi_a - l_da)  # relative error of |ΔA|
    # ΔA, like ΔB, from the tails where they are smaller (the totals agree: A_X = 1 − P_X(−∞)
    # − P-mass of X below K_k): from the heads, a difference far below their ulp is lost.
    # min_envelope(from_distributions([2e-308, 7e-323, 1e-323, 1], …), from_distributions(
    # [1e-17, 1, 7e-323], [1e-300, .977, .023])) read ΔA = 0 (A_f = 1 + 2e-308, A_g =
    # 1 + 7e-323) for the true 1e-17 below g's kink at loss −0.023, kept f on top down to −∞,
    # and lost g's outcome P = 1e-17, Q = 1e-300 (loss −651.6): the inverse read δ(0.5)'s upper
    # end 0 for the exact 1e-17 (a hunt, seed 5051)
    (_, fa_ge0, fc_lt0, _), (_, ga_ge0, gc_lt0, _) = a_tails
    t_sum = fc_lt0 + gc_lt0 + p_inf[0] + p_inf[1]
    use_tail = t_sum < fa_ge0 + ga_ge0
    if use_tail.any():
        d_at = (p_inf[1] - p_inf[0]) + (gc_lt0 - fc_lt0)  # A_f − A_g
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            l_dat = np.log(np.abs(d_at))
            r_at = 2.0 * n_tot * u * t_sum / np.abs(d_at)
        l_da = np.where(use_tail, l_dat, l_da)
        s_a = np.where(use_tail, np.sign(d_at), s_a)
        r_a = np.where(use_tail, r_at, r_a)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        lc = np.log(np.abs(d_b)) - l_da  # the crossing's log x
        # its rounding: ΔB's and ΔA's relative errors, and the logarithms' ulps
        tol_c = e_b / np.abs(d_b) + r_a + 4.0 * u * (np.abs(lc) + np.abs(l_da) + 1.0)
    top = kinks
    bot = np.append(kinks[1:], -np.inf)
    # a crossing within its rounding of an end of its interval is read at that end, the kink:
    # a crossing exactly at a kink, read an ulp inside each interval around it, switched the
    # top part three times there, and the switch into the part with the smaller B gave the
    # kink a negative mass, dropped: subsample(from_distributions([.75, .25, 3e-308],
    # [1e-300, .25, .75]), 1e-8) held masses summing to 1.5 (a hunt). The kink's outcome then
    # stands for the crossing's too, its loss known to the crossing's rounding.
    with np.errstate(invalid="ignore"):
        tol_s = np.minimum(np.nan_to_num(tol_c, nan=np.inf), top - bot)  # (within its interval)
        near_top = np.isfinite(lc) & (top - lc <= tol_s)
        near_bot = np.isfinite(lc) & ~near_top & (lc - bot <= tol_s)
    lc = np.where(near_top, top, np.where(near_bot, bot, lc))
    snap_err = np.zeros(m)
    np.maximum.at(snap_err, np.flatnonzero(near_top), tol_s[near_top])
    np.maximum.at(snap_err, np.flatnonzero(near_bot) + 1, tol_s[near_bot])
    # which part is on top in the upper and lower part of each interval (True: f)
    f_whole = np.where(s_a == 0, d_b >= 0,
                       np.where(s_a > 0, (d_b > 0) & (lc >= top), (d_b >= 0) | (lc <= bot)))
    g_whole = np.where(s_a == 0, d_b < 0,
                       np.where(s_a > 0, (d_b <= 0) | (lc <= bot), (d_b < 0) & (lc >= top)))
    cross = ~f_whole & ~g_whole
    top_f = np.where(cross, s_a < 0, f_whole)  # (f steeper: f below the crossing)
    bot_f = np.where(cross, s_a > 0, f_whole)
    qi_f, qi_g = parts[0][3], parts[1][3]
    first_f = qi_f > qi_g or (qi_f == qi_g and bool(top_f[0])) if m else True
    prev_f = np.concatenate([[first_f], bot_f[:-1]])
    # kink masses: the staying part's own; on a change B_cur(k) − B_prev(k−1)
    own_f, own_g = own
    q_k = np.where(prev_f == top_f, np.where(top_f, own_f, own_g),
                   np.where(top_f, d_b + own_g, -d_b + own_f))
    # their P-masses where q_k is subnormal (see below): the staying part's own; on a change
    # A_cur(k) − A_prev(k−1), from the tails above or (the totals 1 − P-mass at −∞) below
    # K_k, whichever are smaller
    p_k = np.where(top_f, own_p[0], own_p[1])
    (fa_gt, fa_ge, fc_lt, fc_le), (ga_gt, ga_ge, gc_lt, gc_le) = a_tails
    pif, pig = p_inf
    head = np.where(top_f, fa_ge - ga_gt, ga_ge - fa_gt)
    tail = np.where(top_f, (pig - pif) + (gc_le - fc_lt), (pif - pig) + (fc_le - gc_lt))
    use_head = np.where(top_f, fa_ge + ga_gt, ga_ge + fa_gt) <= np.where(
        top_f, fc_lt + gc_le, gc_lt + fc_le) + pif + pig
    p_k = np.where(prev_f == top_f, p_k, np.maximum(np.where(use_head, head, tail), 0.0))
    e_k = np.maximum(np.maximum(own_err[0], own_err[1]), snap_err)
    # crossings: the change of B, at log x_c (its rounding tol_c), kept within the interval
    q_c = np.abs(d_b[cross])
    with np.errstate(divide="ignore", invalid="ignore"):
        l_c = np.clip(lc[cross], bot[cross], top[cross])
        e_c = np.minimum(np.nan_to_num(tol_c[cross], nan=np.inf), top[cross] - bot[cross])
    with np.errstate(under="ignore"):
        p_c = np.exp(l_da[cross])  # |ΔA|
    loss = np.concatenate([kinks, l_c])
    qq = np.maximum(np.concatenate([q_k, q_c]), 0.0)
    ee = np.concatenate([e_k, e_c])
    p_side = np.concatenate([p_k, p_c])
    a_hi = np.concatenate([hi_a, hi_a[cross]])  # log max(A_f, A_g) from the outcome's kink on
    a_mg = np.concatenate([mag_a, mag_a[cross]])  # its sum's charged rounding
    order = np.argsort(-loss, kind="stable")
    loss, qq, ee, p_side = loss[order], qq[order], ee[order], p_side[order]
    a_hi, a_mg = a_hi[order], a_mg[order]
    keep = qq > 0.0
    loss, qq, ee, p_side = loss[keep], qq[keep], ee[keep], p_side[keep]
    a_hi, a_mg = a_hi[keep], a_mg[keep]
    # a subnormal Q-mass is known only to the least subnormal (a part's may be raised to it from
    # ~1e-628), and q e^{−ℓ} magnifies that by e^{−ℓ}: its P-mass is read on the P-side (as
    # q e^{−ℓ}, symmetrize(compose(oue(700), grr(745, 5))) held P-masses 1.75 and 1.8e304)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        pp = np.where(qq < MIN_NORMAL, p_side, np.exp(np.log(qq) - loss))
        # (A in logs: its sum within u·(|log A| + k) and 2u·mag, each part's P within 2u; the
        # P-masses here come from the same losses, so their bounds do not enter)
        cap = np.exp(a_hi) * (1.0 + 4.0 * n_tot * u * (np.abs(a_hi) + 2.0) + 4.0 * u * a_mg)
    # the envelope's P-mass at losses ≥ K is its top part's A there, at most max(A_f, A_g):
    # each running sum of pp is cut to it (c_i = min(c_{i−1} + p_i, cap_i), cap the least from
    # i on; no mass rises). Where the Q-masses are subnormal the parts' lines are not
    # continuous at their own kinks (q ≠ p e^ℓ once raised), the top part there is rounding,
    # and the changes of A along it need not telescope: symmetrize(compose(from_distributions(
    # …), …)) of three pairs with masses near 1e-300 (a helper's hunt, seed 1187) held P-masses
    # 0.861 at loss −744.3 and 0.894 at −1474.4 (Σ 1.76), switching down to the smaller A at
    # −1425.1 (a negative mass, dropped) and back up, and subsample(·, 0.5) read δ(0) 0.878
    # for the exact 0.5
    cap = np.minimum.accumulate(cap[::-1])[::-1]
    cut = np.minimum(np.minimum.accumulate(cap - np.cumsum(pp)), 0.0)
    pp = np.maximum(pp + np.diff(cut, prepend=0.0), 0.0)
    # P-mass at loss −∞: min{f, g}** is 0 from the first α where either part is, so its
    # P-atom is the larger of the parts'; 1 − Σ pp beyond it is the rounding of the losses pp
    # come from, not mass at −∞. (Taken whole, a loss raised to 1.8e-15 on P = Q = 1 left a
    # phantom P-atom of 1.8e-15, which a mixture's inverse, read on either side, took as
    # Q-mass at loss 20.8: symmetrize(poisson_subsample(poisson_subsample(exponential([-1, 1],
    # [-2, 2], 600), 1e-6).symmetric, 1 − 2⁻³⁰).remove) read δ(0)'s lower end 1.8e-15 for the
    # exact 2.7e-267, and ε(1e-200)'s 20.79 for 0; a hunt, seed 2474)
    rest = min(max(1.0 - float(pp.sum()), 0.0), p_only)
    if rest > 0.0:
        pp, qq = np.append(pp, rest), np.append(qq, 0.0)
        loss, ee = np.append(loss, -np.inf), np.append(ee, 0.0)
    for arr in (pp, qq, loss):
        arr.setflags(write=False)
    return pp, qq, loss, ee


class _PartsEnvelope(PiecewiseLinear):
    """min{f, g}** with δ and ε the larger of the parts' own (the envelope's privacy profile
    is max(δ_f, δ_g) exactly, theory §3; the proof is :class:`_ProfileMax`'s, so ε(δ) is
    max(ε_f(δ), ε_g(δ))); β from the hull of their breakpoints. With lower parts this is
    :class:`_LowerEnvelope`; with the parts' optimistic twins, its twin (each part's reading at
    most its true value, so the larger at most the envelope's)."""

    _parts: tuple[PiecewiseLinear, PiecewiseLinear]

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        f, g = self._parts
        return np.maximum(f._delta(eps), g._delta(eps))

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        f, g = self._parts
        return np.maximum(f._epsilon(delta), g._epsilon(delta))

    def _swapped_p_rtol(self) -> float:
        """The relative error of the P-masses beyond ``mass_rtol``: read from the Q-masses and
        losses, p = q e^{−ℓ} (:func:`_envelope_masses`), ℓ within its recorded bound r of the
        truth, so p within e^r − 1, plus the rounding of log q, of the difference and of exp
        (u each of |log q| and |log p|). δ and β read the masses' relative error from
        ``mass_rtol`` (the Q-masses and losses are what δ reads, the P-masses only α), but a
        mixture built outcome by outcome swaps them into its inverse's Q-masses (its β near
        α = 1, and C_p(f) into its mirror images'), and so does this curve's own inverse.
        Taken as exact, the mixture of symmetrize(from_distributions(…)) with losses near ±700
        and P-masses 3.6e-14 above the truth read f_p⁻¹(0.9968207908173234) =
        2.161290877018544e-224, 8e-15 relative above the exact value (a hunt, seed 400220),
        and the inverse of min{f, g}** of two products of pairs with masses near 1e-300
        (P-masses summing to 1 − 2.3e-13) read δ(ε)'s upper end 0.9999999999997687 for the
        exact 1 − 1.2e-309 at every ε from −5 to 20 (helper-46)."""
        if self._given_masses is None:
            return 0.0
        p, q, loss = self._masses
        ok = (p > 0.0) & (q > 0.0) & np.isfinite(loss)
        if not ok.any():
            return 0.0
        r = self._loss_errs()[ok]
        u = UNIT_ROUNDOFF
        return float(np.max(np.expm1(r) * (1.0 + 2.0 * u)
                            + u * (np.abs(np.log(q[ok])) + np.abs(np.log(p[ok])) + 4.0)))


class _LowerEnvelope(_PartsEnvelope):
    """min{f, g}** of two lower (conservative or exact) curves, δ and ε from the parts, each
    read from its own masses and losses on its side. The hull's breakpoints lose what the
    parts keep: beyond ε ≈ 708 their kinks underflow, and
    poisson_subsample(EpsDelta(744), 0.3).symmetric read ε(1e-3) = 742.54 for the true 742.79
    (below it), and ∞ at ε = 800."""

    def _as_upper(self) -> PiecewiseLinear:
        if self._twin_build is not None:  # (parts without an optimistic reading of their own
            # masses: the envelope of their twins, :func:`_envelope_twin`)
            return PiecewiseLinear._as_upper(self)
        f, g = self._parts
        out = PiecewiseLinear._as_upper(self)
        out.__class__ = _PartsEnvelope
        out._parts = (f._as_upper(), g._as_upper())  # type: ignore[attr-defined]
        return out


class _UpperEnvelope(PiecewiseLinear):
    """min{f, g}** of two certified upper curves: the hull of their breakpoints, with δ and ε
    the largest of the hull's and the parts' own.

    The envelope's privacy profile is max(δ_f, δ_g) (theory §3), and an upper curve's δ is a
    lower bound on the true one, so max(δ_f↑, δ_g↑) is a lower bound on the envelope's true δ
    (and max(ε_f↑, ε_g↑) on its ε). The parts' profiles keep what the breakpoints lose: an
    engine's upper curve is raised by its slack as a constant in its breakpoints, but charges
    it as a step function of ε in its profile (3e-13 for DP-SGD at σ = 1, p = 0.003,
    T = 3000, where the profile's own charge at ε = 4.2 is below 1e-20: the hull read δ = 0
    there)."""

    _parts: tuple[PiecewiseLinear, PiecewiseLinear]

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        f, g = self._parts
        return np.maximum(super()._delta(eps), np.maximum(f._delta(eps), g._delta(eps)))

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        f, g = self._parts
        return np.maximum(super()._epsilon(delta),
                          np.maximum(f._epsilon(delta), g._epsilon(delta)))


class _ProfileMax:
    """δ(ε) and ε(δ) of min{f, f⁻¹}** for an exact curve f, from f's and f⁻¹'s own profiles.

    **Claim.** The privacy profile of min{f, g}** is max(δ_f, δ_g), so its ε(δ) is
    max(ε_f(δ), ε_g(δ)). **Proof.** δ_h(ε) = sup_α (1 − e^ε α − h(α)); the sup of the linear
    function 1 − e^ε α minus min{f, g} is the larger of the two sups, and replacing min{f, g} by
    its convex envelope does not change the sup of a linear functional minus it (theory §3). ∎

    A :class:`~fdp.numeric.Bracketed` consults it (``closed=``) on every δ and ε query, so the
    result keeps f's exact values where the envelope of lines cannot: below α ≈ 1e-308 its kinks
    underflow, and ``symmetrize(Mixture(G_2, 0.01)).epsilon(1e-300)`` read ∞ (ε_f = 71.08).
    Conservative side: the maximum over f and f⁻¹ of their (rounded-up) values. Optimistic side:
    f's own values only (max(ε_f, ε_g) ≥ ε_f), from f's optimistic twin where it has one
    (``_as_upper``), else less :attr:`MARGIN` relative (exact curves are rounded up, by ~1e-14
    relative against mpmath), and none when f is a generic
    :class:`~fdp.tradeoff.Inverse`, whose profile 1 − e^ε + e^ε δ(−ε) cancels below δ ≈ 1e-16
    and reads high there.
    """

    #: relative margin taken off f's values on the optimistic side
    MARGIN = 1e-9

    name = "exact profile"

    def __init__(self, f: TradeOff) -> None:
        self._f, self._g = f, f.inverse()

    def delta_upper(self, eps: np.ndarray, floor: object = 0.0) -> np.ndarray:
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        return np.maximum(np.asarray(self._f.delta(e), dtype=float),
                          np.asarray(self._g.delta(e), dtype=float))

    def epsilon_upper(self, delta: np.ndarray, hint: object = math.inf) -> np.ndarray:
        d = np.atleast_1d(np.asarray(delta, dtype=float))
        return np.maximum(np.asarray(self._f.epsilon(d), dtype=float),
                          np.asarray(self._g.epsilon(d), dtype=float))

    def _twin(self) -> TradeOff | None:
        """f's optimistic reading where it has one (then no margin is needed)."""
        f = self._f
        return f._as_upper() if f._has_twin() else None  # type: ignore[attr-defined]

    def delta_lower(self, eps: np.ndarray) -> np.ndarray:
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        twin = self._twin()
        if twin is not None:
            return np.asarray(twin.delta(e), dtype=float)
        if isinstance(self._f, Inverse):
            return np.zeros(e.shape)
        # f's δ read at ε + 1e-10 (|ε| + 1): δ falls in ε, and the shift exceeds the rounding
        # of the arguments f reads its closed form at (Mixture's ε' is rounded down by 8u of
        # its terms: read at ε itself, the lower end was 2.8x the truth next to the largest
        # loss, symmetrize(Mixture(L_30, 1e-6)).delta_bracket(16.18), a helper's hunt)
        with np.errstate(invalid="ignore"):
            shifted = np.where(np.isfinite(e), e + 1e-10 * (np.abs(e) + 1.0), e)
        d = np.asarray(self._f.delta(shifted), dtype=float)
        # (below the normal range δ is rounded up to a subnormal, e.g. the least one for a true
        # 1e-446: no lower bound there)
        return np.where(d >= 1e-300, d * (1.0 - self.MARGIN), 0.0)

    def epsilon_lower(self, delta: np.ndarray, hint: object = 0.0) -> np.ndarray:
        d = np.atleast_1d(np.asarray(delta, dtype=float))
        twin = self._twin()
        if twin is not None:
            return np.asarray(twin.epsilon(d), dtype=float)
        if isinstance(self._f, Inverse):
            return np.zeros(d.shape)
        # (f's value less a margin: where δ(ε) is flat near δ this can still be above the truth
        # by more than the margin; only curves without a twin come here)
        return np.asarray(self._f.epsilon(d), dtype=float) * (1.0 - self.MARGIN)


class _BracketProfileMax(_ProfileMax):
    """δ(ε) and ε(δ) of min{f_1, …, f_k}** for certified curves f_i (brackets, or curves built
    on them that answer from their bases' certified profiles, as :class:`Mixture` does), from
    their own profiles: the profile of min{f_1, …, f_k}** is max_i δ_{f_i} (as in
    :class:`_ProfileMax`), so each side is the maximum of the parts' certified values on that
    side. The bracket of min{…}** then keeps the parts' deep tails (their closed-form tail
    bounds), which the envelope of the sides' lines loses where its kinks underflow:
    ``symmetrize(compose(compose(Laplace(5), repeat=3), from_distributions(…)))`` read
    ε(1e-50) = ∞ for the exact 23.70 and ``gdp_mu`` ∞; ``subsample`` and
    ``poisson_subsample(…).symmetric`` of it ∞ too (a hunt)."""

    name = "profiles of the parts"

    def __init__(self, *parts: TradeOff) -> None:
        self._parts = parts

    def delta_upper(self, eps: np.ndarray, floor: object = 0.0) -> np.ndarray:
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        return np.max([np.asarray(c.delta(e), dtype=float) for c in self._parts], axis=0)

    def epsilon_upper(self, delta: np.ndarray, hint: object = math.inf) -> np.ndarray:
        d = np.atleast_1d(np.asarray(delta, dtype=float))
        return np.max([np.asarray(c.epsilon(d), dtype=float) for c in self._parts], axis=0)

    def delta_lower(self, eps: np.ndarray) -> np.ndarray:
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        return np.max([np.asarray(c.delta_bracket(e)[0], dtype=float) for c in self._parts],
                      axis=0)

    def epsilon_lower(self, delta: np.ndarray, hint: object = 0.0) -> np.ndarray:
        d = np.atleast_1d(np.asarray(delta, dtype=float))
        return np.max([np.asarray(c.epsilon_bracket(d)[0], dtype=float) for c in self._parts],
                      axis=0)


def max_curve(f: PiecewiseLinear, g: PiecewiseLinear) -> PiecewiseLinear:
    """max{f, g} of two PL curves (convex: a max of convex functions). Exact.

    Its kinks are both curves' (with their complements 1 − α: near α = 1 those tell kinks apart
    that α rounds together) and one crossing between consecutive kinks where f − g changes sign.
    A crossing x_c is rounded, and the chord through max{f, g} at a point beside it lies above
    the kink; so it is read as min{f, g}(x_c): on [x_k, x_{k+1}] both curves are lines, and the
    chords through that point lie below the line on top on each side, wherever x_c falls in the
    interval. The curve is the lower convex hull of these points (each below max{f, g}).

    (Read at the crossing's rounded x, a crossing next to α = 0, rounded to a subnormal on a
    kink, left the chord across it: max_curve of two from_distributions curves with subnormal
    P-masses read f(1.4e-322) = 0.78574 for the exact 0.78516; kinks near α = 1 merged in α
    left one 1 − 3e-16 off: f(1 − 2⁻⁵²) read 7.6e-18 for the exact 7.4e-101; and the product
    of two differences of 1e-200 underflowed and lost the sign change; a helper's hunt.)
    """
    a = np.concatenate([f._a, g._a])
    ac = np.concatenate([f._ac, g._ac])

    def read(a: np.ndarray, ac: np.ndarray) -> tuple[np.ndarray, ...]:
        fv, fvc = f._eval_pair(a, ac)
        gv, gvc = g._eval_pair(a, ac)
        return fv, fvc, gv, gvc

    order = np.lexsort((-ac, a))
    a, ac = a[order], ac[order]
    first = np.concatenate([[True], (a[1:] != a[:-1]) | (ac[1:] != ac[:-1])])
    a, ac = a[first], ac[first]
    fv, fvc, gv, gvc = read(a, ac)
    y, yc = np.maximum(fv, gv), np.minimum(fvc, gvc)
    # f − g, from the complements where both are above 1/2
    dd = np.where(np.minimum(fv, gv) > 0.5, gvc - fvc, fv - gv)
    sg = np.sign(dd)
    cross = np.flatnonzero(sg[:-1] * sg[1:] < 0)
    if cross.size:
        t = dd[cross] / (dd[cross] - dd[cross + 1])
        a0, a1, c0, c1 = a[cross], a[cross + 1], ac[cross], ac[cross + 1]
        hi = a0 > 0.5  # (in the complement there)
        xc = np.clip(np.where(hi, 1.0 - (c0 - t * (c0 - c1)), a0 + t * (a1 - a0)), a0, a1)
        xcc = np.clip(np.where(hi, c0 - t * (c0 - c1), 1.0 - xc), c1, c0)
        cf, cfc, cg, cgc = read(xc, xcc)
        a, ac = np.concatenate([a, xc]), np.concatenate([ac, xcc])
        y = np.concatenate([y, np.minimum(cf, cg)])
        yc = np.concatenate([yc, np.maximum(cfc, cgc)])
        # (by α, then 1 − α, lowest β first; equal points keep the lowest)
        order = np.lexsort((y, -ac, a))
        a, ac, y, yc = a[order], ac[order], y[order], yc[order]
        first = np.concatenate([[True], (a[1:] != a[:-1]) | (ac[1:] != ac[:-1])])
        a, ac, y, yc = a[first], ac[first], y[first], yc[first]
    idx = lower_hull_c(a, ac, y, yc)
    kind = "exact" if f.kind == g.kind == "exact" else f.kind
    return PiecewiseLinear(a[idx], y[idx], alpha_c=ac[idx], beta_c=yc[idx], kind=kind)


def _mixed_losses(loss: np.ndarray, p: float) -> tuple[np.ndarray, np.ndarray]:
    """Losses of p f + (1 − p) Id outcome by outcome, ℓ' = log(1 − p + p e^ℓ), and a bound on
    their rounding, to be charged on a curve's side: up on it, down before an inverse negates
    them. Two formulas, each with its own bound, and per outcome the one whose bound is smaller:

    - log1p(z), z = p·expm1(ℓ) (ℓ ≤ 1 only). z is within 3.01u|z| of its value (expm1 within
      2u, the product u), and log1p moves that by at most twice |Δz|/(1 + z) = |Δz| e^{−ℓ'}
      while it is below 1/2 (|log1p(x)| ≤ 2|x| there), plus its own 2u: within
      6u|ℓ'| + 7u|z| e^{−ℓ'}. Near ℓ' = 0 this is a few ulps of ℓ' (from logaddexp the two
      terms cancelled: the remove pair of EpsDelta(1e-12) at p = 1e-6 read its loss 1e-18 5e-5
      relative low, beyond the bound then charged; a hunt against mpmath). Where 1 + z is small
      (p near 1, ℓ very negative) it is ill-conditioned: with 6u|ℓ'| alone charged, as before,
      subsample(T(P, Q), 1 − 2⁻³⁰) read its largest loss −log(1 − p + p e^ℓ) 3e-11 relative low
      and δ at it 3 % low (a helper's hunt against mpmath at 500 digits).
    - logaddexp(log(1 − p), log p + ℓ): within 4 ulps of log1p's and the given loss's sizes and
      of log p's times the share of p e^ℓ, absolutely (no cancellation: both terms positive).

    (Read to the nearest float, the add pair of f ≡ 0 put its inverse's largest loss −log(1 − p)
    1e-16 below the truth, where δ is 5e-18, not 0.)"""
    lp1 = math.log1p(-p) if p < 1.0 else -np.inf
    if p == 1.0:  # (ℓ' = ℓ, exactly)
        return np.asarray(loss, dtype=float).copy(), np.zeros(np.shape(loss))
    lp = math.log(p)
    u = UNIT_ROUNDOFF
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        z = p * np.expm1(np.minimum(loss, 1.0))
        small = np.log1p(z)
        # (|z| e^{−ℓ'} read at the computed ℓ' with a factor 2 to spare: the bound is used
        # only where it is tiny, so the two differ by far less)
        err_small = 6.0 * u * np.abs(small) + 14.0 * u * np.abs(z) * np.exp(
            np.minimum(-small, 700.0))
        big = np.logaddexp(lp1, lp + loss)
        share = np.minimum(np.exp(np.minimum(lp + loss - big, 0.0)), 1.0)
        err_big = 4.0 * u * (np.abs(big) + abs(lp1)
                             + np.where(np.isfinite(loss), np.abs(loss), 0.0)
                             + share * abs(lp))
        low = (loss <= 1.0) & (err_small <= err_big)
        new_loss = np.where(low, small, big)
        # (plus the least subnormal: p·expm1(ℓ) or p e^ℓ may underflow; ℓ = p = 4e-168 read
        # ℓ' = 0 for 1.8e-335 with no charge)
        err = np.where(low, err_small, err_big) + TINY
    return new_loss, np.where(np.isfinite(new_loss), err, 0.0)


def _mixture_pl(f: PiecewiseLinear, p: float) -> PiecewiseLinear:
    """f_p = p f + (1 − p) Id for a PL curve (:func:`_mixture_pl_of`), with f's twin flag."""
    out = _mixture_pl_of(f, p)
    if not f._twin_ok:
        inherit_twin(out, f)
        inherit_twin(out.inverse(), f)
        if f._has_twin() and f.kind == "exact":
            # (an exact product's curve: the mixture of its twin, a post-processing of the
            # true pair, is one of the true mixture, and so is its inverse; without it
            # subsample(compose(f, repeat=3), 0.5) had no lower end)
            out._twin_build = functools.partial(_mixture_twin, f, p, False)
            out.inverse()._twin_build = functools.partial(_mixture_twin, f, p, True)
    return out


def _mixture_twin(f: PiecewiseLinear, p: float, inverse: bool) -> PiecewiseLinear:
    """The optimistic reading of f_p (or f_p⁻¹) from f's twin (:func:`_mixture_pl`), built
    when a query first asks for it."""
    m = _mixture_pl_of(f._twin_lower(), p)
    return (m.inverse() if inverse else m)._as_upper()


def _mixture_pl_of(f: PiecewiseLinear, p: float) -> PiecewiseLinear:
    """f_p = p f + (1 − p) Id for a PL curve (exact): T(P, (1 − p)P + pQ), outcome by outcome
    (loss ℓ ↦ log(1 − p + p e^ℓ); Q's +∞ atom keeps P-mass 0). Its inverse is built alongside,
    with the losses' rounding charged the other way."""
    rtol = f._mass_rtol + 8.0 * UNIT_ROUNDOFF
    # the +∞ atom p·q_∞ rounded up: to nearest, 1e-12 · 1e-312 was 0, and subsample(subsample(
    # EpsDelta(10, 1e-300), 1e-12), 1e-12) read ε(0) = 4.4e-15 (pure DP) for the exact ∞
    atom_m, atom_b = product_up(p, f._mass_qinf), product_up(p, f._qinf)
    if not f._bound and f._side == "lower" and p > 0.0:  # from the masses: no running sums
        pm, qm, loss = f._masses
        rtol += f._swapped_p_rtol()  # (pm becomes the inverse's Q-masses)
        new_loss, err = _mixed_losses(loss, p)
        err = err + f._loss_errs()  # (ℓ ↦ ℓ' has slope at most 1: f's errors carry over)
        qq = (1.0 - p) * pm + p * qm
        # (the losses to nearest with their rounding bounds: each side charges them its way)
        mix = PiecewiseLinear.from_masses(
            pm, qq, q_inf=atom_m, loss=new_loss, loss_err=err, kind=f.kind,
            mass_rtol=rtol,
        )
        (ip, iq, il), iq_inf = _swap_masses(pm, qq, new_loss, atom_m)
        neg = np.isneginf(new_loss)
        inv = PiecewiseLinear.from_masses(
            ip, iq, q_inf=iq_inf, loss=il, loss_err=np.append(err[~neg][::-1], 0.0),
            kind=f.kind, mass_rtol=rtol,
        )
        mix._inverse_of, inv._inverse_of = inv, mix
        return mix
    a, b = f.breakpoints
    bp = p * b + (1.0 - p) * f._ac  # 1 − α from its complement (precise near α = 1)
    bcp = p * f._bc + (1.0 - p) * a
    if not (f._bound or f._side == "upper"):
        return PiecewiseLinear(
            a, bp, alpha_c=f._ac, beta_c=bcp, q_inf=atom_b,
            q_cum=p * f._qc + (1.0 - p) * a, kind=f.kind,
        )
    # A certified side stays one (the result keeps it, so that its evaluation, δ, ε and
    # inverse round on it). Read plainly, an upper curve's mixture charged its losses' rounding
    # upward, and its inverse's δ near the largest loss came out 1e-9 relative above the truth;
    # and β ≈ 1 − p differenced into masses merged segments whose Q-mass is below its ulps (a
    # chord above a lower curve). So:
    # - breakpoints pointwise: two products and a sum, at most 3 ulps, rounded outward;
    # - masses from the base's segments (differenced in the base's own coordinates, precise),
    #   mapped outcome by outcome: P' = P, Q' = (1 − p) P + p Q, ℓ' = log(1 − p + p e^ℓ);
    # - the inverse swaps both, from the base's segments with their losses' rounding charged
    #   the other way (negated, it lands on this side).
    r = (4.0 if f._side == "upper" else -4.0) * UNIT_ROUNDOFF
    bp = np.minimum(bp * (1.0 + r), 1.0)
    bcp = np.maximum(bcp * (1.0 - r), 0.0)
    # (the atom of the breakpoints the segments come from; rounded down on the upper side)
    mass_q_inf = atom_b if f._side == "lower" else -product_up(-p, f._qinf)

    def masses(side: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pm, qm, loss = f._segments_on(side)
        keep = (pm > 0) | (qm > 0)
        pm, qm, loss = pm[keep], qm[keep], loss[keep]
        new_loss, err = _mixed_losses(loss, p)
        return pm, (1.0 - p) * pm + p * qm, new_loss + (err if side == "lower" else -err)

    def frozen(arrs: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
        for arr in arrs:
            arr.setflags(write=False)
        return arrs

    mix = PiecewiseLinear(
        a, bp, alpha_c=f._ac, beta_c=bcp, q_inf=float(bcp[0]), kind=f.kind, side=f._side,
        bound=True, masses=frozen(masses(f._side)), mass_q_inf=mass_q_inf, mass_rtol=rtol,
    )
    inv_masses, inv_atom = _swap_masses(*masses("lower" if f._side == "upper" else "upper"),
                                        mass_q_inf)
    ia, iac, ib, ibc = mix._swapped()
    inv = PiecewiseLinear(
        ia, ib, alpha_c=iac, beta_c=ibc, q_inf=float(ibc[0]), kind=f.kind, side=f._side,
        bound=True, masses=frozen(inv_masses), mass_q_inf=inv_atom, mass_rtol=rtol,
    )
    mix._inverse_of, inv._inverse_of = inv, mix
    return mix


def _profile_lower(f: TradeOff, n: int = 4001) -> PiecewiseLinear:
    """A certified lower PL curve: the envelope of lines 1 − δ(ε) − e^ε α over an ε grid.

    f ≥ 1 − δ(ε) − e^ε α for every ε (DRS Prop 2.12), so the max of finitely many lines is ≤ f.
    The grid reaches ε = 60, or f's ε(1e-300) where larger (up to 700): beyond the last line
    the curve's δ is the last line's δ at every ε, and its ε(δ) ∞ below it (symmetrize of
    p G_20 + (1 − p) Id read ε(1e-5) = ∞ where ε_f is 281).
    """
    neg = -np.geomspace(1e-4, 40.0, n // 4)[::-1]
    e = np.concatenate([neg, [0.0], np.geomspace(1e-4, 60.0, n)])
    with np.errstate(all="ignore"):
        far = float(np.asarray(f.epsilon(1e-300), dtype=float).ravel()[0])
    if math.isfinite(far) and far > 60.0:
        e = np.concatenate([e, np.geomspace(60.0, min(far * 1.01 + 1.0, 700.0), n // 4)[1:]])
    d = np.asarray(f.delta(e), dtype=float)
    # (the hull from the δ themselves: from 1 − δ, every line with δ < 1e-16 was lost, and the
    # curve's ε(1e-20) for symmetrize(p G_1 + (1 − p) Id) read 3.37 where ε_f is 4.40)
    x, y, yc = line_envelope(-np.exp(e), 1.0 - d, complements=d)
    # Each kink is moved left of and below the lines' own (so on or below the line of each
    # segment of theirs next to it): its x is a quotient of two rounded differences (3u of x),
    # and its β carries the rounding of e^ε and of e^ε x (u e^ε x each), of x itself (3u of x,
    # times a slope of at most e^ε) and of the sum: within 7u e^ε x, where e^ε x ≤ 1 − δ ≤ 1
    # (β ≥ 0). From the complement δ + e^ε x (below 1/2) that is relative to it; from the value
    # 1 − δ − e^ε x it is absolute, the ulps of 1 that 1 − δ and e^ε x cancel from. (To
    # nearest, with β charged only from the complement, the lower curve of an inverse mixture
    # put its last kink, near α = 1 − 5e-7, 1.1e-16 right of the lines' and read β 1.1e-16 an
    # ulp left of it, where the lines give 2.5e-18: subsample(poisson_subsample(
    # poisson_subsample(from_distributions(…), 1).add, 1e-6).add.inverse(), 1 − 2.8e-14) read
    # f(0.999999502166748) = 1.1e-16 for the exact 6.95e-18, and δ(0.01)'s upper end 1.1e-16
    # below the truth; a hunt, seed 400191)
    u = UNIT_ROUNDOFF
    x = np.where(x < 1.0, x * (1.0 - 5.0 * u), x)
    cancel = yc >= 0.5
    yc = np.where(cancel, yc + 12.0 * u, yc * (1.0 + 12.0 * u) + TINY)
    y = np.minimum(np.where(cancel, np.maximum(y - 12.0 * u, 0.0), 1.0 - yc), 1.0 - x)
    yc = np.maximum(yc, x)
    # the envelope is convex; its computed intersections only up to rounding: its convex
    # minorant (below them). A rounding-level kink left rising gave a segment of mass 5e-16
    # whose loss, raised over the larger segments before it (monotone fill), made 15 of them
    # share one loss 0.03 above theirs: compose(lo, lo) read 6.7e-3 above the exact product
    # of the curve lo bounds (a helper's hunt)
    idx = lower_hull_c(x, 1.0 - x, y, yc)
    return PiecewiseLinear(x[idx], y[idx], beta_c=yc[idx])


def _pl_bracket(f: TradeOff) -> tuple[PiecewiseLinear, PiecewiseLinear]:
    """Certified PL lower and upper curves of an exact curve: tangent lines below, chords above.

    A bracketed curve that is not a :class:`Bracketed` (a mixture, inverse or δ-mix of one)
    takes its chords from its upper side: its own values are its lower curve's, and chords
    through them lie below the truth. subsample(poisson_subsample(group(exponential(...), 3),
    0.5).add, 1e-6), whose group bracket is [0, 1 − α], read its upper curve 1 − 1.5e-6 at
    α = 1e-6 for the exact 1 − 1e-6, and the lower end of δ(0)'s bracket 5e-7 for the exact
    5.5e-202 (helper-44, hunt seed 400152)."""
    if f.kind == "bracket":
        return _profile_lower(f), f.upper.to_piecewise()
    return _profile_lower(f), f.to_piecewise()


# ------------------------------------------------------------------------ group privacy


def _group_pl(
    f: PiecewiseLinear, k: int, side: str = "lower", lost_out: list[bool] | None = None,
    capped: bool = True, capped_out: list[bool] | None = None,
) -> PiecewiseLinear:
    """1 − (1 − f)^{∘k} for a PL curve, built kink by kink.

    g_k(α) = f(1 − g_{k−1}(α)); the kinks are those of g_{k−1} and the preimages of f's kinks.
    1 − g is carried through the complements (tail sums), so tiny atoms (δ = 1e-300) survive.
    Rounding is resolved on ``side``: "lower" (a guarantee) snaps rounding-level values of β to
    0 and, where kinks underflow below α ≈ 1e-290, starts at the first kept kink (the chord from
    (0, 1) would lie above the curve); "upper" keeps that chord (it lies above the curve).
    ``capped`` (lower side) caps the merged points by bounds of the true kinks
    (:func:`_left_below`); an optimistic twin's build turns it off (:func:`_group_twin`).
    ``capped_out`` (a list) gets True appended where a cap moved a point.
    """
    g = f
    # the slope of f(1 − g(α)) is f'(1 − g(α))·(−g'(α)): each segment's loss is the sum of a
    # loss of f and one of g, known better than differenced from the computed kinks (these are
    # off by a few ulps each step: group(sue(1e-6), 4) read ε(0) 3.9e-11 relative below 4e-6);
    # each segment remembers which two (bounds above and below: f's and g's own, summed and
    # rounded outward)
    f_up, f_lo = _segment_loss_bounds(f)
    for _ in range(k - 1):
        # kinks with their complements 1 − α (the preimages' from the inverse's complements)
        gi = g.inverse()
        # read at (1 − a, a) for f's kinks a: a kink at a = 1e-18 has 1 − a = 1.0 in float64
        px, pxc = gi._eval_pair(np.clip(f._ac, 0.0, 1.0), np.clip(f._a, 0.0, 1.0), "nearest")
        x = np.concatenate([g._a, np.clip(px, 0.0, 1.0)])
        xc = np.concatenate([g._ac, np.clip(pxc, 0.0, 1.0)])
        order = np.lexsort((-xc, x))  # equal α in float64 may still differ in 1 − α
        x, xc = x[order], xc[order]
        # which segment of g and of f each point starts: the last kink of g, and the last
        # preimage of a kink of f, at or before it (of equal points, the last one's)
        lab_g = np.maximum.accumulate(
            np.concatenate([np.arange(g._a.size), np.full(px.size, -1)])[order])
        lab_f = np.maximum.accumulate(
            np.concatenate([np.full(g._a.size, -1), np.arange(px.size)])[order])
        first = np.concatenate([[True], (x[1:] != x[:-1]) | (xc[1:] != xc[:-1])])
        last = np.append(first[1:], True)
        x, xc = x[first], xc[first]
        lab_g, lab_f = lab_g[last], lab_f[last]
        pos = np.arange(x.size)  # (a segment between points not adjacent here spans several)
        # g_{k−1}(x) and 1 − g_{k−1}(x) at x given with its complement, then f at the point
        # 1 − g_{k−1}(x) whose complement is g_{k−1}(x): near α = 1 nothing is read from a
        # rounded α (a δ = 1e-300 atom moves the kinks there by 1e-300)
        gv, gvc = g._eval_pair(x, xc, "nearest")
        gv, gvc = np.clip(gv, 0.0, 1.0), np.clip(gvc, 0.0, 1.0)
        y, yc = f._eval_pair(gvc, gv, "nearest")
        # 1 − g(x) lands on f's kinks (the preimages above) only to a few ulps, which f's steep
        # side amplifies: where it is within a relative 1e-10 of a kink, f is also read at the
        # kink itself and the lower side keeps the smaller value (the upper the larger)
        small = gvc <= 0.5
        n_k = f._a.size
        # the nearest kink in α (below 1/2) or in 1 − α (above; f._ac is decreasing)
        ja = np.clip(np.searchsorted(f._a, gvc), 1, n_k - 1)
        ja = np.where(np.abs(f._a[ja - 1] - gvc) < np.abs(f._a[ja] - gvc), ja - 1, ja)
        acr = f._ac[::-1]
        jr = np.clip(np.searchsorted(acr, gv), 1, n_k - 1)
        jr = np.where(np.abs(acr[jr - 1] - gv) < np.abs(acr[jr] - gv), jr - 1, jr)
        j = np.where(small, ja, n_k - 1 - jr)
        kin = np.where(small, f._a[j], f._ac[j])
        hit = np.abs(kin - np.where(small, gvc, gv)) <= 1e-10 * np.abs(kin)
        if hit.any():
            sa, sac = f._a[j], f._ac[j]
            ys, ysc = f._eval_pair(np.where(small, sa, 1.0 - sac), np.where(small, 1.0 - sa, sac),
                                   "nearest")
            # (an optimistic twin's build, uncapped, keeps the larger too: its points are read
            # as an upper curve, and the tolerance also snaps points that are not preimages.
            # Seed 404590: group(from_distributions(..), 2) read f at 1 − g(2.8e-17) =
            # 0.4999999999990905, 1.8e-12 relative from the kink 0.5, as f(0.5) = 1.819e-12
            # for the exact 2.7285e-12, and δ(0)'s lower end 0.9999999999980661 for the exact
            # 0.9999999999972715)
            pick = hit & ((ys < y) if side == "lower" and capped else (ys > y))
            y, yc = np.where(pick, ys, y), np.where(pick, ysc, yc)
        if capped and side == "lower" and f.kind == "exact" and not f._bound:
            # each point stands for the true kinks merged into it (a kink of g_{k−1}, the
            # preimages of f's kinks), computed to nearest. This curve's reading moves it by
            # 2·mass_rtol (and 8u), which must bring it left of and below them; but a cancelling
            # step amplifies its inputs' rounding past that (seed 200343: group(olh(10), 2), a
            # kink 1 − 2q + p ≈ 5.8e-5 of masses q ≈ 1/2, read 6.6e-12 relative above), and two
            # kinks merged into one float point read a value between theirs, whose chord to the
            # next point lost the lower kink (seed 200381: group(from_distributions(..), 4) read
            # 3.8e-49 for 2.8e-60). Such points are capped by bounds of the kinks
            # (g = f carries its own ρ; a later g's kinks are taken as computed, to their
            # reading's rounding 8u, as this curve's budget charges them: with its ρ, g⁻¹'s
            # bound would double it every step, and move well-conditioned kinks too)
            rho_g = f._rho if g is f else 8.0 * UNIT_ROUNDOFF
            before = (x, xc, y, yc)
            x, xc, y, yc = _left_below(f, g, gi, rho_g, 2.0 * 64.0 * k * UNIT_ROUNDOFF, order,
                                       first, x, xc, y, yc)
            if capped_out is not None and any(
                    np.any(u != v) for u, v in zip(before, (x, xc, y, yc), strict=True)):
                capped_out.append(True)
        over = y > xc  # min(·, 1 − α)
        y, yc = np.where(over, xc, y), np.where(over, x, yc)
        if side == "lower":
            lost = (x > 0) & (x < 1e-290)
            if lost.any():
                if lost_out is not None:
                    lost_out.append(True)
                keep = ~lost & (x > 0)
                # (the least β, from the complements where β rounds to 1: the lost kinks of a
                # group with a 1e-300 atom read β = 1.0 at both, and argmin on β kept the
                # first, 1 − β = 1e-300 for the last one's 2.1e-299; helper-42, seed 300251)
                cand = np.flatnonzero(lost)
                i = int(cand[np.lexsort((-yc[cand], y[cand]))[0]])
                x, xc = np.append(0.0, x[keep]), np.append(1.0, xc[keep])
                y, yc = np.append(y[i], y[keep]), np.append(yc[i], yc[keep])
                pos = np.append(-2, pos[keep])
        else:
            # the exact value may be positive but below the float range (group(f_{10,0}, 100)
            # has β = e^{−1000} at its kink): the upper side keeps the first zero as the
            # smallest subnormal and drops the later ones before α = 1 (the chord from there to
            # (1, 0) lies above the exact curve), so its inverse is not 0 too early
            zero = (y <= 0.0) & (x < 1.0)
            if zero.any():
                i = int(np.argmax(zero))
                y[i], yc[i] = TINY, 1.0
                keep = ~zero
                keep[i] = True
                x, xc, y, yc, pos = x[keep], xc[keep], y[keep], yc[keep], pos[keep]
        if not np.any(x == 0.0):
            x, xc = np.append(0.0, x), np.append(1.0, xc)
            y, yc = np.append(1.0, y), np.append(0.0, yc)
            pos = np.append(-2, pos)
        if x[-1] < 1.0:
            x, xc = np.append(x, 1.0), np.append(xc, 0.0)
            y, yc = np.append(y, 0.0), np.append(yc, 1.0)
            pos = np.append(pos, -2)
        # every x is a kink of the exact curve, which is convex: no hull is needed (a hull in
        # float64 would drop the kinks near α = 0, where 1 − β is below the rounding of β);
        # points that rounding left rising are dropped
        keep = np.concatenate([[True], np.where(y[:-1] > 0.5, -np.diff(yc), np.diff(y)) <= 0])
        x, xc, y, yc, pos = x[keep], xc[keep], y[keep], yc[keep], pos[keep]
        # the exact curve is convex, its computed kinks only up to rounding: both sides take
        # their convex minorant (from the complements where values cannot resolve them). On the
        # lower side it lies below the kinks; on the upper side it still lies above the exact
        # curve, which is a convex function below the kinks and so below their minorant
        idx = lower_hull_c(x, xc, y, yc)
        x, xc, y, yc, pos = x[idx], xc[idx], y[idx], yc[idx], pos[idx]
        # (on the guarantee side δ and ε charge the masses' rounding: each of the k − 1 steps
        # reads f and g within a few ulps, and the +∞ atom δ Σ e^{jε} of group(f_{ε,δ}, k) read
        # 1.9e-15 relative low at k = 10 to nearest; a helper's hunt against mpmath)
        bounds = None
        if side == "lower":
            bounds = _summed_bounds(pos, lab_f, lab_g, (f_up, f_lo), _segment_loss_bounds(g))
        g = PiecewiseLinear(x, y, alpha_c=xc, beta_c=yc, kind=f.kind,
                            mass_rtol=64.0 * k * UNIT_ROUNDOFF if side == "lower" else 0.0)
        if bounds is not None and g._a.size == x.size:
            g._loss_bounds = bounds
    return g


def _moved(v: np.ndarray, vc: np.ndarray, rho: float, up: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`fdp._numerics.moved_coordinate`, exact zeros kept (a kink at α = 0 or β = 0 of
    the group's parts stays there)."""
    return moved_coordinate(v, vc, rho, up, at_zero=False)


def _read_down(
    h: PiecewiseLinear, a: np.ndarray, ac: np.ndarray, rho: float
) -> tuple[np.ndarray, np.ndarray]:
    """(β, 1 − β) below h's exact curve at every α ≤ a, where each breakpoint of h is within
    ρ of a true kink (in its stored coordinates): read at a moved up by ρ and the value moved
    down by ρ (and the reading's rounding), each in its stored coordinate. (Like
    a "down" reading, but β above 1/2 is moved in 1 − β: a "down" reading takes ρ·β off β,
    and the point at α = 0 of a group would lose δ = ρ at every ε.)"""
    a2, ac2 = _moved(np.clip(a, 0.0, 1.0), np.clip(ac, 0.0, 1.0), rho, True)
    v, vc = h._eval_pair(a2, ac2, "nearest")
    return _moved(np.clip(v, 0.0, 1.0), np.clip(vc, 0.0, 1.0), rho + 4.0 * UNIT_ROUNDOFF, False)


def _left_below(
    f: PiecewiseLinear, g: PiecewiseLinear, gi: PiecewiseLinear, rho_g: float, rho: float,
    order: np.ndarray, first: np.ndarray, x: np.ndarray, xc: np.ndarray, y: np.ndarray,
    yc: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The merged points (x, y) of a step of :func:`_group_pl` (lower side), capped so that
    moved left and down by ``rho`` (as the group's reading moves them) they lie left of and
    below the true kinks they stand for.

    Bounds of those kinks (each breakpoint of f lies, moved left and down by ρ_f, left of and
    below a true kink: the premise of its readings; those of g by ``rho_g``). A kink (a, b)
    of g gives the kink (a', f(1 − b')) of f(1 − g), a' ≥ a and b' ≥ b moved down by ρ_g: f
    read down at 1 − (b moved down) is below f(1 − b'). A kink (c, d) of f gives
    (g⁻¹(1 − c'), d'): g⁻¹ read down at 1 − (c moved down by ρ_f) is left of it, d moved down
    by ρ_f below it. A merged point takes the least of its members' bounds. Where the point
    to nearest is within ``rho`` of them (the rule) it is kept; a steep or cancelling step or
    two kinks merged into one float point leave it further off, and it is capped."""
    ga, gac = _moved(g._a, g._ac, rho_g, False)
    gv, gvc = _moved(g._b, g._bc, rho_g, False)
    gy, gyc = _read_down(f, gvc, gv, f._rho)
    fa, fac = _moved(f._a, f._ac, f._rho, False)
    pa, pac = _read_down(gi, fac, fa, rho_g)
    py, pyc = _moved(f._b, f._bc, f._rho, False)
    # (per member, in the merge's order; each group of equal points starts at ``first``)
    cat = [np.concatenate(v)[order] for v in ((ga, pa), (gac, pac), (gy, py), (gyc, pyc))]
    start = np.flatnonzero(first)
    cx, cxc = _moved(np.minimum.reduceat(cat[0], start), np.maximum.reduceat(cat[1], start),
                     rho, True)
    cy, cyc = _moved(np.minimum.reduceat(cat[2], start), np.maximum.reduceat(cat[3], start),
                     rho, True)
    over = np.where(x <= 0.5, x > cx, xc < cxc)
    x, xc = np.where(over, cx, x), np.where(over, cxc, xc)
    over = np.where(y <= 0.5, y > cy, yc < cyc)
    y, yc = np.where(over, cy, y), np.where(over, cyc, yc)
    # (capped, points may cross: each takes the least α at or after it, further left)
    x = np.minimum.accumulate(x[::-1])[::-1]
    xc = np.maximum.accumulate(xc[::-1])[::-1]
    return x, xc, y, yc


def _segment_loss_bounds(f: PiecewiseLinear) -> tuple[np.ndarray, np.ndarray]:
    """Bounds (above, below) on the losses of f's segments: its given masses' losses and
    their recorded rounding where they are its segments one for one, else the losses
    differenced from its breakpoints as each side reads them."""
    up, lo = f._segments_on("lower")[2], f._segments_on("upper")[2]
    if f._given_masses is not None and f._given_masses[2].size == up.size:
        # (an exact product's losses are rounded up on purpose, by at most its _loss_bias:
        # above the truth already, they are charged only their rounding below it)
        loss, bias = f._given_masses[2], f._loss_bias
        err = f._loss_errs() - bias
        up = np.where(np.isfinite(loss), loss + err, loss)
        lo = np.where(np.isfinite(loss), loss - err - bias, loss)
    return up, lo


def _summed_bounds(
    pos: np.ndarray, lab_f: np.ndarray, lab_g: np.ndarray,
    f_loss: tuple[np.ndarray, np.ndarray], g_loss: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Bounds (above, below) on the losses of the segments of f(1 − g(α)) between points at
    merged positions ``pos`` (−2: added), each the sum of the losses of the segments of f and
    g it lies on (``lab_f``, ``lab_g``, by merged position), rounded outward; NaN where a
    segment joins points not adjacent in the merge (it spans several) or lies on no segment."""
    n = pos.size - 1
    up, lo = np.full(n, np.nan), np.full(n, np.nan)
    i = pos[:-1]
    ok = (i >= 0) & (pos[1:] == i + 1)
    if not ok.any():
        return up, lo
    jf, jg = lab_f[i[ok]], lab_g[i[ok]]
    inside = (jf >= 0) & (jf < f_loss[0].size) & (jg >= 0) & (jg < g_loss[0].size)
    jf, jg = np.where(inside, jf, 0), np.where(inside, jg, 0)
    with np.errstate(invalid="ignore"):
        s_up = f_loss[0][jf] + g_loss[0][jg]
        s_lo = f_loss[1][jf] + g_loss[1][jg]
        # (a sum is correctly rounded: one ulp outward covers it; infinite sums stay)
        s_up = np.where(np.isfinite(s_up), np.nextafter(s_up, np.inf), s_up)
        s_lo = np.where(np.isfinite(s_lo), np.nextafter(s_lo, -np.inf), s_lo)
    up[ok] = np.where(inside, s_up, np.nan)
    lo[ok] = np.where(inside, s_lo, np.nan)
    return up, lo


def _as_bracket(f: TradeOff) -> Bracketed:
    """f as a bracket (an exact curve is its own lower and upper curve)."""
    if isinstance(f, Bracketed):
        return f
    lo, hi = (f, f) if isinstance(f, PiecewiseLinear) else _pl_bracket(f)
    return Bracketed(lo, hi, name=repr(f))


def group(f: TradeOff, k: int) -> TradeOff:
    """Group privacy: an f-DP mechanism is [1 − (1 − f)^{∘k}]-DP for groups of size k
    (DRS Thm 2.14), where (1 − f)^{∘2}(α) = 1 − f(1 − f(α)).

    Exact for G_μ (G_{kμ}, DRS Cor 2.15), for L_μ (L_{kμ}, below) and for piecewise-linear
    curves (f_{ε,δ}: the operator's exact PL result, tighter than the classical
    f_{kε, δ(1 + e^ε + … + e^{(k−1)ε})}); bracketed otherwise.

    **Laplace.** L_μ(α) = F(F⁻¹(1 − α) − μ) with F the standard Laplace CDF (the test
    "reject when x > t" is most powerful: the likelihood ratio of Lap(μ, 1) to Lap(0, 1) is
    non-decreasing in x). Then 1 − L_μ(α) = 1 − F(F⁻¹(1 − α) − μ), so
    L_μ(1 − L_μ(α)) = F(F⁻¹(1 − α) − 2μ) = L_{2μ}(α), and by induction
    1 − (1 − L_μ)^{∘k} = L_{kμ}: the same shift argument as DRS Cor 2.15 for G_μ (theory §5).
    Before, the general operator bracketed it, and a composition with it had no closed-form
    tail bound: ``group(Laplace(1), 2) ⊗ G_1`` read ε = ∞ at δ = 1e-100.

    Examples
    --------
    >>> group(Gaussian(0.5), 3)
    Gaussian(mu=1.5)
    >>> group(Laplace(0.5), 3)
    Laplace(mu=1.5)
    >>> g = group(EpsDelta(1.0, 0.0), 2)
    >>> round(float(g.epsilon(0.0)), 12)
    2.0
    """
    k = check_int("k", k, low=1)
    if not isinstance(f, TradeOff):
        raise TypeError(f"f must be a TradeOff, got {type(f).__name__}")
    if k == 1 or isinstance(f, Identity):
        return f
    if isinstance(f, (Gaussian, Laplace)) and math.isfinite(k * f.mu):
        # kμ rounded up (less privacy): to nearest, group(Laplace(0.3971116046572129), 3)
        # was L at a μ 1 ulp below 3μ, and its δ(3μ) read 0 for the true 2.8e-17
        m = product_up(k, f.mu)
        return Gaussian(m) if isinstance(f, Gaussian) else Laplace(m)
    return _group_general(f, k)


def _group_twin(f: PiecewiseLinear, k: int, inverse: bool) -> PiecewiseLinear:
    """The optimistic reading of group(f, k) (or of its inverse, group(f⁻¹, k)) from the twin
    of f (or f⁻¹), a curve above it (f itself where it reads its own): the operator on the
    twin, read as an upper curve (on its upper side where kinks underflowed, as in
    :func:`_group_general`)."""
    twin = f._twin_lower(inverse)
    lost: list[bool] = []
    # (its points to nearest, uncapped: the caps of :func:`_left_below` move them left of and
    # below the true kinks, beyond the ρ its upper reading moves them back by; see
    # :func:`_group_general`)
    out = _group_pl(twin, k, lost_out=lost, capped=False)
    return (_group_pl(twin, k, side="upper") if lost else out)._as_upper()


def _group_general(f: TradeOff, k: int) -> TradeOff:
    """The operator 1 − (1 − f)^{∘k} without the closed forms (see :func:`group`)."""
    if isinstance(f, PiecewiseLinear) and _group_overflows(f, k):
        return Bracketed(
            _group_fallback(f, k), f, name=f"group({f!r}, {k})",
            inverse=lambda: _as_bracket(group(f.inverse(), k)),
        )
    if isinstance(f, PiecewiseLinear):
        lost: list[bool] = []
        capped: list[bool] = []
        lo = inherit_twin(_group_pl(f, k, lost_out=lost, capped_out=capped), f)
        # a curve whose masses have no optimistic reading of their own (an exact product's:
        # merged and rounded up) reads one through its twin: the operator is non-decreasing
        # in f, so applied to a curve above f it gives a curve above the group's. (Without it
        # group(compose(f, repeat=3), 2) of a 3-outcome pair had no lower end: its bracket
        # collapsed to the conservative one.)
        via_twin = not f._twin_ok and f._has_twin()
        # (a curve with its own optimistic reading reads one through _group_twin too: this
        # curve's points are capped (_left_below) left of and below the true kinks, beyond the
        # ρ an upper reading moves them back by, and read as an upper curve they lay below the
        # exact group: group(poisson_subsample(group(T(P, Q), 2), 1e-12).add.inverse(), 3), of
        # ρ = 3.1e-14, merged two kinks 5e-13 apart at α ≈ 0.489 into a point 3.3e-14 below
        # the exact curve, and read δ(0)'s lower end 2.0530e-12 for the exact 2.0453e-12;
        # helper-48, hunt seed 402124)
        if f.kind == "exact" and f._has_twin():
            lo._twin_build = functools.partial(_group_twin, f, k, False)
            # ([1 − (1 − f)^{∘k}]⁻¹ = 1 − (1 − f⁻¹)^{∘k}: its inverse from f⁻¹'s twin)
            lo._inverse_twin_build = functools.partial(_group_twin, f, k, True)
            if capped:
                # the caps moved points to certified bounds of the true kinks, which lie below
                # them by f's and the iteration's reading margins (ρ ≈ 5e-14 for a product):
                # beyond this curve's mass_rtol, its masses are a pessimistic garbling, and an
                # optimistic reading of them (the engine's, the inverse's) lies on the wrong
                # side. Read from the twin instead (_twin_ok False: the engine's optimistic
                # bins, the inverse's twin build). group(compose(EpsDelta(3.1569, 1e-10),
                # repeat=3), 2) held the +∞ atom 3.892489748453447e-6 for the exact
                # 3.8924897484529753e-6 (1.2e-13 relative, mass_rtol 1.4e-14), and
                # compose(g, numeric=True) read δ(100)'s lower end 3.892489748452986e-6;
                # helper-57, a sweep against exact products
                lo._twin_ok = False
        if f.kind != "exact" or not lost:
            return _named(lo, f"group({f!r}, {k})")
        # kinks were lost to underflow: the exact curve lies between the two
        return Bracketed(
            lo, _group_pl(f._twin_lower() if via_twin else f, k, side="upper"),
            name=f"group({f!r}, {k})", inverse=lambda: _as_bracket(group(f.inverse(), k)),
        )
    if f.kind == "approximation":
        return _named(_group_pl(f.to_piecewise(), k), f"group({f!r}, {k})")
    if isinstance(f, Bracketed):
        lo, hi = f.lower, f.upper
    else:
        lo, hi = _pl_bracket(f)
    # [1 − (1 − f)^{∘k}]⁻¹ = 1 − (1 − f⁻¹)^{∘k}: with R(x) = 1 − x, both are f⁻¹ R f⁻¹ … R f⁻¹
    # (k factors f⁻¹), since 1 − f(α) = y ⟺ α = f⁻¹(1 − y). The inverse is therefore built from
    # f⁻¹'s own bracket (an engine composes the inverses), not by inverting these curves, whose
    # bottom near α = 1 becomes the inverse's steep top
    return Bracketed(
        _group_fallback(lo, k) if _group_overflows(lo, k) else _group_pl(lo, k),
        hi if _group_overflows(hi, k) else _group_pl(hi, k, side="upper"),
        name=f"group({f!r}, {k})", inverse=lambda: _as_bracket(group(f.inverse(), k)),
        closed=GroupProfileBound(f, k),
    )


def _log_geometric(x: np.ndarray, k: int) -> np.ndarray:
    """log Σ_{j<k} e^{jx} for x ≥ 0 (k at x = 0), without overflow, rounded up by 1e-13 of
    its magnitude."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        small = np.log(np.expm1(k * x) / np.expm1(x))
        # (large x: (k − 1)x + log(1 − e^{−kx}) − log(1 − e^{−x}))
        big = (k - 1) * x + np.log1p(-np.exp(-k * x)) - np.log1p(-np.exp(-x))
    out = np.where(x <= 0.0, math.log(k), np.where(k * x < 700.0, small, big))
    return out + 1e-13 * (np.abs(out) + 1.0)


class GroupProfileBound:
    r"""The classical group-privacy bound from the curve's own privacy profile, for
    :func:`group` of a bracketed curve.

    f is (ε₀, δ_f(ε₀))-DP for every ε₀, so a group of k is (kε₀, δ_f(ε₀) Σ_{j<k} e^{jε₀})-DP,
    the classical group privacy with δ. From Dong, Roth & Su 2022, Thm 2.14: f ≥ f_{ε₀,δ_f(ε₀)}
    (Prop 2.12), the operator 1 − (1 − ·)^{∘k} is monotone, and its result for f_{ε₀,δ₀} lies
    above f_{kε₀, δ₀ Σ e^{jε₀}} (see :func:`group`). A certified upper bound on the group's
    δ(kε₀) and ε. The operator's own curve is tighter wherever the bracket
    of f holds its tail; this one reaches further, since δ_f is read at ε/k, where f's grid
    still resolves it: group(G_0.5 ⊗ G_0.7 numeric, 3) read ε(1e-10) = ∞ (the kink iteration
    turns the loose far tail of f's lower curve, 1e-42 at α = 0, into a +∞ atom of 4e-10) and
    reads 21.85 now (the exact G_{3·0.86}: 19.24). Lower bounds: none (0).

    Examples
    --------
    >>> import fdp
    >>> b = GroupProfileBound(fdp.compose(fdp.Gaussian(0.5), fdp.Gaussian(0.7), numeric=True), 3)
    >>> bool(19.24 < float(b.epsilon_upper(1e-10)[0]) < 22.0)
    True
    """

    name = "group profile bound"

    def __init__(self, f: TradeOff, k: int) -> None:
        self.f, self.k = f, int(k)

    def _log_delta(self, e0: np.ndarray) -> np.ndarray:
        """log of the bound on the group's δ at ε = k·e0 (rounded up)."""
        with np.errstate(divide="ignore"):
            ld = np.log(np.asarray(self.f.delta(e0), dtype=float))
        return ld * (1.0 - np.sign(ld) * 4.0 * UNIT_ROUNDOFF) + _log_geometric(e0, self.k)

    def delta_upper(self, eps: object, floor: object = 0.0) -> np.ndarray:
        """Certified upper bounds on the group's δ(ε): δ_f(ε/k) Σ_{j<k} e^{jε/k}, at most 1."""
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        out = np.ones(e.shape)
        ok = np.isfinite(e) & (e >= 0.0)
        if ok.any():
            e0 = e[ok] / self.k * (1.0 - 2.0 * UNIT_ROUNDOFF)  # (below ε/k: δ_f larger)
            with np.errstate(over="ignore"):
                out[ok] = np.minimum(np.exp(self._log_delta(e0)) * (1.0 + 4.0 * UNIT_ROUNDOFF)
                                     + TINY, 1.0)
        return out

    def epsilon_upper(self, delta: object, hint: object = math.inf) -> np.ndarray:
        """Certified upper bounds on the group's ε(δ): k·ε₀ at an ε₀ where the bound on δ is
        ≤ δ (found on a grid, then refined between the last two grid points; ∞ if none up to
        ε₀ = 1e4)."""
        d = np.atleast_1d(np.asarray(delta, dtype=float))
        out = np.full(d.shape, math.inf)
        grid = np.concatenate([[0.0], np.geomspace(1e-6, 1e4, 200)])
        lg = self._log_delta(grid)
        for i, di in enumerate(d.flat):
            if not di > 0.0:
                continue
            if di >= 1.0:  # (every curve is (0, 1)-DP)
                out.flat[i] = 0.0
                continue
            good = np.flatnonzero(lg <= math.log(di))
            if good.size == 0:
                continue
            j = int(good[0])
            if j > 0:  # (refine once between the grid point that fails and the one that holds)
                fine = np.linspace(grid[j - 1], grid[j], 65)[1:]
                ok = np.flatnonzero(self._log_delta(fine) <= math.log(di))
                e0 = float(fine[ok[0]]) if ok.size else float(grid[j])
            else:
                e0 = 0.0
            out.flat[i] = self.k * e0 * (1.0 + 4.0 * UNIT_ROUNDOFF)
        return out

    def delta_lower(self, eps: object) -> np.ndarray:
        """No lower bound (0)."""
        return np.zeros(np.shape(np.atleast_1d(np.asarray(eps, dtype=float))))

    def epsilon_lower(self, delta: object, hint: object = 0.0) -> np.ndarray:
        """No lower bound (0)."""
        return np.zeros(np.shape(np.atleast_1d(np.asarray(delta, dtype=float))))


def _loss_range(f: PiecewiseLinear) -> tuple[float, bool]:
    """(largest |finite loss| of f's outcomes, whether it has a ±∞ loss)."""
    p, q, loss = f._masses
    live = (p > 0) | (q > 0)
    fin = np.isfinite(loss) & live
    e = float(np.abs(loss[fin]).max()) if fin.any() else 0.0
    return e, bool(f._mass_qinf > 0 or np.any(~np.isfinite(loss) & live))


def _group_overflows(f: PiecewiseLinear, k: int) -> bool:
    """The kink-by-kink group of f cannot be computed in float64: its kinks' masses, of order
    e^{−k·(largest loss)}, underflow (k ε > 700 for pure ε-DP). The kink computation then lost
    kinks silently: group(rr(600), 2) read ε = 600 for 1200, group(rr(800), 2) the identity."""
    return k * _loss_range(f)[0] > 700.0


def _group_fallback(f: PiecewiseLinear, k: int) -> PiecewiseLinear:
    """A certified lower curve for group(f, k) where it overflows: f is (E, 0)-DP with E its
    largest |loss| when it has no infinite loss, so its k-groups are (kE, 0)-DP (DRS Thm 2.14
    applied to f ≥ f_{E,0}: group is monotone, and group(f_{E,0}, k) ≥ f_{kE,0}, the classical
    group privacy of pure DP); with an infinite loss, the curve 0 (perfectly revealing)."""
    e, has_inf = _loss_range(f)
    if has_inf:
        return PiecewiseLinear.revealing()
    return EpsDelta(k * e * (1.0 + 8.0 * UNIT_ROUNDOFF), 0.0)


# ------------------------------------------------------------------------ symmetrization
def symmetrize(f: TradeOff) -> TradeOff:
    """min{f, f⁻¹}**: the guarantee for both orders of a pair from a one-sided guarantee.

    **Claim.** If T(M(S), M(S')) ≥ f for every ordered "add" pair (S, S' = S ∪ {x}) of an
    add/remove relation, then T(P, Q) ≥ min{f, f⁻¹}** for every ordered neighbouring pair (P, Q)
    in either order, where g** is the largest convex function below g.

    **Proof.** For an add pair T(P, Q) ≥ f. For the reversed pair T(Q, P) = T(P, Q)⁻¹ (DRS
    Lemma 2.3 ff., theory §1), and inversion is monotone (g ≥ f ⇒ g⁻¹ ≥ f⁻¹), so T(Q, P) ≥ f⁻¹. Both
    are therefore ≥ min{f, f⁻¹}, and being trade-off functions they are convex, hence ≥ its convex
    envelope min{f, f⁻¹}**. ∎ This is DRS Definition F.1's Symm(f) in its first case (x̄ ≤ f(x̄));
    its second case, max{f, f⁻¹}, holds only when f already holds in both orders (a symmetric
    relation, where the result is just max{f, f⁻¹} ≥ f and nothing here is needed), so fdp never
    returns it.

    Exact for piecewise-linear curves (the profile of min{f, f⁻¹}** is max(δ_f, δ_{f⁻¹})); for a
    bracket both sides are symmetrized (the operation is monotone in f). Curves that are symmetric
    by construction (G_μ, L_μ, f_{ε,δ}, Id, C_p of those) are returned unchanged.

    Examples
    --------
    >>> from fdp import from_distributions
    >>> f = from_distributions([0.5, 0.3, 0.2], [0.1, 0.3, 0.6])
    >>> round(float(symmetrize(f)(0.1)), 12)
    0.5
    """
    if not isinstance(f, TradeOff):
        raise TypeError(f"f must be a TradeOff, got {type(f).__name__}")
    if isinstance(f, (Gaussian, Laplace, EpsDelta, Identity, Subsampled)):
        return f
    if isinstance(f, PiecewiseLinear) and _mirror_masses(f):
        return f  # T(P, Q) = T(Q, P) exactly: min{f, f⁻¹}** = f
    if isinstance(f, Mixture) and not f._optimistic and isinstance(f.base, PiecewiseLinear):
        # min{f_p, f_p⁻¹}** is C_p(f) by definition (DRS Thm 4.2): subsample builds it from
        # f's own masses (through the generic path below, the lines' kinks underflowed:
        # symmetrize(poisson_subsample(EpsDelta(744), 0.3).add) composed twice read ε(1e-3)
        # 1485.07 for the exact 1485.581). (Closed-form bases keep the path below, whose
        # bracket answers δ and ε from their closed forms: fdp.dpsgd's one step.)
        return subsample(f.base, f.p)
    if isinstance(f, PiecewiseLinear):
        return _named(min_envelope(f, f.inverse(), symmetric=True), f"symmetrize({f!r})")
    if isinstance(f, Bracketed):
        # f⁻¹'s own bracket (the engine composes the inverses: tighter in f⁻¹'s tail than the
        # inverse of f's curves, which see f's bottom only as far as f's window reaches)
        fi = f.inverse()
        if isinstance(fi, Bracketed):
            return Bracketed(
                min_envelope(f.lower, fi.lower, symmetric=True),
                min_envelope(f.upper, fi.upper, symmetric=True),
                name=f"symmetrize({f!r})",
                closed=_BracketProfileMax(f, fi),
                # (its moment bound: fdp.tails.log_mgf; its μ: fdp.gdp_mu)
                info={"symmetrized": f, "gdp_base": f},
            )
    if isinstance(f, Bracketed) or f.kind != "approximation":
        lo, hi = (f.lower, f.upper) if isinstance(f, Bracketed) else _pl_bracket(f)
        return Bracketed(
            min_envelope(lo, lo.inverse(), symmetric=True),
            min_envelope(hi, hi.inverse(), symmetric=True),
            name=f"symmetrize({f!r})",
            # (an exact f: its own profiles answer δ and ε, where the lines' kinks underflow)
            closed=_ProfileMax(f) if f.kind == "exact" else None,
            # (its moment bound: fdp.tails.log_mgf; its μ: fdp.gdp_mu)
            info={"symmetrized": f, "gdp_base": f},
        )
    return symmetrize(f.to_piecewise())


def _mirror_masses(f: PiecewiseLinear) -> bool:
    """Whether f's outcome masses are exactly their own mirror (p_j, q_j, ℓ_j) ↔ (q, p, −ℓ),
    i.e. f = f⁻¹ (randomized response at any ε, where a hull of breakpoints whose kinks
    underflowed read rr(800) as perfectly revealing). Exact float equality only."""
    if f.kind != "exact" or f._mass_qinf != 0.0:
        return False
    p, q, loss = f._masses  # sorted by decreasing loss
    if np.isneginf(loss).any():
        return False
    return bool(np.array_equal(loss, -loss[::-1]) and np.array_equal(p, q[::-1])
                and np.array_equal(q, p[::-1]))


# ------------------------------------------------------------------------ subsampling
@functools.cache
def _hermite_rule(n: int = 160) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of E f(X), X ~ N(0, 1) ≈ Σ w_i f(x_i) (Gauss–Hermite, rescaled)."""
    x, w = np.polynomial.hermite.hermgauss(n)
    return x * math.sqrt(2.0), w / math.sqrt(math.pi)


class Mixture(TwinOfBase, BaseBinsMixin, TradeOff):
    """f_p = p f + (1 − p) Id = T(P, (1 − p)P + pQ) for f = T(P, Q) (mixture identity, theory §7).

    The add pair of Poisson subsampling at rate p. Its privacy loss is L' = log(1 − p + p e^L),
    a monotone function of f's loss L, so δ(ε) = p δ_f(log(1 + (e^ε − 1)/p)) for ε > log(1 − p)
    and 1 − e^ε below. Exact.

    Examples
    --------
    >>> m = Mixture(Gaussian(1.0), 0.1)
    >>> round(m(0.2), 6) == round(0.1 * Gaussian(1.0)(0.2) + 0.9 * 0.8, 6)
    True
    """

    def __init__(self, base: TradeOff, p: float) -> None:
        self.base = base
        self.p = check_scalar("p", p, low=0.0, high=1.0)
        self.kind = base.kind

    @property
    def lower(self) -> TradeOff:
        return self if self.kind == "exact" else Mixture(self.base.lower, self.p)

    @property
    def upper(self) -> TradeOff:
        if self.kind == "exact":
            return self
        out = Mixture(self.base.upper, self.p)
        out._optimistic = True  # (δ read at ε' rounded up: see _delta)
        return out

    #: ``_optimistic`` (the upper side of a bracket, and the optimistic twin of an exact curve,
    #: :class:`~fdp.tradeoff.TwinOfBase`): every rounding in :meth:`_delta` and
    #: :meth:`_epsilon` the other way (toward more privacy)
    _twin_param = "p"

    def inverse(self) -> TradeOff:
        """f_p⁻¹. For a PL base (or a bracket of them) a PL curve from the outcomes' masses:
        the generic :class:`Inverse` profile 1 − e^ε + e^ε δ(−ε) cancels to rounding noise
        (1e-16·e^ε) beyond the largest loss, which moved ε(δ ≤ 1e-16) there."""
        if self.p == 0.0:
            return self  # (f_0 = Id, its own inverse; the generic one read δ(1000) = 1.3e-15)
        if self.p == 1.0:
            # f_1 = f: its inverse is f's. (The generic Inverse of poisson_subsample(m,
            # 1.0).add, m a mixture of a PL curve with losses down to −31.2, read δ(1000) =
            # 0.338 at both ends of the bracket for the exact 0, and ε(δ) = ∞ below it: the
            # cancellation's allowance, capped by its own reading at ε = 7; hunt seed 402783)
            return self.base.inverse()
        if self.p > 0.0 and isinstance(self.base, PiecewiseLinear):
            return _mixture_pl(self.base, self.p).inverse()
        if self.p > 0.0 and isinstance(self.base, Bracketed):
            return Bracketed(
                _mixture_pl(self.base.lower, self.p).inverse(),
                _mixture_pl(self.base.upper, self.p).inverse(),
                name=f"{self!r}.inverse()",
            )
        if 0.0 < self.p < 1.0 and not isinstance(self.base.inverse(), Inverse):
            return _MixtureInverse(self)
        return Inverse(self)

    def _eval(self, alpha: np.ndarray) -> np.ndarray:
        """p f(α) + (1 − p)(1 − α) from f's values (rounded down by f), rounded down by the
        products', 1 − α's, 1 − p's and the sum's rounding (4u) and two subnormal ulps; to
        nearest it read up to 2.6e-16 above the truth (a helper's hunt). Optimistic curves
        built from values read :meth:`_eval_up`, and so does an optimistic mixture itself
        (``upper`` of a bracketed one: rounded down, poisson_subsample(G_0.5 ⊗ blh(3),
        1e-3).add.upper(0) read 1 − 4.4e-16, below the exact 1; a helper's hunt)."""
        if self._optimistic:
            return self._eval_up(alpha)
        v = self.p * np.asarray(self.base(alpha)) + (1.0 - self.p) * (1.0 - alpha)
        return np.maximum(v * (1.0 - 4.0 * UNIT_ROUNDOFF) - 2.0 * TINY, 0.0)

    def _eval_up(self, alpha: np.ndarray) -> np.ndarray:
        """p f(α) + (1 − p)(1 − α) from f's values rounded up, the two products, 1 − α, 1 − p
        and the sum within 4u of the terms: rounded up by them."""
        alpha = np.asarray(alpha, dtype=float)
        a = self.p * np.asarray(self.base._eval_up(alpha), dtype=float)
        b = (1.0 - self.p) * (1.0 - alpha)
        return np.minimum((a + b) * (1.0 + 4.0 * UNIT_ROUNDOFF) + TINY,
                          np.maximum(1.0 - alpha, 0.0) * (1.0 + 2.0 * UNIT_ROUNDOFF))

    def _inner_eps(self, eps: np.ndarray) -> np.ndarray:
        """ε' = log(1 + (e^ε − 1)/p), f's ε at which δ_{f_p}(ε) = p δ_f(ε'); above ε = 1 as
        ε − log p + log(1 − (1 − p)e^{−ε}), which cannot overflow (from (e^ε − 1)/p it was ∞
        for ε ≳ 709.8 + log p, and δ read 0: p = 2e-8, μ = 19.7, ε = 881, truth 2.9e-290)."""
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            small = np.log1p(np.expm1(np.minimum(eps, 1.0)) / self.p)
            e = np.maximum(eps, 1.0)
            large = e - math.log(self.p) + np.log1p(-(1.0 - self.p) * np.exp(-e))
        return np.where(eps > 1.0, large, small)

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        p = self.p
        if p == 0.0:
            return np.maximum(-np.expm1(np.minimum(eps, 0.0)), 0.0)
        thr = math.log1p(-p) if p < 1.0 else -math.inf
        e0 = np.where(eps > thr, eps, 0.0)
        inner = self._inner_eps(e0)
        # f's δ falls in its ε, so ε' is rounded down first: its few roundings (expm1, the
        # quotient, log1p; or the sum of ε, −log p and a log1p) are within 8u of the terms'
        # sizes. To nearest, Mixture(L_30, 0.1).delta(27.6974149070068) read 0 for the true
        # 6.8e-17 (the Laplace curve's δ is steep in ε next to its largest loss; a helper's
        # hunt against mpmath)
        with np.errstate(invalid="ignore"):
            margin = 8.0 * UNIT_ROUNDOFF * (np.abs(inner) + np.abs(e0) + abs(math.log(p)) + 1.0)
            # (up, on the optimistic side: its δ must not rise above the truth)
            inner = np.where(np.isfinite(inner),
                             inner + margin if self._optimistic else inner - margin, inner)
        base = np.asarray(self.base.delta(np.where(eps > thr, inner, 0.0)), dtype=float)
        # (rounded up: p δ_f > 0 below the float range is the least subnormal, not 0; the
        # product and 1 − e^ε by 4 ulps, which to nearest were up to 1.1e-16 below the truth,
        # and by two subnormal ulps, which no relative margin reaches below the normal range:
        # Mixture(G_0.5, 1e-8).delta(1) read 8.656e-321 for 8.65625e-321)
        # (a product that underflowed to 0 is below TINY/2: the least subnormal bounds it)
        if self._optimistic:  # (all rounded down)
            val = np.maximum(p * base * (1.0 - 4.0 * UNIT_ROUNDOFF) - 2.0 * TINY, 0.0)
            below = -np.expm1(np.minimum(eps, 0.0)) * (1.0 - 4.0 * UNIT_ROUNDOFF)
        else:
            prod = p * base * (1.0 + 4.0 * UNIT_ROUNDOFF)
            val = np.where(base > 0.0, np.where(prod > 0.0, prod + 2.0 * TINY, TINY), 0.0)
            below = -np.expm1(np.minimum(eps, 0.0)) * (1.0 + 4.0 * UNIT_ROUNDOFF)
        return np.minimum(np.where(eps > thr, val, below), 1.0)

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        p = self.p
        if p == 0.0:
            return np.zeros_like(delta)
        # (δ/p rounded down, f's ε rounded up by f, and expm1, the product and log1p within 4
        # ulps of the result together: rounded up by them; to nearest,
        # Mixture(L_1, 1e-6).epsilon(0) was 1.8e-16 relative below the truth. δ/p exactly: a
        # margin of 2u made δ = p read f's ε at 1 − 2u, on f's steep part:
        # subsample(Laplace(100), 0.001).epsilon(0.001) read 21 for the true 0)
        # (optimistic: δ/p rounded up, f's ε rounded down by f, the rest down by 6 ulps)
        if self._optimistic:
            with np.errstate(over="ignore"):
                q = np.minimum(np.nextafter(np.asarray(delta, dtype=float) / p, np.inf), 1.0)
        else:
            q = np.minimum(div_down_array(delta, p), 1.0)
        inner = np.asarray(self.base.epsilon(q), dtype=float)
        r = -6.0 if self._optimistic else 6.0
        with np.errstate(over="ignore"):
            out = np.log1p(p * np.expm1(np.minimum(inner, 700.0))) * (1.0 + r * UNIT_ROUNDOFF)
            return np.maximum(out + np.maximum(inner - 700, 0), 0.0)

    def _loss_bins(self, edges: np.ndarray) -> LossBins:
        return self._mapped_bins(edges, self.base._loss_bins, 1.0)

    def _engine_bins(self, edges: np.ndarray, side: str) -> LossBins | None:
        """The engine's bins for ``side`` (:meth:`fdp.tradeoff.PiecewiseLinear._engine_bins`)
        where the base's masses or losses carry errors; None where they do not.

        Mapped from the base's bins for that side, each of whose outcomes has Q-mass q̂ on its
        side of the true Q and loss ℓ̂ within e (the base's :meth:`_engine_shift`) of the true
        ℓ. The mixture's outcome has loss g(ℓ) = log(1 − p + p e^ℓ), within e of g(ℓ̂) (slope
        below 1), and Q-mass (1 − p)P + pQ = Q h(ℓ), h(ℓ) = (1 − p)e^{−ℓ} + p, which falls in
        ℓ: read at ℓ̂ it may lie on the wrong side of the truth, by at most the factor e^{±e}
        (h(ℓ ∓ e) ≤ e^{±e} h(ℓ)). So the finite outcomes' masses are scaled by e^e (lower) or
        e^{−e} (upper), both P and Q (the bins' losses stay), and their losses read moved by
        e as the base's. (Before, the base's exact bins were mapped: poisson_subsample(f,
        0.5).add of from_masses with ρ = 1e-8 composed read δ(0.2)'s upper end 1.0571944563e-1
        for the exact 1.0571944837e-1, and losses given 1e-7 off read ε(1e-9) ∈ [0.55961575,
        0.55961575] for the exact 0.55961579; tests/test_engine_mixture_err.py.) The base's
        P-mass at loss −∞ (Q-mass (1 − p)P at log(1 − p) here) comes scaled for its side."""
        from .pld import _side_bins, _sided

        if not _sided(self.base):
            return None
        return self._mapped_bins(edges, lambda e: _side_bins(self.base, e, side),
                                 self._engine_scale(side))

    def _mapped_bins(self, edges: np.ndarray, base_bins: Callable[[np.ndarray], LossBins],
                     k: float) -> LossBins:
        """The mixture's bins from the base's (``base_bins`` of the mapped edges), the finite
        outcomes' masses scaled by ``k`` (:meth:`_engine_bins`)."""
        p = self.p
        thr = math.log1p(-p) if p < 1.0 else -math.inf
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            e = np.where(
                edges > thr,
                np.log(np.expm1(np.minimum(edges, 700.0)) + p)
                - math.log(p)
                + np.maximum(edges - 700.0, 0.0),
                -np.inf,
            )
        b = base_bins(e)
        pp = k * b.p
        qq = k * ((1.0 - p) * b.p + p * b.q)
        if edges[0] <= thr:  # (p_below is the P-mass at −∞: see below)
            p_below, q_below = b.p_below, (1.0 - p) * b.p_below + p * b.q_below
        else:
            p_below, q_below = k * b.p_below, k * ((1.0 - p) * b.p_below + p * b.q_below)
        # the base's given loss bounds λ map to log(1 − p + p e^λ) (increasing), rounded
        # outward by 4 ulps of |log(1 − p)| + |log p| + |λ| + the result
        lo, hi = (None if x is None else self._mixed_bound(x, sgn)
                  for x, sgn in ((b.loss_lo, -1.0), (b.loss_hi, 1.0)))
        p_above, q_above = k * b.p_above, k * ((1.0 - p) * b.p_above + p * b.q_above)
        if edges[0] <= thr:  # base mass at loss −∞ sits at log(1 − p), at or above edges[0]
            neg = b.p_below  # edges map to −∞ there, so p_below is exactly P[L = −∞]
            j = int(np.searchsorted(edges, thr, side="left")) - 1  # bin (e_j, e_{j+1}]
            if 0 <= j < pp.size:
                pp[j] += neg
                qq[j] += (1.0 - p) * neg
                p_below, q_below = 0.0, 0.0
                for x in (lo, hi):  # (that bin's loss is no longer the base bin's)
                    if x is not None:
                        x[j] = np.nan
            elif j >= pp.size:
                # every edge below log(1 − p): the atom lies ABOVE the grid. (It was read below:
                # a chunk of a long grid in pld._loss_bins_chunked wholly below log(1 − p) added
                # it to the grid's below, and the chunk holding log(1 − p) binned it again. The
                # 2-fold composition at grid_step=8.8364e-6 of the inverse of the add pair of
                # B = poisson_subsample(poisson_subsample(EpsDelta(1, 0.1), 0.5).add, 0.3)
                # .add.inverse() at p = 0.4, whose grid's last chunk lay past −log(1 − p),
                # read δ(0) ∈ [0.0552, 0.0729] for the exact 0.0431; tests/test_chunked_bins.py)
                p_below, q_below = 0.0, 0.0
                p_above += neg
                q_above += (1.0 - p) * neg
        return LossBins(
            p=pp,
            q=qq,
            p_below=p_below,
            q_below=q_below,
            p_above=p_above,
            q_above=q_above,
            # (rounded up: to nearest 1e-12 · 1e-320 was 0, and a composition of the mixture
            # read ε(0) finite, δ = 0 beyond its losses, for the exact ∞)
            q_inf=product_up(p, float(b.q_inf)),
            loss_lo=lo,
            loss_hi=hi,
        )

    def _mixed_bound(self, lam: np.ndarray, sgn: float) -> np.ndarray:
        """log(1 − p + p e^λ) of given loss bounds λ (NaN kept), moved by ``sgn`` × 4 ulps of
        the magnitudes it adds (see :meth:`_loss_bins`)."""
        p = self.p
        l1p = math.log1p(-p) if p < 1.0 else -math.inf
        lp = math.log(p)
        with np.errstate(invalid="ignore"):
            out = np.logaddexp(l1p, lp + lam)
            mag = np.abs(lp) + np.abs(lam) + np.abs(out) + (abs(l1p) if p < 1.0 else 0.0)
        return out + sgn * 4.0 * UNIT_ROUNDOFF * mag

    def _p_at_minus_inf(self) -> float | None:
        """0 for p < 1: the loss log(1 − p + p e^ℓ) is at least log(1 − p) > −∞."""
        return 0.0 if self.p < 1.0 else self.base._p_at_minus_inf()

    def _loss_moments(self) -> tuple[float, float] | None:
        """For a Gaussian base (the add pair of DP-SGD): L = log(1 − p + p e^{μx − μ²/2}) under
        Q = (1 − p)N(0, 1) + pN(μ, 1), by 160-point Gauss–Hermite rules on each part (10
        digits against mpmath quadrature; 100x faster than the engine's bins). For μ ≤ 30 only:
        larger losses are the engine's huge-loss regime, which plans from its own bins."""
        if type(self.base) is not Gaussian or self.p == 0.0 or self.base.mu > 30.0:
            return None
        x, w = _hermite_rule()
        mu, p = self.base.mu, self.p
        xs = np.concatenate([x, x + mu])
        ws = np.concatenate([(1.0 - p) * w, p * w])
        t = mu * xs - mu * mu / 2.0
        if p == 1.0:
            loss = t
        else:
            # (not _mixed_losses' logaddexp: near t = 0 its absolute 1e-15 would cost the mean,
            # a KL of ~1e-10 for sparse p, five digits; log1p(p·expm1(t)) keeps them)
            with np.errstate(over="ignore"):
                loss = np.where(t < 30.0, np.log1p(p * np.expm1(np.minimum(t, 30.0))),
                                np.logaddexp(math.log1p(-p), math.log(p) + t))
        m = float(ws @ loss)
        return m, float(ws @ (loss - m) ** 2)

    def _atoms(self) -> np.ndarray | None:
        """Atoms of T(P, (1 − p)P + pQ): loss ℓ of f maps to log(1 − p + p e^ℓ); f's P-mass at
        −∞ lands at log(1 − p)."""
        a = self.base._atoms()
        if a is None or self.p == 0.0:
            return None if a is None else np.zeros(1)
        with np.errstate(over="ignore"):
            m = np.log1p(self.p * np.expm1(np.minimum(a, 700.0))) + np.maximum(a - 700.0, 0.0)
        return np.append(m, math.log1p(-self.p)) if self.p < 1.0 else m

    def __repr__(self) -> str:
        return f"Mixture({self.base!r}, p={self.p:.6g})"

    def _label(self) -> str:
        return f"{self.p:.3g}·{self.base._label()} + {1 - self.p:.3g}·Id"


class _MixtureInverse(Inverse):
    """f_p⁻¹ = T((1 − p)P + pQ, P) for f_p = p f + (1 − p) Id and a base f with a closed-form
    inverse (G_μ, L_μ, f_{ε,δ}), 0 < p < 1: its profile without cancellation.

    **Claim.** With a = 1 − e^ε (1 − p), δ_{f_p⁻¹}(ε) = a δ_{f⁻¹}(ε + log p − log a) for a > 0,
    and 0 for a ≤ 0 (ε ≥ −log(1 − p), the largest loss). **Proof.** δ_{f_p⁻¹}(ε) =
    ∫ (dP − e^ε d((1 − p)P + pQ))₊ = ∫ (a dP − e^ε p dQ)₊, which is 0 if a ≤ 0 and otherwise
    a ∫ (dP − (e^ε p / a) dQ)₊ = a δ_{T(Q, P)}(log(e^ε p / a)) (theory §3, §7). ∎

    The generic profile 1 − e^ε + e^ε δ_{f_p}(−ε) cancels to rounding noise below δ ≈ 1e-16:
    ε(1e-50) of p = 0.01, μ = 2 read 0.0474 for a largest loss of 0.01005, and at that loss
    rounded down (truth δ = 1.4e-78) δ read 0. Rounding: a is rounded up and the inner ε
    down (δ is increasing in a at fixed e^ε p, and decreasing in ε), the product up.

    Its optimistic reading (:meth:`_as_upper`, the lower ends of its brackets) rounds each of
    these the other way and reads f⁻¹'s optimistic δ; its ε is the bisection's lower end
    (:meth:`TradeOff._epsilon`). Without one, both ends of a bracket were the conservative
    value: ``poisson_subsample(G_4.186, 0.5).remove.epsilon_bracket(1e-100)`` had its lower end
    0.6931471805599472, above the exact log 2 (a helper's hunt).
    """

    #: the optimistic reading (see the class docstring)
    _optimistic = False

    def _as_upper(self) -> TradeOff:
        m = self.base
        assert isinstance(m, Mixture)
        if self._optimistic or self.kind != "exact" or not m.base._has_twin():
            return self
        out = _MixtureInverse(m)
        out._optimistic = True
        return out

    def _has_twin(self) -> bool:
        return self._as_upper() is not self

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        m = self.base
        assert isinstance(m, Mixture)
        p, g, u = m.p, m.base.inverse(), UNIT_ROUNDOFF
        opt = self._optimistic
        if opt:  # (a base with a twin: _as_upper checked it)
            g = g._as_upper()  # type: ignore[attr-defined]
        s = -1.0 if opt else 1.0  # (the side every rounding below is moved to)
        l1p, lp = math.log1p(-p), math.log(p)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            x = np.minimum(eps, 800.0)
            a = -np.expm1(x + l1p)
            # (x + log(1 − p): two roundings of at most u (|x| + |l1p|); expm1 ≤ 2 ulps)
            a_r = a * (1.0 + s * 4.0 * u) + s * 3.0 * u * (np.abs(x) + abs(l1p))
            live = a_r > 0.0
            la = np.log(np.where(live, a_r, 1.0))
            inner = x + lp - la
            inner = inner - s * 4.0 * u * (np.abs(x) + abs(lp) + np.abs(la))
            d = np.asarray(g.delta(np.where(live, inner, 0.0)), dtype=float)
        if opt:  # (rounded down; a product below the float range reads 0)
            prod = np.maximum(a_r * d * (1.0 - 4.0 * u) - TINY, 0.0)
        else:  # (a positive product below the float range is the least subnormal, not 0)
            prod = np.where(d > 0.0, np.maximum(a_r * d * (1.0 + 4.0 * u), TINY), 0.0)
        out = np.where(live, np.minimum(prod, 1.0), 0.0)
        return np.where(np.isposinf(eps), 0.0, out)


def _x_star(f: TradeOff) -> float:
    """x* with f'(x*) = −1 for the symmetric families (theory §7)."""
    if isinstance(f, Gaussian):
        return float(norm_cdf(-f.mu / 2.0))
    if isinstance(f, Laplace):
        return 0.5 * math.exp(-f.mu / 2.0)
    raise TypeError(f"no closed-form x* for {f!r}")


class Subsampled(TradeOff):
    """C_p(f) for a symmetric closed-form f (Gaussian, Laplace): DRS Thm 4.2, theory §7. Exact.

    C_p(f) = f_p on [0, x*], the line x* + f_p(x*) − α on [x*, f_p(x*)], f_p⁻¹ on [f_p(x*), 1],
    with f'(x*) = −1 (for G_μ, x* = Φ(−μ/2)). For ε ≥ 0, δ(ε) = p δ_f(log(1 + (e^ε − 1)/p)), so
    ε(δ) = log(1 + p(e^{ε_f(δ/p)} − 1)): the amplification formula applied to f's exact profile.

    Examples
    --------
    >>> c = Subsampled(Gaussian(1.0), 0.1)
    >>> x = float(norm_cdf(-0.5))
    >>> round(c(x), 12) == round(0.1 * Gaussian(1.0)(x) + 0.9 * (1 - x), 12)
    True
    """

    def __init__(self, base: TradeOff, p: float) -> None:
        self.base = base
        self.p = check_scalar("p", p, low=0.0, high=1.0)
        self.mix = Mixture(base, self.p)
        self.x_star = _x_star(base)
        if self.x_star == 0.0:
            # x* = Φ(−μ/2) (L_μ: e^{−μ/2}/2) underflowed (μ ≳ 75 and 1490): f_p at the true
            # x* ∈ (0, TINY) is p x* + (1 − p)(1 − x*) (f(x*) = x* by symmetry), not
            # f_p(0) = 1, which made the middle line 1 − α everywhere (β 0.5 for ≤ 0.25 at
            # μ = 80, p = 1/2). Dropping x* keeps the line 1 − p − α below the true one,
            # 1 − p + 2p x* − α, and the atom at 0, y* − x*, within TINY.
            self.y_star, self.y_star_c = 1.0 - self.p, self.p
            return
        self.y_star = float(self.mix(self.x_star))
        xs = np.asarray([self.x_star])
        self.y_star_c = float(self.p * self._base_c(xs)[0] + (1.0 - self.p) * self.x_star)

    @property
    def is_symmetric(self) -> bool:
        return True

    def inverse(self) -> Subsampled:
        return self

    def _base_c(self, t: np.ndarray) -> np.ndarray:
        """1 − f(t) at full relative precision for small t (the closed form's complement)."""
        f = self.base
        if isinstance(f, Gaussian):
            return norm_cdf(f.mu - norm_isf(t))
        mu = float(f.mu)  # type: ignore[attr-defined]  # Subsampled bases: G_μ or L_μ
        em = math.exp(mu) if mu < 700 else math.inf  # Laplace: 1 − f(t) = e^μ t below
        with np.errstate(over="ignore", invalid="ignore"):
            small = np.where(t == 0.0, 0.0, em * t)
        return np.where(t < 0.5 / max(em, 1.0), small, 1.0 - np.asarray(f(t)))

    def _base_rel(self, t: np.ndarray) -> np.ndarray:
        """A bound on the relative error of f(t) and of 1 − f(t) as computed at t ∈ (0, x*]
        (:meth:`_right`): for G_μ, Φ at w = z − μ and at −w, z = Φ⁻¹(1 − t) and w within a few
        ulps of |z| + μ, which moves log Φ(±w) by the hazard φ(w)/Φ(±w) ≤ |w| + 1 times that
        (:class:`fdp.Gaussian`'s margin 4u(1 + 2 hz (|z| + μ + 1)) with that bound on hz); for
        L_μ, exponentials of arguments within μ + |log t| + 2 in size, each within 2u of that
        relative."""
        mu = float(self.base.mu)  # type: ignore[attr-defined]  # G_μ or L_μ
        u = UNIT_ROUNDOFF
        with np.errstate(divide="ignore", invalid="ignore"):
            if isinstance(self.base, Gaussian):
                z = np.abs(norm_isf(t))
                w = np.abs(z - mu)
                return 4.0 * u * (1.0 + 2.0 * (w + 1.0) * (z + mu + 1.0))
            return 8.0 * u * (mu + np.abs(np.log(np.maximum(t, TINY))) + 3.0)

    def _right(self, alpha: np.ndarray, up: bool = False) -> np.ndarray:
        """f_p⁻¹(α) on [f_p(x*), 1]: the t ∈ [0, x*] with f_p(t) = p f(t) + (1 − p)(1 − t) = α,
        by bisection on the bit patterns of t (64 steps reach adjacent floats at every scale),
        rounded down (the guarantee side) with a certified sign test.

        The residual r(t) = f_p(t) − α is formed where it keeps its precision: from f(t) as
        p f(t) − (1 − p) t + s, s = (1 − p) − α with 1 − p as a double-double (exact where α
        is near 1 − p, the steep part), where f(t) ≤ 1/2; from the complements as
        (1 − α) − p (1 − f(t)) − (1 − p) t where f(t) > 1/2 (α near 1). A step moves the
        lower end up only where r exceeds a bound on its round-off, so the result is at or
        below the true f_p⁻¹(α). Before, the complements alone (1 − α rounded for α < 1/2, and
        1 − f(t) near 1 where f(t) is tiny) gave ``subsample(Gaussian(30), 0.99)(0.01 + 1e-17)``
        as x* = 3.7e-51 for the true 9.2e-102 (a helper's hunt against mpmath). With ``up``
        the bisection moves its upper end only where f_p(t) < α for certain and returns it,
        raised by 1e-13: an upper bound (for :meth:`_eval_up`)."""
        u = UNIT_ROUNDOFF
        p = self.p
        one_p = 1.0 - p
        one_p_lo = (1.0 - one_p) - p  # 1 − p = one_p + one_p_lo exactly (both differences
        # are exact by Sterbenz's lemma)
        d0 = one_p - alpha
        s_dir = d0 + one_p_lo
        e_dir = u * (np.abs(d0) + np.abs(s_dir))  # (d0 is exact where α is within 2x of 1 − p)
        c = 1.0 - alpha
        e_c = np.where(alpha >= 0.5, 0.0, u * c)  # (exact for α ≥ 1/2)
        lo = np.zeros(alpha.shape, dtype=np.int64)
        # (an underflowed x* is positive in truth: the upper end is then the least subnormal)
        top = TINY if up and self.x_star == 0.0 else self.x_star
        hi = np.full(alpha.shape, np.float64(top).view(np.int64))
        for _ in range(64):
            mid = lo + (hi - lo) // 2
            t = mid.view(np.float64)
            fc = self._base_c(t)
            rel = self._base_rel(t)
            with np.errstate(invalid="ignore"):
                f = np.asarray(self.base._eval(t), dtype=float)
            pt = one_p * t
            direct = f <= 0.5
            with np.errstate(invalid="ignore", over="ignore"):  # (t = 0: z = ∞, 0 · ∞)
                r = np.where(direct, p * f - pt + s_dir, c - p * fc - pt)
                err = np.where(
                    direct,
                    p * f * (2.0 * rel + 2.0 * u) + pt * 2.0 * u + e_dir,
                    p * fc * (rel + 2.0 * u) + pt * 2.0 * u + e_c,
                ) + 4.0 * u * np.abs(r) + 2.0 * TINY
            if up:  # f_p(t) < α for certain: t above the root
                ok = r < -np.nan_to_num(err, nan=np.inf)
                hi = np.where(ok, mid, hi)
                lo = np.where(ok, lo, mid)
            else:  # f_p(t) > α for certain: t below it
                ok = r > np.nan_to_num(err, nan=np.inf)
                lo = np.where(ok, mid, lo)
                hi = np.where(ok, hi, mid)
        if up:
            return np.minimum(hi.view(np.float64) * (1.0 + 1e-13), np.maximum(1.0 - alpha, 0.0))
        # (lowered by the middle section's relative 1e-13 as well, so that the curve stays
        # monotone and convex where the two meet at y*)
        return lo.view(np.float64) * (1.0 - 1e-13)

    def _eval(self, alpha: np.ndarray) -> np.ndarray:
        xs, ys = self.x_star, self.y_star
        alpha = np.asarray(alpha, dtype=float)
        left = np.asarray(self.mix(np.minimum(alpha, xs))) * (1.0 - 8.0 * UNIT_ROUNDOFF)
        right = self._right(np.clip(alpha, ys, 1.0))
        # the line x* + y* − α, with y* from its complement (1 − α is exact for α ≥ 1/2, and
        # y* ≈ 1 carries an absolute ulp that a small β would feel), rounded down as _right
        # (and by an absolute 16 ulps of its terms, which cancel where the line meets the axis:
        # subsample(Gaussian(20), 0.99)(0.01 − 1e-16) read 1.11e-16 for 1.006e-16)
        mid = np.maximum(self._line(alpha, -1.0), 0.0)
        return np.where(alpha <= xs, left, np.where(alpha <= ys, mid, right))

    def _line(self, alpha: np.ndarray, sign: float) -> np.ndarray:
        """The middle section x* + y* − α rounded down (``sign`` −1) or up (+1) by 1e-13
        relative and 16 ulps of its terms (see :meth:`_eval`)."""
        xs, ac = self.x_star, 1.0 - alpha
        return (xs - self.y_star_c + ac) * (1.0 + sign * 1e-13) + sign * 16.0 * UNIT_ROUNDOFF * (
            xs + self.y_star_c + np.abs(ac))

    def _eval_up(self, alpha: np.ndarray) -> np.ndarray:
        """C_p(f)(α) rounded up: f_p's optimistic value left of x*, the line rounded up, and
        f_p⁻¹'s certified upper end right of y* (:meth:`_right`), each capped by f_p's (which
        lies above C_p everywhere). From the guarantee's values plus 8 ulps the chords of
        :meth:`to_piecewise` were up to 2.8e-15 relative below the curve (μ = 5, p = 0.5)."""
        xs, ys = self.x_star, self.y_star
        alpha = np.asarray(alpha, dtype=float)
        f_up = np.asarray(self.mix._eval_up(alpha), dtype=float)
        right = self._right(np.clip(alpha, ys, 1.0), up=True)
        # x* and y* are rounded: past either end the line runs below the convex curve, so near
        # x* f_p's own upper value is kept (f_p ≥ C_p everywhere), and right of x* the larger
        # of the line and f_p⁻¹'s upper end (a branch chosen by the rounded y* read f_p⁻¹ just
        # below the true y*: 3.6e-66 for 5.55e-17 at μ = 300, p = 1/2)
        mid = np.maximum(self._line(alpha, 1.0), right)
        out = np.where(alpha <= xs * (1.0 + 1e-9), f_up, mid)
        return np.minimum(out, f_up)

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        """δ(ε) = δ_{f_p}(ε) for ε ≥ 0, and 1 − e^ε + e^ε δ(−ε) below (symmetry), that sum
        rounded up by 4 ulps of its terms (to nearest it was 1.5e-16 below the truth)."""
        pos = np.asarray(self.mix._delta(np.abs(eps)))
        with np.errstate(over="ignore"):
            em1 = np.expm1(np.minimum(eps, 0.0))
            tail = np.exp(np.minimum(eps, 0.0)) * pos
            r = -4.0 if self._optimistic else 4.0
            neg = np.clip(-em1 + tail + r * UNIT_ROUNDOFF * (np.abs(em1) + tail), 0.0, 1.0)
        return np.where(eps >= 0, pos, neg)

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        return self.mix._epsilon(delta)

    #: the lower ends of the brackets: f_p's ε and δ rounded toward more privacy (see
    #: :meth:`_as_upper`)
    _optimistic = False

    def _as_upper(self) -> Subsampled:
        """The exact curve with ε and δ rounded toward more privacy, for the lower ends of its
        brackets (f_p's optimistic twin, :meth:`Mixture._as_upper`; and 1 − e^ε + e^ε δ(−ε)
        below ε = 0 rounded down). Its values β are this curve's."""
        if self._optimistic:
            return self
        out = copy.copy(self)
        out.mix = self.mix._as_upper()
        out._optimistic = True
        return out

    def _loss_bins(self, edges: np.ndarray) -> LossBins:
        # positive losses: those of f_p; negative: mirrored with P and Q swapped; an atom at 0
        # (a grid of nonpositive losses, one chunk of a long grid in pld._loss_bins_chunked:
        # f_p's bins all have width 0 and its mass is above)
        m0 = self.y_star - self.x_star
        pos = self.mix._loss_bins(np.maximum(edges, 0.0))
        mir = self.mix._loss_bins(np.maximum(-edges[::-1], 0.0))
        # a bin straddling 0 has a positive part (from f_p) and a negative one (mirrored); each
        # part is zero for bins entirely on the other side
        p = pos.p + mir.q[::-1]
        q = pos.q + mir.p[::-1]
        nb = edges.size - 1
        j0 = int(np.searchsorted(edges, 0.0, side="left")) - 1
        p_below = q_below = p_above = q_above = 0.0
        if 0 <= j0 < nb:
            p[j0] += m0
            q[j0] += m0
        elif j0 < 0:
            p_below += m0
            q_below += m0
        else:
            p_above += m0
            q_above += m0
        if edges[0] < 0:
            p_below += mir.q_above + mir.q_inf
            q_below += mir.p_above
        else:  # the whole negative side, and f_p's losses in (0, e_0], lie below the grid
            p_below += _neg_mass(self, "P")
            q_below += _neg_mass(self, "Q")
            if edges[0] > 0:
                b0 = self.mix._loss_bins(np.array([0.0, float(edges[0])]))
                p_below += float(b0.p[0])
                q_below += float(b0.q[0])
        if edges[-1] < 0:  # the mirrored losses in (e_top, 0) lie above the grid
            b1 = self.mix._loss_bins(np.array([0.0, -float(edges[-1])]))
            p_above += float(b1.q[0])
            q_above += float(b1.p[0])
        p_above += pos.p_above
        q_above += pos.q_above
        # given loss bounds: f_p's on the positive side, the mirrored ones negated (lower and
        # upper swapped); none in the bin straddling 0, which holds both and the atom
        bounds: list[np.ndarray | None] = []
        for own, other in ((pos.loss_lo, mir.loss_hi), (pos.loss_hi, mir.loss_lo)):
            if own is None and other is None:
                bounds.append(None)
                continue
            x = np.full(nb, np.nan) if own is None else own.copy()
            if other is not None:
                x = np.where(np.isfinite(x), x, -other[::-1])
            if 0 <= j0 < nb:
                x[j0] = np.nan
            bounds.append(x)
        return LossBins(
            p=p,
            q=q,
            p_below=p_below,
            q_below=q_below,
            p_above=p_above,
            q_above=q_above,
            q_inf=pos.q_inf,
            loss_lo=bounds[0],
            loss_hi=bounds[1],
        )

    def _atoms(self) -> np.ndarray | None:
        """Positive atoms of f_p, their mirror images, and the atom at 0 of the linear piece."""
        a = self.mix._atoms()
        if a is None:
            return None
        pos = a[a > 0]
        return np.concatenate([-pos[::-1], [0.0], pos])

    def __repr__(self) -> str:
        return f"Subsampled({self.base!r}, p={self.p:.6g})"

    def _label(self) -> str:
        return f"$C_{{{self.p:.3g}}}$({self.base._label()})"


def _neg_mass(c: Subsampled, which: str) -> float:
    """P- or Q-mass of C_p(f) at negative losses (mirror of the positive side of f_p)."""
    b = c.mix._loss_bins(np.array([0.0, 1e300]))
    pos_p = float(b.p.sum() + b.p_above)
    pos_q = float(b.q.sum() + b.q_above + b.q_inf)
    return pos_q if which == "P" else pos_p


def subsample(f: TradeOff, p: float) -> TradeOff:
    """C_p(f) = min{f_p, f_p⁻¹}** with f_p = p f + (1 − p) Id (DRS Thm 4.2, theory §7).

    Sampling m of n records without replacement (p = m/n) under replace-one neighbours. Exact for
    G_μ and Laplace (closed form with the kink at x*), exact for piecewise-linear curves (the
    lower convex envelope), bracketed otherwise.

    Examples
    --------
    >>> c = subsample(EpsDelta(1.0), 0.1)
    >>> round(float(c.epsilon(0.0)), 6) == round(math.log(1 + 0.1 * (math.e - 1)), 6)
    True
    """
    p = check_scalar("p", p, low=0.0, high=1.0)
    if not isinstance(f, TradeOff):
        raise TypeError(f"f must be a TradeOff, got {type(f).__name__}")
    if p == 0.0 or isinstance(f, Identity):
        return Identity()
    if isinstance(f, (Gaussian, Laplace)) and (f.mu > 0):
        return Subsampled(f, p)
    if isinstance(f, PiecewiseLinear):
        name = f"subsample({f!r}, {p:.6g})"
        got = _subsampled_pl(f, p)
        if got is not None:
            return _named(got, name)
        fp = _mixture_pl(f, p)
        return _named(min_envelope(fp, fp.inverse(), symmetric=True), name)
    if f.kind == "approximation":
        return subsample(f.to_piecewise(), p)
    if isinstance(f, Bracketed):
        fm = Mixture(f, p)  # (C_p(f) = min{f_p, f_p⁻¹}**: its profile from theirs)
        return Bracketed(subsample(f.lower, p), subsample(f.upper, p),
                         name=f"subsample({f!r}, {p:.6g})",
                         closed=_BracketProfileMax(fm, fm.inverse()),
                         info={"gdp_base": f})  # (its μ: fdp.gdp_mu)
    lo, hi = _pl_bracket(f)
    return Bracketed(subsample(lo, p), subsample(hi, p), name=f"subsample({f!r}, {p:.6g})")


def _subsampled_pl(f: PiecewiseLinear, p: float) -> PiecewiseLinear | None:
    """C_p(f) for a symmetric exact PL curve f, from its masses and losses (None for other
    curves): DRS Thm 4.2 makes it f_p on [0, x*], the line of slope −1, and f_p⁻¹ beyond, so
    its outcomes are f_p's of positive loss ℓ' = log(1 − p + p e^ℓ) (ℓ > 0), their mirror
    images (P and Q swapped, loss −ℓ'), an atom of loss 0 with P = Q = y* − x* = 1 − Σ(p_j +
    q_j') − p q_∞, and f_p's +∞ atom p q_∞ with its mirror at −∞. The losses stay explicit (the
    hull of f_p's and f_p⁻¹'s breakpoints read them from the breakpoints, which underflow
    beyond ε ≈ 708: subsample(EpsDelta(744), 0.3) read ε(1e-3) = 742.54 for the true 742.79),
    with their rounding (:func:`_mixed_losses`) charged on each side."""
    if f._bound or f._side != "lower" or f.kind != "exact" or not 0.0 < p <= 1.0:
        return None
    if f._given_masses is None:
        return None
    pm, qm, loss = f._masses
    # symmetric exactly: outcome (p, q, ℓ) comes with (q, p, −ℓ), and the +∞ atom with a P-mass
    # at −∞ (is_symmetric compares values within 1e-12: a P-mass of 2⁻⁴⁰ at −∞ passed, and
    # dropping it read ε(0) = 4.5e-13 for the true log 2)
    fin = ~np.isneginf(loss)
    if not (np.array_equal(pm[fin], qm[fin][::-1]) and np.array_equal(loss[fin], -loss[fin][::-1])
            and float(pm[~fin].sum()) == f._mass_qinf):
        return None
    pos = loss > 0.0
    new_loss, err = _mixed_losses(loss[pos], p)
    err = err + f._loss_errs()[pos]
    pp = pm[pos]
    qq = (1.0 - p) * pm[pos] + p * qm[pos]
    qi = product_up(p, f._mass_qinf)  # (rounded up: 1e-12 · 1e-312 was 0, ε(0) finite)
    # the loss-0 atom y* − x*: with f's masses summing to 1 (pos, their mirrors, loss-0 atoms z
    # and the ±∞ atoms) it is Σz + (1 − p)(Σ_pos (q_j − p_j) + q_∞), a sum of nonnegative terms.
    # (As 1 − Σ of the others it cancelled to an ulp of 1: C_p(f_{36.69, 0}) at p = 1 had a
    # spurious atom of 1.1e-16 and read f(1.16e-16) = 2.27e-16 for the true 1.16e-16; a hunt)
    zero = loss == 0.0
    m0 = float(pm[zero].sum()) + (1.0 - p) * (float((qm[pos] - pm[pos]).sum()) + f._mass_qinf)
    out = PiecewiseLinear.from_masses(
        np.concatenate([pp, qq, [m0, qi]]),
        np.concatenate([qq, pp, [m0, 0.0]]),
        q_inf=qi,
        loss=np.concatenate([new_loss, -new_loss, [0.0, -np.inf]]),
        loss_err=np.concatenate([err, err, [0.0, 0.0]]),
        kind="exact",
        mass_rtol=f._mass_rtol + 8.0 * UNIT_ROUNDOFF + f._swapped_p_rtol(),  # (pp: Q-masses too)
    )
    out._self_inverse = True
    if not f._twin_ok and f._has_twin():
        # (an exact product's curve: C_p of its twin, read on the upper side, lies above
        # C_p(f), as for _mixture_pl)
        out._twin_build = functools.partial(_subsampled_twin, f, p)
    return inherit_twin(out, f)  # type: ignore[no-any-return]


def _subsampled_twin(f: PiecewiseLinear, p: float) -> PiecewiseLinear:
    """The optimistic reading of C_p(f) = min{f_p, f_p⁻¹}** from f's twin."""
    return min_envelope(_mixture_twin(f, p, False), _mixture_twin(f, p, True), symmetric=True)


def _poisson_pl(
    f: PiecewiseLinear, fi: PiecewiseLinear, p: float
) -> tuple[PiecewiseLinear, PiecewiseLinear]:
    """(remove, symmetric) of Poisson subsampling for a PL curve f given with (a curve for) f⁻¹:
    add = p f + (1 − p) Id, remove = (p f⁻¹ + (1 − p) Id)⁻¹, symmetric = min{add, add⁻¹, remove,
    remove⁻¹}** (theory §7)."""
    if p == 0.0:
        ident = PiecewiseLinear(np.array([0.0, 1.0]), np.array([1.0, 0.0]), kind=f.kind)
        return ident, ident
    a = _mixture_pl(f, p)
    ri = _mixture_pl(fi, p)  # remove⁻¹
    r = ri.inverse()
    # f = f⁻¹ exactly: remove⁻¹ = p f⁻¹ + (1 − p) Id = add, so the four-way envelope is
    # min{add, add⁻¹}** = C_p(f), built from f's masses with explicit losses (the hull's
    # breakpoints underflow beyond ε ≈ 708: the symmetric curve of EpsDelta(744) at p = 0.3,
    # composed twice, read ε(1e-3) = 1485.07 for the exact 1485.581)
    sym = _subsampled_pl(f, p)
    if sym is None:
        sym = min_envelope(
            min_envelope(a, a.inverse(), symmetric=True),
            min_envelope(r, ri, symmetric=True),
            symmetric=True,
        )
    return r, sym


@dataclass(frozen=True)
class PoissonPairs:
    """Poisson subsampling at rate p of an f-DP mechanism, f = T(P, Q) (theory §7).

    ``add`` = T(P, (1 − p)P + pQ) = p f + (1 − p) Id and ``remove`` = T((1 − p)Q + pP, Q) =
    (p f⁻¹ + (1 − p) Id)⁻¹ are the two neighbouring directions (add/remove relation); the
    mechanism is ``symmetric`` = min{add, add⁻¹, remove, remove⁻¹}**-DP.
    """

    add: TradeOff
    remove: TradeOff
    symmetric: TradeOff
    #: the subsampled curve f and the rate p (for composing: ``pairs ** n``)
    base: TradeOff | None = None
    p: float | None = None

    def __pow__(self, n: int) -> TradeOff:
        """n Poisson-subsampled runs composed: min{F, F⁻¹}** with F = add^{⊗n} (theory §7),
        the curve of :meth:`fdp.Accountant.compose` with ``sample_rate=p`` (at ``tol`` = 1e-3,
        as :func:`fdp.compose`). Composing the per-run ``symmetric`` curves instead is sound
        but looser; composing ``add`` alone covers one direction only.

        Examples
        --------
        >>> h = poisson_subsample(Gaussian(1.0), 0.01) ** 1000
        >>> round(float(h.epsilon(1e-5)), 2)
        1.83
        """
        from .accountant import Accountant

        n = check_int("n", n, low=0)
        if self.base is None or self.p is None:  # pragma: no cover - made by poisson_subsample
            raise TypeError("only the pairs of fdp.poisson_subsample can be composed with **")
        acc = Accountant().compose(self.base, n, sample_rate=self.p, sampling="poisson")
        return acc.curve_at(1e-3)  # (compose's default accuracy; the Accountant's is looser)


def poisson_subsample(f: TradeOff, p: float) -> PoissonPairs:
    """The add/remove pairs of Poisson subsampling at rate p and their symmetrization.

    Examples
    --------
    >>> pp = poisson_subsample(Gaussian(1.0), 0.1)
    >>> round(float(pp.symmetric.epsilon(1e-5)), 6) == round(float(pp.add.epsilon(1e-5)), 6)
    True
    """
    p = check_scalar("p", p, low=0.0, high=1.0)
    if not isinstance(f, TradeOff):  # (a string or None raised AttributeError: no .kind)
        raise TypeError(f"f must be a TradeOff, got {type(f).__name__}")
    add = Mixture(f, p)
    remove: TradeOff
    sym: TradeOff
    if p == 1.0:
        # every record is in the batch: add = remove = f, symmetric = min{f, f⁻¹}**. (From the
        # general construction, the symmetric curve of a subsample's envelope read δ(0.1998)'s
        # lower end 2.10308e-10 for the exact 2.10307e-10; hunt seed 405399)
        return PoissonPairs(add=add, remove=f, symmetric=symmetrize(f), base=f, p=p)
    if isinstance(f, (Gaussian, Laplace)) and f.mu > 0:
        # (the mixture's own inverse: without cancellation below δ ≈ 1e-16, _MixtureInverse)
        remove = Mixture(f.inverse(), p).inverse()
        sym = Subsampled(f, p)  # symmetric f: remove = add⁻¹, so this is C_p(f)
    elif isinstance(f, PiecewiseLinear):
        # from the outcomes' masses: δ needs no 1 − e^ε + e^ε δ(−ε) (cancellation)
        remove, sym = _poisson_pl(f, f.inverse(), p)
    elif isinstance(f, Bracketed) or f.kind != "approximation":
        # each side from f's and f⁻¹'s own curves (the engine composes the inverses: tighter in
        # f⁻¹'s tail than the inverse of f's curves); mixture, inversion and min{·}** are
        # monotone, so the bracket carries over
        lo, hi = (f.lower, f.upper) if isinstance(f, Bracketed) else _pl_bracket(f)
        fi = f.inverse()
        lo_i, hi_i = (fi.lower, fi.upper) if isinstance(fi, Bracketed) else (
            lo.inverse(), hi.inverse())
        (r_lo, s_lo), (r_hi, s_hi) = _poisson_pl(lo, lo_i, p), _poisson_pl(hi, hi_i, p)
        name = f"poisson_subsample({f!r}, {p:.6g})"
        remove = Bracketed(r_lo, r_hi, name=name + ".remove")
        # (min{add, add⁻¹, remove, remove⁻¹}**: its profile from theirs, remove⁻¹ = p f⁻¹ +
        # (1 − p) Id, where f and f⁻¹ are brackets answering from their own tails)
        closed = (_BracketProfileMax(add, add.inverse(), remove, Mixture(fi, p))
                  if isinstance(f, Bracketed) and isinstance(fi, Bracketed) else None)
        sym = Bracketed(s_lo, s_hi, name=name, closed=closed,
                        info={"gdp_base": f} if isinstance(f, Bracketed) else None)
    else:
        remove = Inverse(Mixture(f.inverse(), p))
        sym = poisson_subsample(f.to_piecewise(), p).symmetric
    return PoissonPairs(add=add, remove=remove, symmetric=sym, base=f, p=p)

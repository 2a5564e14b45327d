"""Closed-form tail bounds on δ(ε) of compositions, for ε beyond the reach of a numeric grid.

For a pair (A, B) with privacy loss L = log dB/dA and any θ > 0,

    δ(ε) = E_B[(1 − e^{ε − L})₊] ≤ c(θ) e^{−θε} E_B[e^{θL}],  c(θ) = (1/(1+θ)) (θ/(1+θ))^θ,

because (1 − e^{−x})₊ ≤ c(θ) e^{θx} for all x (c(θ) is the maximum of (1 − e^{−x}) e^{−θx}
over x ≥ 0). E_B[e^{θL}] = e^{θ D_{θ+1}(B‖A)} is a Rényi moment, and moments multiply under
composition (losses add), so for f₁^{⊗n₁} ⊗ … the bound is c(θ) exp(Σ nᵢ Kᵢ(θ) − θε), minimised
over θ. This is the RDP → (ε, δ) conversion of Balle, Barthe, Gaboardi, Hsu & Sato (AISTATS
2020, Thm 21, "BBGHS") written for the moment generating function directly. It is a certified
upper bound on δ; :class:`fdp.numeric.Bracketed` curves from the engine use it where it beats
the grid (deep in the tail, where the grid's truncated mass sits at +∞), so a finite certified ε
exists at every δ > 0 for every curve with finite moments.

Kᵢ(θ) = log E_B[e^{θL}] (upper bounds) are known for:

- G_μ: θ(θ + 1) μ²/2 (exact);
- L_μ: log(λ/(2λ−1) e^{(λ−1)μ} + (λ−1)/(2λ−1) e^{−λμ}), λ = θ + 1 (Mironov 2017, Prop 6; exact);
- p G_μ + (1 − p) Id (Poisson-subsampled Gaussian, add pair): for integer λ = θ + 1 the
  binomial sum Σ_k C(λ,k)(1−p)^{λ−k} p^k e^{k(k−1)μ²/2} (Mironov, Talwar & Zhang 2019; exact);
- its inverse (remove pair): log(1 − p + p e^{θ(θ+1)μ²/2}), since x ↦ x^{−θ} is convex and
  1 − p + p e^Y is a convex combination of 1 and e^Y, the second-order bound of
  :func:`_remove_taylor`, or the add pair's K (B_α ≤ A_α for the sampled Gaussian, Mironov,
  Talwar & Zhang 2019), whichever is smallest (all upper bounds);
- C_p(G_μ) = min{f_p, f_p⁻¹}** (uniform subsampling): log(e^{K_add} + e^{K_rem} − 1) from the two
  pairs above (an f-divergence of a hull of a minimum, :func:`_hull_moment`), or G_μ's moments
  (C_p(G_μ) ≥ G_μ, DRS Thm 4.2), whichever is smaller;
- discrete curves: log Σ_j q_j e^{θℓ_j} (exact; +∞ with a +∞ atom);
- engine results: the sum over their components.

Steps with a +∞ atom (f_{ε,δ} with δ > 0, f ⊗ f_{0,δ}, discrete curves with Q-mass at +∞)
enter :class:`TailBound` through their finite part: δ(ε) ≤ Q[L = ∞] + c(θ) e^{−θε} E_B[e^{θL};
L < ∞], with Q[L = ∞] = 1 − Π(1 − aᵢ)^{nᵢ} and the finite parts' moments multiplying.

Lower bounds come from the components themselves (:func:`component_epsilon_lower`,
:func:`component_delta_lower`): a composition lies below each of its parts (post-processing), so
max_i ε_{f_i}(δ) bounds its ε from below; engine brackets take it below δ = 1e-12, where their
grid's lower end stops at the largest loss it holds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import gdp
from ._numerics import MIN_NORMAL, TINY, UNIT_ROUNDOFF

__all__ = ["THETAS", "THETAS_WIDE", "log_mgf", "delta_bound", "epsilon_bound", "TailBound",
           "component_epsilon_lower", "component_delta_lower"]

#: The θ grid: integers (the subsampled-Gaussian sum needs integer orders λ = θ + 1), every one
#: up to 64 and geometric beyond. (Geometric alone skipped 11, 15, 17, 19, …, where the steep
#: moments of DP-SGD at small σ put the best θ: dpsgd(1.1, 256/60000, 14063) read ε(1e-50)
#: 13.14 against 12.34 from every integer.)
THETAS = np.unique(np.concatenate([np.arange(1.0, 65.0),
                                    np.round(np.geomspace(1.0, 20000.0, 90))]))
#: THETAS with fractional θ in (0, 1) added: where no grid holds a composition, the tail bound
#: is the whole answer, and when Σ nᵢ Kᵢ is huge the best θ is far below 1 (for DP-SGD at
#: σ = 0.1, p = 0.5, T = 10⁷ it is ~1e-4, and ε(1e-5) halves against θ ≥ 1 alone). Fractional
#: orders of a subsampled Gaussian cost a quadrature each (~0.5 ms), so only the fallback uses
#: them.
THETAS_WIDE = np.concatenate([np.geomspace(1e-6, 0.9, 40), THETAS])


def log_mgf(curve: Any, thetas: np.ndarray = THETAS) -> np.ndarray | None:
    """Upper bounds on K(θ) = log E_B[e^{θL}] at integer θ ≥ 1, or None if unknown."""
    from . import rdp
    from .composition import DeltaMix
    from .families import Gaussian, Laplace
    from .numeric import Bracketed
    from .operations import Mixture, Subsampled
    from .rdp import _log_a_frac_up, _log_a_int_up
    from .tradeoff import Inverse, PiecewiseLinear

    t = np.asarray(thetas, dtype=float)
    # K(θ) = θ ρ(θ + 1) for an RDP curve ρ (Rényi divergence of order λ = θ + 1)
    if isinstance(curve, Gaussian):
        return t * rdp.gaussian(curve.mu, t + 1.0)
    if isinstance(curve, Laplace):
        return t * rdp.laplace(curve.mu, t + 1.0)
    if isinstance(curve, Subsampled):
        # C_p(f) ≥ f (K only falls under post-processing), and C_p(f) = min{f_p, f_p⁻¹}** with
        # K ≤ log(e^{K_add} + e^{K_rem} − 1) (see _hull_moment): the smaller of the two
        mix = Mixture(curve.base, curve.p)
        k_f = log_mgf(curve.base, t)
        k_add, k_rem = log_mgf(mix, t), log_mgf(Inverse(mix), t)
        if k_add is None or k_rem is None:
            return k_f
        hull = _hull_moment(k_add, k_rem)
        return hull if k_f is None else np.minimum(k_f, hull)
    if isinstance(curve, Mixture) and isinstance(curve.base, Gaussian):
        p, mu = curve.p, curve.base.mu
        if p == 0.0 or mu == 0.0:
            return np.zeros_like(t)
        if p == 1.0:
            return t * (t + 1.0) * (mu * mu) / 2.0
        # integer orders by the binomial sum; fractional ones (the wide grid of a fallback,
        # THETAS_WIDE) by quadrature at relative accuracy 1e-11, rounded up as fdp.rdp does
        return np.array([_log_a_int_up(p, 1.0 / mu, int(x) + 1) if float(x).is_integer()
                         else _log_a_frac_up(p, 1.0 / mu, float(x) + 1.0) for x in t])
    if (
        isinstance(curve, Mixture)
        and isinstance(curve.base, PiecewiseLinear)
        and curve.base.kind == "exact"
        and curve.base._mass_qinf == 0
    ):
        return _log_mgf_mixture_masses(curve.base, curve.p, t)
    if isinstance(curve, Mixture) and isinstance(curve.base, Laplace):
        # (closed-form K at every integer order; a composed base would cost an order each)
        return _log_mgf_mixture_binomial(curve.base, curve.p, t)
    if (
        isinstance(curve, Inverse)
        and isinstance(curve.base, Mixture)
        and isinstance(curve.base.base, Laplace)
        and curve.base.p < 1.0
    ):
        # T(B, P), B = (1 − p)P + pQ: E_P[(dP/dB)^θ] = E_P[(1 − p + p r)^{−θ}], r = dQ/dP, and
        # y ↦ y^{−θ} is convex, so it is ≤ (1 − p) + p E_P[r^{−θ}] = (1 − p) + p e^{K_{f⁻¹}(θ)}
        k_inv = _inverse_mgf(curve.base.base, t)
        if k_inv is None:
            return None
        p = curve.base.p
        out = np.logaddexp(math.log1p(-p), math.log(p) + k_inv)
        return out + 4.0 * UNIT_ROUNDOFF * (np.abs(out) + np.abs(k_inv) + 2.0)
    if (
        isinstance(curve, Inverse)
        and isinstance(curve.base, Mixture)
        and isinstance(curve.base.base, PiecewiseLinear)
        and curve.base.base.kind == "exact"
        and curve.base.base._mass_qinf == 0
        and curve.base.p < 1.0
    ):
        return _log_mgf_mixture_masses(curve.base.base, curve.base.p, t, inverse=True)
    if (
        isinstance(curve, Inverse)
        and isinstance(curve.base, Mixture)
        and isinstance(curve.base.base, Gaussian)
    ):
        p, mu = curve.base.p, curve.base.base.mu
        if p == 0.0:
            return np.zeros_like(t)
        g = t * (t + 1.0) * (mu * mu) / 2.0
        convex = np.logaddexp(math.log1p(-p) if p < 1 else -np.inf, math.log(p) + g)
        if p >= 1.0:
            return convex
        # and the add pair's own moments: for the sampled Gaussian B_α ≤ A_α at every order
        # α = θ + 1 ≥ 1 (Mironov, Talwar & Zhang 2019, the fact behind its RDP being
        # log A_α/(α − 1) for add/remove neighbours, as in fdp.rdp.subsampled_gaussian), where
        # B_α = E_B[(dP/dB)^α] is this pair's moment and A_α the add pair's. The second-order
        # bound grows with (1 − p)^{−θ} and the convexity one with e^{θ²μ²/2}: at μ = 1/3,
        # p = 0.05, θ = 35 they read 0.80 and 67.0 for the add pair's 0.24, and DP-SGD's
        # certified ε(1e-50) over 20,000 steps was 47.6, above its RDP bound of 39.9
        k_add = log_mgf(curve.base, t)
        out = np.minimum(convex, _remove_taylor(p, mu, t))
        return out if k_add is None else np.minimum(out, k_add)
    if isinstance(curve, PiecewiseLinear) and curve.kind == "exact":
        if curve._mass_qinf > 0:
            return None
        return _log_mgf_pl_masses(curve, t)
    if isinstance(curve, DeltaMix) and curve.delta_ == 0.0:
        return log_mgf(curve.base, t)
    if isinstance(curve, Bracketed) and curve.info.get("symmetrized") is not None:
        # min{f, f⁻¹}**: the hull of the two (see _hull_moment)
        f = curve.info["symmetrized"]
        k_f, k_i = log_mgf(f, t), _inverse_mgf(f, t)
        if k_f is None or k_i is None:
            return None
        return _hull_moment(k_f, k_i)
    if isinstance(curve, Bracketed):
        items = curve.info.get("items")
        if not items:
            # the certified lower curve's own pair, where it has masses: the true pair is a
            # post-processing of it (f ≥ lower), and K, an f-divergence, only falls under that
            low = curve._side_lower()
            if isinstance(low, PiecewiseLinear) and low._mass_qinf == 0:
                return _log_mgf_pl_masses(low, t)
            return None
        tot = np.zeros_like(t)
        for c, n in items:
            k = log_mgf(c, t)
            if k is None:
                return None
            tot = tot + n * k
        return tot
    return None


def _log_mgf_pl_masses(curve: Any, t: np.ndarray, finite: bool = False) -> np.ndarray:
    """log Σ_j q_j e^{θ ℓ_j} over a piecewise-linear curve's masses (no +∞ atom; ``finite``:
    over its finite losses only, the finite part of a curve with one), rounded up:
    the losses raised by their rounding where they were computed from masses
    (:meth:`fdp.tradeoff.PiecewiseLinear._profile_masses`; e^{θℓ} grows with ℓ for θ > 0), each
    exponent log q_j + θ ℓ_j within 4u(|log q_j| + θ|ℓ_j|), the log-sum-exp within
    4u(|K| + log n + 1)."""
    q, loss = curve._profile_masses()
    keep = (q > 0) & (np.isfinite(loss) if finite else ~np.isneginf(loss))
    if not keep.any():
        return np.full(t.shape, -np.inf)
    lq, ll = np.log(q[keep]), loss[keep]
    # (the Q-masses known to a relative ρ: each at most q/(1 − ρ), rounded up)
    rho = float(curve._mass_rtol)
    charge = -math.log1p(-rho) * (1.0 + 4.0 * UNIT_ROUNDOFF) if rho > 0.0 else 0.0
    return _moment_lse(lq, ll, np.abs(ll), t) + charge


def _moment_lse(lq: np.ndarray, ll: np.ndarray, ll_mag: np.ndarray, t: np.ndarray,
                alt: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """log Σ_j e^{lq_j + θ ll_j} at each θ in t, rounded up: each exponent is within
    4u(|lq_j| + θ m_j), where ``ll_mag`` = m bounds the rounding scale of ll_j (|ll_j| for a
    given loss, |log b_j| + |log p_j| for one computed as their difference), and the
    log-sum-exp within 4u(|K| + log n + 1) (the one place fdp sums exponential moments of
    masses). ``alt``: a second reading (lq, ll, m) of the same outcomes, each term the larger
    of the two at every θ."""
    th = np.asarray(t, dtype=float).reshape(-1)[:, None]
    expo = lq[None, :] + th * ll[None, :]
    mag = np.abs(lq)[None, :] + th * ll_mag[None, :]
    if alt is not None:
        expo = np.maximum(expo, alt[0][None, :] + th * alt[1][None, :])
        mag = np.maximum(mag, np.abs(alt[0])[None, :] + th * alt[2][None, :])
    k = np.logaddexp.reduce(expo, axis=1)
    slack = 4.0 * UNIT_ROUNDOFF * np.max(mag, axis=1)
    out = k + slack + 4.0 * UNIT_ROUNDOFF * (np.abs(k) + math.log(lq.size) + 1.0)
    return out.reshape(np.shape(t))


def _inverse_mgf(f: Any, t: np.ndarray) -> np.ndarray | None:
    """K(θ) of f⁻¹ = T(Q, P) (None if unknown): f itself where f is symmetric in closed form."""
    from .families import Gaussian, Laplace
    from .operations import Mixture, Subsampled
    from .tradeoff import Inverse, PiecewiseLinear

    if isinstance(f, (Gaussian, Laplace, Subsampled)):
        return log_mgf(f, t)
    if isinstance(f, Inverse):  # (f⁻¹)⁻¹ = f
        return log_mgf(f.base, t)
    if isinstance(f, Mixture):
        return log_mgf(Inverse(f), t)
    if isinstance(f, PiecewiseLinear) and f.kind == "exact":
        return log_mgf(f.inverse(), t)
    return None


def _log_mgf_mixture_binomial(base: Any, p: float, t: np.ndarray) -> np.ndarray | None:
    """K(θ) of the Poisson add pair (P, B), B = (1 − p)P + pQ, of a base T(P, Q) whose K_f is
    known at integer orders, rounded up (None if it is not).

    For integer θ, E_B[(dB/dP)^θ] = E_P[(1 − p + p r)^{θ+1}] with r = dQ/dP, and the binomial
    theorem gives Σ_{k=0}^{θ+1} C(θ + 1, k) (1 − p)^{θ+1−k} p^k E_P[r^k], where E_P[r^k] =
    E_Q[r^{k−1}] = e^{K_f(k−1)} for k ≥ 2, E_P[r] ≤ 1 and E_P[1] = 1: a sum of nonnegative
    terms (Mironov, Talwar & Zhang 2019, the binomial expansion of the sampled Gaussian's
    moments). K is convex in θ with K(0) = 0, so a fractional θ takes the chord between its
    integer neighbours (θ K(1) below 1). Each log-term is within 16u of the largest term's size
    (log-gamma, products), and the log-sum-exp within 8u(|K| + log n + 1); both are added."""
    from scipy.special import gammaln

    if p <= 0.0:
        return np.zeros_like(t)
    if not t.size:
        return np.zeros_like(t)
    top = int(math.ceil(float(np.max(t))))
    if top > 10**5:
        return None
    kb = log_mgf(base, np.arange(1.0, top + 1.0))  # K_f(1..top)
    if kb is None:
        return None
    kb = np.concatenate([[0.0, 0.0], np.asarray(kb, dtype=float)])  # E_P[r^k]: k = 0, 1, 2…
    l1p = math.log1p(-p) if p < 1.0 else -math.inf
    lp = math.log(p)

    def k_int(m: int) -> float:
        k = np.arange(m + 2, dtype=float)
        with np.errstate(invalid="ignore"):
            terms = (gammaln(m + 2.0) - gammaln(k + 1.0) - gammaln(m + 2.0 - k)
                     + np.where(k < m + 1, (m + 1 - k) * l1p, 0.0) + k * lp + kb[: m + 2])
        terms = terms[np.isfinite(terms) | (terms > 0)]
        val = float(np.logaddexp.reduce(terms))
        big = float(np.max(np.abs(terms))) if terms.size else 0.0
        return val + 16.0 * UNIT_ROUNDOFF * big + 8.0 * UNIT_ROUNDOFF * (
            abs(val) + math.log(m + 2.0) + 1.0)

    cache: dict[int, float] = {0: 0.0}
    out = np.empty(t.shape)
    for i, x in enumerate(np.ravel(t)):
        lo, hi = math.floor(x), math.ceil(x)
        for m in (lo, hi):
            if m not in cache:
                cache[m] = k_int(m)
        out.flat[i] = cache[lo] if hi == lo else (
            cache[lo] + (x - lo) * (cache[hi] - cache[lo]))
    return out


def _log_mgf_mixture_masses(base: Any, p: float, t: np.ndarray,
                            inverse: bool = False) -> np.ndarray:
    """K(θ) of the Poisson add pair (P, B), B = (1 − p)P + pQ, of an exact discrete base
    T(P, Q) without a +∞ atom, rounded up: E_B[e^{θL}] = Σ_j b_j^{θ+1} p_j^{−θ} over the
    outcomes (b_j = (1 − p)p_j + p q_j; every p_j > 0 as the base has no +∞ atom), at every
    θ > 0; with ``inverse``, of the reversed pair (B, P) (p < 1, so every b_j > 0):
    Σ_j p_j^{θ+1} b_j^{−θ}. Each exponent (θ + 1) log b_j − θ log p_j is within
    4u((θ + 1)|log b_j| + θ|log p_j|) of its value (two logarithms, two products, a
    difference), and the log-sum-exp within 4u(|K| + log n + 1); both are added."""
    pm, qm, _ = base._masses
    keep = (pm > 0) | (qm > 0)
    pm, qm = pm[keep], qm[keep]
    if pm.size == 0:
        return np.zeros_like(t)
    if (pm <= 0).any():  # pragma: no cover - no +∞ atom: every outcome has P-mass
        return np.full(t.shape, np.inf)
    lp = np.log(pm)
    lp_alt = None
    if not inverse:
        # A P-mass below the normal range (a base loss beyond ~708) keeps only a few bits:
        # EpsDelta(745)'s 1/(1 + e^745) = 2.8e-324 is stored as 4.9e-324, its log 0.56 high,
        # and the pair's top loss log b − log p read 743.236 for the exact 743.796, so the
        # bound's ε(1e-20) fell 0.56 below the truth. There the given loss is the authority:
        # p = q e^{−ℓ} with ℓ within its recorded error. log(b^{θ+1} p^{−θ}) is convex in
        # log p, so its largest value over that interval is at one of its two ends: both are
        # read, and the larger term kept (per θ, in _moment_lse)
        _, _, bl = base._masses
        bl, be = bl[keep], base._loss_errs()[keep]
        sub = (pm < MIN_NORMAL) & (qm > 0) & np.isfinite(bl)
        if sub.any():
            with np.errstate(divide="ignore"):
                lqm = np.log(qm)
            lp, lp_alt = (np.where(sub, lqm - (bl + be), lp),
                          np.where(sub, lqm - (bl - be), lp))

    def pair(lp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        with np.errstate(divide="ignore"):
            lb = np.logaddexp(math.log1p(-p) + lp if p < 1.0 else -np.inf,
                              math.log(p) + np.log(qm))
        return (lp, lb) if inverse else (lb, lp)

    lb, lp = pair(lp)
    # b^{θ+1} p^{−θ} = b e^{θ (log b − log p)}: the pair's own masses and losses (outcomes
    # with b = 0 add nothing)
    live = lb > -np.inf
    alt = None
    if lp_alt is not None:
        lb2, lp2 = pair(lp_alt)
        live = live & (lb2 > -np.inf)
        lb2, lp2 = lb2[live], lp2[live]
        alt = (lb2, lb2 - lp2, np.abs(lb2) + np.abs(lp2) + np.abs(lb2 - lp2))
    lb, lp = lb[live], lp[live]
    if not lb.size:
        return np.full(t.shape, -np.inf)
    ll = lb - lp
    # (the masses known to a relative ρ (the P-masses to ρ + the swapped charge): each term's
    # b_j^{θ+1} p_j^{−θ} within a factor (1 − ρ)^{−(|θ + 1| + |θ|)}, charged up as
    # _log_mgf_pl_masses does the base's)
    rho = float(base._mass_rtol) + float(base._swapped_p_rtol())
    out = _moment_lse(lb, ll, np.abs(lb) + np.abs(lp) + np.abs(ll), t, alt)
    if rho > 0.0:
        out = out - math.log1p(-rho) * (np.abs(t + 1.0) + np.abs(t)) * (1.0 + 8.0 * UNIT_ROUNDOFF)
    return out


def _remove_taylor(p: float, mu: float, t: np.ndarray) -> np.ndarray:
    """K(θ) of the remove pair (p G_μ + (1 − p) Id)⁻¹ = T((1 − p)Q + pP, Q), to second order.

    E_B[e^{θL}] = E_Q[g(R)] with R = dP/dQ and g(r) = (1 − p + p r)^{−θ}. Taylor at r = 1 with
    the Lagrange remainder: g(1) = 1, g'(1) = −θp, E_Q[R − 1] = 0, and g''(r) =
    θ(θ + 1) p² (1 − p + p r)^{−θ−2} is largest at r = 0; E_Q[(R − 1)²] = χ²(P‖Q) = e^{μ²} − 1
    for P = N(0, 1), Q = N(μ, 1). So K(θ) ≤ log(1 + θ(θ + 1)/2 · p² (1 − p)^{−θ−2} (e^{μ²} − 1)),
    O(p²) like the add pair's (the convexity bound log(1 − p + p e^{θ(θ+1)μ²/2}) is O(p)).
    Rounded up."""
    with np.errstate(over="ignore"):
        lx = (np.log(t * (t + 1.0) / 2.0) + 2.0 * math.log(p) - (t + 2.0) * math.log1p(-p)
              + (mu * mu + math.log(-math.expm1(-mu * mu)) if mu > 0 else -np.inf))
        out = np.logaddexp(0.0, lx)
    return out * (1.0 + 1e-12) + 1e-300


def _hull_moment(k_f: np.ndarray, k_g: np.ndarray) -> np.ndarray:
    """An upper bound on K(θ) of min{f, g}** from K_f(θ) and K_g(θ): log(e^{K_f} + e^{K_g} − 1).

    E_B[e^{θL}] = E_A[φ(dB/dA)] with φ(x) = x^{θ+1} is an f-divergence, and for convex φ
    (Liese & Vajda 2006: f-divergences as integrals of statistical informations)
    φ(x) = φ(1) + φ'(1)(x − 1) +
    ∫_0^∞ φ''(γ) [(x − γ)₊ − (1 − γ)₊] dγ + (the γ < 1 part written with (γ − x)₊), so that
    D_φ = φ(1) + ∫ φ''(γ) [δ(log γ) − (1 − γ)₊] dγ, where δ(ε) = E_A[(dB/dA − e^ε)₊] is the
    privacy profile extended to ε < 0 (δ ≥ (1 − e^ε)₊ always). The profile of min{f, g}** is
    max(δ_f, δ_g) at every ε (convex conjugates, theory §3/§6), and for a, b ≥ c:
    max(a, b) − c ≤ (a − c) + (b − c); with φ'' ≥ 0 this gives
    D_φ(min{f, g}**) − 1 ≤ (D_φ(f) − 1) + (D_φ(g) − 1)."""
    hi = np.maximum(k_f, k_g)
    lo = np.minimum(k_f, k_g)
    with np.errstate(over="ignore", invalid="ignore"):
        # log(e^hi + e^lo − 1) = hi + log1p(e^{lo−hi} − e^{−hi}), rounded up
        out = hi + np.log1p(np.exp(lo - hi) - np.exp(-hi))
    out = np.where(np.isfinite(hi), out, hi)
    return out * (1.0 + 1e-12) + 1e-300


def _finite_part(curve: Any, t: np.ndarray) -> tuple[float, np.ndarray] | None:
    """(a, K): an upper bound a on the pair's Q-mass at loss +∞ and upper bounds K(θ) on
    log E_B[e^{θL}; L < ∞], the moments of its finite part (all of them where a = 0), or None
    where unknown. f_{ε,δ}, f ⊗ f_{0,δ} (:class:`~fdp.composition.DeltaMix`) and discrete
    curves with a +∞ atom have a > 0, and their finite part is (1 − δ) times a pair without
    one (its moments are at most that pair's)."""
    from .composition import DeltaMix
    from .tradeoff import PiecewiseLinear

    if isinstance(curve, DeltaMix) and curve.delta_ > 0.0:
        inner = _finite_part(curve.base, t)
        if inner is None:
            return None
        # (a = δ + (1 − δ) a_base ≤ δ + a_base, rounded up)
        return min(1.0, (curve.delta_ + inner[0]) * (1.0 + 4.0 * UNIT_ROUNDOFF)), inner[1]
    if isinstance(curve, PiecewiseLinear) and curve.kind == "exact" and curve._mass_qinf > 0:
        q, loss = curve._profile_masses()
        atom = curve._mass_qinf + float(q[np.isposinf(loss)].sum())
        atom = min(1.0, atom * (1.0 + 4.0 * UNIT_ROUNDOFF * (q.size + 2)))
        return atom, _log_mgf_pl_masses(curve, t, finite=True)
    k = log_mgf(curve, t)
    return None if k is None else (0.0, k)


def _log_c(t: np.ndarray) -> np.ndarray:
    """log c(θ) = −log(1 + θ) + θ log(θ/(1 + θ))."""
    return -np.log1p(t) + t * np.log(t / (1.0 + t))


def delta_bound(k: np.ndarray, eps: Any, thetas: np.ndarray = THETAS) -> np.ndarray:
    """min_θ c(θ) exp(K(θ) − θε) for total K on ``thetas`` (a certified upper bound on δ)."""
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    lc = _log_c(thetas)
    with np.errstate(over="ignore", invalid="ignore"):
        expo = np.min(lc[None, :] + k[None, :] - thetas[None, :] * e[:, None], axis=1)
        out = np.exp(np.minimum(expo * (1 - 1e-12) + 1e-12 * np.abs(expo), 0.0))
    return np.where(np.isnan(out), 1.0, out)


def epsilon_bound(k: np.ndarray, delta: Any, thetas: np.ndarray = THETAS) -> np.ndarray:
    """min_θ (K(θ) + log c(θ) − log δ)/θ, rounded up: ε with the bound ≤ δ (certified)."""
    d = np.atleast_1d(np.asarray(delta, dtype=float))
    lc = _log_c(thetas)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.min((k[None, :] + lc[None, :] - np.log(d)[:, None]) / thetas[None, :], axis=1)
    e = np.where(d <= 0.0, np.inf, e)
    return np.maximum(e + 1e-12 * (np.abs(e) + 1.0), 0.0)


def max_loss(curve: Any) -> float:
    """An upper bound on the largest privacy loss log(dB/dA) of the pair, or ∞ (unknown, or a
    +∞ atom). δ(ε) = 0 for ε at or above it, and losses add under composition."""
    from .composition import DeltaMix
    from .families import EpsDelta, Laplace
    from .numeric import Bracketed
    from .operations import Mixture
    from .tradeoff import Inverse, PiecewiseLinear

    out = math.inf
    if isinstance(curve, Laplace):
        out = curve.mu
    elif isinstance(curve, EpsDelta):
        out = curve.eps if curve.delta_ == 0.0 else math.inf
    elif isinstance(curve, Mixture):
        m = max_loss(curve.base)  # ℓ ↦ log(1 − p + p e^ℓ) is increasing
        if curve.p == 0.0:
            out = 0.0
        elif math.isfinite(m):
            lp1 = math.log1p(-curve.p) if curve.p < 1.0 else -math.inf
            out = float(np.logaddexp(lp1, math.log(curve.p) + m))
            # (its rounding: a few ulps of the terms)
            out += 4.0 * UNIT_ROUNDOFF * ((abs(lp1) if curve.p < 1.0 else 0.0)
                                          + abs(math.log(curve.p)) + abs(m) + abs(out))
    elif (isinstance(curve, Inverse) and isinstance(curve.base, Mixture)
          and 0.0 < curve.base.p < 1.0):
        out = -math.log1p(-curve.base.p)  # (1 − p) Q + p P ≥ (1 − p) Q: loss ≤ log(1/(1 − p))
    elif isinstance(curve, DeltaMix) and curve.delta_ == 0.0:
        out = max_loss(curve.base)
    elif isinstance(curve, PiecewiseLinear) and curve.kind == "exact":
        if curve._mass_qinf == 0.0:
            p, q, loss = curve._masses
            fin = (q > 0) & np.isfinite(loss)
            if fin.any():
                # a loss log q − log p is known to a few ulps of its two logs (cancellation: a
                # loss of 1e-3 from logs of 0.07 is off by 3e-14 relative), charged up
                with np.errstate(divide="ignore"):
                    lq, lp = np.abs(np.log(q[fin])), np.abs(np.log(p[fin]))
                mar = 4.0 * UNIT_ROUNDOFF * (np.where(np.isfinite(lq), lq, 0.0)
                                             + np.where(np.isfinite(lp), lp, 0.0)
                                             + np.abs(loss[fin]))
                # and the losses' own recorded errors (given ones, the masses' mass_rtol, an
                # exact product's bias): without them a curve whose given loss was 1e-7 below
                # its masses' (loss_err 2e-7) composed read ε(1e-9) ≤ its computed top loss,
                # 1e-7 below the exact one (tests/test_engine_loss_err.py)
                mar = mar + curve._loss_errs()[fin]
                out = float(np.max(loss[fin] + mar))
            else:
                out = 0.0
    elif isinstance(curve, Bracketed):
        items = curve.info.get("items")
        if items:
            out = sum(n * max_loss(c) for c, n in items)
    return out * (1.0 + 8.0 * UNIT_ROUNDOFF) + 1e-300 if math.isfinite(out) and out > 0 else out


def composed_max_loss(items: list[tuple[Any, int]]) -> float:
    """An upper bound on the largest loss of Π fᵢ^{⊗nᵢ}: Σ nᵢ :func:`max_loss` (fᵢ), rounded
    up (losses add under composition), or ∞. The composition's δ(ε) is 0 for ε at or above it.
    """
    top = sum(n * max_loss(c) for c, n in items)
    return top * (1.0 + 4.0 * UNIT_ROUNDOFF) if top > 0 else top


def gaussian_shift(items: list[tuple[Any, int]]) -> tuple[float, float] | None:
    """(M, S) for a composition of Gaussians G_{μ_i} (n_i times) and steps whose losses are
    bounded (:func:`max_loss`), or None: M = √(Σ n_i μ_i²) rounded up (G_{μ_1} ⊗ G_{μ_2} =
    G_{√(μ_1² + μ_2²)}, DRS Cor 3.3) and S = :func:`composed_max_loss` of the other steps.

    **Claim.** δ(ε) ≤ δ_M(ε − S), so ε(δ) ≤ ε_M(δ) + S. **Proof.** With ν the Q-distribution
    of the other steps' summed loss L_B, δ_{A⊗B}(ε) = ∫ δ_A(ε − l) dν(l) (the bilinear form of
    :mod:`fdp.pld`); δ_A is non-increasing and L_B ≤ S ν-almost surely. ∎ Far in the tail it
    is much tighter than the moment bound, whose Gaussian part is loose by the polynomial
    factor: ``compose(Gaussian(40), Laplace(0.5), repeat=2)`` read ε(1e-100) ≤ 3429.27 for a
    truth within [2802.56, 2803.56]."""
    from .families import Gaussian

    gauss = [(c, n) for c, n in items if isinstance(c, Gaussian)]
    rest = [(c, n) for c, n in items if not isinstance(c, Gaussian)]
    if not gauss or not rest:
        return None
    top = composed_max_loss(rest)
    sq = math.fsum(n * c.mu * c.mu for c, n in gauss)
    if not (math.isfinite(top) and math.isfinite(sq) and sq > 0.0):
        return None
    m = math.sqrt(sq) * (1.0 + 4.0 * UNIT_ROUNDOFF * (len(gauss) + 2))
    return m, top


class TailBound:
    """The tail bound of a composition: total K(θ) on the θ grid, with δ and ε queries, and
    the composition's largest loss where every component's is known (δ = 0 beyond it).

    ``atom``: the composition's Q-mass at loss +∞ (rounded up), where some component has one;
    K is then the moments of the finite part, and δ(ε) ≤ atom + c(θ) e^{−θε + K(θ)}:
    δ(ε) = Q[L = ∞] + E_Q[(1 − e^{ε − L})₊; L < ∞], and the finite part's moments multiply
    (L is finite iff every step's is)."""

    def __init__(self, k: np.ndarray, thetas: np.ndarray = THETAS, top: float = math.inf,
                 atom: float = 0.0, shift: tuple[float, float] | None = None) -> None:
        fin = np.isfinite(k)
        self.k = k[fin]
        self.thetas = thetas[fin]
        self.top = float(top)
        self.atom = float(atom)
        #: (M, S) where the composition is G_M ⊗ (steps whose losses are at most S in all):
        #: then δ(ε) ≤ δ_M(ε − S) (:func:`gaussian_shift`)
        self.shift = shift

    @classmethod
    def of_items(cls, items: list[tuple[Any, int]],
                 thetas: np.ndarray = THETAS) -> TailBound | None:
        """The bound for Π fᵢ^{⊗nᵢ}, or None if some component's moments are unknown."""
        tot = np.zeros(thetas.size)
        log_none = 0.0  # log Q[no step at +∞] = Σ nᵢ log(1 − aᵢ)
        for c, n in items:
            part = _finite_part(c, thetas)
            if part is None:
                return None
            a, kc = part
            tot = tot + n * kc
            if a > 0.0:
                log_none += n * math.log1p(-a) if a < 1.0 else -math.inf
        if not np.isfinite(tot).any():
            return None
        # 1 − Π(1 − aᵢ)^{nᵢ}, rounded up (log1p, the products, the sum and expm1 each within a
        # few u relative, as the engine's +∞ atom)
        atom = min(1.0, -math.expm1(log_none) * (1.0 + 2.0 * UNIT_ROUNDOFF * (len(items) + 6))
                   ) if log_none < 0.0 else 0.0
        return cls(tot, thetas, top=composed_max_loss(items), atom=atom,
                   shift=gaussian_shift(items))

    @staticmethod
    def lazy(items: list[tuple[Any, int]], thetas: np.ndarray = THETAS) -> _LazyTailBound:
        """:meth:`of_items`, computed on first use (the moment bounds of a subsampled Gaussian
        cost ~8 ms, more than a bulk query)."""
        return _LazyTailBound(items, thetas)

    def delta(self, eps: np.ndarray) -> np.ndarray:
        d = delta_bound(self.k, eps, self.thetas)
        if self.shift is not None:
            m, top = self.shift
            with np.errstate(invalid="ignore"):  # (ε − S rounded down: δ_M falls in ε)
                e = np.nextafter(np.asarray(eps, dtype=float) - top, -np.inf)
            d = np.minimum(d, np.asarray(gdp.delta(m, e), dtype=float).reshape(np.shape(d)))
        at_top = np.asarray(eps, dtype=float) >= self.top  # (the finite part's δ is 0 there)
        if self.atom > 0.0:  # (δ never falls below the atom, not even at ε = ∞)
            up = 1.0 + 2.0 * UNIT_ROUNDOFF
            return np.where(at_top, min(self.atom * up, 1.0), np.minimum((d + self.atom) * up,
                                                                          1.0))
        return np.where(at_top, 0.0, d)

    def epsilon(self, delta: np.ndarray) -> np.ndarray:
        d = np.asarray(delta, dtype=float)
        if self.atom > 0.0:  # (the finite part must stay below δ − atom, rounded down)
            d = np.maximum((d - self.atom) * (1.0 - 2.0 * UNIT_ROUNDOFF), 0.0)
        e = np.minimum(epsilon_bound(self.k, d, self.thetas), self.top)
        if self.shift is not None:
            m, top = self.shift
            g = np.asarray(gdp.epsilon(m, d), dtype=float).reshape(np.shape(e))
            e = np.minimum(e, (g + top) * (1.0 + 2.0 * UNIT_ROUNDOFF))
        return e


class _LazyTailBound:
    """A :class:`TailBound` built from ``items`` on first use; where the moments are unknown its
    δ is 1 and its ε is ∞ (no bound). Picklable (it holds the items until built)."""

    def __init__(self, items: list[tuple[Any, int]], thetas: np.ndarray = THETAS) -> None:
        self._items: list[tuple[Any, int]] | None = list(items)
        self._thetas = thetas
        self._bound: TailBound | None = None
        self._top: float | None = None

    def _get(self) -> TailBound | None:
        if self._items is not None:
            _ = self.top
            self._bound, self._items = TailBound.of_items(self._items, self._thetas), None
        return self._bound

    @property
    def top(self) -> float:
        """The composition's largest loss (:func:`composed_max_loss`, ∞ where unknown; without
        the moments, which cost more)."""
        if self._top is None:
            self._top = (composed_max_loss(self._items) if self._items is not None
                         else math.inf)
        return self._top

    def delta(self, eps: np.ndarray) -> np.ndarray:
        b = self._get()
        return np.ones(np.shape(eps)) if b is None else b.delta(eps)

    def epsilon(self, delta: np.ndarray) -> np.ndarray:
        b = self._get()
        return np.full(np.shape(delta), np.inf) if b is None else b.epsilon(delta)


# ------------------------------------------------------------------ component lower bounds
#: the relative margin a closed form's optimistic ε or δ reading is lowered by (for its last
#: roundings, a few ulps: G_μ, L_μ and their Poisson mixtures)
COMPONENT_MARGIN = 1e-9


def _components(items: list[tuple[Any, int]]) -> list[Any]:
    """The curves the composition of ``items`` lies below: each item's curve, and the Gaussian
    items' product G_{√Σ nμ²} (closed form, DRS Cor 3.3)."""
    from .families import Gaussian

    out = [c for c, n in items if n > 0]
    mu2 = sum(n * float(c.mu) * float(c.mu) for c, n in items if isinstance(c, Gaussian) and n > 0)
    if mu2 > 0.0:
        out.append(Gaussian(math.sqrt(mu2)))
    return out


def _optimistic_reading(c: Any, what: str, x: np.ndarray) -> np.ndarray | None:
    """A certified lower bound on c's ε(δ) (``what`` = "epsilon") or δ(ε) ("delta") at ``x``,
    or None where c has no such reading: a bracket's own lower end, a piecewise-linear curve's
    optimistic reading (``_as_upper``: masses and losses rounded toward more privacy), and the
    closed forms G_μ, L_μ and their Poisson mixtures p f + (1 − p) Id read on their optimistic
    side (``_as_upper``; for a mixture also ε' = log(1 + (e^ε − 1)/p) rounded up), lowered by
    :data:`COMPONENT_MARGIN` for their last roundings (and 4 subnormal ulps for δ). Other exact
    curves are skipped: a conservative reading can sit far above the truth where the curve is
    flat (a PL curve's charged rounding near its largest loss, a mixture's ε' rounded down)."""
    from .families import Gaussian, Laplace
    from .numeric import Bracketed
    from .operations import Mixture
    from .tradeoff import PiecewiseLinear

    if isinstance(c, Bracketed):
        b = c.epsilon_bracket(x) if what == "epsilon" else c.delta_bracket(x)
        return np.asarray(b[0], dtype=float).reshape(x.shape)
    if isinstance(c, PiecewiseLinear):
        if c.kind != "exact":
            return None
        up = c._as_upper()
        return np.asarray(up.epsilon(x) if what == "epsilon" else up.delta(x),
                          dtype=float).reshape(x.shape)
    closed = (Gaussian, Laplace)
    if isinstance(c, closed):
        c = c._as_upper()
    elif isinstance(c, Mixture) and isinstance(c.base, closed):
        # (the optimistic mixture: f's optimistic reading at ε' rounded up; from the
        # conservative one, whose ε' is rounded down, the δ of Mixture(L_1, 0.5) 1e-14 below
        # its largest loss read 22 % above the truth, a helper's hunt)
        c = Mixture(c.base._as_upper(), c.p)
        c._optimistic = True
    else:
        return None
    v = np.asarray(c.epsilon(x) if what == "epsilon" else c.delta(x), dtype=float)
    v = np.where(np.isnan(v), 0.0, v).reshape(x.shape)
    if what == "epsilon":
        return np.where(np.isinf(v), v, v * (1.0 - COMPONENT_MARGIN))
    return np.maximum(v * (1.0 - COMPONENT_MARGIN) - 4.0 * TINY, 0.0)


def component_epsilon_lower(items: list[tuple[Any, int]], delta: Any) -> np.ndarray:
    """A certified lower bound on ε(δ) of Π f_i^{⊗n_i}: max_i ε_{f_i}(δ).

    Composing more mechanisms only lowers a trade-off curve (f ⊗ g ≤ f: dropping the second
    output is a post-processing of both product distributions, DRS Def 3.1 and the
    post-processing property of trade-off functions), so δ of the composition at ε is at
    least each component's, and its ε(δ) at least theirs. Each component's ε is a certified
    lower reading (:func:`_optimistic_reading`). Far in the tail this beats the numeric grid,
    whose lower end stops at the largest loss it holds: ``dpsgd(1.1, 256/60000, 14063)`` at
    δ = 1e-300 had [9.78, 61.75]; one step alone gives ε ≥ 28.4.

    Examples
    --------
    >>> import fdp
    >>> lo = component_epsilon_lower([(fdp.Gaussian(1.0), 4), (fdp.Laplace(1.0), 2)], 1e-10)
    >>> e = fdp.Gaussian(2.0).epsilon(1e-10)  # (the Gaussian items' product G_2)
    >>> bool(e * (1 - 1e-8) < lo[0] <= e)
    True
    """
    return _component_max(items, "epsilon", delta)


def component_delta_lower(items: list[tuple[Any, int]], eps: Any) -> np.ndarray:
    """A certified lower bound on δ(ε) of Π f_i^{⊗n_i}: max_i δ_{f_i}(ε) (see
    :func:`component_epsilon_lower`).

    Examples
    --------
    >>> import fdp
    >>> lo = component_delta_lower([(fdp.Laplace(1.0), 3)], 0.5)
    >>> bool(0 < lo[0] <= fdp.Laplace(1.0).delta(0.5))
    True
    """
    return _component_max(items, "delta", eps)


def _component_max(items: list[tuple[Any, int]], what: str, at: Any) -> np.ndarray:
    """The largest certified lower reading (``what``: "epsilon" or "delta") over the
    components of ``items`` (0 where none has one)."""
    x = np.atleast_1d(np.asarray(at, dtype=float))
    best = np.zeros(x.shape)
    for c in _components(items):
        lo = _optimistic_reading(c, what, x)
        if lo is not None:
            best = np.maximum(best, np.where(np.isnan(lo), 0.0, lo))
    return best


# ------------------------------------------------------------------ sampled-count bounds
#: the sampled-count bounds are attached to Poisson-subsampled Gaussian compositions whose
#: expected number of sampled steps n·p is at most this (beyond it they are far looser than the
#: grid in every regime measured, and their cost grows with n·p)
COUNT_BOUND_MAX_MEAN = 4.0


def _bisect(pred: Any, lo: float, hi: float) -> tuple[float, float]:
    """(lo, hi) with pred false at lo and true at hi (as given), narrowed by bisection to a
    relative 1e-12 of hi; pred must be monotone (false, then true). (At 1e-9 an ε of 5e7 was
    left 0.037 above its threshold: ten more steps make that 4e-5.)"""
    for _ in range(200):
        if hi - lo <= 1e-12 * (1.0 + hi):
            break
        mid = 0.5 * (lo + hi)
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return lo, hi


class SampledCountBound:
    r"""Closed-form certified bounds on δ(ε) of the n-fold Poisson-subsampled Gaussian, add pair.

    The pair is A = N(0, I_n), B = ⊗ (1 − p) N(0, 1) + p N(μ, 1) (the curve
    (p G_μ + (1 − p) Id)^{⊗n}). Write B = w₀ A + (1 − w₀) B', with w_k = C(n, k) p^k (1 − p)^{n−k}
    the probability that k steps sample the example and B' the law given k ≥ 1. Then, exactly,

        δ(ε) = H_γ(B‖A) = (1 − w₀) H_{γ'}(B'‖A),   γ = e^ε,  γ' = (γ − w₀)/(1 − w₀),

    since w₀A + (1 − w₀)B' − γA = (1 − w₀)(B' − γ'A) (the identity behind advanced joint
    convexity; Balle, Barthe & Gaboardi, "Privacy amplification by subsampling", NeurIPS 2018,
    Thm 2). B' is a mixture of N(μ 1_S, I) over the sampled sets S, and the hockey-stick
    divergence is jointly convex, so with ε' = log γ' = log1p(expm1(ε)/(1 − w₀)):

        δ(ε) ≤ Σ_{k ≥ 1} w_k δ_{G_{μ√k}}(ε')                                      (upper)

    (N(μ 1_S, I) against N(0, I) is G_{μ√|S|}); its k = 1 term is tightened by splitting off
    the largest step's ratio (:meth:`_log_one_sampled`, up to log n in ε). Any event E gives
    δ(ε) ≥ B(E) − e^ε A(E); with
    E = {max_t x_t > c}, B(E) = 1 − ((1 − p)Φ(c) + pΦ(c − μ))^n and A(E) = 1 − Φ(c)^n:

        δ(ε) ≥ max_c  B(E_c) − e^ε A(E_c)                                          (lower)

    Both are certified (rounded outward) and tight when the example is rarely sampled and each
    sampled step nearly reveals it (large μ, n·p ≪ 1: at σ = 0.1, p = 1e-12, T = 1000 the
    engine's grid cannot resolve the rare loss and its bracket of ε(1e-10) was (0, 44760); these
    give [34.245946, 34.245948] around the quadrature's 34.2459463), and loose elsewhere (the
    subsampling then hides each step, which joint convexity gives away); an engine result takes
    the best of them and its grid. ε(δ) is found by bisection on the monotone bounds, ending on the
    certified side. The sum is cut at K with a Chernoff bound on the binomial tail P(k > K)
    added in full.

    Examples
    --------
    >>> b = SampledCountBound(10.0, 1e-12, 1000)
    >>> lo, hi = float(b.epsilon_lower(1e-10)[0]), float(b.epsilon_upper(1e-10)[0])
    >>> bool(30 < lo < hi < 45)
    True
    """

    name = "sampled-count bound"

    def __init__(self, mu: float, p: float, n: int) -> None:
        if not (mu > 0 and 0.0 < p < 1.0 and n >= 1):
            raise ValueError(f"need mu > 0, 0 < p < 1 and n ≥ 1; got mu={mu}, p={p}, n={n}")
        self.mu, self.p, self.n = float(mu), float(p), int(n)
        y = n * math.log1p(-p)  # log w₀
        self._m1_up = -math.expm1(y) * (1.0 + 1e-13)  # 1 − w₀, rounded up
        self._w0 = math.exp(y)
        self._lp, self._l1p = math.log(p), math.log1p(-p)

    @classmethod
    def of_items(cls, items: list[tuple[Any, int]]) -> SampledCountBound | None:
        """The bounds for [(p G_μ + (1 − p) Id, n)] with n·p ≤ :data:`COUNT_BOUND_MAX_MEAN`,
        else None."""
        from .families import Gaussian
        from .operations import Mixture

        if len(items) != 1:
            return _DominatedCountBound.of_items(items)  # type: ignore[return-value]
        c, n = items[0]
        if not (isinstance(c, Mixture) and isinstance(c.base, Gaussian)):
            return None
        p, mu = float(c.p), float(c.base.mu)
        if not (0.0 < p < 1.0 and mu > 0.0) or n * p > COUNT_BOUND_MAX_MEAN:
            return None
        return cls(mu, p, int(n))

    # -- the upper bound
    def _log_tail(self, k: int) -> float:
        """log of a bound on P(count > k) (Chernoff: exp(−n KL((k+1)/n ‖ p))), rounded up."""
        n, a = self.n, k + 1
        if a > n:
            return -math.inf
        if a <= n * self.p:
            return 0.0
        t1 = a * (math.log(a / n) - self._lp)
        t2 = (n - a) * (math.log1p(-a / n) - self._l1p) if a < n else 0.0
        return min(-(t1 + t2) + 1e-12 * (abs(t1) + abs(t2)) + 1e-12, 0.0)

    def _cut(self, floor: float) -> int:
        """The least K ≥ 1 whose tail bound is at most ``floor`` (at most n)."""
        lf = math.log(floor) if floor > 0 else -745.0
        k = max(1, int(math.ceil(self.n * self.p)))
        while k < self.n and self._log_tail(k) > lf:
            k = k + 1 if k < 64 else int(k * 1.25)
        return min(k, self.n)

    def _eps_prime_down(self, e: float) -> float:
        """ε' = log1p(expm1(ε)/(1 − w₀)) rounded down (a smaller ε' gives a larger bound)."""
        if e <= 0.0:
            return 0.0
        if e < 1.0:
            out = math.log1p(math.expm1(e) / self._m1_up)
        else:  # log(e^ε − w₀) − log(1 − w₀), without overflow (expm1(ε)/(1 − w₀) can)
            out = e - math.log(self._m1_up) + math.log1p(-self._w0 * math.exp(-e))
        return max(out * (1.0 - 1e-13) - 1e-300, 0.0)

    def _upper1(self, e: float, floor: float) -> float:
        from scipy.special import gammaln

        from .gdp import log_delta

        if e < 0.0:
            return 1.0
        k_max = self._cut(floor)
        k = np.arange(1, k_max + 1, dtype=float)
        n = float(self.n)
        parts = (gammaln(n + 1.0), gammaln(k + 1.0), gammaln(n - k + 1.0), k * self._lp,
                 (n - k) * self._l1p)
        lw = parts[0] - parts[1] - parts[2] + parts[3] + parts[4]
        lw = lw + 64.0 * UNIT_ROUNDOFF * sum(np.abs(x) for x in parts) + 1e-13
        mus = self.mu * np.sqrt(k) * (1.0 + 4.0 * UNIT_ROUNDOFF)  # δ_G grows with μ
        ep = self._eps_prime_down(e)
        ld = np.asarray(log_delta(mus, ep), dtype=float)
        ld[0] = min(ld[0], self._log_one_sampled(ep))
        x = lw + ld
        top = float(np.max(x))
        if top == -math.inf:
            tot = 0.0
        else:
            tot = math.exp(top + math.log(float(np.exp(x - top).sum()))) * (1.0 + 1e-12)
        return min(1.0, tot + math.exp(self._log_tail(k_max)) + TINY)

    def _log_one_sampled(self, ep: float) -> float:
        r"""log of an upper bound on H_{γ'}(B'₁‖A), γ' = e^{ε'}, for the law B'₁ given one
        sampled step (uniform over the n steps): better than δ_{G_μ}(ε') when the sampled
        step's loss alone decides (it gains up to log n in ε).

        With a_t = e^{L_t}/n (L_t = μx_t − μ²/2, iid under A), B'₁'s ratio is Σ a_t. Split off
        the largest: for any b, (X + Y − γ')₊ ≤ (X − (γ' − b))₊ + (Y − b)₊, with
        X = max a_t ≤ Σ_t (a_t − ·)₊-wise, so E(X − c)₊ ≤ δ_{G_μ}(log(n c)). The rest
        Y ≤ Y_s + Z with Y_s = Σ a_t 1{a_t ≤ m/n} and Z the terms above m/n other than the
        largest; (y − b)₊ ≤ y²/(4b), E Y_s² ≤ e^{μ²} Φ((log m − 3μ²/2)/μ)/n + 1, and
        E Z ≤ (n − 1) Q(L > log m) A(L > log m) (a term above m/n is not the largest only if
        another one is above m/n too; the coordinates are independent). So

            H ≤ δ_{G_μ}(log n + log(γ' − b)) + (e^{μ²}Φ((log m − 3μ²/2)/μ)/n + 1)/(4b)
                + (n − 1) Φ̄((log m − μ²/2)/μ) Φ̄((log m + μ²/2)/μ),

        minimized over b = βγ' and m on small grids (every choice is a bound), rounded up."""
        from scipy.special import log_ndtr

        from .gdp import log_delta

        mu, n = self.mu, float(self.n)
        plain = float(log_delta(mu * (1.0 + 4.0 * UNIT_ROUNDOFF), ep))
        if self.n < 2 or ep <= 0.0 or ep == math.inf:  # (at ε' = ∞ the split reads ∞ − ∞)
            return plain
        ln = math.log(n)
        lm = np.linspace(-mu * mu / 2.0, max(1.5 * mu * mu + 5.0 * mu, ep + ln + 5.0), 96)
        with np.errstate(divide="ignore", over="ignore", under="ignore"):
            t3 = (math.log(n - 1.0) + log_ndtr(-(lm - mu * mu / 2.0) / mu)
                  + log_ndtr(-(lm + mu * mu / 2.0) / mu))
            sq = np.logaddexp(-ln + mu * mu + log_ndtr((lm - 1.5 * mu * mu) / mu), 0.0)
        best = plain
        for beta in (0.5, 0.2, 0.1, 0.03, 1e-2, 1e-3, 1e-4, 1e-6):
            lb = ep + math.log(beta)
            thr = ln + ep + math.log1p(-beta)
            t1 = float(log_delta(mu * (1.0 + 4.0 * UNIT_ROUNDOFF),
                                 thr - 1e-13 * (abs(thr) + 1.0)))
            tot = np.logaddexp(np.logaddexp(t1, sq - math.log(4.0) - lb), t3)
            cand = float(np.min(tot))
            cand += 1e-12 * (1.0 + abs(cand))  # (the terms' rounding, generously)
            best = min(best, cand)
        return best

    def delta_upper(self, eps: Any, floor: Any = 0.0) -> np.ndarray:
        """Certified upper bounds on δ(ε); the binomial sum is cut where its tail is at most
        ``floor`` (e.g. a small fraction of a δ already known), and that tail added."""
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        f = np.broadcast_to(np.asarray(floor, dtype=float), e.shape)
        return np.array([self._upper1(float(a), float(b)) for a, b in zip(e, f, strict=True)])

    def epsilon_upper(self, delta: Any, hint: Any = math.inf) -> np.ndarray:
        """Certified upper bounds on ε(δ) (∞ where this bound gives none below ``hint``, a
        certified ε known already: the bound is only searched below it)."""
        d = np.atleast_1d(np.asarray(delta, dtype=float))
        h = np.broadcast_to(np.asarray(hint, dtype=float), d.shape)
        return np.array([self._eps_up1(float(a), float(b)) for a, b in zip(d, h, strict=True)])

    def _eps_up1(self, d: float, hint: float) -> float:
        if d >= 1.0:
            return 0.0
        if d <= 0.0:
            return math.inf
        floor = 1e-4 * d

        def ok(e: float) -> bool:
            return self._upper1(e, floor) <= d

        if ok(0.0):
            return 0.0
        hi = hint if math.isfinite(hint) else 1.0
        if math.isfinite(hint):
            if not ok(hi):
                return math.inf
        else:
            while not ok(hi):
                hi *= 2.0
                if hi > 1e9:  # (σ = 1e-3, p = 0.01, T = 100: ε(1e-5) ≈ 3.5e6)
                    return math.inf
        return _bisect(ok, 0.0, hi)[1]

    # -- the lower bound
    def _lower1(self, e: float) -> float:
        """max_c B(E_c) − e^ε A(E_c), rounded down (0 where no c gives a positive value)."""
        if e < 0.0 or not math.isfinite(e):
            return 0.0
        c0 = max(0.0, (e - self._lp) / self.mu + self.mu / 2.0)
        grid = np.linspace(-5.0, c0 + 40.0, 1001)
        best, at = self._lower_on(grid, e)
        step = grid[1] - grid[0]
        for _ in range(2):  # two finer grids around the best threshold so far
            fine = np.linspace(at - 2.0 * step, at + 2.0 * step, 201)
            step = fine[1] - fine[0]
            val, c = self._lower_on(fine, e)
            if val > best:
                best, at = val, c
        return best

    def _lower_on(self, c: np.ndarray, e: float) -> tuple[float, float]:
        """The largest rounded-down B(E_c) − e^ε A(E_c) over the thresholds ``c``, and its c.

        In logs throughout (A(E) underflows long before e^ε A(E) does: with A(E) read as 0 the
        bound at ε = 800 read 8e-18 for a true 4e-36): B − A = Φ(c)^n (1 − (1 − D/Φ(c))^n) with
        D = p(Φ(c) − Φ(c − μ)) = B(x_t > c) − A(x_t > c), so that nothing cancels at small ε,
        rounded down (1 − (1 − x)^n ≥ n x (1 − n x/2) where n x is small); A(E) = 1 − Φ(c)^n
        rounded up (≤ n Φ̄(c) where that is small). Round-off: log_ndtr within a few ulps of
        its value, each later step too (1e-12 relative charged on each log)."""
        from scipy.special import log_ndtr

        n, mu, e = float(self.n), self.mu, float(e)
        ln = math.log(n)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            lu, lv = log_ndtr(-c), log_ndtr(mu - c)  # log Φ̄(c), log Φ̄(c − μ)
            lphi, lphim = log_ndtr(c), log_ndtr(c - mu)  # log Φ(c), log Φ(c − μ)
            # log(Φ(c) − Φ(c − μ)) from the two smaller terms of each pair
            big = c > mu / 2.0
            ldiff = np.where(big, lv + np.log1p(-np.exp(lu - lv)),
                             lphi + np.log1p(-np.exp(lphim - lphi)))
            lx = self._lp + ldiff - lphi  # log(D/Φ(c))
            x = np.exp(lx)
            small = n * x < 1e-5
            # log(1 − (1 − x)^n), rounded down
            l1 = np.where(small, ln + lx + np.log1p(-0.5 * n * x),
                          np.log(-np.expm1(n * np.log1p(-np.minimum(x, 1.0)))))
            lba = n * lphi + l1  # log(B − A)
            lba = lba - 1e-12 * (1.0 + np.abs(lba))
            # log A(E) = log(1 − Φ(c)^n), rounded up
            nu = n * np.exp(lu)
            la = np.where(nu < 1e-5, ln + lu, np.log(-np.expm1(n * lphi)))
            la = la + 1e-12 * (1.0 + np.abs(la))
            # (B − A) − (e^ε − 1) A = (B − A)(1 − e^{log(e^ε − 1) + log A − log(B − A)})
            le = (math.log(math.expm1(e)) if 0.0 < e < 30.0 else
                  e + math.log1p(-math.exp(-e)) if e > 0.0 else -math.inf)
            le += 4.0 * UNIT_ROUNDOFF * (abs(le) + 1.0) if e > 0.0 else 0.0
            r = le + la - lba
            val = np.exp(lba) * -np.expm1(np.minimum(r, 0.0)) * (1.0 - 1e-12)
        # (below 1e-290 the values are near or in the subnormal range, where relative rounding
        # bounds fail: no claim there)
        val = np.where(np.isfinite(val) & (r < 0.0) & (val > 1e-290), val, 0.0)
        i = int(np.argmax(val))
        return float(max(val[i], 0.0)), float(c[i])

    def delta_lower(self, eps: Any) -> np.ndarray:
        """Certified lower bounds on δ(ε)."""
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        return np.array([self._lower1(float(a)) for a in e])

    def epsilon_lower(self, delta: Any, hint: Any = 0.0) -> np.ndarray:
        """Certified lower bounds on ε(δ) (0 where this bound gives none above ``hint``, a
        certified lower ε known already)."""
        d = np.atleast_1d(np.asarray(delta, dtype=float))
        h = np.broadcast_to(np.asarray(hint, dtype=float), d.shape)
        return np.array([self._eps_lo1(float(a), float(b)) for a, b in zip(d, h, strict=True)])

    def _eps_lo1(self, d: float, hint: float) -> float:
        if d >= 1.0 or not d > 0.0:
            return 0.0

        def over(e: float) -> bool:  # δ(e) > d in truth, so ε(d) > e
            return self._lower1(e) > d

        lo = max(hint, 0.0) if math.isfinite(hint) else 0.0
        if not over(lo):
            return 0.0
        hi = float(self._eps_up1(d, math.inf))
        if not math.isfinite(hi):
            hi = max(2.0 * lo, 1.0)
            while over(hi):
                hi *= 2.0
                if hi > 1e6:
                    return lo
        return _bisect(lambda e: not over(e), lo, hi)[0]


class _DominatedCountBound:
    """Sampled-count bounds for several Poisson-subsampled Gaussian items
    [(p_j G_{μ_j} + (1 − p_j) Id, n_j)] (an accountant with several noise settings), by
    domination.

    **Claim.** With N = Σ n_j, μ* = max μ_j and p* = max p_j,
    δ_{(p_j, μ_j)}(ε) ≤ δ of (p* G_{μ*} + (1 − p*) Id)^{⊗N} (upper), and for every j,
    δ ≥ δ of (p_j G_{μ_j} + (1 − p_j) Id)^{⊗n_j} (lower). **Proof.** p G_μ + (1 − p) Id is
    non-increasing in μ (G_μ is) and in p (its p-derivative is G_μ − Id ≤ 0), so every step's
    curve is at least the dominating one, and ⊗ is monotone (theory §4): the composition is at
    least (p* G_{μ*} + (1 − p*) Id)^{⊗N}, whose δ is larger. Composing more steps only lowers a
    curve (f ⊗ g ≤ f, post-processing), so the whole composition lies below each item's part,
    whose δ is smaller. ∎ Each side is then a :class:`SampledCountBound` (where its N·p is at
    most :data:`COUNT_BOUND_MAX_MEAN`). Tight where one noise setting decides; elsewhere the
    bracket can be wide (500 steps at σ = 0.1 and 500 at σ = 0.2, p = 1e-12: ε(1e-10) in
    [29.83, 34.25], where the grid's bracket was (0, 44245)).
    """

    name = "sampled-count bound (dominated)"

    def __init__(self, upper: SampledCountBound, lowers: list[SampledCountBound]) -> None:
        self._upper, self._lowers = upper, lowers

    @classmethod
    def of_items(cls, items: list[tuple[Any, int]]) -> _DominatedCountBound | None:
        """The bounds for two or more items that are all p G_μ + (1 − p) Id (0 < p < 1, μ > 0)
        with Σ n · max p ≤ :data:`COUNT_BOUND_MAX_MEAN`, else None."""
        from .families import Gaussian
        from .operations import Mixture

        parts = []
        for c, n in items:
            if not (isinstance(c, Mixture) and isinstance(c.base, Gaussian)):
                return None
            p, mu = float(c.p), float(c.base.mu)
            if not (0.0 < p < 1.0 and mu > 0.0):
                return None
            parts.append((mu, p, int(n)))
        if len(parts) < 2:
            return None
        total = sum(n for _, _, n in parts)
        mu_max, p_max = max(m for m, _, _ in parts), max(p for _, p, _ in parts)
        if total * p_max > COUNT_BOUND_MAX_MEAN:
            return None
        return cls(SampledCountBound(mu_max, p_max, total),
                   [SampledCountBound(m, p, n) for m, p, n in parts])

    def delta_upper(self, eps: Any, floor: Any = 0.0) -> np.ndarray:
        """Certified upper bounds on δ(ε) (the dominating composition's)."""
        return self._upper.delta_upper(eps, floor)

    def epsilon_upper(self, delta: Any, hint: Any = math.inf) -> np.ndarray:
        """Certified upper bounds on ε(δ) (the dominating composition's)."""
        return self._upper.epsilon_upper(delta, hint)

    def delta_lower(self, eps: Any) -> np.ndarray:
        """Certified lower bounds on δ(ε): the largest over the items' own compositions."""
        return np.max([b.delta_lower(eps) for b in self._lowers], axis=0)

    def epsilon_lower(self, delta: Any, hint: Any = 0.0) -> np.ndarray:
        """Certified lower bounds on ε(δ): the largest over the items' own compositions."""
        return np.max([b.epsilon_lower(delta, hint) for b in self._lowers], axis=0)

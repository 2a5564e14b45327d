"""Gaussian approximations: the kl/κ functionals, the Berry–Esseen CLT, Edgeworth, best GDP fit.

In privacy-loss terms (theory §8) with X ~ P and L = log(dQ/dP)(X):
kl(f) = −E[L] = D_KL(P‖Q), κ₂(f) = E[L²], κ₃(f) = E|L|³, κ̄₃(f) = E|L − E L|³
(DRS Sec 3.3 write them as integrals of log|f'| over α ∈ [0, 1]).

- :func:`clt`: DRS Thm 3.5 (Berry–Esseen): for symmetric f_i, with
  μ = 2‖kl‖₁/√(‖κ₂‖₁ − ‖kl‖₂²) and γ = 0.56‖κ̄₃‖₁/(‖κ₂‖₁ − ‖kl‖₂²)^{3/2},
  G_μ(α + γ) − γ ≤ f₁ ⊗ … ⊗ f_n(α) ≤ G_μ(α − γ) + γ. ``approx`` (G_μ) is an approximation;
  ``lower`` and ``upper`` are certified bounds when ``valid`` (γ < 1/2).
- :func:`edgeworth`: the degree-2 Edgeworth expansion of the composed loss under P and Q
  (Zheng, Dong, Long & Su 2020). An approximation, not a bound.
- :func:`gdp_mu`: the smallest μ with f ≥ G_μ at every α, μ* = sup_α [Φ⁻¹(1 − α) − Φ⁻¹(f(α))]
  (theory §3), certified (never below the truth, tails included).
- :func:`gdp_mu_delta`: the smallest μ with f ≥ G_μ ⊗ f_{0,τ}, τ the +∞ loss atom ("μ-GDP except
  with probability τ"), certified from a numeric curve's lower curve alone.
"""

from __future__ import annotations

import math
import sys
import types
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import integrate, special

from ._checks import check_int
from ._numerics import (
    MIN_NORMAL,
    TINY,
    UNIT_ROUNDOFF,
    line_envelope,
    norm_cdf,
    norm_isf,
    norm_sf,
)
from .families import EpsDelta, Gaussian, Identity, Laplace
from .numeric import Approximation, Bracketed
from .tradeoff import Inverse, PiecewiseLinear, TradeOff, _log_cumsum

if TYPE_CHECKING:  # imported lazily at run time (operations and composition import this module)
    from .composition import DeltaMix
    from .operations import Mixture, Subsampled

__all__ = [
    "kl",
    "kappa2",
    "kappa3",
    "kappa3_bar",
    "clt",
    "CLTResult",
    "edgeworth",
    "gdp_mu",
    "gdp_mu_delta",
    "gdp_fit",
    "loss_cumulants",
]

_ABS3_Z = 2.0 * math.sqrt(2.0 / math.pi)  # E|Z|³


def _abs3_normal(m: float, s: float) -> float:
    """E|X|³ for X ~ N(m, s²): (m³ + 3ms²)(1 − 2Φ(−m/s)) + 2s(m² + 2s²)φ(m/s)."""
    if s == 0.0:
        return abs(m) * m * m
    r = m / s
    phi = math.exp(-r * r / 2) / math.sqrt(2 * math.pi)
    # (the φ term is 0 where φ underflows; ∞·0 read NaN at μ = 1e100)
    return (m * m * m + 3 * m * s * s) * (1 - 2 * float(norm_cdf(-r))) + (
        2 * s * (m * m + 2 * s * s) * phi if phi > 0.0 else 0.0)


def _pl_moments(f: PiecewiseLinear) -> tuple[np.ndarray, np.ndarray]:
    """(P-masses, losses) of a PL curve's segments; −∞ losses kept (they make sums infinite)."""
    p, _, loss = f._segments
    keep = p > 0
    return p[keep], loss[keep]


def _expect(f: TradeOff, g: str) -> float:
    """E_P[g(L)] for the named functional, exact for PL curves and closed-form families."""
    if isinstance(f, Bracketed):
        f = f.lower
    if isinstance(f, Approximation):
        f = f.curve
    if isinstance(f, Identity):
        return 0.0
    if isinstance(f, Gaussian):
        # (products, not powers: a float ** overflow raised OverflowError at μ = 1e200)
        mu = float(f.mu)
        m2 = mu * mu
        m, s = -m2 / 2, mu
        return {
            "kl": m2 / 2,
            "k2": m2 + m2 * m2 / 4,
            "k3": _abs3_normal(m, s),
            "k3bar": _ABS3_Z * m2 * mu,
        }[g]
    if isinstance(f, Laplace) and g != "k3bar":
        return _laplace_functional(float(f.mu), g)
    if isinstance(f, Laplace):  # κ̄₃ by quadrature of the loss law (atoms at ±μ, density inside)
        t = f.mu
        k = _laplace_functional(t, "kl")  # so L + kl is centred
        atoms = 0.5 * abs(-t + k) ** 3 + 0.5 * math.exp(-t) * abs(t + k) ** 3
        # L = 2x − μ for x ∈ (0, μ) with density e^{−x}/2
        cont = integrate.quad(
            lambda x: abs(2 * x - t + k) ** 3 * math.exp(-x) / 2,
            0,
            t,
            points=[(t - k) / 2],
            epsabs=0,
            epsrel=1e-13,
            limit=200,
        )[0]
        return atoms + cont
    if isinstance(f, PiecewiseLinear):
        p, loss = _pl_moments(f)
        if np.any(np.isneginf(loss)):
            return math.inf
        return _discrete_functional(p, loss, g)
    # generic: the loss law from the curve's binned privacy-loss masses (an approximation)
    edges = np.linspace(-60, 60, 240001)
    return _discrete_functional(f._loss_bins(edges).p, 0.5 * (edges[:-1] + edges[1:]), g)


def _laplace_functional(t: float, g: str) -> float:
    """kl, κ₂ or κ₃ of L_t in closed form (DRS Sec 3.3), from the loss law under P: −t with
    mass 1/2, t with e^{−t}/2, and 2x − t with density e^{−x}/2 for x ∈ (0, t):
    kl = t + e^{−t} − 1, κ₂ = t² − 2t + 4 − (2t + 4)e^{−t},
    κ₃ = t³ − 3t² + 12t − 24 + 48e^{−t/2} − (3t² + 12t + 24)e^{−t}.

    For t < 1 they cancel (κ₃ is O(t³) from terms of size 24: in float64 it read −1.0 relative
    at t = 1e-5 and 3.5e-12 at 0.1), so they are evaluated in mpmath with 3 log₁₀(1/t) + 30
    digits, and rounded to nearest once."""
    if t == 0.0:
        return 0.0

    def forms(x: Any, exp: Any, expm1: Any) -> Any:
        e1, e2 = exp(-x), exp(-x / 2)
        return {
            "kl": x + expm1(-x),
            "k2": x * x - 2 * x + 4 - (2 * x + 4) * e1,
            "k3": x**3 - 3 * x * x + 12 * x - 24 + 48 * e2 - (3 * x * x + 12 * x + 24) * e1,
        }[g]

    if t >= 1.0:
        return float(forms(t, math.exp, math.expm1))
    import mpmath as mp

    with mp.workdps(30 + 3 * math.ceil(-math.log10(t))):
        return float(forms(mp.mpf(t), mp.exp, mp.expm1))


def _discrete_functional(p: np.ndarray, loss: np.ndarray, g: str) -> float:
    """The functional g of a discrete loss law under P (P-masses p at losses ``loss``)."""
    kl_ = float(-(p * loss).sum())
    if g == "kl":
        return kl_
    if g == "k2":
        return float((p * loss**2).sum())
    if g == "k3":
        return float((p * np.abs(loss) ** 3).sum())
    return float((p * np.abs(loss + kl_) ** 3).sum())


def kl(f: TradeOff) -> float:
    """kl(f) = −∫₀¹ log|f'(x)| dx = D_KL(P‖Q) (DRS Sec 3.3). Exact for the families and PL curves.

    Examples
    --------
    >>> round(kl(Gaussian(1.0)), 12)
    0.5
    >>> e = 0.5; round(kl(EpsDelta(e)), 12) == round(e * math.tanh(e / 2), 12)
    True
    """
    return _expect(f, "kl")


def kappa2(f: TradeOff) -> float:
    """κ₂(f) = ∫₀¹ log²|f'(x)| dx = E_P[L²] (DRS Sec 3.3)."""
    return _expect(f, "k2")


def kappa3(f: TradeOff) -> float:
    """κ₃(f) = ∫₀¹ |log|f'(x)||³ dx = E_P|L|³ (DRS Sec 3.3)."""
    return _expect(f, "k3")


def kappa3_bar(f: TradeOff) -> float:
    """κ̄₃(f) = ∫₀¹ |log|f'(x)| + kl(f)|³ dx = E_P|L − E_P L|³ (DRS Sec 3.3)."""
    return _expect(f, "k3bar")


def _expand(curves: tuple[TradeOff, ...], n: int | None,
            counts: Sequence[int] | None = None) -> list[tuple[TradeOff, int]]:
    if not curves:
        raise ValueError("give at least one curve")
    for i, c in enumerate(curves):
        if not isinstance(c, TradeOff):
            raise TypeError(f"curves[{i}] must be a TradeOff, got {type(c).__name__}")
    if counts is not None:
        if n is not None:
            raise ValueError("give n or counts, not both")
        if len(counts) != len(curves):
            raise ValueError(f"counts must have one entry per curve ({len(curves)}), got "
                             f"{len(counts)}")
        return [(c, check_int(f"counts[{i}]", k, low=1))
                for i, (c, k) in enumerate(zip(curves, counts, strict=True))]
    if n is not None:
        n = check_int("n", n, low=1)
        return [(c, n) for c in curves]
    out: list[tuple[TradeOff, int]] = []
    for c in curves:
        for it in out:
            if it[0] is c:
                out[out.index(it)] = (c, it[1] + 1)
                break
        else:
            out.append((c, 1))
    return out


@dataclass(frozen=True)
class CLTResult:
    """The Berry–Esseen CLT for a composition (DRS Thm 3.5).

    ``approx`` is G_μ (an approximation); ``lower``/``upper`` are certified bounds on the exact
    composition when ``valid``; otherwise they are the trivial bounds 0 and 1 − α, and
    ``message`` says why (asymmetric curves, functionals that are numerical approximations,
    or γ ≥ 1/2).
    """

    mu: float
    gamma: float
    valid: bool
    message: str
    approx: TradeOff
    lower: TradeOff
    upper: TradeOff


def _be_lower(mu: float, gamma: float) -> PiecewiseLinear:
    """The convex minorant of F(α) = G_μ(max(α, γ) + γ) − γ on [0, 1 − γ], 0 beyond.

    F is constant on [0, γ] (f is non-increasing) and convex after, so its minorant is the line
    from (0, F(0)) tangent to the convex part, then the convex part; built from tangent lines, it
    lies below F everywhere (certified).
    """
    a = np.unique(
        np.concatenate([np.linspace(gamma, 1 - gamma, 2001), gamma + np.logspace(-12, -1, 200)])
    )
    a = a[(a >= gamma) & (a <= 1 - gamma)]
    z = norm_isf(a + gamma)
    y = norm_cdf(z - mu) - gamma
    slope = -np.exp(mu * z - mu * mu / 2)  # G_μ'(α + γ)
    c = max(float(y[0]), 0.0)
    inter = y - slope * a
    # the first line from (0, c) through the vertices of the tangent lines' envelope (below F),
    # not through the grid points of F itself: F dips below a chord between grid points, and
    # _be_lower(3, 0.001)(0.0033219) read 5.6e-5 above G_3(α + γ) − γ (a hunt)
    vx, vy = line_envelope(slope, inter)
    with np.errstate(divide="ignore", invalid="ignore"):
        chord = np.where(vx > 0, (vy - c) / vx, np.inf)
    s0 = min(float(np.min(chord)), 0.0)
    # tangents whose intercept exceeds c would rise above F's flat part [0, γ]
    keep = inter <= c
    slopes = np.concatenate([[s0], slope[keep], [0.0]])
    xs, ys = line_envelope(slopes, np.concatenate([[c], inter[keep], [0.0]]))
    return PiecewiseLinear(xs, np.clip(ys, 0.0, 1.0 - xs))


def _be_upper(mu: float, gamma: float) -> PiecewiseLinear:
    """Chords of min(1 − α, G_μ(α − γ) + γ) through points, then the hull: ≥ the exact curve."""
    a = np.unique(np.concatenate([np.linspace(0, 1, 4001), gamma + np.logspace(-12, -1, 200)]))
    a = a[a <= 1]
    mid = np.where(a >= gamma, norm_cdf(norm_isf(np.clip(a - gamma, 0, 1)) - mu) + gamma, 1.0)
    y = np.minimum(np.where(a <= 1 - gamma, mid, 1.0), 1.0 - a)
    return PiecewiseLinear.from_points(a, y)


def clt(*curves: TradeOff, n: int | None = None,
        counts: Sequence[int] | None = None) -> CLTResult:
    """The GDP central limit theorem with its Berry–Esseen error (DRS Thm 3.5, theory §8).

    Parameters
    ----------
    *curves : the curves composed (each once), or one curve with ``n`` copies.
    n : optional number of copies of each curve.
    counts : optional number of copies of each curve, one per curve (not with ``n``).

    For f_{ε_i, δ_i} with δ_i > 0 (κ's infinite) the (ε, δ) limit theorem is used instead
    (DRS Thm 3.6): the approximation is G_μ ⊗ f_{0, 1 − e^{−Σδ}} with μ = √(Σ ε_i²).

    Examples
    --------
    >>> r = clt(Laplace(0.1), n=1000)
    >>> round(r.mu, 4), r.valid
    (3.1129, True)
    """
    items = _expand(curves, n, counts)
    eds = [(c, k) for c, k in items if isinstance(c, EpsDelta)]
    if len(eds) == len(items) and any(c.delta_ > 0 for c, _ in eds):
        from .composition import DeltaMix

        mu = math.sqrt(sum(k * c.eps**2 for c, k in eds))
        dsum = sum(k * c.delta_ for c, k in eds)
        approx = Approximation(
            DeltaMix(Gaussian(mu), -math.expm1(-dsum)),
            name=f"CLT limit G_{mu:.4g} ⊗ f_(0,{-math.expm1(-dsum):.3g})",
        )
        return CLTResult(
            mu,
            math.inf,
            False,
            "(ε, δ) limit theorem (DRS Thm 3.6): no error bound",
            approx,
            _zero(),
            Identity(),
        )
    k1 = sum(k * kl(c) for c, k in items)
    k2 = sum(k * kappa2(c) for c, k in items)
    kk = sum(k * kl(c) ** 2 for c, k in items)
    k3 = sum(k * kappa3_bar(c) for c, k in items)
    var = k2 - kk
    if not (math.isfinite(var) and var > 0):
        raise ValueError("the CLT needs finite functionals with ‖κ₂‖₁ − ‖kl‖₂² > 0")
    mu = 2 * k1 / math.sqrt(var)
    gamma = 0.56 * k3 / var**1.5
    approx = Approximation(Gaussian(mu), name=f"CLT G_{mu:.4g}")
    asym = [c for c, _ in items if not c.is_symmetric]
    if gamma >= 0.5:
        msg = f"γ = {gamma:.3g} ≥ 1/2: the Berry–Esseen bound is void (DRS Thm 3.5)"
        return CLTResult(mu, gamma, False, msg, approx, _zero(), Identity())
    inexact = [c for c, _ in items if not _functionals_exact(c)]
    if asym or inexact:
        # (no certified bounds: DRS Thm 3.5 needs symmetric f_i and their exact functionals.
        # With binned functionals dpsgd_step(1.0, 0.001)'s kl read 9.7e-5 for the true 1.46e-6,
        # and the "certified" upper curve lay 0.39 below the composition; a hunt)
        why = ("DRS Thm 3.5 assumes symmetric f_i, and some are not" if asym else
               f"the functionals of {inexact[0]!r} are numerical approximations")
        return CLTResult(mu, gamma, False, f"no certified bounds: {why}", approx, _zero(),
                         Identity())
    msg = "Berry–Esseen bounds hold (DRS Thm 3.5)"
    return CLTResult(mu, gamma, True, msg, approx, _be_lower(mu, gamma), _be_upper(mu, gamma))


def _functionals_exact(f: TradeOff) -> bool:
    """Whether kl, κ₂ and κ̄₃ of f come from closed forms or exact masses (G_μ, L_μ, Id, exact
    piecewise-linear curves), not from binning (an approximation) or from a bracket's side
    (not the curve itself)."""
    if isinstance(f, (Gaussian, Identity, Laplace)):
        return True
    return isinstance(f, PiecewiseLinear) and f.kind == "exact"


def _zero() -> PiecewiseLinear:
    return PiecewiseLinear.revealing()


# ---------------------------------------------------------------------------------- Edgeworth
def loss_cumulants(f: TradeOff) -> tuple[np.ndarray, np.ndarray]:
    """First four cumulants of the privacy loss L under P and under Q: ((κ1..κ4)_P, (κ1..κ4)_Q).

    Exact for Gaussian (L ~ N(∓μ²/2, μ²)) and PL curves; by fine binning otherwise.
    """
    if isinstance(f, Bracketed):
        f = f.lower
    if isinstance(f, Approximation):
        f = f.curve
    if isinstance(f, Gaussian):
        m2 = float(f.mu) * float(f.mu)
        return np.array([-m2 / 2, m2, 0.0, 0.0]), np.array([m2 / 2, m2, 0.0, 0.0])
    if isinstance(f, PiecewiseLinear):
        p, q, loss = f._segments
        keep = np.isfinite(loss)
        if f.q_inf > 0 or np.any(p[~keep] > 0):
            raise ValueError(f"{f!r} has infinite privacy losses; no cumulants")
        wp, wq, x = p[keep], q[keep], loss[keep]
    else:
        edges = np.linspace(-60, 60, 240001)
        lb = f._loss_bins(edges)
        x = 0.5 * (edges[:-1] + edges[1:])
        wp, wq = lb.p, lb.q

    def cum(w: np.ndarray) -> np.ndarray:
        w = w / w.sum()
        m = float((w * x).sum())
        c = x - m
        m2, m3, m4 = (float((w * c**k).sum()) for k in (2, 3, 4))
        return np.array([m, m2, m3, m4 - 3 * m2 * m2])

    return cum(wp), cum(wq)


def _edgeworth_cdf(x: np.ndarray, s: float, k3: float, k4: float,
                   upper: bool = False) -> np.ndarray:
    """Degree-2 Edgeworth CDF of a standardized sum (theory §9), F = Φ(x) − φ(x) c(x); with
    ``upper`` its survival function 1 − F = Φ̄(x) + φ(x) c(x), computed as such (1 − F in
    floats kept nothing below 1e-16: the approximation of Laplace(3)^10 had an atom of 0.285 at
    α = 0, and ε(1e-5) = ∞ for the exact 29.99)."""
    phi = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    corr = (
        (k3 / (6 * s**3)) * (x * x - 1)
        + (k4 / (24 * s**4)) * (x**3 - 3 * x)
        + (k3 * k3 / (72 * s**6)) * (x**5 - 10 * x**3 + 15 * x)
    )
    if upper:
        return np.clip(norm_sf(x) + phi * corr, 0.0, 1.0)
    return np.clip(norm_cdf(x) - phi * corr, 0.0, 1.0)


def edgeworth(*curves: TradeOff, n: int | None = None,
              counts: Sequence[int] | None = None) -> PiecewiseLinear:
    """Degree-2 Edgeworth approximation of the composed curve (ZDLS 2020). An approximation.

    The cumulants of the composed loss are sums of the components' under P and under Q; for each
    threshold h, α = 1 − F_P(h) and β = F_Q(h) with F the Edgeworth CDFs. The points are made
    monotone and their lower convex hull is returned as a valid trade-off curve of kind
    "approximation".

    Examples
    --------
    >>> e = edgeworth(Laplace(0.5), n=10)
    >>> e.kind
    'approximation'
    """
    items = _expand(curves, n, counts)
    cp = np.zeros(4)
    cq = np.zeros(4)
    for c, k in items:
        a, b = loss_cumulants(c)
        cp += k * a
        cq += k * b
    names = ", ".join(f"{c!r}" + (f"^{k}" if k > 1 else "") for c, k in items)
    if not (np.all(np.isfinite(cp)) and np.all(np.isfinite(cq))):
        raise ValueError(f"edgeworth needs finite loss cumulants; {names} has an infinite one "
                         "(a perfectly revealing or unbounded-atom part)")
    if cp[1] <= 0.0 or cq[1] <= 0.0:  # no privacy loss at all: the identity, exactly
        out = PiecewiseLinear.from_points([0.0, 1.0], [1.0, 0.0], kind="approximation")
        out._name = f"Edgeworth[{names}]"
        return out
    sp, sq = math.sqrt(cp[1]), math.sqrt(cq[1])
    lo = min(cp[0] - 12 * sp, cq[0] - 12 * sq)
    hi = max(cp[0] + 12 * sp, cq[0] + 12 * sq)
    h = np.linspace(lo, hi, 20001)
    alpha = _edgeworth_cdf((h - cp[0]) / sp, sp, cp[2], cp[3], upper=True)
    beta = _edgeworth_cdf((h - cq[0]) / sq, sq, cq[2], cq[3])
    # monotone in h: α non-increasing, β non-decreasing
    alpha = np.minimum.accumulate(alpha)
    beta = np.maximum.accumulate(beta)
    alpha, beta = alpha[::-1], beta[::-1]
    beta = np.minimum(beta, 1.0 - alpha)
    curve = PiecewiseLinear.from_points(
        np.clip(alpha, 0, 1), np.clip(beta, 0, 1), kind="approximation"
    )
    curve._name = f"Edgeworth[{names}]"
    if curve.q_inf > 0.0:  # (no part has a +∞ atom: the expansion left [0, 1] on its range)
        warnings.warn(
            f"the Edgeworth expansion of {names} is not a distribution here (its CDFs leave "
            f"[0, 1] within ±12 standard deviations): the approximation has a spurious atom of "
            f"{curve.q_inf:.3g} at α = 0, so its ε is ∞ for δ below that; use the numeric "
            "composition (fdp.compose) for these curves", UserWarning, stacklevel=2)
    return curve


# ---------------------------------------------------------------------------------- GDP fit
#
# Certified GDP parameters (DRS Prop 2.12 and Cor 2.13; theory §3, §4). Notation: T is the exact
# curve, ℓ ≤ T a certified lower curve (T itself for exact curves), g a symmetric trade-off curve
# (G_μ, or G_μ ⊗ f_{0,τ}). Three facts carry every proof below.
#
# (F1) T ≥ g ⇔ δ_T(ε) ≤ δ_g(ε) for all ε ∈ ℝ (convex conjugates, DRS Prop 2.12).
# (F2) δ_{f⁻¹}(ε) = 1 − e^ε + e^ε δ_f(−ε) for every f (swap the roles of α and β in
#      δ_f(ε) = sup_α (1 − e^ε α − f(α))). As g = g⁻¹, F1 and F2 give
#      T ≥ g ⇔ δ_T ≤ δ_g on [0, ∞) and δ_{T⁻¹} ≤ δ_g on [0, ∞).
# (F3) For a piecewise-linear ℓ with breakpoints (α_k, β_k), δ_ℓ(ε) = max_k (1 − β_k − e^ε α_k),
#      and for ε ≥ 0 the max is attained at k = 0 or at a breakpoint whose left segment has slope
#      ≤ −1 (the increments Δβ − e^ε Δα are negative from the first segment flatter than −1 on,
#      by convexity). Call these breakpoints "steep". If g(α_k) ≤ β_k at every steep k, then
#      1 − β_k − e^ε α_k ≤ 1 − g(α_k) − e^ε α_k ≤ δ_g(ε), so δ_T ≤ δ_ℓ ≤ δ_g on [0, ∞).
#
# Hence T ≥ g as soon as g ≤ ℓ at the steep breakpoints of ℓ and g ≤ ℓ' at the steep breakpoints
# of ℓ' ≤ T⁻¹ (F2, F3); for a symmetric T one may take ℓ' = ℓ. Checking every breakpoint of ℓ
# (both ends) also suffices, since g is convex and ℓ linear between breakpoints.

_U = UNIT_ROUNDOFF


def _phi_inv(x: np.ndarray, xc: np.ndarray) -> np.ndarray:
    """Φ⁻¹(x) from x and its complement xc = 1 − x, each used where it is precise."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x < 0.5, special.ndtri(x), -special.ndtri(xc))


def _point_mu(
    a: np.ndarray, ac: np.ndarray, b: np.ndarray, r: np.ndarray, tau: float,
    la: np.ndarray | None = None, lb: np.ndarray | None = None,
) -> np.ndarray:
    """Per point (α, β) the least μ with (G_μ ⊗ f_{0,τ})(α) ≤ β, rounded up.

    ``ac`` = 1 − α and ``r`` = 1 − τ − β are passed separately (precise when small). With
    s = 1 − τ, (G_μ ⊗ f_{0,τ})(α) = s G_μ(α/s) for α < s and 0 beyond (theory §4), and
    s G_μ(α/s) ≤ β ⇔ μ ≥ Φ⁻¹(1 − α/s) − Φ⁻¹(β/s). −∞ where the point constrains nothing, +∞
    where no μ works (α = 0 with β < s, or β = 0 with α < s). The value is decreasing in α and
    β (increasing in 1 − α and r): a caller certifying a true point passes lower bounds on α, β
    and upper ones on 1 − α, r. ``la``, ``lb`` (optional, NaN where not given): lower bounds on
    log α, log β, used instead where finite (coordinates below the normal range, bounded in
    log space: scipy's ndtri_exp, within ~2e-16 (1 + |z|) of Φ⁻¹(e^x)).
    """
    s = 1.0 - tau
    out = np.full(a.shape, -np.inf)
    has_la = np.zeros(a.shape, dtype=bool) if la is None else np.isfinite(la)
    has_lb = np.zeros(a.shape, dtype=bool) if lb is None else np.isfinite(lb)
    zero = (a <= 0.0) & ~has_la
    out[zero & (r > 0)] = np.inf  # β(0) < 1 − τ: an atom larger than τ
    live = ~zero & (ac > tau) & (r > 0)  # α < 1 − τ and β < 1 − τ
    dead = live & (b <= 0.0) & ~has_lb
    out[dead] = np.inf
    live &= ~dead
    if live.any():
        ap, apc = a[live] / s, (ac[live] - tau) / s
        bp, bpc = b[live] / s, r[live] / s
        z1 = _phi_inv(apc, ap)  # Φ⁻¹(1 − α/s)
        z2 = _phi_inv(bp, bpc)  # Φ⁻¹(β/s)
        log_s = math.log1p(-tau)
        if la is not None and has_la[live].any():
            use = has_la[live]
            z1 = np.where(use, -special.ndtri_exp(np.where(use, la[live], -1.0) - log_s), z1)
        if lb is not None and has_lb[live].any():
            use = has_lb[live]
            z2 = np.where(use, special.ndtri_exp(np.where(use, lb[live], -1.0) - log_s), z2)
        mu = z1 - z2
        # round up: ndtri's and the divisions' rounding, relative ~1e-15 on the z's
        out[live] = mu + 1e-12 * (1.0 + np.abs(z1) + np.abs(z2))
    return out


def _log_lower_coords(
    f: PiecewiseLinear, a: np.ndarray, b: np.ndarray, rel: float
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Lower bounds on log α_k and log β_k at the breakpoints whose α resp. β is below the
    normal range, for a curve built from masses with exact given losses (``_exact_losses``,
    within :meth:`~fdp.tradeoff.PiecewiseLinear._loss_errs`); (None, None) otherwise, NaN where
    no bound is found.

    A subnormal Q-mass keeps only a few bits (SUE at ε = 745: q² = 2.86e-324 stored as
    4.94e-324, which moved Φ⁻¹ at the last breakpoint by log(4.94/2.86)/38.5 = 0.0146 and read
    μ 65.5815 for the exact 65.5960), but its outcome's loss is given: q_j = p_j e^{ℓ_j} with
    p_j normal (known to the masses' relative error ``rel``) and ℓ_j within its error e_j, so
    log q_j ≥ log p_j + log(1 − rel) + ℓ_j − e_j (and log p_j ≥ log q_j + log(1 − rel) − ℓ_j −
    e_j for the P side). A breakpoint is a tail sum β = Σ_{j≥k'} q_j (α = Σ_{j<k'} p_j) of the
    masses in the curve's order; it is matched to k' by equality with the masses' own sums
    (from_masses only drops breakpoints, never moves one below the normal range), taking the
    shortest matching sum, which is a lower bound on any of them (all terms ≥ 0); masses in the
    normal range enter as m(1 − rel), subnormal ones as well as m(1 − rel) − 2 TINY (their
    absolute error, and that product's rounding), the larger of the two readings kept."""
    masses = getattr(f, "_given_masses", None)
    if masses is None or not getattr(f, "_exact_losses", False):
        return None, None
    sub_a = (a > 0.0) & (a < MIN_NORMAL)
    sub_b = (b > 0.0) & (b < MIN_NORMAL)
    if not (sub_a.any() or sub_b.any()):
        return None, None
    p, q, loss = (np.asarray(x, dtype=float) for x in masses)
    err = np.asarray(f._loss_errs(), dtype=float)
    if err.shape != loss.shape:
        return None, None
    lrel = math.log1p(-rel)
    fin = np.isfinite(loss)

    def lower(m: np.ndarray, other: np.ndarray, sgn: float) -> np.ndarray:
        # m_j = other_j e^{sgn ℓ_j}: the linear reading and, below the normal range, the
        # log-space one from the other side's normal mass and the given loss
        lin = np.where(m < MIN_NORMAL, m * (1.0 - rel) - 2.0 * TINY, m * (1.0 - rel))
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(lin > 0.0, np.log(np.maximum(lin, TINY)), -np.inf)
            lo = np.log(np.where(other > 0.0, other, 1.0))
            via = lo + lrel + sgn * np.where(fin, loss, 0.0) - err - 4.0 * _U * (
                np.abs(lo) + np.abs(np.where(fin, loss, 0.0)) + 1.0)
        ok = (m < MIN_NORMAL) & (other >= MIN_NORMAL) & fin
        return np.where(ok, np.maximum(out, via), out)

    lq, lp = lower(q, p, 1.0), lower(p, q, -1.0)
    n = p.size

    def lowered(x: np.ndarray) -> np.ndarray:
        # the running log-sums of x, lowered by their charged rounding: u·(|result| + k) and
        # 2u·mag (:func:`fdp.tradeoff._log_cumsum`), with k ≤ n
        got, mag = _log_cumsum(x)
        with np.errstate(invalid="ignore"):
            return got - _U * (np.abs(got) + n) - 2.0 * _U * mag

    tail = np.append(lowered(lq[::-1])[::-1], -np.inf)
    head = np.concatenate([[-np.inf], lowered(lp)])
    a_full = np.concatenate([[0.0], np.cumsum(p)])
    b_full = np.concatenate([np.cumsum(q[::-1])[::-1], [0.0]])
    la = np.full(a.shape, np.nan)
    lb = np.full(b.shape, np.nan)
    for k in np.flatnonzero(sub_a):
        idx = np.flatnonzero(a_full == a[k])
        if idx.size:
            la[k] = head[int(idx[0])]  # (the shortest head sum)
    for k in np.flatnonzero(sub_b):
        idx = np.flatnonzero(b_full == b[k])
        if idx.size:
            lb[k] = tail[int(idx[-1])]  # (the shortest tail sum)
    return la, lb


class _Points:
    """A piecewise-linear curve's breakpoints with precise complements 1 − α_k and Q-masses
    r_k = 1 − q_∞ − β_k (the finite Q-mass above breakpoint k), and its +∞ atom q_∞ = 1 − β_0."""

    def __init__(self, f: PiecewiseLinear) -> None:
        a, b = (np.asarray(x, dtype=float) for x in f.breakpoints)
        atom = float(f.q_inf)
        # complements kept by PiecewiseLinear (tail sums, full relative precision); checked, and
        # replaced by 1 − α, 1 − q_∞ − β (rounded up) if missing or inconsistent
        ac = getattr(f, "_ac", None)
        qc = getattr(f, "_qc", None)
        ok = (
            isinstance(ac, np.ndarray) and isinstance(qc, np.ndarray)
            and ac.shape == a.shape and qc.shape == b.shape
            and bool(np.all(np.abs(ac + a - 1.0) <= 1e-9))
            and bool(np.all(np.abs(atom + qc + b - 1.0) <= 1e-9))
        )
        if not ok:
            ac = 1.0 - a
            qc = np.maximum(1.0 - atom - b, 0.0) + 2 * _U
            qc[0] = 0.0 if b[0] >= 1.0 - atom else qc[0]
        # (the complements are sums of the masses: a relative error of at most the masses' own
        # plus one u per term; a count of the outcomes where the curve keeps them)
        masses = getattr(f, "_given_masses", None)
        terms = max(a.size, masses[0].size if masses is not None else 0)
        self._ac_rel = float(getattr(f, "_mass_rtol", 0.0)) + (terms + 8) * _U
        self.a, self.ac, self.b = a, np.asarray(ac, dtype=float), b
        # Near β = 1 the test reads 1 − β as q_∞ + r_k: both are rounded up by that error, so
        # that the β it certifies against is at most the true one (f⁵ of a pair with an atom
        # read q_∞ 2.8e-19 below the exact 1 − (1 − q)⁵, and G_μ ⊗ f_(0,τ) came out 2.5e-19
        # above f at α = 9e-23, where 1 − β is 3e-15)
        # (the atom is one mass, not a sum: only the masses' own relative error, none for an
        # engine curve, whose atom is rounded up where it is built)
        self.qc = np.maximum(np.asarray(qc, dtype=float), 0.0) * (1.0 + self._ac_rel)
        rtol = float(getattr(f, "_mass_rtol", 0.0))
        self.atom = math.nextafter(atom * (1.0 + rtol), 1.0) if atom > 0.0 and rtol > 0.0 else atom
        # The breakpoints themselves are sums of masses known to that same relative error:
        # mu() reads each α_k, β_k lowered by it and 1 − α_k raised (as qc above), the side
        # where μ is larger. (Read as stored, from_masses([.5, .5], [.9, .1], mass_rtol=1e-6)
        # gave μ = 1.2815515655 where the pair P = (.5(1 − ρ), .5(1 + ρ)), Q = (.9 + .1ρ,
        # .1(1 − ρ)) within ρ = 1e-6 has μ* = 1.2815533887, 1.8e-6 higher.) An exact curve's
        # coordinates below the normal range keep only an absolute precision besides: as its
        # directed read does (PiecewiseLinear._eval_pair), each loses 2 TINY plus one TINY per
        # subnormal mass of its side (a product that underflowed, or was raised to TINY); where
        # that leaves 0, μ = ∞ unless the given losses bound it in log space
        # (_log_lower_coords). A certified bound curve (an engine's lower curve) is its own
        # breakpoints, and exact masses (_exact_masses: a user's distributions) have exact
        # subnormal sums: only the relative reading.
        self._rel = self._ac_rel
        self._tiny_a = self._tiny_b = 0.0
        self._la: np.ndarray | None = None
        self._lb: np.ndarray | None = None
        directed = (getattr(f, "kind", "exact") == "exact" and getattr(f, "_side", "lower")
                    == "lower" and not getattr(f, "_bound", False))
        if directed and not getattr(f, "_exact_masses", False):
            mp_, mq_, _ = f._masses
            self._tiny_a = (2.0 + float(np.count_nonzero((mp_ > 0.0) & (mp_ < MIN_NORMAL)))) * TINY
            self._tiny_b = (2.0 + float(np.count_nonzero((mq_ > 0.0) & (mq_ < MIN_NORMAL)))) * TINY
            self._la, self._lb = _log_lower_coords(f, a, b, self._rel)

    @property
    def neg_atom(self) -> float:
        """P-mass at loss −∞: 1 − α at the first breakpoint where β = 0 (0 if only at α = 1),
        rounded up by the complement's summation error (a τ below the exact P-atom leaves
        G_μ ⊗ f_{0,τ} > 0 = f just below α = 1 − τ: f^6 of a pair with P-mass 0.85 at −∞ read
        τ = 0.9999888203807014, under 1 − 0.14953327^6)."""
        # (a P-mass below u leaves α = 1 in float: its complement still holds it; read only
        # where α < 1, from_eps_delta([.5, 2], [1e-30, 1e-30])'s 1e-30 at −∞ was missed, and
        # gdp_mu of a pair with P-mass 1e-30 at −∞ and no +∞ atom came out finite)
        z = np.flatnonzero((self.b <= 0.0) & (self.ac > 0.0))
        if not z.size:
            return 0.0
        return min(math.nextafter(float(self.ac[z[0]]) * (1.0 + self._ac_rel) + self._tiny_a,
                                  math.inf), 1.0)

    def steep(self) -> np.ndarray:
        """Mask of k = 0 and the breakpoints whose left segment has slope ≤ −1 (F3), with a
        relative tolerance of 1e-9 that only adds points."""
        a, ac, b, qc = self.a, self.ac, self.b, self.qc
        dp = np.where(a[:-1] < 0.5, np.diff(a), -np.diff(ac))
        dq = np.where(b[:-1] < 0.5, -np.diff(b), np.diff(qc))
        s = np.flatnonzero(dq >= dp * (1.0 - 1e-9))
        mask = np.zeros(a.size, dtype=bool)
        mask[0] = True
        if s.size:
            mask[1 : int(s[-1]) + 2] = True
        return mask

    def mu(self, tau: float, steep_only: bool) -> float:
        """The least μ with G_μ ⊗ f_{0,τ} ≤ the curve at the selected breakpoints (rounded up)."""
        if tau < self.atom:
            return math.inf
        sel = self.steep() if steep_only else np.ones(self.a.size, dtype=bool)
        r = self.qc[sel] - (tau - self.atom)
        # each coordinate on its side (see __init__): α, β lowered, 1 − α raised (qc already)
        rel = self._rel
        a = np.maximum(self.a[sel] * (1.0 - rel) - self._tiny_a, 0.0)
        ac = np.minimum(self.ac[sel] * (1.0 + rel) + self._tiny_a, 1.0)
        # (α = 0 and the end α = 1 are exact)
        ac = np.where((self.a[sel] > 0.0) & (self.ac[sel] > 0.0), ac, self.ac[sel])
        b = np.maximum(self.b[sel] * (1.0 - rel) - self._tiny_b, 0.0)
        la = None if self._la is None else self._la[sel]
        lb = None if self._lb is None else self._lb[sel]
        v = _point_mu(a, ac, b, r, tau, la, lb)
        return float(max(np.max(v), 0.0)) if v.size else 0.0


def _atom(f: PiecewiseLinear) -> float:
    """The +∞ atom of a PL curve, the larger of 1 − f(0) and δ_f(+∞) (both representations)."""
    return max(float(f.q_inf), float(f.delta(math.inf)))


def _round_up(x: float) -> float:
    return x * (1.0 + 8 * _U) + 1e-300 if math.isfinite(x) else x


def _epsdelta_mu(eps: float) -> float:
    """The least μ with G_μ ≤ f_{ε,0}: −2Φ⁻¹(1/(1 + e^ε)) (G_μ(α) ≤ α at f's kink
    α = 1/(1 + e^ε) iff Φ(−μ/2) ≤ α), rounded up. Below ε = 1 as 2√2 erf⁻¹(tanh(ε/2)), within
    32u of itself (the log-space form's input 1/(1 + e^ε) ≈ 1/2 − ε/4 carries only absolute
    precision); above, in log space (finite for every finite ε), within 1e-13 (1 + μ). 0 at 0.

    Examples
    --------
    >>> _epsdelta_mu(0.0), round(_epsdelta_mu(1.0), 10)
    (0.0, 1.2320353853)
    """
    if eps == 0.0:
        return 0.0
    if eps < 1.0:
        return float(2.0 * math.sqrt(2.0) * special.erfinv(math.tanh(eps / 2.0))) * (
            1.0 + 32.0 * _U)
    z = -float(special.ndtri_exp(-float(np.logaddexp(0.0, eps))))
    return max(2.0 * z + 1e-13 * (1.0 + 2.0 * abs(z)), 0.0)


def _laplace_mu(t: float) -> float:
    """The least μ with L_t ≥ G_μ, certified.

    L_t is symmetric, and its steep part (slope ≤ −1) is α ≤ x* = e^{−t/2}/2 (theory §2, §7), so
    (F3) the sup of Φ⁻¹(1 − α) − Φ⁻¹(L_t(α)) over α ∈ (0, x*] is the answer. On the linear piece
    (0, e^{−t}/2] the sup is at its right end (G_μ convex, the piece linear), where L_t = 1/2. On
    [e^{−t}/2, x*], L_t = e^{−t}/(4α); with u = log α,
    φ(u) = −Φ⁻¹(e^u) − Φ⁻¹(e^{−t − log 4 − u}); the first term decreases and the second increases
    in u, so on [u_i, u_{i+1}] φ ≤ −Φ⁻¹(e^{u_i}) − Φ⁻¹(e^{−t − log 4 − u_{i+1}}). Branch and
    bound on these interval bounds gives a certified upper bound within ~1e-10 of the sup.
    """
    if t == 0.0:
        return 0.0
    c = -t - math.log(4.0)
    u0, u1 = -t - math.log(2.0), -t / 2.0 - math.log(2.0)

    def ub(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return -special.ndtri_exp(lo) - special.ndtri_exp(c - hi)

    def val(u: np.ndarray) -> np.ndarray:
        return -special.ndtri_exp(u) - special.ndtri_exp(c - u)

    edges = np.linspace(u0, u1, 1025)
    lo, hi = edges[:-1], edges[1:]
    best = float(np.max(val(edges)))
    bound = best
    for _ in range(60):
        bnd = ub(lo, hi)
        bound = float(np.max(bnd))
        keep = bnd > best
        if bound - best <= 1e-10 * (1.0 + best) or keep.sum() > 50_000:
            break  # bound is certified either way; this only limits its slack
        lo, hi = lo[keep], hi[keep]
        sub = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, 9)[None, :]
        best = max(best, float(np.max(val(sub))))
        lo, hi = sub[:, :-1].ravel(), sub[:, 1:].ravel()
    top = max(bound, float(-special.ndtri_exp(u0)))
    return top + 1e-12 * (1.0 + top)


def _trivial_bound(f: TradeOff) -> float:
    """B = √(Σ n_i μ_i²) from ``f.info["items"]`` ((curve, count) pairs), μ_i = gdp_mu(curve_i).

    ⊗ is monotone and G_a ⊗ G_b = G_{√(a² + b²)} (theory §4), so f_i ≥ G_{μ_i} for all i gives
    ⊗ f_i^{⊗n_i} ≥ G_B. ``inf`` when the items are unknown or some μ_i is infinite.
    """
    info = getattr(f, "info", None)
    items = info.get("items") if isinstance(info, dict) else None
    if not items:
        return math.inf
    total = 0.0
    for c, n in items:
        m = gdp_mu(c)
        if not math.isfinite(m):
            return math.inf
        total += int(n) * m * m
    return _round_up(math.sqrt(total) * (1.0 + 4 * _U))


def _gaussian_tailed(f: Bracketed) -> bool:
    """Whether ``f.info["items"]`` are all Gaussians or subsampled Gaussians (Poisson: a
    Mixture; uniform: Subsampled), whose composition has μ* = B exactly (gdp_mu's F4)."""
    items = f.info.get("items")
    if not items:
        return False
    mixture, subsampled, _ = _lazy_types()
    return all(
        isinstance(c, Gaussian)
        or (isinstance(c, (mixture, subsampled)) and isinstance(c.base, Gaussian))
        for c, _ in items
    )


def _lazy_types() -> tuple[type[Mixture], type[Subsampled], type[DeltaMix]]:
    from .composition import DeltaMix
    from .operations import Mixture, Subsampled

    return Mixture, Subsampled, DeltaMix


def _mixture_points(f: TradeOff) -> PiecewiseLinear | None:
    """p f + (1 − p) Id for an exact PL f, as an exact PL curve (same breakpoints), else None."""
    base, p = f.base, f.p  # type: ignore[attr-defined]
    if not isinstance(base, PiecewiseLinear) or base.kind != "exact":
        return None
    pts = _Points(base)
    b = p * pts.b + (1.0 - p) * pts.ac
    qc = p * pts.qc + (1.0 - p) * pts.a  # 1 − p q_∞ − β' = p r + (1 − p) α
    # (its coordinates are positive combinations of the base's, each within the base's
    # relative error: carried as the mixture's mass_rtol, which _Points reads them with;
    # without it, the mixture at 1/2 of from_masses([.5, .5], [.9, .1], mass_rtol=1e-6) read
    # μ = 0.5244005127 where a pair within ρ has 0.5244011908)
    return PiecewiseLinear(
        pts.a, np.minimum(b, 1.0), alpha_c=pts.ac, beta_c=np.minimum(p * pts.atom + qc, 1.0),
        q_inf=p * pts.atom, q_cum=qc, mass_rtol=pts._ac_rel,
    )


def _bracket_mu(f: Bracketed, tau: float | None) -> tuple[float, float]:
    """(μ, τ) from the lower curve(s) of a bracket; ``tau=None`` means τ = the atoms' size.

    Taking the lower curve may build the deep grid, whose predicted ε-width warning (at the
    bulk's ε, where a sparse DP-SGD run has ε ≈ 0.1: "4705 % wide") says nothing about (μ, τ),
    which is certified on any grid: it is not passed on (queries still warn at their δ)."""
    from .pld import AccuracyWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        lo = f.lower
    if not isinstance(lo, PiecewiseLinear):
        return _mu_tau(lo, tau)
    pts = _Points(lo)
    atom = max(pts.atom, _atom(lo))
    if f.info.get("symmetric"):  # T = T⁻¹: the steep breakpoints of ℓ suffice (F2, F3)
        t = atom if tau is None else max(tau, atom)
        return pts.mu(t, steep_only=True), t
    # not known to be symmetric: every breakpoint of ℓ, unless ℓ vanishes before 1 − τ; then
    # ℓ' = lower curve of T⁻¹ on the other side (F2, F3)
    t = max(atom, pts.neg_atom) if tau is None else max(tau, atom, pts.neg_atom)
    if pts.neg_atom <= atom or (tau is not None and tau >= pts.neg_atom):
        return pts.mu(t, steep_only=False), t
    inv = f.inverse().lower
    if not isinstance(inv, PiecewiseLinear):
        return pts.mu(t, steep_only=False), t
    ipts = _Points(inv)
    t2 = max(atom, ipts.atom, _atom(inv)) if tau is None else max(tau, atom, ipts.atom)
    m2 = max(pts.mu(t2, steep_only=True), ipts.mu(t2, steep_only=True))
    m1 = pts.mu(t, steep_only=False)
    return (m2, t2) if (t2, m2) < (t, m1) or not math.isfinite(m1) else (m1, t)


def _mu_tau(f: TradeOff, tau: float | None) -> tuple[float, float]:
    """(μ, τ) with f ≥ G_μ ⊗ f_{0,τ}: τ the curve's atoms (or ``tau`` if given and larger), μ
    the least such value that is certified (see :func:`gdp_mu_delta`)."""
    mixture, subsampled, deltamix = _lazy_types()
    t0 = 0.0 if tau is None else tau
    if isinstance(f, Gaussian):
        return f.mu, t0
    if isinstance(f, Identity):
        return 0.0, t0
    if isinstance(f, EpsDelta):
        d = f.delta_
        if d >= 1.0:
            return 0.0, 1.0
        return _epsdelta_mu(f.eps), max(d, t0)
    if isinstance(f, Laplace):
        return _laplace_mu(f.mu), t0
    if isinstance(f, Approximation):
        return _mu_tau(f.curve, tau)
    if isinstance(f, Bracketed):
        m, t = _bracket_mu(f, tau)
        return min(m, _trivial_bound(f)), t  # G_B ⊗ f_{0,τ} ≤ G_B ≤ T as well
    if isinstance(f, (mixture, subsampled)):
        if f.p == 0.0:
            return 0.0, t0
        if isinstance(f.base, Gaussian):  # exactly μ* = m (see gdp_mu)
            return f.base.mu, t0
        if isinstance(f, mixture):
            if f.base.kind == "bracket":
                return _mu_tau(mixture(f.base.lower, f.p), tau)
            pl = _mixture_points(f)
            if pl is not None:
                return _mu_tau(pl, tau)
        # p f + (1 − p) Id ≥ f, and C_p(f) ≥ f for symmetric f: f's μ is certified
        return _mu_tau(f.base, tau)
    if isinstance(f, deltamix):
        d = f.delta_
        if d >= 1.0:
            return 0.0, 1.0
        inner = None if tau is None else max(tau - d, 0.0) / (1.0 - d)
        m, tb = _mu_tau(f.base, inner)  # f_{0,d} ⊗ f_{0,τ_b} = f_{0, 1 − (1 − d)(1 − τ_b)}
        return m, max(d + tb - d * tb, t0)
    if isinstance(f, Inverse):  # G_μ ⊗ f_{0,τ} is symmetric: T ≥ g ⇔ T⁻¹ ≥ g
        return _mu_tau(f.base, tau)
    if isinstance(f, PiecewiseLinear):
        pts = _Points(f)
        t = max(pts.atom, _atom(f), pts.neg_atom)
        if tau is not None:
            t = max(t, tau)
        return pts.mu(t, steep_only=False), t
    if f.kind == "bracket":
        return _mu_tau(f.lower, tau)
    return math.inf, t0  # no certified method for this curve type


def gdp_mu(f: TradeOff) -> float:
    """The certified smallest μ with f ≥ G_μ at every α ∈ [0, 1], tails included.

    μ* = sup_α [Φ⁻¹(1 − α) − Φ⁻¹(f(α))] (theory §3); equivalently, f is μ-GDP iff
    δ_f(ε) ≤ δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) for all ε (Dong, Roth & Su 2022,
    "Gaussian Differential Privacy", Prop 2.12 and Cor 2.13). The returned value is never below
    μ*: it is exact up to an upward rounding of ~1e-12 for Gaussian, f_{ε,0}
    (−2Φ⁻¹(1/(1 + e^ε))), Laplace, Identity, exact piecewise-linear curves and Poisson or
    uniformly subsampled Gaussians, and a certified upper bound otherwise.

    Parameters
    ----------
    f : TradeOff

    Returns
    -------
    float
        μ ≥ μ*, or ``inf`` when no finite μ is certified.

    Notes
    -----
    Proofs (facts F1–F3 in the source comments):

    - Exact piecewise-linear f: G_μ is convex and f linear between breakpoints, so G_μ ≤ f at
      every breakpoint suffices, α = 0 and α near 1 included (complements 1 − α, 1 − β are taken
      from tail sums, so the tails keep their relative precision). A +∞ loss atom (f(0) < 1) or
      P-mass at −∞ (f = 0 before α = 1) gives ``inf``: G_μ(0) = 1 and G_μ > 0 on [0, 1).
      Each breakpoint is read on the side that makes μ larger: α and β lowered, 1 − α and
      1 − β raised by the masses' relative error (``mass_rtol``) plus their summation's, and
      below the normal range by the least subnormal per subnormal mass (μ = ``inf`` where that
      leaves 0; not for a user's exact distributions, whose subnormal sums are exact), unless
      the curve's masses come with their exact losses (the mechanisms'), which bound a
      subnormal mass in log space from its outcome's other mass.
    - p G_m + (1 − p) Id (one Poisson-subsampled Gaussian step) and C_p(G_m) give exactly m for
      p > 0: both are ≥ G_m (1 − α ≥ G_m; C_p(f) = min{f_p, f_p⁻¹}** ≥ G_m), and for μ < m,
      δ(ε) ≥ p δ_m(ε + log(1/p)), whose log decays like −ε²/(2m²), exceeds δ_μ(ε) (log decay
      −ε²/(2μ²)) for large ε. Amplification by subsampling never lowers the strict GDP μ.
    - Bracketed (numeric) curves, T ≥ ℓ = ``f.lower``: if ℓ has no +∞ atom, μ_ℓ from ℓ's
      breakpoints (only those with slope ≤ −1 when T is known to be symmetric, and those of the
      lower curve of T⁻¹ on the other side when ℓ vanishes early) satisfies G_{μ_ℓ} ≤ ℓ ≤ T. If
      ``f.info["items"]`` lists the composed (curve, count) pairs, B = √(Σ n_i μ_i²) with
      μ_i = gdp_mu(curve_i) also satisfies G_B ≤ T (⊗ is monotone). The result is min(B, μ_ℓ).
      When ℓ has an atom τ > 0 (truncated tail mass), μ_ℓ = ∞, and B is the best any μ can be
      given only T ≥ max(ℓ, G_B): that max is itself a trade-off function, and for μ < B,
      G_μ > G_B on (0, 1) while G_μ(α) > 1 − τ ≥ ℓ(α) for small α, so G_μ ≤ max(ℓ, G_B) fails.
      For DP-SGD (T steps, noise σ, sensitivity Δ) this B = √T Δ/σ is also the exact μ* (see the
      subsampled Gaussian above). Use :func:`gdp_mu_delta` for the "μ-GDP except with
      probability τ" statement, which the lower curve certifies.
    - F4. Compositions of Gaussians and of Poisson or uniformly subsampled Gaussians (DP-SGD,
      either direction or both): μ* = B exactly, so B is returned without the lower curve.
      G_B ≤ T as above; and on the event that every subsampled step samples the record
      (probability Π p_i^{n_i} under Q), each loss is at least log p_i plus a Gaussian step's
      (log(1 − p + p e^ℓ) ≥ log p + ℓ; C_p(G_m) ≤ p G_m + (1 − p) Id), so
      δ_T(ε) ≥ Π p_i^{n_i} · δ_B(ε + Σ n_i log(1/p_i)), whose log decays like −ε²/(2B²):
      above δ_μ(ε) at large ε for every μ < B.
    - Brackets built from a bracket g by :func:`fdp.symmetrize`, :func:`fdp.subsample` or
      :func:`fdp.poisson_subsample` (``f.info["gdp_base"]`` = g): G_μ ≤ g implies G_μ ≤ g⁻¹
      (G_μ is symmetric), G_μ ≤ p g + (1 − p) Id (as 1 − α ≥ G_μ) and G_μ ≤ its inverse, so
      G_μ lies below the minimum of the parts and, being convex, below its convex envelope:
      gdp_mu(g) bounds μ* too (for symmetrization it is μ*: the envelope is ≤ g).
    - Approximations (CLT, Edgeworth): the μ of the approximating curve, not a bound.

    Examples
    --------
    >>> round(gdp_mu(EpsDelta(1.0)), 6) == round(-2 * float(special.ndtri(1 / (1 + math.e))), 6)
    True
    >>> gdp_mu(EpsDelta(1.0, 1e-5))
    inf
    """
    if not isinstance(f, TradeOff):
        raise TypeError(f"f must be a TradeOff, got {type(f).__name__}")
    mixture, subsampled, deltamix = _lazy_types()
    if isinstance(f, Approximation):
        return gdp_mu(f.curve)
    if isinstance(f, Inverse):  # G_μ ≤ T ⇔ G_μ ≤ T⁻¹ (G_μ is symmetric)
        return gdp_mu(f.base)
    if isinstance(f, deltamix):  # f(0) = 1 − δ < 1 for δ > 0
        return gdp_mu(f.base) if f.delta_ == 0.0 else math.inf
    base = f.info.get("gdp_base") if isinstance(f, Bracketed) else None
    if isinstance(f, Bracketed) and base is None and _gaussian_tailed(f):
        # μ* = B exactly (F4 in the Notes): the lower curve's μ, which cost the deep grid
        # (dpsgd(0.1, 1e-4, 1000): 7.5 s and a width warning), can only equal or exceed it
        return _trivial_bound(f)
    m, t = _mu_tau(f, 0.0)
    if isinstance(base, TradeOff):
        # G_μ ≤ g implies G_μ ≤ f (see the Notes): the base's μ also bounds f's (the lower
        # curve of lines had lost the base's deep tail, and read ∞; a hunt)
        return min(m, gdp_mu(base)) if t == 0.0 else gdp_mu(base)
    if isinstance(f, (mixture, subsampled)) and f.p > 0.0:
        # p f + (1 − p) Id ≥ f, and C_p(f) ≥ f for the symmetric bases it accepts
        return min(m, gdp_mu(f.base)) if t == 0.0 else gdp_mu(f.base)
    if t == 0.0:
        return m
    if isinstance(f, Bracketed):  # ℓ has an atom: only the trivial bound is certified
        return _trivial_bound(f)
    return math.inf


def gdp_mu_delta(f: TradeOff, tau: float | None = None) -> tuple[float, float]:
    """(μ, τ): the certified smallest μ with f ≥ G_μ ⊗ f_{0,τ} ("μ-GDP except with probability
    τ"), where τ is the curve's +∞ loss atom.

    G_μ ⊗ f_{0,τ}(α) = (1 − τ) G_μ(α/(1 − τ)) for α ≤ 1 − τ and 0 beyond; its privacy profile
    is τ + (1 − τ) δ_μ(ε) (theory §4), so the statement reads: for every ε, the mechanism is
    (ε, τ + (1 − τ) δ_μ(ε))-DP (Dong, Roth & Su 2022, Prop 2.12 and Cor 2.13). Unlike
    :func:`gdp_mu`, this is certified by a numeric lower curve alone.

    Parameters
    ----------
    f : TradeOff
    tau : float, optional
        A failure probability to allow. Default: the smallest one the certificate needs, i.e.
        1 − f(0) for exact curves, ``f.lower``'s atom 1 − lower(0) for bracketed ones (and the
        P-mass at loss −∞ when the curve vanishes before α = 1 and is not known to be
        symmetric). A larger ``tau`` can give a smaller μ; a smaller one is raised to the default.

    Returns
    -------
    (float, float)
        μ (rounded up; ``inf`` if none is certified) and τ. For τ = 0, μ = :func:`gdp_mu`.

    Notes
    -----
    Proof: g = G_μ ⊗ f_{0,τ} is symmetric and convex, so by the facts F1–F3 in the source
    comments g ≤ T holds once g ≤ ℓ at the breakpoints of the certified lower curve ℓ ≤ T
    (the steep ones, slope ≤ −1, when T is symmetric; otherwise all of them, or the steep ones
    of ℓ and of a certified lower curve of T⁻¹). At a breakpoint (α, β) with α < 1 − τ,
    (1 − τ) G_μ(α/(1 − τ)) ≤ β ⇔ μ ≥ Φ⁻¹(1 − α/(1 − τ)) − Φ⁻¹(β/(1 − τ)); at α = 0 it needs
    β ≥ 1 − τ, which is why τ must cover the atom. μ is also capped by the trivial GDP bound B of
    a composition (:func:`gdp_mu`), since G_B ⊗ f_{0,τ} ≤ G_B ≤ T.

    Examples
    --------
    >>> mu, tau = gdp_mu_delta(EpsDelta(1.0, 1e-6))
    >>> tau, mu == gdp_mu(EpsDelta(1.0))
    (1e-06, True)
    """
    if tau is not None:
        tau = float(tau)
        if not 0.0 <= tau <= 1.0:
            raise ValueError(f"tau must lie in [0, 1], got {tau!r}")
    if not isinstance(f, TradeOff):
        raise TypeError(f"f must be a TradeOff, got {type(f).__name__}")
    m, t = _mu_tau(f, tau)
    if t >= 1.0:
        return 0.0, 1.0
    return m, t


def gdp_fit(f: TradeOff) -> tuple[float, float]:
    """(μ*, gap): the certified μ* = :func:`gdp_mu` and the largest vertical gap f − G_μ* seen on
    a grid of 10001 α's, a measure of how far f is from Gaussian (0 for G_μ).

    μ* is certified (never below the truth); the gap is a descriptive grid statistic, not a
    bound. For bracketed curves both use the lower curve.

    Examples
    --------
    >>> mu, gap = gdp_fit(Gaussian(1.0))
    >>> mu, round(gap, 12)
    (1.0, 0.0)
    """
    mu = gdp_mu(f)
    if not math.isfinite(mu):
        return mu, math.nan
    a = np.linspace(0, 1, 10001)
    return mu, float(np.max(np.asarray(f(a)) - np.asarray(Gaussian(mu)(a))))


class _CallableModule(types.ModuleType):
    """``fdp.clt`` is this module and also callable: ``fdp.clt(f, n=100)`` is :func:`clt`."""

    def __call__(self, *curves: TradeOff, n: int | None = None) -> CLTResult:
        return clt(*curves, n=n)


sys.modules[__name__].__class__ = _CallableModule

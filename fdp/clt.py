"""Gaussian approximations: the kl/κ functionals, the Berry–Esseen CLT, Edgeworth, best GDP fit.

In privacy-loss terms (MATH §8) with X ~ P and L = log(dQ/dP)(X):
kl(f) = −E[L] = D_KL(P‖Q), κ₂(f) = E[L²], κ₃(f) = E|L|³, κ̄₃(f) = E|L − E L|³
(DRS Sec 3.3 write them as integrals of log|f'| over α ∈ [0, 1]).

- :func:`clt`: DRS Thm 3.5 (Berry–Esseen): for symmetric f_i, with
  μ = 2‖kl‖₁/√(‖κ₂‖₁ − ‖kl‖₂²) and γ = 0.56‖κ̄₃‖₁/(‖κ₂‖₁ − ‖kl‖₂²)^{3/2},
  G_μ(α + γ) − γ ≤ f₁ ⊗ … ⊗ f_n(α) ≤ G_μ(α − γ) + γ. ``approx`` (G_μ) is an approximation;
  ``lower`` and ``upper`` are certified bounds when ``valid`` (γ < 1/2).
- :func:`edgeworth`: the degree-2 Edgeworth expansion of the composed loss under P and Q
  (Zheng, Dong, Long & Su 2020). An approximation, not a bound.
- :func:`gdp_mu`: the smallest μ with f ≥ G_μ, μ* = sup_α [Φ⁻¹(1 − α) − Φ⁻¹(f(α))] (MATH §3);
  certified for bracketed curves (computed from the lower curve).
"""

from __future__ import annotations

import math
import sys
import types
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize, special

from ._checks import check_int
from ._numerics import line_envelope, norm_cdf, norm_isf
from .families import EpsDelta, Gaussian, Identity, Laplace
from .numeric import Approximation, Bracketed
from .tradeoff import PiecewiseLinear, TradeOff

__all__ = [
    "kl",
    "kappa2",
    "kappa3",
    "kappa3_bar",
    "clt",
    "CLTResult",
    "edgeworth",
    "gdp_mu",
    "gdp_fit",
    "loss_cumulants",
]

_ABS3_Z = 2.0 * math.sqrt(2.0 / math.pi)  # E|Z|³


def _abs3_normal(m: float, s: float) -> float:
    """E|X|³ for X ~ N(m, s²): (m³ + 3ms²)(1 − 2Φ(−m/s)) + 2s(m² + 2s²)φ(m/s)."""
    if s == 0.0:
        return abs(m) ** 3
    r = m / s
    phi = math.exp(-r * r / 2) / math.sqrt(2 * math.pi)
    return (m**3 + 3 * m * s * s) * (1 - 2 * float(norm_cdf(-r))) + 2 * s * (
        m * m + 2 * s * s
    ) * phi


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
        m, s = -(f.mu**2) / 2, f.mu
        return {
            "kl": f.mu**2 / 2,
            "k2": f.mu**2 + f.mu**4 / 4,
            "k3": _abs3_normal(m, s),
            "k3bar": _ABS3_Z * f.mu**3,
        }[g]
    if isinstance(f, Laplace) and g != "k3bar":
        t = f.mu
        e1, e2 = math.exp(-t), math.exp(-t / 2)
        return {
            "kl": t + e1 - 1,
            "k2": t * t - 2 * t + 4 - (2 * t + 4) * e1,
            "k3": t**3 - 3 * t * t + 12 * t - 24 + 48 * e2 - (3 * t * t + 12 * t + 24) * e1,
        }[g]
    if isinstance(f, Laplace):  # κ̄₃ by quadrature of the loss law (atoms at ±μ, density inside)
        t = f.mu
        k = t + math.exp(-t) - 1  # kl, so L + kl is centred
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


def _expand(curves: tuple[TradeOff, ...], n: int | None) -> list[tuple[TradeOff, int]]:
    if not curves:
        raise ValueError("give at least one curve")
    for i, c in enumerate(curves):
        if not isinstance(c, TradeOff):
            raise TypeError(f"curves[{i}] must be a TradeOff, got {type(c).__name__}")
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
    composition when ``valid``; otherwise they are the trivial bounds 0 and 1 − α.
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
    with np.errstate(divide="ignore", invalid="ignore"):
        chord = np.where(a > 0, (y - c) / a, np.inf)
    t = int(np.argmin(chord))
    slopes = np.concatenate([[min(chord[t], 0.0)], slope[t:], [0.0]])
    inter = np.concatenate([[c], y[t:] - slope[t:] * a[t:], [0.0]])
    xs, ys = line_envelope(slopes, inter)
    return PiecewiseLinear(xs, np.clip(ys, 0.0, 1.0 - xs))


def _be_upper(mu: float, gamma: float) -> PiecewiseLinear:
    """Chords of min(1 − α, G_μ(α − γ) + γ) through points, then the hull: ≥ the exact curve."""
    a = np.unique(np.concatenate([np.linspace(0, 1, 4001), gamma + np.logspace(-12, -1, 200)]))
    a = a[a <= 1]
    mid = np.where(a >= gamma, norm_cdf(norm_isf(np.clip(a - gamma, 0, 1)) - mu) + gamma, 1.0)
    y = np.minimum(np.where(a <= 1 - gamma, mid, 1.0), 1.0 - a)
    return PiecewiseLinear.from_points(a, y)


def clt(*curves: TradeOff, n: int | None = None) -> CLTResult:
    """The GDP central limit theorem with its Berry–Esseen error (DRS Thm 3.5, MATH §8).

    Parameters
    ----------
    *curves : the curves composed (each once), or one curve with ``n`` copies.
    n : optional number of copies of each curve.

    For f_{ε_i, δ_i} with δ_i > 0 (κ's infinite) the (ε, δ) limit theorem is used instead
    (DRS Thm 3.6): the approximation is G_μ ⊗ f_{0, 1 − e^{−Σδ}} with μ = √(Σ ε_i²).

    Examples
    --------
    >>> r = clt(Laplace(0.1), n=1000)
    >>> round(r.mu, 4), r.valid
    (3.1129, True)
    """
    items = _expand(curves, n)
    if all(isinstance(c, EpsDelta) for c, _ in items) and any(c.delta_ > 0 for c, _ in items):
        from .composition import DeltaMix

        mu = math.sqrt(sum(k * c.eps**2 for c, k in items))  # type: ignore[attr-defined]
        dsum = sum(k * c.delta_ for c, k in items)  # type: ignore[attr-defined]
        approx = Approximation(
            DeltaMix(Gaussian(mu), -math.expm1(-dsum)),
            name=f"CLT limit G_{mu:.4g} ⊗ f_(0,{-math.expm1(-dsum):.3g})",
        )
        from .families import Identity as _Id

        return CLTResult(
            mu,
            math.inf,
            False,
            "(ε, δ) limit theorem (DRS Thm 3.6): no error bound",
            approx,
            _zero(),
            _Id(),
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
        from .families import Identity as _Id

        msg = f"γ = {gamma:.3g} ≥ 1/2: the Berry–Esseen bound is void (DRS Thm 3.5)"
        return CLTResult(mu, gamma, False, msg, approx, _zero(), _Id())
    msg = "Berry–Esseen bounds hold (DRS Thm 3.5)"
    if asym:
        msg += "; note: DRS Thm 3.5 assumes symmetric f_i, and some are not"
    return CLTResult(mu, gamma, not asym, msg, approx, _be_lower(mu, gamma), _be_upper(mu, gamma))


def _zero() -> PiecewiseLinear:
    return PiecewiseLinear(np.array([0.0, 1.0]), np.array([0.0, 0.0]), q_inf=1.0)


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
        m2 = f.mu**2
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


def _edgeworth_cdf(x: np.ndarray, s: float, k3: float, k4: float) -> np.ndarray:
    """Degree-2 Edgeworth CDF of a standardized sum (MATH §9)."""
    phi = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    corr = (
        (k3 / (6 * s**3)) * (x * x - 1)
        + (k4 / (24 * s**4)) * (x**3 - 3 * x)
        + (k3 * k3 / (72 * s**6)) * (x**5 - 10 * x**3 + 15 * x)
    )
    return np.clip(norm_cdf(x) - phi * corr, 0.0, 1.0)


def edgeworth(*curves: TradeOff, n: int | None = None) -> TradeOff:
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
    items = _expand(curves, n)
    cp = np.zeros(4)
    cq = np.zeros(4)
    for c, k in items:
        a, b = loss_cumulants(c)
        cp += k * a
        cq += k * b
    sp, sq = math.sqrt(cp[1]), math.sqrt(cq[1])
    lo = min(cp[0] - 12 * sp, cq[0] - 12 * sq)
    hi = max(cp[0] + 12 * sp, cq[0] + 12 * sq)
    h = np.linspace(lo, hi, 20001)
    alpha = 1.0 - _edgeworth_cdf((h - cp[0]) / sp, sp, cp[2], cp[3])
    beta = _edgeworth_cdf((h - cq[0]) / sq, sq, cq[2], cq[3])
    # monotone in h: α non-increasing, β non-decreasing
    alpha = np.minimum.accumulate(alpha)
    beta = np.maximum.accumulate(beta)
    alpha, beta = alpha[::-1], beta[::-1]
    beta = np.minimum(beta, 1.0 - alpha)
    curve = PiecewiseLinear.from_points(
        np.clip(alpha, 0, 1), np.clip(beta, 0, 1), kind="approximation"
    )
    names = ", ".join(f"{c!r}" + (f"^{k}" if k > 1 else "") for c, k in items)
    curve._name = f"Edgeworth[{names}]"
    return curve


# ---------------------------------------------------------------------------------- GDP fit
def _mu_at(a: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return norm_isf(a) - special.ndtri(y)


#: Numeric (bracketed) curves certify f ≥ G_μ on α ∈ [ALPHA_MIN, 1 − ALPHA_MIN]: their tail
#: masses (≤ 1e-15) are booked at infinite loss, which no finite μ could cover at α → 0.
ALPHA_MIN = 1e-12


def gdp_mu(f: TradeOff) -> float:
    """The smallest μ with f ≥ G_μ: μ* = sup_α [Φ⁻¹(1 − α) − Φ⁻¹(f(α))] (MATH §3).

    Exact for Gaussian, f_{ε,0} (−2Φ⁻¹(1/(1+e^ε))) and PL curves (breakpoints suffice since G_μ
    is convex); for bracketed curves computed from the lower curve, certified on
    α ∈ [ALPHA_MIN, 1 − ALPHA_MIN] (and, when the exact curve is known to be symmetric, on all of
    [ALPHA_MIN, 1 − ALPHA_MIN] from the half α ≤ a_U where the lower curve is accurate); numeric
    otherwise (a grid
    and local refinement, rounded up by 1e-9 relative). ``inf`` when f(0) < 1 or f vanishes
    before α = 1.

    Examples
    --------
    >>> round(gdp_mu(EpsDelta(1.0)), 6) == round(-2 * float(special.ndtri(1 / (1 + math.e))), 6)
    True
    """
    if isinstance(f, Gaussian):
        return f.mu
    if isinstance(f, Identity):
        return 0.0
    if isinstance(f, Bracketed):
        if f.info.get("symmetric"):
            return _gdp_mu_symmetric(f)
        lo = f.lower
        a, b = lo.breakpoints
        sel = (a >= ALPHA_MIN) & (a <= 1 - ALPHA_MIN)
        if np.any(sel & (b <= 0)):
            return math.inf
        return float(max(np.max(_mu_at(a[sel], b[sel])), 0.0)) if sel.any() else math.inf
    if isinstance(f, Approximation):
        return gdp_mu(f.curve)
    if isinstance(f, PiecewiseLinear):
        a, b = f.breakpoints
        if f.q_inf > 0:
            return math.inf
        inner = (a > 0) & (a < 1)
        if np.any(inner & (b <= 0)):
            return math.inf
        vals = _mu_at(a[inner], b[inner])
        return float(max(np.max(vals), 0.0)) if vals.size else 0.0
    a = np.unique(
        np.concatenate(
            [
                np.linspace(0, 1, 4001)[1:-1],
                np.logspace(-14, -1, 300),
                1 - np.logspace(-14, -1, 300),
            ]
        )
    )
    y = np.asarray(f(a))
    if np.any(y <= 0):
        return math.inf
    v = _mu_at(a, y)
    k = int(np.argmax(v))
    lo, hi = a[max(k - 1, 0)], a[min(k + 1, a.size - 1)]
    res = optimize.minimize_scalar(
        lambda t: -float(_mu_at(np.array([t]), np.asarray(f(t)))[0]),
        bounds=(lo, hi),
        method="bounded",
        options={"xatol": 1e-14},
    )
    best = max(float(v[k]), -float(res.fun))
    return best * (1 + 1e-9) + 1e-12


def _gdp_mu_symmetric(f: Bracketed) -> float:
    """μ* for a bracket whose exact curve T is known to be symmetric.

    The expression Φ⁻¹(1 − α) − Φ⁻¹(β) is invariant under (α, β) ↦ (β, α), so for symmetric T it
    suffices to take the sup over α ≤ a_T, the fixed point T(a_T) = a_T; a_T ≤ a_U, the fixed
    point of the upper curve. The sup of the lower curve's expression over (0, a_U] is therefore
    a certified μ (and it avoids the lower curve's round-off cut near α = 1).
    """
    lo, up = f.lower, f.upper
    a, b = lo.breakpoints
    # fixed point of the upper curve: U(α) − α changes sign once
    au = float(optimize.brentq(lambda t: float(up(t)) - t, 0.0, 1.0, xtol=1e-15))
    sel = (a >= ALPHA_MIN) & (a <= au)
    if np.any(sel & (b <= 0)):
        return math.inf
    pts_a = np.append(a[sel], au)
    pts_b = np.append(b[sel], float(lo(au)))
    if pts_b[-1] <= 0:
        return math.inf
    return float(max(np.max(_mu_at(pts_a, pts_b)), 0.0))


def gdp_fit(f: TradeOff) -> tuple[float, float]:
    """(μ*, gap): the best GDP fit μ* = :func:`gdp_mu` and the sup vertical gap f − G_μ* ≥ 0,
    a measure of how far f is from Gaussian (0 for a Gaussian curve)."""
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

"""Rényi differential privacy, for comparison with exact f-DP accounting (theory §10).

RDP of order λ > 1: D_λ(P‖Q) = log E_Q[(dP/dQ)^λ] / (λ − 1) ≤ ρ(λ); composition adds ρ. All
functions take an array of orders and return ρ at each, computed in log space.

- :func:`gaussian` (ρ = λμ²/2), :func:`laplace` (Mironov 2017, Prop 6), :func:`randomized_response`,
  :func:`subsampled_gaussian` (Mironov, Talwar & Zhang 2019: exact binomial sum for integer λ,
  numerical integration of E[(1 − q + q e^{(2z−1)/(2σ²)})^λ] for fractional λ < 64, the chord of
  the integer orders around it above): Poisson sampling, add/remove neighbours.
- :func:`subsampled_gaussian_wor`: fixed-size sampling without replacement, replace-one
  neighbours (Wang, Balle & Kasiviswanathan 2019, Thm 9). An upper bound.
- :func:`to_epsilon`: RDP → (ε, δ) by BBGHS Thm 21 (default) or Mironov's conversion. A bound.
- :func:`to_tradeoff`: RDP → a certified lower trade-off curve (BBGHS; ZDW App F.1).

Examples
--------
>>> import numpy as np
>>> rho = 1000 * subsampled_gaussian(1.0, 0.01, DEFAULT_ORDERS)
>>> round(float(to_epsilon(rho, DEFAULT_ORDERS, 1e-5)), 2)
2.1
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import integrate
from scipy.special import gammaln, logsumexp

from ._checks import as_array, check_int, check_scalar
from ._numerics import MIN_NORMAL, TINY, lower_hull
from ._numerics import UNIT_ROUNDOFF as _U
from .tradeoff import PiecewiseLinear, TradeOff

__all__ = [
    "DEFAULT_ORDERS",
    "gaussian",
    "laplace",
    "randomized_response",
    "subsampled_gaussian",
    "subsampled_gaussian_wor",
    "of_curve",
    "to_epsilon",
    "to_tradeoff",
]

#: Orders used by default (those of the common accountants, plus a few large ones).
DEFAULT_ORDERS = np.concatenate([1.0 + np.arange(1, 100) / 10.0, np.arange(12, 64), [128, 256]])


def _orders(orders: Any) -> np.ndarray:
    return np.atleast_1d(as_array("orders", orders, low=1.0, low_open=True))


def _rho_orders(rho: Any, orders: Any) -> tuple[np.ndarray, np.ndarray]:
    """(orders, ρ) checked: orders > 1, ρ ∈ [0, ∞], the same non-zero length."""
    lam = _orders(orders)
    r = np.atleast_1d(as_array("rho", rho, low=0.0, allow_inf=True))
    if r.shape != lam.shape:
        raise ValueError(f"rho and orders must have the same length, got {r.size} and {lam.size}")
    if r.size == 0:
        raise ValueError("rho and orders must hold at least one order, got none")
    return lam, r


def gaussian(mu: float, orders: Any = DEFAULT_ORDERS) -> np.ndarray:
    """ρ(λ) = λμ²/2 for μ-GDP (the Gaussian mechanism with sensitivity/σ = μ). Exact, rounded
    up (the three roundings of the product, 8u)."""
    m = check_scalar("mu", mu, low=0.0)
    with np.errstate(over="ignore", under="ignore"):
        rho = _orders(orders) * m * m / 2.0 * (1.0 + 8.0 * _U)
    if m == 0.0:
        return rho
    # (a subnormal product carries an absolute error of up to a least subnormal per rounding,
    # which no relative margin covers: μ = 8.3e-160, λ = 78.2 read 2.7236624e-317 for the true
    # 2.72366254e-317; one that underflowed reads the least subnormal, above it)
    return np.where(rho < MIN_NORMAL, rho + 4.0 * TINY, rho)


def _exp_rest(x: np.ndarray) -> np.ndarray:
    """e^x − 1 − x ≥ 0 with relative precision: its Taylor series Σ_{k≥2} x^k/k! (Horner, 18
    terms: the remainder is below u of the sum) where |x| < 1/2, else expm1(x) − x, within
    9u of itself there."""
    x = np.asarray(x, dtype=float)
    small = np.abs(x) < 0.5
    xs = np.where(small, x, 0.0)
    acc = np.full_like(xs, 1.0 / math.factorial(19))
    for k in range(18, 1, -1):  # Σ_{k=2}^{19} x^{k−2}/k! by Horner, then times x²
        acc = acc * xs + 1.0 / math.factorial(k)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(small, acc * xs * xs, np.expm1(x) - x)


def laplace(mu: float, orders: Any = DEFAULT_ORDERS) -> np.ndarray:
    """RDP of the Laplace mechanism with sensitivity/scale μ (Mironov 2017, Prop 6). Exact,
    rounded up.

    ρ(λ) = log( λ/(2λ−1) e^{(λ−1)μ} + (λ−1)/(2λ−1) e^{−λμ} ) / (λ − 1). Where (λ − 1)μ ≤ 1 the
    sum is 1 + S with S = [λ g((λ−1)μ) + (λ−1) g(−λμ)]/(2λ − 1), g(x) = e^x − 1 − x (the first
    order terms cancel exactly: the log-sum-exp read ρ = −5.6e-17 for μ = 1e-9, λ = 2, whose
    exact value is 1e-18), and ρ = log1p(S)/(λ − 1) within 24u; elsewhere the log-sum-exp,
    rounded up by its terms' rounding.
    """
    m = check_scalar("mu", mu, low=0.0)
    lam = _orders(orders)
    with np.errstate(over="ignore"):
        x, y = (lam - 1) * m, lam * m
    near = x <= 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        s = (lam * _exp_rest(np.where(near, x, 0.0)) + (lam - 1) * _exp_rest(
            -np.where(near, y, 0.0))) / (2 * lam - 1)
        small = np.log1p(s) / (lam - 1) * (1.0 + 32.0 * _U)
        a = np.log(lam / (2 * lam - 1)) + x
        b = np.log((lam - 1) / (2 * lam - 1)) - y
        big = _rounded_up(np.logaddexp(a, b), np.maximum(np.abs(a), np.abs(b)) + x, lam)
    return np.where(near, small, big)


def randomized_response(eps: float, orders: Any = DEFAULT_ORDERS) -> np.ndarray:
    """RDP of binary randomized response f_{ε,0}: p = e^ε/(1+e^ε). Exact, rounded up.

    ρ(λ) = log( p^λ (1−p)^{1−λ} + (1−p)^λ p^{1−λ} ) / (λ − 1) = log(p e^x + (1 − p) e^{−x})/(λ − 1)
    with x = (λ − 1)ε. Where x ≤ 700 the sum is 1 + 2 sinh²(x/2) + tanh(ε/2) sinh(x), two
    nonnegative terms (λ p log p + (1 − λ) q log q cancelled: ρ read 1.5e-11 relative low at
    ε = 1.6e-4, λ = 128), and ρ = log1p of that over λ − 1, within 16u; elsewhere the
    log-sum-exp of log p + x and log(1 − p) − x, rounded up by its terms' rounding.
    """
    e = check_scalar("eps", eps, low=0.0)
    lam = _orders(orders)
    with np.errstate(over="ignore", invalid="ignore"):  # (ε ~ 1e308: ρ = ∞)
        x = (lam - 1) * e
        near = x <= 700.0
        xn = np.where(near, x, 0.0)
        s = 2.0 * np.sinh(xn / 2.0) ** 2 + math.tanh(e / 2.0) * np.sinh(xn)
        small = np.log1p(s) / (lam - 1) * (1.0 + 32.0 * _U)
        lp = -math.log1p(math.exp(-e))  # log p
        lq = -e + lp  # log(1 − p)
        t1, t2 = lp + x, lq - x
        big = _rounded_up(np.logaddexp(t1, t2), np.maximum(np.abs(t1), np.abs(t2)) + x, lam)
        return np.where(near, small, np.where(np.isnan(big), np.inf, big))


def _rounded_up(lse: np.ndarray, mag: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """ρ = lse/(λ − 1) rounded up by the log-sum-exp's rounding (8 ulps of its terms' size)
    and at least 0 (a Rényi divergence is; rounding left −2e-15 for rr(0), which to_epsilon
    rejected)."""
    return np.maximum((lse + 8.0 * np.finfo(float).eps * (1.0 + mag)) / (lam - 1), 0.0)


def _log_a_int_up(q: float, sigma: float, lam: int) -> float:
    """log A_λ for integer λ by the binomial sum, rounded up, and at least 0 (A_λ ≥ 1: a Rényi
    divergence is ≥ 0; σ = 1e200 read −1.1e-16).

    The rounding: each term t_k = log C(λ,k) + k log q + (λ − k) log(1 − q) + (k² − k)/(2σ²) is
    a sum of computed parts (log C(λ, k) from exact integers up to λ = 1024, from three
    log-gammas above), within 16u of their magnitudes' sum M_k;
    log-sum-exp moves by at most the weighted mean Σ_k w_k·16u·M_k (w_k = e^{t_k − log A}),
    plus its own rounding, (λ + 3)u + 2u|log A|. (A bound from |log A| + λ alone read ρ one
    ulp below the exact 0.67582837208050566 at σ = 1.11, q = 6.7e-6, λ = 32, where the top term
    is k = 32 with parts of size ~400 that cancel to 22.)
    """
    la, terms, mag = _log_a_int_terms(q, sigma, lam)
    if not math.isfinite(la):
        return max(la, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        w = np.exp(np.minimum(terms - la, 0.0))
        spread = float(np.sum(np.where(np.isfinite(mag) & (w > 0.0), w * mag, 0.0)))
    err = 1.01 * 16.0 * _U * spread + 4e-16 * (abs(la) + lam + 2.0)
    return max(la + err, 0.0)


def _log_a_int(q: float, sigma: float, lam: int) -> float:
    return _log_a_int_terms(q, sigma, lam)[0]


def _log_a_int_terms(q: float, sigma: float, lam: int) -> tuple[float, np.ndarray, np.ndarray]:
    """(log A_λ, the terms t_k, the magnitudes M_k of their parts) of the binomial sum."""
    k = np.arange(lam + 1, dtype=float)
    if lam <= EXACT_BINOMIAL:
        # log C(λ, k) from the exact integers: within a few ulps of itself (through the
        # log-gammas each carried ~u·log λ!, which cancel to it: σ = 30, q = 0.033, λ = 128
        # charged 1.7e-10 of ρ for them, and the k = 0 term, the one that dominates at small q,
        # 0.5 % of ρ = 3e-12 at σ = 26)
        row = [1] * (lam + 1)
        for j in range(1, lam + 1):
            row[j] = row[j - 1] * (lam - j + 1) // j
        logc = np.array([math.log(c) for c in row])
        cmag = np.abs(logc)
    else:
        g, gk, gr = gammaln(lam + 1), gammaln(k + 1), gammaln(lam - k + 1)
        logc = g - gk - gr
        cmag = abs(g) + np.abs(gk) + np.abs(gr)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        # (σ → 0 or ∞: terms of ±∞, no error; k ∈ {0, 1} has no σ term, 0/0 at σ² = 0)
        quad = np.where(k > 1.0, (k * k - k) / (2.0 * sigma * sigma), 0.0)
        a1 = k * math.log(q)
        a2 = (lam - k) * np.log1p(-q)
        terms = logc + a1 + a2 + quad
        mag = cmag + np.abs(a1) + np.abs(a2) + np.abs(quad)
    return float(logsumexp(terms)), terms, mag


def _log_a_frac(q: float, sigma: float, lam: float) -> float:
    """log E_{z~N(0,σ²)}[(1 − q + q e^{(2z − 1)/(2σ²)})^λ] by quadrature around the peak."""
    s2 = sigma * sigma

    def expo(z: float) -> float:
        t = (2 * z - 1) / (2 * s2)
        inner = np.logaddexp(math.log1p(-q), math.log(q) + t) if q < 1 else t
        return float(lam * inner - z * z / (2 * s2))

    zs = np.linspace(-10 * sigma, lam + 10 * sigma, 2001)
    peak = max(expo(float(z)) for z in zs[::20])
    f = lambda z: math.exp(expo(z) - peak)  # noqa: E731
    lo, hi = -12 * sigma - 1, lam + 12 * sigma + 1
    # the integrand has up to two peaks of width ~σ, near z = 0 and z = λ: breakpoints on both
    # sides of each (with the peak at λ an end point of a long interval [0.5, λ], quad missed
    # its left half: log A read log 2 low at λ = 1000.5, σ = 0.1)
    pts = sorted({min(max(z, lo + 1e-3), hi - 1e-3)
                  for z in (0.0, 0.5, lam - 8 * sigma, lam, lam + 8 * sigma)})
    val = integrate.quad(f, lo, hi, points=pts, limit=500, epsabs=0, epsrel=1e-11)[0]
    return peak + math.log(val) - 0.5 * math.log(2 * math.pi * s2)


#: integer orders up to EXACT_BINOMIAL take log C(λ, k) from the exact integers
EXACT_BINOMIAL = 1024
#: orders above MAX_BINOMIAL (whose binomial sum would hold that many terms) take the
#: full-batch Gaussian's ρ, an upper bound
MAX_BINOMIAL = float(2**20)
#: fractional orders λ ≥ FRAC_CHORD take the chord of log A between the integer orders around
#: them (certified: log A_λ = log E[X^λ] is convex in λ), not a quadrature
FRAC_CHORD = 64.0


def _log_a_frac_up(q: float, sigma: float, lam: float) -> float:
    """log A_λ for fractional λ, rounded up.

    Below :data:`FRAC_CHORD`, :func:`_log_a_frac` (quadrature, relative accuracy 1e-11) rounded
    up by 2e-11 of itself. From FRAC_CHORD on, the chord (1 − θ) log A_k + θ log A_{k+1}
    (k = ⌊λ⌋, θ = λ − k) of the integer orders' certified binomial sums: log A_λ is the
    cumulant generating function of log X, X the likelihood ratio, so convex in λ, and the chord
    lies above it (Hölder). Its excess is about θ(1 − θ)/(2σ²) against log A_λ ≈ λ²/(2σ²), below
    1/(4λ²) relative; a quadrature there is no proof (it read log 2 low at λ = 1000.5).
    """
    if lam >= FRAC_CHORD:
        k = math.floor(lam)
        th = lam - k
        a, b = _log_a_int_up(q, sigma, k), _log_a_int_up(q, sigma, k + 1)
        c = (1.0 - th) * a + th * b
        return c + 4.0 * _U * (abs(a) + abs(b)) + TINY  # (the chord's own three roundings)
    la = _log_a_frac(q, sigma, lam)
    return la + 2e-11 * (1.0 + abs(la))


def subsampled_gaussian(
    noise_multiplier: float, sample_rate: float, orders: Any = DEFAULT_ORDERS
) -> np.ndarray:
    """RDP of one step of the Poisson-subsampled Gaussian mechanism (Mironov, Talwar & Zhang 2019).

    ρ(λ) = log A_λ / (λ − 1), A_λ = E_{z~N(0,σ²)}[(1 − q + q e^{(2z−1)/(2σ²)})^λ]; integer λ by
    the binomial expansion Σ_k C(λ,k)(1−q)^{λ−k} q^k e^{(k²−k)/(2σ²)}, fractional λ below 64 by
    numerical integration (relative accuracy ~1e-10) and above by the chord of the integer
    orders around it (log A_λ is convex in λ; see :func:`_log_a_frac_up`); beyond λ = 2²⁰ the
    full-batch Gaussian's λ/(2σ²) (an upper bound: a mixture's Rényi divergence is at most its
    component's).
    """
    s = check_scalar("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    q = check_scalar("sample_rate", sample_rate, low=0.0, high=1.0)
    lam = _orders(orders)
    if q == 0.0:
        return np.zeros_like(lam)
    if q == 1.0 or s > 1e150:
        # the full-batch Gaussian, exact at q = 1 and an upper bound below (a mixture's Rényi
        # divergence to P is at most its component's, by convexity); σ > 1e150, whose σ²
        # overflows the quadrature (NaN), is ρ ≈ λq²/(2σ²) ≤ 1e-300 either way
        return gaussian(1.0 / s, lam)
    out = np.empty_like(lam)
    for i, o in enumerate(lam):
        if o > MAX_BINOMIAL:
            # (the binomial sum would hold λ terms: the full-batch Gaussian's λ/(2σ²), an upper
            # bound by convexity, as at q = 1)
            out[i] = gaussian(1.0 / s, [float(o)])[0]
            continue
        if float(o).is_integer():
            la = _log_a_int_up(q, s, int(o))
        else:
            la = _log_a_frac_up(q, s, float(o))  # quadrature or chord, rounded up
        # (rounded up: the bound is a guarantee; and ρ ≥ 0, tiny negatives were rounding)
        out[i] = max(la, 0.0) / (o - 1)
    return out


def subsampled_gaussian_wor(
    noise_multiplier: float, sample_rate: float, orders: Any = DEFAULT_ORDERS
) -> np.ndarray:
    """An RDP upper bound for one step of the Gaussian mechanism on a batch of fixed size m drawn
    without replacement from n records (γ = m/n), replace-one neighbours.

    ``noise_multiplier`` is the noise std over the mechanism's L2 sensitivity under replace-one
    on the batch (for DP-SGD with noise std σ·C on the sum of gradients clipped to C, pass σ/2).
    The base mechanism then has ε(j) = j/(2σ²) at every order j and ε(∞) = ∞, and Wang, Balle &
    Kasiviswanathan, "Subsampled Rényi Differential Privacy and Analytical Moments Accountant"
    (AISTATS 2019), Thm 9, gives for integer λ ≥ 2
    ρ(λ) ≤ log(1 + γ² C(λ,2) min{4(e^{ε(2)} − 1), 2 e^{ε(2)}}
    + Σ_{j=3}^{λ} 2 γ^j C(λ,j) e^{(j−1)ε(j)}) / (λ − 1).
    A fractional order λ gets the bound of ⌈λ⌉ (Rényi divergences are non-decreasing in the
    order, so this is still an upper bound). Computed in log space.

    Examples
    --------
    >>> r = subsampled_gaussian_wor(1.0, 1.0, [2, 3])   # γ = 1 is looser than exact λ/(2σ²)
    >>> bool(np.all(r >= np.array([2, 3]) / 2))
    True
    """
    s = check_scalar("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    g = check_scalar("sample_rate", sample_rate, low=0.0, high=1.0)
    lam = _orders(orders)
    if g == 0.0:
        return np.zeros_like(lam)
    out = np.empty_like(lam)
    lg = math.log(g)
    e2 = 2.0 / (2.0 * s * s)  # ε(2)
    # log min{4(e^{ε(2)} − 1), 2 e^{ε(2)}}
    second = min(math.log(4.0) + e2 + math.log(-math.expm1(-e2)), math.log(2.0) + e2)
    cache: dict[int, float] = {}
    for i, o in enumerate(lam):
        # (⌈λ⌉ exactly: with a tolerance of 1e-12, λ = 2 + 5e-13 took the bound of order 2,
        # below λ, where Rényi divergences' monotonicity proves nothing)
        a = max(int(math.ceil(float(o))), 2)
        if a not in cache:
            j = np.arange(3, a + 1, dtype=float)
            logc = gammaln(a + 1) - gammaln(j + 1) - gammaln(a - j + 1)
            terms = math.log(2.0) + j * lg + logc + (j - 1.0) * j / (2.0 * s * s)
            first = 2 * lg + math.log(a * (a - 1) / 2.0) + second
            log_a = float(logsumexp(np.concatenate([[0.0, first], terms])))
            cache[a] = log_a / (a - 1)
        out[i] = cache[a]
    # round up (by more than the few ulps of log-space rounding): the bound is a guarantee
    return out * (1.0 + 1e-13) + 1e-300


def of_curve(f: TradeOff, orders: Any = DEFAULT_ORDERS) -> np.ndarray:
    """RDP of a mechanism given by a curve this module knows: Gaussian, Laplace, f_{ε,0},
    the Poisson-subsampled Gaussian (``fdp.operations.Mixture`` of a Gaussian), and discrete
    (piecewise-linear) curves (max of both directions, exact). Others raise TypeError."""
    from .families import EpsDelta, Gaussian, Laplace
    from .operations import Mixture

    lam = _orders(orders)
    if isinstance(f, Gaussian):
        return gaussian(f.mu, lam)
    if isinstance(f, Laplace):
        return laplace(f.mu, lam)
    if isinstance(f, EpsDelta) and f.delta_ == 0.0:
        return randomized_response(f.eps, lam)
    if isinstance(f, Mixture) and isinstance(f.base, Gaussian) and f.base.mu > 0:
        return subsampled_gaussian(1.0 / f.base.mu, f.p, lam)
    if isinstance(f, PiecewiseLinear) and f.kind == "exact":
        p, q, loss = f._segments
        if f.q_inf > 0 or np.any((p > 0) & (q == 0)):
            return np.full(lam.shape, np.inf)
        keep = p > 0
        lp, lq = np.log(p[keep]), np.log(q[keep])
        t1 = lam[:, None] * lq + (1 - lam[:, None]) * lp
        t2 = lam[:, None] * lp + (1 - lam[:, None]) * lq
        d1, d2 = logsumexp(t1, axis=1), logsumexp(t2, axis=1)
        mag = np.maximum(np.abs(t1).max(axis=1), np.abs(t2).max(axis=1)) + np.log(keep.sum())
        return _rounded_up(np.maximum(d1, d2), mag, lam)
    if not isinstance(f, TradeOff):
        raise TypeError(f"f must be a TradeOff, got {type(f).__name__} ({f!r})")
    raise TypeError(
        f"f has no RDP formula here: {f!r} (Gaussian, Laplace, f_(ε,0), the Poisson-subsampled "
        "Gaussian and exact discrete curves have one)"
    )


def to_epsilon(
    rho: Any, orders: Any = DEFAULT_ORDERS, delta: float = 1e-5, method: str = "bbghs"
) -> float:
    """ε at δ from an RDP curve, minimized over orders. A certified upper bound.

    BBGHS Thm 21: ε = ρ(λ) + log((λ−1)/λ) − (log δ + log λ)/(λ − 1); Mironov 2017:
    ε = ρ(λ) + log(1/δ)/(λ − 1).
    """
    lam, r = _rho_orders(rho, orders)
    d = check_scalar("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    if method == "bbghs":
        terms = (r, np.log((lam - 1) / lam), -(math.log(d) + np.log(lam)) / (lam - 1))
    elif method == "mironov":
        terms = (r, np.zeros_like(lam), -math.log(d) / (lam - 1))
    else:
        raise ValueError(f"method must be 'bbghs' or 'mironov', got {method!r}")
    with np.errstate(invalid="ignore"):
        eps = terms[0] + terms[1] + terms[2]
        # (rounded up: each term within a few ulps of its size, the sums within an ulp each)
        eps = eps + 8.0 * np.finfo(float).eps * (np.abs(terms[0]) + np.abs(terms[1])
                                                  + np.abs(terms[2]) + 1e-300)
    return float(max(np.min(eps), 0.0))


def to_tradeoff(rho: Any, orders: Any = DEFAULT_ORDERS, n_alpha: int = 1500) -> PiecewiseLinear:
    """A certified lower trade-off curve implied by RDP (BBGHS; ZDW App F.1, theory §10).

    For each λ the pair (α, β) of any test satisfies (1−α)^{1−λ} β^λ + α^{1−λ} (1−β)^λ ≤ e^{(λ−1)ρ}
    and (1−α)^λ β^{1−λ} + α^λ (1−β)^{1−λ} ≤ e^{(λ−1)ρ}; β(α) ≥ the smallest feasible β, sup over
    λ. The bound B(α) is tabulated on a grid; since the true curve is non-increasing,
    f(α) ≥ B(α_{i+1}) on [α_i, α_{i+1}], and the lower convex hull of those corners is a valid
    convex lower bound.
    """
    lam, r = _rho_orders(rho, orders)
    n_alpha = check_int("n_alpha", n_alpha, low=10, high=10**6)
    fin = np.isfinite(r)
    if not fin.any():  # (ρ = ∞ at every order bounds nothing: the curve of no privacy)
        return PiecewiseLinear(np.array([0.0, 1.0]), np.array([0.0, 0.0]),
                               name="RDP lower bound")
    lam, r = lam[fin], r[fin]
    a = np.unique(np.concatenate([np.logspace(-12, -1, n_alpha // 3), np.linspace(0, 1, n_alpha)]))
    A = a[:, None]
    L = lam[None, :]
    bound = (L - 1) * r[None, :]
    lo = np.zeros((a.size, lam.size))
    hi = np.broadcast_to(1.0 - A, lo.shape).copy()

    def feasible(b: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            la, l1a = np.log(A), np.log1p(-A)
            lb, l1b = np.log(b), np.log1p(-b)
            g1 = np.logaddexp((1 - L) * l1a + L * lb, (1 - L) * la + L * l1b)
            g2 = np.logaddexp(L * l1a + (1 - L) * lb, L * la + (1 - L) * l1b)
            g1 = np.where(A == 0, L * l1b, g1)
            g2 = np.where(A == 0, (1 - L) * l1b, g2)
        return (np.nan_to_num(g1, nan=np.inf) <= bound + 1e-12) & (
            np.nan_to_num(g2, nan=np.inf) <= bound + 1e-12
        )

    for _ in range(60):
        mid = 0.5 * (lo + hi)
        ok = feasible(mid)
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    beta = np.max(lo, axis=1)  # smallest feasible β (rounded down), sup over orders
    beta = np.minimum(beta, 1.0 - a)
    # corners (α_i, B(α_{i+1})) and (α_{i+1}, B(α_{i+1})), then (1, 0)
    xs = np.concatenate([a[:-1], a[1:], [1.0]])
    ys = np.concatenate([beta[1:], beta[1:], [0.0]])
    idx = lower_hull(xs, ys)
    x, y = xs[idx], np.maximum(ys[idx], 0.0)
    if x[0] > 0:
        x, y = np.insert(x, 0, 0.0), np.insert(y, 0, y[0])
    keep = np.concatenate([[True], np.diff(y) <= 0])
    return PiecewiseLinear(x[keep], y[keep], name="RDP lower bound")

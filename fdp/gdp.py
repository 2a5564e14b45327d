"""Exact conversions between μ-GDP and (ε, δ)-DP, and Gaussian-mechanism calibration.

The formulas (theory §3, DRS Cor 2.13): μ-GDP holds iff (ε, δ(ε))-DP holds for every ε ≥ 0 with

    δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).

The two terms cancel catastrophically when ε/μ is large. With a = μ/2 − ε/μ < 0 we use the exact
identity e^ε Φ(a − μ) / Φ(a) = erfcx((μ − a)/√2) / erfcx(−a/√2) (the Gaussian factors cancel because
ε + aμ − μ²/2 = 0), so δ = Φ(a)·(1 − R) with no cancellation beyond that of 1 − R, and log δ is
available down to 1e-300 and below. Every function is vectorized (numpy broadcasting) and exact to
about 1e-12 relative (tested against mpmath at 50 digits); root finding grows its bracket until it
holds the root, so it cannot fail for valid input.

Examples
--------
>>> from fdp import gdp
>>> round(float(gdp.delta(1.0, 1.0)), 6)
0.126937
>>> round(float(gdp.epsilon(1.0, 1e-5)), 6)
4.377178
>>> round(float(gdp.mu(4.377178, 1e-5)), 5)
1.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize, special

from ._checks import as_array
from ._numerics import FLOAT_MAX, MIN_NORMAL, TINY, UNIT_ROUNDOFF, norm_hazard

__all__ = ["delta", "log_delta", "epsilon", "mu", "sigma"]

_SQRT2 = math.sqrt(2.0)


_U = UNIT_ROUNDOFF


def _log_delta_scalar(m: float, e: float) -> float:
    """log δ_μ(ε) for one (μ, ε); μ ≥ 0, ε ∈ ℝ ∪ {±∞}, rounded up (a guarantee errs toward
    less privacy) by a bound on its round-off: a few ulps of each term (log Φ, ε, the erfcx
    ratio) and of a = μ/2 − ε/μ (times the normal hazard), divided by the size of the
    difference where δ is one of two close terms. The bound is capped at a relative 1e-6 of
    log δ: it is larger only where float64 inputs cannot resolve δ at all (μ/2 + |ε|/μ ≳ 1e10,
    beyond μ ≤ 1e3 and |ε| ≤ 1e4 by far), and the value is then the float computation's."""
    val, margin = _log_delta_parts(m, e)
    if not math.isfinite(val):
        return val
    # (+ the log's own rounding, an ulp of |log δ|: near δ = 1e-300 that is 1e-13 relative in δ,
    # above the terms' few ulps; and below the normal range products with μ are exact only to
    # the least subnormal, a relative TINY/μ: μ(0, 1e-320) was 1.2e-4 above the exact μ)
    margin += 2.0 * _U * abs(val) + (64.0 * TINY / m if 0.0 < m < 1e-290 else 0.0)
    return min(val + min(margin, 1e-6 * max(abs(val), 1.0)), 0.0)


def _log_delta_parts(m: float, e: float) -> tuple[float, float]:
    """(log δ_μ(ε) as computed, a bound on its round-off)."""
    m, e = float(m), float(e)  # Python floats: an overflowing bound is inf, without a warning
    if e == math.inf:
        return -math.inf, 0.0
    if e == -math.inf:
        return 0.0, 0.0
    if m == 0.0:
        return (math.log(-math.expm1(e)), 4.0 * _U) if e < 0 else (-math.inf, 0.0)
    if m == math.inf:
        return 0.0, 0.0
    a = m / 2.0 - e / m
    if not math.isfinite(a):  # ε/μ overflows: δ < exp(−1e300)
        return (-math.inf if a < 0 else 0.0), 0.0
    # a = μ/2 − ε/μ to a few ulps of its terms; log Φ(z) moves by the normal hazard φ(z)/Φ(z)
    # times z's error (≤ |z| + 1 for z < 0)
    da = 4.0 * _U * (m / 2.0 + abs(e) / m)
    if a < 0.0:
        u = -a / _SQRT2
        c = m / _SQRT2
        ratio = float(special.erfcx(u + c) / special.erfcx(u)) if u < 1e150 else 1.0
        head = float(special.log_ndtr(a))
        if not math.isfinite(head):
            return head, 0.0
        margin = 8.0 * _U * (abs(head) + 1.0) + da * (abs(a) + 2.0)
        if ratio < 0.999:
            # log(1 − R) with R to a few ulps: its error is about u·R/(1 − R) ≤ 1000u, and
            # |d log R/du| ≤ c·max|(log erfcx)″| ≤ 2c times u's error da/√2
            r = ratio / (1.0 - ratio)
            dr = 64.0 * _U + min(2.0 * c, abs(a) + 2.0) * da
            return head + math.log1p(-ratio), margin + dr * r
        # 1 − R is small: compute it without cancellation, (erfcx(u) − erfcx(u + c))/erfcx(u)
        return head + _log_one_minus_ratio(u, c), 2.0 * margin + 64.0 * _U
    # a ≥ 0: δ = Φ(a) − exp(ε + log Φ(a − μ)); Φ(a) ≥ 1/2 so no tail cancellation
    lsec = float(special.log_ndtr(a - m))
    second = e + lsec
    first = float(special.log_ndtr(a))
    # x = second − first is known to dx; log(−expm1(x)) then to dx times its derivative
    # 1/(e^{−x} − 1) (large where δ is the difference of two close terms)
    dx = (16.0 * _U * (abs(e) + abs(lsec) + abs(first) + 1.0)
          + float(norm_hazard(a - m, lsec)) * (da + 2.0 * _U * m)
          + float(norm_hazard(a, first)) * da)
    x = second - first
    if m <= 0.1 and x > -1e-2:
        # small μ: Φ(a) and e^ε Φ(a − μ) are close; δ = [Φ(a) − Φ(a − μ)] − (e^ε − 1) Φ(a − μ),
        # the first term by 8-point Gauss–Legendre of φ over [a − μ, a] (error below 1e-20
        # relative for μ ≤ 0.1), the second term a small correction (|ε| ≤ μ²/2 + ... here)
        z = (a - m) + 0.5 * m * (_GL_X + 1.0)
        dphi = 0.5 * m * float(np.dot(_GL_W, np.exp(-0.5 * z * z))) / math.sqrt(2.0 * math.pi)
        val = dphi - math.expm1(e) * math.exp(lsec)
        if val > 0.0:
            err = 16.0 * _U * (dphi + abs(math.expm1(e)) * math.exp(lsec))
            return math.log(val), min(err / val, 1.0)
    if x >= -dx:
        # δ is below the resolution of the difference: δ = Φ(a)(1 − e^x) ≤ Φ(a)·2dx
        return first + math.log(2.0 * dx), 0.0
    with np.errstate(over="ignore"):
        slope = 1.0 / math.expm1(-x) if -x < 700.0 else 0.0
    return first + math.log(-math.expm1(x)), 1.01 * dx * slope + 16.0 * _U * (abs(first) + 1.0)


_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)
_SQRTPI = math.sqrt(math.pi)


def _g_times_x2(x: float) -> float:
    """x²·g(x) for x > 0, where g = −erfcx′ = 2/√π − 2x erfcx(x) > 0 (no cancellation)."""
    if x <= 20.0:
        return x * x * (2.0 / _SQRTPI - 2.0 * x * float(special.erfcx(x)))
    # asymptotic series g(x) = (2/√π) Σ_{n≥1} (−1)^{n+1} (2n−1)!!/(2x²)^n, n ≤ 12 (error < 1e-20)
    y = 1.0 / (2.0 * x * x)
    total, term = 0.0, 0.5  # term = (2n−1)!! y^{n−1} / 2 for n = 1
    for n in range(1, 13):
        total += term if n % 2 else -term
        term *= (2 * n + 1) * y
    return 2.0 / _SQRTPI * total


def _log_one_minus_ratio(u: float, c: float) -> float:
    """log(1 − erfcx(u + c)/erfcx(u)) for u > 0, c > 0 when 1 − R is small (< 1e-3, so
    c ≲ 1e-3·max(1, u)): log of ∫_u^{u+c} g(x) dx / erfcx(u), the integral by 8-point
    Gauss–Legendre (g is smooth and nearly constant on the interval relative to its scale, so the
    rule is exact to rounding), all in log space so that nothing underflows."""
    xs = u + 0.5 * c * (_GL_X + 1.0)
    # u·erfcx(u), without underflow for huge u
    ue = u * float(special.erfcx(u)) if u < 1e8 else (1.0 - 0.5 / u / u) / _SQRTPI
    total = 0.0
    for x, w in zip(xs, _GL_W, strict=True):
        total += w * _g_times_x2(float(x)) * (u / x) ** 2
    # ∫ g ≈ (c/2) Σ w x²g(x)/x², and 1/x² = (u/x)²/u²; erfcx(u) = ue/u
    if c <= 0.0:  # (μ = 0: nothing between the terms)
        return -math.inf
    # (log 0.5 + log c: 0.5·c underflows to 0 for c = 5e-324, μ = 1e-323, a math domain error)
    return math.log(0.5) + math.log(c) + math.log(total) - math.log(u) - math.log(ue)


_log_delta_v = np.vectorize(_log_delta_scalar, otypes=[float])


def log_delta(mu: Any, eps: Any) -> float | np.ndarray:
    """log δ_μ(ε) (natural log), finite far below the float64 range of δ itself."""
    m = as_array("mu", mu, low=0.0, allow_inf=True)
    e = as_array("eps", eps, allow_inf=True)
    with np.errstate(over="ignore"):  # a round-off bound may overflow to inf (then capped)
        # (at most 0: log δ read +inf for μ ≥ 1e155, where the bound overflowed)
        out = np.minimum(_log_delta_v(m, e), 0.0)
    return float(out) if out.ndim == 0 else out


def delta(mu: Any, eps: Any) -> float | np.ndarray:
    """δ(ε) of μ-GDP: Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (DRS Cor 2.13). Exact.

    Parameters
    ----------
    mu : float or array, μ ≥ 0 (μ = 0 is perfect privacy).
    eps : float or array, ε ∈ ℝ (ε < 0 gives the profile of the full curve).

    Examples
    --------
    >>> round(float(delta(1.0, 0.0)), 6)  # the advantage Φ(1/2) − Φ(−1/2)
    0.382925
    """
    ld = np.asarray(log_delta(mu, eps), dtype=float)
    with np.errstate(under="ignore"):
        # rounded up: a positive δ below the float range is the least subnormal, not 0 (δ = 0
        # would claim pure DP at ε, and the Gaussian's loss is unbounded)
        raw = np.exp(ld)
        # below the normal range e^x keeps only an absolute precision of half the least
        # subnormal: one more of it rounds up (δ(0.4772, 18.41) read 5e-324 for 6.17e-324);
        # where it underflowed to 0, δ is below half of it and the least subnormal bounds it
        raw = np.where(raw == 0.0, TINY, np.where(raw < MIN_NORMAL, raw + TINY, raw))
        # δ = 0 exactly only for μ = 0 (at ε ≥ 0) or ε = +∞; elsewhere log δ may overflow to
        # −∞ (μ = 1e-200, ε = 1e-12: log δ ≈ −5e375) while δ > 0: the least subnormal
        m = np.asarray(mu, dtype=float)
        e = np.asarray(eps, dtype=float)
        positive = (m > 0.0) & (e < np.inf)
        out = np.where(ld > -np.inf, raw, np.where(positive, TINY, 0.0))
    return float(out) if np.ndim(out) == 0 else out


def _epsilon_scalar(m: float, d: float, down: bool = False) -> float:
    """ε(δ) of μ-GDP for one (μ, δ), rounded up (a guarantee) or, with ``down``, rounded down
    from the rounded-down δ (the optimistic side of a bracket whose curve is G_μ)."""
    m, d = float(m), float(d)  # Python floats: overflow to inf without a warning
    if m == 0.0 or d >= 1.0:
        return 0.0
    if d == 0.0 or m == math.inf:
        return math.inf
    target = math.log(d)
    log_delta = _log_delta_lower_scalar if down else _log_delta_scalar

    def g(e: float) -> float:
        return log_delta(m, e) - target

    if g(0.0) <= 0:
        return 0.0
    hi = m * m / 2.0 + m * math.sqrt(2.0 * max(-target, 1.0)) + 1.0
    while math.isfinite(hi) and g(hi) > 0:
        hi *= 2.0
    if not math.isfinite(hi):
        hi = FLOAT_MAX
        if g(hi) > 0:  # the exact ε exceeds the largest float: inf is the conservative answer
            return FLOAT_MAX if down else math.inf  # (and the largest float a lower bound)
    e = float(optimize.brentq(g, 0.0, hi, xtol=1e-300, rtol=1e-15, maxiter=5000))
    checked = False
    for _ in range(64):
        if down:  # round down: δ(e) ≥ delta there, so e is below the exact ε
            if g(e) >= 0:
                checked = True
                break
            e = math.nextafter(e, 0.0) * (1.0 - 2e-16)
        else:  # round up: the reported ε must satisfy δ(ε) ≤ delta (conservative)
            if g(e) <= 0:
                checked = True
                break
            e = math.nextafter(e, math.inf) if e > 0 else TINY
            e *= 1.0 + 2e-16
    if (d < MIN_NORMAL or not checked) and 0.0 < e < math.inf:
        # a subnormal δ: float64 holds it (and the terms near it) only to an absolute half of
        # the least subnormal, so the side is checked in mpmath and e moved until it holds
        # (gdp.epsilon(1e-300, 1e-320) read 9.0000e-300 for the exact 9.0220e-300); so is a
        # root the float bound did not confirm in 64 steps (it was returned unconfirmed)
        e = _mp_side(lambda x: (_mp_delta(m, x) >= d) if down else (_mp_delta(m, x) <= d),
                     e, -1.0 if down else 1.0)
    return e


def _mp_side(ok: Any, x: float, sign: float) -> float:
    """The first x' = x (1 + sign s) with ok(x') found by doubling s from 2⁻²⁰, then bisected
    to 2⁻²⁰ relative between the last failing and the first passing point (ok is monotone in
    that direction): the side is ok's, to within a relative 2⁻¹⁹ of the closest point."""
    if ok(x):
        return x
    bad, step = x, 2.0**-20
    while True:
        good = x * (1.0 + sign * step)
        if ok(good):
            break
        bad, step = good, step * 2.0
        if step > 0.5:
            return math.inf if sign > 0 else 0.0
    while abs(good - bad) > 2.0**-20 * abs(good):
        mid = 0.5 * (good + bad)
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good


def _mp_delta(m: float, e: float) -> Any:
    """δ_μ(ε) = [Φ(a) − Φ(b)] − expm1(ε) Φ(b), a = μ/2 − ε/μ, b = −μ/2 − ε/μ, in mpmath with
    the digits that resolve it (the difference of Φ's is ~μ φ, δ may be subnormal): used only
    to check the side of answers at subnormal δ."""
    import mpmath

    digits = 40 + int(max(0.0, -math.log10(m)) + max(0.0, e / math.log(10.0) + 2.0 * math.log10(
        1.0 + e / m)))
    with mpmath.workdps(min(digits, 2000)):
        mm, ee = mpmath.mpf(m), mpmath.mpf(e)
        a, b = mm / 2 - ee / mm, -mm / 2 - ee / mm
        return (mpmath.ncdf(a) - mpmath.ncdf(b)) - mpmath.expm1(ee) * mpmath.ncdf(b)


def _log_delta_lower_scalar(m: float, e: float) -> float:
    """log δ_μ(ε) rounded DOWN by the same round-off bound (the optimistic side of a
    bracket whose curve is G_μ itself: δ must not exceed the truth there either)."""
    val, margin = _log_delta_parts(m, e)
    if not math.isfinite(val):
        return val
    # (the log's own rounding and subnormal μ, as in _log_delta_scalar)
    margin += 2.0 * _U * abs(val) + (64.0 * TINY / m if 0.0 < m < 1e-290 else 0.0)
    return val - margin if math.isfinite(margin) else -math.inf


_epsilon_v = np.vectorize(_epsilon_scalar, otypes=[float])


_epsilon_lower_v = np.vectorize(lambda m, d: _epsilon_scalar(m, d, down=True),
                                otypes=[float])
_log_delta_lower_v = np.vectorize(_log_delta_lower_scalar, otypes=[float])


def epsilon(mu: Any, delta: Any) -> float | np.ndarray:
    """The smallest ε ≥ 0 with δ_μ(ε) ≤ delta: μ-GDP ⇒ (ε, delta)-DP. Exact (root of a monotone
    function, to ~1e-15 relative).

    0 when delta ≥ δ_μ(0); ``inf`` when delta = 0 and μ > 0.

    Examples
    --------
    >>> round(float(epsilon(0.5, 1e-10)), 6)
    3.09943
    """
    m = as_array("mu", mu, low=0.0)
    d = as_array("delta", delta, low=0.0, high=1.0)
    with np.errstate(over="ignore", invalid="ignore"):  # (as in mu())
        out = _epsilon_v(m, d)
    return float(out) if out.ndim == 0 else out


def _mu_scalar(e: float, d: float) -> float:
    e, d = float(e), float(d)
    if d >= 1.0 or e == -math.inf:
        return math.inf
    if d == 0.0:
        return 0.0
    if e == math.inf:
        return math.inf
    target = math.log(d)

    def g(logm: float) -> float:
        return _log_delta_scalar(math.exp(logm), e) - target

    lo, hi = -1.0, 1.0
    while g(lo) > 0:
        if lo <= -744.0:  # no μ above the smallest float is proven to meet the target
            return 0.0
        lo = max(2.0 * lo, -744.0)
    while g(hi) < 0:
        hi = hi * 2.0 if hi > 0 else 1.0
        if hi > 700:
            return math.inf
    m = math.exp(optimize.brentq(g, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500))
    # round down: μ-GDP with the reported μ must imply (ε, δ)-DP (conservative); log δ is
    # compared with log(delta) rounded down (its rounding is half an ulp of |log delta|)
    floor = target - 2.0 * _U * abs(target)
    checked = False
    for _ in range(64):
        if _log_delta_scalar(m, e) <= floor:
            checked = True
            break
        m *= 1.0 - 2e-16
        m = math.nextafter(m, 0.0)
    if m > 0.0 and (not checked or d < MIN_NORMAL or _unresolved(m, e)):
        # (a subnormal δ, a root the float bound could not confirm, or a round-off bound past
        # _log_delta_scalar's cap, where float64 cannot resolve δ: ε ≳ 1e20. The side checked
        # in mpmath, as ε's: gdp.mu(1e56, 1e-5) read 80 ulps above the exact μ, where
        # δ_μ(ε) = 1, after 64 failed steps down)
        m = _mp_side(lambda x: _mp_delta(x, e) <= d, m, -1.0)
    return m


def _unresolved(m: float, e: float) -> bool:
    """Whether log δ_μ(ε)'s round-off bound exceeds the cap of :func:`_log_delta_scalar`
    (its value is then the float computation's, not a bound)."""
    val, margin = _log_delta_parts(m, e)
    return math.isfinite(val) and not margin + 2.0 * _U * abs(val) <= 1e-6 * max(abs(val), 1.0)


_mu_v = np.vectorize(_mu_scalar, otypes=[float])


def mu(eps: Any, delta: Any) -> float | np.ndarray:
    """The μ with δ_μ(ε) = delta: the largest μ for which μ-GDP implies (ε, delta)-DP. Exact.

    This is the GDP reading of an (ε, δ) target (Gomez, Kulynych et al. 2025): a mechanism that is
    μ-GDP with μ ≤ mu(ε, δ) is (ε, δ)-DP. (The smallest μ with f_{ε,δ} ≥ G_μ is infinite for δ > 0,
    since f_{ε,δ}(0) < 1; see :meth:`fdp.TradeOff.gdp_mu` for curves.)

    Examples
    --------
    >>> round(float(mu(1.0, 0.126937)), 4)
    1.0
    """
    e = as_array("eps", eps, low=0.0, allow_inf=True)
    d = as_array("delta", delta, low=0.0, high=1.0)
    # (the scalar code handles non-finite intermediates itself: inf − inf in a far bracket
    # set the FPU's invalid flag, which np.vectorize reported as a RuntimeWarning)
    with np.errstate(over="ignore", invalid="ignore"):
        out = _mu_v(e, d)
    return float(out) if out.ndim == 0 else out


def sigma(eps: Any, delta: Any, sensitivity: Any = 1.0) -> float | np.ndarray:
    """Exact (analytic) Gaussian-mechanism noise: the smallest σ with (ε, δ)-DP for L2
    sensitivity Δ: σ = Δ / mu(ε, δ) (Balle & Wang 2018; DRS Thm 2.7). Exact.

    Always smaller than the classical σ = Δ √(2 ln(1.25/δ)) / ε (Dwork & Roth, valid for ε < 1).

    Examples
    --------
    >>> round(float(sigma(1.0, 1e-5)), 4)
    3.7306
    """
    s = as_array("sensitivity", sensitivity, low=0.0, low_open=True)
    m = mu(eps, delta)
    # (μ below Δ/1.8e308, a denormal, gives σ = ∞: more noise than a float holds, rounded up)
    with np.errstate(divide="ignore", over="ignore"):
        out = s / np.asarray(m)
    return float(out) if np.ndim(out) == 0 else out

"""The closed-form families: G_μ, f_{ε,δ}, Laplace L_μ and the identity Id (theory §2).

Each family overrides the generic algorithms of :class:`fdp.TradeOff` with its closed forms for
evaluation, inverse, δ(ε), ε(δ) and the binned privacy-loss distribution used by the composition
engine. All results are exact (to float64 rounding, with log-space arithmetic in the tails).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from . import gdp
from ._checks import check_scalar
from ._numerics import TINY, UNIT_ROUNDOFF, norm_cdf, norm_hazard, norm_isf, norm_sf
from .tradeoff import LossBins, PiecewiseLinear, TradeOff, outcome_bin_losses, tiny_bins

__all__ = ["Gaussian", "EpsDelta", "Laplace", "Identity"]


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _tex_num(x: float) -> str:
    s = f"{x:.3g}"
    if "e" in s:
        m, e = s.split("e")
        return (f"{m}\\cdot" if m != "1" else "") + f"10^{{{int(e)}}}"
    return s


def normal_bin_masses(z: np.ndarray, shift: float = 0.0) -> tuple[np.ndarray, float, float]:
    """Standard-normal masses of the bins (z_j − s, z_{j+1} − s] and of the tails below z_0 − s,
    above z_M − s (s = ``shift``: the same bins under N(s, 1), each of width z_{j+1} − z_j, as
    a pair's P- and Q-masses must be: the Q-bins of G_μ from their own rounded ends were a
    different partition, and log(q/p) moved by 1e-9 of the mass ratio at a step of 1e-7).

    Differences are taken in whichever tail keeps relative precision. Narrow bins (w = z_{j+1} −
    z_j with w (|z_j − s| + 4) ≤ 1/4) take the series :func:`_narrow_normal_masses` instead: the
    difference of two tails there cancels to a relative error of u/(hazard · w) (2.8e-9 of the
    mass at w = 1e-7, which moved a bin's loss log(q/p) by 3 % of a grid step of 1e-7, beyond
    the rounding :func:`fdp.pld._bin_offsets` charges; measured against mpmath). Elsewhere the
    difference keeps at least a sixth of the larger tail (within ~50 ulps).
    """
    zs = z - shift if shift else z
    a = zs[:-1]
    with np.errstate(invalid="ignore", over="ignore"):
        w = z[1:] - z[:-1]
        mag = np.abs(a)
        narrow = (w * (mag + 4.0) <= 0.25) & (w > 0.0) & (mag <= _A_MAX)
    mass = np.empty_like(a)
    if narrow.all():  # (fine grids: no tail differences at all, only the two outer tails)
        for i in range(0, a.size, _BLOCK):  # (in blocks that stay in cache)
            j = min(i + _BLOCK, a.size)
            mass[i:j] = _narrow_normal_masses(a[i:j], w[i:j])
    else:
        idx = np.flatnonzero(narrow)
        for i in range(0, idx.size, _BLOCK):
            k = idx[i : i + _BLOCK]
            mass[k] = _narrow_normal_masses(a[k], w[k])
        wide = np.flatnonzero(~narrow)
        lo, hi = zs[wide], zs[wide + 1]
        up = lo >= 0  # (each in the tail that keeps relative precision)
        mass[wide] = np.where(up, norm_sf(np.where(up, lo, 0.0)) - norm_sf(np.where(up, hi, 0.0)),
                              norm_cdf(np.where(up, 0.0, hi)) - norm_cdf(np.where(up, 0.0, lo)))
    return np.maximum(mass, 0.0), float(norm_cdf(zs[0])), float(norm_sf(zs[-1]))


def normal_bin_loss_bounds(z: np.ndarray, mu: float, p: np.ndarray,
                           q: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Bounds on the losses λ_j = log(q_j/p_j) of G_μ's bins (z_j, z_{j+1}] (P: N(0, 1), Q:
    N(μ, 1), as :func:`normal_bin_masses` bins them) whose P- or Q-mass ``p``, ``q`` is below
    :data:`~fdp.tradeoff.TINY_P` (NaN elsewhere; None if there are none), for
    :class:`~fdp.tradeoff.LossBins`.

    Such a mass is subnormal or a difference of subnormal tails (|z| ≳ 37.5, where the series of
    :func:`_narrow_normal_masses` has no normal φ): it keeps a few bits, and log(q/p) of it read
    a bin's loss half a grid step below the truth (G_38.96 at a step of 1.2e-7 in loss, against
    mpmath). Here both masses are taken in log space (:func:`_log_normal_bin_masses`), and
    λ̂ = log q − log p is widened by 64u (|log q| + |log p|) + 512u, which bounds their rounding
    (see there).
    """
    tiny = tiny_bins(p, q)
    if not tiny.any():
        return None
    k = np.flatnonzero(tiny)
    with np.errstate(invalid="ignore", over="ignore"):
        a = z[k]
        w = z[k + 1] - a
        ok = np.isfinite(a) & np.isfinite(w) & (w > 0.0)
    k, a, w = k[ok], a[ok], w[ok]
    # (the Q-bin's end as normal_bin_masses takes it: z_j − μ rounded, the same width)
    lp = _log_normal_bin_masses(a, w)
    lq = _log_normal_bin_masses(a - mu, w)
    lam = lq - lp
    pad = UNIT_ROUNDOFF * (64.0 * (np.abs(lq) + np.abs(lp)) + 512.0)
    good = np.isfinite(lam) & np.isfinite(pad)
    lo, hi = np.full(p.size, np.nan), np.full(p.size, np.nan)
    lo[k[good]] = (lam - pad)[good]
    hi[k[good]] = (lam + pad)[good]
    return lo, hi


def _log_normal_bin_masses(c: np.ndarray, w: np.ndarray) -> np.ndarray:
    """log(Φ(c + w) − Φ(c)) for finite c and w > 0, in log space (no underflow at any |c|).

    Narrow bins (w (|c| + 4) ≤ 1/4): −c²/2 − log √(2π) + log w + log S(c, w), the series of
    :func:`_narrow_normal_masses` (S ≥ 0.77 within ~N ulps; every term but log S has the sign
    of the result, so the sum is within ~4u of |result| + 0.6). Wide bins: the difference of
    two log-tails on the bin's side of 0, log Φ̄(c) + log(−expm1(log Φ̄(c + w) − log Φ̄(c))) (or
    the mirror), and log(Φ(c + w) − Φ(c)) where the bin holds 0. The ratio of the tails is at
    most 0.9502 for a wide bin (the largest, over c ≥ 0, of Φ̄(c + w)/Φ̄(c) at the narrowest
    wide width w = 1/(4(c + 4)): at c = 0, by a scan of c up to 1e4; the ratio falls as w
    grows), so the difference amplifies the log-tails' error (scipy's, ≈ (0.6 z² + 2) ulps
    relative to Φ, ≤ 1.2u |log Φ| + 4u) at most 20-fold: within 24u of the tails' sizes and
    80u more; a tail below the bin's mass enters multiplied by its ratio to it. Measured
    against mpmath in tests/test_pld.py."""
    out = np.empty_like(c)
    narrow = w * (np.abs(c) + 4.0) <= 0.25
    if narrow.any():
        cn, wn = c[narrow], w[narrow]
        out[narrow] = (-0.5 * cn * cn - _LOG_SQRT_2PI + np.log(wn)
                       + np.log(_hermite_sum(cn, wn)))
    wide = ~narrow
    if wide.any():
        cw, ww = c[wide], w[wide]
        top = cw + ww
        up, down = cw >= 0.0, top <= 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            # upper side: tails Φ̄(c) ≥ Φ̄(c + w); lower side: Φ(c + w) ≥ Φ(c)
            big = np.where(up, special.log_ndtr(-cw), special.log_ndtr(top))
            small = np.where(up, special.log_ndtr(-top), special.log_ndtr(cw))
            res = big + np.log(-np.expm1(small - big))
            mid = np.log(special.ndtr(top) - special.ndtr(cw))
        out[wide] = np.where(up | down, res, mid)
    return out


#: 1/(n + 1)! for the series of :func:`_narrow_normal_masses`
_INV_FACT = tuple(1.0 / math.factorial(n + 1) for n in range(40))
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
#: the largest |a| the series is used at: φ(a) stays normal (beyond, both ways keep only a
#: subnormal's bits); φ(37.5) = 1.1e-306
_A_MAX = 37.5
#: bins per block of the series (its temporaries stay in cache)
_BLOCK = 8192


def _narrow_normal_masses(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The masses Φ(a + w) − Φ(a) = φ(a) w S(a, w) of narrow bins (|a| ≤ 37.5: φ(a) normal),
    S = Σ_{n≥0} (−1)ⁿ Heₙ(a) wⁿ/(n + 1)!, where a = z_j and w = z_{j+1} − z_j (exact where the
    grid is fine: Sterbenz) are the bin's left end and width.

    **Claim.** With r = w(|a| + 4) ≤ 1/4 the series stopped after its term N, the least with
    rᴺ⁺¹/(N + 2)! ≤ u/8, is within u/4 of S, and S ≥ e^{−aw − w²/2} ≥ 0.77.
    **Proof.** e^{−at − t²/2} = Σ Heₙ(−a) tⁿ/n! (the generating function of the probabilists'
    Hermite polynomials), Heₙ(−a) = (−1)ⁿ Heₙ(a); integrate over [0, w] and divide by w. For
    n ≤ 16, |Heₙ(a)| ≤ (|a| + √n)ⁿ ≤ (|a| + 4)ⁿ: the a^{n−2k} term of Heₙ has coefficient
    n!/(k! (n − 2k)! 2ᵏ) = C(n, 2k)(2k − 1)!! ≤ C(n, 2k) nᵏ, that of (|a| + √n)ⁿ. So the n-th
    term is at most rⁿ/(n + 1)!, and the tail after N at most 2 r^{N+1}/(N + 2)! (ratios
    ≤ r/2 ≤ 1/2). The integrand is at least
    e^{−|a|w − w²/2} on [0, w]. ∎ The terms gₙ = Heₙ(a) wⁿ follow
    g_{n+1} = a w gₙ − n w² g_{n−1}; φ(a) = e^{−a²/2}/√(2π) is within a few ulps of a²'s size
    (the same as Φ's own sensitivity to a), and the rest within ~N ulps: no cancellation."""
    total = _hermite_sum(a, w)
    total *= w
    phi = a * a
    phi *= -0.5
    np.exp(phi, out=phi)
    total *= phi
    total *= _INV_SQRT_2PI
    return total


def _hermite_sum(a: np.ndarray, w: np.ndarray) -> np.ndarray:
    """S(a, w) = Σ_{n≥0} (−1)ⁿ Heₙ(a) wⁿ/(n + 1)! of :func:`_narrow_normal_masses` (for
    w (|a| + 4) ≤ 1/4: within u/4 + ~N ulps of S ≥ 0.77, any |a|)."""
    rmax = float(np.max(w * (np.abs(a) + 4.0))) if a.size else 0.0
    n_terms = 1
    while n_terms < 16 and rmax ** (n_terms + 1) * _INV_FACT[n_terms + 1] > UNIT_ROUNDOFF / 8.0:
        n_terms += 1
    # (in place on a few buffers: temporaries of grid size cost a page fault per page)
    aw = a * w
    w2 = w * w
    total = aw * -_INV_FACT[1]
    total += 1.0  # terms 0 and 1: 1 − a w/2
    if n_terms >= 2:
        g_prev, g = aw.copy(), aw * aw  # (a copy: the buffers rotate below)
        g -= w2  # g₂ = (a² − 1) w²
        tmp = np.empty_like(a)
        np.multiply(g, _INV_FACT[2], out=tmp)
        total += tmp
        nxt = np.empty_like(a)
        for n in range(2, n_terms):
            np.multiply(aw, g, out=nxt)
            np.multiply(w2, g_prev, out=tmp)
            tmp *= float(n)
            nxt -= tmp  # g_{n+1} = a w gₙ − n w² g_{n−1}
            np.multiply(nxt, _INV_FACT[n + 1], out=tmp)
            if n % 2:
                total += tmp
            else:
                total -= tmp
            g_prev, g, nxt = g, nxt, g_prev
    return total


class Gaussian(TradeOff):
    """G_μ = T(N(0, 1), N(μ, 1)): G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (DRS Def 2.6). Exact.

    Adding N(0, Δ²/μ²) noise to a query of L2 sensitivity Δ is μ-GDP (DRS Thm 2.7). μ = 0 is Id.

    Parameters
    ----------
    mu : float, 0 ≤ μ < ∞.

    Examples
    --------
    >>> f = Gaussian(1.0)
    >>> round(f(0.05), 6), round(f.epsilon(1e-5), 6)
    (0.740489, 4.377178)
    >>> (Gaussian(3.0) @ Gaussian(4.0)).mu
    5.0
    """

    def __init__(self, mu: Any) -> None:
        self.mu = check_scalar("mu", mu, low=0.0)

    def _eval(self, alpha: np.ndarray) -> np.ndarray:
        """Φ(Φ⁻¹(1 − α) − μ), rounded down (the guarantee side) by a bound on its round-off."""
        v, rel, fin = self._value_and_error(alpha)
        with np.errstate(invalid="ignore"):
            # (and two subnormal ulps, which no relative margin reaches below the normal range:
            # a no-op on normal values)
            return np.where(fin, np.maximum(v * np.maximum(1.0 - rel, 0.0) - 2.0 * TINY, 0.0), v)

    def _value_and_error(self, alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(Φ(w), a bound on its relative round-off, where w is finite), w = Φ⁻¹(1 − α) − μ:
        z = Φ⁻¹(1 − α) and w to a few ulps of their size, which move log Φ(w) by the normal
        hazard φ(w)/Φ(w) (≈ |w| for w → −∞, → 0 for w → +∞) times that."""
        with np.errstate(invalid="ignore"):
            z = norm_isf(alpha)
            w = z - self.mu
            v = norm_cdf(w)
            with np.errstate(divide="ignore"):
                lc = np.log(np.maximum(v, 1e-300))
                small = v < 1e-300
                if np.any(small):  # (log Φ itself: clamped at 1e-300, the hazard read 0.12
                    # for 37 at w = −37.2, and G_37.8(0.27) 3e-14 above the truth)
                    lc = np.where(small, special.log_ndtr(np.where(small, w, 0.0)), lc)
                hz = norm_hazard(w, lc)
            rel = 4.0 * UNIT_ROUNDOFF * (1.0 + 2.0 * hz * (np.abs(z) + self.mu + 1.0))
        return v, rel, np.isfinite(w)

    def inverse(self) -> Gaussian:
        """G_μ is symmetric: G_μ⁻¹ = G_μ."""
        return self

    def _as_upper(self) -> Gaussian:
        """G_μ read as the optimistic side of a bracket: β rounded up, δ and ε down."""
        return _OptimisticGaussian(self.mu)

    @property
    def is_symmetric(self) -> bool:
        return True

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        return np.asarray(gdp.delta(self.mu, eps), dtype=float)

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        return np.asarray(gdp.epsilon(self.mu, delta), dtype=float)

    def _loss_bins(self, edges: np.ndarray) -> LossBins:
        m = self.mu
        if m == 0.0:
            return _point_loss_bins(edges, 0.0)
        # L = μX − μ²/2 with X ~ N(0,1) under P and X ~ N(μ, 1) under Q
        with np.errstate(over="ignore"):  # (μ ≈ 1e-320: edges/μ = ±∞, as the masses are)
            if m < 1e150:
                zp, zq = (edges + m * m / 2.0) / m, (edges - m * m / 2.0) / m
            else:  # (μ² overflows: ∞ − ∞ read NaN masses, dpsgd(1e-160, 0.5, 10) raised)
                zp, zq = edges / m + m / 2.0, edges / m - m / 2.0
        p, pb, pa = normal_bin_masses(zp)
        # (the same X-bins under N(μ, 1) where zp's ends are finite: one partition for both)
        q, qb, qa = normal_bin_masses(zp, m) if m < 1e150 else normal_bin_masses(zq)
        # (bins whose P- or Q-mass keeps few bits: their losses from log-space masses)
        bounds = normal_bin_loss_bounds(zp, m, p, q) if m < 1e150 else None
        lo, hi = bounds if bounds is not None else (None, None)
        return LossBins(p=p, q=q, p_below=pb, q_below=qb, p_above=pa, q_above=qa, q_inf=0.0,
                        loss_lo=lo, loss_hi=hi)

    def _atoms(self) -> np.ndarray:
        return np.zeros(0) if self.mu > 0 else np.zeros(1)

    def _p_at_minus_inf(self) -> float:
        return 0.0  # (the loss μX − μ²/2 is finite)

    def _loss_moments(self) -> tuple[float, float] | None:
        """L = μX − μ²/2 with X ~ N(μ, 1) under Q: mean μ²/2, variance μ² (for μ ≤ 30: larger
        losses are the engine's huge-loss regime, which plans from its own bins)."""
        return (self.mu * self.mu / 2.0, self.mu * self.mu) if self.mu <= 30.0 else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Gaussian) and other.mu == self.mu

    def __hash__(self) -> int:
        return hash(("Gaussian", self.mu))

    def __repr__(self) -> str:
        return f"Gaussian(mu={_fmt(self.mu)})"

    def _label(self) -> str:
        return f"$G_{{{_fmt(self.mu)}}}$"


def _point_loss_bins(edges: np.ndarray, loss: float) -> LossBins:
    """All P- and Q-mass at one finite loss value (loss 0 for the identity)."""
    nb = edges.size - 1
    p = np.zeros(nb)
    j = int(np.searchsorted(edges, loss, side="left")) - 1
    below = above = 0.0
    if j < 0:
        below = 1.0
    elif j >= nb:
        above = 1.0
    else:
        p[j] = 1.0
    return LossBins(
        p=p, q=p.copy(), p_below=below, q_below=below, p_above=above, q_above=above, q_inf=0.0
    )



class _OptimisticGaussian(Gaussian):
    """G_μ with its round-off charged the other way (β up, δ and ε down): the upper side of a
    bracket whose exact curve is G_μ (e.g. DP-SGD with p = 1), where the conservatively rounded
    G_μ would lie 1e-12 relative on the wrong side."""

    #: an optimistic reading: TradeOff.delta's floor 1 − e^ε (to nearest, within an ulp) is
    #: taken 2u down (G_0.0289's lower end of δ(−0.969) read 0.6207100703430621, above the
    #: exact 0.62071007034306209; a sweep of the Poisson pairs against mpmath)
    _optimistic = True

    def _eval(self, alpha: np.ndarray) -> np.ndarray:
        v, rel, fin = self._value_and_error(alpha)
        with np.errstate(invalid="ignore"):
            # (a value below 1e-300 is at most 1e-300 in truth, but the relative margin cannot
            # lift one that underflowed: G_37(0.751) read 0 for 5.7e-311)
            v_up = np.where(v < 1e-300, 1.001e-300, v * (1.0 + rel))
            up = np.minimum(v_up, np.maximum(1.0 - alpha, 0.0))
            return np.where(fin, np.maximum(up, v), v)

    def _as_upper(self) -> Gaussian:
        return self

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", under="ignore"):
            return np.exp(gdp._log_delta_lower_v(self.mu, eps))

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return np.asarray(gdp._epsilon_lower_v(self.mu, delta), dtype=float)


class EpsDelta(PiecewiseLinear):
    """f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)}: (ε, δ)-DP (DRS Prop 2.5). Exact.

    Breakpoints (0, 1 − δ), (α_m, e^{−ε}(1 − δ − α_m)) with α_m = (1 − δ)/(1 + e^ε), (1 − δ, 0).

    Parameters
    ----------
    eps : float, 0 ≤ ε < ∞.
    delta : float, 0 ≤ δ ≤ 1.

    Examples
    --------
    >>> f = EpsDelta(1.0, 0.01)
    >>> round(f(0.1), 6)
    0.718172
    >>> f.delta(1.0), round(f.epsilon(0.01), 12)
    (0.01, 1.0)
    """

    def __init__(self, eps: Any, delta: Any = 0.0) -> None:
        self.eps = check_scalar("eps", eps, low=0.0)
        self.delta_ = check_scalar("delta", delta, low=0.0, high=1.0)
        e, d = self.eps, self.delta_
        # the pair: with probability δ the outcome reveals the input (losses ±∞), otherwise
        # binary randomized response with losses ±ε; 1/(1 + e^ε) = e^{−ε}/(1 + e^{−ε}) has no
        # overflow, and the losses are given explicitly, so ε ≥ 700 keeps δ(ε') and ε(δ')
        r = math.exp(-e) / (1.0 + math.exp(-e))  # 1/(1 + e^ε)
        s = 1.0 / (1.0 + math.exp(-e))  # e^ε/(1 + e^ε)
        pl = PiecewiseLinear.from_masses(
            np.array([(1.0 - d) * r, (1.0 - d) * s, d]),
            np.array([(1.0 - d) * s, (1.0 - d) * r, 0.0]),
            q_inf=d,
            loss=np.array([e, -e, -np.inf]),
        )
        super().__init__(
            pl._a, pl._b, alpha_c=pl._ac, beta_c=pl._bc, q_inf=pl._qinf, q_cum=pl._qc,
            masses=pl._given_masses, mass_q_inf=pl._mass_qinf,
        )

    def inverse(self) -> EpsDelta:
        """f_{ε,δ} is symmetric."""
        return self

    @property
    def is_symmetric(self) -> bool:  # type: ignore[override]
        return True

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, EpsDelta) and other.eps == self.eps and other.delta_ == self.delta_
        )

    def __hash__(self) -> int:
        return hash(("EpsDelta", self.eps, self.delta_))

    def __repr__(self) -> str:
        return f"EpsDelta(eps={_fmt(self.eps)}, delta={_fmt(self.delta_)})"

    def _label(self) -> str:
        return f"$f_{{{_tex_num(self.eps)},{_tex_num(self.delta_)}}}$"


class Laplace(TradeOff):
    """L_μ = T(Lap(0, 1), Lap(μ, 1)) (DRS Sec 2.3, theory §2). Exact.

    L_μ(α) = 1 − e^μ α for α < e^{−μ}/2; e^{−μ}/(4α) for e^{−μ}/2 ≤ α ≤ 1/2; e^{−μ}(1 − α) for
    α > 1/2. The Laplace mechanism with sensitivity Δ and scale b is L_{Δ/b}-DP. Its δ(ε) is
    1 − e^{(ε − μ)/2} for 0 ≤ ε ≤ μ and 0 beyond.

    Examples
    --------
    >>> f = Laplace(1.0)
    >>> round(f(0.3), 6), round(f.delta(0.5), 6)
    (0.306566, 0.221199)
    >>> f.epsilon(0.0)
    1.0
    """

    def __init__(self, mu: Any) -> None:
        self.mu = check_scalar("mu", mu, low=0.0)

    def _eval(self, alpha: np.ndarray) -> np.ndarray:
        """L_μ(α), rounded down (the guarantee side) by a bound on its round-off: 1 − e^μ α
        loses (e^μ α within 3 ulps, the difference within one) 4u (e^μ α + |result|); the
        exponentials of −μ − log 4α and −μ + log(1 − α) are within 2u (μ + |log|) + 2u relative
        (the log within an ulp of itself, the sum within one, exp within one). To nearest,
        L_30 read 1.6e-15 relative above the truth at α just below the kink e^{−30}/2 (an
        mpmath check of group(L_3, 10) = L_30)."""
        m = self.mu
        em = math.exp(-m)
        u = UNIT_ROUNDOFF
        with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
            if m < 700:
                x = np.exp(m) * alpha
                left = 1.0 - x
                left = left - 4.0 * u * (x + np.abs(left))
            else:  # (e^μ overflows: e^{μ + log α}, below 1/2 where this branch is taken; it
                # was 0, a valid but useless bound: L_800(1e-350) is 1 − 1e-2)
                la = np.log(alpha)
                x = np.exp(m + la)
                left = 1.0 - x
                left = left - 4.0 * u * (x + np.abs(left)) - 2.0 * u * x * (m + np.abs(la) + 1.0)
            # in log space: e^{−μ} alone is subnormal (few significant bits) for μ ≳ 708
            lg = np.log(4.0 * alpha)
            mid = np.exp(-m - lg) * np.maximum(1.0 - 2.0 * u * (m + np.abs(lg) + 1.0), 0.0)
            lr = np.log1p(-alpha)
            right = np.exp(-m + lr) * np.maximum(1.0 - 2.0 * u * (m + np.abs(lr) + 1.0), 0.0)
        out = np.where(alpha < em / 2.0, left, np.where(alpha <= 0.5, mid, right))
        # (below the normal range exp is within a subnormal ulp or so, which no relative
        # margin reaches: L_800(2.07e-27) read 4.45e-322 for 4.42e-322; two ulps off, a no-op
        # on normal values)
        return np.where(alpha == 0.0, 1.0, np.maximum(out - 2.0 * TINY, 0.0))

    def inverse(self) -> Laplace:
        """L_μ is symmetric."""
        return self

    def _as_upper(self) -> Laplace:
        """L_μ read as the optimistic side (δ and ε rounded down), for the lower end of its
        ε bracket."""
        return _OptimisticLaplace(self.mu)

    @property
    def is_symmetric(self) -> bool:
        return True

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        m = self.mu
        pos = np.abs(eps)
        # rounded up by 4 ulps (a guarantee): ε − μ, expm1 and the products are each within an
        # ulp or two of their results, and −expm1(x) is no more sensitive to x than that for
        # x < 0; to nearest, δ was up to 4e-15 relative low (a hunt against mpmath)
        up = 1.0 + 4.0 * np.finfo(float).eps
        dpos = np.where(pos < m, -np.expm1(np.minimum(pos - m, 0.0) / 2.0) * up, 0.0)
        # symmetric curves: δ(−ε) = 1 − e^{−ε} + e^{−ε} δ(ε)
        with np.errstate(over="ignore"):
            neg = (-np.expm1(np.minimum(eps, 0.0)) + np.exp(np.minimum(eps, 0.0)) * dpos) * up
        return np.minimum(np.where(eps >= 0, dpos, neg), 1.0)

    #: which way ε(δ) is rounded: +1 up (a guarantee), −1 down (the optimistic reading)
    _eps_round = 1.0

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        # μ + 2 log(1 − δ), rounded up (a guarantee: the rounding errs toward less privacy), or
        # down by the same margin on the optimistic reading
        with np.errstate(divide="ignore", invalid="ignore"):
            t = 2.0 * np.log1p(-delta)
            e = self.mu + t + self._eps_round * 4.0 * np.finfo(float).eps * (
                abs(self.mu) + np.abs(t))
        e = np.where(np.isnan(e), 0.0, e)
        return np.where(delta <= 0.0, self.mu, np.maximum(e, 0.0))

    def _loss_bins(self, edges: np.ndarray) -> LossBins:
        m = self.mu
        if m == 0.0:
            return _point_loss_bins(edges, 0.0)
        nb = edges.size - 1
        # continuous part: L = 2x − μ, x ∈ (0, μ); P[L ∈ (a, b]] = (e^{−(a+μ)/2} − e^{−(b+μ)/2})/2
        lo = np.clip(edges[:-1], -m, m)
        hi = np.clip(edges[1:], -m, m)
        p = 0.5 * np.exp(-(lo + m) / 2.0) * -np.expm1(-(hi - lo) / 2.0)
        # Q is the mirror image: Q[L ∈ (a, b]] = P[L ∈ [−b, −a)]
        q = 0.5 * np.exp(-(m - hi) / 2.0) * -np.expm1(-(hi - lo) / 2.0)
        cont = (p.copy(), q.copy())
        p_below = q_below = p_above = q_above = 0.0
        em = math.exp(-m)
        # atoms: L = −μ with P 1/2, Q e^{−μ}/2; L = μ with P e^{−μ}/2, Q 1/2
        atoms = []
        for loss, pm, qm in ((-m, 0.5, em / 2.0), (m, em / 2.0, 0.5)):
            j = int(np.searchsorted(edges, loss, side="left")) - 1
            if j < 0:
                p_below += pm
                q_below += qm
            elif j >= nb:
                p_above += pm
                q_above += qm
            else:
                p[j] += pm
                q[j] += qm
                atoms.append((j, pm, qm, loss))
        bounds = self._tiny_bin_losses(edges, lo, hi, cont, atoms, p, q)
        # continuous mass outside the grid
        e0, em_ = edges[0], edges[-1]
        if e0 > -m:
            c = -np.expm1(-(min(e0, m) + m) / 2.0) / 2.0  # P[−μ < L ≤ e0]
            p_below += c
            q_below += 0.5 * (math.exp((min(e0, m) - m) / 2.0) - math.exp(-m))  # no overflow
        if em_ < m:
            lo_ = max(em_, -m)
            p_above += 0.5 * math.exp(-(lo_ + m) / 2.0) * -math.expm1(-(m - lo_) / 2.0)
            q_above += 0.5 * -math.expm1(-(m - lo_) / 2.0)
        return LossBins(
            p=p, q=q, p_below=p_below, q_below=q_below, p_above=p_above, q_above=q_above,
            q_inf=0.0, loss_lo=None if bounds is None else bounds[0],
            loss_hi=None if bounds is None else bounds[1],
        )

    @staticmethod
    def _tiny_bin_losses(edges: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                         cont: tuple[np.ndarray, np.ndarray],
                         atoms: list[tuple[int, float, float, float]], p: np.ndarray,
                         q: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Loss bounds of the bins whose P- or Q-mass is below 2⁻¹⁰⁰⁰ (losses near ±μ for
        μ ≳ 708: a subnormal mass keeps few bits, and log(q/p) read such a bin's loss half a
        step low; :class:`~fdp.tradeoff.LossBins`). Their outcomes: the continuous part of the
        bin, whose loss is exactly the midpoint (A + B)/2 of its clipped ends (Q/P =
        e^{x_a + x_b − μ} with x = (L + μ)/2; one rounding of the sum), and the atoms in it."""
        tiny = tiny_bins(p, q)
        if not tiny.any():
            return None
        k = np.flatnonzero(tiny & (hi > lo))
        at = [a for a in atoms if tiny[a[0]]]
        j = np.concatenate([k, np.array([a[0] for a in at], dtype=k.dtype)])
        ps = np.concatenate([cont[0][k], [a[1] for a in at]])
        qs = np.concatenate([cont[1][k], [a[2] for a in at]])
        mid = 0.5 * (lo[k] + hi[k])
        loss = np.concatenate([mid, [a[3] for a in at]])
        err = np.concatenate([UNIT_ROUNDOFF * (np.abs(lo[k]) + np.abs(hi[k])), np.zeros(len(at))])
        return outcome_bin_losses(edges, j, np.ones(j.size, dtype=bool), p, q, ps, qs, loss, err)

    def _atoms(self) -> np.ndarray:
        return np.array([-self.mu, self.mu]) if self.mu > 0 else np.zeros(1)

    def _p_at_minus_inf(self) -> float:
        return 0.0  # (the loss lies in [−μ, μ])

    def _loss_moments(self) -> tuple[float, float] | None:
        """Under Q = Lap(μ, 1): L = μ (mass 1/2), −μ (mass e^{−μ}/2), and 2x − μ on (0, μ) with
        density e^{x−μ}/2. Mean μ − 1 + e^{−μ} (the KL divergence); E L² = μ²(1 + e^{−μ})/2 +
        ½∫₀^μ (μ − 2y)² e^{−y} dy. Below μ = 1 by their Taylor series (the closed forms
        cancel); for μ ≤ 30 only, like the Gaussian."""
        m = self.mu
        if m > 30.0:
            return None
        if m < 1.0:  # Σ_k (−1)^k/k! terms: mean Σ_{k≥2} (−μ)^k/k!, ∫ = Σ_k μ^{k+3} c_k (−1)^k/k!
            mean = sum((-m) ** k / math.factorial(k) for k in range(2, 30))
            integral = sum((-1) ** k / math.factorial(k) * m ** (k + 3)
                           * (1 / (k + 1) - 4 / (k + 2) + 4 / (k + 3)) for k in range(30))
        else:
            e = math.exp(-m)
            a, b, c = 1 - e, 1 - e * (1 + m), 2 - e * (m * m + 2 * m + 2)
            mean = m - a
            integral = m * m * a - 4 * m * b + 4 * c
        second = m * m * (1 + math.exp(-m)) / 2 + integral / 2
        return mean, max(second - mean * mean, 0.0)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Laplace) and other.mu == self.mu

    def __hash__(self) -> int:
        return hash(("Laplace", self.mu))

    def __repr__(self) -> str:
        return f"Laplace(mu={_fmt(self.mu)})"

    def _label(self) -> str:
        return f"$L_{{{_fmt(self.mu)}}}$"


class _OptimisticLaplace(Laplace):
    """L_μ with its round-off charged the other way (δ and ε rounded down): the lower end of
    the exact curve's ε bracket (rounded up, that end read ε 2.2e-14 above the truth at
    μ = 5, δ = 0.9; a helper's hunt)."""

    #: an optimistic reading: TradeOff.delta's floor 1 − e^ε (to nearest, within an ulp) is
    #: taken 2u down (G_0.0289's lower end of δ(−0.969) read 0.6207100703430621, above the
    #: exact 0.62071007034306209; a sweep of the Poisson pairs against mpmath)
    _optimistic = True

    def _as_upper(self) -> Laplace:
        return self

    def _eval(self, alpha: np.ndarray) -> np.ndarray:
        """β rounded up (the margins of :meth:`Laplace._eval` added, not taken), capped by
        1 − α."""
        down = np.asarray(Laplace._eval(self, alpha), dtype=float)
        with np.errstate(invalid="ignore"):
            up = down * (1.0 + 1e-12) + 4.0 * TINY
        return np.where(alpha == 0.0, 1.0, np.minimum(up, np.maximum(1.0 - alpha, 0.0)))

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        # Laplace._delta is rounded up by 4 machine epsilons (8u) once for ε ≥ 0 and twice
        # below (δ(ε) from δ(−ε)), on roundings within ~6u: at most 22u above the truth, so 24u
        # down. (12u read δ(−0.00057) at μ = 1.68 as 0.5684666896377706, above the exact
        # 0.56846668963777022; a test against mpmath)
        d = np.asarray(Laplace._delta(self, eps), dtype=float)
        return np.maximum(d * (1.0 - 24.0 * UNIT_ROUNDOFF), 0.0)

    _eps_round = -1.0  # (Laplace._epsilon rounded down by its margin)


class Identity(PiecewiseLinear):
    """Id(α) = 1 − α: perfect privacy, the unit of composition. Exact.

    Examples
    --------
    >>> Identity()(0.25)
    0.75
    """

    def __init__(self) -> None:
        super().__init__(np.array([0.0, 1.0]), np.array([1.0, 0.0]))

    def _eval(self, alpha: np.ndarray) -> np.ndarray:
        """1 − α rounded down, exact where it is a float (the breakpoints are exact: no
        relative margin, which read Id(0.5) = 0.4999999999999991). r = fl(1 − α) and its error
        (1 − r) − α are exact (Sterbenz), so r is moved one ulp down only where it rounded up."""
        a = np.asarray(alpha, dtype=float)
        r = 1.0 - a
        return np.where((1.0 - r) - a < 0.0, np.nextafter(r, 0.0), r)

    def inverse(self) -> Identity:
        return self

    @property
    def is_symmetric(self) -> bool:  # type: ignore[override]
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Identity)

    def __hash__(self) -> int:
        return hash("Identity")

    def __repr__(self) -> str:
        return "Identity()"

    def _label(self) -> str:
        return "$\\mathrm{Id}$"

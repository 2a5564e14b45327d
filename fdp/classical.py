"""Classical (ε, δ) composition, for comparison with exact f-DP accounting (theory §4).

- :func:`basic`: k mechanisms (ε_i, δ_i)-DP compose to (Σε_i, Σδ_i). A bound.
- :func:`advanced`: Dwork, Rothblum & Vadhan (2010): k runs of an (ε, δ)-DP mechanism are
  (√(2k ln(1/δ')) ε + kε(e^ε − 1), kδ + δ')-DP. A bound.
- :func:`advanced_for_curve`: the best advanced (or basic) bound for k runs of an f-DP mechanism,
  optimizing how the target δ is split between kδ₀ and δ'.
- :func:`kov_delta`, :func:`kov_epsilon`: the exact optimal composition of k (ε, δ)-DP mechanisms
  (Kairouz, Oh & Viswanath 2015, Thm 3.3), through :func:`fdp.composition.kov`.

Examples
--------
>>> from fdp import EpsDelta
>>> basic([1.0, 0.5], [1e-6, 1e-6])
(1.5, 2e-06)
>>> e = advanced_for_curve(EpsDelta(0.1), 100, 1e-5)
>>> kov_epsilon(0.1, 0.0, 100, 1e-5) < e < 100 * 0.1
True
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._checks import as_array, check_int, check_scalar
from ._numerics import add_up, sum_up
from .composition import kov
from .tradeoff import TradeOff

__all__ = ["basic", "advanced", "advanced_for_curve", "kov_delta", "kov_epsilon"]


def basic(eps: Any, delta: Any) -> tuple[float, float]:
    """Basic composition: (Σε_i, Σδ_i) (Dwork & Roth 2014, Thm 3.16). A bound."""
    e = np.atleast_1d(as_array("eps", eps, low=0.0))
    d = np.atleast_1d(as_array("delta", delta, low=0.0, high=1.0))
    if e.shape != d.shape:
        raise ValueError(f"eps and delta must have the same length, got {e.size} and {d.size}")
    # (both sums rounded up: a guarantee errs toward less privacy)
    return sum_up(e), min(sum_up(d), 1.0)


def advanced(eps: float, delta: float, k: int, delta_prime: float) -> tuple[float, float]:
    """Advanced composition (Dwork, Rothblum & Vadhan 2010; Dwork & Roth Thm 3.20). A bound.

    k runs of an (ε, δ)-DP mechanism are (ε', kδ + δ')-DP with
    ε' = √(2k ln(1/δ')) ε + k ε (e^ε − 1), rounded up; ∞ where e^ε overflows (ε > 709: the
    bound exceeds 1e300 there, and basic composition kε is the one to use).
    """
    e = check_scalar("eps", eps, low=0.0)
    d = check_scalar("delta", delta, low=0.0, high=1.0)
    k = check_int("k", k, low=1)
    dp = check_scalar("delta_prime", delta_prime, low=0.0, high=1.0, low_open=True)
    # (kδ + δ' rounded up: the product's rounding by an ulp, the sum by TwoSum)
    kd = k * d
    if kd > 0.0:
        kd = math.nextafter(kd, math.inf)
    d_total = min(add_up(kd, dp), 1.0)
    if e > 709.0:
        return math.inf, d_total
    ep = (math.sqrt(2 * k * math.log(1 / dp)) * e + k * e * math.expm1(e)) * (1 + 8 * 2.0**-53)
    return float(ep), d_total


def advanced_for_curve(f: TradeOff, k: int, delta: float) -> float:
    """The smallest ε from advanced or basic composition for k runs of an f-DP mechanism at
    total δ: each run is (ε₀, δ₀)-DP with ε₀ = f.epsilon(δ₀); the split of δ between kδ₀ and δ'
    is optimized over a grid (basic composition, kε₀ at δ₀ = δ/k, is included). A bound."""
    if not isinstance(f, TradeOff):
        raise TypeError(f"f must be a TradeOff, got {type(f).__name__} ({f!r})")
    k = check_int("k", k, low=1)
    d = check_scalar("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    # (each share shrunk by 8 ulps, so that k·δ₀ + δ' ≤ δ holds exactly, not only to nearest;
    # and k·ε₀ rounded up)
    shrink = 1.0 - 8.0 * 2.0**-53
    e_basic = float(f.epsilon(d / k * shrink))
    best = k * e_basic * (1.0 + 2.0**-52) if math.isfinite(e_basic) else math.inf
    for frac in np.concatenate([np.geomspace(1e-4, 0.5, 30), 1 - np.geomspace(1e-4, 0.5, 30)]):
        e0 = float(f.epsilon(frac * d / k * shrink))
        if math.isfinite(e0):
            best = min(best, advanced(e0, 0.0, k, (1 - frac) * d * shrink)[0])
    return best


def kov_delta(eps: float, delta: float, k: int, eps_total: Any) -> float | np.ndarray:
    """δ(ε_total) of the exact optimal composition of k (ε, δ)-DP mechanisms (KOV Thm 3.3).

    δ_k(ε̃) = 1 − (1−δ)^k [1 − (1+e^ε)^{−k} Σ_l C(k,l)(e^{(k−l)ε} − e^{ε̃+lε})₊]. Exact.
    """
    return kov(eps, delta, k).delta(eps_total)


def kov_epsilon(eps: float, delta: float, k: int, delta_total: Any) -> float | np.ndarray:
    """The smallest ε_total with δ_k(ε_total) ≤ delta_total (KOV Thm 3.3). Exact."""
    return kov(eps, delta, k).epsilon(delta_total)

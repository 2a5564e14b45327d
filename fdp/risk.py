"""Attack risk: the operational meaning of a trade-off curve, and calibration to risk targets.

A trade-off curve is a statement about every membership-inference (or attribute, or
reconstruction-by-testing) attack that tries to tell two neighbouring datasets apart: an attack
with false-positive rate α (type I error) has true-positive rate at most 1 − f(α) (Dong, Roth &
Su 2022, Def 2.1 and Def 2.3: the type II error of any test is ≥ f(α)). From it:

- :func:`tpr`: the largest TPR at a given FPR, 1 − f(α). The number to read at low FPR
  (Carlini et al. 2022, "Membership inference attacks from first principles", argue attacks should
  be judged there).
- :func:`advantage`: the largest TPR − FPR over all attacks, sup_α (1 − α − f(α)) = δ(0)
  (the ε = 0 point of the privacy profile, Dong, Roth & Su 2022, Prop 2.12; Yeom et al. 2018's
  membership advantage; Kulynych et al. 2024, "Attack-aware noise calibration for differential
  privacy", which also calibrates noise to it).
- :func:`posterior_success`: the best probability that an attacker with prior π (that the
  target is in the data) guesses right: 1 − min_α [π f(α) + (1 − π) α]
  = 1 − π (1 − δ(ln((1 − π)/π))) (Bayes risk of the test; the identity is Prop 2.12 at
  e^ε = (1 − π)/π). Without the mechanism the best is max(π, 1 − π).

Every function uses the conservative side: for bracketed (numeric) curves the certified lower
curve, so the returned risk is a certified **upper** bound; for exact curves it is exact; for
approximations (CLT, Edgeworth) it is an approximation, not a bound.

Calibration to these targets: :func:`fdp.calibrate_dpsgd` with ``advantage=`` or ``tpr=, fpr=``
(next to ``eps=, delta=`` and ``mu=``) finds the least DP-SGD noise meeting them, certified.
:func:`calibrate_dpsgd_risk` is the same search under its former name.

Examples
--------
>>> import fdp
>>> g = fdp.Gaussian(1.0)
>>> round(advantage(g), 6)                  # Φ(1/2) − Φ(−1/2)
0.382925
>>> round(float(tpr(g, 0.01)), 6)           # 1 − G_1(0.01)
0.092362
>>> round(posterior_success(g, 0.5), 6)     # 1/2 + advantage/2
0.691462
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._checks import as_array
from ._numerics import TINY, add_up_array
from ._numerics import UNIT_ROUNDOFF as _U
from .tradeoff import TradeOff

__all__ = ["advantage", "tpr", "posterior_success", "calibrate_dpsgd_risk"]


def _check(f: TradeOff) -> TradeOff:
    if not isinstance(f, TradeOff):
        raise TypeError(f"f must be a TradeOff, got {type(f).__name__}")
    return f


def advantage(f: TradeOff) -> float:
    """The largest membership advantage TPR − FPR of any attack: sup_α (1 − α − f(α)) = δ(0).

    Parameters
    ----------
    f : TradeOff

    Returns
    -------
    float
        Exact for exact curves, a certified upper bound for bracketed ones (δ of the lower curve).

    Notes
    -----
    δ(0) = sup_α (1 − α − f(α)) (Dong, Roth & Su 2022, Prop 2.12 at ε = 0); for μ-GDP it is
    Φ(μ/2) − Φ(−μ/2) (DRS Cor 2.13). It equals the total variation distance of the pair.

    Examples
    --------
    >>> import fdp
    >>> advantage(fdp.EpsDelta(0.0, 0.1))
    0.1
    """
    return float(_check(f).delta(0.0))


def tpr(f: TradeOff, fpr: Any) -> Any:
    """The largest true-positive rate of any attack at false-positive rate α: 1 − f(α).

    Parameters
    ----------
    f : TradeOff
    fpr : float or array-like
        α ∈ [0, 1].

    Returns
    -------
    float or ndarray
        1 − f(α) for exact curves, 1 − lower(α) (a certified upper bound) for bracketed ones.

    Notes
    -----
    A test with type I error α has type II error ≥ f(α) (DRS Def 2.1), so TPR = 1 − β ≤ 1 − f(α).

    Examples
    --------
    >>> import fdp
    >>> [round(float(x), 4) for x in tpr(fdp.Gaussian(1.0), [1e-3, 1e-2, 0.1])]
    [0.0183, 0.0924, 0.3891]
    """
    f = _check(f)
    a = as_array("fpr", fpr, low=0.0, high=1.0)
    curve = f.lower if f.kind == "bracket" else f
    # (1 − β rounded up: to nearest it read an ulp below the exact TPR where β < 1/2)
    out = add_up_array(1.0, -np.asarray(curve(a), dtype=float))
    out = np.clip(out, a, 1.0)  # never below the trivial TPR = FPR
    return float(out) if out.ndim == 0 else out


def posterior_success(f: TradeOff, prior: Any) -> Any:
    """The best probability that an attacker with prior π (that the target is in) guesses right.

    success(π) = max over tests of π·TPR + (1 − π)·(1 − FPR) = 1 − min_α [π f(α) + (1 − π) α]
    = 1 − π (1 − δ(ln((1 − π)/π))).

    Parameters
    ----------
    f : TradeOff
    prior : float or array-like
        π ∈ (0, 1).

    Returns
    -------
    float or ndarray
        Exact for exact curves, a certified upper bound for bracketed ones. Compare with the
        baseline max(π, 1 − π) of an attacker who ignores the output.

    Notes
    -----
    With e^ε = (1 − π)/π, min_α [f(α) + e^ε α] = 1 − δ(ε) (Dong, Roth & Su 2022, Prop 2.12, which
    holds for every real ε). At π = 1/2 this is 1/2 + advantage/2.

    Examples
    --------
    >>> import fdp
    >>> round(posterior_success(fdp.EpsDelta(1.0), 0.5), 6)   # e/(1 + e)
    0.731059
    >>> round(posterior_success(fdp.Identity(), 0.9), 6)
    0.9
    """
    f = _check(f)
    pi = as_array("prior", prior, low=0.0, high=1.0, low_open=True, high_open=True)
    # rounded up: δ at ε taken below its rounding (δ is non-increasing), then 1 − π(1 − δ)
    # with π(1 − δ) rounded down (each of its two roundings within u)
    l1, l2 = np.log1p(-pi), np.log(pi)
    eps = (l1 - l2) - 4.0 * _U * (np.abs(l1) + np.abs(l2)) - TINY
    d = np.asarray(f.delta(eps), dtype=float)
    out = add_up_array(1.0, -(pi * (1.0 - d)) * (1.0 - 4.0 * _U))
    out = np.clip(np.maximum(out, np.maximum(pi, 1.0 - pi)), 0.0, 1.0)
    return float(out) if out.ndim == 0 else out


# ------------------------------------------------------------------------------ calibration
def calibrate_dpsgd_risk(
    sample_rate: float,
    steps: int,
    *,
    advantage: float | None = None,
    tpr: float | None = None,
    fpr: float | None = None,
    sampling: str = "poisson",
    neighbours: str | None = None,
    sensitivity: float | None = None,
    rtol: float = 1e-3,
) -> float:
    """The smallest DP-SGD noise multiplier meeting an attack-risk target, certified.

    Deprecated: use :func:`fdp.calibrate_dpsgd` with ``advantage=`` or ``tpr=, fpr=``; this
    function calls it with the same arguments and returns its answer.

    Targets: ``advantage=a`` (every attack has TPR − FPR ≤ a, i.e. δ(0) ≤ a), or ``tpr=t,
    fpr=α`` (every attack with FPR α has TPR ≤ t, i.e. 1 − f(α) ≤ t), both on the certified
    (conservative) side of :func:`fdp.dpsgd`; the returned σ meets the target and σ·(1 − rtol)
    may not (Kulynych et al. 2024, "Attack-aware noise calibration for differential privacy").

    Parameters
    ----------
    sample_rate, steps : float, int
        p ∈ (0, 1] and T ≥ 1.
    advantage : float, optional
        Target in (0, 1).
    tpr, fpr : float, optional
        Target TPR in (fpr, 1) at FPR ``fpr`` ∈ (0, 1).
    sampling, neighbours, sensitivity :
        DP-SGD conventions as in :func:`fdp.dpsgd`.
    rtol : float
        Relative tolerance of the search.

    Returns
    -------
    float
        σ (noise std on the sum of clipped gradients over the clipping norm C).

    Examples
    --------
    >>> import fdp
    >>> s = calibrate_dpsgd_risk(0.01, 1000, advantage=0.1, rtol=1e-2)
    >>> s == fdp.calibrate_dpsgd(0.01, 1000, advantage=0.1, rtol=1e-2)
    True
    """
    from .calibration import calibrate_dpsgd

    if advantage is None and tpr is None and fpr is None:
        raise ValueError("give a target: advantage, or tpr and fpr; got none")
    return calibrate_dpsgd(
        sample_rate,
        steps,
        advantage=advantage,
        tpr=tpr,
        fpr=fpr,
        sampling=sampling,
        neighbours=neighbours,
        sensitivity=sensitivity,
        rtol=rtol,
    )

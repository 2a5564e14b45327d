"""The mechanism catalogue: classical mechanisms and local-DP frequency oracles as exact curves.

**One kind of thing per mechanism: a trade-off curve.** Every mechanism here returns a
:class:`~fdp.tradeoff.TradeOff`, so every operation of fdp (composition, group privacy,
subsampling, δ(ε), plots) applies to it directly. Where a mechanism has parameters worth reading
back (its ε-DP guarantee, the probabilities of an oracle), the curve carries them as attributes:
it is a :class:`MechanismCurve` (or its subclass :class:`FrequencyOracle`). Each function
documents its neighbouring relation and sensitivity convention.

- :func:`laplace` (:class:`~fdp.families.Laplace`), :func:`gaussian`
  (:class:`~fdp.families.Gaussian`), :func:`vector_laplace` (a certified bracket),
  :func:`catastrophe` (L_μ ⊗ f_{0,δ}).
- :func:`randomized_response`, :func:`exponential` and :func:`subsampled_eps` return a
  :class:`MechanismCurve` whose ``eps`` is the mechanism's ε-DP guarantee.
- Local-DP frequency oracles (Wang, Blocki, Li & Jha, USENIX Security 2017; theory §11):
  :func:`grr`, :func:`sue`, :func:`oue`, :func:`blh`, :func:`olh`. Each returns a
  :class:`FrequencyOracle`: the exact curve of one user's report between two different inputs
  v₁ ≠ v₂, with the oracle's ``p``, ``q``, ``eps`` and :meth:`FrequencyOracle.variance`.

:func:`gaussian_calibration` is not a mechanism: it compares two noise levels σ and returns
numbers.

Examples
--------
>>> import fdp
>>> laplace(sensitivity=100, scale=50)
Laplace(mu=2)
>>> o = oue(2.0)
>>> o
OUE(eps=2)
>>> round(float(o.epsilon(0.0)), 12), o.eps
(2.0, 2.0)
>>> round(exponential([1.0, 2.0, 3.0], [2.0, 2.0, 2.0], eps=1.0).eps, 6)
1.0
>>> c = subsampled_eps(2.0, 0.1)   # the exact C_p(f_{2,0}); .eps is ln(1 + p(e^ε − 1))
>>> round(c.eps, 4), round(float(c.epsilon(0.0)), 4)
(0.494, 0.494)
"""

from __future__ import annotations

import math
import warnings
from typing import Any, TypeVar

import numpy as np
from scipy import special

from . import gdp
from ._checks import as_array, check_int, check_scalar
from ._numerics import MIN_NORMAL, TINY, quotient_up
from ._numerics import UNIT_ROUNDOFF as _U
from .composition import DeltaMix, compose
from .constructors import from_distributions
from .families import EpsDelta, Gaussian, Laplace
from .tradeoff import PiecewiseLinear, TradeOff

__all__ = [
    "laplace",
    "vector_laplace",
    "gaussian",
    "gaussian_calibration",
    "randomized_response",
    "catastrophe",
    "exponential",
    "subsampled_eps",
    "MechanismCurve",
    "FrequencyOracle",
    "grr",
    "sue",
    "oue",
    "blh",
    "olh",
]

_M = TypeVar("_M", bound="MechanismCurve")


def _fmt(x: float) -> str:
    return f"{x:.6g}"


class MechanismCurve(PiecewiseLinear):
    """The exact trade-off curve of a mechanism, carrying the mechanism's parameters.

    A :class:`~fdp.tradeoff.PiecewiseLinear` curve (exact; every operation of fdp applies), with

    Attributes
    ----------
    name : str
        The mechanism's short name (``"GRR"``, ``"exponential"``, …).
    eps : float
        The ε-DP guarantee of the mechanism: the supremum of its privacy loss over all
        neighbouring pairs its function documents. For the curve of the worst pair it is tight
        (``eps == epsilon(0)``); :func:`exponential` describes one pair, whose loss can be
        smaller.
    params : dict[str, float]
        The parameters the mechanism was built with.

    Results of operations on it (``f @ g``, ``f.group(k)``, …) are ordinary curves.
    """

    name: str
    eps: float
    params: dict[str, float]

    @classmethod
    def _of(
        cls: type[_M], curve: PiecewiseLinear, name: str, eps: float, params: dict[str, float]
    ) -> _M:
        """The exact curve ``curve`` as a mechanism curve (same breakpoints, masses and state)."""
        out = cls.__new__(cls)
        out.__dict__.update(vars(curve))
        out.name = name
        out.eps = float(eps)
        out.params = {k: float(v) for k, v in params.items()}
        out._name = f"{name}({', '.join(f'{k}={_fmt(v)}' for k, v in out.params.items())})"
        return out

    def _label(self) -> str:
        greek = {"eps": "ε", "delta": "δ"}
        inner = ", ".join(f"{greek.get(k, k)}={v:.3g}" for k, v in self.params.items())
        return f"{self.name} ({inner})"


class FrequencyOracle(MechanismCurve):
    """A local-DP frequency oracle (Wang, Blocki, Li & Jha 2017; theory §11) as its exact curve.

    The curve is T(P_{v₁}, P_{v₂}): one user's report under two different inputs v₁ ≠ v₂ (the
    local-DP neighbouring relation). It is tight: ``epsilon(0) == eps``.

    Attributes
    ----------
    name : str
        ``"GRR"``, ``"SUE"``, ``"OUE"``, ``"BLH"`` or ``"OLH"``.
    eps : float
        The ε-LDP the oracle satisfies.
    p, q : float
        The probabilities that a report supports the true value / a given other value.
    """

    p: float
    q: float

    def variance(self, n: int) -> float:
        """Approximate variance of the count estimator c̃ = (c − nq)/(p − q) over n users:
        Var ≈ n q(1 − q)/(p − q)² (WBLJ 2017, dropping the term in the true count)."""
        n = check_int("n", n, low=1)
        return n * self.q * (1 - self.q) / (self.p - self.q) ** 2

    @property
    def tradeoff(self) -> FrequencyOracle:
        """The oracle's curve, which is the oracle itself (deprecated: use the oracle directly).

        In fdp 0.1 the oracles were plain records with the curve in ``.tradeoff``."""
        warnings.warn(
            "FrequencyOracle.tradeoff is deprecated: the oracle is its trade-off curve",
            DeprecationWarning,
            stacklevel=2,
        )
        return self


def _oracle(
    name: str, eps: float, p: float, q: float, P: Any, Q: Any, loss: Any = None,
    **params: float,
) -> FrequencyOracle:
    # (given losses are exact; the masses are the mechanism's probabilities rounded, each
    # within 8u: a logistic or a ratio, times at most one more factor)
    curve = from_distributions(P, Q) if loss is None else PiecewiseLinear.from_masses(
        np.asarray(P, dtype=float), np.asarray(Q, dtype=float), loss=np.asarray(loss, dtype=float),
        mass_rtol=8.0 * _U)
    if curve._loss_err is not None:
        # the masses are the mechanism's probabilities rounded (each within 8u: a logistic or a
        # ratio, times at most one more factor), so the ratio of a pair is within 16u and its
        # log within 32u of the mechanism's loss: charged with the logarithms' own rounding.
        # (SUE at ε = 0.0026 read ε(0) = ε(1 − 3e-14) from the rounded masses alone)
        curve._loss_err = curve._loss_err + np.where(curve._loss_err > 0.0, 32.0 * _U, 0.0)
    # (the given losses are the mechanism's exact ones: gdp_mu reads a subnormal mass from them)
    curve._exact_losses = loss is not None
    curve._exact_masses = False  # (rounded probabilities, not a user's exact masses)
    out = FrequencyOracle._of(curve, name, eps, {"eps": eps, **params})
    out.p, out.q = float(p), float(q)
    return out


def laplace(sensitivity: float, scale: float) -> Laplace:
    """Laplace mechanism: add Lap(0, b) noise to a scalar query of sensitivity Δ (|f(S) − f(S')|
    ≤ Δ for neighbours S, S'): exactly L_{Δ/b}-DP (DRS Sec 2.3, theory §2). For vector queries
    use :func:`vector_laplace` (the L1 sensitivity Δ = Σ|shift_i| gives only the looser
    L_{Δ/b})."""
    d = check_scalar("sensitivity", sensitivity, low=0.0)
    b = check_scalar("scale", scale, low=0.0, low_open=True)
    return Laplace(quotient_up(d, b))  # (rounded up: the curve holds at the exact Δ/b)


def vector_laplace(shifts: Any, scale: float) -> TradeOff:
    """Laplace noise on each coordinate of a vector query whose neighbours differ by ``shifts``:
    the exact curve L_{|s_1|/b} ⊗ … ⊗ L_{|s_d|/b} (DRS Thm 3.2; certified numeric composition,
    theory §12). It dominates L_{‖s‖₁/b}, the bound from L1 sensitivity."""
    s = np.atleast_1d(as_array("shifts", shifts))
    b = check_scalar("scale", scale, low=0.0, low_open=True)
    return compose(*(Laplace(quotient_up(abs(float(x)), b)) for x in s))


def gaussian(sensitivity: float, sigma: float) -> Gaussian:
    """Gaussian mechanism: N(0, σ²I) noise on a query of L2 sensitivity Δ is G_{Δ/σ}-DP, exactly
    (DRS Thm 2.7)."""
    d = check_scalar("sensitivity", sensitivity, low=0.0)
    s = check_scalar("sigma", sigma, low=0.0, low_open=True)
    return Gaussian(quotient_up(d, s))  # (rounded up: the curve holds at the exact Δ/σ)


def gaussian_calibration(eps: float, delta: float, sensitivity: float = 1.0) -> dict[str, Any]:
    """The classical σ = Δ√(2 ln(1.25/δ))/ε (Dwork & Roth 2014, Thm A.1; valid only for ε < 1)
    next to the exact σ = Δ/μ(ε, δ) (:func:`fdp.gdp.sigma`, Balle & Wang 2018) and their ratio.

    Not a mechanism: it returns numbers, ``{"classical", "exact", "ratio", "classical_valid"}``.
    For ε < 1 the classical σ is larger than the exact one; for ε ≥ 1 the theorem does not
    cover it, and it is reported with ``classical_valid`` False (there it can be smaller than
    the exact σ: ``gaussian_calibration(5.0, 0.5)`` gives 0.2707 against 0.2892, not a
    guarantee).
    """
    e = check_scalar("eps", eps, low=0.0, low_open=True)
    d = check_scalar("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    s = check_scalar("sensitivity", sensitivity, low=0.0, low_open=True)
    classical = s * math.sqrt(2.0 * math.log(1.25 / d)) / e
    exact = float(gdp.sigma(e, d, s))
    return {
        "classical": classical,
        "exact": exact,
        "ratio": classical / exact,
        "classical_valid": e < 1.0,
    }


def randomized_response(eps: float, k: int = 2) -> MechanismCurve:
    """k-ary (generalized) randomized response: report the true value with probability
    e^ε/(e^ε + k − 1), each other value with 1/(e^ε + k − 1) (Warner 1965; WBLJ 2017).

    Returns the exact curve between two different inputs, with ``eps`` = ε (tight); for k = 2 it
    is f_{ε,0} (DRS Sec 2.3). It is the curve of :func:`grr` with d = k.

    Examples
    --------
    >>> f = randomized_response(1.0, k=4)
    >>> f, round(float(f(0.1)), 6)
    (RR(eps=1, k=4), 0.728172)
    """
    e = check_scalar("eps", eps, low=0.0)
    k = check_int("k", k, low=2)
    return MechanismCurve._of(grr(e, k), "RR", e, {"eps": e, "k": k})


def grr(eps: float, d: int) -> FrequencyOracle:
    """Generalized randomized response (direct encoding) over d values (WBLJ 2017).

    p = e^ε/(e^ε + d − 1), q = 1/(e^ε + d − 1); inputs v₁ ≠ v₂ give outputs with P = p at v₁,
    q elsewhere, Q = p at v₂, q elsewhere. Variance ≈ n (e^ε + d − 2)/(e^ε − 1)².

    Examples
    --------
    >>> o = grr(1.0, 5)
    >>> o, round(o.p, 6), round(float(o(o.q)), 6) == round(1 - o.p, 6)
    (GRR(eps=1, d=5), 0.40461, True)
    """
    e = check_scalar("eps", eps, low=0.0)
    d = check_int("d", d, low=2, high=2**53)  # (10**400 raised OverflowError)
    # p = e^ε/(e^ε + d − 1), q = 1/(e^ε + d − 1), without overflow
    p = 1.0 / (1.0 + (d - 1) * math.exp(-e))
    q = math.exp(-e) * p
    # the d − 2 values other than v₁, v₂ have the same probability q under both inputs: merged
    # into one outcome (loss 0), which leaves the curve unchanged and the size O(1) in d
    rest = (d - 2) * q
    if q < MIN_NORMAL:
        # beyond ε ≈ 708 q is subnormal, known only to the least subnormal, and (d − 2)q
        # multiplied that d − 2 times: RR(745, 1000) took q = 4.9e-324 for 2.8e-324 and read
        # f(2.82e-321) = 2.06e-321 for the exact 2.8e-324 (and RR(744, 10¹²) f(1e-315)
        # 9.88e-312 for 7.67e-312; a hunt, seed 400213). From e^{−ε/2} twice, normal up to
        # ε ≈ 1416 (beyond it (d − 2)q < 2⁵³ e^{−1416} is below the float range): one
        # subnormal rounding, and a few ulps (within the masses' 8u) where the result is normal
        h = math.exp(-e / 2.0)
        rest = (d - 2) * p * h * h
    P = np.array([p, q, rest])
    Q = np.array([q, p, rest])
    # beyond ε ≈ 700, q = e^{−ε} p underflows: the losses ±ε, 0 are given, so that the pair
    # keeps δ(ε') = p (1 − e^{ε'−ε})₊ instead of reading as perfectly revealing (ε = ∞). The
    # losses are given at every ε: log(P/Q) of the rounded masses read ε(0) = ε(1 − 7.7e-14) at
    # ε = 0.001, d = 16 (the masses' ratio is e^{±ε} only to 2u, a 2u/ε share of ε)
    loss = [-e, e, 0.0]
    return _oracle("GRR", e, p, q, P, Q, loss=loss, d=d)


def _two_bits(
    a1: tuple[float, float], b1: tuple[float, float], a2: tuple[float, float],
    b2: tuple[float, float],
) -> tuple[np.ndarray, np.ndarray]:
    """The laws of two independent bits: bit 1 ~ Bern(a1) vs Bern(b1), bit 2 ~ Bern(a2) vs
    Bern(b2) (their curve is the product of two binary tests). Each probability comes with its
    complement, (x, 1 − x), computed apart: 1 − x cancels when x is close to 1. Outcome (i, j)
    pairs entry i of bit 1's pair with entry j of bit 2's, in the order (0, 0), (0, 1), (1, 0),
    (1, 1); for SUE and OUE their losses log(Q/P) are 0, −ε, ε, 0 (:func:`_two_bit_loss`)."""
    P = np.outer(a1, a2).ravel()
    Q = np.outer(b1, b2).ravel()
    return P, Q


def _two_bit_loss(e: float) -> list[float]:
    """The exact losses of SUE's and OUE's four outcomes (see :func:`_two_bits`): bit 1's
    loss ∓c plus bit 2's ±c′ with c − c′ = ε (SUE: c = c′ = ε/2; OUE: log 2q − log 2(1 − q),
    whose difference is −ε). Given rather than read from the masses, whose products underflow
    beyond ε ≈ 725 (SUE at ε = 745 read ε(0) = 744.44 and δ(744) = 0.356 for 0.632)."""
    return [0.0, -e, e, 0.0]


def sue(eps: float) -> FrequencyOracle:
    """Symmetric unary encoding (basic RAPPOR; WBLJ 2017): each bit kept with
    p = e^{ε/2}/(e^{ε/2} + 1), q = 1 − p. Inputs v₁ ≠ v₂ differ in two bits: the curve is
    f_{ε/2,0} ⊗ f_{ε/2,0}."""
    e = check_scalar("eps", eps, low=0.0)
    # each from its own logistic: q = 1 − p would cancel (for ε = 70 it was 6.66e-16 instead of
    # 6.305e-16, and the pair's loss log(p²/q²) came out below ε: the optimistic side)
    p, q = float(special.expit(e / 2)), float(special.expit(-e / 2))
    return _oracle("SUE", e, p, q, *_two_bits((p, q), (q, p), (q, p), (p, q)),
                   loss=_two_bit_loss(e))


def oue(eps: float) -> FrequencyOracle:
    """Optimized unary encoding (WBLJ 2017): the true value's bit is 1 with p = 1/2,
    others with q = 1/(e^ε + 1). Two differing bits, each test asymmetric; their product is
    symmetric. Variance ≈ n 4e^ε/(e^ε − 1)²."""
    e = check_scalar("eps", eps, low=0.0)
    p, q = 0.5, float(special.expit(-e))  # 1/(e^ε + 1) without overflow
    qc = float(special.expit(e))  # 1 − q
    return _oracle("OUE", e, p, q, *_two_bits((p, p), (q, qc), (q, qc), (p, p)),
                   loss=_two_bit_loss(e))


def _local_hashing(name: str, e: float, g: int, params: dict[str, float]) -> FrequencyOracle:
    pp = 1.0 / (1.0 + (g - 1) * math.exp(-e))  # e^ε/(e^ε + g − 1) without overflow
    qq = math.exp(-e) * pp
    # the hash H is revealed: with probability 1/g, H(v₁) = H(v₂) and both inputs give the same
    # GRR_g law (one merged outcome, loss 0); otherwise GRR_g between two different values, whose
    # g − 2 other outcomes have the same probability under both inputs (merged: loss 0)
    c = 1.0 / g
    P = np.array([c, (1 - c) * pp, (1 - c) * qq, (1 - c) * (g - 2) * qq])
    Q = np.array([c, (1 - c) * qq, (1 - c) * pp, (1 - c) * (g - 2) * qq])
    # (the losses given: qq = e^{−ε} pp underflows beyond ε ≈ 745, and BLH at ε = 744 read
    # ε(0) = 743.75 from the rounded masses)
    return _oracle(name, e, pp, 1.0 / g, P, Q, loss=[0.0, -e, e, 0.0], **params)


def blh(eps: float) -> FrequencyOracle:
    """Binary local hashing (g = 2; WBLJ 2017), assuming a hash family with
    Pr[H(v₁) = H(v₂)] = 1/g. p = e^ε/(e^ε + 1), q = 1/2."""
    return _local_hashing("BLH", check_scalar("eps", eps, low=0.0), 2, {})


def olh(eps: float) -> FrequencyOracle:
    """Optimized local hashing (WBLJ 2017), g = round(e^ε + 1) (at least 2), assuming
    Pr[H(v₁) = H(v₂)] = 1/g. p = e^ε/(e^ε + g − 1), q = 1/g; variance ≈ n 4e^ε/(e^ε − 1)²."""
    e = check_scalar("eps", eps, low=0.0, high=30.0)
    g = max(2, int(round(math.exp(e) + 1)))
    return _local_hashing("OLH", e, g, {"g": g})


def catastrophe(sensitivity: float, scale: float, delta: float) -> DeltaMix:
    """The "catastrophe mechanism": with probability δ release the true value, otherwise add
    Lap(0, b) noise. A release of the exact value identifies the dataset, so the curve is
    L_{Δ/b} ⊗ f_{0,δ}: (1 − δ) L_{Δ/b}(α/(1 − δ)), exact (theory §4). It is (Δ/b, δ)-DP
    (δ(ε) = δ for ε ≥ Δ/b) but not ε-DP for any finite ε (δ(ε) ≥ δ for every ε)."""
    mu = quotient_up(check_scalar("sensitivity", sensitivity, low=0.0),
                     check_scalar("scale", scale, low=0.0, low_open=True))
    d = check_scalar("delta", delta, low=0.0, high=1.0)
    return DeltaMix(Laplace(mu), d)


def exponential(
    utilities_D: Any, utilities_D_prime: Any, eps: float, sensitivity: float = 1.0
) -> MechanismCurve:
    """The exponential mechanism (McSherry & Talwar 2007) between two neighbouring datasets with
    utility vectors u and u': outputs i with probability ∝ exp(ε u_i / (2Δ)).

    Returns the exact curve T(P_u, P_u') of this pair. Its ``eps`` is the mechanism's ε-DP
    guarantee ε, which holds for every pair with ‖u − u'‖_∞ ≤ Δ (McSherry & Talwar 2007);
    this pair's own loss can be smaller (``epsilon(0) ≤ eps``).

    Examples
    --------
    >>> f = exponential([1.0, 2.0, 3.0], [2.0, 2.0, 2.0], eps=1.0)
    >>> f.eps, bool(f.dominates(EpsDelta(f.eps)))
    (1.0, True)
    """
    u = np.atleast_1d(as_array("utilities_D", utilities_D))
    v = np.atleast_1d(as_array("utilities_D_prime", utilities_D_prime))
    if u.shape != v.shape or u.ndim != 1 or u.size == 0:
        raise ValueError(
            "utility vectors must be 1-D of the same non-zero length, got shapes "
            f"{u.shape}, {v.shape}"
        )
    e = check_scalar("eps", eps, low=0.0)
    s = check_scalar("sensitivity", sensitivity, low=0.0, low_open=True)
    if np.max(np.abs(u - v)) > s * (1 + 1e-12):
        raise ValueError(f"the utilities differ by {np.max(np.abs(u - v)):g} > sensitivity {s:g}")
    # (shifted so that the largest is 0, from u − max u: within 3u of themselves whatever the
    # utilities' scale, as a = εu/(2Δ) − max a would not be where u ≈ 1e300)
    d_p = e * (u - float(np.max(u))) / (2 * s)
    d_q = e * (v - float(np.max(v))) / (2 * s)
    log_p, log_q = _log_softmax(d_p), _log_softmax(d_q)
    loss, loss_err = _exponential_loss(d_p, e * (v - u) / (2 * s))
    # each log-mass within 3u|d_j| + u (4 + 3D + log n) of itself (d_j, and log1p of the sum
    # of the others' e^{d}, D the largest |d| of a mass in the float range), so each mass
    # within that relative (a mass below the float range is raised to the least subnormal)
    live = np.concatenate([d_p[d_p > -745.0], d_q[d_q > -745.0]])
    dd = float(np.max(np.abs(live))) if live.size else 0.0
    r = _U * (5.0 + 6.0 * dd + math.log(u.size + 1.0))
    with np.errstate(under="ignore"):
        # (a mass below the float range keeps the least subnormal: its outcome's loss still
        # counts, and ε(0) is the largest loss; dropped, exponential([0, −1500], [0, −1499], 1)
        # read ε(0) = 0 for 0.5. Raising a mass raises δ on its side)
        P = np.maximum(np.exp(log_p), TINY)
        Q = np.maximum(np.exp(log_q), TINY)
    curve = PiecewiseLinear.from_masses(
        P, Q, loss=loss, loss_err=loss_err, mass_rtol=r,
        name=f"T(P, Q) on {u.size} outcome{'s' if u.size != 1 else ''}",
    )
    curve._exact_losses = True  # (within loss_err: gdp_mu reads subnormal masses from them)
    return MechanismCurve._of(curve, "exponential", e, {"eps": e, "sensitivity": s})


def _exponential_loss(d: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The losses ℓ_i = log(q_i/p_i) = c_i − K of the exponential mechanism, with a bound on
    each one's absolute error. ``d``: the exponents of P shifted to a largest of 0;
    ``c`` = ε(u′ − u)/(2Δ), the exponents' differences; K = log Σ_j p_j e^{c_j}.

    With weights w_j = e^{d_j} ∝ p_j and correctly rounded sums (math.fsum): where |c| ≤ 1,
    K = log1p(S), S = Σ_j w_j expm1(c_j) / Σ_j w_j, which keeps relative precision where the
    utilities are close (log q − log p of two log-softmaxes cancelled: ε = 1e-7, u = (0, 1),
    u′ = (0, 0.7) read ε(0) = 7.50000006544e-09 for 7.50000015938e-09). Elsewhere
    K = LSE(d + c) − log Σ w (scipy's logsumexp: no overflow or underflow).

    Error: c_j within 3u|c_j|, which moves K by at most 3u max|c| (∂K/∂c_j are weights
    summing to 1); w_j within relative r = u (1 + 3|d_j|), or, below the float range, by at most
    the least subnormal each (n₀ of them). With log1p: each term within (2u + r) of itself, so
    S within ((2u + r) Σ w|expm1 c| + 2u|S| + 2n₀ 2⁻¹⁰⁷⁴)/Σ w and K within that over 1 + S,
    plus u|K|. With the LSE: each d_j + c_j within 4u(|d_j| + |c_j|), which moves it by their
    softmax-weighted sum (∂LSE/∂x_j), plus its own rounding 4u(|LSE| + n + 2), and log Σ w
    within r + 2u + n₀ 2⁻¹⁰⁷⁴/Σ w. ℓ_i is within 4u|c_i| + u|K| plus K's error.
    """
    n = d.size
    big = float(np.max(np.abs(c))) if n else 0.0
    with np.errstate(under="ignore"):
        w = np.exp(d)
    r = _U * (1.0 + 3.0 * float(np.max(np.abs(d[d > -745.0]), initial=0.0)))
    dead = int(np.count_nonzero(w == 0.0)) * TINY
    wsum = math.fsum(w.tolist())
    if big <= 1.0:
        terms = w * np.expm1(c)
        big_s = math.fsum(terms.tolist()) / wsum
        k = math.log1p(big_s)
        t_abs = math.fsum(np.abs(terms).tolist()) / wsum
        dk = 1.01 * ((2.0 * _U + r) * t_abs + 2.0 * _U * abs(big_s) + 2.0 * dead / wsum) / (
            1.0 + big_s) + _U * abs(k) + 3.0 * _U * big
    else:
        x = d + c
        lse = float(special.logsumexp(x))
        k = lse - math.log(wsum)
        with np.errstate(under="ignore"):
            pi = np.exp(x - lse)
        dk = 1.01 * (4.0 * _U * math.fsum((pi * (np.abs(d) + np.abs(c))).tolist())
                     + 4.0 * _U * (abs(lse) + n + 2) + r + 2.0 * _U + dead / wsum) + _U * abs(k)
    return c - k, 4.0 * _U * np.abs(c) + _U * abs(k) + dk


def _log_softmax(a: np.ndarray) -> np.ndarray:
    """log(e^{a_i} / Σ_j e^{a_j}) with relative precision also where a mass is close to 1:
    (a_i − a_m) − log1p(Σ_{j ≠ m} e^{a_j − a_m}) for the largest a_m (a log-sum-exp would round
    a_m + 1e-23 to a_m)."""
    m = int(np.argmax(a))
    d = a - a[m]
    rest = np.exp(np.delete(d, m))
    return d - math.log1p(float(rest.sum()))


def subsampled_eps(eps: float, p: float) -> MechanismCurve:
    """An ε-DP mechanism run on a subsample (m of n records without replacement, p = m/n,
    replace-one neighbours): the exact curve C_p(f_{ε,0}) (DRS Thm 4.2, theory §7).

    Its ``eps`` is the amplified ε' = ln(1 + p(e^ε − 1)), the classical amplification formula
    (Balle, Barthe & Gaboardi 2018), rounded up, which is tight at δ = 0 (``epsilon(0)`` is
    ``eps`` up to rounding). The exact curve dominates f_{ε',0} and is strictly above it in
    places: at δ > 0 it gives a smaller ε than the formula.

    Examples
    --------
    >>> c = subsampled_eps(2.0, 0.1)
    >>> round(c.eps, 4), bool(c.dominates(EpsDelta(c.eps)))
    (0.494, True)
    """
    e = check_scalar("eps", eps, low=0.0)
    r = check_scalar("p", p, low=0.0, high=1.0)
    curve = EpsDelta(e).subsample(r)
    if not isinstance(curve, PiecewiseLinear):  # pragma: no cover - subsample of a PL is PL
        raise TypeError(f"C_p(f_(ε,0)) should be piecewise linear, got {curve!r}")
    # ln(1 + p(e^ε − 1)) = ε + ln(p + (1 − p) e^{−ε}) where e^ε overflows (ε = 800 raised)
    # (rounded up by a bound on its few roundings: to nearest it was an ulp below the true ε',
    # subsampled_eps(3.343356515442928e-05, 0.46318151828819487); a hunt)
    if e < 700.0 or r == 0.0:
        amplified = math.log1p(r * math.expm1(e)) * (1.0 + 6.0 * _U)
    else:
        terms = (e, math.log(r), math.log1p((1.0 - r) * math.exp(-e) / r))
        amplified = sum(terms) + 6.0 * _U * sum(abs(t) for t in terms)
    return MechanismCurve._of(curve, "subsampled ε-DP", amplified, {"eps": e, "p": r})

"""Noise calibration: the least noise (or most steps, largest sample rate) meeting a target.

Targets are certified: "ε ≤ eps at delta" is checked with the conservative ε of the curve (for
numeric curves the ε of the certified lower curve, an upper bound on the true ε), and "μ-GDP with
μ ≤ mu" with :meth:`fdp.TradeOff.gdp_mu` of the certified lower curve. The Laplace search grows its
bracket until it holds the answer (so it cannot fail on a reachable target), then bisects to a
relative tolerance ``rtol`` and returns the end of the bracket on which the target holds: the
returned noise meets the target, and noise smaller by a factor (1 − rtol) may not.

The DP-SGD searches (:func:`calibrate_dpsgd`, :func:`calibrate_steps`,
:func:`calibrate_sample_rate`) use closed forms first (the full-batch G_{√T Δ/σ}, exact for
p = 1 and for μ targets; the remove direction's ε ≤ −T log(1 − p); the sampling bound
1 − (1 − p)^T on the advantage), then the certified engine: its bracket holds on every grid
(``tol`` only chooses the grid), so coarse evaluations cost milliseconds and still certify, a
conservative bound under the target a pass and an optimistic bound above it a failure. They
locate the answer coarsely, certify a pass and a failure ``rtol`` apart at the coarsest
tolerance that allows it, and use the default accuracy only where ``rtol`` (or an integer step)
needs it. The result is a :class:`Calibrated` float (:class:`CalibratedSteps` int) whose
``info`` says which bound certified it, at which engine tolerance, and what shows it is tight.

DP-SGD calibrations use the conventions of :mod:`fdp.sgd`: the noise multiplier σ is the noise
std on the sum of clipped per-example gradients over the clipping norm C; ``sampling``,
``neighbours`` and ``sensitivity`` (in units of C) default to Poisson / add-remove / 1 and
uniform / replace-one / 2, and unsupported combinations raise ValueError before any search.

Examples
--------
>>> round(calibrate_gaussian(1.0, 1e-5), 4)        # exact, = fdp.gdp.sigma(1, 1e-5)
3.7306
>>> round(calibrate_gaussian(1.0, 1e-5, steps=100), 3)
37.306
>>> round(calibrate_laplace(1.0, 0.0), 6)          # one Laplace query: b = Δ/ε
1.0
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

from scipy import special

from . import gdp, risk
from ._checks import check_int, check_scalar
from ._numerics import FLOAT_MAX, LOG_FLOAT_MAX, TINY, UNIT_ROUNDOFF, div_up, mul_up
from .families import Laplace
from .tradeoff import TradeOff

__all__ = [
    "Calibrated",
    "CalibratedSteps",
    "calibrate_gaussian",
    "calibrate_laplace",
    "calibrate_dpsgd",
    "calibrate_steps",
    "calibrate_sample_rate",
]


_TARGETS = "eps and delta (ε ≤ eps at delta), or mu (μ-GDP)"
_RISK_TARGETS = (
    "eps and delta (ε ≤ eps at delta), mu (μ-GDP), advantage (every attack has TPR − FPR ≤ "
    "advantage), or tpr and fpr (every attack with FPR fpr has TPR ≤ tpr)"
)


def _target(
    eps: Any,
    delta: Any,
    mu: Any,
    *,
    gaussian: bool = False,
    advantage: Any = None,
    tpr: Any = None,
    fpr: Any = None,
    risk_targets: bool = False,
) -> tuple[str, float, float]:
    """The target: ("mu", μ, 0), ("eps", ε, δ), ("advantage", a, 0) or ("tpr", t, α).

    With ``gaussian`` (DP-SGD), δ must be > 0: Gaussian noise has δ(ε) > 0 at every finite ε, so
    (ε, 0) cannot be met by any noise. ``risk_targets`` admits the attack-risk targets (and names
    them in the messages). Exactly one target must be given, each with its partner.
    """
    kw = {"eps": eps, "delta": delta, "mu": mu, "advantage": advantage, "tpr": tpr, "fpr": fpr}
    given = ", ".join(f"{k}={v!r}" for k, v in kw.items() if v is not None)
    groups = [
        name
        for name, keys in (("eps", ("eps", "delta")), ("mu", ("mu",)),
                           ("advantage", ("advantage",)), ("tpr", ("tpr", "fpr")))
        if any(kw[k] is not None for k in keys)
    ]
    options = _RISK_TARGETS if risk_targets else _TARGETS
    if len(groups) > 1:
        if not risk_targets and groups == ["eps", "mu"]:
            raise ValueError(f"give either mu, or eps and delta, not both (got {given})")
        raise ValueError(f"give one target, not both: {options}; got {given}")
    if not groups:
        raise ValueError(f"give a target: {options}; got none")
    kind = groups[0]
    if kind == "mu":
        return "mu", check_scalar("mu", mu, low=0.0, low_open=True), 0.0
    if kind == "advantage":
        # 0 is unreachable (Gaussian noise leaves TPR − FPR > 0), 1 is no constraint at all
        a = check_scalar("advantage", advantage, low=0.0, high=1.0, low_open=True, high_open=True)
        return "advantage", a, 0.0
    if kind == "tpr":
        if tpr is None or fpr is None:
            raise ValueError(
                f"tpr and fpr go together (TPR ≤ tpr at FPR fpr); got tpr={tpr!r}, fpr={fpr!r}"
            )
        alpha = check_scalar("fpr", fpr, low=0.0, high=1.0, low_open=True, high_open=True)
        t = check_scalar("tpr", tpr, low=0.0, high=1.0, low_open=True, high_open=True)
        if not t > alpha:
            raise ValueError(
                f"tpr must lie in (fpr, 1) = ({alpha:g}, 1), got {t!r}: an attack that ignores "
                f"the output already has TPR = FPR, so tpr ≤ fpr cannot be met"
            )
        return "tpr", t, alpha
    if eps is None or delta is None:
        raise ValueError(f"give a target: {options}; got eps={eps!r}, delta={delta!r}")
    e = check_scalar("eps", eps, low=0.0)
    d = check_scalar("delta", delta, low=0.0, high=1.0, low_open=gaussian, high_open=True)
    return "eps", e, d


def _meets(curve: TradeOff, kind: str, a: float, b: float) -> bool:
    """Whether ``curve`` meets the target on its conservative side (see :func:`_target`)."""
    if kind == "mu":
        return bool(curve.gdp_mu() <= a)
    if kind == "advantage":
        return bool(risk.advantage(curve) <= a)
    if kind == "tpr":
        return bool(risk.tpr(curve, b) <= a)
    return bool(curve.epsilon(b) <= a)


def _gaussian_mu_bound(kind: str, a: float, b: float) -> float:
    """The largest μ for which G_μ meets the target, rounded down by a bound on its round-off
    (so G_μ provably meets it); 0.0 if no μ > 0 is proven to.

    - (ε, δ): μ = :func:`fdp.gdp.mu` (Balle & Wang 2018, Thm 8; rounded down there);
    - advantage a: 2Φ(μ/2) − 1 = erf(μ/(2√2)) ≤ a  ⇔  μ ≤ 2√2 erf⁻¹(a) (Dong, Roth & Su 2022,
      Cor 2.13 at ε = 0);
    - TPR t at FPR α: 1 − G_μ(α) = Φ(Φ⁻¹(α) + μ) ≤ t  ⇔  μ ≤ Φ⁻¹(t) − Φ⁻¹(α) (DRS Def 2.7).
    """
    if kind == "mu":
        return a
    if kind == "eps":
        return float(gdp.mu(a, b))
    if kind == "advantage":
        m = 2.0 * math.sqrt(2.0) * float(special.erfinv(a))
        return max(m * (1.0 - 1e-13), 0.0)  # erfinv is accurate to a few ulp
    # Φ⁻¹ to a few ulp of its value: for t > 1/2 as −Φ⁻¹(1 − t), where 1 − t is exact
    zt = -float(special.ndtri(1.0 - a)) if a > 0.5 else float(special.ndtri(a))
    za = float(special.ndtri(b))
    m = zt - za - 1e-13 * (abs(zt) + abs(za)) - 1e-300
    return max(m, 0.0)


def _search(
    ok: Callable[[float], bool],
    start: float,
    *,
    increasing_ok: bool,
    rtol: float,
    what: str,
    known_ok: float | None = None,
    floor: float = 1e-12,
    factor: float = 2.0,
) -> float:
    """The boundary x* of the set where ``ok`` holds, for ``ok`` monotone in x > 0.

    ``increasing_ok``: ok(x) implies ok(y) for y > x (e.g. more noise); returns the smallest x
    that is ok (to rtol, on the ok side). Otherwise ok is downward closed; returns the largest.
    ``known_ok``: a value proven (by a closed-form bound) to meet the target; the search never
    returns anything worse, and returns it when the numerical check cannot confirm a better one.
    ``factor``: how fast the bracket grows from ``start`` (small when ``start`` is a good guess).
    Each x is checked once.
    """
    ok = _memoized(ok)
    if known_ok is not None:
        start = min(start, known_ok) if increasing_ok else max(start, known_ok)
    if not math.isfinite(start):  # (a guess that overflowed looped forever at lo = hi = ∞:
        start = 1e12  # past 1e12 the target is reported unreachable below)
    lo = hi = start
    if increasing_ok:
        while not ok(hi):
            lo, hi = hi, hi * factor
            if known_ok is not None and hi >= known_ok:
                if ok(known_ok):
                    lo, hi = lo, known_ok
                    break
                return known_ok
            if hi > 1e12:
                raise ValueError(f"target unreachable: no {what} up to 1e12 meets it")
        while ok(lo):
            if lo <= floor:
                if floor > 1e-12:
                    raise ValueError(
                        f"the target is met already at the smallest {what} searched, {floor:g}"
                    )
                return lo
            hi, lo = lo, max(lo / factor, floor)
    else:
        while not ok(lo):
            hi, lo = lo, lo / 2.0
            if lo < 1e-12:
                raise ValueError(f"target unreachable: no {what} down to 1e-12 meets it")
        while ok(hi):
            lo, hi = hi, hi * 2.0
            if hi > 1e12:
                return lo
    # now ok(good) and not ok(bad); at most ~200 bisections even for rtol = 1e-6
    good, bad = (hi, lo) if increasing_ok else (lo, hi)
    for _ in range(200):
        if abs(good - bad) <= rtol * good:
            break
        mid = math.sqrt(good * bad)
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good


def _memoized(ok: Callable[[float], bool]) -> Callable[[float], bool]:
    seen: dict[float, bool] = {}

    def check(x: float) -> bool:
        if x not in seen:
            seen[x] = bool(ok(x))
        return seen[x]

    return check


def _check_rtol(rtol: Any) -> float:
    return check_scalar("rtol", rtol, low=1e-6, high=0.5)


def calibrate_gaussian(
    eps: Any, delta: Any, *, steps: int = 1, sensitivity: float = 1.0
) -> float:
    """Exact σ for n-fold composition of the Gaussian mechanism to be (ε, δ)-DP.

    n Gaussian mechanisms with noise σ and L2 sensitivity Δ compose to G_{√n Δ/σ} (DRS Cor 3.3),
    so σ = Δ √n / mu(ε, δ) with :func:`fdp.gdp.mu` (Balle & Wang 2018 for n = 1). Exact.
    """
    steps = check_int("steps", steps, low=1)
    s = check_scalar("sensitivity", sensitivity, low=0.0, low_open=True)
    e = check_scalar("eps", eps, low=0.0)
    d = check_scalar("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    m = float(gdp.mu(e, d))
    if m == 0.0:  # (no μ in the float range is proven to meet the target)
        return math.inf
    # (s/m rounded up, then times √n with the old 4u margin for μ: a subnormal σ kept no relative
    # margin, and s·√n/m overflowed where σ is finite, s = 1e-300 and m = 1e-310)
    return _positive(mul_up(div_up(s, m), math.sqrt(steps) * (1.0 + 4.0 * UNIT_ROUNDOFF)))


def _positive(x: float) -> float:
    """A least noise that underflowed to 0 read as the least positive float, which is above it
    (0 noise is no mechanism: calibrate_gaussian(1e300, 0.5, sensitivity=1e-300) read 0.0)."""
    return float(x) if x > 0.0 else TINY


def calibrate_laplace(
    eps: Any,
    delta: Any,
    *,
    steps: int = 1,
    sensitivity: float = 1.0,
    rtol: float = 1e-3,
) -> float:
    """Least Laplace scale b such that ``steps`` Laplace mechanisms (L1 sensitivity Δ) are
    (ε, δ)-DP, certified.

    One mechanism is L_{Δ/b}-DP with ε(δ) = Δ/b + 2 ln(1 − δ) (exact, closed form); for n > 1 the
    n-fold composition is computed by the certified engine and b found by bisection (relative
    tolerance ``rtol``, returned on the safe side). Where the product's top outcome alone
    (every step's loss at Δ/b, Q-mass 2⁻ⁿ) rules out every b below (nΔ/ε)/(1 + rtol), the basic
    composition's nΔ/ε is returned without the engine (large ε against n).
    """
    steps = check_int("steps", steps, low=1)
    s = check_scalar("sensitivity", sensitivity, low=0.0, low_open=True)
    e = check_scalar("eps", eps, low=0.0, low_open=True)
    d = check_scalar("delta", delta, low=0.0, high=1.0, high_open=True)
    rtol = _check_rtol(rtol)
    up = 1.0 + 4.0 * UNIT_ROUNDOFF
    if steps == 1:
        # (rounded up by 4 ulps: to nearest, b was one ulp small in about half the cases, its ε
        # 1e-17 relative over the target; div_up/mul_up keep a subnormal b on the safe side)
        return _positive(mul_up(div_up(s, e - 2.0 * math.log1p(-d)), up))
    # basic composition: n Laplace mechanisms with scale b are (nΔ/b, 0)-DP, and at δ = 0 this is
    # exact (the largest privacy losses add), so b = nΔ/ε is the answer at δ = 0 and a certified
    # answer at every δ
    if d == 0.0:
        return _positive(mul_up(div_up(s, e), steps * up))  # (rounded up, as above)
    # the search runs in units of Δ (the mechanism depends on Δ/b alone), b = Δ·b₁ rounded up:
    # in b itself, Δ = 1e-320 divided by zero and Δ = 1e300 left the searched range (b = ∞)

    known = mul_up(div_up(1.0, e), steps * up)  # b₁ = n/ε: (nμ, 0)-DP
    if _laplace_top_fails(e, d, steps, rtol):
        # (no b₁ ≤ known/(1 + rtol) is ok: known is within rtol of the least, the search's own
        # promise, without the engine; at ε = 1e100 the engine's grid was capped, 5 s and two
        # "100 % wide" warnings for this answer)
        return _positive(mul_up(s, known))

    def ok(b1: float) -> bool:
        # (μ = 1/b₁ rounded up: a μ half an ulp low would certify a b₁ a hair too small)
        return bool((Laplace(math.nextafter(1.0 / b1, math.inf)) ** steps).epsilon(d) <= e)

    b1 = _search(ok, math.sqrt(steps) / e, increasing_ok=True, rtol=rtol, what="scale",
                 known_ok=known)
    return _positive(mul_up(s, b1))


def _laplace_top_fails(eps: float, delta: float, steps: int, rtol: float) -> bool:
    """Whether n = ``steps`` Laplace mechanisms of scale b₁ ≤ (n/ε)/(1 + rtol) (in units of Δ)
    are certainly not (ε, δ)-DP.

    Each step's loss is μ = 1/b₁ (its largest) with Q-mass 1/2 (Q = Lap(Δ, b), x ≥ Δ), so the
    product's outcome with every loss at the top has Q-mass 2⁻ⁿ and loss nμ, and
    δ(ε) = Σ (Q − e^ε P)₊ ≥ 2⁻ⁿ (1 − e^{ε − nμ}) (DRS 2022, the δ(ε) of a pair of measures;
    one outcome's term). At b₁ ≤ (n/ε)/(1 + rtol), nμ − ε ≥ rtol·ε, taken as rtol·ε/2 for the
    roundings of n/ε; where 2⁻ⁿ (1 − e^{−rtol ε/2}) > δ (compared in logs with a 1e-9 margin),
    δ(ε) > δ at every such b₁ (δ(ε) grows as b₁ falls)."""
    x = 0.5 * rtol * eps
    log_lower = -steps * math.log(2.0) + math.log(-math.expm1(-x))
    return log_lower > math.log(delta) + 1e-9 * (1.0 + abs(math.log(delta)) + abs(log_lower))


def _conv(sampling: str, neighbours: str | None, sensitivity: float | None) -> Any:
    from .sgd import conventions

    return conventions(sampling, neighbours, sensitivity)


def _dpsgd_curve(sigma: float, p: float, steps: int, conv: Any, tol: float) -> TradeOff:
    from .sgd import dpsgd

    return dpsgd(
        sigma,
        p,
        steps,
        sampling=conv.sampling,
        neighbours=conv.neighbours,
        sensitivity=conv.sensitivity,
        tol=tol,
    )


# ------------------------------------------------------------------------------ certified results
class Calibrated(float):
    """A calibrated value (a ``float``) that says what certified it, in ``info``.

    ``info["certified_by"]`` names the bound that proves the target: ``"engine"`` (the
    conservative side of fdp's certified numerical bracket, at the engine tolerance
    ``info["tol"]``), ``"closed form"`` (an exact formula) or ``"closed form and engine"``;
    ``info["risk"]`` is the certified value of the target's quantity (ε at δ, μ, advantage or
    TPR) at the returned value, ``info["evidence"]`` the bound of each part (for Poisson
    (ε, δ) targets the add and remove directions), and ``info["tight"]`` what shows that a value
    ``rtol`` beyond it (less noise, a larger sample rate; one more step) misses the target:
    ``"optimistic bound above the target (fails in truth)"`` or ``"default-accuracy check
    fails"``.

    Examples
    --------
    >>> c = Calibrated(1.5, {"certified_by": "closed form"})
    >>> c + 1, c.info["certified_by"]
    (2.5, 'closed form')
    """

    info: dict[str, Any]

    def __new__(cls, value: float, info: dict[str, Any] | None = None) -> Calibrated:
        out = super().__new__(cls, value)
        out.info = dict(info or {})
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (float(self), self.info)


class CalibratedSteps(int):
    """A calibrated number of steps (an ``int``) with ``info`` as in :class:`Calibrated`."""

    info: dict[str, Any]

    def __new__(cls, value: int, info: dict[str, Any] | None = None) -> CalibratedSteps:
        out = super().__new__(cls, value)
        out.info = dict(info or {})
        return out

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (int(self), self.info)


# ------------------------------------------------------------------------------ DP-SGD risk probes
#: Engine tolerance while locating an answer. The engine's bracket is certified for every grid
#: (``tol`` only chooses the grid), so coarse evaluations are cheap *and* sound: their
#: conservative side can certify a pass and their optimistic side a failure.
_TOL_LOCATE = 3.0
#: The engine's default accuracy (the ``tol`` of :func:`fdp.dpsgd` and :func:`fdp.compose`).
_TOL_DEFAULT = 1e-3


def _release(curve: Any) -> None:
    """Break the engine's f ↔ f⁻¹ reference cycle (``_inverse``) of a curve no longer needed.

    A curve from the composition engine refers to its inverse (or to the closure that builds it)
    and the inverse back to it, so its grids would live until the next cyclic garbage collection;
    over a search that is one set of arrays per evaluation (1.6 GB after 16 evaluations near
    σ = 0.33 with p = 0.01, T = 1000). Breaking the cycle frees them at once.
    """
    # (the parts built so far: a DP-SGD result's remove direction may never have been built)
    for part in getattr(curve, "_built", ()):
        _release(part)
    if getattr(curve, "_inverse", None) is not None:
        curve._inverse = None


class _Risk:
    """Certified bounds on a DP-SGD target's risk at (σ, p, T), one *part* at a time.

    The risk is ε at δ (``eps``), δ(0) (``advantage``) or 1 − h(α) (``tpr``) of the curve h of
    :func:`fdp.sgd.dpsgd`. It does not increase with σ and does not decrease with p or T: more
    noise, rarer sampling or fewer steps give a pointwise larger curve (G_{Δ/σ} grows with σ;
    f ↦ p f + (1 − p) Id, C_p, the inverse and ⊗ are monotone, and f_p grows as p shrinks;
    theory §4 and §7, Dong, Roth & Su 2022, Sec 3.1 and Thm 4.2). h's risk is the largest of its
    parts':

    - ``eps`` with Poisson sampling: h = min{f, f⁻¹}** with f the T-fold add pair, whose privacy
      profile is max(δ_f, δ_{f⁻¹}), so ε_h(δ) = max(ε_f(δ), ε_{f⁻¹}(δ)); parts ``"add"`` and
      ``"remove"``, composed by the engine exactly as :func:`fdp.sgd.dpsgd` composes f and f⁻¹.
      The remove pair's privacy loss is log dP/d((1 − p)P + pQ) = −log(1 − p + p e^L) ≤
      −log(1 − p) per step, so T steps have loss ≤ −T log(1 − p) and ε_{f⁻¹}(δ) ≤ −T log(1 − p)
      at every δ ≥ 0: a closed form that needs no grid (where the grid is expensive: small σ).
    - otherwise a single part, ``"curve"``: h itself.

    :meth:`engine` returns (optimistic, conservative) bounds on a part's risk, from the
    certified bracket of the engine at tolerance ``tol``: the conservative one from the lower
    curve (with the engine's tail bound where it is smaller), the optimistic one from the upper
    curve.
    """

    def __init__(self, kind: str, a: float, b: float, conv: Any) -> None:
        self.kind, self.a, self.b, self.conv = kind, a, b, conv
        poisson_eps = kind == "eps" and conv.sampling == "poisson"
        self.parts: tuple[str, ...] = ("add", "remove") if poisson_eps else ("curve",)
        self.evaluations: dict[str, int] = {}

    def closed(self, part: str, s: float, p: float, t: int) -> tuple[float, float]:
        """Closed-form (optimistic, conservative) bounds on the part's risk (0 and ``inf``
        where there are none).

        Conservative:

        - remove direction, ε: −T log(1 − p) (see the class docstring);
        - advantage: 1 − (1 − p)^T. Each step's pair differs only when the example is sampled,
          so its total variation is at most p, and a product of pairs with total variations
          τ_i has total variation at most 1 − Π(1 − τ_i) (couple the steps one by one: the
          outputs agree with probability Π(1 − τ_i)); δ(0) is the total variation;
        - TPR at FPR α: α + 1 − (1 − p)^T, since E_Q φ − E_P φ ≤ TV(P, Q) for every test φ;
        - ε at δ (any sampling, either direction): 0 where 1 − (1 − p)^T ≤ δ, as δ(ε) ≤ δ(0).

        Both sides, for the add direction's ε and the advantage with Poisson sampling and
        T·p ≤ 4: the sampled-count bounds of :class:`fdp.tails.SampledCountBound` (the only
        certified answers where the example is rarely sampled and each sampled step nearly
        reveals it: σ = 0.1, p ≈ 1e-13).
        """
        from .tails import COUNT_BOUND_MAX_MEAN, SampledCountBound

        if p >= 1.0:
            return 0.0, math.inf
        tv = -math.expm1(t * math.log1p(-p)) * (1.0 + 1e-12)
        if self.kind == "eps" and tv <= self.b:
            # δ(ε) ≤ δ(0) = TV ≤ δ: ε(δ) = 0, at every σ, in either direction (uniform sampling
            # at p = 1e-9, T = 1000, δ = 1e-5 took 61 s and returned σ = 0.026)
            return 0.0, 0.0
        if part == "remove":
            return 0.0, -t * math.log1p(-p) * (1.0 + 1e-12)  # log1p: within an ulp or two
        opt, cons = 0.0, math.inf
        if self.kind in ("advantage", "tpr"):
            cons = tv if self.kind == "advantage" else min(1.0, (self.b + tv) * (1.0 + 1e-15))
        count = (self.conv.sampling == "poisson" and t * p <= COUNT_BOUND_MAX_MEAN
                 and (part == "add" or (part == "curve" and self.kind == "advantage")))
        if count:
            b = SampledCountBound(self.conv.sensitivity / s, p, t)
            if self.kind == "eps":
                # (the bisections only where they can decide: the bounds are monotone in ε, so
                # ε_upper(δ) ≤ a needs δ_upper(a) ≤ δ, and ε_lower(δ) > a needs δ_lower(a) > δ)
                if float(b.delta_upper(self.a)[0]) <= self.b:
                    cons = min(cons, float(b.epsilon_upper(self.b)[0]))
                if float(b.delta_lower(self.a)[0]) > self.b:
                    opt = float(b.epsilon_lower(self.b)[0])
            else:
                opt = float(b.delta_lower(0.0)[0])
                cons = min(cons, float(b.delta_upper(0.0)[0]))
        return opt, cons

    def engine(
        self, part: str, s: float, p: float, t: int, tol: float
    ) -> tuple[float, float, int]:
        """(optimistic, conservative) bounds on the part's risk, from the engine at ``tol``, and
        the size of the engine's grid (a measure of the evaluation's cost).

        The search reads both ends of each bracket, so a bracket wider than ``tol`` only costs
        it a refinement: the engine's :class:`~fdp.pld.AccuracyWarning` is not passed on (``fdp
        calibrate`` in the README printed one for a σ on the way, 0.11 % wide at tol 1e-3)."""
        from .pld import AccuracyWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AccuracyWarning)
            return self._engine(part, s, p, t, tol)

    def _engine(
        self, part: str, s: float, p: float, t: int, tol: float
    ) -> tuple[float, float, int]:
        from .composition import compose
        from .families import Gaussian
        from .operations import Mixture
        from .sgd import dpsgd

        key = f"{tol:g}"
        self.evaluations[key] = self.evaluations.get(key, 0) + 1
        conv = self.conv
        if part == "curve" or p >= 1.0:
            h: Any = dpsgd(
                s, p, t, sampling=conv.sampling, neighbours=conv.neighbours,
                sensitivity=conv.sensitivity, tol=tol,
            )
        else:  # as fdp.dpsgd composes them: f = (p G + (1 − p) Id)^{⊗T}, and f⁻¹ on its own
            step = Mixture(Gaussian(conv.sensitivity / s), p)
            f = step if part == "add" else step.inverse()
            if self.kind == "eps" and p * t <= SPARSE_MEAN:
                got = self._sparse_try(f, t, tol)
                if got is not None:
                    return got
                got = self._sparse_pair(s, p, t, tol)
                if got is not None:
                    return got
            h = compose(f, repeat=t, numeric=True, tol=tol)
        return self._read(h)

    def _sparse_pair(self, s: float, p: float, t: int, tol: float) -> tuple[
            float, float, int] | None:
        """ε's bracket at δ = b of the pair itself, as :func:`fdp.dpsgd` answers it, where that
        answer is not the planned engine's own: a very sparse run, whose ε is read on fixed
        grids (:meth:`fdp.sgd._ClosedFirst._on_grids`). It bounds either part: its conservative
        end bounds both directions' ε, and its optimistic end the risk itself, so an optimistic
        end above the target is a failure of the whole (what :class:`_Probe` makes of a part's).
        So the default check is fdp.dpsgd's own, and a σ that passes it passes
        ``fdp.dpsgd(σ, p, T).epsilon(δ)``. None elsewhere. Both parts ask it: the second time
        it is the cached answer."""
        from .sgd import _ClosedFirst, dpsgd

        key = (s, p, t, tol)
        hit = getattr(self, "_pair", None)
        if hit is not None and hit[0] == key:
            return hit[1]  # type: ignore[no-any-return]
        conv = self.conv
        h = dpsgd(s, p, t, sampling=conv.sampling, neighbours=conv.neighbours,
                  sensitivity=conv.sensitivity, tol=tol)
        if not (isinstance(h, _ClosedFirst) and h._sparse_bulk()):
            return None
        got = self._read(h)
        self._pair = (key, got)
        return got

    def _read(self, h: Any) -> tuple[float, float, int]:
        """(optimistic, conservative) bounds on the risk from the engine's curve h, and its grid
        size; h's grids are released."""
        try:
            npts = int(getattr(h, "info", {}).get("grid_points", 0) or 0)
            # (the brackets: taking h.upper would build the far-tail grid, see Bracketed)
            if self.kind == "eps":
                lo, hi = h.epsilon_bracket(self.b)
                opt, cons = float(lo), float(hi)
            elif self.kind == "advantage":
                lo, hi = h.delta_bracket(0.0)  # δ(0): the advantage (risk.advantage)
                opt, cons = float(lo), float(hi)
            else:  # TPR at FPR b
                cons = float(risk.tpr(h, self.b))
                opt = float(risk.tpr(h.upper, self.b))
        finally:
            _release(h)
        return opt, cons, npts

    def _sparse_try(self, f: TradeOff, t: int, tol: float) -> tuple[float, float, int] | None:
        """ε's bracket at δ = b from the engine on a fixed grid of step 0.01·a (a, the target ε,
        clipped to [0.01, 10]), or None where it neither decides the target nor (at a tol
        coarser than the default) is ``tol`` narrow. For sparse runs (p T ≤
        :data:`SPARSE_MEAN`): the planner sizes the grid for ε at δ ≈ 1e-3, near 0 there, and
        built 2²¹ points at any tol — calibrate_sample_rate(0.3, 1000, eps=1, delta=1e-12)
        spent 73 s on one evaluation at tol 3 whose bracket was 2e-5 wide; on the fixed grid it
        is 7e-5 wide in 0.14 s. Certified on any grid (the engine's bracket holds for every
        step), so only the cost can differ."""
        from .composition import compose

        step = 0.01 * min(max(self.a, 0.01), 10.0)
        for _ in range(2):  # (a second, finer try where the first was too wide: width ∝ h²)
            try:
                h: Any = compose(f, repeat=t, numeric=True, grid_step=step)
            except (ValueError, MemoryError):  # (a step too fine for the memory cap)
                return None
            lo, hi, npts = self._read(h)  # (the kind is "eps": ε's bracket at δ = b)
            # (it decides the target in truth; or, coarser than the default accuracy, it is as
            # narrow as asked. At the default tol an undecided bracket stands for fdp.dpsgd's
            # default check, which must then be fdp.dpsgd's own grid: the contract that σ(1 −
            # rtol) fails that check)
            if hi <= self.a or lo > self.a or (tol > _TOL_DEFAULT and hi - lo <= tol * hi):
                return lo, hi, npts
            if not (hi > lo and math.isfinite(hi)):
                return None
            step *= max(0.1, 0.7 * math.sqrt(tol * hi / (hi - lo)))
        return None


#: a Poisson DP-SGD run with p·T at most this is sparse: its calibration tries a fixed grid first
#: (:meth:`_Risk._sparse_try`)
SPARSE_MEAN = 4.0


class _Rec:
    """One bound on one part's risk at x: (x, tol, optimistic, conservative, source)."""

    __slots__ = ("x", "tol", "opt", "cons", "source", "n")

    def __init__(
        self, x: float, tol: float, opt: float, cons: float, source: str, n: int = 0
    ) -> None:
        self.x, self.tol, self.opt, self.cons, self.source = x, tol, opt, cons, source
        self.n = n  # grid points of the engine evaluation


class _Probe:
    """Certified evidence on where a monotone DP-SGD risk crosses its target, along x.

    x parametrizes the searched quantity so that the risk never decreases in x (x = −log σ,
    log p or log T); ``point(x)`` gives (σ, p, T). Every bound is kept. Because the true risk is
    monotone, a conservative bound ≤ target at x' certifies a *pass* (the target holds) at every
    x ≤ x', and an optimistic bound > target at x' a *failure* at every x ≥ x'. A conservative
    bound > target at the engine's default accuracy counts as a failed check (the old contract:
    "σ·(1 − rtol) may not meet the target" as fdp checks it).

    Passes at an engine tolerance coarser than the default must clear the target by the relative
    margin ``pm`` (≤ 1e-4) and come from an informative bracket (optimistic side > 0, within 25 %
    of the conservative one). The certificate needs neither, but with them the default-accuracy
    check of the returned value agrees with the coarse one: the conservative sides at different
    tolerances differ by a few 1e-6 when both are tight, while a grid too coarse for the ε asked
    (trivial optimistic side; seen at p = 1e-4, T = 1e4) moves its conservative side by several %
    from one σ or tol to the next.
    """

    def __init__(
        self, risk_: _Risk, point: Callable[[float], tuple[float, float, int]], rtol: float
    ) -> None:
        self.risk, self.point, self.a = risk_, point, risk_.a
        self.pm = min(1e-4, 0.1 * rtol)
        self.recs: dict[str, list[_Rec]] = {part: [] for part in risk_.parts}
        self.order = list(risk_.parts)
        self.seed_pass, self.seed_fail = -math.inf, math.inf  # closed-form facts about x
        self.ext, self.x_max = 0.0, math.inf  # see check()
        self.ext_failed: set[str] = set()
        self.last_n = 0  # grid points of the last check's largest engine evaluation

    def target(self, tol: float) -> float:
        return self.a if tol <= _TOL_DEFAULT else self.a * (1.0 - self.pm)

    def _passes(self, r: _Rec) -> bool:
        if r.cons > self.target(r.tol):
            return False
        if r.source != "engine" or r.tol <= _TOL_DEFAULT:
            return True
        # a coarse pass counts only if its bracket is informative: a trivial optimistic side
        # (the engine's grid too coarse for this ε, e.g. p = 1e-4 and T = 1e4) comes with
        # conservative bounds that jump by several % as σ or tol move, so the default-accuracy
        # check could disagree with it (it would still be a valid certificate)
        return r.opt > 0.0 and r.cons <= 1.25 * r.opt

    def _fails(self, r: _Rec) -> bool:
        return r.opt > self.a or (0.0 < r.tol <= _TOL_DEFAULT and r.cons > self.a)

    def lo(self) -> float:
        """The largest x certified to pass (every part has a passing bound at some x' ≥ x)."""
        per = [max((r.x for r in rs if self._passes(r)), default=-math.inf)
               for rs in self.recs.values()]
        return max(self.seed_pass, min(per))

    def hi(self) -> float:
        """The smallest x shown to fail (a part's optimistic bound, or the default check)."""
        return min([self.seed_fail] + [r.x for rs in self.recs.values() for r in rs
                                       if self._fails(r)])

    def pass_evidence(self, x: float) -> list[_Rec]:
        """For each part, the bound that certifies it at x (the one at the smallest x' ≥ x)."""
        out = []
        for rs in self.recs.values():
            ok = [r for r in rs if self._passes(r) and r.x >= x]
            if ok:
                out.append(min(ok, key=lambda r: (r.x, r.cons)))
        return out

    def fail_evidence(self, x: float) -> _Rec | None:
        bad = [r for rs in self.recs.values() for r in rs if self._fails(r) and r.x <= x]
        return max(bad, key=lambda r: r.x) if bad else None

    def _certified(self, part: str, x: float) -> bool:
        return any(self._passes(r) and r.x >= x for r in self.recs[part])

    def check(self, x: float, tol: float) -> tuple[float, float]:
        """Bound the risk at x with the engine at ``tol``: (optimistic, conservative) over the
        parts evaluated there. The part that was largest so far goes first; the others matter
        only if x can pass, so they are skipped when it cannot or when they are certified at x
        already, and are first tried coarsely (tol 3) a little further out, at x + ``ext``,
        which certifies them for every x below it when they are well inside the target."""
        s, p, t = self.point(x)
        engine_parts = []
        closed_cons = 0.0
        for part in self.order:
            c_opt, bound = self.risk.closed(part, s, p, t)
            if c_opt > self.a:  # a certified failure: x misses the target, whatever the rest
                self.recs[part].append(_Rec(x, 0.0, c_opt, bound, "closed form"))
                return c_opt, bound
            if bound <= self.a:
                self.recs[part].append(_Rec(x, 0.0, c_opt, bound, "closed form"))
                closed_cons = max(closed_cons, bound)
            else:
                engine_parts.append(part)
        opt, cons = -math.inf, -math.inf
        self.last_n = 0
        for i, part in enumerate(engine_parts):
            if i > 0:
                if cons > self.target(tol) or self._certified(part, x):
                    continue
                recs = self.recs[part]
                if (tol < _TOL_LOCATE and self.ext > 0.0 and part not in self.ext_failed
                        and (not recs or recs[-1].cons <= 0.97 * self.a)):  # well inside
                    xe = min(x + self.ext, self.x_max)
                    self._record(part, xe, _TOL_LOCATE)
                    if self._certified(part, x):
                        continue
                    self.ext_failed.add(part)
            o, c = self._record(part, x, tol)
            opt, cons = max(opt, o), max(cons, c)
        if not engine_parts:
            return 0.0, closed_cons
        last = {q: (self.recs[q][-1].cons if self.recs[q] else -math.inf) for q in self.order}
        self.order.sort(key=lambda q: -last[q])
        return opt, cons

    def _record(self, part: str, x: float, tol: float) -> tuple[float, float]:
        o, c, n = self.risk.engine(part, *self.point(x), tol)
        if not (c >= 0.0 and o >= 0.0):  # NaN: never a certificate
            raise FloatingPointError(f"the engine returned {o!r}, {c!r} at {self.point(x)}")
        self.recs[part].append(_Rec(x, tol, o, c, "engine", n))
        self.last_n = max(self.last_n, n)
        return o, c


def _log_ratio(v: float, a: float) -> float:
    """log(v/a), ±inf at the ends (v = 0 or inf)."""
    if v <= 0.0:
        return -math.inf
    if math.isinf(v):
        return math.inf
    return math.log(v / a)


def _locate(
    probe: _Probe, x0: float, slope: float, gap: float, x_max: float, max_evals: int
) -> tuple[float, float, float, float, int, float]:
    """Stage 1 of :func:`_solve`: coarse secant steps on F(x) = log(risk/target), safeguarded by
    the bracket of F's sign, until the root is known to ~max(gap, 1e-3)/4 (or the probe's evidence
    already closes the gap). The tolerance is 3, or up to 30 once an evaluation shows a large
    grid (≥ 2¹⁶ points) with a bracket narrower than 10 % (long runs, small p: tol 3 can cost a
    second there, tol 30 a few ms). Returns the last x evaluated, its conservative bound, the
    log-width of its bracket, the slope dF/dx, the number of evaluations and the tolerance."""
    a = probe.a
    tol3 = _TOL_LOCATE
    x = x3 = min(x0, x_max)
    cons3, width3 = math.nan, math.inf
    xl, xh = -math.inf, math.inf  # F ≤ 0 at xl, F > 0 at xh (coarse)
    prev: tuple[float, float] | None = None
    limit, last_dir = 2.0, 0
    close = max(gap, 1e-3) / 4.0  # the coarse bounds jitter; finer is stage 2's job
    evals = 0
    while evals < max_evals:
        opt, cons = probe.check(x, tol3)
        evals += 1
        if probe.hi() - probe.lo() <= gap or probe.lo() >= x_max:
            break
        f = _log_ratio(cons, a)
        x3, cons3 = x, cons
        width3 = _log_ratio(cons, opt) if opt > 0.0 else math.inf
        if tol3 == _TOL_LOCATE and probe.last_n >= 2**16 and 0.0 < width3 < 0.1:
            # a coarser grid is enough to locate: the same x again at the new tol (its
            # conservative bound is larger, so only the failing end of the bracket carries over)
            tol3 = min(30.0, tol3 * 0.1 / width3)
            prev, xl = None, -math.inf
            continue
        if f <= 0.0:
            xl = max(xl, x)
        else:
            xh = min(xh, x)
        if prev is not None and math.isfinite(f) and math.isfinite(prev[1]):
            if abs(x - prev[0]) >= gap / 2:
                sl = (f - prev[1]) / (x - prev[0])
                if sl > 0.0:
                    slope = min(max(sl, slope / 30.0), slope * 30.0)
        if math.isfinite(f):
            prev = (x, f)
            step = -f / slope
        else:
            step = math.inf if f < 0 else -math.inf
        direction = 1 if step > 0 else -1
        if abs(step) > limit:  # walking far in one direction: let the steps grow
            limit = limit * 2.0 if direction == last_dir else 2.0
            step = direction * limit
        last_dir = direction
        new = x + step
        if math.isfinite(xl) and math.isfinite(xh) and not xl < new < xh:
            new = 0.5 * (xl + xh)
        new = min(new, x_max)
        if abs(new - x) <= close or (xh - xl) <= close:
            break
        x = new
    return x3, cons3, width3, slope, evals, tol3


def _solve(
    probe: _Probe, x0: float, slope: float, gap: float, x_max: float, max_evals: int = 60
) -> float:
    """The largest x certified to pass, with a failure shown at most ``gap`` above it.

    1. *Locate* with coarse engine evaluations (tol 3, milliseconds): secant steps on
       F(x) = log(risk/target) (nearly linear in x for ε, advantage and TPR), inside the bracket
       of F's sign, until the root of F is known to ~gap/4.
    2. *Certify*: choose the engine tolerance tol_f whose bracket, as a width in x, leaves room
       for a pass and a failure ``gap`` apart (the width shrinks about linearly with tol), bound
       the risk there, and from it predict the roots of the conservative and optimistic bounds
       (slope from the secant). Then evaluate a pass just below the conservative root, at a
       coarser tol_p when the conservative side has converged there already (it converges much
       faster than the optimistic one), and a failure ``gap`` above the best pass at tol_f. Coarse
       and fine bounds are all certified, so every pass and failure counts, whatever tolerance
       showed it; each new bound refines the predicted roots.
    3. If that has not closed the gap (rtol below the default bracket's width, or brackets too
       coarse to be informative): from the best guess, step outwards with doubling steps until
       the default-accuracy check passes on one side and fails on the other, then bisect; its
       outcomes are all passes or failed checks.

    ``slope`` is a first guess of dF/dx > 0; ``x_max`` the largest x allowed (returned as soon as
    it is certified to pass).
    """
    probe.ext, probe.x_max = max(4.0 * gap, 4e-3), x_max

    def done() -> bool:
        return probe.hi() - probe.lo() <= gap or probe.lo() >= x_max

    # ---- 1. locate, coarse
    x3, cons3, width3, slope, evals, tol3 = _locate(probe, x0, slope, gap, x_max,
                                                     max_evals // 2)
    if done():
        return probe.lo()
    # ---- 2. certify
    m = gap / 8.0
    room = slope * (gap - 2.0 * m) - probe.pm  # in F, for the two bounds' errors
    if room > 0.0 and 0.0 < width3 < math.inf:
        tol_f = min(max(0.7 * tol3 * room / width3, _TOL_DEFAULT), tol3)
    else:
        tol_f = _TOL_DEFAULT
    guess = x3
    if tol_f > _TOL_DEFAULT:
        x3, guess, used = _certify(probe, x3, cons3, tol3, tol_f, slope, gap, room, x_max,
                                   max_evals - evals)
        evals += used
    # ---- 3. the default-accuracy check alone: from the best guess, aim a quarter gap either
    # side of the root of the conservative bound predicted by the secant of the last two checks
    # (the slope before that), and where that root is not inside the bracket (lo, hi), step
    # outwards (doubling) until a pass and a failed check bracket it, then bisect. (Where x is
    # evaluated only decides how fast the search ends: the answer is the largest certified pass.)
    step, x = gap, guess
    pts: list[tuple[float, float]] = []  # (x, log(conservative / target)) at the default tol
    while evals < max_evals + 200 and not done():
        xe = min(x, x_max)
        _, cons = probe.check(xe, _TOL_DEFAULT)
        evals += 1
        if 0.0 < cons < math.inf:
            pts.append((xe, math.log(cons / probe.a)))
        lo, hi = probe.lo(), probe.hi()
        r = math.nan
        if len(pts) >= 2 and abs(pts[-1][0] - pts[-2][0]) > 0.0:
            (x1, f1), (x2, f2) = pts[-2], pts[-1]
            sl = (f2 - f1) / (x2 - x1)
            r = x2 - f2 / sl if sl > 0.0 else math.nan
        elif pts and slope > 0.0:
            r = pts[-1][0] - pts[-1][1] / slope
        if lo < r < hi and hi - lo > gap:
            # a pass within half a gap below the root, then a failure within a gap above lo
            x = r - 0.25 * gap if r - lo > 0.5 * gap else min(lo + 0.9 * gap, r + 0.25 * gap)
            x = min(max(x, lo + 0.05 * gap), hi - 0.05 * gap)
            if any(abs(x - p) < 1e-3 * gap for p, _ in pts):
                x = 0.5 * (lo + hi)
        elif hi - lo <= 4.0 * step:
            x = 0.5 * (lo + hi)
        elif x <= lo:  # passed: look further up
            x, step = lo + step, 2.0 * step
        else:  # failed: look further down
            x, step = hi - step, 2.0 * step
    return probe.lo()


def _certify(
    probe: _Probe, x3: float, cons3: float, tol3: float, tol_f: float, slope: float, gap: float,
    room: float, x_max: float, max_evals: int,
) -> tuple[float, float, int]:
    """Stage 2 of :func:`_solve` (see there); returns x3, the best guess of the root of the
    conservative bound (for stage 3) and the number of evaluations.

    Every evaluation is kept per tolerance as (x, Fc, Fo): F of the conservative bound against
    the pass target and of the optimistic bound against the target. The slope dF/dx comes from
    the two latest evaluations at one tolerance (at least gap/4 apart); the roots of the bounds at
    a tolerance from its latest evaluation; a pass at a coarser tolerance than any evaluated
    uses the root at the finest one, moved by the predicted excess of its conservative bound.
    """
    a = probe.a
    m = gap / 8.0
    evals = 0
    hist: dict[float, list[tuple[float, float, float]]] = {}

    def done() -> bool:
        return probe.hi() - probe.lo() <= gap or probe.lo() >= x_max

    ref = tol_f  # the finest tolerance evaluated so far

    def bound(x: float, tol: float) -> tuple[float, float]:
        """Bound the risk at x at ``tol``; update the history, the slope and ref."""
        nonlocal slope, evals, ref
        opt, cons = probe.check(x, tol)
        evals += 1
        ref = min(ref, tol)
        fc, fo = _log_ratio(cons, probe.target(tol)), _log_ratio(opt, a)
        if tol <= _TOL_DEFAULT:  # the default check fails beyond the root of cons = target
            fo = max(fo, _log_ratio(cons, a))
        h = hist.setdefault(tol, [])
        for x0, fc0, _ in reversed(h):
            if abs(x - x0) >= gap / 4 and math.isfinite(fc) and math.isfinite(fc0):
                sl = (fc - fc0) / (x - x0)
                if sl > 0.0:
                    slope = min(max(sl, slope / 10.0), slope * 10.0)
                break
        h.append((x, fc, fo))
        return opt, cons

    def root(tol: float, which: int) -> float:
        """The root of the conservative (1) or optimistic (2) bound at ``tol``, from its latest
        evaluation (inf when the optimistic bound is 0 there)."""
        x, *f = hist[tol][-1]
        v = f[which - 1]
        if math.isfinite(v):
            return x - v / slope
        return (x + 1.0 if v < 0 else x - 1.0) if which == 1 else math.inf

    x = max(min(x3, probe.hi(), x_max), probe.lo())
    _, cons_f = bound(x, tol_f)
    # How much the conservative bound drops from the locate tol to tol_f here (it converges
    # much faster than the optimistic one): interpolated in √tol, it says how coarse a pass
    # check may be, since its excess must fit the room that the failure's bracket leaves.
    e_c3 = math.inf
    if x == x3 and cons3 > 0.0 and cons_f > 0.0:
        e_c3 = max(math.log(cons3 / cons_f), 0.0)

    def excess(tp: float) -> float:
        """Predicted excess of tol tp's conservative bound over tol ref's: e_c3 interpolated in
        √tol (the excess falls about as fast as the grid step, ∝ √tol in the smooth case;
        measured on DP-SGD it falls like tol^0.6 to tol^2)."""
        if tp <= ref:
            return 0.0
        return e_c3 * (math.sqrt(tp) - math.sqrt(ref)) / (math.sqrt(tol3) - math.sqrt(ref))

    coarse_ok = True
    w_pred = math.inf  # the bracket width (in F) predicted at a tolerance not evaluated yet

    def pass_tol(width: float) -> float:
        """The coarsest tol whose conservative excess (predicted, with a factor 2 to spare)
        fits half the room the bracket at tol_f leaves; ref if none does."""
        budget = 0.5 * (room - width)
        for tp in (tol3, tol3 / 3.0, tol3 / 10.0, tol3 / 30.0):
            if coarse_ok and tp > 2.0 * ref and 2.0 * excess(tp) <= budget:
                return tp
        return ref

    seen: set[tuple[float, float]] = set()
    while evals < max_evals and not done():
        lo, hi = probe.lo(), probe.hi()
        x_cf = root(ref, 1)
        if tol_f in hist:
            x_of = root(tol_f, 2)
            width = (x_of - root(tol_f, 1)) * slope
        else:
            x_of, width = x_cf + w_pred / slope, w_pred
        if x_of - x_cf > gap - 2.0 * m and tol_f > _TOL_DEFAULT:
            # the tol_f bracket is too wide (in x) for a pass and a failure gap apart: refine.
            # The conservative root barely moves; the optimistic one comes in with the width,
            # about linearly in tol.
            new = max(_TOL_DEFAULT,
                      min(tol_f / 2.0, 0.7 * tol_f * room / width if width > 0 else 0.0))
            w_pred = width * new / tol_f
            tol_f = new
            continue
        # a pass at or above `need` leaves room for a failure one gap above it; below, look for
        # a better pass just under the (predicted) root of the conservative bound
        need = x_of - gap + m
        tol_p = pass_tol(width)
        if tol_p in hist:
            xc, lead = root(tol_p, 1), hist[tol_p][-1][0]
        else:
            xc, lead = x_cf - 2.0 * excess(tol_p) / slope, hist[ref][-1][0]
        xp = xc - m - 0.03 * abs(xc - lead)
        if lo < need and lo + gap / 8.0 < xp < hi and (xp, tol_p) not in seen:
            seen.add((xp, tol_p))
            bound(xp, tol_p)
            if probe.lo() < xp and tol_p > tol_f:  # the coarse bound was not tight enough
                coarse_ok = tol_p in hist and len(hist[tol_p]) < 2  # one retry at its own root
            continue
        xf = min(lo + gap * (1.0 - 1e-9), x_max)  # a failure one gap above the best pass
        if (xf, tol_f) in seen:  # learnt nothing new there: refine, or go to 3
            if tol_f <= _TOL_DEFAULT:
                break
            tol_f = max(tol_f / 4.0, _TOL_DEFAULT)
            w_pred = width / 4.0
            continue
        seen.add((xf, tol_f))
        bound(xf, tol_f)
    return x3, (root(ref, 1) if ref in hist else x3), evals


# ------------------------------------------------------------------------------ starting points
def _gauss_risk(kind: str, mu: float, b: float) -> float:
    """The target's risk for G_μ (DRS Cor 2.13, Def 2.7): ε at δ = b, δ(0), or TPR at FPR b."""
    if kind == "eps":
        return float(gdp.epsilon(mu, b))
    if kind == "advantage":
        return float(special.erf(mu / (2.0 * math.sqrt(2.0))))
    return float(special.ndtr(special.ndtri(b) + mu))


def _clt_mu(s: float, p: float, t: int, conv: Any) -> float:
    """μ of the GDP central-limit approximation of DP-SGD (:func:`fdp.sgd.dpsgd_clt`): a guess
    that only chooses where the search starts, never a bound."""
    from .sgd import dpsgd_clt_mu

    return dpsgd_clt_mu(s, p, t, conv)  # (∞ where e^{Δ²/σ²} overflows: tiny σ)


def _clt_slope(kind: str, b: float, mus: tuple[float, float], dx: float) -> float:
    """d log(risk)/dx of the CLT guess between two μ's a step dx apart (clipped to [0.2, 20])."""
    if not all(math.isfinite(m) for m in mus):  # tiny σ: e^{Δ²/σ²} overflowed (ε ≈ 1e6)
        return 1.5
    r0, r1 = (_gauss_risk(kind, m, b) for m in mus)
    if not (r0 > 0.0 and r1 > 0.0) or dx == 0.0:
        return 1.5
    return min(max(math.log(r1 / r0) / dx, 0.2), 20.0)


def _clt_sigma(p: float, t: int, conv: Any, mu_star: float, known: float) -> float:
    """σ whose CLT μ is μ* (bisection in log σ; μ_CLT decreases in σ), at most ``known``."""
    if not (mu_star > 0.0 and math.isfinite(known)):
        return 1.0
    lo, hi = math.log(known) - 60.0, math.log(known)
    if _clt_mu(math.exp(hi), p, t, conv) >= mu_star:
        return known
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        m = _clt_mu(math.exp(mid), p, t, conv)
        lo, hi = (mid, hi) if m > mu_star else (lo, mid)
    return math.exp(hi)


# ------------------------------------------------------------------------------ result info
def _evidence(probe: _Probe, x: float, fail_x: float, to_value: Callable[[float], float],
              name: str) -> dict[str, Any]:
    """The certificate of the answer at x and the evidence of its tightness, as plain data."""
    passes = probe.pass_evidence(x)
    engine = [r for r in passes if r.source == "engine"]
    closed = [r for r in passes if r.source != "engine"]
    if x <= probe.seed_pass and (not passes or len(passes) < len(probe.recs)):
        by = "closed form"
        risk_ = math.nan
    else:
        by = " and ".join(s for s, rs in (("closed form", closed), ("engine", engine)) if rs)
        risk_ = max(r.cons for r in passes)
    parts = list(probe.recs)
    top = max(engine, key=lambda r: r.cons, default=None)  # the part closest to the target
    out: dict[str, Any] = {
        "certified_by": by,
        "risk": risk_,
        "tol": top.tol if top is not None else None,
        "evidence": [
            {"part": part, name: to_value(r.x), "bound": r.cons, "tol": r.tol, "source": r.source}
            for part, r in zip(parts, passes, strict=False)
        ] if len(passes) == len(parts) else [],
        "evaluations": dict(probe.risk.evaluations),
    }
    bad = probe.fail_evidence(fail_x)
    if bad is not None:
        how = ("optimistic bound above the target (fails in truth)" if bad.opt > probe.a
               else "default-accuracy check fails")
        out["tight"] = {name: to_value(bad.x), "how": how, "optimistic": bad.opt,
                        "conservative": bad.cons, "tol": bad.tol}
    return out


# ------------------------------------------------------------------------------ DP-SGD
def calibrate_dpsgd(
    sample_rate: Any,
    steps: Any,
    *,
    eps: Any = None,
    delta: Any = None,
    mu: Any = None,
    advantage: Any = None,
    tpr: Any = None,
    fpr: Any = None,
    sampling: str = "poisson",
    neighbours: str | None = None,
    sensitivity: float | None = None,
    rtol: float = 1e-3,
    min_noise_multiplier: float = 1e-12,
) -> Calibrated:
    """The smallest noise multiplier σ such that DP-SGD meets the target, certified.

    σ is the noise std on the sum of clipped per-example gradients over the clipping norm C
    (Opacus / TF Privacy). Give one target, checked on the certified curve h of
    :func:`fdp.sgd.dpsgd` (for its bracket, the conservative side):

    - ``eps``, ``delta``: ε(δ) ≤ eps at δ = delta (the certified ε, an upper bound);
    - ``mu``: h is μ-GDP with μ ≤ mu (``gdp_mu`` of the certified lower curve);
    - ``advantage``: every membership-inference attack has TPR − FPR ≤ advantage, i.e.
      sup_α (1 − α − h(α)) = δ_h(0) ≤ advantage (:func:`fdp.risk.advantage`);
    - ``tpr``, ``fpr``: every attack with false-positive rate fpr = α has true-positive rate at
      most tpr, i.e. 1 − h(α) ≤ tpr (:func:`fdp.risk.tpr`, with the certified lower curve of h).

    A test with type I error α has type II error ≥ h(α) (Dong, Roth & Su 2022, Def 2.1), which is
    where the two risk targets come from; calibrating noise to them rather than to (ε, δ) is
    attack-aware calibration (Kulynych et al. 2024).

    Closed forms first. DP-SGD's curve is at least G_{√T Δ/σ} (sampling mixes each step with
    Id ≥ G; composition and the inverse are monotone), so σ = Δ√T/μ* always meets the target,
    where μ* is the largest μ for which G_μ meets it (for advantage a, μ* = 2√2 erf⁻¹(a), since
    G_μ's advantage is 2Φ(μ/2) − 1; for TPR t at FPR α, μ* = Φ⁻¹(t) − Φ⁻¹(α), since
    1 − G_μ(α) = Φ(Φ⁻¹(α) + μ)); the answer is never larger. With ``sample_rate=1`` it is the
    exact answer, and for a ``mu`` target it is exact at every sample rate (subsampling never
    lowers the strict GDP μ of DP-SGD: see :func:`fdp.clt.gdp_mu`).

    Otherwise the risk is bounded by the certified engine, which brackets the exact curve at
    any grid; its ``tol`` only chooses the grid, so coarse evaluations are cheap and still
    certified: a conservative bound below the target proves a pass, an optimistic one above it
    proves a failure. The search locates the answer with coarse evaluations (tol = 3), then
    certifies a pass and a failure ``rtol`` apart at the coarsest tolerance whose bracket is
    narrow enough (about tol 0.01–0.1 at the default ``rtol``), and bisects with the default
    accuracy only if that is not enough (rtol below the default bracket's width). With Poisson
    sampling and an (ε, δ) target the add and remove directions are bounded separately, the
    remove one by the closed form ε ≤ −T log(1 − p) when that meets the target (its privacy
    loss is at most −log(1 − p) per step).

    Guarantee: the returned σ meets the target, certified (``info`` says by which bound, at
    which engine tolerance, and the certified risk); a pass at a tolerance coarser than the
    default clears the target by a relative margin of min(1e-4, rtol/10), so that
    ``fdp.dpsgd(σ, ...)`` at its default accuracy agrees. σ·(1 − rtol) misses it: in truth when
    ``info["tight"]["how"]`` says so (an optimistic bound above the target), or by fdp's
    default-accuracy check.

    Parameters
    ----------
    sample_rate, steps : p ∈ (0, 1] and T ≥ 1.
    eps, delta : float, optional
        Target ε ≥ 0 at δ ∈ (0, 1).
    mu : float, optional
        Target μ > 0.
    advantage : float, optional
        Target TPR − FPR in (0, 1).
    tpr, fpr : float, optional
        Target TPR in (fpr, 1) at FPR fpr ∈ (0, 1).
    sampling : {"poisson", "uniform"}
        Poisson sampling or fixed-size batches without replacement.
    neighbours : {"add-remove", "replace-one"}, optional
        Default "add-remove" for Poisson, "replace-one" for uniform (the only supported pairs).
    sensitivity : float, optional
        L2 sensitivity of the clipped-gradient sum in units of C; default 1 (add-remove) or 2
        (replace-one). One step is G_{sensitivity/σ}.
    rtol : relative tolerance of the search, in [1e-6, 0.5].
    min_noise_multiplier : the smallest σ tried; if it already meets the target, ValueError
        says so (at the default 1e-12 it is returned instead).

    Returns
    -------
    Calibrated
        σ, a ``float`` whose ``info`` dict says what certified it (see :class:`Calibrated`).

    Raises
    ------
    ValueError
        No target, more than one, a target without its partner (delta, fpr), or a value out of
        its range (the message names the parameter, the value and the range).

    References
    ----------
    Dong, Roth & Su (2022), "Gaussian differential privacy", JRSS B, Def 2.1, Prop 2.12 and
    Cor 2.13. Kulynych, Gomez, Kaissis, du Pin Calmon & Troncoso (2024), "Attack-aware noise
    calibration for differential privacy", NeurIPS. Zhu, Dong & Wang (2022), "Optimal accounting
    of differential privacy via characteristic function", AISTATS (the add and remove pairs of
    Poisson subsampling).

    Examples
    --------
    >>> s = calibrate_dpsgd(0.01, 100, eps=2.0, delta=1e-5, rtol=1e-2)
    >>> 0.5 < s < 1.0
    True
    >>> s.info["certified_by"]   # remove direction: ε ≤ −T log(1 − p) = 1.005 ≤ 2, closed form
    'closed form and engine'
    >>> import fdp
    >>> s = calibrate_dpsgd(0.01, 1000, advantage=0.1, rtol=1e-2)
    >>> bool(fdp.risk.advantage(fdp.dpsgd(s, 0.01, 1000)) <= 0.1)
    True
    >>> s = calibrate_dpsgd(1.0, 100, tpr=0.05, fpr=0.01)   # p = 1: G_{10/σ}, closed form
    >>> round(s, 3)                                           # 10 / (Φ⁻¹(0.05) − Φ⁻¹(0.01))
    14.674
    """
    p = check_scalar("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    t = check_int("steps", steps, low=1)
    kind, a, b = _target(
        eps, delta, mu, gaussian=True, advantage=advantage, tpr=tpr, fpr=fpr, risk_targets=True
    )
    rtol = _check_rtol(rtol)
    floor = check_scalar("min_noise_multiplier", min_noise_multiplier, low=1e-12, high=1e6)
    conv = _conv(sampling, neighbours, sensitivity)
    known = _full_batch_sigma(t, conv, kind, a, b)

    def at_floor(info: dict[str, Any] | None = None) -> Calibrated:
        if floor > 1e-12:
            raise ValueError(
                f"the target is met already at the smallest noise multiplier searched, {floor:g}"
            )
        return Calibrated(floor, {**(info or {"certified_by": "closed form"}),
                                  "note": "the smallest σ searched meets the target"})

    if kind == "mu" or p == 1.0:
        return _closed_form_sigma(known, p, t, conv, kind, a, b, floor, at_floor)
    search_kind, sa, sb = kind, a, b
    if kind == "eps" and a == 0.0:  # ε(δ) = 0 ⇔ δ(0) ≤ δ: the advantage target δ
        search_kind, sa, sb = "advantage", b, 0.0
    probe = _Probe(_Risk(search_kind, sa, sb, conv), lambda x: (_sigma_at(x), p, t), rtol)
    if math.isfinite(known):
        probe.seed_pass = -math.log(known)
    mu_star = _gaussian_mu_bound(search_kind, sa, sb)
    s0 = min(max(_clt_sigma(p, t, conv, mu_star, known), floor), known)
    slope = _clt_slope(search_kind, sb, (_clt_mu(s0, p, t, conv),
                                          _clt_mu(s0 * math.exp(-0.01), p, t, conv)), 0.01)
    gap = -math.log1p(-rtol)
    x_max = -math.log(floor)
    x = _solve(probe, -math.log(s0), slope, gap, x_max)
    if x >= x_max:
        return at_floor(_evidence(probe, x_max, x_max, lambda v: math.exp(-v),
                                  "noise_multiplier"))
    if not math.isfinite(x):  # pragma: no cover - the closed form always certifies something
        raise ValueError("target unreachable: no noise multiplier is certified to meet it")
    sigma = math.exp(-x)
    info = _evidence(probe, x, x + gap, lambda v: math.exp(-v), "noise_multiplier")
    if x <= probe.seed_pass and info["certified_by"] == "closed form":
        sigma = known
        info["risk"] = None
        info["note"] = ("the full-batch σ = Δ√T/μ*: DP-SGD's curve is at least G_{√T Δ/σ}; "
                        "the engine certified no smaller σ")
    return Calibrated(sigma, info)


def _sigma_at(x: float) -> float:
    """σ = e^{−x} on the search's log scale, or a ValueError where it leaves the float range (an
    advantage target of 1e-320 needs σ ≈ 1e321, and math.exp raised OverflowError)."""
    if -x > LOG_FLOAT_MAX:
        raise ValueError(
            "target unreachable: the search for the noise multiplier passed the largest float "
            f"({FLOAT_MAX:.4g}); the target needs more noise than a float holds"
        )
    return math.exp(-x)


def _closed_form_sigma(
    known: float, p: float, t: int, conv: Any, kind: str, a: float, b: float, floor: float,
    at_floor: Callable[[], Calibrated],
) -> Calibrated:
    """The full-batch σ = Δ√T/μ*, exact for p = 1 and for μ targets, checked on the curve."""
    if known <= floor:
        return at_floor()
    why = ("T steps with every example are G_{√T Δ/σ} exactly (DRS Cor 3.3)" if p == 1.0 else
           "DP-SGD's strict GDP μ is √T Δ/σ at every sample rate (fdp.clt.gdp_mu)")
    # The closed form is the certificate. fdp's own check of the curve rounds its evaluations
    # conservatively too, by a few ulps; step σ up (by at most ~1e-6 relative) until it agrees.
    s = known
    for k in range(21):
        curve = _dpsgd_curve(s, p, t, conv, _TOL_LOCATE)
        ok = _meets(curve, kind, a, b)
        _release(curve)
        if ok:
            break
        s = known * (1.0 + 1e-12 * 2.0**k)
    else:
        s = known
        why += "; fdp's numerical check of the curve does not confirm it (rounding)"
    return Calibrated(s, {
        "certified_by": "closed form", "note": why, "mu_star": _gaussian_mu_bound(kind, a, b),
        "tight": {"noise_multiplier": known * (1.0 - 1e-9), "how": "exact (closed form)"},
    })


def _full_batch_sigma(t: int, conv: Any, kind: str, a: float, b: float) -> float:
    """A noise multiplier proven to meet the target for every sample rate: DP-SGD's curve is at
    least G_{√T Δ/σ} (sampling mixes each step with Id ≥ G and composition and the inverse are
    monotone), so σ = Δ√T/μ* meets it, with μ* the largest μ for which G_μ meets the target
    (:func:`_gaussian_mu_bound`, rounded down). Rounded up by 1e-12 relative."""
    m = _gaussian_mu_bound(kind, a, b)
    if not m > 0.0:
        return math.inf
    return conv.sensitivity * math.sqrt(t) / m * (1.0 + 1e-12)


def calibrate_steps(
    noise_multiplier: Any,
    sample_rate: Any,
    *,
    eps: Any = None,
    delta: Any = None,
    mu: Any = None,
    sampling: str = "poisson",
    neighbours: str | None = None,
    sensitivity: float | None = None,
    max_steps: int = 10**7,
) -> CalibratedSteps:
    """The largest number of DP-SGD steps that meets the target (certified), or 0 if none does.

    The risk grows with T. As in :func:`calibrate_dpsgd`: coarse certified evaluations (tol 3)
    locate T (starting from the CLT guess), finer ones bracket it between a certified pass and a
    failure, and the remaining few steps are decided by the default-accuracy check, so the answer
    T is certified and T + 1 fails the default-accuracy check (or, when ``info["tight"]`` says
    so, fails in truth). For a μ target the answer is the closed form ⌊(μ σ/Δ)²⌋ (DP-SGD's strict
    GDP μ is √T Δ/σ at every sample rate; see :func:`fdp.clt.gdp_mu`).

    Parameters
    ----------
    noise_multiplier : σ > 0, noise std on the sum of clipped gradients over C.
    sample_rate : p ∈ (0, 1].
    eps, delta, mu : the target (eps and delta, or mu).
    sampling : {"poisson", "uniform"}
        Poisson sampling or fixed-size batches without replacement.
    neighbours : {"add-remove", "replace-one"}, optional
        Default "add-remove" for Poisson, "replace-one" for uniform (the only supported pairs).
    sensitivity : float, optional
        L2 sensitivity of the clipped-gradient sum in units of C; default 1 (add-remove) or 2
        (replace-one). One step is G_{sensitivity/σ}.
    max_steps : the largest T tried.

    Returns
    -------
    CalibratedSteps
        T, an ``int`` whose ``info`` says what certified it.
    """
    s = check_scalar("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    p = check_scalar("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    kind, a, b = _target(eps, delta, mu, gaussian=True)
    max_steps = check_int("max_steps", max_steps, low=1)
    conv = _conv(sampling, neighbours, sensitivity)
    _step_mu(s, conv)

    if kind == "mu" or p == 1.0:
        return _closed_form_steps(s, p, conv, kind, a, b, max_steps)
    search_kind, sa, sb = kind, a, b
    if kind == "eps" and a == 0.0:
        search_kind, sa, sb = "advantage", b, 0.0
    probe = _Probe(_Risk(search_kind, sa, sb, conv),
                   # (T ≥ 1: the search may step below log 1 where the answer is 0 or 1)
                   lambda x: (s, p, max(1, int(round(math.exp(x))))), 1e-3)
    # T steps are at least G_{√T Δ/σ}: every T with √T Δ/σ ≤ μ* passes (closed form)
    mu_star = _gaussian_mu_bound(search_kind, sa, sb)
    t_known = _steps_below(_sq(mu_star * s / conv.sensitivity) * (1 - 1e-12), max_steps)
    if t_known >= 1:
        probe.seed_pass = math.log(t_known)
    one = _clt_mu(s, p, 1, conv)
    t0 = _sq(mu_star / one) if one > 0 else 1.0
    t0 = min(max(t0, 1.0, t_known), float(max_steps))
    slope = _clt_slope(search_kind, sb, (one * math.sqrt(t0), one * math.sqrt(t0 * 1.01)),
                       math.log(1.01))
    lo = _solve_steps(probe, t0, slope, max_steps)
    if lo == 0:
        return CalibratedSteps(0, {"certified_by": None, "note": "T = 1 misses the target",
                                   "evaluations": dict(probe.risk.evaluations)})
    step = lambda x: int(round(math.exp(x)))  # noqa: E731
    info = _evidence(probe, math.log(lo), math.log(lo + 1), step, "steps")
    return CalibratedSteps(lo, info)


def _solve_steps(probe: _Probe, t0: float, slope: float, max_steps: int) -> int:
    """The largest T certified to pass with T + 1 failing (in truth, or by the default check).

    Coarse certified evaluations locate T (:func:`_locate`, to ~0.1 %); the last steps are then
    decided by the default-accuracy check with secant predictions of the integer boundary in
    log T (nearly linear), safeguarded by bisection. An integer step changes the risk by ~1/(2T)
    relative, below the width of any coarser bracket, so the default check decides there; the
    coarse stage only saves the evaluations that would get there.
    """
    a = probe.a
    x_max = math.log(max_steps)
    probe.ext, probe.x_max = 4e-3, x_max

    def lo_t() -> int:
        lo = probe.lo()
        return min(int(round(math.exp(lo))), max_steps) if math.isfinite(lo) else 0

    def hi_t() -> int:
        hi = probe.hi()
        return int(round(math.exp(hi))) if math.isfinite(hi) else max_steps + 1

    x3, _, _, slope, _, _ = _locate(probe, math.log(t0), slope, 1e-3, x_max, 30)
    t = min(max(int(round(math.exp(x3))), 1), max_steps)
    done: set[int] = set()
    last: tuple[float, float] | None = None
    for _ in range(200):
        lo, hi = lo_t(), hi_t()
        if lo >= max_steps or hi - lo <= 1:
            return min(lo, max_steps)
        if not lo < t < hi or t in done:
            t = (lo + hi) // 2 if hi <= max_steps else min(max(2 * lo, lo + 1), max_steps)
        done.add(t)
        _, cons = probe.check(math.log(t), _TOL_DEFAULT)
        f = _log_ratio(cons, a)
        if last is not None and t != last[0] and math.isfinite(f) and math.isfinite(last[1]):
            sl = (f - last[1]) / (math.log(t) - math.log(last[0]))
            if sl > 0.0:
                slope = min(max(sl, slope / 10.0), slope * 10.0)
        if math.isfinite(f):
            last = (t, f)
            pred = math.exp(math.log(t) - f / slope)  # predicted boundary (risk = target)
            guess = int(math.floor(pred))  # the last T predicted to pass
            lo, hi = lo_t(), hi_t()
            t = guess if guess not in done and lo < guess < hi else guess + 1
    return lo_t()


def _sq(x: float) -> float:
    """x² (∞ where it overflows; ``x ** 2`` raised OverflowError for a float)."""
    return x * x


def _steps_below(x: float, max_steps: int) -> int:
    """⌊x⌋ capped at ``max_steps`` (x = ∞ at a tiny sensitivity raised OverflowError)."""
    return max_steps if x >= max_steps else int(math.floor(x))


def _step_mu(s: float, conv: Any) -> float:
    from .sgd import check_step_mu

    return check_step_mu(s, conv)


def _closed_form_steps(
    s: float, p: float, conv: Any, kind: str, a: float, b: float, max_steps: int
) -> CalibratedSteps:
    """μ targets (any p) and p = 1 (any target): T steps are G_{√T Δ/σ} in the sense that
    matters (exactly for p = 1; the strict GDP μ for p < 1), so T* = ⌊(μ* σ/Δ)²⌋, checked."""
    mu_star = _gaussian_mu_bound(kind, a, b)
    t = min(_steps_below(_sq(mu_star * s / conv.sensitivity), max_steps) + 1, max_steps)

    def ok(n: int) -> bool:
        curve = _dpsgd_curve(s, p, n, conv, _TOL_LOCATE)
        out = _meets(curve, kind, a, b)
        _release(curve)
        return out

    while t >= 1 and not ok(t):  # at most a step or two of rounding
        t -= 1
    return CalibratedSteps(max(t, 0), {
        "certified_by": "closed form" if t >= 1 else None,
        "note": "T Δ²/σ² ≤ μ*² (DP-SGD's strict GDP μ is √T Δ/σ at every sample rate)",
    })


def calibrate_sample_rate(
    noise_multiplier: Any,
    steps: Any,
    *,
    eps: Any = None,
    delta: Any = None,
    mu: Any = None,
    sampling: str = "poisson",
    neighbours: str | None = None,
    sensitivity: float | None = None,
    rtol: float = 1e-3,
) -> Calibrated:
    """The largest sample rate for which DP-SGD meets the target (certified).

    The risk grows with p. The search is the one of :func:`calibrate_dpsgd` along log p: it starts
    from the CLT guess, locates with coarse certified evaluations and certifies a pass p and a
    failure at most p(1 + rtol) (in truth when ``info["tight"]`` says so, else by the
    default-accuracy check). p = 1 is exact (G_{√T Δ/σ}) and checked first.

    Parameters
    ----------
    noise_multiplier : σ > 0, noise std on the sum of clipped gradients over C.
    steps : T ≥ 1.
    eps, delta, mu : the target (eps and delta, or mu).
    sampling : {"poisson", "uniform"}
        Poisson sampling or fixed-size batches without replacement.
    neighbours : {"add-remove", "replace-one"}, optional
        Default "add-remove" for Poisson, "replace-one" for uniform (the only supported pairs).
    sensitivity : float, optional
        L2 sensitivity of the clipped-gradient sum in units of C; default 1 (add-remove) or 2
        (replace-one). One step is G_{sensitivity/σ}.
    rtol : relative tolerance of the search.

    Returns
    -------
    Calibrated
        p, a ``float`` whose ``info`` says what certified it.
    """
    s = check_scalar("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    t = check_int("steps", steps, low=1)
    kind, a, b = _target(eps, delta, mu, gaussian=True)
    rtol = _check_rtol(rtol)
    conv = _conv(sampling, neighbours, sensitivity)
    _step_mu(s, conv)

    if kind == "mu":
        # at p = 1 the curve is G_{√T Δ/σ} exactly; the certified μ includes the tails, where T
        # sampled steps act as G_{√T Δ/σ} with weight p^T, so no sample rate lowers it further
        full = conv.sensitivity * math.sqrt(t) / s
        if full <= a:
            return Calibrated(1.0, {"certified_by": "closed form"})
        raise ValueError(
            f"target unreachable: μ-GDP with mu = {a:g} needs noise_multiplier ≥ "
            f"{conv.sensitivity:g}·√steps/mu = {conv.sensitivity * math.sqrt(t) / a:.6g} for "
            f"every sample rate (the certified μ includes the tails, where subsampling does not "
            f"help); got noise_multiplier = {s:g}, whose full-batch μ is {full:.6g}"
        )
    full_curve = _dpsgd_curve(s, 1.0, t, conv, _TOL_DEFAULT)  # G_{√T Δ/σ}, exact
    if _meets(full_curve, kind, a, b):
        return Calibrated(1.0, {"certified_by": "closed form",
                                "note": "p = 1: T steps are G_{√T Δ/σ} exactly"})
    search_kind, sa, sb = kind, a, b
    if kind == "eps" and a == 0.0:
        search_kind, sa, sb = "advantage", b, 0.0
    probe = _Probe(_Risk(search_kind, sa, sb, conv), lambda x: (s, math.exp(x), t), rtol)
    probe.seed_fail = 0.0  # p = 1 misses the target (exact curve)
    mu_star = _gaussian_mu_bound(search_kind, sa, sb)
    one = _clt_mu(s, 1.0, t, conv)
    p0 = min(max(mu_star / one if one > 0 else 0.01, 1e-9), 0.5)
    slope = _clt_slope(search_kind, sb, (one * p0, one * p0 * 1.01), math.log(1.01))
    gap = math.log1p(rtol)
    x = _solve(probe, math.log(p0), slope, gap, 0.0)
    if not math.isfinite(x):
        raise ValueError("target unreachable: no sample rate is certified to meet it")
    info = _evidence(probe, x, x + gap, math.exp, "sample_rate")
    return Calibrated(math.exp(x), info)

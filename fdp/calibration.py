"""Noise calibration: the least noise (or most steps, largest sample rate) meeting a target.

Targets are certified: "ε ≤ eps at delta" is checked with the conservative ε of the curve (for
numeric curves the ε of the certified lower curve, an upper bound on the true ε), and "μ-GDP with
μ ≤ mu" with :meth:`fdp.TradeOff.gdp_mu` of the certified lower curve. Searches grow their bracket
until it holds the answer (so they cannot fail on a reachable target), then bisect to a relative
tolerance ``rtol`` and return the end of the bracket on which the target holds: the returned noise
meets the target, and noise smaller by a factor (1 − rtol) may not.

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
from collections.abc import Callable
from typing import Any

from scipy import special

from . import gdp, risk
from ._checks import check_int, check_scalar
from .families import Laplace
from .tradeoff import TradeOff

__all__ = [
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
    return float(s * math.sqrt(steps) / gdp.mu(e, d))


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
    tolerance ``rtol``, returned on the safe side).
    """
    steps = check_int("steps", steps, low=1)
    s = check_scalar("sensitivity", sensitivity, low=0.0, low_open=True)
    e = check_scalar("eps", eps, low=0.0, low_open=True)
    d = check_scalar("delta", delta, low=0.0, high=1.0, high_open=True)
    rtol = _check_rtol(rtol)
    if steps == 1:
        return float(s / (e - 2.0 * math.log1p(-d)))
    # basic composition: n Laplace mechanisms with scale b are (nΔ/b, 0)-DP, and at δ = 0 this is
    # exact (the largest privacy losses add), so b = nΔ/ε is the answer at δ = 0 and a certified
    # answer at every δ
    basic = steps * s / e
    if d == 0.0:
        return float(basic)

    def ok(b: float) -> bool:
        return bool((Laplace(s / b) ** steps).epsilon(d) <= e)

    return _search(
        ok, s * math.sqrt(steps) / e, increasing_ok=True, rtol=rtol, what="scale", known_ok=basic
    )


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
) -> float:
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
    attack-aware calibration (Kulynych et al. 2024). Risk decreases as σ grows, so the search
    brackets and bisects, at a coarse engine accuracy first and then at the default one; it never
    returns more than the closed-form σ = Δ√T/μ*, where μ* is the largest μ for which G_μ meets the
    target (DP-SGD's curve is at least G_{√T Δ/σ}; for advantage a, μ* = 2√2 erf⁻¹(a), since
    G_μ's advantage is 2Φ(μ/2) − 1; for TPR t at FPR α, μ* = Φ⁻¹(t) − Φ⁻¹(α), since 1 − G_μ(α) =
    Φ(Φ⁻¹(α) + μ)). With ``sample_rate=1`` that σ is the exact answer. The result meets the
    target and σ·(1 − rtol) may not.

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
    rtol : relative tolerance of the search.
    min_noise_multiplier : the smallest σ tried (small σ makes each accounting slow); if it
        already meets the target, ValueError says so.

    Returns
    -------
    float
        σ.

    Raises
    ------
    ValueError
        No target, more than one, a target without its partner (delta, fpr), or a value out of
        its range (the message names the parameter, the value and the range).

    References
    ----------
    Dong, Roth & Su (2022), "Gaussian differential privacy", JRSS B, Def 2.1, Prop 2.12 and
    Cor 2.13. Kulynych, Gomez, Kaissis, du Pin Calmon & Troncoso (2024), "Attack-aware noise
    calibration for differential privacy", NeurIPS.

    Examples
    --------
    >>> s = calibrate_dpsgd(0.01, 100, eps=2.0, delta=1e-5, rtol=1e-2)
    >>> 0.5 < s < 1.0
    True
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

    def ok_at(tol: float) -> Callable[[float], bool]:
        return lambda s: _meets(_dpsgd_curve(s, p, t, conv, tol), kind, a, b)

    def search(ok: Callable[[float], bool], start: float, tol: float, factor: float) -> float:
        return _search(
            ok,
            max(start, floor),
            increasing_ok=True,
            rtol=tol,
            what="noise multiplier",
            known_ok=known,
            floor=floor,
            factor=factor,
        )

    coarse = search(ok_at(1e-2), 1.0, max(rtol, 2e-2), 2.0)
    # refine at the default accuracy in a bracket around the coarse answer
    return search(ok_at(1e-3), coarse * 0.97, rtol, 1.03)


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
) -> int:
    """The largest number of DP-SGD steps that meets the target (certified), or 0 if none does.

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
    """
    s = check_scalar("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    p = check_scalar("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    kind, a, b = _target(eps, delta, mu, gaussian=True)
    max_steps = check_int("max_steps", max_steps, low=1)
    conv = _conv(sampling, neighbours, sensitivity)

    def ok(t: int) -> bool:
        return _meets(_dpsgd_curve(s, p, t, conv, 1e-3), kind, a, b)

    if not ok(1):
        return 0
    lo, hi = 1, 2
    while hi <= max_steps and ok(hi):
        lo, hi = hi, hi * 2
    hi = min(hi, max_steps + 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo


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
) -> float:
    """The largest sample rate for which DP-SGD meets the target (certified).

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
    """
    s = check_scalar("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    t = check_int("steps", steps, low=1)
    kind, a, b = _target(eps, delta, mu, gaussian=True)
    rtol = _check_rtol(rtol)
    conv = _conv(sampling, neighbours, sensitivity)

    def ok(p: float) -> bool:
        return p <= 1.0 and _meets(_dpsgd_curve(s, min(p, 1.0), t, conv, 1e-3), kind, a, b)

    if kind == "mu":
        # at p = 1 the curve is G_{√T Δ/σ} exactly; the certified μ includes the tails, where T
        # sampled steps act as G_{√T Δ/σ} with weight p^T, so no sample rate lowers it further
        full = conv.sensitivity * math.sqrt(t) / s
        if full <= a:
            return 1.0
        raise ValueError(
            f"target unreachable: μ-GDP with mu = {a:g} needs noise_multiplier ≥ "
            f"{conv.sensitivity:g}·√steps/mu = {conv.sensitivity * math.sqrt(t) / a:.6g} for "
            f"every sample rate (the certified μ includes the tails, where subsampling does not "
            f"help); got noise_multiplier = {s:g}, whose full-batch μ is {full:.6g}"
        )
    if ok(1.0):
        return 1.0
    return _search(ok, 0.01, increasing_ok=False, rtol=rtol, what="sample rate")

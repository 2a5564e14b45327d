"""The sampled-count bounds of :class:`fdp.tails.SampledCountBound` against δ(ε) of the T-fold
Poisson-subsampled Gaussian (add pair) computed in mpmath without fdp: in closed form for one
step (where the upper bound is exact) and by quadrature over the first coordinate for two.
Each side must hold: lower ≤ truth ≤ upper, for δ(ε) and for ε(δ)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fdp
from fdp.tails import SampledCountBound

from ._ref import mp


def _excess(mu: float, p: float, c: object) -> object:
    """E_A[(r(x) − c)₊] for A = N(0, 1), r(x) = 1 − p + p e^{μx − μ²/2} (one step's likelihood
    ratio), in closed form: r crosses c once."""
    mu_, p_, c = mp.mpf(mu), mp.mpf(p), mp.mpf(c)
    if c <= 1 - p_:
        return 1 - c
    xs = (mp.log((c - 1 + p_) / p_) + mu_**2 / 2) / mu_
    return (1 - p_) * mp.ncdf(-xs) + p_ * mp.ncdf(mu_ - xs) - c * mp.ncdf(-xs)


def _delta1(mu: float, p: float, eps: float) -> object:
    with mp.workdps(40):
        return _excess(mu, p, mp.e ** mp.mpf(eps))


def _delta2(mu: float, p: float, eps: float) -> object:
    """δ(ε) of two steps: E_{x₁}[r(x₁) · E_{x₂}[(r(x₂) − γ/r(x₁))₊]]."""
    with mp.workdps(30):
        mu_, p_, g = mp.mpf(mu), mp.mpf(p), mp.e ** mp.mpf(eps)

        def r(x: object) -> object:
            return 1 - p_ + p_ * mp.e ** (mu_ * x - mu_**2 / 2)

        # breakpoints every 1/4, and dense around where r(x₁) reaches γ/(1 − p) (beyond it every
        # x₂ counts): the integrand climbs 11 orders there for large μ, and the default rule
        # was 5e-8 low (below a certified lower bound)
        top = int(4 * (2 * mu + 12))
        pts = {mp.mpf(k) / 4 for k in range(-40, top + 1)}
        xs = (mp.log((g / (1 - p_) - 1 + p_) / p_) + mu_**2 / 2) / mu_
        pts |= {xs + mp.mpf(k) / (20 * mu_) for k in range(-40, 41)}
        return mp.quad(lambda x: mp.npdf(x) * r(x) * _excess(mu, p, g / r(x)),
                       [-mp.inf, *sorted(pts), mp.inf], maxdegree=10)


@settings(max_examples=60, deadline=None)
@given(mu=st.floats(0.1, 40.0), lp=st.floats(-30.0, -0.05), eps=st.floats(0.0, 1500.0))
def test_one_step_is_exact_above_and_below(mu: float, lp: float, eps: float) -> None:
    # one step: B = (1 − p)A + pN(μ), and the identity δ = p H_{γ'}(N(μ)‖A) makes the upper
    # bound exact (up to its outward rounding); the lower one is the best threshold test.
    # (ε up to 1500: the lower side once dropped e^ε A(E) where A(E) underflowed, and capped
    # e^ε at e^709; at μ = 30, p = 1e-3, ε = 800 it read 8e-18 for a true 4.4e-36)
    p = math.exp(lp)
    b = SampledCountBound(mu, p, 1)
    truth = _delta1(mu, p, eps)
    lo, hi = float(b.delta_lower(eps)[0]), float(b.delta_upper(eps)[0])
    assert lo <= truth <= hi, (lo, truth, hi)
    assert hi <= truth * (1 + 1e-9) + 1e-300
    if truth > 1e-280:  # (the threshold is searched on a grid; no claim below 1e-290)
        assert lo >= truth * (1 - 1e-4), (lo, truth)


@pytest.mark.parametrize(("mu", "p", "eps"), [
    (30.0, 1e-3, 800.0), (2.492765181690419, 3.769487946125267e-08, 206.04657907239402),
    (6.177584199902544, 4.449136606751905e-12, 207.6231497749221),
])
def test_lower_side_at_large_eps(mu: float, p: float, eps: float) -> None:
    # a hunt's cases (the engine's bracket takes its lower end from the closed bound)
    from fdp.operations import Mixture

    truth = _delta1(mu, p, eps)
    lo, hi = fdp.compose(Mixture(fdp.Gaussian(mu), p), repeat=1, numeric=True).delta_bracket(eps)
    assert lo <= truth <= hi, (lo, truth, hi)


@pytest.mark.parametrize(("mu", "p", "eps"), [
    (10.0, 1e-9, 0.0), (10.0, 1e-9, 20.0), (3.0, 1e-3, 1.0), (1.0, 0.1, 0.5), (1.0, 1e-3, 0.0),
    (0.5, 0.3, 0.2), (20.0, 1e-12, 60.0), (6.0, 1e-6, 8.0), (15.0, 1e-4, 30.0),
])
def test_two_steps_are_bracketed(mu: float, p: float, eps: float) -> None:
    b = SampledCountBound(mu, p, 2)
    truth = _delta2(mu, p, eps)
    lo, hi = float(b.delta_lower(eps)[0]), float(b.delta_upper(eps)[0])
    assert 0 < lo <= truth <= hi, (lo, truth, hi)


@pytest.mark.parametrize(("mu", "p", "n", "delta"), [
    (10.0, 1e-9, 1, 1e-10), (10.0, 1e-9, 2, 1e-12), (3.0, 1e-3, 1, 1e-6), (3.0, 1e-3, 2, 1e-6),
    (20.0, 1e-12, 2, 1e-14),
])
def test_epsilon_sides(mu: float, p: float, n: int, delta: float) -> None:
    # ε_upper(δ) has δ(ε_upper) ≤ δ in truth, ε_lower(δ) has δ(ε_lower) ≥ δ (at n = 2 the
    # upper side splits off the larger step's ratio, SampledCountBound._log_one_sampled)
    b = SampledCountBound(mu, p, n)
    ref = _delta1 if n == 1 else _delta2
    hi, lo = float(b.epsilon_upper(delta)[0]), float(b.epsilon_lower(delta)[0])
    assert 0 < lo <= hi < math.inf
    assert ref(mu, p, hi) <= delta
    assert ref(mu, p, lo) >= delta
    if n == 1:  # the upper side is exact there: ε within the bisection's 1e-9
        assert ref(mu, p, hi * (1 - 1e-7)) > delta


def test_no_privacy_loss_beyond_the_total_variation() -> None:
    # δ(0) ≤ Σ w_k δ_{G_{μ√k}}(0) ≤ 1 − (1 − p)^T: where that is at most δ, ε(δ) = 0 exactly
    b = SampledCountBound(10.0, 1e-13, 1000)
    tv = -math.expm1(1000 * math.log1p(-1e-13))
    assert float(b.delta_upper(0.0)[0]) <= tv * (1 + 1e-12)
    assert float(b.epsilon_upper(tv * 1.001)[0]) == 0.0
    assert float(b.epsilon_lower(tv * 1.001)[0]) == 0.0


def _delta_max(mu: float, p: float, n: int, eps: float) -> object:
    """δ(ε) of the n-step add pair where only the largest coordinate's ratio matters:
    ∫ (r(x) − γ)₊ dΦ(x)ⁿ. At μ = 10, p = 1e-12 the others' ratios are 1 within about 1e-9
    (the largest of 1000 normals is near 3.3, and p e^{μx − μ²/2} there is 1e-19)."""
    with mp.workdps(30):
        mu_, p_, g = mp.mpf(mu), mp.mpf(p), mp.e ** mp.mpf(eps)
        xs = (mp.log((g - 1 + p_) / p_) + mu_**2 / 2) / mu_

        def f(x: object) -> object:
            r = 1 - p_ + p_ * mp.e ** (mu_ * x - mu_**2 / 2)
            return (r - g) * n * mp.ncdf(x) ** (n - 1) * mp.npdf(x)

        return mp.quad(f, [xs, xs + 1, xs + 3, xs + 6, xs + 12, mp.inf])


def test_dpsgd_rare_sampling_gets_a_finite_bracket() -> None:
    # σ = 0.1, p = 1e-12, T = 1000: the grid cannot resolve the loss of the rare sampled step
    # (its bracket of ε(1e-10) was (0, 44760)); the sampled-count bounds give a finite bracket
    # around the truth, 34.24594634 by the largest-coordinate integral (the lower end is
    # within 1e-9 of it, the upper one log T higher: the mixture over which step sampled)
    h = fdp.dpsgd(0.1, 1e-12, 1000)
    lo, hi = h.epsilon_bracket(1e-10)
    with mp.workdps(30):
        ref = float(mp.findroot(
            lambda e: mp.log(_delta_max(10.0, 1e-12, 1000, e)) - mp.log(1e-10), 34.0))
    assert lo <= ref * (1 + 1e-7) and ref <= hi, (lo, ref, hi)
    assert lo >= ref * (1 - 1e-7)
    # the upper end splits off the largest sampled-step ratio (up to log T tighter than joint
    # convexity alone, which gave 41.15)
    assert hi <= ref * (1 + 1e-6)
    assert h.certificate(1e-10)["source"] == "sampled-count bound"
    dlo, dhi = h.delta_bracket(35.0)
    assert 0 < dlo <= dhi
    assert h.epsilon(1e-10) == hi


def test_calibrated_rare_sample_rate_is_sane() -> None:
    # calibrate_sample_rate at σ = 0.1, T = 10: the answer used to be certified by the grid
    # only (8.4e-10; at T = 1000, eps=1e-3, delta=1e-10 it was 2.2e-150, 18 s). The true
    # largest rate p* solves δ(1) = 1e-8 (largest-coordinate quadrature: 1.00292e-9); the
    # answer must be at most p* and, with a failure certified in truth at p(1 + rtol), close
    r = fdp.calibrate_sample_rate(0.1, 10, eps=1.0, delta=1e-8)
    p = float(r)
    with mp.workdps(30):
        star = float(mp.e ** mp.findroot(
            lambda lp: mp.log(_delta_max(10.0, mp.e**lp, 10, 1.0)) - mp.log(1e-8),
            mp.log(1e-9)))
    assert p <= star <= p * (1 + 2e-3), (p, star)
    assert r.info["tight"]["how"].startswith("optimistic bound above the target")
    assert r.info["certified_by"] == "closed form"


def _delta_max_groups(groups: list[tuple[float, float, int]], eps: float) -> object:
    """δ(ε) of an add pair made of groups (μ, p, n) of steps where only the largest
    coordinate's ratio matters, as in :func:`_delta_max`: Σ_g n_g ∫ (r_g(x) − γ)₊ dΦ(x). (Two
    coordinates above their thresholds, x > 10.7 for μ = 10, are 1e-26 as likely as one, and
    Φ(x)^{n−1} ≥ 1 − 1e-23 there.)"""
    with mp.workdps(30):
        g = mp.e ** mp.mpf(eps)
        total = mp.mpf(0)
        for mu, p, n in groups:
            mu_, p_ = mp.mpf(mu), mp.mpf(p)
            xs = (mp.log((g - 1 + p_) / p_) + mu_**2 / 2) / mu_

            def f(x: object, mu_: object = mu_, p_: object = p_) -> object:
                return (1 - p_ + p_ * mp.e ** (mu_ * x - mu_**2 / 2) - g) * mp.npdf(x)

            total += n * mp.quad(f, [xs, xs + 1, xs + 3, xs + 6, xs + 12, mp.inf])
        return total


def test_accountant_with_two_noise_settings_gets_a_finite_bracket() -> None:
    # 500 steps at σ = 0.1 and 500 at σ = 0.2, p = 1e-12 (an accountant's history): the grid's
    # bracket of ε(1e-10) was (0, 44245), then the domination bound's [29.83, 34.25] (the ε
    # of the 500 σ = 0.1 steps alone and of 1000 steps at σ = 0.1). Since the Chernoff t grid
    # reaches small t (the composed sd is 1e-5: it began at t = 4600), the grid's window holds
    # the rare sampled step's loss and its bracket is within tol. The reference: the
    # largest-coordinate integral over both groups.
    a = fdp.Accountant().step(0.1, 1e-12, steps=500).step(0.2, 1e-12, steps=500)
    lo, hi = a.epsilon_bracket(1e-10)
    with mp.workdps(30):
        ref = float(mp.findroot(lambda e: mp.log(_delta_max_groups(
            [(10.0, 1e-12, 500), (5.0, 1e-12, 500)], e)) - mp.log(1e-10), 30.0))
        alone = float(mp.findroot(
            lambda e: mp.log(_delta_max(10.0, 1e-12, 500, e)) - mp.log(1e-10), 30.0))
    assert lo <= ref * (1 + 1e-8) and ref * (1 - 1e-8) <= hi, (lo, ref, hi)
    assert lo >= alone * (1 - 1e-7)  # (fewer steps: a larger curve)
    assert hi - lo <= 1e-3 * hi
    assert a.epsilon(1e-10) == hi


def test_rare_sampling_answers_without_the_engine() -> None:
    # where the sampled-count bracket is within tol the engine is not built (it spent 3.3 s and
    # 520 MB at σ = 0.1, p = 1e-12, T = 1000 before the bounds answered anyway); the answers
    # are the bounds' (checked against quadrature above), and the engine is built for the
    # curves themselves, or where the bounds cannot decide (δ at ε below the remove cap)
    import pickle

    h = fdp.dpsgd(0.1, 1e-12, 1000)
    lo, hi = h.epsilon_bracket(1e-10)
    assert h.epsilon(1e-10) == hi and h.certificate(1e-10)["source"] == "sampled-count bound"
    dlo, dhi = h.delta_bracket(35.0)
    assert 0.0 < dlo <= dhi < 1e-10
    assert h._engine is None and h._built == ()
    back = pickle.loads(pickle.dumps(h))
    assert back.epsilon_bracket(1e-10) == (lo, hi) and back._engine is None
    assert h.epsilon(1e-10) == hi  # (still the bounds')
    # below the remove cap, and for the curves themselves, the engine answers (here at T·p = 1,
    # where the grid decides; at p = 1e-12 the remove direction's grid takes ~50 s to build)
    g = fdp.dpsgd(1.0, 1e-3, 1000)
    assert g.certificate(1e-5)["source"] != "sampled-count bound"
    e_small = g._cap / 2.0  # (below the cap the remove direction's δ may count)
    assert float(g.delta(e_small)) >= float(g._count.delta_lower(e_small)[0]) > 0.0
    assert g._engine is not None
    a = np.linspace(0.0, 1.0, 41)
    b = np.asarray(g(a))
    assert np.all(b >= 0.0) and np.all(b <= 1.0 - a + 1e-15) and np.all(np.diff(b) <= 1e-15)
    assert np.all(np.diff(b, 2) >= -1e-12)  # convex

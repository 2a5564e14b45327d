"""Deep tails: the tilted engine and the closed-form tail bounds (fdp.tails) against mpmath.

References are computed here with mpmath (the GDP profile
δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), Dong, Roth & Su 2022, Cor 2.13; binomial sums), never
with fdp.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import mpmath as mp
import numpy as np
import pytest

import fdp
from fdp import tails
from fdp.operations import Mixture

mp.mp.dps = 60


def _gdp_delta_mp(mu: float, e: mp.mpf) -> mp.mpf:
    m = mp.mpf(mu)
    return mp.ncdf(-e / m + m / 2) - mp.e**e * mp.ncdf(-e / m - m / 2)


def gdp_delta(mu: float, eps: float) -> float:
    return float(_gdp_delta_mp(mu, mp.mpf(eps)))


def gdp_eps(mu: float, delta: float) -> float:
    """ε with δ_μ(ε) = delta, by bisection in mpmath (δ_μ is decreasing)."""
    lo, hi = mp.mpf(0), mp.mpf(mu * mu / 2 + 60 * mu)
    target = mp.mpf(delta)
    for _ in range(200):
        mid = (lo + hi) / 2
        if _gdp_delta_mp(mu, mid) > target:
            lo = mid
        else:
            hi = mid
    return float(hi)


@pytest.fixture(scope="module")
def g1() -> fdp.Bracketed:
    g = fdp.compose(fdp.Gaussian(0.1), repeat=100, numeric=True)  # exactly G_1
    g.deepen()  # the deep grid (what a query at δ < 1e-12 or taking a side builds)
    assert g.info["grid_mode"] == "deep"
    return g


@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-8, 1e-10, 1e-12])
def test_bulk_grid_meets_tol_down_to_deep_delta(delta: float) -> None:
    """The default grid (built for δ ≥ DEEP_DELTA = 1e-12) holds the exact ε within a bracket no
    wider than tol = 1e-3, and answers without building the deep grid."""
    g = fdp.compose(fdp.Gaussian(0.1), repeat=100, numeric=True)
    exact = gdp_eps(1.0, delta)
    lo, hi = g.epsilon_bracket(delta)
    assert lo <= exact <= hi
    assert hi - lo <= 1e-3 * hi
    d_lo, d_hi = g.delta_bracket(exact)
    assert d_lo <= delta <= d_hi
    assert g.info["grid_mode"] == "fast"


def test_deep_query_rebuilds_on_the_deep_grid() -> None:
    g = fdp.compose(fdp.Gaussian(0.1), repeat=100, numeric=True)
    g.epsilon(1e-6)
    assert g.info["grid_mode"] == "fast"
    exact = gdp_eps(1.0, 1e-20)
    lo, hi = g.epsilon_bracket(1e-20)
    assert g.info["grid_mode"] == "deep"
    assert lo <= exact <= hi <= exact * 1.0002
    # a δ query whose answer is below 1e-12 too
    h = fdp.compose(fdp.Gaussian(0.1), repeat=100, numeric=True)
    d = float(h.delta(gdp_eps(1.0, 1e-25)))
    assert h.info["grid_mode"] == "deep" and 1e-25 <= d <= 1.01e-25


@pytest.mark.parametrize("delta", [1e-5, 1e-10, 1e-15, 1e-20, 1e-25, 1e-30])
def test_tilted_engine_within_one_percent_to_1e30(g1: fdp.Bracketed, delta: float) -> None:
    """The conservative ε is above the truth and within 0.02 % (the README's claim); the bracket
    holds it."""
    exact = gdp_eps(1.0, delta)
    lo, hi = g1.epsilon_bracket(delta)
    assert lo <= exact <= hi
    assert hi <= exact * 1.0002
    # and δ at the exact ε is on the right side and within 1 %
    d = float(g1.delta(exact))
    assert delta <= d <= delta * 1.01


def test_roundoff_bound_is_charged_per_point(g1: fdp.Bracketed) -> None:
    # the lower curve's δ is never below the exact one, from the bulk to the far tail
    eps = np.linspace(0.0, 16.0, 161)
    ref = np.array([gdp_delta(1.0, float(e)) for e in eps])
    assert np.all(np.asarray(g1.lower.delta(eps)) >= ref * (1 - 1e-12))
    assert np.all(np.asarray(g1.upper.delta(eps)) <= ref * (1 + 1e-12) + 1e-300)


@pytest.mark.parametrize("delta", [1e-40, 1e-100, 1e-300])
def test_finite_certified_epsilon_down_to_1e300(g1: fdp.Bracketed, delta: float) -> None:
    e = float(g1.epsilon(delta))
    assert math.isfinite(e)
    assert e >= gdp_eps(1.0, delta)  # certified: never below the truth


def test_tail_bound_moments_against_mpmath() -> None:
    # E_B[e^{θL}] of the Poisson-subsampled Gaussian (add pair) as a binomial sum in mpmath
    p, mu = 0.01, 1.0
    k = tails.log_mgf(Mixture(fdp.Gaussian(mu), p), np.array([1.0, 4.0, 9.0]))
    for theta, got in zip([1, 4, 9], k, strict=True):
        lam = theta + 1
        ref = mp.log(
            mp.fsum(
                mp.binomial(lam, j) * (1 - mp.mpf(p)) ** (lam - j) * mp.mpf(p) ** j
                * mp.e ** (j * (j - 1) * mp.mpf(mu) ** 2 / 2)
                for j in range(lam + 1)
            )
        )
        assert got >= float(ref) * (1 - 1e-12) and got == pytest.approx(float(ref), rel=1e-10)


def test_fractional_moments_against_mpmath() -> None:
    # θ in (0, 1) (the fallback's wide grid):
    # E_B[e^{θL}] = E_{z~N(0,σ²)}[(1 − p + p e^{(2z−1)/(2σ²)})^{θ+1}] by mpmath quadrature
    # at 30 digits, split at the two modes (z = 0 and z = 1)
    p, mu = 0.5, 10.0
    thetas = np.array([1e-5, 3e-3, 0.4])
    k = tails.log_mgf(Mixture(fdp.Gaussian(mu), p), thetas)
    s = 1 / mp.mpf(mu)
    with mp.workdps(30):
        for theta, got in zip(thetas, k, strict=True):
            lam = mp.mpf(theta) + 1

            def f(z: mp.mpf, lam: mp.mpf = lam) -> mp.mpf:
                return ((1 - mp.mpf(p) + mp.mpf(p) * mp.e ** ((2 * z - 1) / (2 * s * s))) ** lam
                        * mp.npdf(z, 0, s))

            ref = mp.log(mp.quad(f, [-mp.inf, -0.5, 0, 0.5, 1, 1.5, lam + 0.5, mp.inf]))
            assert got >= float(ref) and got == pytest.approx(float(ref), rel=1e-9, abs=5e-11)


def _remove_moment_mp(p: float, mu: float, theta: float) -> mp.mpf:
    """K(θ) of the remove pair (B, P), B = (1 − p)P + pQ, P = N(0, 1), Q = N(μ, 1):
    log E_P[(dP/dB)^θ] = log ∫ φ(x)^{θ+1} b(x)^{−θ} dx, by mpmath quadrature split at the modes."""
    pp, m, th = mp.mpf(p), mp.mpf(mu), mp.mpf(theta)
    with mp.workdps(40):
        def f(x: mp.mpf) -> mp.mpf:
            phi = mp.npdf(x)
            return phi * (1 - pp + pp * mp.e ** (m * x - m * m / 2)) ** (-th)

        pts = [-mp.inf, -8, -2, 0, m / 2, m, m + 2, m + 8, mp.inf]
        return mp.log(mp.quad(f, pts))


@pytest.mark.parametrize(("p", "mu"), [(0.05, 1 / 3), (0.004, 1 / 1.1), (0.3, 1.0), (0.01, 2.0),
                                       (0.9, 0.5)])
def test_remove_pair_moments_are_upper_bounds_against_mpmath(p: float, mu: float) -> None:
    # the remove pair's K(θ) now also reads the add pair's (B_α ≤ A_α for the sampled Gaussian,
    # Mironov, Talwar & Zhang 2019); every θ's value must stay at or above the true moment,
    # computed here by quadrature in mpmath
    from fdp.tradeoff import Inverse

    thetas = np.array([1.0, 2.0, 5.0, 11.0, 17.0, 35.0])
    got = tails.log_mgf(Inverse(Mixture(fdp.Gaussian(mu), p)), thetas)
    for theta, k in zip(thetas, got, strict=True):
        ref = _remove_moment_mp(p, mu, float(theta))
        assert k >= float(ref) * (1 + 1e-12) - 1e-300, (theta, k, float(ref))


def _rdp_epsilon_mp(sigma: float, p: float, steps: int, delta: float, orders: range) -> mp.mpf:
    """The RDP bound on DP-SGD's ε(δ) (add pair's A_λ by its binomial sum, BBGHS Thm 21), at
    integer orders, in mpmath."""
    best = mp.inf
    pp, s = mp.mpf(p), mp.mpf(sigma)
    with mp.workdps(40):
        for lam in orders:
            a = mp.fsum(mp.binomial(lam, j) * (1 - pp) ** (lam - j) * pp**j
                        * mp.e ** ((j * j - j) / (2 * s * s)) for j in range(lam + 1))
            rho = steps * mp.log(a) / (lam - 1)
            e = rho + mp.log(mp.mpf(lam - 1) / lam) - (mp.log(mp.mpf(delta)) + mp.log(lam)) / (
                lam - 1)
            best = min(best, e)
    return best


@pytest.mark.parametrize(("sigma", "p", "steps", "delta"), [
    (3.0, 0.05, 20000, 1e-50),          # the remove pair decided: 47.65 before
    (1.1, 256 / 60000, 14063, 1e-50),   # the best θ (15) was off the grid: 13.14 before
])
def test_dpsgd_deep_epsilon_is_no_looser_than_integer_order_rdp(
    sigma: float, p: float, steps: int, delta: float
) -> None:
    # Far below the grid the conservative end is the moment bound (BBGHS Thm 21) over both
    # directions; it must not be looser than the RDP accountant's bound at integer orders,
    # computed here in mpmath from the add pair's A_λ
    h = fdp.dpsgd(sigma, p, steps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fdp.AccuracyWarning)
        lo, hi = h.epsilon_bracket(delta)
    rdp = float(_rdp_epsilon_mp(sigma, p, steps, delta, range(2, 70)))
    assert lo <= hi <= rdp * (1 + 1e-9), (lo, hi, rdp)


def test_no_grid_answer_is_at_least_as_tight_as_rdp() -> None:
    # Issue 13, "the best certified answer wins": where no grid holds DP-SGD (σ = 0.1, p = 0.5,
    # T = 10⁷) the answer is the moment bound alone; with θ ≥ 1 only it read ε(1e-5) = 9.86e8,
    # twice the RDP accountant's 4.74e8 (orders down to 1.1). With fractional θ it is lower than
    # RDP's at any of its orders, and still above the bound's own value at the best θ computed
    # from mpmath moments (so a certified upper bound, BBGHS Thm 21).
    with pytest.warns(fdp.AccuracyWarning, match="no grid"):
        h = fdp.dpsgd(0.1, 0.5, 10**7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fdp.AccuracyWarning)
        e = float(h.epsilon(1e-5))
        cert = h.certificate(1e-5)
    assert cert["source"] == "tail bound" and cert["epsilon"] == e
    rdp = fdp.rdp.to_epsilon(10**7 * fdp.rdp.subsampled_gaussian(0.1, 0.5), delta=1e-5)
    assert e < 0.55 * rdp
    # BBGHS at one θ from an mpmath moment of each direction: an upper bound of the same kind,
    # so the optimised one is at most it (and not far below: the optimum is near θ = 7e-5)
    theta, s, p = mp.mpf("7e-5"), mp.mpf("0.1"), mp.mpf("0.5")
    with mp.workdps(30):
        def add(z: mp.mpf) -> mp.mpf:
            r = mp.e ** ((2 * z - 1) / (2 * s * s))
            return (1 - p + p * r) ** (theta + 1) * mp.npdf(z, 0, s)

        k = mp.log(mp.quad(add, [-mp.inf, -0.5, 0, 0.5, 1, 1.5, mp.inf]))
        ref = (10**7 * k + mp.log(1 / (1 + theta)) + theta * mp.log(theta / (1 + theta))
               - mp.log(mp.mpf("1e-5"))) / theta
    # (the add direction decides: the remove one is capped at T·log(1/(1 − p)) = 6.9e6)
    assert float(ref) * 0.9 <= e <= float(ref) * (1 + 1e-9)


def test_tail_bound_is_an_upper_bound_on_gaussian_delta() -> None:
    k = tails.log_mgf(fdp.Gaussian(1.0))
    for e in [2.0, 5.0, 10.0, 30.0]:
        assert tails.delta_bound(k, e)[0] >= gdp_delta(1.0, e)


def test_dpsgd_tiny_delta_is_finite_and_says_why() -> None:
    """Issue 13: ε = ∞ at δ ≤ 1e-15 before, while a finite certified bound exists."""
    h = fdp.dpsgd(4.0, 0.00033, 10_000)
    lo, hi = h.epsilon_bracket(np.array([1e-15, 1e-18, 1e-30, 1e-100]))
    assert np.all(np.isfinite(hi)) and np.all(lo <= hi)
    cert = h.certificate(1e-100)
    assert cert["source"] in ("grid", "tail bound", "remove-direction loss bound T·log(1/(1 − p))")
    assert math.isfinite(cert["epsilon"])
    # the remove direction's losses are at most log(1/(1 − p)) per step: a cap at every δ
    assert hi[-1] <= -10_000 * math.log1p(-0.00033) * (1 + 1e-15)


def test_unknown_moments_give_no_tail_bound() -> None:
    f = fdp.EpsDelta(1.0, 1e-6)  # a +∞ atom: no finite moments
    assert tails.log_mgf(f) is None
    h = fdp.compose(f, fdp.Gaussian(1.0), numeric=True)
    assert h.epsilon(1e-7) == math.inf  # δ below the atom: no finite ε exists at all


def test_subsampled_discrete_pair_has_a_moment_bound_so_tiny_delta_stays_finite() -> None:
    # The Poisson add pair of randomized response composed with G_1: the grid's round-off
    # floor left ε(1e-60) = ∞ (bracket (14.157, ∞)) and δ(20) = 9e-43 for want of a tail bound
    # of the pair. Reference (mpmath, no fdp): conditioning on the pair's two outcomes,
    # δ(ε) = Σ_j b_j δ_{G_1}(ε − ℓ_j), with δ_G(x) = Φ(−x/μ + μ/2) − e^x Φ(−x/μ − μ/2) at
    # every real x (Dong, Roth & Su 2022, Cor 2.13); and K(θ) = log Σ_j b_j^{θ+1} p_j^{−θ}.
    eps0, p = 0.6817811046753968, 0.0001922211817811168
    add = fdp.poisson_subsample(fdp.mechanisms.randomized_response(eps0), p).add
    with mp.workdps(60):
        e0 = mp.mpf(eps0)
        pa = [mp.e**e0 / (1 + mp.e**e0), 1 / (1 + mp.e**e0)]
        qa = pa[::-1]
        ba = [(1 - mp.mpf(p)) * x + mp.mpf(p) * y for x, y in zip(pa, qa, strict=True)]
        la = [mp.log(b / x) for b, x in zip(ba, pa, strict=True)]
        thetas = np.array([0.5, 1.0, 2.0, 10.0, 1000.0])
        got = tails.log_mgf(add, thetas)
        for th, k in zip(thetas, got, strict=True):
            ref = mp.log(sum(b ** (th + 1) / x**th for b, x in zip(ba, pa, strict=True)))
            # (above the exact value, by at most its charged rounding)
            assert ref <= k <= ref + 1e-12 * abs(ref) + 2e-14 * (th + 1), (th, k, ref)
        got_rem = tails.log_mgf(fdp.tradeoff.Inverse(add), thetas)  # the reversed pair (B, P)
        for th, k in zip(thetas, got_rem, strict=True):
            ref = mp.log(sum(x ** (th + 1) / b**th for b, x in zip(ba, pa, strict=True)))
            assert ref <= k <= ref + 1e-12 * abs(ref) + 2e-14 * (th + 1), (th, k, ref)

        def delta(e: mp.mpf) -> mp.mpf:
            def dg(x: mp.mpf) -> mp.mpf:
                return mp.ncdf(-x + mp.mpf(1) / 2) - mp.e**x * mp.ncdf(-x - mp.mpf(1) / 2)

            return sum(b * dg(e - x) for b, x in zip(ba, la, strict=True))

        eps_ref = mp.findroot(lambda e: mp.log(delta(e)) - mp.log(mp.mpf("1e-60")), 16.7)
        d20 = delta(mp.mpf(20))
    g = fdp.compose(add, fdp.Gaussian(1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fdp.AccuracyWarning)
        e = g.epsilon(1e-60)
        d = g.delta(20.0)
    assert float(eps_ref) <= e <= 1.02 * float(eps_ref), (e, float(eps_ref))
    assert float(d20) <= d <= 100 * float(d20), (d, float(d20))


def test_subsampled_laplace_and_symmetrized_curves_have_moment_bounds() -> None:
    # Poisson add pair of Laplace(1) at p = 0.01, composed with G_1: no moment bound of the pair
    # left ε = ∞ at δ ≤ 1e-100 (as for the uniform C_p(Laplace) and symmetrize(...) of a
    # subsampled Gaussian). References (mpmath quadrature, no fdp): P = Lap(0, 1),
    # B = (1 − p)P + p Lap(1, 1); K(θ) = log ∫ B^{θ+1} P^{−θ}, and for the reversed pair
    # log ∫ P^{θ+1} B^{−θ}; δ(ε) = ∫ B δ_{G_1}(ε − log(B/P)) (conditioning on the pair's outcome).
    from fdp.tradeoff import Inverse

    p = mp.mpf("0.01")
    add = fdp.poisson_subsample(fdp.Laplace(1.0), 0.01).add
    thetas = np.array([0.5, 1.0, 2.0, 10.0])
    k_add, k_rem = tails.log_mgf(add, thetas), tails.log_mgf(Inverse(add), thetas)
    with mp.workdps(40):
        dens_p = lambda x: mp.e ** (-abs(x)) / 2  # noqa: E731
        dens_b = lambda x: (1 - p) * dens_p(x) + p * mp.e ** (-abs(x - 1)) / 2  # noqa: E731
        cuts = [-mp.inf, 0, 1, mp.inf]
        for th, ka, kr in zip(thetas, k_add, k_rem, strict=True):
            exact_a = mp.log(mp.quad(
                lambda x, t=th: dens_b(x) ** (t + 1) * dens_p(x) ** -t, cuts))
            exact_r = mp.log(mp.quad(
                lambda x, t=th: dens_p(x) ** (t + 1) * dens_b(x) ** -t, cuts))
            assert ka >= exact_a and kr >= exact_r, (th, ka, float(exact_a), kr, float(exact_r))
            if float(th).is_integer():  # (the binomial sum is exact there)
                assert ka <= exact_a * (1 + 1e-9) + 1e-15, (th, ka, float(exact_a))

        def delta(e: mp.mpf) -> mp.mpf:
            def dg(x: mp.mpf) -> mp.mpf:
                return mp.ncdf(-x + mp.mpf(1) / 2) - mp.e**x * mp.ncdf(-x - mp.mpf(1) / 2)

            return mp.quad(lambda x: dens_b(x) * dg(e - mp.log(dens_b(x) / dens_p(x))), cuts)

        eps_ref = float(mp.findroot(lambda e: mp.log(delta(e)) - mp.log(mp.mpf("1e-100")), 21.6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fdp.AccuracyWarning)
        e = fdp.compose(add, fdp.Gaussian(1.0)).epsilon(1e-100)
        assert eps_ref <= e <= 1.02 * eps_ref, (e, eps_ref)
        for c in (fdp.compose(fdp.subsample(fdp.Laplace(1.0), 0.01), fdp.Gaussian(1.0)),
                  fdp.compose(fdp.symmetrize(fdp.poisson_subsample(fdp.Gaussian(1.0), 0.1).add),
                              fdp.Laplace(0.5))):
            assert math.isfinite(c.epsilon(1e-300))


def test_symmetrized_remove_pair_has_a_moment_bound() -> None:
    # symmetrize(poisson_subsample(G_1, 0.05).remove) ⊗ G_1 read ε = ∞ at δ = 1e-300: the
    # moment bound of the symmetrized curve needs K of f⁻¹ for f = (the remove pair) = an
    # inverse, whose inverse is the add pair. For a symmetric base the remove pair is the add
    # pair's inverse (theory §7), so both symmetrizations are the same curve and the answers
    # must agree to their tail bounds' slack; each is finite (the GDP part bounds it).
    pp = fdp.poisson_subsample(fdp.Gaussian(1.0), 0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fdp.AccuracyWarning)
        a = fdp.compose(fdp.symmetrize(pp.remove), fdp.Gaussian(1.0)).epsilon(1e-300)
        b = fdp.compose(fdp.symmetrize(pp.add), fdp.Gaussian(1.0)).epsilon(1e-300)
    assert math.isfinite(a) and math.isfinite(b)
    assert abs(a - b) <= 0.05 * b, (a, b)
    # and above the plain Gaussian part's exact ε (mpmath): adding a mechanism cannot lower it
    with mp.workdps(40):
        def dg(e: mp.mpf) -> mp.mpf:
            return mp.ncdf(-e + mp.mpf(1) / 2) - mp.e**e * mp.ncdf(-e - mp.mpf(1) / 2)

        e_g = float(mp.findroot(lambda e: mp.log(dg(e)) - mp.log(mp.mpf("1e-300")), 37.0))
    assert min(a, b) >= e_g


def test_gaussian_with_bounded_steps_has_a_shifted_gaussian_tail() -> None:
    # below the grid's window the conservative end was the moment bound, loose by its
    # polynomial factor: compose(Gaussian(40), Laplace(0.5), repeat=2) read ε(1e-100) ≤
    # 3429.27 for a truth in [2802.56, 2803.56]. With the other steps' losses at most S,
    # δ(ε) ≤ δ_M(ε − S). Reference: G_M ⊗ RR_1², exactly Σ_ℓ Q[ℓ] δ_M(ε − ℓ) over RR²'s
    # losses {2, 0, −2} (the bilinear form; δ_M by Balle & Wang's closed form), in mpmath.
    import mpmath as mp

    mp.mp.dps = 60
    mu = mp.mpf(40) * mp.sqrt(2)
    e0 = mp.mpf(1)
    b, a = mp.exp(e0) / (1 + mp.exp(e0)), 1 / (1 + mp.exp(e0))
    outs = [(b * b, 2 * e0), (2 * a * b, mp.mpf(0)), (a * a, -2 * e0)]

    def dm(e: Any) -> Any:
        return mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2)

    def dlt(e: Any) -> Any:
        return mp.fsum(w * dm(e - ell) for w, ell in outs)

    def eps(d: float) -> Any:
        lo, hi = mp.mpf(0), mp.mpf(10000)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if dlt(mid) > d else (lo, mid)
        return hi

    c = fdp.compose(fdp.Gaussian(40), fdp.EpsDelta(1.0), repeat=2)
    for d in (1e-60, 1e-100, 1e-300):
        truth = eps(d)
        lo, hi = c.epsilon_bracket(d)
        assert lo <= truth <= hi, (d, lo, hi, float(truth))
        assert hi - truth <= 2.0 + 1e-9 * truth, (d, hi, float(truth))  # (S = 2)
    for e in (3000.0, 3500.0):
        lo, hi = c.delta_bracket(e)
        truth = dlt(mp.mpf(e))
        assert lo <= truth <= hi, (e, lo, hi, float(truth))
        assert hi <= dm(mp.mpf(e) - 2) * (1 + 1e-9), (e, hi)

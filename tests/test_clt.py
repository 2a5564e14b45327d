"""fdp.clt: functionals against quadrature/closed forms, Berry–Esseen bounds containing exact
compositions, Edgeworth beating the CLT (ZDLS), and the best GDP fit."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from scipy import integrate, stats
from strategies import discrete_pair

import fdp
from fdp import clt
from fdp.operations import Mixture

GRID = np.linspace(0, 1, 1001)


def quad_functionals(f: fdp.TradeOff) -> tuple[float, float, float, float]:
    """kl, κ₂, κ₃, κ̄₃ as −∫ log|f'|, ∫ log²|f'|, ... over α (DRS Sec 3.3), f' by the loss law."""
    if isinstance(f, fdp.Gaussian):
        mu = f.mu
        dens = stats.norm(-mu * mu / 2, mu).pdf  # L under P
        lo, hi = -mu * mu / 2 - 40 * mu, -mu * mu / 2 + 40 * mu

        def e(g):  # noqa: ANN001, ANN202
            return integrate.quad(
                lambda x: g(x) * dens(x), lo, hi, epsabs=0, epsrel=1e-12, limit=400
            )[0]
    else:  # Laplace θ: atoms at ±θ (P-masses 1/2 and e^{−θ}/2), density e^{−x}/2 of L = 2x − θ
        t = f.mu

        def e(g):  # noqa: ANN001, ANN202
            cont = integrate.quad(
                lambda x: g(2 * x - t) * math.exp(-x) / 2, 0, t, epsabs=0, epsrel=1e-13, limit=400
            )[0]
            return cont + 0.5 * g(-t) + 0.5 * math.exp(-t) * g(t)

    k = -e(lambda x: x)
    return k, e(lambda x: x * x), e(lambda x: abs(x) ** 3), e(lambda x: abs(x + k) ** 3)


@pytest.mark.parametrize(
    "f", [fdp.Gaussian(0.3), fdp.Gaussian(2.0), fdp.Laplace(0.2), fdp.Laplace(1.5)]
)
def test_functionals_match_quadrature(f: fdp.TradeOff) -> None:
    ref = quad_functionals(f)
    got = (clt.kl(f), clt.kappa2(f), clt.kappa3(f), clt.kappa3_bar(f))
    for g, r in zip(got, ref, strict=True):
        assert g == pytest.approx(r, rel=1e-8)
    assert f.kl() == got[0]


@pytest.mark.parametrize("eps", [0.1, 0.5, 2.0])
def test_randomized_response_functionals(eps: float) -> None:
    f = fdp.EpsDelta(eps)
    assert clt.kl(f) == pytest.approx(eps * math.tanh(eps / 2), rel=1e-12)
    assert clt.kappa2(f) == pytest.approx(eps**2, rel=1e-12)
    assert clt.kappa3(f) == pytest.approx(eps**3, rel=1e-12)
    ref = 8 * eps**3 * math.exp(eps) * (1 + math.exp(2 * eps)) / (1 + math.exp(eps)) ** 4
    assert clt.kappa3_bar(f) == pytest.approx(ref, rel=1e-12)
    assert clt.kl(fdp.EpsDelta(eps, 0.01)) == math.inf


@pytest.mark.parametrize("n", [1, 3, 10, 100, 1000])
def test_clt_bounds_contain_exact_laplace(n: int) -> None:
    t = 1.0 / math.sqrt(n)
    r = clt.clt(fdp.Laplace(t), n=n)
    exact = fdp.compose(fdp.Laplace(t), repeat=n, numeric=n > 1)
    if r.valid:
        assert np.all(r.lower(GRID) <= exact.upper(GRID) + 1e-12)
        assert np.all(r.upper(GRID) >= exact.lower(GRID) - 1e-12)
        for c in (r.lower, r.upper):
            y = c(GRID)
            assert np.all(np.diff(y) <= 1e-12) and np.all(y <= 1 - GRID + 1e-12)
    assert r.approx.kind == "approximation"


def test_gamma_shrinks_like_inverse_sqrt_n() -> None:
    g = [clt.clt(fdp.EpsDelta(1 / math.sqrt(n)), n=n).gamma for n in (10, 100, 1000)]
    assert g[1] / g[0] == pytest.approx(1 / math.sqrt(10), rel=0.05)
    assert g[2] / g[1] == pytest.approx(1 / math.sqrt(10), rel=0.05)
    r = clt.clt(fdp.EpsDelta(1 / math.sqrt(1000)), n=1000)
    exact = fdp.EpsDelta(1 / math.sqrt(1000)) ** 1000  # exact KOV
    assert r.valid
    assert np.all(r.lower(GRID) <= exact(GRID) + 1e-12) and np.all(
        r.upper(GRID) >= exact(GRID) - 1e-12
    )


def test_invalid_when_gamma_large() -> None:
    r = clt.clt(fdp.Laplace(2.0))
    assert not r.valid and "γ" in r.message
    assert r.lower(0.3) == 0.0 and r.upper(0.3) == pytest.approx(0.7)


@pytest.mark.parametrize("n", [3, 10, 30, 100])
def test_edgeworth_beats_clt(n: int) -> None:
    # ZDLS: the Edgeworth curve is closer (sup norm) to the exact composition than G_μ
    t = 1.0 / math.sqrt(n)
    exact = fdp.compose(fdp.Laplace(t), repeat=n, tol=2e-4)
    ex = 0.5 * (exact.lower(GRID) + exact.upper(GRID))
    e_err = np.max(np.abs(clt.edgeworth(fdp.Laplace(t), n=n)(GRID) - ex))
    g_err = np.max(np.abs(clt.clt(fdp.Laplace(t), n=n).approx(GRID) - ex))
    assert e_err < g_err
    rr = fdp.EpsDelta(t) ** n
    assert (
        np.max(np.abs(clt.edgeworth(fdp.EpsDelta(t), n=n)(GRID) - rr(GRID)))
        < np.max(np.abs(clt.clt(fdp.EpsDelta(t), n=n).approx(GRID) - rr(GRID)))
        or n < 10
    )  # randomized response is a lattice law; Edgeworth helps once n is moderate


def test_epsdelta_limit_theorem() -> None:
    r = clt.clt(fdp.EpsDelta(0.01, 1e-7), n=10000)
    assert r.mu == pytest.approx(1.0) and r.approx.kind == "approximation"
    assert r.approx(0.0) == pytest.approx(math.exp(-1e-3), rel=1e-9)


# ------------------------------------------------------------------------ certified GDP μ
# References below never call fdp's μ code: mpmath quantiles at the breakpoints of pairs built
# from their masses, closed forms, and necessary conditions (G_μ ≤ f forces ε_f(δ) ≤ ε_μ(δ)).
MP_DPS = 40


def mp_phi_inv(x: mp.mpf) -> mp.mpf:
    """Φ⁻¹(x) in mpmath, for x ∈ (0, 1) (Newton on log Φ, valid deep in the tails)."""
    with mp.workdps(MP_DPS):
        x = mp.mpf(x)
        if x > 0.5:
            return -mp_phi_inv(1 - x)
        z0 = -mp.sqrt(-2 * mp.log(x)) if x < 0.1 else mp.mpf(-1)
        return mp.findroot(lambda z: mp.log(mp.ncdf(z)) - mp.log(x), z0)


def mp_mu_of_masses(p: list, q: list) -> mp.mpf:
    """μ* = max over breakpoints of Φ⁻¹(1 − α_k) − Φ⁻¹(β_k) for T(P, Q) of positive masses."""
    mp.mp.dps = MP_DPS  # restored by the caller's workdps
    p = [mp.mpf(x) for x in p]
    q = [mp.mpf(x) for x in q]
    order = sorted(range(len(p)), key=lambda j: -(q[j] / p[j]))
    best = mp.mpf(0)
    sa = sq = mp.mpf(0)
    for j in order[:-1]:
        sa += p[j]
        sq += q[j]
        best = max(best, mp_phi_inv(1 - sa) - mp_phi_inv(1 - sq))  # β = 1 − Σq
    return best


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0, 30.0, 800.0])
def test_gdp_mu_epsdelta_closed_form(eps: float) -> None:
    with mp.workdps(MP_DPS):
        r = 1 / (1 + mp.exp(eps))
    ref = float(-2 * mp_phi_inv(r))
    got = clt.gdp_mu(fdp.EpsDelta(eps))
    assert ref <= got <= ref * (1 + 1e-11) + 1e-13
    assert clt.gdp_mu(fdp.EpsDelta(eps, 1e-5)) == math.inf
    assert clt.gdp_mu_delta(fdp.EpsDelta(eps, 1e-5)) == (got, 1e-5)


def test_gdp_mu_randomized_response_pairs() -> None:
    rr = fdp.mechanisms.randomized_response
    # 3-ary randomized response, and a 30-fold binary RR whose extreme breakpoint (α ≈ 2e-28,
    # 1 − β ≈ 0.022) needs the tails' relative precision
    e = 1.2
    p3 = [math.exp(e) / (math.exp(e) + 2), 1 / (math.exp(e) + 2), 1 / (math.exp(e) + 2)]
    q3 = [p3[1], p3[0], p3[2]]
    cases = [(rr(e, k=3), (p3, q3))]
    n = 30
    with mp.workdps(MP_DPS):
        t = mp.mpf(2)
        s, r = mp.exp(t) / (1 + mp.exp(t)), 1 / (1 + mp.exp(t))
        pb = [mp.binomial(n, j) * r**j * s ** (n - j) for j in range(n + 1)]
        qb = [mp.binomial(n, j) * s**j * r ** (n - j) for j in range(n + 1)]
    cases.append((fdp.compose(rr(2.0), repeat=n), (pb, qb)))
    for f, ref in cases:
        got = clt.gdp_mu(f)
        with mp.workdps(MP_DPS):
            ref = float(mp_mu_of_masses(*ref))
        assert ref <= got <= ref * (1 + 1e-10) + 1e-12
        assert clt.gdp_mu_delta(f) == (got, 0.0)


@pytest.mark.parametrize("t", [0.1, 1.0, 4.0])
def test_gdp_mu_laplace(t: float) -> None:
    # sup over the curved piece e^{−t}/(4α), α ∈ [e^{−t}/2, e^{−t/2}/2], by golden section in
    # mpmath (the objective is unimodal there), and the end of the linear piece
    with mp.workdps(MP_DPS):
        em = mp.exp(-t)

        def phi(a: mp.mpf) -> mp.mpf:
            return -mp_phi_inv(a) - mp_phi_inv(em / (4 * a))

        lo, hi = em / 2, mp.exp(-t / 2) / 2
        g = (mp.sqrt(5) - 1) / 2
        for _ in range(90):
            m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
            if phi(m1) < phi(m2):
                lo = m1
            else:
                hi = m2
        ref = float(max(phi(lo), -mp_phi_inv(em / 2)))
    got = clt.gdp_mu(fdp.Laplace(t))
    assert ref <= got <= ref + 1e-9


def test_gdp_mu_infinite_and_trivial() -> None:
    assert clt.gdp_mu(fdp.from_points([0.0, 0.5], [0.9, 0.2])) == math.inf  # f(0) < 1
    assert clt.gdp_mu(fdp.from_distributions([0.5, 0.5], [1.0, 0.0])) == math.inf  # +∞ atom
    assert clt.gdp_mu(fdp.from_distributions([0.5, 0.5], [0.0, 1.0])) == math.inf
    assert clt.gdp_mu(fdp.Gaussian(1.7)) == 1.7 and clt.gdp_mu(fdp.Identity()) == 0.0
    m = clt.gdp_mu(fdp.Laplace(1.0))
    assert fdp.Laplace(1.0).dominates(fdp.Gaussian(m), tol=1e-12)
    assert not fdp.Laplace(1.0).dominates(fdp.Gaussian(m * 0.999), tol=0)
    mu, gap = clt.gdp_fit(fdp.Gaussian(1.0))
    assert mu == 1.0 and gap == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("p", [0.01, 0.5])
def test_subsampled_gaussian_mu_is_not_amplified(p: float) -> None:
    # p G_m + (1 − p) Id ≥ G_m, and no μ < m works: δ(ε) ≥ p δ_m(ε + log(1/p)) beats δ_μ(ε)
    # far out (both in log space)
    m = 1.0
    for f in (Mixture(fdp.Gaussian(m), p), fdp.subsample(fdp.Gaussian(m), p)):
        assert clt.gdp_mu(f) == m
    mu = 0.9
    e = np.linspace(1, 400, 400)
    lhs = math.log(p) + np.asarray(fdp.gdp.log_delta(m, e + math.log(1 / p)))
    assert np.any(lhs > np.asarray(fdp.gdp.log_delta(mu, e)))


@pytest.fixture(scope="module")
def dpsgd_h() -> fdp.TradeOff:
    return fdp.dpsgd(0.5, 0.01, 1000)


def test_dpsgd_gdp_mu_regression(dpsgd_h: fdp.TradeOff) -> None:
    # issue 12 item 7: the old "certified" μ = 2.6078 had ε(1e-7) = 16.41 < 17.53 ≤ true ε.
    # If G_μ ≤ f then ε_f(δ) ≤ ε_μ(δ): a certified μ must clear the certified LOWER ε bound.
    h = dpsgd_h
    items = [(Mixture(fdp.Gaussian(2.0), 0.01), 1000)]
    with_items = fdp.Bracketed(h.lower, lambda: h.upper, info={**h.info, "items": items})
    assert clt.gdp_mu(with_items) == pytest.approx(2 * math.sqrt(1000), rel=1e-14)
    for f in (h, with_items):
        mu = clt.gdp_mu(f)
        assert mu >= 2 * math.sqrt(1000) * (1 - 1e-15)  # the exact μ* (see the Mixture test)
        for d in np.logspace(-2, -15, 27):
            lo, hi = f.epsilon_bracket(d)
            assert fdp.gdp.epsilon(mu, d) >= min(lo, hi) if math.isfinite(mu) else True


def test_dpsgd_gdp_mu_delta(dpsgd_h: fdp.TradeOff) -> None:
    h = dpsgd_h
    mu, tau = clt.gdp_mu_delta(h)
    assert tau == h.lower.q_inf and 0 < tau < 1e-12 and math.isfinite(mu)
    # the claim is T ≥ G_μ ⊗ f_{0,τ} with T symmetric, i.e. its profile τ + (1 − τ)δ_μ(ε)
    # dominates the certified δ on ε ≥ 0 (the lower curve itself is cut near α = 1)
    e = np.concatenate([np.linspace(0, 60, 1201), np.linspace(60, 2000, 200)])
    prof = tau + (1 - tau) * np.asarray(fdp.gdp.delta(mu, e))
    assert np.all(prof >= np.asarray(h.lower.delta(e)) * (1 - 1e-9))
    for d in np.logspace(-2, -11, 10):  # and then ε_f(δ) ≤ ε_μ((δ − τ)/(1 − τ))
        assert fdp.gdp.epsilon(mu, (d - tau) / (1 - tau)) >= h.epsilon_bracket(d)[0]
    # a larger τ buys a smaller μ
    m2, t2 = clt.gdp_mu_delta(h, tau=1e-8)
    assert t2 == 1e-8 and m2 < mu


def test_numeric_gaussian_composition() -> None:
    g = fdp.compose(fdp.Gaussian(0.5), repeat=16, numeric=True)  # exactly G_2
    assert clt.gdp_mu(g) >= 2.0
    # what the lower curve alone certifies (without the components' GDP bound B = 2)
    g = fdp.Bracketed(
        g.lower, lambda: g.upper, info={k: v for k, v in g.info.items() if k != "items"}
    )
    assert clt.gdp_mu(g) >= 2.0
    mu, tau = clt.gdp_mu_delta(g)
    assert mu >= 2.0 - 1e-9 and 0 <= tau < 1e-12
    m12, _ = clt.gdp_mu_delta(g, tau=1e-12)  # beyond the lower curve's round-off floor
    assert 2.0 - 1e-9 <= m12 <= 2.0 + 1e-3
    e = np.linspace(0, 80, 801)
    prof = tau + (1 - tau) * np.asarray(fdp.gdp.delta(mu, e))
    assert np.all(prof >= np.asarray(g.lower.delta(e)) * (1 - 1e-9))
    info = {**g.info, "items": [(fdp.Gaussian(0.5), 16)]}
    items = fdp.Bracketed(g.lower, lambda: g.upper, info=info)
    assert clt.gdp_mu(items) == pytest.approx(2.0, rel=1e-14) and clt.gdp_mu(items) >= 2.0


def test_asymmetric_numeric_composition() -> None:
    f = fdp.compose(Mixture(fdp.Gaussian(0.5), 0.1), repeat=20, numeric=True)
    mu, tau = clt.gdp_mu_delta(f)
    assert math.isfinite(mu) and tau >= f.lower.q_inf
    e = np.linspace(0, 60, 601)
    prof = tau + (1 - tau) * np.asarray(fdp.gdp.delta(mu, e))
    assert np.all(prof >= np.asarray(f.lower.delta(e)) * (1 - 1e-9))
    assert clt.gdp_mu(f) >= 0.5 * math.sqrt(20) or clt.gdp_mu(f) == math.inf


ALPHAS = np.unique(
    np.concatenate(
        [np.logspace(-300, -3, 600), np.linspace(0, 1, 2001), 1 - np.logspace(-3, -16, 200)]
    )
)


@settings(max_examples=60, deadline=None)
@given(discrete_pair())
def test_gdp_mu_property(pair: tuple[np.ndarray, np.ndarray]) -> None:
    p, q = pair
    f = fdp.from_distributions(p, q)
    mu = clt.gdp_mu(f)
    assert math.isfinite(mu)
    assert np.all(np.asarray(fdp.Gaussian(mu)(ALPHAS)) <= np.asarray(f(ALPHAS)) + 1e-12)
    # and it is the smallest: a slightly smaller μ fails at a breakpoint
    if mu > 1e-6:
        a, b = f.breakpoints
        assert np.any(np.asarray(fdp.Gaussian(mu - 1e-6)(a)) > b)


def test_dpsgd_certified_mu_above_clt() -> None:
    from fdp.sgd import dpsgd_clt

    m = fdp.dpsgd(1.0, 0.01, 1000).gdp_mu()
    assert m > dpsgd_clt(1.0, 0.01, 1000).mu  # the CLT underestimates (BDLS; issue 5)


@pytest.mark.parametrize(("mu", "gamma"), [(3.0, 0.001), (0.5, 1e-4), (6.0, 0.03), (1.5, 0.01)])
def test_berry_esseen_lower_curve_is_below_its_bound(mu: float, gamma: float) -> None:
    # _be_lower's first line was a chord to F's grid points, and F dips below it between them:
    # _be_lower(3, 0.001)(0.0033219) read 5.6e-5 above G_3(α + γ) − γ (a hunt). Reference:
    # F(α) = G_μ(max(α, γ) + γ) − γ (DRS Thm 3.5) in mpmath.
    import mpmath as mp

    from fdp.clt import _be_lower

    mp.mp.dps = 30
    lo = _be_lower(mu, gamma)
    m, g = mp.mpf(mu), mp.mpf(gamma)
    alphas = np.unique(np.concatenate([np.linspace(0, 1 - gamma, 3001), [0.0033219],
                                       gamma + np.logspace(-9, -1, 400)]))
    for a in alphas[alphas <= 1 - gamma]:
        x = max(mp.mpf(a), g) + g
        bound = mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * x - 1) - m) - g if x < 1 else -g
        assert lo(a) <= max(bound, 0) + 1e-15, (a, lo(a), float(bound))


def test_clt_with_binned_functionals_certifies_nothing() -> None:
    # a subsampled Gaussian step's functionals come from binning (an approximation): kl read
    # 9.7e-5 for the true 1.46e-6, yet clt() said valid and its "certified" upper curve lay 0.39
    # below the composition at α = 0.3 (a hunt, mpmath quadrature). Now: not valid, trivial
    # bounds; closed forms (Laplace, Gaussian) and exact PL curves stay valid.
    r = fdp.clt.clt(fdp.sgd.dpsgd_step(1.0, 0.001, "poisson"), n=1000)
    assert not r.valid and "approximation" in r.message
    assert r.lower(0.3) == 0.0 and r.upper(0.3) == pytest.approx(0.7)
    assert fdp.clt.clt(fdp.Laplace(0.1), n=1000).valid
    assert fdp.clt.clt(fdp.mechanisms.randomized_response(0.1), n=1000).valid
    assert fdp.clt.clt(fdp.Laplace(1e-5), n=10**9).valid  # (its closed forms, in mpmath)


@pytest.mark.parametrize("t", [1e-300, 1e-9, 1e-7, 1e-5, 1e-3, 0.1, 0.9, 1.0, 1.7, 30.0])
def test_laplace_functionals_match_quadrature_of_the_loss_law(t: float) -> None:
    # The closed forms cancel for small μ (κ₃ is O(μ³) from terms of size 24): kl read 2 %
    # off at μ = 1e-7, κ₂ 445-fold at 1e-9, κ₃ −1.0 relative at 1e-5 and 3.5e-12 at 0.1.
    # Reference: mpmath quadrature of the loss law under P (atoms −μ with 1/2, +μ with
    # e^{−μ}/2; 2x − μ with density e^{−x}/2 on (0, μ)).
    with mp.workdps(40 + 3 * max(0, int(-math.log10(t)))):
        m = mp.mpf(t)
        kl_t = m + mp.expm1(-m)

        def expect(g: object) -> object:
            pts = sorted({mp.mpf(0), (m - kl_t) / 2, m / 2, m})
            cont = mp.quad(lambda x: g(2 * x - m) * mp.exp(-x) / 2, pts)
            return g(-m) / 2 + mp.exp(-m) / 2 * g(m) + cont

        refs = {"kl": expect(lambda x: -x), "k2": expect(lambda x: x * x),
                "k3": expect(lambda x: abs(x) ** 3), "k3bar": expect(lambda x: abs(x + kl_t) ** 3)}
    f = fdp.Laplace(t)
    got = {"kl": fdp.clt.kl(f), "k2": fdp.clt.kappa2(f), "k3": fdp.clt.kappa3(f),
           "k3bar": fdp.clt.kappa3_bar(f)}
    for g, ref in refs.items():
        assert got[g] == pytest.approx(float(ref), rel=1e-13, abs=0.0), (g, got[g], float(ref))


def test_edgeworth_keeps_tails_below_the_resolution_of_one() -> None:
    # α = 1 − F_P(h) in floats kept nothing below 1e-16: the approximation of Laplace(0.1)^1000
    # had a spurious atom of 9.7e-8 at α = 0 (ε(1e-12) = ∞, for the exact 26.02), and that of
    # Laplace(0.5)^100 one of 2.6e-5. α is now the Edgeworth survival function Φ̄ + φ c.
    # Reference: that function in mpmath at the curve's own thresholds, from the cumulants.
    for mu, n in ((0.1, 1000), (0.5, 100)):
        e = clt.edgeworth(fdp.Laplace(mu), n=n)
        assert e.q_inf == 0.0
        eps = [e.epsilon(d) for d in (1e-6, 1e-12, 1e-20)]
        assert all(math.isfinite(x) for x in eps) and eps[0] < eps[1] < eps[2]
        a, _ = e.breakpoints
        cp = n * clt.loss_cumulants(fdp.Laplace(mu))[0]
        # the smallest positive α is that of the top threshold, 12σ above the larger mean
        cq = n * clt.loss_cumulants(fdp.Laplace(mu))[1]
        top = max(cp[0] + 12 * math.sqrt(cp[1]), cq[0] + 12 * math.sqrt(cq[1]))
        with mp.workdps(40):
            s = mp.sqrt(cp[1])
            x = (mp.mpf(top) - cp[0]) / s
            he2, he3, he5 = x * x - 1, x**3 - 3 * x, x**5 - 10 * x**3 + 15 * x
            c = (cp[2] / (6 * s**3) * he2 + cp[3] / (24 * s**4) * he3
                 + cp[2] ** 2 / (72 * s**6) * he5)
            ref = mp.ncdf(-x) + mp.npdf(x) * c
        tiny = float(a[a > 0].min())
        assert tiny == pytest.approx(float(ref), rel=1e-9), (tiny, float(ref))


def test_edgeworth_warns_where_the_expansion_is_no_distribution() -> None:
    # Laplace(10)^100: the expansion's CDFs leave [0, 1]; its curve is the revealing one
    with pytest.warns(UserWarning, match="not a distribution"):
        e = clt.edgeworth(fdp.Laplace(10.0), n=100)
    assert e.q_inf > 0


@pytest.mark.parametrize(
    "sigma,p,steps,sampling",
    [(1.1, 256 / 60000, 14063, "poisson"), (0.1, 1e-4, 1000, "poisson"),
     (2.0, 0.01, 1000, "uniform"), (0.7, 0.3, 7, "poisson")],
)
def test_dpsgd_gdp_mu_is_the_closed_form_without_the_deep_grid(
    sigma: float, p: float, steps: int, sampling: str
) -> None:
    # DP-SGD's strict μ* is √T Δ/σ (gdp_mu's F4; Δ = 1 add-remove, 2 replace-one): returned
    # from the items at once. Before, the lower curve's μ cost the deep grid (7.5 s for
    # σ = 0.1, p = 1e-4, T = 1000, and an AccuracyWarning) for the same value.
    h = fdp.dpsgd(sigma, p, steps, sampling=sampling)
    delta_ = 1.0 if sampling == "poisson" else 2.0
    exact = math.sqrt(steps) * delta_ / sigma
    mu = clt.gdp_mu(h)
    assert exact <= mu <= exact * (1 + 1e-14)
    assert h.info.get("grid_mode") != "deep"  # (the deep grid was not built)
    # no μ below it: the all-sampled event's tail, Π p^T δ_B(ε + T log(1/p)) ≤ δ_T(ε), beats
    # δ_μ(ε) for μ = 0.99 μ* far out (log space, the closed forms of fdp.gdp)
    c = steps * math.log(1 / p)
    e = np.geomspace(1.0, 1e4 * (c + exact * exact), 4000)
    lhs = -c + np.asarray(fdp.gdp.log_delta(exact, e + c))
    assert np.any(lhs > np.asarray(fdp.gdp.log_delta(0.99 * exact, e)))


def test_gaussian_tailed_needs_gaussian_items() -> None:
    # a composition with a Laplace item can have μ* below B (the CLT): the lower curve decides
    for items in ([(fdp.Laplace(0.3), 50)], [(fdp.Gaussian(1.0), 2), (fdp.Laplace(0.3), 1)],
                  [(Mixture(fdp.Laplace(1.0), 0.1), 10)]):
        assert not clt._gaussian_tailed(fdp.compose(*[c for c, n in items for _ in range(n)]))

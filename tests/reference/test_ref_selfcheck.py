"""Self-checks of the references (no fdp involved): two independent computations of the same
quantity must agree to far below the suite's tolerances."""

from __future__ import annotations

import math

from ._check import ALPHAS
from ._ref import (
    INF,
    PL,
    GaussRef,
    LaplaceConvRef,
    LaplaceRef,
    M,
    MixtureRef,
    delta_from_betac,
    dist,
    eps_delta_dist,
    hull,
    mp,
    power,
    product,
    rr_dist,
    solve_decreasing,
    subsample,
    subsampled_gauss,
    subsampled_laplace,
    symmetrize,
)

TINY = mp.mpf(10) ** -40


def kov_formula(eps: float, delta: float, k: int, et: object) -> object:
    """theory §4 / KOV Thm 3.3: δ_k(ε̃) = 1 − (1−δ)^k [1 − (1+e^ε)^{−k} Σ_l C(k,l)
    (e^{(k−l)ε} − e^{ε̃ + lε})₊]."""
    e, d, et = M(eps), M(delta), M(et)
    s = mp.fsum(mp.binomial(k, l) * max(mp.exp((k - l) * e) - mp.exp(et + l * e), 0)
                for l in range(k + 1))
    return 1 - (1 - d) ** k * (1 - (1 + mp.exp(e)) ** (-k) * s)


def test_kov_formula_matches_binomial_product() -> None:
    for eps, delta, k in [(0.5, 0.0, 10), (0.1, 1e-6, 37), (1.3, 0.01, 8), (0.01, 1e-7, 200)]:
        D = 1 - (1 - M(delta)) ** k
        pl = PL.from_dist(product(power(rr_dist(eps), k),
                                  [(INF, M(0), D), (M(0), 1 - D, 1 - D), (-INF, D, M(0))]))
        for et in [0.0, 0.3, 1.0, 2.5, k * eps * 0.9]:
            assert abs(pl.delta(et) - kov_formula(eps, delta, k, et)) < TINY
        # and the product of k four-outcome pairs, for small k
        if k <= 10:
            pl2 = PL.from_dist(power(eps_delta_dist(eps, delta), k))
            for et in [0.0, 0.7, 2.0]:
                assert abs(pl.delta(et) - pl2.delta(et)) < TINY


def test_pl_epsilon_inverts_delta() -> None:
    f = PL.from_dist(product(power(dist([0.2, 0.5, 0.3], [0.6, 0.3, 0.1]), 7),
                             dist([0.0, 0.9, 0.1], [0.01, 0.9, 0.09])))
    for d in [0.5, 0.1, 1e-3, 1e-8, 0.0101, 0.010000001]:
        e = f.epsilon(d)
        if e != INF:
            assert abs(f.delta(e) - d) < TINY or (e == 0 and f.delta(0) <= d)
            assert f.delta(e * (1 - mp.mpf(10) ** -20)) > d or e == 0


def test_pl_delta_is_sup_over_alpha() -> None:
    """δ(ε) from breakpoints equals the numerical sup of 1 − e^ε α − f(α) (other code path)."""
    f = PL.from_dist(power(dist([0.25, 0.75], [0.6, 0.4]), 12))
    for e in [-0.5, 0.0, 0.4, 2.0, 5.0]:
        num = delta_from_betac(lambda a: f.beta2(a)[1], e)
        assert abs(num - f.delta(e)) < mp.mpf(10) ** -28


def test_gaussian_reference() -> None:
    g = GaussRef(1.0)
    assert abs(g.epsilon(1e-5) - M("4.3771")) < 1e-4  # fdp's documented value, DRS Cor 2.13
    for a in ALPHAS[1:-1:3]:
        # G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) and the complement agree
        assert abs(g.beta(a) + g.betac(a) - 1) < mp.mpf(10) ** -55
    # δ(ε) is the sup of 1 − e^ε α − G(α)
    for e in [0.0, 1.0, 4.0]:
        assert abs(delta_from_betac(g.betac, e) - g.delta(e)) < mp.mpf(10) ** -30


def test_laplace_reference() -> None:
    lap = LaplaceRef(1.3)
    for e in [0.0, 0.5, 1.2]:
        assert abs(delta_from_betac(lap.betac, e) - lap.delta(e)) < mp.mpf(10) ** -30
    # closed form of L ⊗ L against quadrature of the same expectation, and against L ⊗ (L as a
    # "generic" reference) — two code paths
    class Generic:
        def __init__(self, r):  # noqa: ANN001
            self.r = r

        def delta(self, e):  # noqa: ANN001, ANN201
            return self.r.delta(e)

        def kinks(self):  # noqa: ANN201
            return self.r.kinks()

    a, b = LaplaceConvRef(1.0, LaplaceRef(0.5)), LaplaceConvRef(1.0, Generic(LaplaceRef(0.5)))
    for e in [-2.0, -0.3, 0.0, 0.7, 1.3, 1.49]:
        assert abs(a.delta(e) - b.delta(e)) < mp.mpf(10) ** -40
    # L_a ⊗ L_b is symmetric in a, b
    c = LaplaceConvRef(0.5, LaplaceRef(1.0))
    for e in [0.0, 0.7, 1.3]:
        assert abs(a.delta(e) - c.delta(e)) < mp.mpf(10) ** -40


def test_subsampled_references() -> None:
    """C_p(G_μ)'s closed form vs the hull construction on a fine PL discretization (both sides
    of the discretization bracket it), and its δ formula vs the numerical sup."""
    for mu, p in [(1.0, 0.1), (2.0, 0.5)]:
        c = subsampled_gauss(mu, p)
        for e in [0.0, 0.5, 2.0]:
            assert abs(delta_from_betac(lambda a, c=c: 1 - c.beta(a), e) - c.delta(e)) < mp.mpf(10) ** -25
    c = subsampled_laplace(1.0, 0.3)
    for e in [0.0, 0.3, 0.8]:
        assert abs(delta_from_betac(lambda a, c=c: 1 - c.beta(a), e) - c.delta(e)) < mp.mpf(10) ** -25
    m = MixtureRef(GaussRef(1.0), 0.2)
    for e in [-0.1, 0.0, 0.5, 2.0]:
        assert abs(delta_from_betac(lambda a: 1 - m.beta(a), e) - m.delta(e)) < mp.mpf(10) ** -25


def test_hull_operations() -> None:
    f = PL.from_dist(dist([0.5, 0.3, 0.2], [0.1, 0.3, 0.6]))
    s = symmetrize(f)
    for a in [0.0, 0.05, 0.1, 0.3, 0.6, 0.9, 1.0]:
        assert s.beta(a) <= min(f.beta(a), f.inverse().beta(a)) + TINY
        assert abs(s.beta(a) - s.inverse().beta(a)) < TINY
    c = subsample(f, 0.3)
    fp = f.mixture(0.3)
    for a in [0.0, 0.05, 0.1, 0.3, 0.6, 0.9, 1.0]:
        assert c.beta(a) <= min(fp.beta(a), fp.inverse().beta(a)) + TINY
        assert abs(fp.beta(a) - (M(0.3) * f.beta(a) + (1 - M(0.3)) * (1 - M(a)))) < TINY
    assert len(hull(f).A) == len(f.A)


def test_group_reference_direct() -> None:
    f = PL.from_dist(dist([0.1, 0.2, 0.7], [0.3, 0.6, 0.1]))
    for k in (2, 3):
        g = f.group(k)
        for a in [0.0, 0.01, 0.1, 0.3, 0.5, 0.77, 0.99]:
            v = M(a)
            for _ in range(k):
                v = 1 - f.beta(v)
            assert abs(g.beta(a) - (1 - v)) < TINY


def test_solver() -> None:
    x = solve_decreasing(lambda t: mp.exp(-t), mp.mpf(10) ** -100, 0, 1000)
    assert abs(x - 100 * mp.log(10)) < mp.mpf(10) ** -35
    assert math.isclose(float(GaussRef(2.0).epsilon(1e-300)), float(
        solve_decreasing(GaussRef(2.0).delta, M(1e-300), 0, 200)), rel_tol=1e-15)

"""Tests of fdp.operations: group privacy, symmetrization, subsampling (DRS Thm 2.14, Def F.1,
Thm 4.2; theory §5–7), each against an independent computation or closed form."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from exact_sums import (
    _mp_pl_eval,
    mp_breakpoints,
    mp_delta,
    mp_eps,
    mp_group_points,
    mp_hull_pair,
    mp_joint,
    mp_pair,
    mp_points_delta,
    mp_poisson_symmetric_of,
    mp_poisson_symmetric_pair,
    mp_subsampled_pair,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, stats

import fdp
from fdp.operations import (
    Mixture,
    Subsampled,
    group,
    max_curve,
    min_envelope,
    poisson_subsample,
    subsample,
    symmetrize,
)

GRID = np.unique(np.concatenate([np.linspace(0, 1, 801), np.logspace(-10, -1, 40)]))


def check_axioms(f: fdp.TradeOff, tol: float = 1e-9) -> None:
    y = np.asarray(f(GRID))
    assert np.all(np.isfinite(y)) and np.all(y >= -tol) and np.all(y <= 1 - GRID + tol)
    assert np.all(np.diff(y) <= tol)
    a = np.linspace(0, 1, 1001)
    z = np.asarray(f(a))
    assert np.all(z[:-2] + z[2:] - 2 * z[1:-1] >= -1e-9)


def group_direct(f: fdp.TradeOff, k: int, a: np.ndarray) -> np.ndarray:
    """1 − (1 − f)^{∘k}(α) evaluated pointwise by iterating the map (DRS Thm 2.14)."""
    x = np.asarray(a, dtype=float)
    for _ in range(k):
        x = 1.0 - np.asarray(f(np.clip(x, 0, 1)))  # (1 − f) applied k times
    return 1.0 - x


# ------------------------------------------------------------------------------- group
@pytest.mark.parametrize("mu,k", [(0.5, 2), (1.0, 3), (0.2, 10)])
def test_gaussian_group_closed_form_and_general_operator(mu: float, k: int) -> None:
    g = fdp.Gaussian(mu).group(k)
    assert isinstance(g, fdp.Gaussian) and g.mu == pytest.approx(k * mu)
    # DRS Cor 2.15 through the general operator evaluated pointwise
    np.testing.assert_allclose(group_direct(fdp.Gaussian(mu), k, GRID), g(GRID), atol=1e-12)
    # the general operator on a bracket of G_μ brackets G_{kμ}
    h = group(fdp.Bracketed(*_gauss_bracket(mu)), k)
    assert np.all(h.lower(GRID) <= g(GRID) + 1e-9) and np.all(h.upper(GRID) >= g(GRID) - 1e-9)


def _gauss_bracket(mu: float) -> tuple[fdp.PiecewiseLinear, fdp.PiecewiseLinear]:
    from fdp.operations import _pl_bracket

    return _pl_bracket(fdp.Gaussian(mu))


@pytest.mark.parametrize("eps,delta,k", [(1.0, 0.0, 2), (0.5, 1e-3, 3), (0.2, 1e-4, 5)])
def test_epsdelta_group_exact_and_beats_classical(eps: float, delta: float, k: int) -> None:
    f = fdp.EpsDelta(eps, delta)
    g = f.group(k)
    assert isinstance(g, fdp.PiecewiseLinear) and g.kind == "exact"
    np.testing.assert_allclose(g(GRID), group_direct(f, k, GRID), atol=1e-12)
    classical = fdp.EpsDelta(k * eps, min(1.0, delta * sum(math.exp(i * eps) for i in range(k))))
    assert g.dominates(classical)
    check_axioms(g)


def test_group_of_randomized_response_approaches_laplace() -> None:
    # DRS: 1 − (1 − f_{μ/k,0})^{∘k} → L_μ as k → ∞
    mu = 1.0
    dist = []
    for k in (2, 8, 32, 128):
        g = fdp.EpsDelta(mu / k, 0.0).group(k)
        dist.append(float(np.max(np.abs(g(GRID) - fdp.Laplace(mu)(GRID)))))
    assert all(b < a for a, b in zip(dist, dist[1:], strict=False))
    assert dist[-1] < 5e-3


# ------------------------------------------------------------------------------- symmetrize
def asym_curve() -> fdp.PiecewiseLinear:
    # an asymmetric pair: T(P, Q) of two 3-point distributions
    return fdp.from_distributions([0.6, 0.3, 0.1], [0.1, 0.2, 0.7])


def test_symmetrize_properties() -> None:
    f = asym_curve()
    assert not f.is_symmetric
    s = symmetrize(f)
    assert s.is_symmetric
    check_axioms(s)
    lower = np.minimum(f(GRID), f.inverse()(GRID))
    assert np.all(s(GRID) <= np.maximum(f(GRID), f.inverse()(GRID)) + 1e-12)
    assert np.all(s(GRID) >= np.asarray(min_envelope(f, f.inverse())(GRID)) - 1e-12)
    assert np.all(np.asarray(min_envelope(f, f.inverse())(GRID)) <= lower + 1e-12)
    for c in (fdp.Gaussian(1.0), fdp.EpsDelta(1.0, 0.1), fdp.Laplace(0.5)):
        assert symmetrize(c) is c


def test_min_envelope_is_the_convex_envelope() -> None:
    f = asym_curve()
    g = f.inverse()
    env = min_envelope(f, g)
    # independent: lower convex hull of the minimum sampled on a fine grid
    x = np.linspace(0, 1, 20001)
    y = np.minimum(f(x), g(x))
    ref = fdp.PiecewiseLinear.from_points(x, y)
    np.testing.assert_allclose(env(GRID), ref(GRID), atol=1e-6)
    assert np.all(env(GRID) <= np.minimum(f(GRID), g(GRID)) + 1e-12)
    mx = max_curve(f, g)
    np.testing.assert_allclose(mx(GRID), np.maximum(f(GRID), g(GRID)), atol=1e-12)


# ------------------------------------------------------------------------------- subsample
def explicit_cp_gaussian(mu: float, p: float, a: np.ndarray) -> np.ndarray:
    """DRS Thm 4.2 / theory §7: f_p on [0, x*], a line, f_p⁻¹ beyond; x* = Φ(−μ/2)."""
    g = fdp.Gaussian(mu)

    def fp(x: float) -> float:
        return p * float(g(x)) + (1 - p) * (1 - x)

    xs = stats.norm.cdf(-mu / 2)
    ys = fp(xs)
    out = []
    for x in a:
        if x <= xs:
            out.append(fp(x))
        elif x <= ys:
            out.append(xs + ys - x)
        else:
            out.append(optimize.brentq(lambda t, x=x: fp(t) - x, 0.0, 1.0, xtol=1e-15))
    return np.array(out)


@pytest.mark.parametrize("mu,p", [(1.0, 0.1), (2.0, 0.5), (0.5, 0.01)])
def test_gaussian_subsample_explicit_form(mu: float, p: float) -> None:
    c = fdp.Gaussian(mu).subsample(p)
    assert isinstance(c, Subsampled)
    a = np.linspace(0, 1, 201)
    np.testing.assert_allclose(c(a), explicit_cp_gaussian(mu, p, a), atol=1e-12)
    check_axioms(c)
    assert c.is_symmetric


@given(eps=st.floats(0.05, 5.0), p=st.floats(0.01, 1.0))
@settings(max_examples=25, deadline=None)
def test_epsdelta_subsample_beats_amplification(eps: float, p: float) -> None:
    c = fdp.EpsDelta(eps, 0.0).subsample(p)
    amp = fdp.EpsDelta(math.log1p(p * math.expm1(eps)), 0.0)
    assert c.dominates(amp, tol=1e-12)
    check_axioms(c)


def test_subsample_epsilon_is_amplified_profile() -> None:
    c = fdp.Gaussian(1.0).subsample(0.1)
    for d in (1e-3, 1e-6):
        inner = fdp.Gaussian(1.0).epsilon(d / 0.1)
        assert c.epsilon(d) == pytest.approx(math.log1p(0.1 * math.expm1(inner)), rel=1e-12)
    # δ from the curve itself (sup over α) agrees with the closed form
    for e in (0.1, 0.5, 1.0):
        assert fdp.TradeOff._delta(c, np.array([e]))[0] == pytest.approx(c.delta(e), abs=1e-9)


def test_mixture_loss_bins_match_integration() -> None:
    mu, p = 1.0, 0.05
    m = Mixture(fdp.Gaussian(mu), p)
    edges = np.array([-0.04, -0.01, 0.0, 0.05, 0.5, 2.0])
    lb = m._loss_bins(edges)

    def loss(x: float) -> float:
        return math.log(1 - p + p * math.exp(mu * x - mu * mu / 2))

    def mass(density, lo: float, hi: float) -> float:  # noqa: ANN001
        f = lambda x: density(x) if lo < loss(x) <= hi else 0.0  # noqa: E731
        return integrate.quad(f, -12, 14, points=[0.0], limit=400, epsabs=1e-13)[0]

    for j in range(edges.size - 1):
        pj = mass(stats.norm.pdf, edges[j], edges[j + 1])
        qj = mass(
            lambda x: (1 - p) * stats.norm.pdf(x) + p * stats.norm.pdf(x - mu),
            edges[j],
            edges[j + 1],
        )
        assert lb.p[j] == pytest.approx(pj, abs=1e-8)
        assert lb.q[j] == pytest.approx(qj, abs=1e-8)


def test_poisson_pairs() -> None:
    pp = poisson_subsample(fdp.Gaussian(1.0), 0.2)
    a = np.linspace(0, 1, 101)
    np.testing.assert_allclose(pp.add(a), 0.2 * fdp.Gaussian(1.0)(a) + 0.8 * (1 - a), atol=1e-14)
    # for a symmetric f the remove pair is the inverse of the add pair
    np.testing.assert_allclose(pp.remove(a), pp.add.inverse()(a), atol=1e-12)
    check_axioms(pp.symmetric)
    q = poisson_subsample(asym_curve(), 0.3)
    check_axioms(q.symmetric)
    assert q.symmetric.is_symmetric


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="k"):
        fdp.Gaussian(1.0).group(0)
    with pytest.raises(ValueError, match="p"):
        fdp.Gaussian(1.0).subsample(1.5)
    with pytest.raises(TypeError, match="f must be"):
        subsample(1.0, 0.5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "edges", [np.linspace(-3, 3, 601), np.linspace(0.05, 3, 300), np.linspace(-0.5, 0.5, 11)]
)
def test_subsampled_loss_bins_conserve_mass(edges: np.ndarray) -> None:
    c = Subsampled(fdp.Gaussian(1.5), 0.3)
    lb = c._loss_bins(edges)
    assert lb.p.sum() + lb.p_below + lb.p_above == pytest.approx(1.0, abs=1e-12)
    assert lb.q.sum() + lb.q_below + lb.q_above + lb.q_inf == pytest.approx(1.0, abs=1e-12)
    # symmetric curve: Q-mass at loss l equals P-mass at −l (DRS; theory §1)
    if edges[0] == -edges[-1] and edges.size > 100:
        inner = slice(1, -1)  # bins (e_j, e_j+1] mirror [−e_j+1, −e_j): compare away from 0
        np.testing.assert_allclose(
            lb.q[inner][:250], lb.p[::-1][inner][:250], rtol=1e-9, atol=1e-15
        )


def test_subsampled_loss_bins_on_grids_of_one_sign() -> None:
    """A grid of negative losses only (one chunk of a long grid: ``compose(subsample(G_2,
    1e-5), repeat=10**5)`` raised "must reach positive losses") conserves the mass and mirrors
    the positive grid with P and Q swapped (the curve is symmetric)."""
    from fdp.pld import _loss_bins_chunked

    c = Subsampled(fdp.Gaussian(1.5), 0.3)
    pos = np.linspace(0.1, 2.0, 20)
    neg = c._loss_bins(-pos[::-1])
    assert neg.p.sum() + neg.p_below + neg.p_above == pytest.approx(1.0, abs=1e-12)
    assert neg.q.sum() + neg.q_below + neg.q_above + neg.q_inf == pytest.approx(1.0, abs=1e-12)
    b = c._loss_bins(pos)
    np.testing.assert_allclose(neg.p, b.q[::-1], rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(neg.q, b.p[::-1], rtol=1e-12, atol=1e-300)
    assert neg.p_above == pytest.approx(b.q_below, rel=1e-12)
    assert neg.q_above == pytest.approx(b.p_below, rel=1e-12)
    # a grid chunked into pieces of either sign gives the bins of the whole
    e = np.linspace(-1.0, 2.0, 101)
    whole, chunked = c._loss_bins(e), _loss_bins_chunked(c, e, chunk=7)
    np.testing.assert_array_equal(whole.p, chunked.p)
    np.testing.assert_array_equal(whole.q, chunked.q)
    assert (whole.p_below, whole.q_above) == (chunked.p_below, chunked.q_above)


@given(
    p=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=5),
    q=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=5),
    r=st.floats(0.01, 1.0),
    k=st.integers(1, 3),
)
@settings(max_examples=60, deadline=None)
def test_operations_on_random_discrete_curves(p: list, q: list, r: float, k: int) -> None:  # type: ignore[type-arg]
    n = min(len(p), len(q))
    pa, qa = np.array(p[:n]), np.array(q[:n])
    if pa.sum() < 1e-3 or qa.sum() < 1e-3:
        return
    f = fdp.from_distributions(pa / pa.sum(), qa / qa.sum())
    for c in (
        f.inverse(),
        symmetrize(f),
        subsample(f, r),
        poisson_subsample(f, r).symmetric,
        f.group(k),
    ):
        check_axioms(c)  # RuntimeWarnings are errors in this suite: none may occur either
        c.epsilon(np.array([0.0, 1e-3, 0.5]))
        c.delta(np.array([-1.0, 0.0, 0.5, 5.0]))


def test_subsampled_loss_bins_keep_all_mass_on_offset_grids() -> None:
    # regression: a bin straddling loss 0 lost its negative part when 0 was not a grid edge
    from fdp.operations import Subsampled

    f = Subsampled(fdp.Gaussian(1.0), 0.1)
    for off in (0.0, 0.0047, -0.003):
        e = off + np.arange(-472, 531) * 0.0126525
        b = f._loss_bins(e)
        assert b.p.sum() + b.p_below + b.p_above == pytest.approx(1.0, abs=1e-12)
        assert b.q.sum() + b.q_below + b.q_above + b.q_inf == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize(("mu", "p"), [(2.0, 1e-5), (20.0, 1e-5), (0.05, 1e-5), (1 / 1.1, 0.3),
                                       (5.0, 1.0)])
def test_mixture_loss_moments_against_mpmath(mu: float, p: float) -> None:
    # the planner's mean and variance of the add pair's loss (Gauss–Hermite) against mpmath
    # quadrature split at the loss's bend; the engine's 4001 bins were off by up to 3e-4
    import mpmath as mp

    with mp.workdps(30):
        m_, p_ = mp.mpf(mu), mp.mpf(p)

        def loss(x: object) -> object:
            return mp.log(1 - p_ + p_ * mp.exp(m_ * x - m_**2 / 2))

        def q(x: object) -> object:
            return (1 - p_) * mp.npdf(x) + p_ * mp.npdf(x, m_)

        pts = sorted({-mp.inf, mp.mpf(-10), mp.mpf(0), m_ / 2, m_, 2 * m_, 3 * m_ + 10, mp.inf}
                     | ({m_ / 2 + mp.log(1 / p_) / m_} if p < 1 else set()))
        mean = mp.quad(lambda x: q(x) * loss(x), pts)
        var = mp.quad(lambda x: q(x) * (loss(x) - mean) ** 2, pts)
    got = Mixture(fdp.Gaussian(mu), p)._loss_moments()
    assert got is not None
    assert got[0] == pytest.approx(float(mean), rel=1e-8)
    assert got[1] == pytest.approx(float(var), rel=1e-8)
    assert fdp.Gaussian(mu)._loss_moments() == (mu * mu / 2, mu * mu)


@pytest.mark.parametrize("base,p", [
    (fdp.Gaussian(80.0), 0.5), (fdp.Gaussian(100.0), 1.0), (fdp.Gaussian(300.0), 0.01),
    (fdp.Gaussian(78.0), 0.999), (fdp.Laplace(1600.0), 0.5), (fdp.Laplace(3000.0), 0.2),
])
def test_subsampling_where_the_kink_underflows_stays_below_the_exact_curve(
    base: fdp.TradeOff, p: float
) -> None:
    # A hunt: x* = Φ(−μ/2) (Laplace: e^{−μ/2}/2) underflows to 0 for μ ≳ 75.3 (1490), and y* was
    # then f_p(0) = 1, not f_p(x*) = p x* + (1 − p)(1 − x*): the curve read 1 − α everywhere
    # (β(0.5) = 0.5 where the truth is ≤ 0.25). Reference: DRS Thm 4.2's closed form in mpmath,
    # C_p = f_p on [0, x*], the line x* + y* − α on [x*, y*], f_p⁻¹ ∈ [0, x*] beyond.
    import mpmath as mp

    mp.mp.dps = 50
    mu = mp.mpf(float(base.mu))  # type: ignore[attr-defined]
    if isinstance(base, fdp.Gaussian):
        xs = mp.ncdf(-mu / 2)
    else:
        xs = mp.exp(-mu / 2) / 2
    assert xs < mp.mpf(5e-324)  # (the regime: x* below the least subnormal)
    pp = mp.mpf(p)
    ys = pp * xs + (1 - pp) * (1 - xs)
    c = fdp.subsample(base, p)
    alpha = np.array([1e-300, 1e-20, 1e-3, 0.1, 0.3, 0.5, float(ys) - 1e-9, float(ys),
                      float(ys) + 1e-9, 0.7, 0.99, 1 - 1e-12])
    alpha = np.unique(alpha[(alpha > 0) & (alpha < 1)])
    lo, up = c(alpha), c._eval_up(alpha)
    for a, b_lo, b_up in zip(alpha, lo, up, strict=True):
        am = mp.mpf(float(a))
        if am <= ys:
            exact = xs + ys - am
            assert mp.mpf(float(b_lo)) <= exact <= mp.mpf(float(b_up))
            assert float(b_lo) >= float(exact) - 1e-12  # and tight
        else:  # f_p⁻¹(α) ∈ [0, x*], x* below the least subnormal
            assert mp.mpf(float(b_lo)) <= xs and float(b_up) >= float(xs)
    assert np.all(np.diff(lo) <= 0) and np.all(lo <= 1 - alpha)
    # its numeric composition reads the atom at 0 as 1 − p, not 1 (y* − x*)
    lo2, hi2 = fdp.compose(c, repeat=2, numeric=True).epsilon_bracket(0.5)
    exact_eps = float(c.epsilon(0.5))  # (G/L closed form, amplified: independent of the grid)
    assert lo2 <= hi2 and hi2 >= exact_eps * (1 - 1e-9)


def test_losses_read_from_breakpoints_carry_the_rounding_of_their_logs() -> None:
    # A hunt: a curve's losses log q − log p from its breakpoints were not charged the logs' own
    # rounding, u·|log p| ≈ 7e-15 at ℓ = 60, so δ one ulp below the top loss read 0 (and ε an
    # ulp low). References in mpmath, independent of fdp.
    import mpmath as mp

    mp.mp.dps = 60
    # group(f_{3,0}, 20): the top segment has slope −e^{60} up to α₁ = e^{−57}/(1 + e³) (the
    # last iterate of h(α) = e³α reaches f_{3,0}'s kink 1/(1 + e³)), so for ε < 60,
    # δ(ε) = α₁ (e^{60} − e^ε) and ε(δ) = log(e^{60} − δ/α₁)
    g = fdp.group(fdp.EpsDelta(3.0, 0.0), 20)
    a1 = mp.exp(-57) / (1 + mp.exp(3))
    for e in (float(np.nextafter(60.0, 0.0)), 60.0 - 1e-13, 59.9):
        assert mp.mpf(float(g.delta(e))) >= a1 * (mp.exp(60) - mp.exp(mp.mpf(e)))
    for d in (1e-15, 1e-20, 1e-300):
        assert mp.mpf(float(g.epsilon(d))) >= mp.log(mp.exp(60) - mp.mpf(d) / a1)
    # symmetrize(f) has δ ≥ δ_f(ε) = Σ (q_i − e^ε p_i)₊ (its conjugate is the larger of f's and
    # f⁻¹'s); at one ulp below the largest loss log(q₂/p₂) ≈ 523.665
    rng = np.random.default_rng(7)
    pairs = [([1.0, 1.4635481485030257e-228], [0.6106388878469755, 0.38936111215302455])]
    for _ in range(20):
        tiny = 10.0 ** rng.uniform(-300, -30)
        q2 = rng.uniform(0.05, 0.95)
        pairs.append(([1.0 - tiny, tiny], [1.0 - q2, q2]))
    for p, q in pairs:
        s = fdp.symmetrize(fdp.from_distributions(p, q))
        top = mp.log(mp.mpf(q[1]) / mp.mpf(p[1]))
        e = float(np.nextafter(float(top), 0.0))
        while mp.mpf(e) >= top:  # (strictly below the exact largest loss)
            e = float(np.nextafter(e, 0.0))
        exact = sum(max(mp.mpf(qi) - mp.exp(mp.mpf(e)) * mp.mpf(pi), 0)
                    for pi, qi in zip(p, q, strict=True))
        assert mp.mpf(float(s.delta(e))) >= exact, (p, q)


@pytest.mark.parametrize("mu", [100.0, 300.0, 1000.0])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_subsampled_upper_values_stay_above_the_line_just_below_y_star(mu: float, p: float) -> None:
    # A hunt: _eval_up (and to_piecewise, documented on or above f) chose its branch by the
    # rounded y* and read f_p⁻¹ (≈ x*) just below the true y*, where the curve is the line
    # x* + y* − α: 3.6e-66 for 5.55e-17 (μ = 300, p = 1/2), to_piecewise 0.56 % low.
    # Reference: DRS Thm 4.2 for L_μ in mpmath (x* = e^{−μ/2}/2, f(x*) = x*).
    import mpmath as mp

    mp.mp.dps = 300  # (x* = e^{−500}/2 beside y* ≈ 1/2 at μ = 1000)
    c = fdp.subsample(fdp.Laplace(mu), p)
    xs = mp.exp(-mp.mpf(mu) / 2) / 2
    ys = mp.mpf(p) * xs + (1 - mp.mpf(p)) * (1 - xs)
    a = float(ys)
    alpha = [a]
    for _ in range(6):
        a = float(np.nextafter(a, 0.0))
        alpha.append(a)
    alpha += [float(ys) - 1e-14, float(ys) - 1e-12]
    alpha = [x for x in alpha if mp.mpf(x) <= ys]
    up = c._eval_up(np.array(alpha))
    pl = c.to_piecewise()(np.array(alpha))
    for x, u, v in zip(alpha, up, pl, strict=True):
        truth = xs + ys - mp.mpf(x)
        assert mp.mpf(float(u)) >= truth and mp.mpf(float(v)) >= truth, (x, u, v, truth)
        assert mp.mpf(float(c(x))) <= truth


@pytest.mark.parametrize("b", [1.0, 30.0, 100.0])
@pytest.mark.parametrize("p", [1e-3, 0.3, 0.9])
def test_mixture_epsilon_where_delta_over_p_is_exact_against_mpmath(b: float, p: float) -> None:
    # Mixture's ε read f's ε at δ/p·(1 − 2u): at δ = p exactly (δ/p = 1) that is f's steep part,
    # and subsample(Laplace(100), 0.001).epsilon(0.001) read 21 for the true 0. δ/p is now
    # rounded down exactly (fdp._numerics.div_down_array). Reference (mpmath, 40 digits): f_p's
    # ε(δ) = log(1 + p(e^{ε_L(δ/p)} − 1)) (theory §7), with the Laplace pair's ε_L(q) =
    # b + 2 log(1 − q) for q ≤ 1 − e^{−b/2} and 0 above (δ_L(ε) = 1 − e^{(ε − b)/2} on [0, b]).
    import mpmath as mp

    mp.mp.dps = 40

    def truth(delta: float, shift: int = 0) -> mp.mpf:
        q = mp.mpf(delta) / p * (1 - shift * mp.mpf(2) ** -52)  # (shift: q some ulps lower)
        if q >= 1 - mp.exp(-b / 2):
            return mp.mpf(0)
        return mp.log(1 + p * mp.expm1(b + 2 * mp.log(1 - q)))

    m = fdp.subsample(fdp.Laplace(b), p)  # (its ε is its add pair's, the Mixture's, or larger)
    mix = Mixture(fdp.Laplace(b), p)
    for delta in [p, p * (1 - 1e-15), p * (1 - 1e-9), p * 0.5, p * 1e-6, 0.999 * p]:
        t = truth(delta)
        for curve in (mix, m):
            e = float(curve.epsilon(delta))
            assert e >= t, (curve, delta, e, t)
            # (near q = 1 ε is steep in q: within the ε of q four ulps lower, which rounding
            # δ/p to a float may take)
            assert e <= truth(delta, 4) * (1 + 1e-9) + 1e-12, (curve, delta, e, t)
    assert float(m.epsilon(p)) == 0.0 and float(mix.epsilon(p)) == 0.0


@pytest.mark.parametrize("kind", ["gauss", "laplace"])
@pytest.mark.parametrize("p", [1e-4, 0.05, 0.7])
def test_subsampled_and_mixture_brackets_hold_the_exact_value(kind: str, p: float) -> None:
    # The brackets of Mixture and Subsampled returned their conservative value at both ends,
    # so the lower end was above the truth by its rounding (and far above it where δ/p = 1:
    # subsample(Laplace(100), 0.001) read (21, 21) for the true 0). The lower ends now come from
    # the optimistic twin (_as_upper). Reference (mpmath, 40 digits): δ(ε) = p δ_f(ε') with
    # ε' = log(1 + (e^ε − 1)/p) (theory §7; DRS Thm 4.2 for C_p), δ_G(ε) = Φ(−ε/μ + μ/2) −
    # e^ε Φ(−ε/μ − μ/2) and δ_L(ε) = 1 − e^{(ε − b)/2} on [0, b]; ε(δ) at the float δ by
    # Newton's method on that δ(ε).
    import mpmath as mp

    mp.mp.dps = 40
    for b in ([0.5, 2.0, 10.0] if kind == "gauss" else [0.5, 3.0, 40.0]):
        base = fdp.Gaussian(b) if kind == "gauss" else fdp.Laplace(b)
        bm = mp.mpf(b)

        def d_base(e: mp.mpf, bm: mp.mpf = bm) -> mp.mpf:
            if kind == "gauss":
                return mp.ncdf(-e / bm + bm / 2) - mp.exp(e) * mp.ncdf(-e / bm - bm / 2)
            return 1 - mp.exp((e - bm) / 2) if e < bm else mp.mpf(0)

        def d_mix(e: mp.mpf, d_base: Any = d_base) -> mp.mpf:
            return p * d_base(mp.log(1 + mp.expm1(e) / p))

        for curve in (fdp.subsample(base, p), Mixture(base, p)):
            for e0 in [0.0, 0.3, 2.0, 6.0]:
                t = d_mix(mp.mpf(e0))
                lo, hi = curve.delta_bracket(e0)
                assert lo <= t <= hi, (curve, e0, lo, hi, t)
                if not 1e-300 < t < p * 0.999:
                    continue
                d = float(t)
                e = mp.mpf(e0)
                for _ in range(6):  # Newton on δ(ε) = d (δ' by mpmath's numerical derivative)
                    e -= (d_mix(e) - d) / mp.diff(d_mix, e)
                e = max(e, 0)  # (at δ(0), the float δ may lie just above: ε = 0)
                lo, hi = curve.epsilon_bracket(d)
                assert lo <= e <= hi, (curve, d, lo, hi, e)
                assert hi - lo <= 1e-12 * hi + 1e-13


@pytest.mark.parametrize("e", [0.5, 50.0, 720.0, 744.0, 800.0, 2000.0])
@pytest.mark.parametrize("d", [0.0, 1e-9, 0.1])
def test_subsampled_eps_delta_brackets_hold_the_exact_profile(e: float, d: float) -> None:
    # The hull of f_p's and f_p⁻¹'s breakpoints read the losses from breakpoints that underflow
    # beyond ε ≈ 708: subsample(EpsDelta(744), 0.3).epsilon(1e-3) read 742.54 for the true
    # 742.79 (below it), and beyond 745 ε = ∞. C_p(f) is now built from f's masses with explicit
    # losses, and a PL curve's ε bracket takes its lower end from the optimistic twin.
    # Reference (mpmath, 50 digits): δ(x) = p δ_f(log(1 + (e^x − 1)/p)) for x ≥ 0 (DRS Thm 4.2,
    # theory §7), δ_f(y) = δ + (1 − δ)(e^ε − e^y)/(1 + e^ε) on [0, ε] and δ above; ε(δ₀) by
    # inverting it in closed form (∞ where δ₀ ≤ p δ).
    import mpmath as mp

    mp.mp.dps = 50
    E, D = mp.mpf(e), mp.mpf(d)

    def delta_true(p: float, x: float) -> mp.mpf:
        y = mp.log(1 + mp.expm1(mp.mpf(x)) / p)
        return p * (D + (1 - D) * (mp.exp(E) - mp.exp(y)) / (1 + mp.exp(E)) if y < E else D)

    def eps_true(p: float, d0: float) -> mp.mpf:
        r = mp.mpf(d0) / p
        if r <= D:
            return mp.inf
        ey = mp.exp(E) - (r - D) * (1 + mp.exp(E)) / (1 - D)
        return mp.log(1 + p * mp.expm1(mp.log(ey))) if ey > 1 else mp.mpf(0)

    for p in [1e-3, 0.3, 1.0]:
        c = fdp.subsample(fdp.EpsDelta(e, d), p)
        for x in [0.0, e / 2, e - 1.0, e - 1e-6, e + 1.0]:
            if x < 0:
                continue
            t = delta_true(p, x)
            lo, hi = c.delta_bracket(x)
            assert lo <= t <= hi, (p, x, lo, hi, t)
            # (the losses' rounding, ~4u·ℓ ≈ 2e-12 at ℓ = 2000, against 1 − e^{x − ℓ} ≈ 1e-6)
            assert hi <= t * (1 + 1e-5) + 1e-300
        for d0 in [1e-300, 1e-12, 1e-3 * p, 0.5 * p, 0.9 * p]:
            t = eps_true(p, d0)
            lo, hi = c.epsilon_bracket(d0)
            assert lo <= t <= hi, (p, d0, lo, hi, t)
            if mp.isfinite(t):
                assert hi <= t * (1 + 1e-12) + 1e-12


def test_hunt_c_wrong_side_cases_against_exact_sums() -> None:
    # A hunt against mpmath (700 digits) after the optimistic twins landed; each reference is
    # an exact closed form over the pair's finitely many outcomes.
    import mpmath as mp

    mp.mp.dps = 60
    # (1) kov(0, δ, 1) is f_{0,δ}: δ(0) = δ exactly. Identity's breakpoint loss 0 carried a
    # charge of 1.8e-15 into the twin, whose δ(0) read 6.9e-16 above δ.
    for d in [1e-300, 1e-30, 1e-6]:
        lo, hi = fdp.kov(0.0, d, 1).delta_bracket(0.0)
        assert lo <= d <= hi, (d, lo, hi)
    lo, hi = fdp.compose(fdp.EpsDelta(0.0, 1e-6), repeat=3).delta_bracket(0.0)
    t = 1 - (1 - mp.mpf(1e-6)) ** 3
    assert lo <= t <= hi
    # (2) a curve symmetric only to 1e-12 in its values (a P-mass 2⁻⁴⁰ at loss −∞) was
    # subsampled by the symmetric formula, which dropped that mass: ε(0) read 4.5e-13 for the
    # true log 2 (f_p⁻¹'s outcome (x/2, x)).
    c = fdp.subsample(fdp.from_distributions([2.0**-40, 1 - 2.0**-40], [0.0, 1.0]), 0.5)
    lo, hi = c.epsilon_bracket(0.0)
    assert lo <= mp.log(2) <= hi
    # (3) the remove pair's losses log(1 − p + p e^ℓ) at ℓ = ±1e-12 cancelled in logaddexp
    # beyond their charged bound: ε(0), the largest loss −log(1 − p + p e^{−ℓ}), read 5.7e-5
    # relative low.
    for p in [1e-6, 1e-3]:
        r = fdp.poisson_subsample(fdp.EpsDelta(1e-12, 0.0), p).remove
        lo, hi = r.epsilon_bracket(0.0)
        pm = mp.mpf(p)
        t = -mp.log(1 - pm + pm * mp.exp(-mp.mpf(1e-12)))
        assert lo <= t <= hi, (p, lo, hi, t)
        assert hi <= t * (1 + 1e-12)


@pytest.mark.parametrize("e", [3.0, 744.0, 2000.0])
def test_two_fold_subsampled_randomized_response_against_exact_sums(e: float) -> None:
    # C_p(RR_ε) (subsample, and Poisson's symmetric curve, which equals it for a symmetric f)
    # composed twice, exactly: the hull of the Poisson curves' breakpoints underflowed beyond
    # ε ≈ 708 and its product read ε(1e-3) = 1485.07 for the exact 1485.581 at ε = 744.
    # Reference (mpmath): C_p(RR_ε)'s outcome of positive loss has P = r = 1/(1 + e^ε) and
    # Q = q' = (1 − p) r + p (1 − r); twofold, where only that outcome twice has a loss above
    # ε*, δ(ε*) = q'² − e^{ε*} r², so ε(δ) = log(q'² − δ) − 2 log r (valid when it is above
    # the next loss, ℓ' = log(q'/r), which holds here).
    import mpmath as mp

    mp.mp.dps = 50
    p, d = 0.3, 1e-3
    r = 1 / (1 + mp.exp(e))
    q1 = (1 - mp.mpf(p)) * r + mp.mpf(p) * (1 - r)
    truth = mp.log(q1**2 - d) - 2 * mp.log(r)
    assert truth > mp.log(q1 / r)
    f = fdp.EpsDelta(e)
    for c in (fdp.subsample(f, p), fdp.poisson_subsample(f, p).symmetric):
        lo, hi = fdp.compose(c, repeat=2).epsilon_bracket(d)
        assert lo <= truth <= hi, (e, lo, hi, truth)
        assert hi - lo <= 1e-12 * hi


@pytest.mark.parametrize("case", ["envelope", "symmetrize", "poisson"])
def test_envelopes_of_underflowing_kinks_against_exact_hulls(case: str) -> None:
    # min{f, g}**'s masses came from the hull's breakpoints, whose kinks underflow below
    # α ≈ 1e-308: in a hunt against exact hulls, min_envelope of two curves with losses near
    # 720, composed twice, read ε(1e-3) 1441.10 for the exact 1442.47; symmetrize read
    # 1441.53 for 1457.07 (numeric product), and a Poisson symmetric curve 733.63 for 736.88
    # (one copy through the engine). Now the envelope's masses come from the parts' masses
    # and losses. The cases below are those, with masses made dyadic (sums exactly 1).
    # Reference: the exact lower convex hull of the breakpoints in mpmath (700 digits: the
    # masses reach 1e-323), and exact sums over the product's outcomes.
    import mpmath as mp

    mp.mp.dps = 700
    if case == "envelope":
        p1, q1 = [2.9576115243489263e-26, 1.0], [0.25, 0.75]
        p2, q2 = ([3.1768479945e-314, 7.129632583e-315, 1.0],
                  [0.203125, 0.125, 0.671875])
        c = min_envelope(fdp.from_distributions(p1, q1), fdp.from_distributions(p2, q2))
        ref = mp_hull_pair(mp_breakpoints(*mp_pair(p1, q1)) + mp_breakpoints(*mp_pair(p2, q2)))
        runs = [(2, False), (2, True)]
    elif case == "symmetrize":
        p1, q1 = ([5.130185e-318, 2.0051794457e-314, 1.0],
                  [0.125, 0.078125, 0.796875])
        c = fdp.symmetrize(fdp.from_distributions(p1, q1))
        bp = mp_breakpoints(*mp_pair(p1, q1))
        ref = mp_hull_pair(bp + [(b, a) for a, b in bp])
        runs = [(2, False), (2, True)]
    else:
        p1 = [0.1875, 0.0390625, 0.1875, 0.5859375]
        q1 = [2e-323, 5.83e-322, 5.063659676330008e-307, 1.0]
        f = fdp.from_distributions(p1, q1)
        for rate in (0.3, 0.01):  # (the hunt's rate; checked with both)
            ref = mp_poisson_symmetric_pair(p1, q1, rate)
            c = fdp.poisson_subsample(f, rate).symmetric
            for n, numeric in [(1, True), (2, False)]:
                g = fdp.compose(*([c] * n if n > 1 else [c, fdp.Identity()]), numeric=numeric)
                for d in [1e-3, 1e-8]:
                    truth = mp_eps([ref] * n, d)
                    lo, hi = g.epsilon_bracket(d)
                    assert lo <= truth <= hi, (rate, n, numeric, d, lo, hi, float(truth))
        return
    for n, numeric in runs:
        g = fdp.compose(*([c] * n), numeric=numeric)
        for d in [1e-3, 1e-8]:
            truth = mp_eps([ref] * n, d)
            lo, hi = g.epsilon_bracket(d)
            assert lo <= truth <= hi, (n, numeric, d, lo, hi, float(truth))


@pytest.mark.parametrize("e", [5.0, 744.0, 800.0])
def test_symmetrized_poisson_add_pair_against_exact_sums(e: float) -> None:
    # symmetrize(f_p) = min{f_p, f_p⁻¹}** = C_p(f) (DRS Thm 4.2). Through the generic path (a
    # bracket of lines) the kinks underflowed: composed twice at ε = 744 it read ε(1e-3)
    # [52.8, 1485.07] for the exact 1485.581 (upper end below), and at ε = 800 [52.8, ∞].
    # Reference: the outcomes of C_p(RR_e) (see the two-fold test above), exact sums.
    import mpmath as mp

    mp.mp.dps = 60
    p = 0.3
    r = 1 / (1 + mp.exp(e))
    q1 = (1 - mp.mpf(p)) * r + mp.mpf(p) * (1 - r)
    ref = ([r, q1, 1 - r - q1], [q1, r, 1 - r - q1])
    c = fdp.symmetrize(fdp.poisson_subsample(fdp.EpsDelta(e), p).add)
    for numeric in (False, True):
        g = fdp.compose(c, repeat=2, numeric=numeric)
        for d in [1e-3, 1e-8]:
            truth = mp_eps([ref] * 2, d)
            lo, hi = g.epsilon_bracket(d)
            assert lo <= truth <= hi, (numeric, d, lo, hi, float(truth))
            assert hi - lo <= 1e-3 * hi


@pytest.mark.parametrize("op", ["symmetrize", "subsample", "poisson", "add", "deltamix"])
@pytest.mark.parametrize("laplace", [False, True])
def test_curves_built_on_a_bracket_keep_its_deep_tail(op: str, laplace: bool) -> None:
    # Curves built on a bracket read ε from the lines of their sides, which lose the base's deep
    # tail (its closed-form tail bound): ε(1e-20) of symmetrize(pair³) read 26.287 for the exact
    # 26.0985, and a hunt's symmetrize, subsample, poisson_subsample and f ⊗ f_{0,δ} of
    # Laplace(5)³ ⊗ pair read ε(1e-50) = ∞ (gdp_mu ∞). Now they answer from the base's profile.
    # Reference: exact sums over the pair's outcomes in mpmath, with the Laplace profile
    # δ_L(ε) = max(0, 1 − e^{(ε − m)/2}) for ε ≥ 0, 1 − e^ε + e^ε δ_L(−ε) below (DRS Ex. 2.9,
    # L_m symmetric); min{f_i}** has profile max_i δ_{f_i} (theory §3); the Poisson pairs'
    # profiles: δ_{f_p}(ε) = p δ_f(ε'), e^{ε'} = 1 + (e^ε − 1)/p, and δ_{f_p⁻¹}(ε) =
    # (1 − e^ε(1 − p)) δ_{f⁻¹}(ε''), e^{ε''} = p e^ε/(1 − (1 − p)e^ε) (0 where that is ≤ 0);
    # f ⊗ f_{0,τ}: τ + (1 − τ) δ_f(ε).
    import itertools

    import mpmath as mp

    mp.mp.dps = 80
    p, q = [.6, .3, .0999, .0001], [.0001, .2, .2999, .5]
    m, rate, tau = mp.mpf(5), mp.mpf("0.3"), mp.mpf("1e-60")

    def lap(e: Any) -> Any:
        if e < 0:
            return 1 - mp.exp(e) + mp.exp(e) * lap(-e)
        return max(mp.mpf(0), 1 - mp.exp((e - m) / 2))

    pm, qm = mp_pair(p, q)
    outs = {}
    for name, (a, b) in {"f": (pm, qm), "inv": (qm, pm)}.items():
        outs[name] = [(mp.fprod(a[i] for i in idx), mp.fprod(b[i] for i in idx))
                      for idx in itertools.product(range(4), repeat=3)]

    def prof(e: Any, which: str) -> Any:  # δ of pair³ (⊗ L_5) or of its inverse
        if laplace:
            return mp.fsum(y * lap(e - mp.log(y / x)) for x, y in outs[which])
        return mp.fsum(max(y - mp.exp(e) * x, 0) for x, y in outs[which])

    def mix(e: Any, which: str) -> Any:  # p g + (1 − p) Id, g the pair or its inverse
        return rate * prof(mp.log(1 + mp.expm1(e) / rate), which)

    def mix_inv(e: Any, which: str) -> Any:  # (p g + (1 − p) Id)⁻¹
        rest = 1 - mp.exp(e) * (1 - rate)
        if rest <= 0:
            return mp.mpf(0)
        other = "inv" if which == "f" else "f"
        return rest * prof(e + mp.log(rate) - mp.log(rest), other)

    parts = {
        "symmetrize": [lambda e: prof(e, "f"), lambda e: prof(e, "inv")],
        "subsample": [lambda e: mix(e, "f"), lambda e: mix_inv(e, "f")],
        "poisson": [lambda e: mix(e, "f"), lambda e: mix_inv(e, "f"),
                    lambda e: mix(e, "inv"), lambda e: mix_inv(e, "inv")],
        "add": [lambda e: mix(e, "f")],
        "deltamix": [lambda e: tau + (1 - tau) * prof(e, "f")],
    }[op]

    def eps(d: float) -> Any:
        lo, hi = mp.mpf(0), mp.mpf(60)
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if max(g(mid) for g in parts) > d else (lo, mid)
        return hi

    base = fdp.compose(fdp.from_distributions(p, q), repeat=3, numeric=True)
    if laplace:
        base = fdp.compose(base, fdp.Laplace(5), numeric=True)
    c = {
        "symmetrize": lambda: fdp.symmetrize(base),
        "subsample": lambda: fdp.subsample(base, 0.3),
        "poisson": lambda: fdp.poisson_subsample(base, 0.3).symmetric,
        "add": lambda: fdp.poisson_subsample(base, 0.3).add,
        "deltamix": lambda: fdp.compose(base, fdp.EpsDelta(0.0, 1e-60)),
    }[op]()
    for d in (1e-5, 1e-20, 1e-50):
        truth = eps(d)
        lo, hi = c.epsilon_bracket(d)
        assert lo <= truth <= hi, (d, lo, hi, float(truth))
        assert hi - lo <= 1e-4 * hi, (d, lo, hi)  # (the base brackets at its default tol)
    if laplace and op != "deltamix":  # μ* ≥ the μ whose δ_μ meets the exact δ at ε = 20, 25
        mu = fdp.gdp_mu(c)
        for e in (20, 25):
            target = max(g(mp.mpf(e)) for g in parts)
            need = mp.findroot(lambda u, e=e, t=target: mp.ncdf(-e / u + u / 2)
                               - mp.exp(e) * mp.ncdf(-e / u - u / 2) - t, 6)
            assert need <= mu < math.inf, (e, float(need), mu)


def test_symmetrized_bracket_of_laplace_cubed_keeps_its_tail() -> None:
    # the hunt's reproducer: ε(1e-50) and gdp_mu read ∞ (the exact ε is 23.70; its value is
    # checked against exact sums in the test above, on pair³ ⊗ L_5)
    p, q = [.6, .3, .0999, .0001], [.0001, .2, .2999, .5]
    h = fdp.compose(fdp.compose(fdp.Laplace(5), repeat=3), fdp.from_distributions(p, q))
    for c in (fdp.symmetrize(h), fdp.subsample(h, 0.3), fdp.poisson_subsample(h, 0.3).symmetric):
        assert math.isfinite(c.epsilon(1e-50))
        assert math.isfinite(fdp.gdp_mu(c))


@pytest.mark.parametrize("eps0,rate,n", [(1.0, 0.3, 6), (2.0, 0.05, 5), (0.5, 0.9, 7)])
def test_poisson_pairs_power_against_exact_sums(eps0: float, rate: float, n: int) -> None:
    # pairs ** n is min{F, F⁻¹}** with F the n-fold add pair (randomized response is
    # symmetric, so the remove direction is F⁻¹): ε(δ) = max(ε_F, ε_F⁻¹) by exact sums over the
    # 2ⁿ joint outcomes in mpmath (tests/exact_sums.py), not by fdp
    import mpmath as mp

    e = math.exp(eps0)
    rr = fdp.from_distributions([e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)])
    h = fdp.poisson_subsample(rr, rate) ** n
    with mp.workdps(40):
        ee = mp.e ** eps0
        pm = [ee / (1 + ee), 1 / (1 + ee)]
        qm = [1 / (1 + ee), ee / (1 + ee)]
        mix = [(1 - rate) * a + rate * b for a, b in zip(pm, qm, strict=True)]
        for delta in (1e-2, 1e-4, 1e-7):
            ref = max(mp_eps([(pm, mix)] * n, delta), mp_eps([(mix, pm)] * n, delta))
            lo, hi = h.epsilon_bracket(delta)
            assert lo <= ref <= hi, (delta, lo, float(ref), hi)
    assert fdp.poisson_subsample(rr, rate) ** 0 == fdp.Identity()


@pytest.mark.parametrize(
    ("pq", "n", "rate", "epss"),
    [
        # p near 1 and a very negative loss: log1p(p·expm1(ℓ)) is ill-conditioned where
        # 1 − p + p e^ℓ is small; charged 6 ulps of the result, the largest loss of f_p⁻¹ read
        # 3e-11 relative low and δ at it 3 % low (first case), δ 0 for 1.5e-4 (second)
        (([0.5, 0.5], [2.0**-30, 1.0 - 2.0**-30]), 1, 1.0 - 2.0**-30, [19.695803109055326]),
        (([0.5, 0.5], [1.2585261823034861e-14, 0.9999999999999875]), 1, 0.9999999999999674,
         [30.4813]),
        (([0.5, 0.5], [2.0**-20, 1.0 - 2.0**-20]), 1, 0.999, [6.90585165074845]),
        # an exact product's losses are rounded up (its side); the mixture's inverse negated
        # them without that charge: ε(1e-100) 7.7e-16 relative low, δ 0 for 2.9e-19
        (([0.3054716344922781, 0.22658610250800848, 0.32024169247597456, 0.14770057052373886],
          [0.3229601513594389, 0.3426944985985756, 0.26299810223281384, 0.07134724780917168]),
         2, 0.9, [1.1711622061266578]),
        (([0.19286346435546875, 0.21413803100585938, 0.33664989471435547, 0.2563486099243164],
          [0.0028858184814453125, 0.18894195556640625, 0.38605690002441406,
           0.4221153259277344]), 3, 0.999, [6.904414121827835]),
    ],
)
def test_subsampling_keeps_its_side_near_p_one_and_for_products(
    pq: tuple[list[float], list[float]], n: int, rate: float, epss: list[float]
) -> None:
    # helper-33's hunt, references from the definitions at 500 digits (exact_sums)
    import mpmath as mp

    mp.mp.dps = 500
    pair = mp_pair(*pq)
    ref = [mp_subsampled_pair([pair] * n, rate)]
    f = fdp.from_distributions(*pq)
    f = fdp.compose(f, repeat=n) if n > 1 else f
    curves = [fdp.subsample(f, rate), fdp.poisson_subsample(f, rate).add.inverse()]
    if n > 1:  # (a checkpoint of the product keeps the bias of its losses)
        from fdp.accountant import curve_from_spec, curve_to_spec

        back = curve_from_spec(curve_to_spec(f))
        assert back._loss_bias == f._loss_bias > 0.0
        curves.append(fdp.subsample(back, rate))
    for h in curves:
        for x in epss + [epss[0] - 1e-3, 0.5 * epss[0], 0.0]:
            truth = mp_delta(ref, x)
            lo, hi = h.delta_bracket(x)
            assert mp.mpf(float(lo)) <= truth <= mp.mpf(float(hi)), (h, x, lo, hi, truth)
            assert truth <= mp.mpf(float(h.delta(x)))
        for d in (1e-100, 1e-12, 1e-3):
            truth = mp_eps(ref, d)
            lo, hi = h.epsilon_bracket(d)
            assert mp.mpf(float(lo)) <= truth <= mp.mpf(float(hi)), (h, d, lo, hi, truth)
            assert truth <= mp.mpf(float(h.epsilon(d)))


def test_an_optimistic_mixture_reads_its_values_rounded_up() -> None:
    # helper-33: Mixture.upper rounded its values down like the lower curve; at α = 0 the
    # upper curve read 1 − 4.4e-16, below the exact 1 (p f(0) + (1 − p) with f(0) = 1)
    import mpmath as mp

    base = fdp.compose(fdp.Gaussian(0.5), fdp.mechanisms.blh(3.0))
    m = fdp.poisson_subsample(base, 1e-3).add
    up, b_up = m.upper, base.upper
    assert float(up(0.0)) == 1.0
    mp.mp.dps = 40
    for a in (0.0, 1e-12, 1e-3, 0.3, 0.9):
        # p·f(α) + (1 − p)(1 − α), exactly, from the base's optimistic value
        exact = mp.mpf(1e-3) * mp.mpf(float(b_up(a))) + (1 - mp.mpf(1e-3)) * (1 - mp.mpf(a))
        assert mp.mpf(float(up(a))) >= exact, (a, up(a), exact)


@settings(max_examples=400, deadline=None)
@given(
    loss=st.one_of(st.floats(-800.0, 800.0), st.sampled_from([-np.inf, 0.0, 1.0, -745.0, -36.0])),
    rate=st.one_of(st.floats(1e-300, 1.0), st.integers(1, 52).map(lambda k: 1.0 - 2.0**-k),
                   st.sampled_from([1e-12, 1e-6, 0.999, 0.9999999999999674])),
)
def test_mixed_losses_lie_within_their_stated_bound(loss: float, rate: float) -> None:
    # ℓ' = log(1 − p + p e^ℓ) against mpmath at 400 digits: every computed loss within the bound
    # it carries (log1p(p·expm1(ℓ)) charged 6 ulps of the result was off by up to ~u/(1 − p +
    # p e^ℓ) where that is small: p = 1 − 2⁻³⁰, ℓ = −25 read 3e-11 relative low)
    import mpmath as mp

    from fdp.operations import _mixed_losses

    mp.mp.dps = 400
    got, err = _mixed_losses(np.array([loss]), rate)
    p = mp.mpf(rate)
    exact = mp.log((1 - p) + (p * mp.exp(mp.mpf(loss)) if np.isfinite(loss) else 0))
    if not mp.isfinite(exact):
        assert got[0] == -np.inf
        return
    assert np.isfinite(got[0]) and np.isfinite(err[0]) and err[0] >= 0.0
    # (the reference's own error, ~1e-400, allowed: p = 1 gives ℓ' = ℓ with no charge)
    slack = mp.mpf(10) ** -350
    assert abs(mp.mpf(float(got[0])) - exact) <= mp.mpf(float(err[0])) + slack, (
        loss, rate, got, err)
    if np.isfinite(loss):  # the engine's bin bounds (Mixture._mixed_bound): each on its side
        m = Mixture(fdp.Gaussian(1.0), rate)
        up, down = (float(m._mixed_bound(np.array([loss]), s)[0]) for s in (1.0, -1.0))
        assert mp.mpf(down) - slack <= exact <= mp.mpf(up) + slack, (loss, rate, down, up)


@pytest.mark.parametrize("mu", [0.5, 2.0, 4.186, 10.0])
@pytest.mark.parametrize("rate", [1e-3, 0.1, 0.5, 0.9])
def test_the_remove_pair_of_a_gaussian_brackets_its_exact_profile(mu: float, rate: float) -> None:
    # poisson_subsample(G_μ, p).remove = T((1 − p)P + pQ, P), P = N(0, 1), Q = N(μ, 1): its
    # profile ∫ (dP − e^ε d((1 − p)P + pQ))₊ from the threshold test, the set x < x* with
    # e^ε ((1 − p) + p e^{μx* − μ²/2}) = 1: δ(ε) = Φ(x*) − e^ε ((1 − p) Φ(x*) + p Φ(x* − μ)),
    # 0 from the largest loss −log(1 − p) on; at 60 digits.
    # Both ends of its brackets are bounds: the lower end was its conservative value before
    # (its optimistic reading, _MixtureInverse._as_upper, did not exist), above the truth
    # (μ = 4.186, p = 0.5: ε(1e-100) read 0.6931471805599472 at both ends, log 2 exactly).
    import mpmath as mp

    mp.mp.dps = 60
    m, p = mp.mpf(mu), mp.mpf(rate)

    def exact(e: Any) -> Any:
        x = mp.exp(e)
        c = (1 - x * (1 - p)) / (x * p)
        if c <= 0:
            return mp.mpf(0)
        xs = (mp.log(c) + m * m / 2) / m
        return mp.ncdf(xs) - x * ((1 - p) * mp.ncdf(xs) + p * mp.ncdf(xs - m))

    r = fdp.poisson_subsample(fdp.Gaussian(mu), rate).remove
    assert r._has_twin()
    top = -math.log1p(-rate)
    for e in (0.0, 0.01, 0.1, 0.5, 0.5 * top, top * (1 - 1e-9), top * (1 - 1e-15)):
        truth = exact(mp.mpf(e))
        lo, hi = r.delta_bracket(e)
        assert mp.mpf(float(lo)) <= truth <= mp.mpf(float(hi)), (e, lo, hi, truth)
    for d in (0.1, 1e-3, 1e-6, 1e-12, 1e-100):
        if exact(mp.mpf(0)) <= d:
            continue
        a, b = mp.mpf(0), mp.mpf(top)  # (bisection on the exact profile)
        for _ in range(230):
            mid = (a + b) / 2
            a, b = (mid, b) if exact(mid) > d else (a, mid)
        lo, hi = r.epsilon_bracket(d)
        assert mp.mpf(float(lo)) <= b and a <= mp.mpf(float(hi)), (d, lo, hi, a)


def _mp_curve_at(pair: tuple[list[Any], list[Any]], alpha: Any) -> Any:
    """T(P, Q)(α) of an exact pair, from its breakpoints (exact_sums.mp_breakpoints)."""
    pts = sorted(set(mp_breakpoints(*pair)))
    for (x0, y0), (x1, y1) in zip(pts, pts[1:], strict=False):
        if x0 <= alpha <= x1 and x1 > x0:
            return y0 + (y1 - y0) * (alpha - x0) / (x1 - x0)
    return pts[-1][1]


def test_operations_on_a_curve_with_raised_equal_losses_stay_below_the_truth() -> None:
    # helper-35: subsample of the Poisson add pair of an exact product at p = 1 − 2⁻⁴⁵ (a
    # Mixture, bracketed through its tangent-line lower curve). That curve's segments, read
    # on the lower side, share one raised loss over 15 segments (monotone fill); its mixture
    # took the losses as the pair's and merged the equal ones (their masses summed: the chord
    # above them), reading f 7.6e-4 above the exact value, above the bracket's upper curve.
    # Equal losses now merge only where the outcomes are colinear. Exact references at 60
    # digits from the definitions (exact_sums).
    import mpmath as mp

    mp.mp.dps = 60
    pq = ([0.371536523929471, 0.12846347607052896, 0.5, 2.7755575615628914e-17],
          [0.35572374645222327, 0.1442762535477767, 0.5, 2.7755575615628914e-17])
    rate = 1.0 - 2.0**-45
    joint = mp_joint([mp_pair(*pq)] * 2)
    r = mp.mpf(rate)
    add = ([x for x, _ in joint], [(1 - r) * x + r * y for x, y in joint])
    ref = mp_subsampled_pair([add], 0.3)
    h = fdp.subsample(fdp.poisson_subsample(fdp.compose(fdp.from_distributions(*pq), repeat=2),
                                            rate).add, 0.3)
    alphas = [0.8489959942052269, 0.1, 0.3, 0.5, 0.7, 0.9]
    for a in alphas:
        truth = _mp_curve_at(ref, mp.mpf(a))
        assert mp.mpf(float(h.lower(a))) <= truth <= mp.mpf(float(h.upper(a))), (a, truth)
        assert mp.mpf(float(h(a))) <= truth
    # the lower curve of tangent lines itself (its intersections rising at rounding level
    # left a segment whose raised loss the monotone fill spread over 15 larger ones), squared:
    # compose(lo, lo) read 6.7e-3 above the exact (add ⊗ add) at α = 0.1975
    from fdp.operations import _profile_lower

    m = fdp.poisson_subsample(fdp.compose(fdp.from_distributions(*pq), repeat=2), rate).add
    lo = _profile_lower(m)
    sq = fdp.compose(lo, lo)
    ref2 = mp_joint([add, add])
    pair2 = ([x for x, _ in ref2], [y for _, y in ref2])
    for a in (0.05, 0.1975, 0.3, 0.6):
        assert mp.mpf(float(sq(a))) <= _mp_curve_at(pair2, mp.mpf(a)), a


def test_equal_losses_merge_only_where_the_outcomes_are_colinear() -> None:
    # from_masses with given losses: two outcomes at one loss but different q/p stay apart,
    # in the convex order, so the curve is the pair's own, not the chord over the two
    from fdp.tradeoff import PiecewiseLinear

    p, q = np.array([0.2, 0.3, 0.5]), np.array([0.4, 0.4, 0.2])  # q/p: 2, 4/3, 0.4
    f = PiecewiseLinear.from_masses(p, q, loss=np.array([0.7, 0.7, -0.9]))
    exact = PiecewiseLinear.from_masses(p, q)  # (losses from the masses: LR order)
    grid = np.linspace(0.0, 1.0, 101)
    assert np.all(f(grid) <= exact(grid) + 1e-15)
    assert f._masses[0].size == 3
    g = PiecewiseLinear.from_masses(np.array([0.2, 0.3, 0.5]), np.array([0.4, 0.6, 0.0]),
                                    loss=np.array([math.log(2.0), math.log(2.0), -np.inf]))
    assert g._masses[0].size == 2  # (colinear: merged)


def _mp_sue_points(eps: float) -> list[tuple[Any, Any]]:
    """SUE's exact breakpoints: f_{ε/2,0} ⊗ f_{ε/2,0} (two bits, each kept with probability
    e^{ε/2}/(1 + e^{ε/2}))."""
    import mpmath as mp

    p = mp.exp(mp.mpf(eps) / 2) / (1 + mp.exp(mp.mpf(eps) / 2))
    bit = ([p, 1 - p], [1 - p, p])
    joint = mp_joint([bit, bit])
    return sorted(set(mp_breakpoints([x for x, _ in joint], [y for _, y in joint])))


@pytest.mark.parametrize("eps", [1e-6, 3e-7, 1e-8, 1e-4, 0.3])
@pytest.mark.parametrize("k", [2, 4, 7])
def test_group_of_tiny_losses_reads_no_less_than_the_exact_group(eps: float, k: int) -> None:
    # helper-35: group(sue(1e-6), 4).epsilon(0) read 3.999999999842484e-06 for the exact
    # 4e-6 (the top loss of the group is k times f's, DRS Thm 2.14: its slope at 0 is a product
    # of slopes), and δ(3.9999999999e-06) read 0 for 2.5e-17: losses differenced from kinks
    # computed k − 1 times were off by more than their charge. The group now bounds each
    # segment's loss by the sum of f's and the previous step's. References: the group
    # operator on SUE's exact breakpoints in mpmath at 60 digits (exact_sums), not fdp.
    import mpmath as mp

    mp.mp.dps = 60
    f = fdp.mechanisms.sue(eps)
    ref = mp_group_points(_mp_sue_points(eps), k)
    # (SUE is symmetric, so is its group: the inverse reads the same truth)
    for g in (group(f, k), group(f, k).inverse()):
        top = float(g.epsilon(0.0))
        assert mp.mpf(top) >= k * mp.mpf(eps), (top, k * eps)
        assert top <= k * eps + 1e-13  # (charged: ulps of the masses, read as losses)
        for t in (1e-12, 1e-10, 1e-8, 1e-4, 0.3, 0.9, 1.5):
            e = k * eps * (1 - t)
            truth = mp_points_delta(ref, mp.mpf(e))
            got = float(g.delta(e))
            assert mp.mpf(got) >= truth, (e, got, truth)
            assert got <= float(truth) * (1 + 1e-6) + 1e-14
        for d in (1e-3, 1e-9, 1e-15):
            got = float(g.epsilon(d))
            assert mp_points_delta(ref, mp.mpf(got)) <= d, (d, got)


@settings(max_examples=60, deadline=None)
@given(
    w=st.lists(st.integers(1, 2**20), min_size=2, max_size=4),
    tilt=st.lists(st.integers(-40, 40), min_size=2, max_size=4),
    shift=st.integers(20, 44),
    k=st.integers(2, 5),
)
def test_group_of_dyadic_pairs_stays_on_the_safe_side(
    w: list[int], tilt: list[int], shift: int, k: int
) -> None:
    # pairs whose float masses are exact (dyadic, each side summing to 1 exactly) with losses
    # from 1e-13 up: the group operator on their exact breakpoints in mpmath is the truth
    import mpmath as mp

    mp.mp.dps = 60
    n = min(len(w), len(tilt))
    w, tilt = w[:n], tilt[:n]
    tot = sum(w)
    scale = 2.0 ** -int(math.ceil(math.log2(tot)))
    p = [x * scale for x in w]
    p[-1] += 1.0 - sum(p)  # (exact: dyadic)
    d = [t * 2.0**-shift for t in tilt]
    d[-1] -= sum(d)
    q = [a + b for a, b in zip(p, d, strict=True)]
    if min(q) <= 0 or min(p) <= 0 or sum(q) != 1.0 or sum(p) != 1.0:
        return
    f = fdp.from_distributions(p, q)
    pm, qm = [mp.mpf(x) for x in p], [mp.mpf(x) for x in q]
    pts = sorted(set(mp_breakpoints(pm, qm)))
    ref = mp_group_points(pts, k)
    ref_inv = mp_group_points(sorted(set(mp_breakpoints(qm, pm))), k)
    g = group(f, k)
    for cur, truth_pts in ((g, ref), (g.inverse(), ref_inv)):
        top = max(mp.log((1 - b1 - (1 - b0)) / (a1 - a0)) if a1 > a0 else mp.mpf(0)
                  for (a0, b0), (a1, b1) in zip(truth_pts[:-1], truth_pts[1:], strict=True))
        assert mp.mpf(float(cur.epsilon(0.0))) >= top
        for t in (1e-10, 1e-6, 0.5):
            e = float(top) * (1 - t)
            assert mp.mpf(float(cur.delta(e))) >= mp_points_delta(truth_pts, mp.mpf(e)), (e, t)


def test_symmetrized_mixture_inverse_delta_bracket_holds_the_truth_near_its_top_loss() -> None:
    # helper-36: the upper curve of a Mixture's inverse is its chords (to_piecewise) through
    # values read "rounded up", but Inverse read them as its bisection's lower end: up to
    # 1.5e-15 below the curve, so symmetrize(...).delta_bracket(6.487e-5) had lower end 1.5e-15
    # above the exact 4.3e-21 (and above its own upper end). References: the exact pairs in
    # mpmath (T(P, (1 − r)P + rQ) twice, inverted: T(Q₂, P); symmetrize's δ is the larger of
    # the pair's and its inverse's).
    import mpmath as mp

    mp.mp.dps = 80
    r = mp.mpf(0.01)
    p = mp.exp(mp.mpf(0.5)) / (1 + mp.exp(mp.mpf(0.5)))
    pm, qm = [p, 1 - p], [1 - p, p]
    q1 = [(1 - r) * a + r * b for a, b in zip(pm, qm, strict=True)]
    q2 = [(1 - r) * a + r * b for a, b in zip(pm, q1, strict=True)]
    g = fdp.poisson_subsample(fdp.poisson_subsample(
        fdp.mechanisms.randomized_response(0.5, 2), 0.01).add, 0.01).add.inverse()
    s = fdp.symmetrize(g)
    top = max(mp.log(b / a) for a, b in zip(q2, pm, strict=True))
    grid = [float(top) * (1 + k * 1e-12) for k in range(-1000, 1001, 100)]
    for e in [*np.linspace(0.0, 6.4e-5, 9), 6.487002296457555e-05, *grid]:
        truth = max(mp_delta([(q2, pm)], mp.mpf(e)), mp_delta([(pm, q2)], mp.mpf(e)))
        lo, hi = s.delta_bracket(e)
        assert mp.mpf(float(lo)) <= truth <= mp.mpf(float(hi)), (e, lo, hi, truth)
    # the chords' points lie on or above the exact curve T(Q₂, P)
    hi_curve = g.to_piecewise()
    for a, b in zip(hi_curve._a[::37], hi_curve._b[::37], strict=True):
        assert mp.mpf(float(b)) >= _mp_curve_at((q2, pm), mp.mpf(float(a))), a


@pytest.mark.parametrize(("eps", "k"), [(3.0, 2), (3.0, 3), (1.0, 2), (5.0, 2)])
def test_group_of_olh_and_its_inverse_stay_below_the_exact_group(eps: float, k: int) -> None:
    # helper-35 (seed 101302): group(olh(3.0), 2).inverse() read f(0.0693) 1.6e-15 relative
    # above the truth. The inverse (the group's mirrored breakpoints) dropped the group's
    # mass_rtol, so it was read with the default 8u where its kinks are further off. The
    # reference: OLH's exact pair (WBLJ 2017: hash collision 1/g, else GRR_g) in mpmath, the
    # group operator on its breakpoints, and its mirror for the inverse (exact_sums).
    import mpmath as mp

    mp.mp.dps = 60
    f = fdp.mechanisms.olh(eps)
    g_ = mp.mpf(int(f.params["g"]))
    e = mp.mpf(eps)
    pp = mp.exp(e) / (mp.exp(e) + g_ - 1)
    qq = 1 / (mp.exp(e) + g_ - 1)
    c = 1 / g_
    pm = [c, (1 - c) * pp, (1 - c) * qq, (1 - c) * (g_ - 2) * qq]
    qm = [c, (1 - c) * qq, (1 - c) * pp, (1 - c) * (g_ - 2) * qq]
    ref = mp_group_points(sorted(set(mp_breakpoints(pm, qm))), k)
    ref_inv = sorted((b, a) for a, b in ref)
    g = group(f, k)
    for cur, pts in ((g, ref), (g.inverse(), ref_inv)):
        grid = np.unique(np.concatenate([cur._a, np.linspace(0.0, 1.0, 401),
                                         [0.06934551763435079, 0.02375871761942256]]))
        for a in grid:
            truth = _mp_pl_eval(pts, mp.mpf(float(a))) + mp.mpf(10) ** -45  # (mp's rounding)
            assert mp.mpf(float(cur(a))) <= truth, (a, float(cur(a)), truth)


def test_q_only_masses_gather_into_the_atom_rounded_up() -> None:
    # a hunt (seed 200267): Q-only outcomes 0.5 and 4.9e-17 made a +∞ atom of 0.5 to nearest;
    # δ(ε) exceeds 1/2 at every ε, so ε(1/2) is ∞, but fdp read 1.52 and f(0) = 0.5 above the
    # exact 1 − 0.5 − 4.9e-17. Reference: the normalized pair in mpmath (exact_sums).
    import mpmath as mp

    mp.mp.dps = 50
    p = [0.30078125, 0.01953125, 0.4091796875, 0.2705078125, 0.0, 0.0]
    q = [0.16832669322709162, 0.0896414342629482, 0.02589641434262948, 0.21613545816733065,
         0.5, 4.85722573273506e-17]
    pm, qm = mp_pair(p, q)
    atom = mp.fsum(b for a, b in zip(pm, qm, strict=True) if a == 0)
    assert atom > mp.mpf(0.5)
    f = fdp.from_distributions(p, q)
    assert f.epsilon(0.5) == math.inf
    assert mp.mpf(float(f(0.0))) <= 1 - atom
    for e in (2.0, 10.0, 1e3):
        assert mp.mpf(float(f.delta(e))) >= mp_delta([(pm, qm)], mp.mpf(e))



@pytest.mark.parametrize("alpha", [0.3, 0.1, 1e-17, 0.7, 0.123456789, 0.49999999999999994])
def test_optimistic_readings_of_curves_equal_to_one_minus_alpha_are_not_below_it(
    alpha: float,
) -> None:
    # hunts (seeds 101023, 101518, 200013, 200031, 200210): upper curves equal to 1 − α read
    # 1 − 0.3 to nearest, 0.7 − 5.6e-17 below the exact 1 − 0.3 (the cap f ≤ 1 − α rounded to
    # nearest). Curves of the identity pair (the truth is exactly 1 − α); exact rationals.
    from fractions import Fraction

    ident = fdp.EpsDelta(0.0, 0.0)
    curves = [
        fdp.compose(fdp.poisson_subsample(ident, 0.5).add, repeat=2),
        fdp.subsample(fdp.poisson_subsample(fdp.mechanisms.blh(0.0), 0.01).add, 1 - 2**-30),
        fdp.poisson_subsample(fdp.group(fdp.poisson_subsample(ident, 0.9).add, 3), 0.5).add,
    ]
    truth = 1 - Fraction(alpha)
    for c in curves:
        assert Fraction(float(c.upper(alpha))) >= truth, c
        assert Fraction(float(c.lower(alpha))) <= truth, c
        assert Fraction(float(c(alpha))) <= truth, c


def test_hunt_200229_200300_200177_against_exact_pairs() -> None:
    # helper-39's triage of a hunt (seeds 200229, 200300, 200177), references at 80 digits
    # from the definitions (exact_sums).
    import mpmath as mp

    mp.mp.dps = 80

    def delta(pair: tuple[list[Any], list[Any]], e: float) -> Any:
        x = mp.exp(mp.mpf(e))
        return mp.fsum(max(q - x * p, 0) for p, q in zip(*pair, strict=True))

    # 200229: the inverse of a curve whose +∞ atom (9.5e-19) is below an ulp of 1 lost the
    # atom's segment (_swapped read a[-1] = 1.0, not its complement): the remove pair of its
    # mixture read δ(10) = 0 for 9.5e-19 and ε(1e-300) = 7.53 for 20.79
    p = [0.37890625, 0.5185546875, 9.5367431640625e-07, 0.0512690544128418, 0.0512690544128418]
    q = [0.2603150787696924, 0.23968492123030757, 0.0, 0.5, 2.7755575615628914e-17]
    r1, r2 = 1e-12, 0.9999999990686774
    h = fdp.poisson_subsample(fdp.poisson_subsample(fdp.poisson_subsample(
        fdp.from_distributions(p, q), 1.0).symmetric, r1).add, r2).remove
    pm, qm = mp_poisson_symmetric_pair(p, q, 1.0)
    add = (pm, [(1 - mp.mpf(r1)) * a + mp.mpf(r1) * b for a, b in zip(pm, qm, strict=True)])
    rem = ([(1 - mp.mpf(r2)) * b + mp.mpf(r2) * a for a, b in zip(*add, strict=True)], add[1])
    for e in (10.0, 20.0):
        assert mp.mpf(float(h.delta(e))) >= delta(rem, e), e
    top = max(mp.log(b / a) for a, b in zip(*rem, strict=True) if a > 0 and b > 0)
    assert mp.mpf(float(h.epsilon(1e-300))) >= top
    # 200300: the inverse built from differenced masses stored the lower side's charged losses
    # with no record of the charge, so optimistic readings of curves derived from it could not
    # take it off: a δ bracket's lower end 3.4e-13 relative above the truth
    f = fdp.group(fdp.from_eps_delta([1.0], [0.1]), 2)
    r = 0.9999999999999716
    h = fdp.poisson_subsample(fdp.poisson_subsample(f, r).add, 1.0).symmetric
    d, e1 = mp.mpf(0.1), mp.mpf(1)
    x = (1 - d) / (1 + mp.exp(e1))
    pts = [(mp.mpf(0), 1 - d), (x, x), (1 - d, mp.mpf(0)), (mp.mpf(1), mp.mpf(0))]
    gp, gq = mp_hull_pair(mp_group_points(pts, 2))
    a_pair = (gp, [(1 - mp.mpf(r)) * a + mp.mpf(r) * b for a, b in zip(gp, gq, strict=True)])
    for e in (1.9999999979999754, 1.9999999999999751, 2.0):
        t = max(delta(a_pair, e), delta((a_pair[1], a_pair[0]), e))
        lo, hi = h.delta_bracket(e)
        assert mp.mpf(float(lo)) <= t <= mp.mpf(float(hi)), (e, lo, hi, t)
    # 200177: the symmetrized +∞ atom exceeds the δ asked, so ε is ∞ (read 71.02 before the
    # mirror kept its mass_rtol, e975318)
    p = [0.07659971975712283, 0.19990658570761324, 0.22349369453526388, 7.888609052210118e-31,
         0.5, 4.163336342344258e-17]
    q = [0.2099609375, 0.3740234375, 0.1962890625, 0.0, 0.10986328125, 0.10986328125]
    g = mp_group_points(mp_breakpoints(*mp_pair(p, q)), 2)
    atom = mp_hull_pair(g + [(b, a) for a, b in g])[1][0]
    dq = 4.379054536093528e-30
    assert atom > dq
    assert fdp.symmetrize(fdp.group(fdp.from_distributions(p, q), 2)).epsilon(dq) == math.inf


def test_group_kinks_merged_or_cancelling_stay_below_the_exact_group() -> None:
    # helper-38 (hunt seeds 200381, 200343). Two kinks of g_2 4.9e-18 apart (below an ulp at
    # α = 0.052) merged into one float point, read a value between theirs (1.1e-19 for kinks
    # 1.8e-19 and 7.9e-31), and its chord to the next point lost the lower kink: group(f, 4)
    # read 3.8e-49 for 2.8e-60. group(olh(10), 2)'s kink 1 − 2q + p ≈ 5.8e-5 of masses q ≈ 1/2
    # carries their rounding 8700 times amplified, past the group's mass_rtol: 6.6e-12
    # relative above. References: the exact pairs in mpmath, the group operator on their
    # breakpoints (exact_sums), not fdp.
    import mpmath as mp

    mp.mp.dps = 400  # (the tail reaches 1e-120: 1 − g must not round to 1)
    p = [0.19603960396039602, 0.08168316831683167, 0.22227722772277225, 0.5,
         5.551115123125783e-17]
    q = [0.7587890625, 0.2392578125, 7.888609052210118e-31, 0.0019531249999999998,
         2.1684043449631203e-19]
    f = fdp.from_distributions(p, q)
    bp = sorted(set(mp_breakpoints(*mp_pair(p, q))))
    e, g_ = mp.mpf(10), mp.mpf(22027)
    pp, qq, c = mp.exp(e) / (mp.exp(e) + g_ - 1), 1 / (mp.exp(e) + g_ - 1), 1 / g_
    olh = sorted(set(mp_breakpoints([c, (1 - c) * pp, (1 - c) * qq, (1 - c) * (g_ - 2) * qq],
                                    [c, (1 - c) * qq, (1 - c) * pp, (1 - c) * (g_ - 2) * qq])))
    x0 = 0.05231853048650853
    cases = [(f, bp, 3, [x0 * (1 + t * 1e-16) for t in range(-2, 20)]),
             (f, bp, 4, [x0 * (1 + t * 1e-16) for t in range(-2, 20)] + [0.07175203884538929]),
             (fdp.mechanisms.olh(10.0), olh, 2,
              [2.269917433972954e-05 * (1 + t * 1e-13) for t in range(-3, 4)]
              + [5.752484552574997e-05 * (1 + t * 1e-13) for t in range(-3, 4)] + [3e-5])]
    for base, pts, k, extra in cases:
        cur, ref = group(base, k), mp_group_points(pts, k)
        for a in np.unique(np.concatenate([cur._a, np.linspace(0.0, 1.0, 101), extra])):
            truth = _mp_pl_eval(ref, mp.mpf(float(a)))
            assert mp.mpf(float(cur(a))) <= truth, (k, a, float(cur(a)), truth)


def test_optimistic_side_of_groups_whose_p_masses_underflow() -> None:
    # helper-40 (hunt seed 101682): OUE at ε = 800 has P-mass e^{-800}/2 at its loss +800,
    # 0 in float (the loss itself is given, exact). The optimistic reading copied the
    # breakpoints, which start at (0, 1/2): group(oue(800), 4).upper(0) read 0.5 for the exact
    # 1, and its symmetrization (a hull of those breakpoints) had a +∞ atom of 1/2 on its
    # optimistic side: δ(3201)'s lower end 0.5 and ε(1e-300)'s ∞ (above its upper end). The
    # truths from the losses alone: OUE's are ±ε and 0 (WBLJ 2017), so the group's lie in
    # [−4ε, 4ε] = [−3200, 3200] and it has no +∞ atom: f(0) = 1, δ(3201) = 0, and ε(1e-300)
    # is 3200 to float precision (the top outcome's Q-mass is far above 1e-300).
    g = fdp.group(fdp.mechanisms.oue(800.0), 4)
    assert float(g.upper(0.0)) >= 1.0
    for h in (fdp.symmetrize(g), fdp.subsample(fdp.symmetrize(g), 1 - 2**-45)):
        assert h.delta_bracket(3201.0)[0] == 0.0
        lo, hi = h.epsilon_bracket(1e-300)
        assert lo <= hi and lo <= 3200.0 <= hi * (1 + 1e-15), (lo, hi)
        assert float(h.upper(0.0)) >= 1.0


def test_group_whose_kinks_underflow_keeps_the_least_beta_read_from_complements() -> None:
    # helper-42 (hunt seed 300251): kinks of a group below α = 1e-290 collapse into an atom
    # at α = 0 with the least β of them; two read β = 1.0 in float, and the argmin kept the
    # first, 1 − β = 1e-300 for the other's 2.1e-299: δ(10) read 1e-300 for 2.1e-299. Reference:
    # the group operator on the exact pair of the inverse of f_{3,1e-300}'s Poisson add pair
    # in mpmath at 700 digits (exact_sums).
    import mpmath as mp

    mp.mp.dps = 700
    e, d, r = mp.mpf(3), mp.mpf(1e-300), mp.mpf(0.9999999990686774)
    c = (1 - d) / (1 + mp.exp(e))  # f_{ε,δ}'s four outcomes
    pm = [mp.mpf(0), c, c * mp.exp(e), d]
    qm = [d, c * mp.exp(e), c, mp.mpf(0)]
    mm = [(1 - r) * a + r * b for a, b in zip(pm, qm, strict=True)]
    ref = mp_group_points(sorted(set(mp_breakpoints(mm, pm))), 2)
    h = fdp.group(fdp.poisson_subsample(fdp.EpsDelta(3.0, 1e-300), float(r)).add.inverse(), 2)
    for eps in (10.0, 40.0):
        lo, hi = h.delta_bracket(eps)
        truth = mp_points_delta(ref, mp.mpf(eps))
        assert mp.mpf(float(h.delta(eps))) >= truth and mp.mpf(float(hi)) >= truth, eps
        assert mp.mpf(float(lo)) <= truth, eps


def test_symmetric_poisson_curve_has_no_phantom_p_atom() -> None:
    # helper-41 (hunt seed 2474): the symmetric curve of a Poisson subsample rebuilt its P-masses
    # as q·e^{−ℓ} from raised losses and parked the shortfall 1 − Σp (1.8e-15) as P-mass at loss
    # −∞; an outer `.remove` made it Q-mass at loss 20.8: δ(0)'s lower end read 1.8e-15 for the
    # exact 2.7e-267 and ε(1e-200)'s 20.79 for 0. Reference: the same operations on the exact
    # pairs in mpmath at 1500 digits (exact_sums: breakpoints and hulls of the pairs).
    import mpmath as mp

    mp.mp.dps = 1500
    wp = [mp.exp(mp.mpf(600) * x / 2) for x in (-1, 1)]
    wq = [mp.exp(mp.mpf(600) * x / 2) for x in (-2, 2)]
    pm, qm = [w / mp.fsum(wp) for w in wp], [w / mp.fsum(wq) for w in wq]
    r, r2 = mp.mpf(1e-6), mp.mpf(0.9999999990686774)
    pts = []
    for pr in ((pm, [(1 - r) * a + r * b for a, b in zip(pm, qm, strict=True)]),
               ([(1 - r) * b + r * a for a, b in zip(pm, qm, strict=True)], qm)):
        bp = mp_breakpoints(*pr)
        pts += bp + [(y, x) for x, y in bp]
    sp, sq = mp_hull_pair(pts)  # poisson_subsample(·, 1e-6).symmetric
    bp = mp_breakpoints([(1 - r2) * q + r2 * p for p, q in zip(sp, sq, strict=True)], sq)
    hp, hq = mp_hull_pair(bp + [(y, x) for x, y in bp])  # symmetrize(·.remove)
    hq = [mp.mpf(0)] + hq[1:]  # the hull's +∞ atom is 1e-1501: working precision, not mass
    truth = mp.fsum(max(q - p, 0) for p, q in zip(hp, hq, strict=True))
    assert 1e-267 < truth < 1e-266
    base = fdp.mechanisms.exponential([-1.0, 1.0], [-2.0, 2.0], 600.0)
    h = symmetrize(poisson_subsample(poisson_subsample(base, 1e-6).symmetric, float(r2)).remove)
    lo, hi = h.delta_bracket(0.0)
    assert mp.mpf(lo) <= truth <= mp.mpf(hi), (lo, hi)
    assert h.epsilon_bracket(1e-200)[0] <= 0.0  # δ(0) < 1e-200: ε(1e-200) = 0


def test_subnormal_atom_of_a_mixture_is_read_at_or_above_its_truth() -> None:
    # helper-41 (hunt seed 1929): the +∞ atom r·q_∞ = 1e-12·1e-300 of a Poisson subsample lies
    # below the normal range, where its rounding is absolute; the relative allowance read δ = 1e-312
    # 0.3 subnormal steps below the exact product and ε(1e-312) finite for ∞. The losses of
    # f_{1e-6, δ} are ±1e-6 (and ±∞), so δ(1) is exactly the atom.
    import mpmath as mp

    mp.mp.dps = 50
    atom = mp.mpf(1e-12) * mp.mpf(1e-300)
    h = poisson_subsample(fdp.EpsDelta(1e-6, 1e-300), 1e-12).add.inverse().inverse()
    assert mp.mpf(float(h.delta(1.0))) >= atom
    assert h.epsilon(1e-312) == math.inf


def test_subnormal_q_masses_do_not_lift_beta() -> None:
    # helper-41 (hunt seed 2466): Q-masses of a product that underflow are raised to the least
    # subnormal (δ needs it), each up to 4.9e-324 above its truth, which the masses' relative
    # error does not cover: f(1e-300) read 1.5e-323 for the exact 9.7e-609. Reference: the
    # Neyman–Pearson curve of the exact product of the four pairs in mpmath at 2000 digits.
    import mpmath as mp

    from fdp.accountant import curve_from_spec, curve_to_spec

    mp.mp.dps = 2000
    d0, e = mp.mpf(9.094947017729282e-13), mp.e
    ed = ([mp.mpf(0), (1 - d0) / (1 + e), (1 - d0) * e / (1 + e), d0],
          [d0, (1 - d0) * e / (1 + e), (1 - d0) / (1 + e), mp.mpf(0)])
    a = mp_subsampled_pair([ed], mp.mpf(0.999))
    pr = 1 / (1 + mp.exp(-mp.mpf(700)))
    qr = mp.exp(-mp.mpf(700)) * pr
    rr = ([pr, qr], [qr, pr])
    fin = sorted(((p, q) for p, q in mp_joint([a, rr, a, rr]) if p > 0),
                 key=lambda t: -(t[1] / t[0]))
    x, acc, truth = mp.mpf(1e-300), mp.mpf(0), mp.mpf(0)
    for i, (p, q) in enumerate(fin):
        if acc + p >= x:
            truth = mp.fsum(qq for _, qq in fin[i + 1:]) + (1 - (x - acc) / p) * q
            break
        acc += p
    assert 0 < truth < mp.mpf("1e-600")
    ed_rt = curve_from_spec(curve_to_spec(fdp.EpsDelta(1.0, float(d0))))
    h = fdp.compose((subsample(ed_rt, 0.999), 1),
                    (fdp.mechanisms.randomized_response(700.0, 2), 1), repeat=2)
    assert mp.mpf(float(h(1e-300))) <= truth


def test_inverse_reads_delta_at_large_eps_without_the_e_eps_blowup() -> None:
    # A hunt (seed 400456): the inverse's δ is 1 − e^ε + e^ε δ_f(−ε), whose rounding allowance
    # is e^ε times an ulp of δ_f(−ε) ≈ 1: the inverse of a nested Poisson subsample (losses
    # below 1.3e-13, so δ = 0 beyond) read δ(1) = 2.2e-15, δ(20) = 6.7e-7 and δ(35) = 1.
    # Reference: the exact pairs in mpmath (δ(ε) = Σ (p − e^ε q)_+ of the uninverted pair).
    import mpmath as mp

    mp.mp.dps = 60
    pf = [0.19340866253285818, 3.2508717212520536e-07, 0.30659101237996966, 0.5,
          2.8643054386114607e-17]
    qf = [0.23005228616165654, 2.843802983604338e-07, 0.26994742945804506, 0.5,
          3.2738246927852335e-17]
    p, q = [mp.mpf(x) for x in pf], [mp.mpf(x) for x in qf]
    p, q = [x / mp.fsum(p) for x in p], [x / mp.fsum(q) for x in q]
    h = fdp.from_distributions(pf, qf)
    for r in (0.9999999990686774, 0.999, 1e-12):
        q = [(1 - mp.mpf(r)) * a + mp.mpf(r) * b for a, b in zip(p, q, strict=True)]
        h = poisson_subsample(h, r).add
    inv = h.inverse()
    for eps in (0.0, 1e-13, 1.0, 2.0, 5.0, 10.0, 20.0, 35.0, 1000.0):
        truth = mp.fsum(max(a - mp.e ** eps * b, 0) for a, b in zip(p, q, strict=True))
        got = mp.mpf(float(inv.delta(eps)))
        assert got >= truth, eps
        assert got <= truth + mp.mpf(1e-14), (eps, float(got))


def test_envelope_p_masses_come_from_the_p_side_where_q_masses_are_subnormal() -> None:
    # helper-43: compose(oue(700), grr(745, 5)) holds outcomes with P = 0.5 and a Q-mass that
    # underflowed (true ~1e-628), raised to the least subnormal 5e-324, at loss −1445 and −745.
    # symmetrize rebuilt their P-masses as q·e^{−ℓ}: 1.8e304 and 1.75 (and 3.5x the true P at
    # loss −45), and the mixtures built on it read δ(0) = (1, 1): poisson_subsample(·, 0.5)
    # .symmetric for the true 0.5 and subsample(·, 0.9) for 0.9. Reference: the exact pairs of
    # OUE (WBLJ 2017: bits Bern(1/2) vs Bern(1/(e^ε + 1)), swapped on the second bit) and GRR
    # in mpmath, with the hulls of the definitions (exact_sums).
    import mpmath as mp

    mp.mp.dps = 2000
    e1, e2 = mp.mpf(700), mp.mpf(745)
    h, qo = mp.mpf(1) / 2, 1 / (mp.exp(e1) + 1)
    oue = ([h * qo, h * (1 - qo), h * qo, h * (1 - qo)],
           [qo * h, qo * h, (1 - qo) * h, (1 - qo) * h])
    pg, qg = mp.exp(e2) / (mp.exp(e2) + 4), 1 / (mp.exp(e2) + 4)
    grr = ([pg, qg, 3 * qg], [qg, pg, 3 * qg])
    joint = mp_joint([oue, grr])
    bp = mp_breakpoints([p for p, _ in joint], [q for _, q in joint])
    sp, sq = mp_hull_pair(bp + [(y, x) for x, y in bp])  # symmetrize
    assert sq[0] < mp.mpf("1e-1900")  # the hull's +∞ atom: working precision, not mass
    sq = [mp.mpf(0)] + sq[1:]
    s = symmetrize(fdp.compose(fdp.mechanisms.oue(700.0), fdp.mechanisms.grr(745.0, 5)))

    def pair_delta(pm: list[Any], qm: list[Any], eps: float) -> Any:
        x = mp.exp(mp.mpf(eps))
        return mp.fsum(max(q - x * p, 0) for p, q in zip(pm, qm, strict=True))

    # the P-masses: each at most its truth (they hold 1 in all), none at 1.8e304
    p, q, loss = s._masses
    assert float(p.sum()) <= 1.0 + 1e-12
    for ell in (-1445.0, -745.0, -45.0):
        t = mp.fsum(a for a, b in joint if abs(mp.log(b / a) - ell) < 1)
        got = float(p[loss == ell].sum())
        assert t > 0 and mp.mpf(got) <= t * (1 + mp.mpf(1e-12)), (ell, got, t)
    # the symmetrized curve itself: δ(0), f(α) on the conservative side, ε(1e-300)
    lo, hi = s.delta_bracket(0.0)
    truth = pair_delta(sp, sq, 0.0)
    assert mp.mpf(lo) <= truth <= mp.mpf(hi), (lo, hi)
    pts = mp_breakpoints(sp, sq)
    for a in (0.0, 1e-300, 1e-100, 0.25, 0.5, 0.75, 1.0):
        assert mp.mpf(float(s(a))) <= _mp_pl_eval(pts, mp.mpf(a)), a
    elo, ehi = s.epsilon_bracket(1e-300)
    assert elo <= 1445.0 + 1e-9 and ehi >= 1444.0, (elo, ehi)
    # Poisson subsampling's symmetric curve (theory §7) at rate 1/2, and C_p at p = 0.9
    r = mp.mpf(0.5)
    truth = pair_delta(*mp_poisson_symmetric_of(sp, sq, r), 0.0)
    assert abs(truth - r) < mp.mpf(1e-290)
    lo, hi = fdp.poisson_subsample(s, 0.5).symmetric.delta_bracket(0.0)
    assert mp.mpf(lo) <= truth <= mp.mpf(hi), (lo, hi)
    truth = pair_delta(*mp_subsampled_pair([(sp, sq)], mp.mpf(0.9)), 0.0)
    lo, hi = subsample(s, 0.9).delta_bracket(0.0)
    assert mp.mpf(lo) <= truth <= mp.mpf(hi), (lo, hi)


def test_envelope_p_masses_stay_within_the_parts_where_q_masses_are_subnormal() -> None:
    # helper-43 (a hunt, seed 1187): with Q-masses raised to the least subnormal the parts'
    # lines are not continuous at their own kinks, and the changes of A along the top part did
    # not telescope: symmetrize held P-masses 0.861 at loss −744.3 and 0.894 at −1474.4 (Σ 1.76),
    # and subsample(·, 0.5) read δ(0) 0.878 for the exact 0.5. Reference: the exact product of
    # the float pairs in mpmath, its symmetrization and C_p from the definitions (exact_sums).
    import mpmath as mp

    mp.mp.dps = 1500
    prs = [([0.9948198955154715, 5.33e-321, 0.005180104484528588],
            [1.0476655191452154e-300, 0.13811140273272712, 0.8618885972672728]),
           ([0.8988469199611789, 0.10115308003882102], [6.023980115630723e-301, 1.0]),
           ([1.0, 1.2144e-320], [1.146e-320, 1.0])]
    s = symmetrize(fdp.compose(*[fdp.from_distributions(p, q) for p, q in prs]))
    p, _, _ = s._masses
    assert float(p.sum()) <= 1.0 + 1e-12
    joint = mp_joint([mp_pair(p, q) for p, q in prs])
    bp = mp_breakpoints([a for a, _ in joint], [b for _, b in joint])
    sp, sq = mp_hull_pair(bp + [(y, x) for x, y in bp])
    assert sq[0] < mp.mpf("1e-1400")  # working precision, not mass
    sq = [mp.mpf(0)] + sq[1:]
    for rate in (0.5, 0.9):
        truth = mp.fsum(max(b - a, 0) for a, b in zip(
            *mp_subsampled_pair([(sp, sq)], mp.mpf(rate)), strict=True))
        lo, hi = subsample(s, rate).delta_bracket(0.0)
        assert mp.mpf(lo) <= truth <= mp.mpf(hi), (rate, lo, hi)
        lo, hi = poisson_subsample(s, rate).symmetric.delta_bracket(0.0)
        assert mp.mpf(lo) <= truth <= mp.mpf(hi), (rate, lo, hi)


def test_subsample_of_bracketed_mixture_upper_from_its_upper_side() -> None:
    # helper-44 (hunt seed 400152): subsample of a Poisson add pair of a bracket (a Mixture,
    # kind "bracket" but not a Bracketed) took its upper curve from the mixture's own values,
    # which are its lower curve's: the group's bracket here is [0, 1 − α], and the upper curve
    # read 1 − 1.5e-6 at α = 1e-6 for the exact 1 − 1e-6, the lower end of δ(0)'s bracket
    # 5e-7 for the exact 5.5e-202. Reference: the exact pair of the exponential mechanism in
    # mpmath, its group curve's breakpoints, p f + (1 − p) Id, and min{f_p, f_p⁻¹}**.
    import mpmath as mp

    mp.mp.dps = 600  # (the masses reach e^{−750}, the outcomes' δ 1e-218)
    u = [mp.mpf(x) for x in (-1.0, -1500.0, 0.5)]
    v = [mp.mpf(x) for x in (-2.0, -1500.8258208876587, 0.5)]

    def softmax(w: list[Any]) -> list[Any]:
        z = [mp.exp(300 * x) for x in w]  # (ε u / 2Δ, ε = 600, Δ = 1)
        s = mp.fsum(z)
        return [x / s for x in z]

    g = mp_group_points(mp_breakpoints(softmax(u), softmax(v)), 3)
    mix = [(a, (b + 1 - a) / 2) for a, b in g]
    r = mp.mpf(1e-6)
    fp = [(a, r * b + (1 - r) * (1 - a)) for a, b in mix]
    pm, qm = mp_hull_pair(fp + [(b, a) for a, b in fp])
    hull = [(mp.fsum(pm[: i + 1]), 1 - mp.fsum(qm[: i + 1])) for i in range(len(pm))]

    h = subsample(poisson_subsample(group(fdp.mechanisms.exponential(
        [-1.0, -1500.0, 0.5], [-2.0, -1500.8258208876587, 0.5], 600.0), 3), 0.5).add, 1e-6)
    for eps in (0.0, 5.000001250000416e-07, 1.0):
        truth = mp_delta([(pm, qm)], mp.mpf(eps))
        lo, hi = h.delta_bracket(eps)
        assert mp.mpf(lo) <= truth <= mp.mpf(hi)
    assert 0 < mp_delta([(pm, qm)], mp.mpf(0)) < mp.mpf("1e-200")
    for a in (1e-12, 1e-6, 0.5, 0.999999):
        truth = _mp_pl_eval(hull, mp.mpf(a))
        assert mp.mpf(float(h(a))) <= truth <= mp.mpf(float(h.upper(a)))
    # the same upper side in symmetrize (and group, poisson_subsample) of such a mixture:
    # symmetrize's lower end of δ(0) read 0.5 for the exact 5.5e-196
    sm, sq = mp_hull_pair(mix + [(b, a) for a, b in mix])
    sym_hull = [(mp.fsum(sm[: i + 1]), 1 - mp.fsum(sq[: i + 1])) for i in range(len(sm))]
    s = symmetrize(poisson_subsample(group(fdp.mechanisms.exponential(
        [-1.0, -1500.0, 0.5], [-2.0, -1500.8258208876587, 0.5], 600.0), 3), 0.5).add)
    for eps in (0.0, 1.0):
        truth = mp_delta([(sm, sq)], mp.mpf(eps))
        lo, hi = s.delta_bracket(eps)
        assert mp.mpf(lo) <= truth <= mp.mpf(hi)
    for a in (1e-6, 0.5):
        assert _mp_pl_eval(sym_hull, mp.mpf(a)) <= mp.mpf(float(s.upper(a)))


def test_from_distributions_keeps_masses_that_sum_to_one() -> None:
    # helper-44 (hunt seed 400049): P sums to 1 exactly but p.sum() is 1 − 2⁻⁵³; dividing by it
    # raised every P-mass and lowered every loss by 1.1e-16, uncharged, and δ at ε 0.8 ulp
    # below the joint loss 2 log(q₁/p₁) read 4.8392562335772e-07 for the exact
    # 4.839256233607346e-07. Reference: Σ (Q − e^ε P)₊ over the joint outcomes in mpmath.
    import mpmath as mp

    mp.mp.dps = 60
    p = [0.25131502045587367, 0.19959088252483922, 2.220446049250313e-16,
         0.04909409701928696, 0.4999999999999999, 3.469446951953614e-17]
    q = [0.2462833297765932, 0.25371642826056545, 2.419628412826502e-07, 0.0, 0.5,
         6.371572411659979e-17]
    assert mp.fsum(map(mp.mpf, p)) == 1 and float(np.sum(p)) != 1.0
    pair = mp_pair(p, q)
    h = fdp.compose((fdp.from_distributions(p, q), 1), repeat=2)
    for eps in (0.47989507016210936, 0.0, 1.0, 20.8):
        truth = mp_delta([pair, pair], mp.mpf(eps))
        lo, hi = h.delta_bracket(eps)
        assert mp.mpf(lo) <= truth <= mp.mpf(float(h.delta(eps)))
        assert truth <= mp.mpf(hi)


def test_envelope_inverse_charges_derived_p_masses() -> None:
    # helper-46: min{f, g}** of two products of pairs with masses near 1e-300 takes its P-masses
    # from Q-masses and losses (q e^{−ℓ}, or on the P-side where q is subnormal), which sum to
    # 1 − 2.3e-13 here; its inverse swapped them into its Q-masses uncharged and read δ(ε)'s
    # upper end 0.9999999999997687 for the exact 1 − 1.2e-309 at every ε (−5 to 20). The
    # same side as subsample(symmetrize(compose(…)), 0.9).delta_bracket(−1) (1.7e-13 low
    # before the mixtures charged it). Reference: the exact pairs in mpmath, the hull of both
    # products' breakpoints, mirrored (and C_p's hull of f_p and f_p⁻¹ for the subsample).
    import mpmath as mp

    mp.mp.dps = 800  # (masses down to 1e-640)

    def prod_points(a: tuple[list[float], list[float]], b: tuple[list[float], list[float]]
                    ) -> list[tuple[Any, Any]]:
        joint = mp_joint([mp_pair(*a), mp_pair(*b)])
        return mp_breakpoints([x for x, _ in joint], [y for _, y in joint])

    def hull(pts: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        pm, qm = mp_hull_pair(pts + [(mp.mpf(0), mp.mpf(1)), (mp.mpf(1), mp.mpf(0))])
        return [(mp.fsum(pm[: i + 1]), 1 - mp.fsum(qm[: i + 1])) for i in range(len(pm))]

    a1 = ([2.869614398969613e-308, 3.61896750578563e-310, 1.0],
          [0.9136429725548911, 0.08635702744510887, 3.7534e-319])
    b1 = ([0.9589804149235308, 0.04101958507646919], [7.764858439e-313, 1.0])
    a2 = ([0.3820970645271843, 0.6179029354728157, 5.122992830881445e-299],
          [6.957910725828994e-300, 6.564692361272133e-304, 1.0])
    b2 = ([0.056007046220187706, 0.9439929537798123], [5.415230028180601e-297, 1.0])
    env = min_envelope(fdp.compose(fdp.from_distributions(*a1), fdp.from_distributions(*b1)),
                       fdp.compose(fdp.from_distributions(*a2), fdp.from_distributions(*b2)))
    mirrored = hull([(y, x) for x, y in hull(prod_points(a1, b1) + prod_points(a2, b2))])
    inv = env.inverse()
    for eps in (-5.0, -1.0, -1e-3, 0.0, 1.0, 20.0):
        truth = mp_points_delta(mirrored, mp.mpf(eps))
        lo, hi = inv.delta_bracket(eps)
        assert mp.mpf(lo) <= truth <= mp.mpf(hi), (eps, lo, hi)
        assert truth <= mp.mpf(float(inv.delta(eps)))

    # the reported case: C_0.9 of a symmetrized product, and the Poisson symmetric curve
    pa = ([0.759015954440119, 0.24098404555988082, 1.3037956573996698e-301],
          [1.825e-320, 2.512514541362198e-300, 1.0])
    pb = ([0.98478185548326, 0.01521814451673997], [2.958645778684425e-301, 1.0])
    f = prod_points(pa, pb)
    s = hull(f + [(y, x) for x, y in f])
    rate = mp.mpf(0.9)
    fp = [(x, rate * y + (1 - rate) * (1 - x)) for x, y in s]
    c = hull(fp + [(y, x) for x, y in fp])
    sym = symmetrize(fdp.compose(fdp.from_distributions(*pa), fdp.from_distributions(*pb)))
    for h in (subsample(sym, 0.9), poisson_subsample(sym, 0.9).symmetric):
        for eps in (-5.0, -1.0, -1e-3, 0.0):
            truth = mp_points_delta(c, mp.mpf(eps))
            lo, hi = h.delta_bracket(eps)
            assert mp.mpf(lo) <= truth <= mp.mpf(hi), (eps, lo, hi)


def test_symmetrize_poisson_add_kink_at_least_subnormal_alpha() -> None:
    # A hunt (seed 401668): P[0] = 5e-324 with next kinks at 4.05e-320, 3.6e-304, …; the hull's
    # slopes (−2.6e322, −5.8e317) both overflowed to −∞ in lower_hull_c, the kink
    # (5e-324, 0.86904296875) was dropped, and symmetrize(poisson_subsample(·, 0.9).add) read
    # f(5e-324) = 0.99983 for the true 0.86904 (above it). Reference: exact fractions from the
    # definitions (pair (P, 0.1 P + 0.9 Q), lower hull of its breakpoints and their mirrors).
    from fractions import Fraction as Fr

    P = [
        5e-324, 0.66796875, 0.33203124999999994, 5.551115123125782e-17, 6.162975822039154e-33,
        6.84227765783602e-49, 7.596454196607838e-65, 8.433758354584418e-81, 9.363352709384396e-97,
        1.0395409765644898e-112, 1.1541223272232168e-128, 1.2813331809171844e-144,
        1.4225655996704494e-160, 1.579365082793826e-176, 1.7534474792067222e-192,
        1.9467177638862434e-208, 2.1612908839133065e-224, 2.3995149022330093e-240,
        2.6639966923902683e-256, 2.9576304654169364e-272, 3.2836294410387006e-288,
        3.6455610097781983e-304, 4.047e-320,
    ]
    Q = [0.1455078125, 0.439453125] + [0.012969970703125] * 10 + [0.02593994140625] * 11
    r = Fr(0.9)
    A = [Fr(x) for x in P]
    B = [(1 - r) * Fr(x) + r * Fr(y) for x, y in zip(P, Q, strict=True)]
    pts, sa, sb = [(Fr(0), Fr(1))], Fr(0), Fr(0)
    for i in sorted(range(len(A)), key=lambda i: -(B[i] / A[i])):
        sa, sb = sa + A[i], sb + B[i]
        pts.append((sa, 1 - sb))
    hull: list[tuple[Any, Any]] = []
    for pt in sorted(set(pts + [(y, x) for x, y in pts])):
        while len(hull) >= 2 and ((hull[-1][0] - hull[-2][0]) * (pt[1] - hull[-2][1])
                                  - (hull[-1][1] - hull[-2][1]) * (pt[0] - hull[-2][0])) <= 0:
            hull.pop()
        hull.append(pt)

    def truth(x: Any) -> Any:
        for (x0, y0), (x1, y1) in zip(hull, hull[1:], strict=False):
            if x0 <= x <= x1:
                return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
        raise AssertionError(x)

    base = fdp.from_distributions(P, Q)
    curves = [fdp.symmetrize(fdp.poisson_subsample(base, 0.9).add), fdp.subsample(base, 0.9)]
    for c in curves:
        for alpha in (5e-324, 1e-323, 1e-320, 4e-320, 1e-310, 1e-300, 0.3):
            assert Fr(float(c(alpha))) <= truth(Fr(alpha)), (c, alpha)
    assert truth(Fr(5e-324)) < Fr(0.87)



def test_group_of_poisson_inverse_lower_end_against_exact_sums() -> None:
    # helper-48, hunt seed 402124: group of a curve with its own optimistic reading read that
    # reading from its points, which the lower side caps left of and below the true kinks
    # (_left_below); two kinks 5e-13 apart at α ≈ 0.489 merged into a point 3.3e-14 below the
    # exact curve, and δ(0)'s lower end read 2.0530e-12 for the exact 2.0453e-12. Reference:
    # the group operator on the exact pair's breakpoints in mpmath (exact_sums), not fdp
    import mpmath as mp

    p = [0.2783861671468246, 0.011239193083567453, 0.2103746397693395, 9.094947017729282e-13,
         0.4999999999993589, 1.3877787807814457e-17]
    q = [4.512761638637904e-07, 0.04251382484527996, 0.14787417337488684, 0.3096115505036693,
         0.5, 4.592919689456196e-17]
    rate = 1e-12
    f = fdp.from_distributions(p, q)
    g = group(fdp.poisson_subsample(group(f, 2), rate).add.inverse(), 3)
    eps = [0.0, 5.941825155354216e-13, 8.912737733069788e-13, 1e-12, 1.5941808934947107e-12]
    lo, hi = g.delta_bracket(np.array(eps))
    with mp.workdps(60):
        pm, qm = mp_pair(p, q)
        a, b = mp_hull_pair(mp_group_points(mp_breakpoints(pm, qm), 2))
        r = mp.mpf(rate)
        m = [(1 - r) * x + r * y for x, y in zip(a, b, strict=True)]
        # the add pair is (A, (1 − r)A + rB); its inverse swaps it
        pts = mp_group_points(mp_breakpoints(m, a), 3)
        for e, lo_e, hi_e in zip(eps, lo, hi, strict=True):
            ref = mp_points_delta(pts, mp.mpf(e))
            assert lo_e <= ref <= hi_e, (e, lo_e, float(ref), hi_e)


def test_inverse_of_a_mixture_at_rate_one_or_zero() -> None:
    # poisson_subsample(m, 1.0).add is m; its inverse was the generic Inverse, whose
    # 1 − e^ε + e^ε δ(−ε) cancels to its allowance beyond the largest loss: with m a mixture of
    # a pair whose losses reach −31.2, δ(1000) read 0.338 at both ends for the exact 0 and
    # ε(1e-10) ∞ for 31.19 (hunt seed 402783). The reference: the inverse pair (Q', P') of
    # the mixture Q' = rQ + (1 − r)P, P' = P, in mpmath from the float masses.
    p = [0.33809166040571, 0.16190833959429, 0.5, 2.7755575615628914e-17]
    q = [7.888609052210118e-31, 0.4013671875, 0.5986328124999999, 1.1102230246251487e-16]
    r = 0.9999999999999716
    curve = fdp.poisson_subsample(
        fdp.poisson_subsample(fdp.from_distributions(p, q), r).add, 1.0).add.inverse()
    import mpmath as mp

    with mp.workdps(60):
        pm, qm = mp_pair(p, q)
        rr = mp.mpf(r)
        qmix = [rr * b + (1 - rr) * a for a, b in zip(pm, qm, strict=True)]
        inv = [(qmix, pm)]  # the inverse's (P, Q)
        for eps in (0.0, 5.0, 20.0, 31.0, 31.19, 35.0, 1000.0):
            lo, hi = curve.delta_bracket(eps)
            exact = mp_delta(inv, eps)
            assert lo <= exact <= hi, (eps, lo, float(exact), hi)
        for d in (1e-3, 1e-10, 1e-300, 5e-324):
            lo, hi = curve.epsilon_bracket(d)
            exact = mp_eps(inv, d, top=100.0)
            assert lo <= exact <= hi * (1 + 1e-12), (d, lo, float(exact), hi)
    ident = fdp.poisson_subsample(fdp.poisson_subsample(fdp.from_distributions(p, q), r).add,
                                  0.0).add.inverse()
    for eps in (0.0, 1.0, 50.0, 1000.0):
        assert ident.delta_bracket(eps) == (0.0, 0.0)


def test_subsample_keeps_an_atom_below_the_float_range() -> None:
    # C_p(f)'s +∞ atom is p·q_∞ (DRS Thm 4.2): 1e-12 · 1e-312 was rounded to 0, and
    # subsample(subsample(EpsDelta(10, 1e-300), 1e-12), 1e-12) read ε(0) = 4.4e-15 (pure DP)
    # where no finite ε has δ = 0. The atom's exact value: the product of the floats, in
    # mpmath; above every finite loss (ε = 100 > 10) δ is the atom alone.
    import mpmath as mp

    inner = fdp.subsample(fdp.EpsDelta(10.0, 1e-300), 1e-12)
    for outer in (fdp.subsample(inner, 1e-12), fdp.subsample(fdp.symmetrize(inner), 1e-12),
                  fdp.poisson_subsample(inner, 1e-12).add):
        assert outer.epsilon(0.0) == math.inf
        assert outer.epsilon_bracket(0.0)[1] == math.inf
        with mp.workdps(30):
            atom = mp.mpf(1e-12) * mp.mpf(1e-12) * mp.mpf(1e-300)
            lo, hi = outer.delta_bracket(100.0)
            assert lo <= atom <= hi, (outer, lo, hi)


def test_composed_mixture_keeps_an_atom_below_the_float_range() -> None:
    # The Poisson add pair's +∞ atom is p·q_∞; the engine's bins rounded it to nearest, so
    # 1e-12 · 1e-320 was 0 and compose(poisson_subsample(EpsDelta(0, 1e-320), 1e-12).add,
    # EpsDelta(1)) read ε(0) = 1.4 (δ = 0 beyond its losses) where no finite ε has δ = 0:
    # the composed atom is 1 − (1 − 1e-12 · 1e-320) > 0 (exact product, mpmath).
    import mpmath as mp

    for d, r in ((1e-320, 1e-12), (5e-324, 0.5), (1e-300, 1e-30)):
        add = fdp.poisson_subsample(fdp.EpsDelta(0.0, d), r).add
        h = fdp.compose(add, fdp.EpsDelta(1.0))
        assert h.epsilon(0.0) == math.inf
        with mp.workdps(30):
            atom = mp.mpf(r) * mp.mpf(d)
            assert h.delta_bracket(math.inf)[1] >= atom
            assert h.delta_bracket(50.0)[1] >= atom


def test_p_only_outcomes_merge_into_an_atom_rounded_up() -> None:
    # The P-only outcomes (loss −∞) of a pair merge into one, whose P-mass is the inverse's +∞
    # atom; summed to nearest, 0.212… + 0.5 + 1.4e-17 lost its last term, and the symmetrized
    # curve read ε(0.7120082815734989) = 8.6e-15 where the exact atom exceeds that δ, so the
    # true ε is ∞ (hunt seed 403721). The exact atom: a sum of the floats as rationals.
    from fractions import Fraction

    p = [0.21200828157349894, 0.10600414078674948, 0.18198757763975157, 0.5,
         1.3877787807814457e-17]
    q = [0.0, 0.25, 0.75, 0.0, 0.0]
    assert sum(Fraction(x) for x in p) == 1
    atom = Fraction(p[0]) + Fraction(p[3]) + Fraction(p[4])
    f = fdp.from_distributions(p, q)
    for c in (f.inverse(), fdp.symmetrize(f)):
        assert Fraction(c.delta_bracket(1e-12)[1]) >= atom
        assert Fraction(c.delta_bracket(50.0)[1]) >= atom
        assert c.epsilon(float(atom)) == math.inf


def test_poisson_subsample_at_rate_one_is_the_curve_and_its_symmetrization() -> None:
    # At rate 1 add = remove = f and the symmetric curve is min{f, f⁻¹}**. Built the general
    # way, the symmetric curve of s = subsample(group(f_{0.1, 1e-10}, 2), 0.999), an envelope,
    # read δ(0.1998)'s lower end 2.10308e-10 for the exact 2.10307e-10 (hunt seed 405399).
    # The reference: the exact group points (DRS Thm 2.14), C_p of their pair (DRS Thm 4.2)
    # and the Poisson pairs of that (theory §7), in mpmath.
    import mpmath as mp

    s = fdp.subsample(fdp.group(fdp.from_eps_delta([0.1], [1e-10]), 2), 0.999)
    with mp.workdps(60):
        d, x = mp.mpf(1e-10), (1 - mp.mpf(1e-10)) / (1 + mp.exp(mp.mpf(0.1)))
        pts = [(mp.mpf(0), 1 - d), (x, x), (1 - d, mp.mpf(0)), (mp.mpf(1), mp.mpf(0))]
        g = mp_hull_pair(mp_group_points(pts, 2))
        sp = mp_subsampled_pair([g], 0.999)
        for rate in (1.0, 0.9):
            pp = fdp.poisson_subsample(s, rate)
            sym = mp_poisson_symmetric_of(*sp, mp.mpf(rate))
            r = mp.mpf(rate)
            add = (sp[0], [(1 - r) * a + r * b for a, b in zip(*sp, strict=True)])
            for curve, pair in ((pp.symmetric, sym), (pp.add, add)):
                for eps in (0.0, 0.1, 0.19981871432182233, 0.3):
                    lo, hi = curve.delta_bracket(eps)
                    exact = mp_delta([pair], eps)
                    assert lo <= exact <= hi, (rate, curve, eps, lo, float(exact), hi)

"""Huge privacy losses (ε ≳ 700, where e^{−ε} underflows in float64) and perfectly revealing
components, against closed forms in mpmath: randomized response composed k times has
δ(ε') = Σ_j C(k, j) s^{k−j} r^j (1 − e^{ε' − (k − 2j)ε})₊, s = 1/(1 + e^{−ε}), r = 1 − s."""

from __future__ import annotations

import math
import warnings

import pytest

import fdp

from ._ref import GaussRef, M, mp


def _rr_power_delta(eps: float, k: int, e: object) -> object:
    E = M(eps)
    s = 1 / (1 + mp.exp(-E))
    r = mp.exp(-E) / (1 + mp.exp(-E))
    return mp.fsum(mp.binomial(k, j) * s ** (k - j) * r**j * max(0, 1 - mp.exp(M(e) - (k - 2 * j) * E))
                   for j in range(k + 1))


def _rr_power_epsilon(eps: float, k: int, d: float) -> object:
    # above (k − 2)ε only the top outcome is left: δ = s^k (1 − e^{ε' − kε})
    E = M(eps)
    s = 1 / (1 + mp.exp(-E))
    return k * E + mp.log(1 - M(d) / s**k)


@pytest.mark.parametrize(("eps", "k"), [(350.0, 3), (800.0, 1), (800.0, 3), (5000.0, 2)])
def test_randomized_response_huge_eps(eps: float, k: int) -> None:
    """rr(ε) for ε > 700 read as perfectly revealing (ε = ∞: q = e^{−ε}p underflowed); its
    numeric composition then had a lower curve of NaN masses and a conservative ε of 0, and
    rr(350)^3's optimistic end was 0 (a tilt of 1e84 whose untilting factor underflowed was
    taken as an error bound of 0 on a value of 0)."""
    f = fdp.mechanisms.randomized_response(eps)
    h = fdp.compose(f, repeat=k, numeric=True) if k > 1 else f
    bulk = fdp.compose(f, repeat=k, numeric=True) if k > 1 else f
    if k > 1:
        h.deepen()  # the deep grid (the bulk one is checked against tol below)
    with mp.workdps(40):
        for d in (1e-3, 1e-8):
            want = _rr_power_epsilon(eps, k, d)
            assert abs(_rr_power_delta(eps, k, want) - M(d)) < M(1e-25)  # (self-check)
            if k > 1:
                lo, hi = h.epsilon_bracket(d)
                assert M(float(lo)) <= want <= M(float(hi)), (d, lo, want, hi)
                assert hi - lo <= 1e-9 * hi
                lo, hi = bulk.epsilon_bracket(d)
                assert M(float(lo)) <= want <= M(float(hi)), (d, lo, want, hi)
                assert hi - lo <= 1e-3 * hi
            else:
                got = M(float(h.epsilon(d)))
                assert abs(got - want) <= M(1e-12) * want, (d, got, want)


def test_perfectly_revealing_component() -> None:
    """Composing with a perfectly revealing pair (P ⊥ Q) reveals: ε = ∞ at every δ < 1 on both
    ends (the conservative ε read 0 before)."""
    rev = fdp.from_distributions([1.0, 0.0], [0.0, 1.0])
    for h in (fdp.compose(fdp.Gaussian(5.0), rev, numeric=True),
              fdp.compose(rev, repeat=3, numeric=True)):
        for d in (0.5, 1e-5, 1e-300):
            lo, hi = h.epsilon_bracket(d)
            assert math.isinf(lo) and math.isinf(hi)
        assert float(h.delta(1e4)) == 1.0
        assert float(h(0.3)) == 0.0


def test_nested_composition_of_huge_losses() -> None:
    """An engine curve whose finite losses are all huge (G_35 ⊗ G_35: 450 to 2000) composed
    again: its values read 0 from α = 0 on (P-masses below 1e-196), which the engine took for a
    perfectly revealing component, and the result was [0, ∞] with no warning (found by a hunt
    against mpmath). Now the grid's end, and the component's own ε as the lower end where the
    grid reads 0: both around the exact G_√(2·35² + 0.001²)."""
    inner = fdp.compose(fdp.Gaussian(35.0), fdp.Gaussian(35.0), numeric=True)
    ref = GaussRef(mp.sqrt(2 * M(35) ** 2 + M("0.001") ** 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", fdp.AccuracyWarning)  # (within tol: no warning)
        h = fdp.compose(inner, fdp.Gaussian(0.001))
        lo, hi = h.epsilon_bracket(1e-5)
    want = ref.epsilon(M("1e-5"))
    assert 0 < M(float(lo)) <= want <= M(float(hi)) <= want * (1 + M("1e-3")), (lo, want, hi)
    d_lo, d_hi = h.delta_bracket(1400.0)
    assert 0 < M(float(d_lo)) <= ref.delta(1400) <= M(float(d_hi)), (d_lo, d_hi)
    # (it was 48 % wide, the lower end inner's own ε: the optimistic side read inner's
    # breakpoints, lifted by its offset; now its masses with the offset as slack charges)
    lo2, hi2 = (inner @ inner).epsilon_bracket(1e-5)
    want2 = GaussRef(70).epsilon(M("1e-5"))
    assert M(float(lo2)) <= want2 <= M(float(hi2)) <= want2 * (1 + M("1e-3")), (lo2, hi2)


@pytest.mark.parametrize("delta", ["1e-10", "1e-20", "1e-30"])
def test_nested_gaussian_composition_deep_tail(delta: str) -> None:
    """A numeric composition composed again: the outer optimistic side read the inner
    bracket's optimistic breakpoints, lifted by a constant offset (8e-19), and at δ ≤ 1e-18
    only the inner curve's own ε was left as the lower end: [10.0318, 10.6520] at 1e-30
    (5.8 %). The inner curve's masses now compose with its offset as slack charges (its
    offset falls to 5e-51 at ε ≥ 6). Reference: G_√(0.25 + 0.49 + 0.09) in mpmath."""
    inner = fdp.compose(fdp.Gaussian(0.5), fdp.Gaussian(0.7), numeric=True)
    h = fdp.compose(inner, fdp.Gaussian(0.3), numeric=True)
    ref = GaussRef(mp.sqrt(M("0.83")))
    lo, hi = h.epsilon_bracket(float(delta))
    want = ref.epsilon(M(delta))
    assert M(float(lo)) <= want <= M(float(hi)), (lo, want, hi)
    assert hi - lo <= 1e-3 * hi
    d_lo, d_hi = h.delta_bracket(hi)
    assert M(float(d_lo)) <= ref.delta(M(float(hi))) <= M(float(d_hi))
    if float(delta) < 1e-12:  # (the deep grid; issue 13: δ within 1 %)
        assert d_hi - d_lo <= 0.01 * d_hi


def test_composing_an_engine_optimistic_curve_is_consistent() -> None:
    """A bracket's optimistic curve (``h.upper``) composed as an exact curve: the grid read its
    breakpoints (the masses' curve lifted by a constant offset, δ = 0 beyond ε ≈ 7.7), while
    its own δ(10) = 1.5e-30 (a smaller offset at large ε) became the composition's lower end:
    the bracket of δ(10) was inverted, [1.5e-30, 1.1e-32]. Its certified lower curve is now
    its masses' curve. Reference: the exact composition of those masses with G_0.3 in mpmath,
    Σ_j q_j E[(1 − e^{ε − ℓ_j − L})₊] with L ~ N(μ²/2, μ²) (G_μ's loss under Q), plus q_∞."""
    u = fdp.compose(fdp.Gaussian(0.5), fdp.Gaussian(0.7), numeric=True).upper
    _, q, loss = u._given_masses
    c = fdp.compose(u, fdp.Gaussian(0.3), numeric=True)
    mu = M(0.3)
    for eps in (6.0, 8.0, 10.0):
        e = M(eps)
        ref = M(u._mass_qinf) + mp.fsum(
            M(qj) * (mp.ncdf((mu**2 / 2 + M(lj) - e) / mu)
                     - mp.exp(e - M(lj)) * mp.ncdf((mu**2 / 2 + M(lj) - e) / mu - mu))
            for qj, lj in zip(q.tolist(), loss.tolist(), strict=True) if qj > 0)
        lo, hi = c.delta_bracket(eps)
        assert lo <= hi, (eps, lo, hi)
        assert M(hi) >= ref * (1 - M(1e-9)), (eps, hi, ref)  # the masses' composition


def test_from_eps_delta_huge_eps_matches_family() -> None:
    for eps in (800.0, 5000.0):
        f, g = fdp.from_eps_delta(eps, 1e-6), fdp.EpsDelta(eps, 1e-6)
        for d in (1e-5, 0.3):
            assert abs(f.epsilon(d) - g.epsilon(d)) <= 1e-12 * eps


@pytest.mark.parametrize(("eps", "delta0"), [(800.0, 0.0), (800.0, 1e-6), (5000.0, 0.0),
                                             (30.0, 1e-9)])
def test_from_eps_delta_inverse_is_itself(eps: float, delta0: float) -> None:
    """Implied curves are symmetric (each f_{ε,δ} is; DRS Prop 2.12), so the inverse is the curve.
    The inverse built by swapping breakpoints lost the losses beyond e^700:
    from_eps_delta(800, 0).inverse() read ε = ∞ at δ = 1e-5 where the truth is 800 − 1e-5."""
    f = fdp.from_eps_delta(eps, delta0)
    g = f.inverse()
    # f_{ε0,δ0}: δ(ε) = δ0 + (1 − δ0) q₊ (1 − e^{ε−ε0}) on [−ε0, ε0], q₊ = e^{ε0}/(1 + e^{ε0})
    d = 1e-5
    with mp.workdps(60):
        e0, dd, d0 = M(eps), M(d), M(delta0)
        qp = 1 / (1 + mp.exp(-e0))
        exact = e0 + mp.log(1 - (dd - d0) / ((1 - d0) * qp))
    got = float(g.epsilon(d))
    assert exact <= got <= float(exact) + 1e-12 * eps  # conservative, and tight
    assert g.is_symmetric and float(g(0.25)) == float(f(0.25))


@pytest.mark.parametrize("eps", [350.0, 800.0, 5000.0])
def test_exact_products_huge_eps(eps: float) -> None:
    """The exact paths (binomial power, product of masses) read the +∞ atom from evaluation,
    which also holds the segments whose P-mass underflowed: counted twice, rr(800)^3 had an atom
    of 2 and ε = ∞. Reference: the closed forms above."""
    f = fdp.mechanisms.randomized_response(eps)
    h = fdp.compose(f, repeat=3)
    with mp.workdps(40):
        for d in (1e-3, 1e-8):
            got = M(float(h.epsilon(d)))
            want = _rr_power_epsilon(eps, 3, d)
            assert want <= got <= want * (1 + M(1e-12)), (d, got, want)
        # rr(ε) ⊗ grr(ε, 4): the top outcome has Q-mass s·1/(1 + 3e^{−ε}) at loss 2ε
        g = fdp.compose(f, fdp.mechanisms.randomized_response(eps, 4))
        E = M(eps)
        top = 1 / (1 + mp.exp(-E)) / (1 + 3 * mp.exp(-E))
        want = 2 * E + mp.log(1 - M(1e-3) / top)
        got = M(float(g.epsilon(1e-3)))
        assert want <= got <= want * (1 + M(1e-12)), (got, want)


def test_dpsgd_tiny_noise_against_binomial_mixture() -> None:
    """dpsgd(1e-4, 0.01, 10): per-step μ = 10⁴. It crashed ('Weights w must be strictly
    positive': the optimistic lump reached _convexify with x = e^ℓ underflowed), and before
    that had an optimistic ε of 0.1 next to 1.5e8. Reference (exact to double precision here):
    with K ~ Bin(T, p) steps that sample the example (T = 10 here), the add direction's loss is
    K(log p + μ²/2) + (T − K) log(1 − p) + μ √K Z (every other term is below e^{−10⁷}), so
    δ(ε) = Σ_k P(K = k) [Φ(a) − e^{ε − m + s²/2} Φ(a − s)], a = (m − ε)/s, s = μ√k."""
    _check_tiny_noise(1e4, 0.01, 10)


@pytest.mark.parametrize(("mu", "p"), [(2e4, 0.5), (1e4, 0.5)])
def test_dpsgd_huge_grid_step(mu: float, p: float) -> None:
    """One step with μ = 2·10⁴: the grid step exceeds 709 and 1/expm1(h) overflowed
    (OverflowError, also from calibrate_dpsgd, which tries such σ on its way)."""
    _check_tiny_noise(mu, p, 1)


def test_accountant_huge_mu_gives_way_to_the_engine() -> None:
    # the fast path's lattice over a support of 8e7 would be 1.6e9 points (12 GiB)
    # Reference: one step's add pair, δ(ε) = p δ_{G_μ}(ε') with ε' = log(1 + (e^ε − 1)/p) (the
    # mixture identity), solved by bisection in mpmath; the remove pair's ε is at most
    # log(1/(1 − p)). dpsgd(σ, p, 1) answers from the same closed forms, the engine (which the
    # accountant gives way to) within its bracket
    a = fdp.Accountant()
    a.step(1e-4, 0.5)
    with mp.workdps(60):
        mu, p, target = M(1e4), M(0.5), mp.log(M(1e-5))

        def log_delta(e):  # noqa: ANN001, ANN202
            e1 = mp.log(1 + mp.expm1(e) / p)
            return mp.log(p * (mp.ncdf(-e1 / mu + mu / 2) - mp.e**e1 * mp.ncdf(-e1 / mu - mu / 2)))

        lo, hi = M(4e7), M(6e7)
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if log_delta(mid) > target else (lo, mid)
        truth = float(hi)
    got = a.epsilon(1e-5)
    assert truth * (1 - 1e-15) <= got <= truth * (1 + 1e-10), (got, truth)
    lo_d, hi_d = fdp.dpsgd(1e-4, 0.5, 1).epsilon_bracket(1e-5)
    assert lo_d <= truth * (1 + 1e-15) and truth * (1 - 1e-15) <= hi_d <= truth * (1 + 1e-12)


def test_calibration_through_huge_steps_returns_the_floor() -> None:
    # one step at p = 0.01: δ(0) ≤ p < 0.3, so every σ meets (ε = 3, δ = 0.3)
    assert fdp.calibrate_dpsgd(0.01, 1, eps=3, delta=0.3) == 1e-12


def _check_tiny_noise(mu: float, p: float, t: int) -> None:
    f = fdp.dpsgd(1.0 / mu, p, t)
    with mp.workdps(50):
        MU, P = M(mu), M(p)

        def delta(eps):  # noqa: ANN001, ANN202
            out = M(0)
            for k in range(1, t + 1):
                m = k * (mp.log(P) + MU**2 / 2) + (t - k) * mp.log(1 - P)
                s = MU * mp.sqrt(k)
                a = (m - eps) / s
                term = mp.ncdf(a) - mp.exp(eps - m + s**2 / 2 + mp.log(mp.ncdf(a - s)))
                out += mp.binomial(t, k) * P**k * (1 - P) ** (t - k) * term
            return out

        for d in (1e-5, 1e-8):
            lo, hi = f.epsilon_bracket(d)
            assert math.isfinite(hi) and hi - lo <= 1e-3 * hi, (d, lo, hi)
            assert delta(M(float(hi))) <= M(d) <= delta(M(float(lo))), (d, lo, hi)


@pytest.mark.parametrize("eps", [300.0, 360.0, 600.0, 800.0])
def test_group_of_huge_eps(eps: float) -> None:
    """hunt 5 (F1, F2): group(rr(ε), 2) computed kink by kink lost the second step once
    e^{−2ε} underflows (ε(1e-10) read 600 for rr(600), true 1200) and returned the identity
    for ε > 700 (perfect privacy). Now a bracket: f above, f_{2E,0} below (pure-DP group
    privacy), or exact where it fits. Reference: the mpmath pair's group operator."""
    from ._ref import PL

    E = M(eps)
    s, r = 1 / (1 + mp.exp(-E)), mp.exp(-E) / (1 + mp.exp(-E))
    with mp.workdps(60):
        ref = PL.from_dist([(E, r, s), (-E, s, r)]).group(2)
        g = fdp.group(fdp.mechanisms.randomized_response(eps), 2)
        for d in (1e-10, 1e-3):
            want = ref.epsilon(M(d))
            if hasattr(g, "epsilon_bracket"):  # bracketed: each end on its side
                lo, hi = g.epsilon_bracket(d)
                # (the optimistic end, not a guarantee, to the float noise of ε itself: an exact
                # curve's two ends are its conservative ε, whose losses carry their logs'
                # rounding, 2u(|log q| + |log p|), ~3e-16 relative here)
                assert M(float(lo)) <= want * (1 + M(4e-15)) and want <= M(float(hi)), (
                    d, lo, want, hi)
            else:  # exact: rounded up, to 1e-12
                got = M(float(g.epsilon(d)))
                assert want <= got <= want * (1 + M(1e-12)), (d, got, want)


@pytest.mark.parametrize("eps", [1.0, 800.0])
def test_symmetrize_mirror_pair(eps: float) -> None:
    # rr(ε) is its own inverse; at ε = 800 the hull of its breakpoints (kinks underflowed)
    # read it as perfectly revealing (ε = ∞). A pair whose masses mirror exactly is returned.
    f = fdp.mechanisms.randomized_response(eps)
    g = fdp.symmetrize(f)
    with mp.workdps(40):
        want = _rr_power_epsilon(eps, 1, 1e-3)
        got = M(float(g.epsilon(1e-3)))
        assert want <= got <= want * (1 + M(1e-12)), (got, want)

"""fdp.mechanisms against closed forms, independent products and seeded simulations."""

from __future__ import annotations

import math

import numpy as np
import pytest

import fdp
from fdp import mechanisms as M

GRID = np.linspace(0, 1, 1001)


def assert_axioms(f: fdp.TradeOff) -> None:
    y = np.asarray(f(GRID))
    assert np.all(y >= 0) and np.all(y <= 1 - GRID + 1e-12) and np.all(np.diff(y) <= 1e-12)
    assert np.all(y[:-2] + y[2:] - 2 * y[1:-1] >= -1e-10)


def test_laplace_and_gaussian() -> None:
    assert M.laplace(100, 50) == fdp.Laplace(2.0)
    assert M.gaussian(2.0, 4.0) == fdp.Gaussian(0.5)
    v = M.vector_laplace([0.3, 0.4], 1.0)
    lo, hi = v.epsilon_bracket(1e-6)
    # the exact curve dominates the L1-sensitivity bound L_{0.7}: its certified lower ε is below
    assert lo <= fdp.Laplace(0.7).epsilon(1e-6)
    assert np.all(v.upper(GRID) >= fdp.Laplace(0.7)(GRID) - 1e-12)
    cal = M.gaussian_calibration(0.5, 1e-5)
    assert cal["classical"] > cal["exact"] and cal["classical_valid"]
    assert fdp.gdp.delta(1 / cal["exact"], 0.5) == pytest.approx(1e-5, rel=1e-9)
    assert not M.gaussian_calibration(2.0, 1e-5)["classical_valid"]


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_grr_two_values_is_randomized_response(eps: float) -> None:
    np.testing.assert_allclose(M.grr(eps, 2)(GRID), fdp.EpsDelta(eps)(GRID), atol=1e-14)
    np.testing.assert_allclose(
        M.randomized_response(eps)(GRID), fdp.EpsDelta(eps)(GRID), atol=1e-14
    )


@pytest.mark.parametrize("eps", [0.5, 1.0, 4.0])
def test_sue_is_product_of_two_randomized_responses(eps: float) -> None:
    ref = fdp.EpsDelta(eps / 2) @ fdp.EpsDelta(eps / 2)  # exact product (independent route)
    np.testing.assert_allclose(M.sue(eps)(GRID), ref(GRID), atol=1e-13)


@pytest.mark.parametrize("oracle", [M.grr, M.sue, M.oue, M.blh, M.olh])
@pytest.mark.parametrize("eps", [0.5, 1.0, 2.5])
def test_oracles_are_tight_eps_ldp(oracle, eps: float) -> None:  # noqa: ANN001
    f = oracle(eps, 10) if oracle is M.grr else oracle(eps)
    assert f.dominates(fdp.EpsDelta(eps), tol=1e-12)
    assert f.epsilon(0.0) == pytest.approx(eps, rel=1e-12)  # touches: ε is tight
    assert f.is_symmetric
    assert_axioms(f)


def test_variances_match_paper_closed_forms() -> None:
    n, e = 10_000, 1.5
    E = math.exp(e)
    d = 20
    assert M.grr(e, d).variance(n) == pytest.approx(n * (E + d - 2) / (E - 1) ** 2, rel=1e-12)
    assert M.sue(e).variance(n) == pytest.approx(
        n * math.exp(e / 2) / (math.exp(e / 2) - 1) ** 2, rel=1e-12
    )
    assert M.oue(e).variance(n) == pytest.approx(n * 4 * E / (E - 1) ** 2, rel=1e-12)
    # OLH with g = e^ε + 1 exactly (e^ε integer + 1): variance n 4e^ε/(e^ε − 1)²
    e3 = math.log(3.0)
    assert M.olh(e3).variance(n) == pytest.approx(n * 4 * 3 / 4, rel=1e-12)


def test_grr_variance_by_simulation() -> None:
    rng = np.random.default_rng(12345)
    e, d, n, reps = 1.0, 4, 2000, 400
    o = M.grr(e, d)
    true = np.zeros(n, dtype=int)  # everyone holds value 0; estimate the count of value 1
    est = []
    for _ in range(reps):
        keep = rng.random(n) < o.p
        other = rng.integers(1, d, size=n)
        rep = np.where(keep, true, other)
        c = np.sum(rep == 1)
        est.append((c - n * o.q) / (o.p - o.q))
    v = np.var(est)
    se = v * math.sqrt(2 / (reps - 1))
    assert abs(v - o.variance(n)) < 4 * se  # true count of value 1 is 0: the formula is exact


def test_grr_curve_by_monte_carlo() -> None:
    # the likelihood-ratio test "reject when the report equals v₂" has α = q, β = 1 − p
    rng = np.random.default_rng(7)
    o = M.grr(1.0, 5)
    n = 200_000
    rep_p = np.where(rng.random(n) < o.p, 0, rng.integers(1, 5, size=n))
    alpha_hat = np.mean(rep_p == 1)
    assert abs(alpha_hat - o.q) < 4 * math.sqrt(o.q * (1 - o.q) / n)
    assert o(o.q) == pytest.approx(1 - o.p, abs=1e-12)


def test_catastrophe_is_eps_delta_but_not_eps() -> None:
    c = M.catastrophe(1.0, 1.0, 1e-3)
    assert c.delta(1.0) == pytest.approx(1e-3, abs=1e-15)  # (1, 1e-3)-DP
    assert c.delta(1e3) >= 1e-3 and c.epsilon(1e-4) == math.inf  # no finite ε at δ < 1e-3
    np.testing.assert_allclose(
        c(GRID),
        np.where(
            GRID <= 1 - 1e-3, (1 - 1e-3) * fdp.Laplace(1.0)(np.minimum(GRID / (1 - 1e-3), 1)), 0
        ),
        atol=1e-15,
    )


def test_exponential_mechanism() -> None:
    f = M.exponential([1.0, 2.0, 3.0], [2.0, 2.0, 2.0], eps=1.0)
    assert f.eps == 1.0 and f.dominates(fdp.EpsDelta(f.eps))
    # this pair's own loss is below the guarantee: max |Δu| ε/(2Δ) · 2 = 1 at most
    assert float(f.epsilon(0.0)) <= f.eps + 1e-12
    P = np.exp(0.5 * np.array([1.0, 2.0, 3.0]))
    Q = np.exp(0.5 * np.array([2.0, 2.0, 2.0]))
    ref = fdp.from_distributions(P / P.sum(), Q / Q.sum())
    np.testing.assert_allclose(f(GRID), ref(GRID), atol=1e-14)
    with pytest.raises(ValueError, match="sensitivity"):
        M.exponential([0.0, 5.0], [0.0, 0.0], eps=1.0)


def test_subsampled_eps_gap_is_visible() -> None:
    exact = M.subsampled_eps(2.0, 0.1)
    assert exact.eps == pytest.approx(math.log(1 + 0.1 * (math.e**2 - 1)), rel=1e-15)
    assert exact.params == {"eps": 2.0, "p": 0.1}
    amp = fdp.EpsDelta(exact.eps)
    assert exact.dominates(amp, tol=1e-12)
    assert float(exact.epsilon(0.0)) == pytest.approx(exact.eps, rel=1e-12)  # tight at δ = 0
    assert np.max(exact(GRID) - amp(GRID)) > 1e-3
    # the same curve as subsampling f_{2,0} directly
    np.testing.assert_allclose(exact(GRID), fdp.EpsDelta(2.0).subsample(0.1)(GRID), atol=0)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="scale"):
        M.laplace(1.0, 0.0)
    with pytest.raises(ValueError, match="d"):
        M.grr(1.0, 1)
    with pytest.raises(ValueError, match="eps"):
        M.oue(-1.0)


# ---- issue 16: one kind of thing per kind of mechanism --------------------------------------
MECHANISMS = {
    "laplace": lambda: M.laplace(1.0, 2.0),
    "vector_laplace": lambda: M.vector_laplace([0.3, 0.4], 1.0),
    "gaussian": lambda: M.gaussian(1.0, 2.0),
    "randomized_response": lambda: M.randomized_response(1.0, 3),
    "catastrophe": lambda: M.catastrophe(1.0, 1.0, 1e-3),
    "exponential": lambda: M.exponential([1.0, 2.0], [2.0, 2.0], 1.0),
    "subsampled_eps": lambda: M.subsampled_eps(1.0, 0.2),
    "grr": lambda: M.grr(1.0, 5),
    "sue": lambda: M.sue(1.0),
    "oue": lambda: M.oue(1.0),
    "blh": lambda: M.blh(1.0),
    "olh": lambda: M.olh(1.0),
}


def test_every_mechanism_is_listed() -> None:
    public = {n for n in M.__all__ if n[0].islower()} - {"gaussian_calibration"}
    assert public == set(MECHANISMS)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_every_mechanism_returns_a_curve(name: str) -> None:
    f = MECHANISMS[name]()
    assert isinstance(f, fdp.TradeOff), type(f)
    assert not isinstance(f, tuple)
    assert_axioms(f.lower)
    label = fdp.plot.label(f)
    assert "PiecewiseLinear(" not in label and "(eps=" not in label, label


@pytest.mark.parametrize("name", ["randomized_response", "exponential", "subsampled_eps", "grr",
                                  "sue", "oue", "blh", "olh"])
def test_mechanism_curves_carry_their_eps(name: str) -> None:
    f = MECHANISMS[name]()
    assert isinstance(f, M.MechanismCurve)
    assert f.kind == "exact" and f.eps > 0
    assert f.dominates(fdp.EpsDelta(f.eps), tol=1e-12)  # the stated ε-DP holds
    assert repr(f).startswith(f.name + "(") and f.name in fdp.plot.label(f)
    # operations give ordinary curves with the same values
    g = f @ fdp.Identity()
    np.testing.assert_allclose(np.asarray(g(GRID)), np.asarray(f(GRID)), atol=1e-15)


def test_oracle_attributes_and_deprecated_tradeoff() -> None:
    o = M.oue(2.0)
    assert isinstance(o, M.FrequencyOracle) and isinstance(o, fdp.PiecewiseLinear)
    assert (o.name, o.eps, o.p) == ("OUE", 2.0, 0.5)
    assert repr(o) == "OUE(eps=2)" and fdp.plot.label(o) == "OUE (ε=2)"
    assert repr(M.olh(math.log(3.0))) == "OLH(eps=1.09861, g=4)"
    with pytest.warns(DeprecationWarning, match="the oracle is its trade-off curve"):
        assert o.tradeoff is o


def test_randomized_response_is_grr() -> None:
    rr, g = M.randomized_response(1.5, 4), M.grr(1.5, 4)
    np.testing.assert_array_equal(rr.breakpoints[0], g.breakpoints[0])
    np.testing.assert_array_equal(rr.breakpoints[1], g.breakpoints[1])
    assert rr.eps == 1.5 and rr.params == {"eps": 1.5, "k": 4.0}
    assert not isinstance(rr, M.FrequencyOracle)


def test_accountant_serializes_mechanism_curves() -> None:
    acc = fdp.Accountant(neighbours="replace-one")
    acc.compose(M.grr(1.0, 5), 3)
    back = fdp.Accountant.from_json(acc.to_json())
    assert back.epsilon(1e-5) == acc.epsilon(1e-5)


def test_sue_at_large_eps_is_exact() -> None:
    # hunt 3, F1: q = 1 − p cancelled (6.66e-16 for 6.305e-16 at ε = 70) and the pair's loss
    # came out below ε: δ(ε − 1) 7 % low. The SUE pair's loss is ±ε or 0, so
    # δ(x) = p²(1 − e^{x − ε}) on [0, ε), p = e^{ε/2}/(e^{ε/2} + 1) (mpmath, 50 digits)
    import mpmath as mp

    mp.mp.dps = 50
    for eps in (34.0, 44.0, 57.0, 70.0):
        f = fdp.mechanisms.sue(eps)
        p = 1 / (1 + mp.exp(-mp.mpf(eps) / 2))
        true = p * p * (1 - mp.exp(mp.mpf(-1)))
        got = mp.mpf(float(f.delta(eps - 1.0)))
        assert true * (1 - 1e-12) <= got <= true * (1 + 1e-9), (eps, got, true)
        assert abs(float(f.epsilon(0.0)) - eps) <= 1e-12 * eps


def test_exponential_mechanism_losses_from_log_probabilities() -> None:
    # hunt 3, F3: an outcome with mass ≈ 1 under both datasets and true loss 1.532e-23 read
    # loss 0 (p = q = 1.0 in floats), so δ(0) was 3.4e-27 < 1.532e-23 and ε(1e-24) was 0
    import mpmath as mp

    mp.mp.dps = 60
    u = [-3.5584038728036624, 4.486494471372438, -1.8816854798951455, -0.766735510274243]
    v = [-2.902998685162779, 4.304892744110761, -1.7824981045490265, -1.7116172837881063]
    f = fdp.mechanisms.exponential(u, v, eps=20, sensitivity=1)
    a = [mp.mpf(x) * 10 for x in u]
    b = [mp.mpf(x) * 10 for x in v]
    P = [mp.exp(x) / mp.fsum(mp.exp(y) for y in a) for x in a]
    Q = [mp.exp(x) / mp.fsum(mp.exp(y) for y in b) for x in b]
    delta0 = mp.fsum(max(q - p, 0) for p, q in zip(P, Q, strict=True))
    assert mp.mpf(float(f.delta(0.0))) >= delta0 > 1e-23
    assert float(f.epsilon(1e-24)) > 1e-23  # the true ε(1e-24) is about 1.43e-23


@pytest.mark.parametrize("oracle", [lambda e: M.grr(e, 16), M.randomized_response, M.sue,
                                    M.oue, M.blh, M.olh])
def test_oracles_never_report_an_epsilon_below_their_own(oracle) -> None:  # noqa: ANN001
    # Each oracle is tight ε-LDP by construction (WBLJ 2017), so ε(0) = ε exactly. Read off
    # the rounded masses alone it came out up to 1.2e-13 relative below ε for ε in 1e-3..1e-2
    # (the masses' ratio is e^{±ε} only to a few ulps): the optimistic side.
    for eps in np.geomspace(3e-4, 20.0, 37):
        got = float(oracle(float(eps)).epsilon(0.0))
        assert eps <= got <= eps * (1 + 1e-12) + 1e-14, (eps, got)


@pytest.mark.parametrize("name", ["sue", "oue", "blh"])
def test_two_outcome_oracles_beyond_the_float_range_of_their_masses(name: str) -> None:
    # A hunt: the masses are products whose smallest factor e^{−ε} (or e^{−ε/2} twice)
    # underflows beyond ε ≈ 725, and the losses were read from them: SUE at ε = 745 gave
    # ε(0) = 744.44 and δ(744) = 0.356 for 0.632, BLH at 744 δ(743) = 0.263 for 0.316, and from
    # ε ≈ 746 ε(0) = ∞. The losses are 0 and ±ε; the top one carries Q-mass m = p² (SUE,
    # p = 1/(1 + e^{−ε/2})) or (1/2)/(1 + e^{−ε}) (OUE, BLH), so δ(x) = m (1 − e^{x − ε}) on
    # [0, ε), and for f^{⊗3}, δ(x) = m³ (1 − e^{x − 3ε}) on (2ε, 3ε). mpmath, 50 digits.
    import mpmath as mp

    mech = getattr(M, name)
    with mp.workdps(50):
        for eps in (745.0, 30.0, 600.0, 725.0, 740.0, 760.0, 1000.0):
            e = mp.mpf(eps)
            m = (1 / (1 + mp.exp(-e / 2))) ** 2 if name == "sue" else (1 / (1 + mp.exp(-e))) / 2
            f = mech(eps)
            assert eps <= float(f.epsilon(0.0)) <= eps * (1 + 1e-12)
            for x in (eps - 1.0, eps - 1e-3, 0.5 * eps):
                true = m * (1 - mp.exp(mp.mpf(x) - e))
                got = mp.mpf(float(f.delta(x)))  # (A − e^x B cancels near ε: 2e-11 high)
                assert true <= got <= true * (1 + 1e-9), (eps, x, got, true)
            g = f**3
            assert float(g.epsilon(0.0)) >= 3 * eps
            true = m**3 * (1 - mp.exp(mp.mpf(-1)))
            got = mp.mpf(float(g.delta(3 * eps - 1.0)))
            assert true <= got <= true * (1 + 1e-9), (eps, got, true)


def _exp_pair(u: list[float], v: list[float], eps: float, s: float) -> tuple[list, list]:
    """The exponential mechanism's two output laws in mpmath (60 digits; no fdp code)."""
    import mpmath as mp

    a = [mp.mpf(eps) * mp.mpf(x) / (2 * mp.mpf(s)) for x in u]
    b = [mp.mpf(eps) * mp.mpf(x) / (2 * mp.mpf(s)) for x in v]
    za, zb = mp.fsum(mp.exp(x) for x in a), mp.fsum(mp.exp(x) for x in b)
    return [mp.exp(x) / za for x in a], [mp.exp(x) / zb for x in b]


@pytest.mark.parametrize("seed", range(4))
def test_exponential_mechanism_is_never_optimistic(seed: int) -> None:
    # A hunt: log q − log p of two log-softmaxes cancelled where utilities are close (ε = 1e-7:
    # ε(0) 1.25e-8 relative low, δ(7.5000001e-9) = 0 for 2.97e-17), and an outcome whose masses
    # both underflow was dropped (ε(0) = 0 for 0.5, up to 14 in a random sweep). Against the
    # laws in mpmath: ε(0) ≥ the largest loss, δ(x) ≥ Σ (q − e^x p)₊, ε(δ) ≥ its root, and
    # f(α) ≤ the Neyman–Pearson β, with no slack.
    import mpmath as mp

    rng = np.random.default_rng(seed)
    cases = [([0.0, 1.0], [0.0, 0.7], 1e-7, 1.0), ([0.0, -1500.0], [0.0, -1499.0], 1.0, 1.0),
             ([0.0, 1e300], [1.0, 1e300], 1.0, 1.0), ([0.0, -1e6], [-1.0, -1e6 + 1], 2000.0, 1.0),
             ([0.0, -2000.0], [-1.0, -1999.0], 100.0, 1.0)] if seed == 0 else []
    for _ in range(12):
        k = int(rng.integers(1, 7))
        sc = 10 ** rng.uniform(-3, 3.5)
        s = 10 ** rng.uniform(-2, 1)
        u = (rng.normal(size=k) * sc).tolist()
        v = (np.asarray(u) + rng.uniform(-1, 1, size=k) * s).tolist()
        cases.append((u, v, float(10 ** rng.uniform(-7, 2.5)), float(s)))
    with mp.workdps(60):
        for u, v, eps, s in cases:
            f = M.exponential(u, v, eps, s)
            P, Q = _exp_pair(u, v, eps, s)
            losses = [mp.log(q / p) for p, q in zip(P, Q, strict=True)]

            def dlt(x: object, P: list = P, Q: list = Q) -> object:
                return mp.fsum(max(q - mp.exp(x) * p, 0) for p, q in zip(P, Q, strict=True))

            assert mp.mpf(float(f.epsilon(0.0))) >= max(losses), (u, v, eps, s)
            for x in (0.0, 1e-9, eps / 2, 0.99 * eps, float(max(losses)) * (1 - 1e-9), -0.3):
                assert mp.mpf(float(f.delta(x))) >= dlt(mp.mpf(x)), (u, v, eps, s, x)
            for d in (1e-300, 1e-12, 1e-3):
                if dlt(0) <= d:
                    continue
                lo, hi = mp.mpf(0), max(losses)
                for _ in range(200):
                    mid = (lo + hi) / 2
                    lo, hi = (mid, hi) if dlt(mid) > d else (lo, mid)
                assert mp.mpf(float(f.epsilon(d))) >= lo, (u, v, eps, s, d)
            order = sorted(range(len(P)), key=lambda i: -losses[i])
            for al in (1e-12, 0.1, 0.5, 0.9):
                acc, beta = mp.mpf(0), mp.mpf(0)
                for j, i in enumerate(order):
                    if acc + P[i] >= al:
                        beta = mp.fsum(Q[t] for t in order[j + 1:]) + (1 - (al - acc) / P[i]) * Q[i]
                        break
                    acc += P[i]
                assert mp.mpf(float(f(al))) <= beta, (u, v, eps, s, al)


def _mp_hull_value(pts: list, a: float) -> object:
    """The lower convex hull of the points, read at α = a (linear between its vertices)."""
    import mpmath as mp
    from exact_sums import mp_breakpoints, mp_hull_pair

    bp = mp_breakpoints(*mp_hull_pair(pts))
    x = mp.mpf(a)
    for (a0, b0), (a1, b1) in zip(bp[:-1], bp[1:], strict=True):
        if a0 <= x <= a1 and a1 > a0:
            return b0 + (b1 - b0) * (x - a0) / (a1 - a0)
    return mp.mpf(0)


@pytest.mark.parametrize("eps", [31.5, 36.692423046414035, 45.0])
@pytest.mark.parametrize("p", [1.0, 0.9999999999999974, 1 - 1e-10, 0.5])
def test_subsampled_eps_is_not_above_the_exact_hull(eps: float, p: float) -> None:
    # C_p(f_{ε,0}) took its loss-0 atom as 1 − Σ(other masses), which cancelled to an ulp of 1:
    # at ε = 36.69, p = 1 it read f(1.16e-16) = 2.27e-16 for the true 1.16e-16 (96 % above the
    # curve), and at p = 1 − 2.6e-15 1.7 % above it near the kink (a hunt). Reference: the
    # exact lower hull of the breakpoints of f_p = T(P, (1 − p)P + pQ) and of its inverse, for
    # the randomized-response pair of f_{ε,0}, in mpmath (DRS Thm 4.2).
    import mpmath as mp
    from exact_sums import mp_breakpoints

    mp.mp.dps = 60
    e = mp.mpf(eps)
    big, small = mp.exp(e) / (1 + mp.exp(e)), 1 / (1 + mp.exp(e))
    pm, qm = [big, small], [small, big]
    r = mp.mpf(p)
    qp = [(1 - r) * a + r * b for a, b in zip(pm, qm, strict=True)]
    pts = mp_breakpoints(pm, qp) + mp_breakpoints(qp, pm)
    c = M.subsampled_eps(eps, p)
    a0 = float(small)  # the kink of f_{ε,0} (and near it C_p's, for p near 1)
    for a in [a0 * 0.5, a0 * (1 - 1e-9), a0, a0 * (1 + 1e-9), a0 * 2, a0 * 30, 1e-14, 1e-3, 0.4]:
        truth = _mp_hull_value(pts, a)
        assert c(a) <= truth, (a, c(a), float(truth))
        assert c.epsilon(0.0) >= 0.0
    assert c.eps >= mp.log1p(r * mp.expm1(e))


def test_mechanism_parameters_are_rounded_up() -> None:
    # μ = Δ/b (and Δ/σ) to nearest could sit half an ulp below the exact ratio:
    # laplace(16.453929007086575, 0.022000016697242608).delta(747.134028052022) read 5e-14
    # relative below the truth; subsampled_eps(…).eps an ulp below ln(1 + p(e^ε − 1)) (a hunt).
    # Reference: the exact rational ratio, and the Laplace profile 1 − e^{(ε − μ)/2} (DRS) and
    # the amplified ε in mpmath.
    from fractions import Fraction

    import mpmath as mp

    mp.mp.dps = 50
    d, b = 16.453929007086575, 0.022000016697242608
    exact = Fraction(d) / Fraction(b)
    for f in (M.laplace(d, b), M.gaussian(d, b), M.catastrophe(d, b, 0.0).base):
        assert Fraction(f.mu) >= exact
    mu = mp.mpf(d) / mp.mpf(b)
    e = 747.134028052022
    assert M.laplace(d, b).delta(e) >= 1 - mp.exp((e - mu) / 2)
    assert M.catastrophe(d, b, 0.0).delta(e) >= 1 - mp.exp((e - mu) / 2)
    rng = np.random.default_rng(5)
    for _ in range(200):
        d, b = float(rng.uniform(0.1, 10.0)), float(rng.uniform(0.01, 10.0))
        assert Fraction(M.laplace(d, b).mu) >= Fraction(d) / Fraction(b)
        assert Fraction(M.gaussian(d, b).mu) >= Fraction(d) / Fraction(b)
    assert M.laplace(1.0, 0.5).mu == 2.0  # (exact ratios stay exact)
    ep, p = 3.343356515442928e-05, 0.46318151828819487
    assert M.subsampled_eps(ep, p).eps >= mp.log1p(mp.mpf(p) * mp.expm1(mp.mpf(ep)))
    assert M.subsampled_eps(800.0, 1e-300).eps >= 800 + mp.log(mp.mpf(1e-300))

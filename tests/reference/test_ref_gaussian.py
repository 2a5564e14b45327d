"""Gaussian curves against mpmath closed forms (theory §2–§7), computed in the test:

- G_μ(α) = Φ(Φ⁻¹(1 − α) − μ), δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), ε(δ) by root finding;
- compositions: G_{μ₁} ⊗ … ⊗ G_{μ_n} = G_{√Σμ²}, also for the engine (numeric=True) and for
  nested engine results ((engine) ** b, @, 3 levels);
- group: 1 − (1 − G_μ)^{∘k} evaluated directly by composing G_μ with itself (= G_{kμ});
- symmetrize: G_μ is symmetric, min{G, G⁻¹}** = G;
- subsample: C_p(G_μ) built from f_p = p G_μ + (1 − p) Id and its reflection, kink at
  x* = Φ(−μ/2); Poisson add pair: p G_μ + (1 − p) Id (δ by the monotone loss map).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import fdp

from ._check import ALPHAS, Collect, check_curve
from ._ref import GaussRef, GroupRef, M, MixtureRef, mp, subsampled_gauss
from ._strategies import sweep

mus = st.sampled_from([0.01, 0.1, 0.3, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0])


@sweep(10)
@given(st.one_of(mus, st.floats(0.001, 60.0)))
def test_gaussian_closed_form(mu) -> None:  # noqa: ANN001
    check_curve(fdp.Gaussian(mu), GaussRef(mu), f"Gaussian({mu})")


@sweep(8)
@given(st.lists(mus, min_size=1, max_size=3), st.integers(1, 50))
def test_gaussian_engine(ms, n) -> None:  # noqa: ANN001
    h = fdp.compose(*[fdp.Gaussian(m) for m in ms], repeat=n, numeric=True)
    mu = math.sqrt(n * sum(m * m for m in ms))
    check_curve(h, GaussRef(mp.sqrt(n * mp.fsum(mp.mpf(m) ** 2 for m in ms))),
                f"compose({ms}, repeat={n}, numeric=True) vs G_{mu:.6g}")


@sweep(4)
@given(st.sampled_from([0.05, 0.1, 0.3, 1.0]), st.integers(1, 10), st.integers(2, 5),
       st.integers(1, 2))
def test_gaussian_nested(m, a, b, c) -> None:  # noqa: ANN001
    """(compose(G_m, repeat=a, numeric=True) ** b) vs G_{m√(ab)}, then a third level:
    ((…) ** b @ compose(G_m, numeric=True)) ** c vs G_{m√((ab + 1)c)}."""
    col = Collect()
    h2 = fdp.compose(fdp.Gaussian(m), repeat=a, numeric=True) ** b
    col.run(check_curve, h2, GaussRef(mp.mpf(m) * mp.sqrt(a * b)),
            f"(compose(G({m}), repeat={a}, numeric=True) ** {b})")
    h3 = (h2 @ fdp.compose(fdp.Gaussian(m), numeric=True)) ** c
    col.run(check_curve, h3, GaussRef(mp.mpf(m) * mp.sqrt((a * b + 1) * c)),
            f"((compose(G({m}), repeat={a}, numeric=True) ** {b}) @ G({m})) ** {c}")
    col.done()


@sweep(6)
@given(st.sampled_from([0.1, 0.5, 1.0, 2.0]), st.integers(2, 4), st.booleans())
def test_gaussian_group(mu, k, numeric) -> None:  # noqa: ANN001
    """group(k) of G_μ (closed form) and of an engine result equal to G_μ (bracket). β is
    checked against 1 − (1 − G_μ)^{∘k} evaluated directly; δ and ε against G_{kμ}, which
    :func:`test_group_operator_is_gaussian` verifies equals that operator pointwise."""
    f = fdp.compose(fdp.Gaussian(mu / math.sqrt(2)), repeat=2, numeric=True) if numeric \
        else fdp.Gaussian(mu)
    g = f.group(k)
    col = Collect()
    col.run(check_curve, g, GroupRef(GaussRef(mu), k, top=0.0),
            f"group({k}) of {'engine ' if numeric else ''}G({mu}) [beta vs the operator]",
            alphas=ALPHAS[::2], epss=[], deltas=[], inverse=False)
    col.run(check_curve, g, GaussRef(k * mu), f"group({k}) of {'engine ' if numeric else ''}G({mu})")
    col.done()


def test_group_operator_is_gaussian() -> None:
    """Self-check of the reference: 1 − (1 − G_μ)^{∘k} = G_{kμ} pointwise (DRS Cor 2.15)."""
    for mu, k in [(0.1, 2), (0.5, 3), (1.0, 4), (2.0, 2)]:
        op, closed = GroupRef(GaussRef(mu), k, top=0.0), GaussRef(k * mu)
        for a in ALPHAS[1:-1:4]:
            assert abs(op.beta(a) - closed.beta(a)) < mp.mpf(10) ** -45
            assert abs(op.betac(a) - (1 - closed.beta(a))) <= mp.mpf(10) ** -45 * (1 - closed.beta(a)) + mp.mpf(10) ** -58


@sweep(6)
@given(st.sampled_from([0.1, 0.5, 1.0, 2.0, 5.0]), st.booleans())
def test_gaussian_symmetrize(mu, numeric) -> None:  # noqa: ANN001
    f = fdp.compose(fdp.Gaussian(mu / 2), repeat=4, numeric=True) if numeric else fdp.Gaussian(mu)
    check_curve(f.symmetrize(), GaussRef(mu), f"symmetrize of {'engine ' if numeric else ''}G({mu})")


@sweep(6)
@given(st.sampled_from([0.3, 1.0, 2.0, 4.0]), st.sampled_from([0.001, 0.01, 0.1, 0.5, 1.0]),
       st.booleans())
def test_gaussian_subsample_and_mixture(mu, p, numeric) -> None:  # noqa: ANN001
    col = Collect()
    f = fdp.compose(fdp.Gaussian(mu / 2), repeat=4, numeric=True) if numeric else fdp.Gaussian(mu)
    tag = "engine " if numeric else ""
    col.run(check_curve, f.subsample(p), subsampled_gauss(mu, p), f"subsample({p}) of {tag}G({mu})",
            alphas=ALPHAS[::3], deltas=[0.3, 1e-2, 1e-4, 1e-6, 1e-10, 1e-20, 1e-50, 1e-100])
    add = fdp.poisson_subsample(f, p).add
    col.run(check_curve, add, MixtureRef(GaussRef(mu), p),
            f"poisson_subsample({p}).add of {tag}G({mu})", alphas=ALPHAS[::2],
            deltas=[0.3, 1e-2, 1e-4, 1e-6, 1e-10, 1e-20, 1e-50, 1e-100], inverse=False)
    col.done()


@sweep(5)
@given(st.sampled_from([0.3, 1.0]), st.sampled_from([0.01, 0.1]), st.integers(2, 30))
def test_subsampled_gaussian_engine_composition_side(mu, p, n) -> None:  # noqa: ANN001
    """C_p(G_μ)^{⊗n} by the engine: no closed form, but its bracket must contain the exact
    curve, so its conservative δ must be at least that of the single factor composed with nothing
    (n = 1 is exact), and the optimistic δ at most that of G_{μ√n} (C_p(G_μ) ≥ G_μ)."""
    h = fdp.compose(fdp.subsample(fdp.Gaussian(mu), p), repeat=n)
    one = subsampled_gauss(mu, p)
    big = GaussRef(mp.mpf(mu) * mp.sqrt(n))
    col = Collect()
    for e in [0.0, 0.1, 0.5, 1.0, 2.0, 5.0]:
        lo_d, hi_d = float(h.delta(e)), float(h.upper.delta(e))
        if not mp.mpf(lo_d) >= one.delta(e) * (1 - mp.mpf(2e-15)):
            col.msgs.append(f"C_{p}(G_{mu})^{n}: delta({e}) = {lo_d} < δ of one factor "
                            f"{mp.nstr(one.delta(e), 17)}")
        if not mp.mpf(hi_d) <= big.delta(e) * (1 + mp.mpf(2e-15)):
            col.msgs.append(f"C_{p}(G_{mu})^{n}: upper.delta({e}) = {hi_d} > δ of G_(μ√n) "
                            f"{mp.nstr(big.delta(e), 17)}")
    col.done()


def test_huge_losses_optimistic_side() -> None:
    """Steps whose losses exceed 700: the optimistic measure dropped every Q-mass above that
    loss, so compose(G(50), repeat=2, numeric=True) had a trivial optimistic end and
    dpsgd(1e-3, 0.01, 100) an optimistic ε(1e-5) of 0 (conservative 3.5e6). That mass now sits
    at its bin's left end. Reference: G(50√2) in mpmath (DRS Cor 3.3)."""
    for mu in (40.0, 50.0, 100.0):
        h = fdp.compose(fdp.Gaussian(mu), repeat=2, numeric=True)
        ref = GaussRef(mu * math.sqrt(2.0))
        for d in (1e-5, 1e-30):
            lo, hi = h.epsilon_bracket(d)
            want = ref.epsilon(d)
            assert lo <= want <= hi, (mu, d, lo, want, hi)
            assert hi - lo <= 1e-3 * hi, (mu, d, lo, hi)
    f = fdp.dpsgd(1e-3, 0.01, 100)
    lo, hi = f.epsilon_bracket(1e-5)
    assert 0.99 * hi <= lo <= hi


@pytest.mark.parametrize(("sampling", "t", "mu"), [("uniform", 1, 2.0), ("poisson", 4, 2.0)])
def test_full_batch_dpsgd_both_sides(sampling: str, t: int, mu: float) -> None:
    """p = 1: DP-SGD is G_{√T Δ/σ} exactly, and the bracket used the conservatively rounded
    G_μ for both sides: its optimistic δ(60) was 1.4e-12 relative above the truth and β(0.5)
    7e-15 below (hunt 4). The upper side is now G_μ rounded the other way."""
    f = fdp.dpsgd(1.0, 1.0, t, sampling)
    check_curve(f, GaussRef(mu), f"dpsgd(1, 1, {t}, {sampling})")


def test_gaussian_values_at_most_the_truth_at_extremes() -> None:
    """G_μ(α) is a guarantee and must not exceed the truth. Its round-off margin uses the
    normal hazard at w = Φ⁻¹(1 − α) − μ, whose log Φ(w) was clamped at log 1e-300: at
    w = −37.2 the hazard read 0.12 for 37 and G_37.8(0.2706) was 3e-14 above the truth;
    subnormal values were a subnormal ulp above it (a helper's hunt). mpmath closed form at
    the float inputs, for μ where G_μ(α) crosses the bottom of the float range."""
    from ._ref import M

    bad = []
    rng = np.random.default_rng(5)
    mus = [29.79977900448395, 32.74076320802878, 37.37977181765765, 37.82498321140016, 38.3, 10.0]
    for mu in mus:
        ref = GaussRef(mu)
        alphas = [0.2706402915347306, 0.6149851685539848, 0.9999991712869921, 0.9999999999999636,
                  *rng.uniform(0.0, 1.0, 12).tolist()]
        for a in alphas:
            got = float(fdp.Gaussian(mu)(a))
            want = ref.beta(a)
            if M(got) > want:
                bad.append(f"Gaussian({mu})({a!r}) = {got!r} > {mp.nstr(want, 20)}")
            elif want > M(1e-290) and M(got) < want * (1 - M(1e-9)):
                bad.append(f"Gaussian({mu})({a!r}) = {got!r} far below {mp.nstr(want, 20)}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("mu", [0.5, 5.0, 20.0, 37.0])
@pytest.mark.parametrize("p", [1.0, 0.5, 0.01])
def test_chord_interpolation_lies_above_the_curve(mu: float, p: float) -> None:
    # to_piecewise (the upper side of group and other brackets built from values) added 8 ulps
    # to the conservative values, which are 4e-13 relative below the truth for G_20 and 1e-14
    # for G_0.5 near α = 1; its chords lay below the curve (26228 of 48855 breakpoints over
    # these settings), and G_37(0.751) read 0 for 5.7e-311. Now from the optimistic values.
    f = fdp.Gaussian(mu) if p == 1.0 else fdp.operations.Mixture(fdp.Gaussian(mu), p)
    ref = GaussRef(mu) if p == 1.0 else MixtureRef(GaussRef(mu), p)
    a, b = f.to_piecewise().breakpoints
    for x, y in zip(a[::7], b[::7], strict=True):
        assert mp.mpf(float(y)) >= ref.beta(float(x)), (x, y)


@pytest.mark.parametrize(("mu", "p"), [(1.0, 0.5), (5.0, 0.5), (5.0, 0.1), (20.0, 0.99)])
def test_subsampled_chord_interpolation_lies_above_the_curve(mu: float, p: float) -> None:
    # C_p(G_μ).to_piecewise took the guarantee's values plus 8 ulps: 2583 of 2610 sampled
    # breakpoints lay below the curve (up to 2.8e-15 relative). Reference (mpmath): f_p left of
    # x* = Φ(−μ/2), the line x* + f_p(x*) − α, then f_p⁻¹ through t = Φ(−z) with
    # f_p = pΦ(z − μ) + (1 − p)Φ(z) increasing in z (bisection, the root's smaller t).
    with mp.workdps(40):
        m, q = mp.mpf(mu), mp.mpf(p)

        def fp(t: object) -> object:
            return q * GaussRef(mu).beta(t) + (1 - q) * (1 - t)

        xs = mp.ncdf(-m / 2)
        ys = fp(xs)
        a, b = fdp.subsample(fdp.Gaussian(mu), p).to_piecewise().breakpoints
        for x, y in list(zip(a, b, strict=True))[1:-1:23]:
            xa = mp.mpf(float(x))
            if xa <= xs:
                t = fp(xa)
            elif xa <= ys:
                t = xs + ys - xa
            else:
                lo, hi = m / 2, mp.mpf(60)
                if q * mp.ncdf(hi - m) + (1 - q) * mp.ncdf(hi) < xa:
                    continue
                for _ in range(200):
                    z = (lo + hi) / 2
                    if q * mp.ncdf(z - m) + (1 - q) * mp.ncdf(z) < xa:
                        lo = z
                    else:
                        hi = z
                t = mp.ncdf(-hi)
            assert mp.mpf(float(y)) >= t, (x, y, t)


@pytest.mark.parametrize("p", [1e-6, 0.01, 0.3, 0.999])
@pytest.mark.parametrize("mu", [0.1, 1.0, 8.0])
def test_mixture_values_at_most_the_truth(mu: float, p: float) -> None:
    # p f(α) + (1 − p)(1 − α) to nearest read up to 2.6e-16 above the truth (359 of 1380
    # random readings over G_μ and L_μ mixtures); now rounded down. mpmath references.
    from ._ref import LaplaceRef

    alphas = np.concatenate([np.linspace(0.0, 1.0, 17)[1:-1], [1e-9, 1e-3, 0.999]])
    for base, ref in ((fdp.Gaussian(mu), GaussRef(mu)), (fdp.Laplace(mu), LaplaceRef(mu))):
        m = fdp.operations.Mixture(base, p)
        mref = MixtureRef(ref, p)
        got = np.atleast_1d(m(alphas))
        for a, v in zip(alphas, got, strict=True):
            t = mref.beta(float(a))
            assert mp.mpf(float(v)) <= t, (base, a, v)
            assert mp.mpf(float(v)) >= t * (1 - mp.mpf(1e-12)), (base, a, v)


def test_delta_bracket_lower_end_at_negative_eps_below_the_truth() -> None:
    # δ(ε < 0) ≥ 1 − e^ε: TradeOff.delta floors every δ there, with −expm1(ε) rounded to
    # nearest, so an optimistic curve's δ (the bracket's lower end) could sit up to an ulp above
    # the truth: 113 of these 200 did. The truth: G_{√2 μ} in mpmath, independent of fdp.
    rng = np.random.default_rng(0)
    c = fdp.compose(fdp.Gaussian(1e-4), repeat=2, numeric=True)
    eps = -np.exp(rng.uniform(math.log(0.01), math.log(30.0), 200))
    lo, hi = c.delta_bracket(eps)
    with mp.workdps(50):
        m = mp.sqrt(2) * M(1e-4)
        for e, low, high in zip(eps, lo, hi, strict=True):
            ee = M(float(e))
            truth = mp.ncdf(-ee / m + m / 2) - mp.exp(ee) * mp.ncdf(-ee / m - m / 2)
            assert M(float(low)) <= truth <= M(float(high)), (e, low, truth, high)


@pytest.mark.parametrize(("mu", "n"), [(1.956, 17), (1.46, 853), (3.091, 602)])
def test_delta_of_a_large_gaussian_power_within_the_promised_accuracy(mu: float, n: int) -> None:
    # The bulk grid is planned for the ε bracket (0.1 % wide here); where δ falls steeply in ε
    # (total μ of 8 to 76) the same step left δ(ε) 1–5 % above the truth (G_1.46^853 at
    # δ ≈ 1e-10: +5.4 %). A δ query now rebuilds its grid until its δ bracket is within 10·tol.
    # The truth: G_{μ√n} in mpmath.
    h = fdp.compose(fdp.Gaussian(mu), repeat=n, numeric=True)
    eps = [float(h.epsilon(d)) for d in (1e-3, 1e-6, 1e-10)]
    with mp.workdps(50):
        m = M(mu) * mp.sqrt(n)
        for e in eps:
            ee = M(e)
            truth = mp.ncdf(-ee / m + m / 2) - mp.exp(ee) * mp.ncdf(-ee / m - m / 2)
            lo, hi = h.delta_bracket(e)
            assert M(float(lo)) <= truth <= M(float(hi)), (e, lo, truth, hi)
            assert M(float(hi)) <= truth * (1 + mp.mpf("1e-2")), (e, hi, truth)


@sweep(8)
@given(st.floats(0.03, 2.0), st.sampled_from([2, 5, 20, 100]), st.sampled_from([2, 3, 10]),
       st.sampled_from(["power", "two", "three"]))
def test_gaussian_nested_strict(mu: float, a: int, b: int, kind: str) -> None:
    """Nested engine results against G_{μ√n} with no rounding slack: both ends of δ(ε) and of
    f(α) on their sides (the shared checks allow 2e-15 relative; a hunt of 40 such curves and
    of G, L and subsampled G/L powers found none off even by that)."""
    inner = fdp.compose(fdp.Gaussian(mu), repeat=a, numeric=True)
    if kind == "power":
        h, steps = inner ** b, a * b
    elif kind == "two":
        other = fdp.compose(fdp.Gaussian(mu), repeat=b, numeric=True)
        h, steps = fdp.compose(inner, other, numeric=True), a + b
    else:
        h, steps = fdp.compose(inner, inner, fdp.Gaussian(mu), numeric=True), 2 * a + 1
    ref = GaussRef(mp.mpf(mu) * mp.sqrt(steps))  # (μ√n in mpmath: no float rounding of it)
    total = mu * math.sqrt(steps)
    for e in np.linspace(0.0, 3.0 * total * total + 3.0, 7):
        lo, hi = (float(x) for x in h.delta_bracket(float(e)))
        t = ref.delta(M(float(e)))
        assert M(lo) <= t <= M(hi), (kind, float(e), lo, hi)
    for al in [1e-10, 1e-6, 1e-3, 0.1, 0.5, 0.9]:
        t = ref.beta(M(al))
        assert M(float(h.lower(al))) <= t <= M(float(h.upper(al))), (kind, al)

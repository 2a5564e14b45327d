"""fdp.Accountant: schedules, merging, relations, shuffling, the fast path, checkpoints, timing."""

from __future__ import annotations

import json
import math
import time
import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

import fdp
from fdp.accountant import (
    Accountant,
    curve_from_spec,
    curve_to_spec,
    plan_sampling,
    step_conventions,
)


def test_consecutive_equal_steps_merge() -> None:
    acc = Accountant()
    for _ in range(500):
        acc.step(1.0, 0.01)
    acc.step(1.0, 0.01, steps=500)
    acc.step(2.0, 0.01)
    acc.step(1.0, 0.01)
    hist = acc.history
    assert [h["count"] for h in hist] == [1000, 1, 1]
    assert acc.steps == len(acc) == 1002


def test_homogeneous_schedule_matches_dpsgd() -> None:
    acc = Accountant(tol=1e-3).step(1.0, 0.01, steps=1000)
    h = fdp.dpsgd(1.0, 0.01, 1000)
    lo, hi = h.epsilon_bracket(1e-5)
    alo, ahi = acc.epsilon_bracket(1e-5)
    assert alo == pytest.approx(lo, rel=1e-9) and ahi == pytest.approx(hi, rel=1e-9)
    # the fast path is a certified upper bound, within 0.1 % of the exact value here
    eps = acc.epsilon(1e-5)
    assert lo <= eps <= hi * (1 + 1e-3)


def test_heterogeneous_schedule_brackets_and_orders() -> None:
    acc = Accountant(tol=1e-3)
    acc.step(1.0, 0.01, steps=300).step(2.0, 0.02, steps=300)
    lo, hi = acc.epsilon_bracket(1e-5)
    assert lo <= acc.epsilon(1e-5) <= hi * (1 + 2e-3)
    # composition is commutative: the other order gives the same curve
    rev = Accountant(tol=1e-3).step(2.0, 0.02, steps=300).step(1.0, 0.01, steps=300)
    assert rev.epsilon_bracket(1e-5)[1] == pytest.approx(hi, rel=1e-6)
    # more noise in the second phase is never worse than σ = 1 throughout
    worst = Accountant(tol=1e-3).step(1.0, 0.02, steps=600)
    assert worst.epsilon(1e-5) >= acc.epsilon(1e-5)


def test_mixing_relations_raises() -> None:
    acc = Accountant().step(1.0, 0.01)
    with pytest.raises(ValueError, match="add-remove neighbours"):
        acc.step(1.0, 0.01, sampling="uniform")
    with pytest.raises(ValueError, match="add-remove"):
        acc.step(1.0, 0.01, sampling="shuffle")
    with pytest.raises(ValueError, match="replace-one"):
        Accountant(neighbours="replace-one").step(1.0, 0.01)
    with pytest.raises(ValueError, match="not supported"):
        step_conventions("shuffle", "add-remove")
    # uniform and shuffled steps share the replace-one relation
    Accountant().step(2.0, 0.01, sampling="uniform").step(2.0, 0.01, sampling="shuffle")


def test_shuffle_epochs_compose_as_gaussians() -> None:
    # 3 epochs of 100 steps, σ = 2, Δ = 2: G_{√3}
    acc = Accountant().step(2.0, 0.01, steps=300, sampling="shuffle")
    assert isinstance(acc.curve, fdp.Gaussian)
    assert acc.curve.mu == pytest.approx(math.sqrt(3.0))
    # a partial epoch counts as a full one
    acc.step(2.0, 0.01, sampling="shuffle")
    assert acc.curve.mu == pytest.approx(2.0)
    # within an epoch the smallest σ counts: 50 steps at σ = 4 then 50 at σ = 2 is one epoch G_1
    one = Accountant().step(4.0, 0.01, steps=50, sampling="shuffle")
    one.step(2.0, 0.01, steps=50, sampling="shuffle")
    assert one.curve.mu == pytest.approx(1.0)
    # a change of batch size (sample rate) starts a new epoch (conservative)
    two = Accountant().step(2.0, 0.01, steps=50, sampling="shuffle")
    two.step(2.0, 0.02, steps=50, sampling="shuffle")
    assert two.curve.mu == pytest.approx(math.sqrt(2.0))
    # sensitivity 1 (the user's claim, e.g. zero-out neighbours) halves μ
    z = Accountant().step(2.0, 0.01, steps=400, sampling="shuffle", sensitivity=1.0)
    assert z.mu() == pytest.approx(1.0)
    assert "user's claim" in z.conventions()[0]["conventions"]


def test_compose_curves_and_subsampled_mechanisms() -> None:
    acc = Accountant().compose(fdp.Gaussian(0.3), 2).compose(fdp.Gaussian(0.4))
    assert acc.curve.mu == pytest.approx(math.sqrt(0.18 + 0.16))
    # a Gaussian on a Poisson subsample is exactly a DP-SGD step
    a = Accountant(tol=1e-3).compose(fdp.Gaussian(1.0), 200, sample_rate=0.05)
    b = Accountant(tol=1e-3).step(1.0, 0.05, steps=200)
    assert a.epsilon_bracket(1e-6) == pytest.approx(b.epsilon_bracket(1e-6), rel=1e-9)
    u = Accountant(tol=1e-3).compose(fdp.Gaussian(1.0), 100, sample_rate=0.05, sampling="uniform")
    assert u.neighbours == "replace-one"
    ref = fdp.dpsgd(1.0, 0.05, 100, "uniform", sensitivity=1.0)
    assert u.epsilon_bracket(1e-6)[1] == pytest.approx(ref.epsilon_bracket(1e-6)[1], rel=1e-6)
    with pytest.raises(TypeError):
        Accountant().compose(1.0)  # type: ignore[arg-type]


def test_queries_are_certified_and_consistent() -> None:
    acc = Accountant(tol=1e-3).step(1.0, 0.02, steps=500)
    eps = acc.epsilon(1e-6)
    assert acc.delta(eps) <= 1e-6 * (1 + 1e-6)
    mu = acc.mu()
    assert mu == pytest.approx(math.sqrt(500))  # the exact strict-GDP μ of DP-SGD
    m, tau = acc.mu_delta()
    assert m < mu and 0 <= tau < 1e-6
    adv = acc.advantage()  # the fast path: a certified upper bound close to the engine's
    assert float(acc.curve.upper.delta(0.0)) <= adv <= float(acc.curve.delta(0.0)) * (1 + 2e-3)
    t = acc.tpr([1e-3, 1e-2, 0.1])
    assert np.all(np.diff(t) > 0) and np.all(t >= [1e-3, 1e-2, 0.1])
    exact = fdp.risk.tpr(acc.curve, [1e-3, 1e-2, 0.1])
    assert np.all(t >= 1.0 - np.asarray(acc.curve.upper([1e-3, 1e-2, 0.1])) - 1e-15)
    assert np.allclose(t, exact, rtol=2e-3)
    assert acc.posterior_success(0.5) == pytest.approx(0.5 + adv / 2, abs=1e-12)


def test_curve_is_cached_until_the_next_step() -> None:
    acc = Accountant().step(1.0, 0.01, steps=100)
    c = acc.curve
    assert acc.curve is c
    acc.step(1.0, 0.01)
    assert acc.curve is not c


def test_checkpoint_round_trip_gives_identical_numbers() -> None:
    acc = Accountant(tol=1e-2)
    acc.step(1.0, 0.01, steps=100).step(1.5, 0.01, steps=50).compose(fdp.Laplace(0.1), 3)
    acc.compose(fdp.from_distributions([0.6, 0.4], [0.4, 0.6]), 2)
    acc.compose(fdp.EpsDelta(0.1, 1e-9), 1, sample_rate=0.1)
    text = acc.to_json()
    json.loads(text)  # valid JSON
    back = Accountant.from_json(text)
    assert back.history[0] == acc.history[0]
    for d in (1e-5, 1e-7):
        assert back.epsilon(d) == acc.epsilon(d)
        assert back.epsilon_bracket(d) == acc.epsilon_bracket(d)
    assert back.delta(1.0) == acc.delta(1.0)
    other = Accountant()
    other.load_state_dict(acc.state_dict())
    assert other.epsilon(1e-5) == acc.epsilon(1e-5)
    # the restored accountant keeps going
    back.step(1.5, 0.01, steps=10)
    acc.step(1.5, 0.01, steps=10)
    assert back.history[-1] == acc.history[-1]
    assert back.epsilon(1e-5) == acc.epsilon(1e-5)


def test_unserializable_curves_raise_clearly() -> None:
    acc = Accountant().compose(fdp.Laplace(0.1) ** 10)
    with pytest.raises(TypeError, match="cannot be serialized"):
        acc.to_json()
    with pytest.raises(ValueError, match="not an fdp accountant state"):
        Accountant().load_state_dict({"history": []})


@pytest.mark.parametrize(
    "curve",
    [
        fdp.Gaussian(0.7),
        fdp.Laplace(0.3),
        fdp.EpsDelta(1.0, 1e-6),
        fdp.Identity(),
        fdp.from_distributions([0.5, 0.3, 0.2], [0.2, 0.3, 0.5]),
        fdp.subsample(fdp.Gaussian(1.0), 0.1),
    ],
)
def test_curve_specs_round_trip(curve: fdp.TradeOff) -> None:
    spec = json.loads(json.dumps(curve_to_spec(curve)))
    back = curve_from_spec(spec)
    for e in (0.0, 0.5, 2.0):
        assert float(back.delta(e)) == float(curve.delta(e))


def test_plan_sampling() -> None:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        plan = plan_sampling(60000, 256, 60)
    assert plan.steps == 14063 and plan.sample_rate == pytest.approx(256 / 60000)
    assert any("not an integer" in str(x.message) for x in w)
    assert plan.to_dict()["neighbours"] == "add-remove"
    acc_plan = plan_sampling(1000, 10, 2, accumulation=5, warn=False)
    assert acc_plan.logical_batch_size == 50 and acc_plan.steps == 40
    assert any("micro-batches" in m for m in acc_plan.warnings)
    sh = plan_sampling(1000, 300, 2, sampling="shuffle", warn=False)
    assert sh.steps_per_epoch == 4 and sh.steps == 8
    assert any("does not divide" in m for m in sh.warnings)
    assert sh.conventions.neighbours == "replace-one"
    big = plan_sampling(100, 200, 1, warn=False)
    assert big.sample_rate == 1.0 and any("exceeds" in m for m in big.warnings)
    assert "sample rate" in str(plan)
    with pytest.raises(ValueError):
        plan_sampling(0, 1, 1)


def test_mnist_epoch_queries_are_fast() -> None:
    """ε after each of the 60 epochs of MNIST (σ = 1.1, p = 256/60000, 14063 steps)."""
    acc = Accountant()
    total, epochs = 14063, 60
    done = 0
    eps = []
    t0 = time.perf_counter()
    for e in range(1, epochs + 1):
        for _ in range(round(e * total / epochs) - done):
            acc.step(1.1, 256 / 60000)
        done = round(e * total / epochs)
        eps.append(acc.epsilon(1e-5))
    elapsed = time.perf_counter() - t0
    assert np.all(np.diff(eps) > 0)
    assert eps[-1] == pytest.approx(2.3817, rel=2e-3)
    # the issue asks for < 2 s; a loaded CI machine gets a margin
    assert elapsed < 6.0, elapsed


def test_fast_profile_refines_a_direction_only_when_its_coarse_bound_could_decide() -> None:
    # The remove direction is first composed on a grid 4× coarser; its fine profile is built
    # only where the coarse (certified) δ could exceed the deciding direction's value.
    from scipy.optimize import brentq
    from scipy.stats import norm

    from fdp.accountant import _FastProfile
    from fdp.fastpath import _Direction, _StepGrid

    h = 2.0**-10

    def power(mu: float, step: float) -> _Direction:
        return _Direction([(_StepGrid(fdp.Gaussian(mu), step), 10)], step)

    def exact_eps(mu: float, delta: float) -> float:  # G_μ (Dong, Roth, Su 2022, Cor 2.13)
        def gap(e: float) -> float:
            return norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2) - delta
        return brentq(gap, 0.0, 100.0, xtol=1e-14)

    calls = []

    def build(mu: float) -> _Direction:
        calls.append(mu)
        return power(mu, h)

    delta = 1e-5
    # the other direction is weaker (G_√10·0.5 vs G_√10·1): never refined
    weak = _FastProfile([power(1.0, h)], [(power(0.5, 4 * h), lambda: build(0.5))])
    e = weak.epsilon(delta)
    ref = exact_eps(math.sqrt(10), delta)
    assert calls == [] and ref <= e <= ref * 1.002
    assert weak.delta(e) <= delta and calls == []
    # the other direction decides: refined once, and the answer is its (certified) value
    strong = _FastProfile([power(0.5, h)], [(power(1.0, 4 * h), lambda: build(1.0))])
    e = strong.epsilon(delta)
    assert calls == [1.0] and ref <= e <= ref * 1.002
    d = strong.delta(3.0)
    true_d = norm.cdf(-3.0 / math.sqrt(10) + math.sqrt(10) / 2) - math.exp(3.0) * norm.cdf(
        -3.0 / math.sqrt(10) - math.sqrt(10) / 2)
    assert true_d <= d <= true_d * 1.01 and calls == [1.0]


def test_a_floored_untilted_pass_refines_no_direction_untilted() -> None:
    # G(1e-3)^(10⁶) = G_1 (Dong, Roth, Su 2022, Cor 3.3) in both directions, the second first on
    # its coarse grid. The deciding direction's untilted round-off above ε(1e-5) exceeds 1 % of
    # δ, so that pass cannot answer whatever the other direction gives: the other direction's
    # fine profile is built for the tilted pass only (its untilted one cost 23 ms at DP-SGD
    # σ = 2, p = 1e-3, T = 10⁶), and the answer is the tilted pass's certified one.
    from scipy.optimize import brentq
    from scipy.stats import norm

    from fdp.accountant import _FastProfile
    from fdp.fastpath import _Direction, _StepGrid

    h = 2.0**-15
    thetas: list[float] = []

    class Recorded(_Direction):
        def curve(self, theta: float = 0.0):  # type: ignore[no-untyped-def]
            thetas.append(theta)
            return super().curve(theta)

    def power(step: float, cls: type[_Direction] = _Direction) -> _Direction:
        return cls([(_StepGrid(fdp.Gaussian(1e-3), step), 10**6)], step)

    def exact_eps(delta: float) -> float:  # G_1 (Dong, Roth, Su 2022, Cor 2.13)
        return brentq(lambda e: norm.cdf(-e + 0.5) - math.exp(e) * norm.cdf(-e - 0.5) - delta,
                      0.0, 50.0, xtol=1e-14)

    prof = _FastProfile([power(h)], [(power(4 * h), lambda: power(h, Recorded))])
    flat = prof._parts[0].curve(0.0)
    e0 = float(flat.epsilon(1e-5))
    assert flat.err_above(e0) > 1e-2 * 1e-5  # (the untilted pass is floored here)
    e = prof.epsilon(1e-5)
    ref = exact_eps(1e-5)
    assert e is not None and ref <= e <= ref * 1.002, (e, ref)
    assert thetas and 0.0 not in thetas, thetas


def test_tilted_fast_power_is_certified_where_the_untilted_one_is_floored() -> None:
    # A long run: G(1e-3)^(10⁶) = G_1 (Dong, Roth, Su 2022, Cor 3.3). The untilted FFT's proved
    # round-off floor (2e-7 with the componentwise bound, 2e-5 with the normwise one) is far
    # above the δ asked; tilted at the Chernoff point of the ε
    # asked, the masses at and above it keep their round-off relative, and δ(ε) is within 1 %
    # of the closed form (the grid's discretization: it falls as h²), never below it.
    from scipy.stats import norm

    from fdp.fastpath import _fast_power, _StepGrid, chernoff_theta

    def exact_delta(mu: float, e: float) -> float:  # Dong, Roth, Su 2022, Cor 2.13
        return float(norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2))

    h = 2.0**-15
    grids = [(_StepGrid(fdp.Gaussian(1e-3), h), 10**6)]
    flat, floor = _fast_power(grids, h)
    assert floor > 1e-7
    for e in (2.0, 4.0, 6.0):
        theta = chernoff_theta(grids, e)
        assert theta > 0.0
        curve = _fast_power(grids, h, theta)[0]
        for x in (e, e + 0.5):
            got = curve.delta_bound(x)
            true = exact_delta(1.0, x)
            assert true <= got <= true * 1.01, (e, x, got, true)
        assert flat.delta_bound(e) >= exact_delta(1.0, e)  # (certified too, only floored)
    assert flat.delta_bound(6.0) > 10 * exact_delta(1.0, 6.0)


@pytest.mark.parametrize("s,p,t,ref", [
    # ε(1e-5) by MGF inversion (benchmarks/bench_extremes.py: DPSGD_REFS, independent of fdp)
    (2.0, 1e-3, 10**6, 2.142700559),
    (1.0, 1e-4, 10**6, 0.4592100062),
    # (the fast path's step on its dyadic ladder, up to 1.5× below the step asked for)
    (1.1, 256 / 60000, 14063, 2.381689726),
    (0.8, 0.01, 10000, 10.05363477),
])
def test_fast_path_meets_its_accuracy_in_long_runs(s: float, p: float, t: int, ref: float) -> None:
    # The fast path's untilted FFT has a round-off floor of 2e-4 in these runs, above δ, so
    # epsilon() fell back to the engine at the accountant's tol (3e-2): 0.65 % and 0.25 % above
    # the truth. Tilted for δ, the fast path answers within its 0.1 %.
    acc = Accountant().step(s, p, steps=t)
    e = acc.epsilon(1e-5)
    assert ref <= e <= ref * (1 + 1e-3), (e, ref)
    # (δ at that ε, from profiles tilted for it: another certified bound, the same to 1e-4)
    assert acc.delta(e) == pytest.approx(1e-5, rel=1e-4)


def _fsum_epsilon(q: np.ndarray, loss: np.ndarray, q_inf: float, delta: float) -> float:
    """ε(δ) of the discrete measure by bisection on δ(ε) = q_∞ + Σ_{ℓ > ε} q (1 − e^{ε − ℓ}),
    each term to 2 ulps and summed by math.fsum (correctly rounded): no fdp code."""
    def dlt(e: float) -> float:
        m = loss > e
        return math.fsum([q_inf, *(q[m] * -np.expm1(e - loss[m])).tolist()])

    if dlt(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, float(loss[-1])
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        lo, hi = (mid, hi) if dlt(mid) > delta else (lo, mid)
    return hi


def test_mass_curve_profile_from_its_start_gives_the_same_epsilon() -> None:
    # ε(δ) is read from the profile of the masses above a start loss x with δ(x) ≥ δ certain
    # (δ(x) ≥ (1 − e^{−c}) Q[L > x + c]), and, where that saves work, only up to the first
    # grid loss whose Q-mass above is below δ, with the masses above merged into one outcome
    # (exact below its loss). It must hold the exact ε of the masses (math.fsum bisection, no
    # fdp code) from above, within 1e-9 relative, as the full profile does; and δ(ε) must
    # equal the full profile's. Random grids, masses over 12 orders of magnitude.
    from fdp.fastpath import _MassCurve
    from fdp.tradeoff import _Profile

    rng = np.random.default_rng(4)
    windowed = 0
    for _ in range(40):
        n = int(rng.integers(50, 6000))
        h = float(rng.uniform(1e-3, 0.1))
        loss = h * (1 + np.arange(n))
        q = 10.0 ** rng.uniform(-14, 0, n) * np.exp(-loss * rng.uniform(0.1, 5))
        q *= 0.9 / q.sum()
        curve = _MassCurve(q, loss, 1e-15)
        full = _Profile(q[::-1].copy(), loss[::-1].copy(), 1e-15, "lower")
        for delta in (0.3, 1e-2, 1e-5, 1e-9, 1e-12):
            got = curve.epsilon(delta)
            ref = _fsum_epsilon(q, loss, 1e-15, delta)
            whole = max(float(full.epsilon(np.array([delta]))[0]), 0.0)
            assert ref * (1 - 1e-13) <= got <= ref * (1 + 1e-9) + 1e-300, (got, ref, delta)
            assert ref * (1 - 1e-13) <= whole <= ref * (1 + 1e-9) + 1e-300, (whole, ref)
            windowed += got != whole
        for eps in (0.0, 0.5 * float(loss[-1]), float(loss[-1])):
            assert curve.delta(eps) == min(max(float(full.delta(np.array([eps]))[0]), 0.0), 1.0)
    assert windowed > 0  # (the merged window answered some)


def test_spectrum_power_from_kept_squares_is_repeated_squaring_bit_for_bit() -> None:
    # An accountant's next epoch raises each step's spectrum ẑ to n from the kept squares
    # ẑ^{2^j}: the same products in the same order as repeated squaring, so the answer does not
    # depend on the powers asked before (a checkpointed accountant and a fresh one agree to the
    # last bit), and within the 6nu relative allowance of _fast_power's round-off bound
    # (reference: mpmath at 40 digits on the same ẑ).
    import mpmath

    from fdp.fastpath import _StepGrid
    from fdp.operations import Mixture
    from fdp.pld import _cpow

    g = _StepGrid(Mixture(fdp.Gaussian(0.9), 0.004), 2.0**-12)
    n_fft = 1 << 14
    z = g.spectrum(n_fft, 0.0)[0]
    u = np.finfo(float).eps / 2
    with mpmath.workdps(40):
        for n in (100, 334, 9, 568, 802, 5000, 5234, 3):
            got = g.power(n_fft, 0.0, n)
            assert np.array_equal(got, _cpow(z, n))
            for stop in (1, 100, 3000):  # (a prefix: the frequencies _fast_power bounds)
                assert np.array_equal(g.power(n_fft, 0.0, n, stop), got[:stop])
            # squares kept for a short prefix, then a longer one asked: made again, the same
            fresh = _StepGrid(Mixture(fdp.Gaussian(0.9), 0.004), 2.0**-12)
            assert np.array_equal(fresh.power(n_fft, 0.0, n, 50), got[:50])
            assert np.array_equal(fresh.power(n_fft, 0.0, n, 2000), got[:2000])
            assert np.array_equal(fresh.power(n_fft, 0.0, n), got)
            for k in (0, 1, 2, 3, 7, 20, 60):
                exact = mpmath.mpc(complex(z[k])) ** n
                err = abs(mpmath.mpc(complex(got[k])) - exact)
                assert err <= 6 * n * u * abs(exact) + 1e-300, (n, k, float(err), float(abs(exact)))


def test_piecewise_epsilon_from_a_merged_window_holds_the_exact_epsilon() -> None:
    # A scalar ε query of a large lower curve reads a window of its masses, with the masses
    # above merged into one outcome (post-processing: exact below the merged losses), before
    # the whole profile is built. Against a math.fsum bisection (no fdp code): above the exact
    # ε of the masses, within 1e-9, as the whole profile is; and the window was used.
    from fdp.tradeoff import PiecewiseLinear

    rng = np.random.default_rng(11)
    used = 0
    for _ in range(6):
        n = int(rng.integers(9000, 30000))
        h = float(rng.uniform(1e-4, 2e-3))
        loss = h * (1 + np.arange(n))[::-1].astype(float)  # decreasing
        q = 10.0 ** rng.uniform(-10, 0, n) * np.exp(-loss * rng.uniform(0.5, 4))
        q *= 0.95 / q.sum()
        p = q * np.exp(-loss)
        p *= 0.95 / p.sum() if p.sum() > 0.95 else 1.0
        q = p * np.exp(loss)  # (losses exact for these masses)
        for delta in (1e-3, 1e-6, 1e-9):
            curve = PiecewiseLinear.from_masses(p, q, q_inf=1e-14, loss=loss)
            got = curve._epsilon_window(delta)
            assert float(curve.epsilon(delta)) == (got if got is not None else curve.epsilon(
                np.array([delta, delta]))[0])  # (a scalar query: the window, where it applies)
            whole = float(curve._profile.epsilon(np.array([delta]))[0])
            asc = np.argsort(loss)
            ref = _fsum_epsilon(q[asc], loss[asc], 1e-14, delta)
            assert ref * (1 - 1e-13) <= whole <= ref * (1 + 1e-9), (whole, ref)
            if got is not None:
                used += 1
                assert ref * (1 - 1e-13) <= got <= ref * (1 + 1e-9), (got, ref, delta)
                assert got >= whole * (1 - 1e-15)  # (its allowance is the whole profile's)
    assert used >= 6


def test_shuffle_epoch_length_is_the_drop_last_one_even_near_an_integer() -> None:
    # An epoch of a shuffled dataset of N examples in batches of B (drop-last) has ⌊N/B⌋ steps,
    # computed here in integers. p = B/N is all fdp sees; an absolute 1e-9 in ⌊1/p⌋ read
    # N/B = 2.9999999995 (B = 2·10⁹) as 3 steps, so 6 steps were 2 epochs instead of 3.
    from fdp.accountant import _epochs_per

    cases = [(n, b) for n in (1, 2, 3, 7, 100, 256, 60000, 10**6 + 1)
             for b in (1, 2, 3, 7, 64, 256, 1000) if b <= n]
    cases += [(5999999999, 2 * 10**9), (6 * 10**9, 2 * 10**9), (10**12 - 1, 10**6)]
    for n, b in cases:
        assert _epochs_per(b / n) == n // b, (n, b)
    p = 2e9 / 5999999999
    mu = Accountant().step(1.0, p, sampling="shuffle", steps=6).mu()
    # three epochs of the per-epoch shuffle guarantee the accountant documents for σ = 1
    per_epoch = Accountant().step(1.0, p, sampling="shuffle", steps=2).mu()
    assert mu == pytest.approx(math.sqrt(3.0) * per_epoch, rel=1e-12)


@given(st.floats(min_value=1e-12, max_value=1e3, allow_nan=False, allow_infinity=False),
       st.integers(min_value=-(2**44), max_value=2**44))
def test_dyadic_step_is_below_h_and_its_lattice_is_exact(h: float, k: int) -> None:
    # The fast path composes on the lattice hℤ and discretizes each step at the float grid
    # losses h·k: they must be the lattice points themselves (exact rationals, fractions.Fraction).
    from fractions import Fraction

    from fdp.fastpath import _short_dyadic, dyadic_step

    d = dyadic_step(h)
    assert 0.75 * h < d <= h
    assert _short_dyadic(d)
    assert Fraction(d * k) == Fraction(d) * k


def test_dpsgd_screens_and_accountant_steps_are_short_dyadic() -> None:
    from fdp.fastpath import _short_dyadic

    h = fdp.dpsgd(1.1, 256 / 60000, 2000)
    h.epsilon(1e-5)
    steps = [g.loss[1] - g.loss[0] for grids in h._screen_grids.values() for g, _ in grids]
    assert steps and all(_short_dyadic(float(s)) for s in steps)
    acc = Accountant().step(1.1, 256 / 60000, steps=2000)
    acc.epsilon(1e-5)
    assert acc._fast_h is not None and _short_dyadic(acc._fast_h)
    with pytest.raises(ValueError, match="dyadic"):
        from fdp.fastpath import _StepGrid

        _StepGrid(fdp.Gaussian(1.0), 0.1)


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=2, max_value=3000), st.floats(min_value=1e-3, max_value=0.5),
       st.floats(min_value=0.05, max_value=8.0), st.sampled_from([0.0, 1e-15, 1e-9]),
       st.floats(min_value=-13.0, max_value=-0.5), st.integers(min_value=0, max_value=2**31))
def test_checked_epsilon_holds_the_exact_epsilon_from_above(
    n: int, h: float, decay: float, q_inf: float, log_delta: float, seed: int
) -> None:
    # _MassCurve's scalar ε(δ): a candidate from suffix sums, accepted only where a bound on δ
    # at it (its rounding charged) is at most δ. Against a math.fsum bisection (no fdp code):
    # never below the exact ε of the masses, and within 1e-9 where it answers.
    from fdp.fastpath import _MassCurve

    rng = np.random.default_rng(seed)
    loss = h * (1 + np.arange(n))
    q = 10.0 ** rng.uniform(-16, 0, n) * np.exp(-decay * loss)
    q *= 0.9 / q.sum()
    delta = 10.0**log_delta
    assume(delta > 2.0 * q_inf)  # (below q_∞, ε = ∞; the reference bisects on finite losses)
    curve = _MassCurve(q, loss, q_inf)
    i0 = curve._start(delta)
    got = curve._epsilon_checked(delta, i0)
    ref = _fsum_epsilon(q, loss, q_inf, delta)
    if got is not None:
        assert got >= ref * (1 - 1e-13), (got, ref)
        assert got <= ref * (1 + 1e-9) + 1e-12, (got, ref)
    assert ref * (1 - 1e-13) <= curve.epsilon(delta) <= ref * (1 + 1e-9) + 1e-12


def _shuffle_worst_mu2(n: int, b: int, drop_last: bool, runs: list[tuple[float, int]],
                       gap_at: int | None, restart: bool) -> float:
    """Σ over real epochs of max (2/σ)² (replace-one, Δ = 2): a training of n examples in
    batches of b, shuffled each epoch, the example in the batch with the least noise. Integers
    throughout (no p); ``gap_at``: another mechanism runs before that shuffled step, and the
    epoch ``restart``s there or goes on."""
    per = n // b if drop_last else -(-n // b)
    sig = [s for s, c in runs for _ in range(c)]
    total, best, pos = 0.0, 0.0, 0
    for t, s in enumerate(sig):
        if t == gap_at and restart and pos:
            total, best, pos = total + best, 0.0, 0
        best, pos = max(best, (2.0 / s) ** 2), pos + 1
        if pos == per:
            total, best, pos = total + best, 0.0, 0
    return total + best


@given(st.integers(2, 12), st.integers(1, 6), st.booleans(),
       st.lists(st.tuples(st.sampled_from([0.5, 1.0, 3.0, 100.0]), st.integers(1, 5)),
                min_size=1, max_size=5),
       st.one_of(st.none(), st.integers(1, 20)), st.booleans())
@example(5, 2, False, [(100.0, 2), (1.0, 2), (100.0, 2)], None, False)  # 3-step epochs
@example(4, 2, True, [(100.0, 1), (1.0, 2), (100.0, 3)], 1, False)  # an epoch across a gap
def test_shuffle_mu_covers_every_epoch_length_and_alignment(
        n: int, b: int, drop_last: bool, runs: list[tuple[float, int]], gap_at: int | None,
        restart: bool) -> None:
    # Against a direct simulation in integers (n, b): with ⌊1/p⌋-step epochs alone, p = 0.4 and
    # σ = 100, 100, 1, 1, 100, 100 read μ = 2.0002 where 3-step epochs (no drop_last) give
    # 2.83 (a helper's hunt).
    b = min(b, n)
    acc = Accountant()
    t = 0
    for s, c in runs:
        for _ in range(c):
            if t == gap_at:
                acc.compose(fdp.Gaussian(1e-9))
            acc.step(s, b / n, sampling="shuffle")
            t += 1
    ref = _shuffle_worst_mu2(n, b, drop_last, runs, gap_at, restart)
    assert acc.mu() ** 2 >= ref * (1 - 1e-12) - 1e-17, (acc.mu() ** 2, ref)


def test_shuffle_epochs_of_the_longer_length_are_charged() -> None:
    a = Accountant()
    for s in (100.0, 1.0, 100.0):
        a.step(s, 0.4, steps=2, sampling="shuffle")
    assert a.mu() == pytest.approx(math.sqrt(8.0), rel=1e-12)  # epochs of 3: two σ = 1


def test_a_mutated_argument_is_read_again() -> None:
    # A hunt: step() extended the last entry when its arguments compared equal to the last
    # call's; a 0-d array changed in place is the same object, so σ = 0.3 was accounted as 1.0
    # (ε(1e-5) 2.58 for 69.95). The schedule as run is two entries.
    s = np.array(1.0)
    acc = Accountant().step(s, 0.01, steps=1000)
    s[()] = 0.3
    acc.step(s, 0.01, steps=1000)
    assert [h["noise_multiplier"] for h in acc.history] == [1.0, 0.3]
    ref = Accountant().step(1.0, 0.01, steps=1000).step(0.3, 0.01, steps=1000)
    assert acc.epsilon(1e-5) == ref.epsilon(1e-5)


def test_planned_steps_are_the_documented_ceiling_for_huge_datasets() -> None:
    # A hunt: ⌈epochs · n/B − 1e-9⌉ planned 3 steps for n = 3·10⁹ + 1, B = 10⁹ (exactly 4 by
    # the documented ⌈epochs · n/B⌉, integer arithmetic) and 1 for n = 10¹⁰ + 1, B = 10¹⁰.
    for n, b, e in ((3 * 10**9 + 1, 10**9, 1), (10**10 + 1, 10**10, 1), (60000, 256, 60),
                    (60000, 256, 0.1 * 3), (10**6, 1000, 7)):
        want = -(-round(e * 10) * n // (b * 10))  # ⌈e n / B⌉ for e with one decimal
        assert plan_sampling(n, b, e, warn=False).steps == want, (n, b, e)


@pytest.mark.parametrize("cut", ["step", "window"])
def test_fast_power_moves_the_mass_it_cuts_to_the_infinite_atom(cut: str) -> None:
    # The Q-mass a step's grid leaves above its support, and the composed mass beyond the FFT
    # window (a Chernoff bound), go to the +∞ atom. At the accountant's tails (1e-24, 1e-16)
    # either is far below any δ it answers, so dropping either passed every test; with tails
    # of 1e-3 here, δ read without them falls below the exact value.
    import mpmath as mp

    from fdp.fastpath import _fast_power, _StepGrid, dyadic_step

    mp.mp.dps = 40
    h = dyadic_step(0.01)
    if cut == "step":  # G_1 four times: the exact G_2
        n, step_tail, window_tail = 4, 1e-3, 1e-16
        f = fdp.Gaussian(1.0)
        two = mp.mpf(2)

        def truth(e: float) -> Any:
            return mp.ncdf(-e / two + 1) - mp.exp(e) * mp.ncdf(-e / two - 1)

        epss = [1.0, 3.0, 5.0, 7.0, 9.0, 12.0]
    else:  # a rare loss of 10 (Q-mass 1e-2), four times: the window ends below 4 of them
        n, step_tail, window_tail = 4, 1e-24, 1e-3
        ps, qs = [1.0 - 1e-2 * math.exp(-10.0), 1e-2 * math.exp(-10.0)], [0.99, 1e-2]
        f = fdp.from_distributions(ps, qs)
        pm, qm = [mp.mpf(x) for x in ps], [mp.mpf(x) for x in qs]

        def truth(e: float) -> Any:  # the binomial sum over the rare draws
            return mp.fsum(max(mp.binomial(n, k) * (qm[1] ** k * qm[0] ** (n - k) - mp.exp(e)
                                                    * pm[1] ** k * pm[0] ** (n - k)), 0)
                           for k in range(n + 1))

        epss = [5.0, 12.0, 25.0, 35.0, 39.0]
    grid = _StepGrid(f, h, step_tail)
    curve, _ = _fast_power([(grid, n)], h, window_tail=window_tail)
    assert curve._q_inf > 1e-4  # (what was cut is there)
    for e in epss:
        exact = truth(e)
        assert exact <= mp.mpf(curve.delta_bound(e)), (cut, e, curve.delta_bound(e), exact)
        assert exact <= mp.mpf(float(curve.delta(e))), (cut, e, curve.delta(e), exact)


def test_checkpoints_keep_what_inverses_and_lower_ends_read() -> None:
    # helper-35, against exact sums at 60 digits (exact_sums): (1) a product reloaded twice
    # lost its inverse's masses (no builder after one round trip): its inverse read ε(1e-300)
    # 6.5e-16 relative below log 16 and δ 0 for 2.3e-17; (2) a self-inverse curve differenced
    # from breakpoints (poisson_subsample(...).symmetric) reloaded lost that, and its losses'
    # charge: its inverse read ε 1e-14 relative low, its lower ends sat above the truth
    import mpmath as mp
    from exact_sums import mp_delta, mp_eps, mp_pair, mp_poisson_symmetric_pair

    from fdp.accountant import curve_from_spec, curve_to_spec

    def rt(c: Any) -> Any:
        return curve_from_spec(json.loads(json.dumps(curve_to_spec(c))))

    mp.mp.dps = 60
    pq = ([0.5, 0.25, 0.25], [0.125, 0.375, 0.5])
    twice = rt(rt(fdp.compose(fdp.from_distributions(*pq), repeat=2))).inverse()
    pm, qm = mp_pair(*pq)
    inv = [(qm, pm)] * 2  # T(Q, P) twice
    for d in (1e-300, 1e-10, 1e-3):
        assert mp_eps(inv, d) <= mp.mpf(float(twice.epsilon(d))), d
    for e in (2.772588722239781, 1.0, 0.0):
        assert mp_delta(inv, e) <= mp.mpf(float(twice.delta(e))), e
    sym = fdp.poisson_subsample(fdp.from_distributions([0.5, 0.5], [0.25, 0.75]), 0.3).symmetric
    ref = [mp_poisson_symmetric_pair([0.5, 0.5], [0.25, 0.75], 0.3)]
    back = rt(sym)
    for h in (back, back.inverse()):  # (symmetric: one profile)
        for d in (1e-300, 1e-10, 1e-3, 0.1):
            truth = mp_eps(ref, d)
            lo, hi = h.epsilon_bracket(d)
            assert mp.mpf(float(lo)) <= truth <= mp.mpf(float(hi)), (d, lo, hi, truth)
        for e in (0.0, 0.1, 0.26236426446749, 0.2623642644674):
            truth = mp_delta(ref, e)
            lo, hi = h.delta_bracket(e)
            assert mp.mpf(float(lo)) <= truth <= mp.mpf(float(hi)), (e, lo, hi, truth)

"""Tests of fdp.dpsgd against independent references: the exact single-step curve C_p(G_{Δ/σ}),
peer-reported values (PEERS.md), mpmath closed forms and the issue's accuracy targets."""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest

import fdp
from fdp.operations import Subsampled
from fdp.sgd import dpsgd, dpsgd_clt, poisson_subsampled_gaussian

GRID = np.linspace(0, 1, 1001)


def check_axioms(f: fdp.TradeOff) -> None:
    y = np.asarray(f(GRID))
    assert np.all(np.isfinite(y)) and np.all(y >= 0) and np.all(y <= 1 - GRID + 1e-12)
    assert np.all(np.diff(y) <= 1e-12)
    assert np.all(y[:-2] + y[2:] - 2 * y[1:-1] >= -1e-9)


@pytest.fixture(scope="module")
def issue_case() -> fdp.Bracketed:
    return dpsgd(1.0, 0.01, 1000)


def test_issue_target(issue_case: fdp.Bracketed) -> None:
    # issue 4: Poisson, σ = 1, p = 0.01, T = 1000, δ = 1e-5: within 0.5 % of 1.828, width ≤ 0.5 %
    lo, hi = issue_case.epsilon_bracket(1e-5)
    assert abs(lo - 1.828) <= 0.005 * 1.828 and abs(hi - 1.828) <= 0.005 * 1.828
    assert hi - lo <= 0.005 * hi
    assert issue_case.epsilon(1e-5) == hi  # the reported ε is the conservative end
    check_axioms(issue_case.lower)
    check_axioms(issue_case.upper)
    # both directions enter: ε is the larger of the add and remove directions' ε
    f = fdp.compose(poisson_subsampled_gaussian(1.0, 0.01), repeat=1000, numeric=True)
    assert hi == pytest.approx(max(f.epsilon(1e-5), f.inverse().epsilon(1e-5)), rel=1e-12)


def test_single_step_brackets_exact_subsampled_gaussian() -> None:
    h = dpsgd(1.0, 0.05, 1)
    # Poisson, one step: min{f_p, f_p⁻¹}** = C_p(G_μ) (ZDW; theory §7, "Poisson subsampling")
    exact = Subsampled(fdp.Gaussian(1.0), 0.05)
    assert np.all(h.lower(GRID) <= exact(GRID) + 1e-9)
    assert np.all(h.upper(GRID) >= exact(GRID) - 1e-9)
    lo, hi = h.epsilon_bracket(1e-5)
    assert lo <= exact.epsilon(1e-5) <= hi


def test_p_equal_one_is_gaussian_composition() -> None:
    h = dpsgd(2.0, 1.0, 16)  # no subsampling: G_{1/2}^{⊗16} = G_2
    lo, hi = h.epsilon_bracket(1e-6)
    e = fdp.Gaussian(2.0).epsilon(1e-6)
    assert lo <= e <= hi and hi - lo < 5e-3 * e


def test_clt_underestimates_and_matches_formula() -> None:
    g = dpsgd_clt(1.0, 0.01, 1000)
    assert g.kind == "approximation"
    assert g.mu == pytest.approx(0.01 * math.sqrt(1000 * math.expm1(1.0)))
    with pytest.raises(AttributeError):
        _ = g.lower
    lo, _ = dpsgd(1.0, 0.01, 1000).epsilon_bracket(1e-5)
    assert g.epsilon(1e-5) < lo  # the CLT underestimates here (BDLS; PEERS)
    # DRS Sec 5's formula is for steps C_p(G_{1/σ}): sensitivity 1 reproduces it with σ as is
    gu = dpsgd_clt(1.0, 0.01, 1000, sampling="uniform", sensitivity=1.0)
    inner = math.exp(1.0) * 0.9331927987311419 + 3 * 0.3085375387259869 - 2  # Φ(1.5), Φ(−0.5)
    assert gu.mu == pytest.approx(math.sqrt(2) * 0.01 * math.sqrt(1000) * math.sqrt(inner))
    # the default replace-one sensitivity 2·C: σ → σ/2 = 0.5 in the formula
    gd = dpsgd_clt(1.0, 0.01, 1000, sampling="uniform")
    inner = math.exp(4.0) * 0.9986501019683699 + 3 * 0.15865525393145707 - 2  # Φ(3), Φ(−1)
    assert gd.mu == pytest.approx(math.sqrt(2) * 0.01 * math.sqrt(1000) * math.sqrt(inner))
    assert gd.info["neighbours"] == "replace-one" and gd.info["sensitivity"] == 2.0
    # Poisson with sensitivity Δ: μ = p √(T (e^{Δ²/σ²} − 1))
    g3 = dpsgd_clt(2.0, 0.01, 1000, sensitivity=3.0)
    assert g3.mu == pytest.approx(0.01 * math.sqrt(1000 * math.expm1(9.0 / 4.0)))


def test_uniform_sampling_is_composed_cp() -> None:
    # replace-one: the clipped sum moves by 2C, so with noise σ·C one step is C_p(G_{2/σ})
    h = dpsgd(2.0, 0.01, 100, sampling="uniform")
    ref = fdp.compose(fdp.Gaussian(1.0).subsample(0.01), repeat=100, numeric=True, tol=2.5e-4)
    lo, hi = h.epsilon_bracket(1e-5)
    rlo, rhi = ref.epsilon_bracket(1e-5)
    assert lo <= rhi and rlo <= hi


def test_poisson_step_curve() -> None:
    m = poisson_subsampled_gaussian(2.0, 0.1)
    a = np.linspace(0, 1, 11)
    np.testing.assert_allclose(m(a), 0.1 * fdp.Gaussian(0.5)(a) + 0.9 * (1 - a), atol=1e-15)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="noise_multiplier"):
        dpsgd(0.0, 0.1, 10)
    with pytest.raises(ValueError, match="sample_rate"):
        dpsgd(1.0, 0.0, 10)
    with pytest.raises(ValueError, match="steps"):
        dpsgd(1.0, 0.1, 0)
    with pytest.raises(ValueError, match="sampling"):
        dpsgd(1.0, 0.1, 10, sampling="shuffle")


# ---------------------------------------------------------------- conventions (issue 12, item 8)
def _mp_delta_cp_gauss(mu: float, p: float, eps: float) -> mp.mpf:
    """δ(ε) of C_p(G_μ) for ε ≥ 0 by DRS Thm 4.2 (theory §7): p δ_{G_μ}(log(1 + (e^ε − 1)/p)),
    with δ_{G_μ}(e) = Φ(−e/μ + μ/2) − e^e Φ(−e/μ − μ/2) (DRS Cor 2.13), in mpmath."""
    mu, p, eps = mp.mpf(mu), mp.mpf(p), mp.mpf(eps)
    e = mp.log(1 + mp.expm1(eps) / p)
    return p * (mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2))


def _mp_eps_cp_gauss(mu: float, p: float, delta: float) -> float:
    lo, hi = mp.mpf(0), mp.mpf(100)
    for _ in range(200):
        mid = (lo + hi) / 2
        if _mp_delta_cp_gauss(mu, p, float(mid)) > delta:
            lo = mid
        else:
            hi = mid
    return float((lo + hi) / 2)


@pytest.mark.parametrize("p", [0.01, 0.2])
def test_uniform_one_step_is_cp_of_g_2_over_sigma(p: float) -> None:
    # fixed-size batches, replace-one, noise σ·C on the sum of gradients clipped to C: the sum
    # moves by 2C, so one step is C_p(G_{2/σ}) (the issue's reproducer used G_{1/σ})
    sigma = 1.0
    h = dpsgd(sigma, p, 1, sampling="uniform")
    with mp.workdps(40):
        for delta in [1e-3, 1e-5, 1e-8]:
            ref = _mp_eps_cp_gauss(2.0 / sigma, p, delta)
            lo, hi = h.epsilon_bracket(delta)
            assert lo <= ref * (1 + 1e-12) and ref <= hi * (1 + 1e-12)
            assert h.epsilon(delta) >= ref * (1 - 1e-12)  # the reported ε is conservative
            # the old (wrong) step C_p(G_{1/σ}) gives a much smaller ε
            assert _mp_eps_cp_gauss(1.0 / sigma, p, delta) < 0.8 * ref
        for eps in [0.0, 0.5, 2.0, 4.0]:
            ref_d = float(_mp_delta_cp_gauss(2.0 / sigma, p, eps))
            assert float(h.delta(eps)) >= ref_d * (1 - 1e-9)  # certified upper δ
            assert float(h.upper.delta(eps)) <= ref_d * (1 + 1e-9) + 1e-300


def test_issue_reproducer_uniform_regression() -> None:
    # issue 12 item 8: fdp.dpsgd(1, 0.01, 1000, sampling="uniform") reported ε(1e-5) ≈ 2.20
    h = dpsgd(1.0, 0.01, 1000, sampling="uniform")
    lo, hi = h.epsilon_bracket(1e-5)
    assert 14.7 < lo <= hi < 14.9 and hi - lo <= 1e-3 * hi
    # independent upper bound: RDP of sampling without replacement (Wang, Balle &
    # Kasiviswanathan 2019 Thm 9) for σ/Δ = 0.5 lies above the exact ε
    from fdp import rdp

    o = rdp.DEFAULT_ORDERS
    assert hi <= rdp.to_epsilon(1000 * rdp.subsampled_gaussian_wor(0.5, 0.01, o), o, 1e-5)
    # the same curve from its definition C_p(G_2)^{⊗1000} (a sanity check, fdp against fdp)
    ref = fdp.compose(fdp.subsample(fdp.Gaussian(2.0), 0.01), repeat=1000, numeric=True)
    rlo, rhi = ref.epsilon_bracket(1e-5)
    assert lo <= rhi and rlo <= hi
    # DRS's convention (noise 2σC, σ = 1) is reproduced with noise_multiplier 2 or sensitivity 1
    a = dpsgd(2.0, 0.01, 1000, sampling="uniform").epsilon_bracket(1e-5)
    b = dpsgd(1.0, 0.01, 1000, sampling="uniform", sensitivity=1.0).epsilon_bracket(1e-5)
    assert a == pytest.approx(b, rel=1e-12) and 2.1 < a[0] < 2.3


@pytest.mark.parametrize("sampling", ["poisson", "uniform"])
def test_sensitivity_scales_the_noise(sampling: str) -> None:
    # doubling the sensitivity is halving the noise: dpsgd(σ, sensitivity=2Δ) = dpsgd(σ/2)
    natural = 1.0 if sampling == "poisson" else 2.0
    a = dpsgd(1.6, 0.02, 200, sampling, sensitivity=2.0 * natural)
    b = dpsgd(0.8, 0.02, 200, sampling)
    assert a.epsilon_bracket(1e-6) == pytest.approx(b.epsilon_bracket(1e-6), rel=1e-12)
    assert a.info["step_mu"] == pytest.approx(b.info["step_mu"]) == pytest.approx(natural / 0.8)


def test_defaults_and_explicit_conventions_agree() -> None:
    for sampling, rel, sens in [("poisson", "add-remove", 1.0), ("uniform", "replace-one", 2.0)]:
        a = dpsgd(1.0, 0.05, 20, sampling)
        b = dpsgd(1.0, 0.05, 20, sampling, neighbours=rel, sensitivity=sens)
        assert a.epsilon(1e-5) == b.epsilon(1e-5)
        assert a.info["neighbours"] == rel and a.info["sensitivity"] == sens
        assert a.info["sampling"] == sampling and "relative to the clipping norm" in a.info["noise"]
        assert rel in repr(a) and f"Δ={sens:g}·C" in repr(a) and "σ·C" in repr(a)
    # spelling variants of the relation are accepted
    c = dpsgd(1.0, 0.05, 20, "poisson", neighbours="add/remove")
    assert c.info["neighbours"] == "add-remove"


def test_bad_conventions() -> None:
    with pytest.raises(ValueError, match="neighbours='replace-one' with sampling='poisson'"):
        dpsgd(1.0, 0.1, 10, neighbours="replace-one")
    with pytest.raises(ValueError, match="neighbours='add-remove' with sampling='uniform'"):
        dpsgd(1.0, 0.1, 10, sampling="uniform", neighbours="add-remove")
    with pytest.raises(ValueError, match="neighbours must be one of"):
        dpsgd(1.0, 0.1, 10, neighbours="swap")
    for bad in [0.0, -1.0, math.nan, math.inf]:
        with pytest.raises(ValueError, match="sensitivity"):
            dpsgd(1.0, 0.1, 10, sensitivity=bad)
        with pytest.raises(ValueError, match="sensitivity"):
            dpsgd_clt(1.0, 0.1, 10, sampling="uniform", sensitivity=bad)
    with pytest.raises(ValueError, match="neighbours"):
        dpsgd_clt(1.0, 0.1, 10, sampling="uniform", neighbours="add-remove")


@pytest.mark.parametrize("sampling", ["poisson", "uniform"])
def test_full_batch_is_exactly_gaussian(sampling: str) -> None:
    # p = 1: T Gaussian steps of sensitivity Δ and noise σ compose to G_{√T·Δ/σ} (Dong, Roth,
    # Su 2022, Cor 3.3); Δ = 1 (add/remove) or 2 (replace-one). Closed form in mpmath.
    import mpmath

    h = fdp.dpsgd(1.3, 1.0, 400, sampling)
    mu = math.sqrt(400) * (1.0 if sampling == "poisson" else 2.0) / 1.3
    eps = 5.0
    with mpmath.workdps(40):
        ref = mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)
    assert h.delta(eps) == pytest.approx(float(ref), rel=1e-9)
    lo, hi = h.epsilon_bracket(1e-6)
    # (the two ends are G_μ rounded each way: a bracket of a few ulps around the exact ε)
    assert lo <= hi <= lo * (1 + 1e-12)
    assert h.upper.delta(eps) <= float(ref) * (1 + 1e-15)
    assert h.delta(eps) >= float(ref) * (1 - 1e-15)
    assert h.info["neighbours"] and h.info["sensitivity"]


def test_tiny_delta_bracket_is_tight() -> None:
    # issue #13: within 1 % of the truth down to δ = 1e-30 at the defaults. The MNIST schedule's
    # certified ε bracket at 1e-20 and 1e-30 (the sides are checked against independent
    # references in tests/reference/test_ref_tail.py); before the slack was charged where it
    # sits, the optimistic end stopped at 4.05 (bracket [4.05, 5.68] at 1e-20)
    h = fdp.dpsgd(1.1, 256 / 60000, 14063)
    for d in (1e-20, 1e-30):
        lo, hi = h.epsilon_bracket(d)
        assert 0 < hi - lo <= 1e-3 * hi, (d, lo, hi)


@pytest.mark.parametrize(("s", "p", "T"), [(2.0, 1e-4, 100), (2.0, 1e-4, 10_000)])
def test_deep_delta_within_one_percent_on_sparse_runs(s: float, p: float, T: int) -> None:
    # issue #13: δ(ε) within 1 % down to 1e-30. The deep grid's planner also measures the gap
    # between its two sides under the tilt that carries δ there (pld._tail_width) and may then
    # plan a coarser grid than its Gaussian model asks; sized on that gap alone (≤ 4 tol) the
    # second run read 1.19 % at 1e-30, and with the bulk's ε-width target the first 0.83 %.
    # Here the certified δ bracket at the certified ε: [δ_lo(ε_hi), δ_hi(ε_hi)] holds δ(ε_hi).
    h = fdp.dpsgd(s, p, T)
    for d in (1e-14, 1e-20, 1e-30):
        _, hi = h.epsilon_bracket(d)
        d_lo, d_hi = h.delta_bracket(hi)
        assert 0 < d_lo <= d_hi <= d * (1 + 1e-12)
        assert d_hi - d_lo <= 0.007 * d_hi, (d, d_lo, d_hi)


def test_query_warnings_are_about_the_answer_not_a_direction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # dpsgd(1, 1e-3, 10⁷): the remove direction's grid is capped and its own bracket is wider
    # than tol, but the add direction decides ε and the answer's bracket is within tol. Queries
    # used to warn about the remove direction's bracket; they now warn only when the answer's
    # certified bracket is wider than tol: the σ = 0.8 run below on a grid capped at 2¹² points,
    # 1.9 % wide at 1e-10; its bracket query says so, naming DP-SGD. (This used
    # dpsgd(0.8, 1e-5, 10⁶) at the default caps, 3.7 % wide then; the split composition of rare
    # steps makes it 0.098 % wide.)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fdp.AccuracyWarning)  # (the build's predicted width)
        h = fdp.dpsgd(1.0, 1e-3, 10**7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fdp.AccuracyWarning)
        for delta in (1e-5, 1e-10):
            lo, hi = h.epsilon_bracket(delta)
            assert 0 < lo <= hi <= lo * (1 + 1e-3)
            assert h.epsilon(delta) == hi
    monkeypatch.setattr(fdp.pld, "MAX_GRID", 1 << 12)
    monkeypatch.setattr(fdp.pld, "MAX_COMPONENT", 1 << 11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fdp.AccuracyWarning)
        wide = fdp.dpsgd(0.8, 1e-3, 10**4)
    with pytest.warns(fdp.AccuracyWarning, match=r"DP-SGD\(σ=0.8.*bracket at δ = 1e-10"):
        lo, hi = wide.epsilon_bracket(1e-10)
    assert hi - lo > 1e-3 * hi


def test_remove_direction_not_rebuilt_where_it_cannot_decide() -> None:
    # A deep query (δ < 1e-12) rebuilt both directions on their deep grids. The remove
    # direction's bulk grid already bounds its ε (and δ) from above; where that bound is no
    # larger than the add direction's value, the answer is the add direction's, whatever the
    # deep grid would say, and it is not built (MNIST ε(1e-20): 1.4 s → 0.75 s).
    h = fdp.dpsgd(2.0, 0.3, 50)
    f, g = h._parts
    d = 1e-15
    lo, hi = h.epsilon_bracket(d)
    assert f.info["grid_mode"] == "deep" and g.info["grid_mode"] == "fast"
    assert g._side_lower().epsilon(d) <= hi  # (the bound that made the rebuild unnecessary)
    # the same answer as with both directions on their deep grids
    both = fdp.dpsgd(2.0, 0.3, 50)
    for part in both._parts:
        part.deepen()
    b_lo, b_hi = both.epsilon_bracket(d)
    assert hi == b_hi and b_lo >= lo and lo <= hi
    assert float(h.delta(10.0)) == float(both.delta(10.0))


# ε(δ) of Poisson DP-SGD (add/remove, the larger direction) by MGF inversion
# (benchmarks/bench_extremes.py: ref_dpsgd_eps, independent of fdp), stored: ~10 s each
MNIST_REFS = {1e-5: 2.381689726130521, 1e-9: 3.500220677533257}

# σ = 0.5 with sparse sampling (issue 13's hard corner), ε(1e-5), same reference
SPARSE_REFS = {10**5: 0.2035878300501893, 10**6: 0.4941596314261438, 10**7: 1.095531253}


@pytest.mark.parametrize("steps", sorted(SPARSE_REFS))
def test_sparse_low_noise_bracket_against_mgf_inversion(steps: int) -> None:
    # σ = 0.5, p = 1e-5 (MGF-inversion references, benchmarks/bench_extremes.py): half of a
    # step's Q-mass lies within 1.4e-6 of log(1 − p), a fifth of the (memory-capped) grid step.
    # The grid was aligned to a phantom atom at log(1 − p), the worst offset for the optimistic
    # side: the brackets were 0.25 %, 0.66 % and 3.3 % wide (optimistic end up to 3.2 % below
    # the truth). With the offset searched (fdp.pld._piled_offset) all are within tol
    ref = SPARSE_REFS[steps]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", fdp.AccuracyWarning)
        lo, hi = fdp.dpsgd(0.5, 1e-5, steps).epsilon_bracket(1e-5)
    # (the builds warn of their predicted width at ε_ref, a smaller ε; the query does not)
    assert not [w for w in seen if "bracket at δ" in str(w.message)]
    assert lo <= ref <= hi, (lo, ref, hi)
    assert hi - lo <= 1e-3 * hi, (lo, hi)


# σ = 0.8, p = 1e-4, T = 10⁵ (T·p = 10) far in the tail, same reference (~4 min each)
TAIL_REFS = {1e-10: 0.5468894110598697, 1e-12: 0.9519557145002078}


@pytest.mark.parametrize("delta", sorted(TAIL_REFS))
def test_sparse_tail_bracket_against_mgf_inversion(delta: float) -> None:
    # The tilts of the FFT were chosen by halving only: between a tilt whose round-off was 30 %
    # of the mass and one whose wrap-around was 10³ times it, nothing; the bracket was
    # [0.5407, 0.5531] (2.3 %) at δ = 1e-10 and [0.894, 1.002] (11 %) at 1e-12. Now the search
    # goes steeper or gentler as the error asks, and pads the FFT where wrap-around held back
    # the steepest tilt: both sides hold the truth, within 0.15 %
    ref = TAIL_REFS[delta]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fdp.AccuracyWarning)
        lo, hi = fdp.dpsgd(0.8, 1e-4, 10**5).epsilon_bracket(delta)
    assert lo <= ref <= hi, (lo, ref, hi)
    assert hi - lo <= 1.5e-3 * hi, (lo, hi)


def test_sparse_tail_slack_against_mgf_inversion() -> None:
    # σ = 0.8, p = 1e-5, T = 10⁶, ε(1e-10): the bracket was [0.1041, 0.1601] (the conservative
    # end 49 % above the truth: the tilts; the optimistic end: the slack of the optimistic
    # measures, charged by a Chernoff bound of the other steps' heavy-tailed sum, lifted δ by
    # 4.6e-9 where δ is 7e-10). Reference: MGF inversion, 0.107387972 (~8 min)
    ref = 0.1073879719785895
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", fdp.AccuracyWarning)
        lo, hi = fdp.dpsgd(0.8, 1e-5, 10**6).epsilon_bracket(1e-10)
    assert lo <= ref <= hi, (lo, ref, hi)
    assert hi <= ref * 1.06 and lo >= ref * 0.99, (lo, ref, hi)


def _engine_one_step(s: float, p: float):  # noqa: ANN202
    """dpsgd(s, p, T)'s engine path at T = 1 (dpsgd itself answers one step from the closed
    forms): the add direction composed by the engine, the remove direction on demand."""
    from fdp.operations import Mixture
    from fdp.sgd import _SymmetricMin

    f = fdp.compose(Mixture(fdp.Gaussian(1.0 / s), p), repeat=1, numeric=True)
    return _SymmetricMin(f, None, name="one step", info={**f.info, "symmetric": True})


def test_one_step_is_exact_from_the_closed_forms() -> None:
    # dpsgd(σ, p, 1) is min{f, f⁻¹}** with f = p G_μ + (1 − p) Id: its δ and ε come from f's and
    # f⁻¹'s closed forms, not the engine, whose bracket at δ = 1e-300 was [69.79, 71.08] for
    # σ = 0.5, p = 0.01. Reference: the add pair's δ(ε) = p δ_{G_μ}(ε') (mixture identity),
    # ε' = log(1 + (e^ε − 1)/p), and the remove pair's closed form, in mpmath
    s, p = 0.5, 0.01
    h = dpsgd(s, p, 1)
    mu = 1.0 / s
    with mp.workdps(50):
        def add(e: object) -> object:
            e1 = mp.log(1 + mp.expm1(e) / p)
            return p * (mp.ncdf(-e1 / mu + mu / 2) - mp.e**e1 * mp.ncdf(-e1 / mu - mu / 2))

        for eps in (0.0, 0.005, 0.5, 3.0, 30.0):
            truth = max(add(mp.mpf(eps)), _remove_delta_one_step(eps, mu, p))
            lo, hi = h.delta_bracket(eps)
            assert lo <= truth <= hi <= truth * (1 + 1e-9), (eps, lo, hi, truth)
    lo, hi = h.epsilon_bracket(1e-300)
    assert lo <= 71.07936378907418 <= hi and hi - lo <= 2e-9 * hi  # (mpmath bisection)
    assert h.info["neighbours"] == "add-remove" and h.info["items"][0][1] == 1


def _remove_delta_one_step(eps: float, mu: float, p: float) -> mp.mpf:
    """δ(ε) of one remove step, T(N(0,1) vs (1 − p)N(0,1) + pN(μ,1)) reversed: the pair
    A = (1 − p)N(0,1) + pN(μ,1), B = N(0,1), δ = ∫ (b − e^ε a)₊, in closed form: the
    likelihood ratio b/a = 1/(1 − p + p e^{μx − μ²/2}) falls in x, so the set is x < x*."""
    with mp.workdps(40):
        e, m, q = mp.mpf(eps), mp.mpf(mu), mp.mpf(p)
        r = (mp.e ** (-e) - (1 - q)) / q
        if r <= 0:
            return mp.mpf(0)
        xs = (mp.log(r) + m**2 / 2) / m
        return mp.ncdf(xs) - mp.e**e * ((1 - q) * mp.ncdf(xs) + q * mp.ncdf(xs - m))


@pytest.mark.parametrize("s,p", [(1.0, 0.5), (0.5, 0.9), (2.0, 0.3), (4.0, 0.01)])
def test_remove_screen_is_an_upper_bound_on_the_remove_delta(s: float, p: float) -> None:
    # The screens that spare building the remove direction are certified upper bounds on its
    # δ: one step against the closed form in mpmath, untilted and tilted for each ε (the coarse
    # screen's grid is 4x coarser than the add direction's, so it is looser, but never below),
    # with the window's tails at 1e-30 and at the 1e-11 a query at δ ≥ 1e-5 takes (the tails'
    # mass joins the +∞ atom)
    h = _engine_one_step(s, p)
    for level, slack in ((0, 0.2), (1, 0.03)):
        for eps in (0.0, 0.05, 0.2, 0.5, 1.0, 3.0):
            ref = float(_remove_delta_one_step(eps, 1.0 / s, p))
            for at, tail in ((0.0, 1e-30), (eps, 1e-30), (eps, 1e-11)):
                scr = h._screen(at, level, tail)
                assert scr is not None
                got = scr.delta_bound(eps)
                assert got >= ref * (1 + 1e-15), (level, at, eps, got, ref)
                assert got <= ref * (1 + slack) + 1e-10, (level, at, eps, got, ref)  # (round-off)


def test_remove_direction_built_only_where_a_query_needs_it() -> None:
    # The remove direction was composed with the add direction on every dpsgd call (half of the
    # MNIST query: 74 ms). It is now built only where the screen cannot show that its ε is at
    # most the add direction's. MNIST: never built, and the bracket contains the reference.
    h = fdp.dpsgd(1.1, 256 / 60000, 14063)
    for d, ref in MNIST_REFS.items():
        lo, hi = h.epsilon_bracket(d)
        assert lo <= ref <= hi and hi - lo <= 1e-3 * hi
        assert h.epsilon(d) == hi
    assert h._g is None
    d_hi = float(h.delta(hi))
    # (δ at the conservative ε(1e-9) is about 1e-9: at most it on the grid that gave ε, and
    # within the promised 1 % below it on the grid a δ query may rebuild for its accuracy)
    assert h._g is None and 0.99e-9 <= d_hi <= 1e-9 * (1 + 1e-9)
    # the same answers as with the remove direction built (fdp against fdp on purpose: this
    # checks that the screen only skips work; the side is checked against the reference above)
    both = fdp.dpsgd(1.1, 256 / 60000, 14063)
    both._parts  # noqa: B018 - builds the remove direction
    assert both._g is not None
    both.epsilon_bracket(1e-9)  # (the same queries, so the same grids: 1e-9 builds the tilt)
    assert float(both.delta(hi)) == d_hi  # (and the δ query its grid, kept for later queries)
    assert both.epsilon_bracket(1e-5)[1] == h.epsilon_bracket(1e-5)[1]
    # where the other direction decides, the screens cannot settle it and it is built: the
    # same pair of directions with their roles swapped (f the remove direction, f⁻¹ the add)
    from fdp.operations import Mixture
    from fdp.sgd import _SymmetricMin
    from fdp.tradeoff import Inverse

    rem = fdp.compose(Inverse(Mixture(fdp.Gaussian(1 / 1.1), 256 / 60000)), repeat=14063,
                      numeric=True)
    k = _SymmetricMin(rem, None, info={**rem.info, "symmetric": True})
    lo, hi = k.epsilon_bracket(1e-5)
    assert k._g is not None and lo <= MNIST_REFS[1e-5] <= hi
    # pickling keeps an unbuilt remove direction unbuilt, with the same answers
    import pickle

    fresh = fdp.dpsgd(1.1, 256 / 60000, 14063)
    h2 = pickle.loads(pickle.dumps(fresh))
    assert h2._g is None and h2.epsilon(1e-5) == fresh.epsilon(1e-5)


def test_delta_at_zero_needs_no_remove_direction() -> None:
    # δ(0) is the total variation distance, the same for a pair and its inverse (theory §3), so
    # δ(0) (the advantage) and ε(δ) = 0 for δ ≥ δ(0) need no remove direction; its screen cannot
    # tell there (the two are equal), so it used to be built. One step against the closed form.
    h = _engine_one_step(1.0, 0.5)
    with mp.workdps(40):
        # add pair: δ(0) = ∫ (b − a)₊, a = N(0,1), b = (1 − p)N(0,1) + pN(μ,1): b > a for x > μ/2
        tv = 0.5 * (mp.ncdf(0.5) - mp.ncdf(-0.5))
    d0 = float(h.delta(0.0))
    assert float(tv) <= d0 <= float(tv) * (1 + 1e-3)
    assert h.epsilon(d0 * 1.01) == 0.0
    assert h._g is None
    # (the MNIST schedule: its advantage at no extra cost)
    k = fdp.dpsgd(1.1, 256 / 60000, 14063)
    assert 0.0 < float(k.delta(0.0)) < 1.0 and k._g is None


def test_rarely_sampled_curve_comes_from_the_count_bounds_certified_and_tight() -> None:
    # σ = 0.1, p = 1e-12, T = 1000: the engine's grid cannot resolve the rare loss (it spent
    # ~50 s and read f(0.5) = 0.437). The curve is the envelope of the sampled-count bounds'
    # (ε, δ) guarantees. References (mpmath, no fdp): the threshold test {max_t x_t > c} has
    # type I error α_c = 1 − Φ(c)^T and type II β_c = ((1 − p)Φ(c) + pΦ(c − μ))^T ≥ f(α_c) (any
    # test is above the optimal one), so a certified lower curve is ≤ β_c; and the total
    # variation is at most 1 − (1 − p)^T ≤ Tp, so f(α) ≥ 1 − α − Tp (tightness).
    s, p, t = 0.1, 1e-12, 1000
    mu = 1.0 / s
    c = dpsgd(s, p, t)
    with mp.workdps(60):
        for cut in (2.0, 3.5, 5.0, 7.0):
            a_c = 1 - mp.ncdf(cut) ** t
            b_c = ((1 - p) * mp.ncdf(cut) + p * mp.ncdf(cut - mu)) ** t
            v = float(c(float(a_c)))
            assert v <= float(b_c), (cut, v, float(b_c))
            # (1e-12: the envelope's values are rounded down by its masses' declared rounding,
            # 16u per line of from_eps_delta)
            assert v >= float(1 - a_c - t * p) - 1e-12, (cut, v, float(1 - a_c - t * p))
    alpha = np.linspace(0.0, 1.0, 201)
    f = np.asarray(c(alpha))
    assert np.all(f <= 1.0 - alpha + 1e-15) and np.all(np.diff(f) <= 0.0)
    assert np.all(np.diff(f, 2) >= -1e-12)  # convex
    assert c._engine is None  # (answered by the bounds: no grid built)


def _add_delta_two_steps(mu: float, p: float, eps: float) -> mp.mpf:
    """δ(ε) of the add pair of two Poisson-subsampled Gaussian steps, N(0, 1)² against
    ((1 − p) N(0, 1) + p N(μ, 1))², by mpmath quadrature over x₁ of the exact inner integral
    over x₂: the pair's loss per step ℓ(x) = log(1 − p + p e^{μx − μ²/2}) is increasing, so
    {ℓ(x₁) + ℓ(x₂) > ε} = {x₂ > t(x₁)}, and the integrand is q(x₁) Q(X > t) − e^ε p(x₁) P(X > t)
    (breakpoints at the kink where t reaches −∞)."""
    mp.mp.dps = 30
    mu_, p_, e_ = mp.mpf(mu), mp.mpf(p), mp.mpf(eps)

    def t_of(x1: mp.mpf) -> mp.mpf:
        a = mp.expm1(e_ - mp.log(1 - p_ + p_ * mp.exp(mu_ * x1 - mu_**2 / 2))) + p_
        return -mp.inf if a <= 0 else (mu_**2 / 2 + mp.log(a / p_)) / mu_

    def inner(x1: mp.mpf) -> mp.mpf:
        t = t_of(x1)
        q1 = (1 - p_) * mp.npdf(x1) + p_ * mp.npdf(x1 - mu_)
        qc = (1 - p_) * mp.ncdf(-t) + p_ * mp.ncdf(mu_ - t)
        return q1 * qc - mp.exp(e_) * mp.npdf(x1) * mp.ncdf(-t)

    kink = (mu_**2 / 2 + mp.log(mp.expm1(e_ - mp.log(1 - p_)) / p_)) / mu_
    pts = sorted({-mp.inf, mp.mpf(-5), mp.mpf(0), mu_ / 2, mu_, mu_ + 5, kink - 1, kink,
                  kink + 1, mp.inf})
    return mp.quad(inner, pts, maxdegree=10)


@pytest.mark.parametrize("delta", [1e-13, 1e-15])
def test_very_sparse_runs_answer_on_a_fixed_grid_certified_against_mpmath(delta: float) -> None:
    # The planner sized the grid for ε at δ ≈ 1e-3 (ε_ref = 2e-5 at σ = 0.3, p = 8e-10, T =
    # 1000) and built 2²¹ points for any δ: ε(1e-12) took 21 s. A grid of step ≈ 0.01·ε, sized
    # from the sampled-count bound's ε, answers it within tol (0.3 s). Two steps, where the
    # exact δ is a 1-D mpmath integral: the true ε lies in the bracket (δ_add(lo) ≥ δ ≥
    # δ_add(hi); the remove direction's ε is at most −2 log(1 − p) ≈ 2e-9, below lo).
    s, p = 0.3, 1e-9
    c = dpsgd(s, p, 2)
    lo, hi = c.epsilon_bracket(delta)
    assert 0.0 < hi - lo <= 1e-3 * hi
    assert lo > -2.0 * math.log1p(-p) * 1.01
    assert _add_delta_two_steps(1 / s, p, lo) >= delta
    assert _add_delta_two_steps(1 / s, p, hi) <= delta
    cert = c.certificate(delta)
    assert cert["epsilon"] == hi and cert["grid_step"] > 0.0  # (a fixed grid answered)
    assert c._engine is None  # (and the planned engine was never built)
    assert c.epsilon(delta) == hi

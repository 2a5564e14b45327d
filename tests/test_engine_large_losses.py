"""Engine curves whose losses lie beyond 709 (P-masses underflow): ε(δ) from the masses' log-sums.

sue(745) ⊗ f_{3.4232, 9.1e-13} composed numerically: after a query near the top loss 748.4232
(which rebuilds the deep grid at a smaller tol), the lower curve's ε(0.1) read
748.3142098025126 — 3e-12 below the exact 748.3142098025156 and below the optimistic end: the
running log-sum of its P-masses (np.logaddexp.accumulate over 122 masses at losses ≈ 748)
drifted 6.1e-12 high. The exact δ(ε) = Σ_o (q_o − e^ε p_o)₊ over the 9 joint outcomes, here
in mpmath from the closed forms."""

import warnings

import mpmath as mp
import numpy as np
import pytest

import fdp
from fdp import mechanisms as FM


def _sue(e):
    p, q = 1 / (1 + mp.exp(-e / 2)), 1 / (1 + mp.exp(e / 2))
    return [p * q, p * p, q * q, q * p], [q * p, q * q, p * p, p * q]


def _eps_delta(e, d):
    a, b = 1 / (1 + mp.exp(-e)), 1 / (1 + mp.exp(e))
    return [d, (1 - d) * a, (1 - d) * b, 0], [0, (1 - d) * b, (1 - d) * a, d]


def _exact_eps(e_sue, e, d, delta):
    with mp.workdps(60):
        (p1, q1), (p2, q2) = _sue(mp.mpf(e_sue)), _eps_delta(mp.mpf(e), mp.mpf(d))
        P = [x * y for x in p1 for y in p2]
        Q = [x * y for x in q1 for y in q2]

        def dl(x):
            ex = mp.exp(x)
            return sum((max(q - ex * p, 0) for p, q in zip(P, Q, strict=True)), mp.mpf(0))

        lo, hi = mp.mpf(0), mp.mpf(e_sue) + mp.mpf(e) + 1
        for _ in range(200):
            m = (lo + hi) / 2
            lo, hi = (lo, m) if dl(m) <= delta else (m, hi)
        return hi


@pytest.mark.parametrize(("e_sue", "probe"), [(745.0, 748.0), (745.0, 748.4232),
                                              (700.0, 703.0)])
def test_epsilon_bracket_after_query_near_top_loss(e_sue, probe):
    e, d = 3.4232, 9.094947017729282e-13
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (width warnings: not the point here)
        h = fdp.compose((FM.sue(e_sue), 1), (fdp.symmetrize(fdp.EpsDelta(e, d)), 1),
                        numeric=True)
        h.delta(probe)
        for delta in (0.1, 0.3, 1e-3):
            lo, hi = h.epsilon_bracket(delta)
            exact = _exact_eps(e_sue, e, d, mp.mpf(delta))
            assert mp.mpf(float(hi)) >= exact, (delta, hi, exact)
            assert mp.mpf(float(lo)) <= exact, (delta, lo, exact)
            assert lo <= hi


def test_log_cumsum_tiny_terms_at_large_magnitude():
    from fdp.tradeoff import _U, _log_cumsum

    x = np.full(122, -748.45)
    x[0] = -748.4232 + np.log(0.9684)
    x[1:] = x[0] + np.log(5.7e-14)  # (each term's increment about half an ulp of the sum)
    got, mag = _log_cumsum(x)
    with mp.workdps(60):
        exact = mp.log(sum(mp.exp(mp.mpf(float(v))) for v in x))
    err = abs(float(mp.mpf(float(got[-1])) - exact))
    assert err <= 2 * _U * (abs(float(exact)) + x.size + mag)


def _mixture_eps_delta_log_mgf(e, p, theta):
    """K(θ) of the Poisson add pair (P, (1 − p)P + pQ) of f_{e,0}, in mpmath."""
    a, r = 1 / (1 + mp.exp(-e)), 1 / (1 + mp.exp(e))
    pm, qm = [a, r], [r, a]
    bm = [(1 - p) * x + p * y for x, y in zip(pm, qm, strict=True)]
    return mp.log(sum(b ** (theta + 1) * x ** (-theta) for b, x in zip(bm, pm, strict=True)))


@pytest.mark.parametrize("e", [740.0, 745.0])
def test_tail_bound_subnormal_p_mass(e):
    # f_{745,0}'s P-mass 1/(1 + e^745) = 2.8e-324 is stored as 4.9e-324: the moments of its
    # Poisson add pair read log b − log p from it, the top loss 0.56 below the exact
    # log 0.3 + 745 = 743.796, and the tail bound's ε(1e-20) = 743.238 fell below the truth
    from fdp import tails

    b = fdp.poisson_subsample(fdp.EpsDelta(e, 0.0), 0.3).add
    t = np.array([1.0, 7.0, 64.0, 1000.0, 20000.0])
    k = tails.log_mgf(b, t)
    with mp.workdps(50):
        for th, kv in zip(t, k, strict=True):
            exact = _mixture_eps_delta_log_mgf(mp.mpf(e), mp.mpf("0.3"), mp.mpf(th))
            assert mp.mpf(float(kv)) >= exact, (th, kv, exact)
    top = float(mp.log(mp.mpf("0.3")) + e)  # (the exact ε(δ) for every δ ≤ 1e-20, rounded)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n, delta in ((1, 1e-20), (3, 5e-324)):
            lo, hi = fdp.compose(b, repeat=n, numeric=True).epsilon_bracket(delta)
            assert n * top * (1 - 1e-14) <= hi, (n, lo, hi)
            assert lo <= hi

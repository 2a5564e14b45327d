"""gdp_mu / gdp_mu_delta of exact piecewise-linear curves against mpmath's μ* of the pair the
curve may stand for: masses known to a relative ``mass_rtol`` (each breakpoint within it of the
stored one), and masses below the normal range (a few bits of precision) whose outcomes' losses
are given exactly. μ* = max over the vertices (A, B) of Φ⁻¹(1 − A/s) − Φ⁻¹(B/s), s = 1 − τ
(Dong, Roth & Su 2022, Prop 2.12 and Cor 2.13; theory §3, §4); the certified value must never
fall below it, and for exact curves read as stored it stays within 1e-10 relative of it."""

from __future__ import annotations

import math

import mpmath as mp
import pytest

import fdp
from fdp import mechanisms as M
from fdp.tradeoff import PiecewiseLinear


def _ndtri(y: mp.mpf) -> mp.mpf:
    """Φ⁻¹(y) to the working precision (a root of log Φ(x) = log y)."""
    if y > mp.mpf(1) / 2:
        return -_ndtri(1 - y)
    ly = mp.log(y)
    x0 = -math.sqrt(max(-2.0 * float(ly) - math.log(-4.0 * math.pi * float(ly)), 0.0)) \
        if float(ly) < -1.0 else 0.0
    return mp.findroot(lambda x: mp.log(mp.ncdf(x)) - ly, mp.mpf(x0))


def _vertices(P: list, Q: list) -> list[tuple[mp.mpf, mp.mpf]]:
    """The vertices (A_k, B_k) of T(P, Q) (finite losses, sorted by decreasing Q/P)."""
    order = sorted(range(len(P)), key=lambda j: -(mp.log(Q[j]) - mp.log(P[j])))
    # (each coordinate its own sum: a running difference would cancel at 1e-324)
    return [(mp.fsum(P[j] for j in order[:k]), mp.fsum(Q[j] for j in order[k:]))
            for k in range(len(order))]


def _mu_star(P: list, Q: list, tau: float = 0.0) -> tuple[mp.mpf, int]:
    """(μ*, the vertex attaining it) of the exact pair with allowance τ."""
    s = 1 - mp.mpf(tau)
    best, arg = mp.mpf(0), 0
    for k, (a, b) in enumerate(_vertices(P, Q)):
        if a <= 0 or a >= s or b >= s:
            continue
        m = -_ndtri(a / s) - _ndtri(b / s)
        if m > best:
            best, arg = m, k
    return best, arg


def _perturbed(p: list[float], q: list[float], rho: float, k: int,
               sp: int = 1, sq: int = 1) -> tuple[list, list]:
    """A pair within relative ρ of every given mass whose vertex k (in the given masses' order,
    sorted by decreasing loss) has A and B lowered as far as that allows: the head's P-mass
    scaled down by t/H and the tail's up by t/(1 − H), t = ρ min(H, 1 − H), likewise for the
    tail's Q-mass B (``sp``, ``sq`` = −1: raised instead)."""
    P, Q, r = [mp.mpf(x) for x in p], [mp.mpf(x) for x in q], mp.mpf(rho)
    H, B = mp.fsum(P[:k]), mp.fsum(Q[k:])
    t, u = sp * r * min(H, 1 - H), sq * r * min(B, 1 - B)
    P = [x * (1 - t / H) if j < k else x * (1 + t / (1 - H)) for j, x in enumerate(P)]
    Q = [x * (1 - u / B) if j >= k else x * (1 + u / (1 - B)) for j, x in enumerate(Q)]
    assert all(abs(x / mp.mpf(y) - 1) <= r for x, y in zip(P, p, strict=True))
    assert all(abs(x / mp.mpf(y) - 1) <= r for x, y in zip(Q, q, strict=True))
    return P, Q


PAIRS = [
    ([0.5, 0.5], [0.9, 0.1]),  # the repro: α = 1/2 at the kink
    ([0.2, 0.8], [0.7, 0.3]),
    ([0.3, 0.4, 0.3], [0.6, 0.35, 0.05]),  # a kink at α = 0.7 ≥ 1/2 (read from 1 − α)
    ([0.05, 0.15, 0.8], [0.5, 0.3, 0.2]),
    ([1e-3, 0.2, 0.799], [0.3, 0.6, 0.1]),
]


@pytest.mark.parametrize("rho", [1e-6, 1e-9])
@pytest.mark.parametrize("tau", [0.0, 0.05])
@pytest.mark.parametrize("pair", PAIRS)
def test_mass_rtol_breakpoints(pair: tuple[list[float], list[float]], rho: float,
                               tau: float) -> None:
    mp.mp.dps = 40
    p, q = pair
    # (given in decreasing-loss order: vertex k of the sorted pair is after mass k − 1)
    assert all(q[j] / p[j] > q[j + 1] / p[j + 1] for j in range(len(p) - 1))
    f = PiecewiseLinear.from_masses(p, q, mass_rtol=rho)
    _, k = _mu_star([mp.mpf(x) for x in p], [mp.mpf(x) for x in q], tau)
    P, Q = _perturbed(p, q, rho, k)
    truth, _ = _mu_star(P, Q, tau)
    got = fdp.gdp_mu(f) if tau == 0.0 else fdp.gdp_mu_delta(f, tau)[0]
    assert got >= truth, (got, float(truth))
    assert got <= truth * (1 + 1e-6 * rho / 1e-9 + 1e-10)  # (and not needlessly loose)


def _sue_pair(e: float) -> tuple[list, list]:
    p, q = 1 / (1 + mp.exp(-mp.mpf(e) / 2)), 1 / (1 + mp.exp(mp.mpf(e) / 2))
    return [p * q, p * p, q * q, q * p], [q * p, q * q, p * p, p * q]


def _rr_pair(e: float, k: int) -> tuple[list, list]:
    p = 1 / (1 + (k - 1) * mp.exp(-mp.mpf(e)))
    q = mp.exp(-mp.mpf(e)) * p
    P, Q = [p, q], [q, p]
    if k > 2:
        P.append((k - 2) * q)
        Q.append((k - 2) * q)
    return P, Q


@pytest.mark.parametrize(("curve", "pair"), [
    (lambda: M.sue(745.0), lambda: _sue_pair(745.0)),
    (lambda: M.sue(740.0), lambda: _sue_pair(740.0)),
    (lambda: M.randomized_response(745.0, 3), lambda: _rr_pair(745.0, 3)),
    (lambda: M.randomized_response(745.0, 2), lambda: _rr_pair(745.0, 2)),
    (lambda: M.randomized_response(720.0, 5), lambda: _rr_pair(720.0, 5)),
])
@pytest.mark.parametrize("tau", [0.0, 0.01])
def test_subnormal_masses(curve, pair, tau: float) -> None:  # type: ignore[no-untyped-def]
    """A breakpoint's β (or α) below the normal range: SUE at ε = 745 stores q² = 2.86e-324 as
    4.94e-324, and read μ = 65.5815 for the exact 65.5960 (Φ⁻¹ there moves by
    log(4.94/2.86)/38.5 = 0.0146)."""
    mp.mp.dps = 60
    f = curve()
    P, Q = pair()
    truth, _ = _mu_star(P, Q, tau)
    got = fdp.gdp_mu(f) if tau == 0.0 else fdp.gdp_mu_delta(f, tau)[0]
    assert got >= truth, (got, float(truth))
    assert math.isfinite(got)  # (the losses are given: no need to give up)
    assert got <= truth + 0.05


@pytest.mark.parametrize("pair", PAIRS + [
    ([0.25, 0.25, 0.25, 0.25], [0.4, 0.3, 0.2, 0.1]),
    ([1e-12, 1e-6, 0.5, 0.499998999999], [0.1, 0.2, 0.3, 0.4 - 1e-13]),
])
def test_exact_curves_stay_tight(pair: tuple[list[float], list[float]]) -> None:
    """Without a mass error the reading moves each breakpoint by a few ulps only."""
    mp.mp.dps = 40
    p, q = pair
    f = fdp.from_distributions(p, q)
    truth, _ = _mu_star([mp.mpf(x) for x in p], [mp.mpf(x) for x in q])
    got = fdp.gdp_mu(f)
    assert truth <= got <= truth * (1 + 1e-10)


@pytest.mark.parametrize(("curve", "pair"), [
    (lambda: M.sue(1.0), lambda: _sue_pair(1.0)),
    (lambda: M.sue(30.0), lambda: _sue_pair(30.0)),
    (lambda: M.randomized_response(2.0, 4), lambda: _rr_pair(2.0, 4)),
    (lambda: M.randomized_response(600.0, 3), lambda: _rr_pair(600.0, 3)),
])
def test_mechanisms_stay_tight(curve, pair) -> None:  # type: ignore[no-untyped-def]
    mp.mp.dps = 60
    truth, _ = _mu_star(*pair())
    got = fdp.gdp_mu(curve())
    assert truth <= got <= truth * (1 + 1e-10)


@pytest.mark.parametrize("rho", [1e-6, 1e-9])
@pytest.mark.parametrize("pair", PAIRS)
def test_mass_rtol_mixture(pair: tuple[list[float], list[float]], rho: float) -> None:
    """p f + (1 − p) Id (a Poisson-subsampled step) of a curve with mass_rtol: its breakpoints
    (α, p β + (1 − p)(1 − α)) carry the base's error (α lowered does not lower the mixture's
    β: every direction of each coordinate is tried, the largest μ* kept)."""
    mp.mp.dps = 40
    p, q = pair
    w = 0.5
    f = fdp.poisson_subsample(PiecewiseLinear.from_masses(p, q, mass_rtol=rho), w).add
    truth = mp.mpf(0)
    for k in range(1, len(p)):
        for sp in (1, -1):
            for sq in (1, -1):
                P, Q = _perturbed(p, q, rho, k, sp, sq)
                mix = [w * y + (1 - w) * x for x, y in zip(P, Q, strict=True)]
                truth = max(truth, _mu_star(P, mix)[0])
    got = fdp.gdp_mu(f)
    assert got >= truth, (got, float(truth))
    assert got <= truth * (1 + 1e-5 * rho / 1e-9 + 1e-10)


def test_p_mass_at_minus_infinity_below_an_ulp_of_one() -> None:
    """A P-mass at loss −∞ below u leaves the last breakpoints at α = 1 in float, its
    complement 1e-30: τ must cover it (read from the complement), which the raised reading of
    1 − α needs (that breakpoint, β = 0, otherwise asks for μ = ∞)."""
    f = fdp.from_eps_delta([0.5, 2.0], [1e-30, 1e-30])
    mu, tau = fdp.gdp_mu_delta(f)
    assert tau >= 1e-30 and math.isfinite(mu)
    assert fdp.gdp_mu(f) == math.inf


@pytest.mark.parametrize(("u", "v"), [
    ([0.0, -1480.0], [-1.0, -1479.0]),
    ([0.0, -1.0, -1490.0], [0.0, -0.5, -1489.5]),
])
def test_exponential_subnormal_masses(u: list[float], v: list[float]) -> None:
    """The exponential mechanism's outcome of mass e^{−740} (85 least subnormals, both sides):
    read as stored, μ = 0.025946 for the exact 0.026065 (each mass within half a subnormal)."""
    mp.mp.dps = 800  # (1 − β = e^{−739} next to 1)

    def softmax(x: list[float]) -> list:
        w = [mp.exp(mp.mpf(t) / 2) for t in x]
        z = mp.fsum(w)
        return [t / z for t in w]

    truth, _ = _mu_star(softmax(u), softmax(v))
    got = fdp.gdp_mu(M.exponential(u, v, 1.0))
    assert truth <= got <= truth * 1.05 + 1e-12, (got, float(truth))


def test_exact_subnormal_masses_stay_finite() -> None:
    """A user's distributions summing to 1 exactly are exact floats, a subnormal mass included
    (sums of subnormals are exact): no absolute charge, μ stays finite and tight. (P: 53-bit
    chunks of 1 down to 2⁻¹⁰⁷⁴, Q the same reversed: the last breakpoint's β is 2⁻¹⁰⁷⁴.)"""
    P = [math.ldexp(1.0 - 2.0**-53, -53 * i) for i in range(20)]
    P += [math.ldexp(1.0, -1060) - math.ldexp(1.0, -1074), math.ldexp(1.0, -1074)]
    assert math.fsum([*P, -1.0]) == 0.0
    Q = P[::-1]
    mp.mp.dps = 1200
    truth, _ = _mu_star([mp.mpf(x) for x in P], [mp.mpf(x) for x in Q])
    got = fdp.gdp_mu(fdp.from_distributions(P, Q))
    assert truth <= got <= truth * (1 + 1e-10)

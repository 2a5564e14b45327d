"""The engine's optimistic side (the lower ends of δ brackets, a Bracketed's ``upper`` curve)
against exact products of the true pairs in mpmath (a sweep of engine compositions against
exact products, seeds 500316 and 510296).

- An exact product whose outcomes it merged (a pessimistic garbling, ``_twin_ok`` False) was
  read by the engine's optimistic side from those merged masses: its twin's now.
- The optimistic curve's breakpoints α, running sums of P-masses, round in absolute terms
  where they are subnormal: its kinks are now moved right by that too.
"""

from __future__ import annotations

import warnings

import mpmath as mp
import pytest

import fdp
import fdp.mechanisms as FM

mp.mp.dps = 60
# (the brackets of these tiny δ are wide: the test is which side each end is on)
pytestmark = pytest.mark.filterwarnings("ignore::fdp.pld.AccuracyWarning")


def _product(*pairs):
    """The outcomes (p, q) of the product of discrete pairs (lists of (p, q) mpf tuples)."""
    out = [(mp.mpf(1), mp.mpf(1))]
    for pair in pairs:
        out = [(p1 * p2, q1 * q2) for p1, q1 in out for p2, q2 in pair]
    return out


def _delta(pair, eps):
    x = mp.exp(eps)
    return mp.fsum(max(q - x * p, 0) if p > 0 else q for p, q in pair)


def _f(pair, alpha):
    """The exact trade-off curve T(P, Q)(α) (Neyman–Pearson: outcomes by decreasing q/p)."""
    inf_q = mp.fsum(q for p, q in pair if p == 0)
    fin = sorted(((p, q) for p, q in pair if p > 0), key=lambda t: t[1] / t[0], reverse=True)
    alpha = mp.mpf(alpha)
    ca, cq = mp.mpf(0), inf_q
    for p, q in fin:
        if ca + p >= alpha:
            return max(1 - cq - (alpha - ca) / p * q, 0)
        ca += p
        cq += q
    return max(1 - cq, 0)


P1 = [0.18864468864468864, 0.09363553113553112, 0.2177197802197802, 0.5, 4.163336342344337e-17]
Q1 = [0.55078125, 7.888609052210118e-31, 0.23046875, 0.21874999999999997,
      2.7755575615628125e-17]


def test_garbled_product_optimistic_side_reads_its_twin():
    """compose(g, repeat=2, numeric=True), g = compose(poisson_subsample(T(P, Q), 1e-12).add
    .inverse(), repeat=2): the exact product g merged its 25 outcomes (losses within 3e-12)
    into two at the ends, a garbling below the truth in privacy terms; the engine read those on
    its optimistic side too, and δ(0)'s lower end read 1.6738589744864958e-12 for the exact
    7.922368778858737e-13."""
    r = mp.mpf(1e-12)
    add = [(mp.mpf(p), (1 - r) * mp.mpf(p) + r * mp.mpf(q)) for p, q in zip(P1, Q1, strict=True)]
    inv = [(q, p) for p, q in add]  # T(Q, P) = T(P, Q)⁻¹
    exact = _product(inv, inv, inv, inv)
    f = fdp.poisson_subsample(fdp.from_distributions(P1, Q1), 1e-12).add.inverse()
    g = fdp.compose(f, repeat=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        h = fdp.compose(g, repeat=2, numeric=True)
    for eps in (0.0, 1.5766298617259508e-13, 1e-12):
        lo, hi = h.delta_bracket(eps)
        d = _delta(exact, mp.mpf(eps))
        assert lo <= d <= hi, (eps, lo, float(d), hi)
    # (the same through a wrapper that maps g's bins: its inverse)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        hi_ = fdp.compose(g.inverse(), repeat=2, numeric=True)
    exact_inv = [(q, p) for p, q in exact]
    for eps in (0.0, 1e-12):
        lo, hi = hi_.delta_bracket(eps)
        d = _delta(exact_inv, mp.mpf(eps))
        assert lo <= d <= hi, (eps, lo, float(d), hi)


def test_optimistic_curve_subnormal_kinks():
    """compose((compose(T(P, Q), repeat=2), 2), (randomized_response(700, 5).inverse(), 1),
    numeric=True): the upper curve's kink at α = 5.3803873051240975e-316 (a subnormal running
    sum of P-masses) sat one TINY to its left, and upper(5.38038723e-316) read
    0.019701232553793076 for the exact 0.019701232696994826."""
    P = [0.9999990463256836, 0.0, 9.5367431640625e-07]
    Q = [0.23046875, 0.4248046875, 0.3447265625]
    base = [(mp.mpf(p), mp.mpf(q)) for p, q in zip(P, Q, strict=True)]
    e = mp.mpf(700)
    pr = 1 / (1 + 4 * mp.exp(-e))
    qr = mp.exp(-e) * pr
    rr_inv = [(qr, pr), (pr, qr), (3 * qr, 3 * qr)]  # RR(700, 5)⁻¹
    exact = _product(base, base, base, base, rr_inv)
    a = fdp.compose(fdp.from_distributions(P, Q), repeat=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        h = fdp.compose((a, 2), (FM.randomized_response(700.0, 5).inverse(), 1), numeric=True)
    for x in (5.38038723e-316, 5.3803873e-316, 3.4e-322, 3.7611627e-310, 1e-300, 0.3):
        ex = _f(exact, x)
        up, lo = float(h.upper(x)), float(h.lower(x))
        assert up >= ex, (x, up, float(ex))
        assert lo <= ex, (x, lo, float(ex))

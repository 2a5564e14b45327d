"""Discrete pairs and their products against exact mpmath references.

References (all in :mod:`._ref`, none from fdp): the Neyman–Pearson curve of the pair; products
by exact multinomial/binomial types (masses multiply, losses add); δ(ε) = Σ (q − e^ε p)₊ + Q-atom
as the maximum over breakpoints; ε(δ) = max_k log((1 − β_k − δ)/α_k). Nested compositions of
discrete pairs are referenced by the flat product.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import fdp

from ._check import check_curve
from ._ref import PL, M, binomial_rr_product, dist, mp, power, product
from ._strategies import NMAX, composition, dyadic_pair, sweep, types

SWEEP = sweep(12)
SMALL = sweep(4)


def _desc(items) -> str:  # noqa: ANN001
    return "; ".join(f"({p.tolist()}, {q.tolist()})^{n}" for p, q, n in items)


def _flat(items):  # noqa: ANN001, ANN202
    curves = [fdp.from_distributions(p, q) for p, q, _ in items]
    return curves, [c for c, (_, _, n) in zip(curves, items, strict=False) for _ in range(n)]


def _ref(items, scale: int = 1) -> PL:  # noqa: ANN001
    return PL.from_dist(product(*[power(dist(p, q), n * scale) for p, q, n in items]))


@SWEEP
@given(dyadic_pair())
def test_pair(pair) -> None:  # noqa: ANN001
    p, q = pair
    f = fdp.from_distributions(p, q)
    check_curve(f, PL.from_dist(dist(p, q)), f"from_distributions({p.tolist()}, {q.tolist()})")


@SWEEP
@given(dyadic_pair(), st.data())
def test_power(pair, data) -> None:  # noqa: ANN001
    p, q = pair
    n = data.draw(st.integers(1, NMAX[len(p)]), label="n")
    f = fdp.from_distributions(p, q) ** n
    check_curve(f, PL.from_dist(power(dist(p, q), n)), f"({p.tolist()}, {q.tolist()}) ** {n}")


@sweep(8)
@given(composition(budget=1500))
def test_compose_different(items) -> None:  # noqa: ANN001
    curves, flat = _flat(items)
    ref = _ref(items)
    check_curve(fdp.compose(*flat), ref, "compose " + _desc(items))
    if len(items) == 2 and items[0][2] == 1 and items[1][2] == 1:
        check_curve(curves[0] @ curves[1], ref, "@ " + _desc(items))


@sweep(10)
@given(composition(min_curves=1, budget=1500))
def test_compose_numeric(items) -> None:  # noqa: ANN001
    _, flat = _flat(items)
    h = fdp.compose(*flat, numeric=True)
    check_curve(h, _ref(items), "compose(numeric=True) " + _desc(items))


@SMALL
@given(composition(min_curves=2, max_curves=2, budget=60, max_k=3, max_n=3),
       st.integers(2, 3), dyadic_pair(max_k=3), st.integers(1, 3))
def test_nested_two_and_three_levels(items, b, pair3, m) -> None:  # noqa: ANN001
    """h1 = f^a ⊗ g^c (engine), h2 = h1 ** b, h3 = h2 @ k^m: references are flat products."""
    _, flat = _flat(items)
    h1 = fdp.compose(*flat, numeric=True)
    h2 = h1**b
    check_curve(h2, _ref(items, b), f"(compose({_desc(items)}, numeric=True)) ** {b}")
    p3, q3 = pair3
    k = fdp.from_distributions(p3, q3)
    h3 = h2 @ (k**m)
    ref3 = PL.from_dist(
        product(*[power(dist(p, q), n * b) for p, q, n in items], power(dist(p3, q3), m))
    )
    check_curve(h3, ref3, f"((compose({_desc(items)}, numeric=True)) ** {b}) @ "
                          f"({p3.tolist()}, {q3.tolist()}) ** {m}")


@SMALL
@given(dyadic_pair(max_k=3), dyadic_pair(max_k=3), st.integers(1, 4), st.integers(2, 3))
def test_nested_exact_then_engine(pair1, pair2, n, b) -> None:  # noqa: ANN001
    """(f^n ⊗ g) exact, raised to b by fdp, then composed with the engine again."""
    (p1, q1), (p2, q2) = pair1, pair2
    f, g = fdp.from_distributions(p1, q1), fdp.from_distributions(p2, q2)
    inner = fdp.compose(f, g, repeat=1) if n == 1 else fdp.compose(*([f] * n + [g]))
    h = fdp.compose(inner**b, g, numeric=True)
    ref = PL.from_dist(product(power(dist(p1, q1), n * b), power(dist(p2, q2), b + 1)))
    check_curve(h, ref, f"compose((f^{n} ⊗ g) ** {b}, g, numeric=True), f=({p1.tolist()}, "
                        f"{q1.tolist()}), g=({p2.tolist()}, {q2.tolist()})")


rr = fdp.mechanisms.randomized_response


@sweep(6)
@given(st.lists(st.tuples(st.floats(0.01, 3.0), st.integers(1, 60)), min_size=1, max_size=3,
                unique_by=lambda t: t[0]))
def test_randomized_response_products(spec) -> None:  # noqa: ANN001
    """rr(ε₁)^{n₁} ⊗ …: products of binomial sums (exact), and the engine on the same list."""
    size = 1
    trimmed = []
    for e, n in spec:
        n = min(n, max(1, 1500 // size - 1))
        size *= n + 1
        trimmed.append((e, n))
    flat = [rr(e) for e, n in trimmed for _ in range(n)]
    ref = PL.from_dist(binomial_rr_product(trimmed))
    check_curve(fdp.compose(*flat), ref, f"compose rr {trimmed}")
    check_curve(fdp.compose(*flat, numeric=True), ref, f"compose rr {trimmed}, numeric=True")


def test_types_budget_sanity() -> None:
    """The strategies keep the exact references small (guards the suite's run time)."""
    assert types(5, NMAX[5]) <= 1500 and types(4, NMAX[4]) <= 1500 and types(3, NMAX[3]) <= 1500
    assert math.comb(60, 1) == 60


def test_atom_on_a_fine_grid_keeps_its_side() -> None:
    """helper-18: the pair P = (0.69…, 0.31…), Q = (0, 1) has one finite loss ℓ = log(1/0.31…)
    (Q-mass 1), so n-fold, ε(δ) = nℓ + log(1 − δ) exactly. The connect-the-dots split of its
    atom, on a grid step of 1e-7, put 2.2e-9 of the Q-mass a step below (log q − log p − left
    cancels to rounding noise of a visible share of h), and ε read up to 26 ulps below the
    truth at n = 130. The pessimistic split now rounds that offset up."""
    import mpmath as mp

    p = [0.6901111602783203, 0.3098888397216797]
    loss = -mp.log(mp.mpf(p[1]))
    d = 2.7827588682194994e-05
    for n in (2, 5, 20, 130, 1000):
        h = fdp.compose(fdp.from_distributions(p, [0.0, 1.0]), repeat=n, numeric=True)
        truth = n * loss + mp.log(1 - mp.mpf(d))
        lo, hi = h.epsilon_bracket(d)
        assert mp.mpf(lo) <= truth <= mp.mpf(hi), (n, lo, truth, hi)


def test_nearly_revealing_pair_many_times() -> None:
    """helper-18: Q-mass 0.9997 at loss +∞, composed 104 times: the optimistic +∞ atom
    Π T^n − Π F^n overflowed (e^{grow} with F^n underflowing) and compose raised
    OverflowError. True δ(ε) = 1 − q₁^104 at every finite ε ≥ 104 log q₁ (≈ 1 − 1e-373)."""
    import mpmath as mp

    q1 = 0.0002574920654296875
    h = fdp.compose(fdp.from_distributions([0.0, 1.0], [1 - q1, q1]), repeat=104, numeric=True)
    truth = 1 - mp.mpf(q1) ** 104
    for e in (0.0, 1.0, 50.0):
        lo, hi = h.delta_bracket(e)
        assert mp.mpf(lo) <= truth <= mp.mpf(hi)
        assert lo >= 1 - 1e-9
    lo, hi = h.epsilon_bracket(1e-6)
    assert lo == hi == float("inf")


@given(st.lists(st.tuples(st.floats(1e-6, 1.0), st.floats(1e-6, 1.0)), min_size=2, max_size=6))
@settings(max_examples=60, deadline=None)
def test_discrete_losses_are_rounded_up(pairs) -> None:  # noqa: ANN001
    """Losses that from_masses computes as log q − log p were read to the nearest float:
    from_distributions([.75, .25], [.25, .75]).epsilon(1e-300) gave 1.0986122886681096, 2 ulps
    below log 3 (δ there is 1e-16, not 1e-300), and so did the inverse (helper hunt). Now
    raised by their rounding bound, in both directions. Reference: the same float masses in
    mpmath (the largest loss, and δ at a few ε)."""
    p = np.array([a for a, _ in pairs])
    q = np.array([b for _, b in pairs])
    p, q = p / p.sum(), q / q.sum()
    f = fdp.from_distributions(p, q)
    with mp.workdps(50):
        for g, (pp, qq) in ((f, (p, q)), (f.inverse(), (q, p))):
            P = [M(x) for x in pp / pp.sum()]
            Q = [M(x) for x in qq / qq.sum()]
            top = max(mp.log(b / a) for a, b in zip(P, Q, strict=True))
            assert M(float(g.epsilon(1e-300))) >= top, (float(g.epsilon(1e-300)), top)
            for e in (0.0, float(top) / 2, float(top) - 1e-9):
                want = mp.fsum(max(0, b - mp.exp(M(e)) * a) for a, b in zip(P, Q, strict=True))
                assert M(float(g.delta(e))) >= want, (e, g.delta(e), want)


def _np_exact(p: np.ndarray, q: np.ndarray, a: float) -> object:
    """The Neyman–Pearson value f(α) of the pair in exact rationals (the masses are floats,
    so exact as Fractions)."""
    from fractions import Fraction

    order = sorted(range(p.size), reverse=True,
                   key=lambda i: Fraction(q[i]) / Fraction(p[i]) if p[i] > 0 else Fraction(2**80))
    left, power = Fraction(a), Fraction(0)
    for i in order:
        pi, qi = Fraction(p[i]), Fraction(q[i])
        if pi <= left:
            left, power = left - pi, power + qi
        else:
            power += qi * left / pi
            break
    return max(Fraction(0), 1 - power)


@SWEEP
@given(dyadic_pair(), st.lists(st.floats(0.0, 1.0), min_size=5, max_size=5))
def test_values_never_above_the_exact_curve(pair, extra) -> None:  # noqa: ANN001
    # Exact curves' values are guarantees: at every kink, its float neighbours, points near
    # α = 0 and 1 and random ones, f(α) and f⁻¹(α) are at most the exact rational value, and
    # within 1e-12 of it. To nearest, 30061 of 80916 such values were an ulp or more above it
    # (a sweep of random dyadic pairs with masses down to 2^-40).
    from fractions import Fraction

    p, q = pair
    f = fdp.from_distributions(p, q)
    pts = np.concatenate([f.breakpoints[0], np.array(extra), 2.0 ** -np.arange(1, 60, 7),
                          1 - 2.0 ** -np.arange(1, 53, 7)])
    pts = np.clip(np.concatenate([pts, np.nextafter(pts, 1.0), np.nextafter(pts, 0.0)]), 0, 1)
    for g, (a, b) in ((f, (p, q)), (f.inverse(), (q, p))):
        vals = np.atleast_1d(g(pts))
        for x, v in zip(pts, vals, strict=True):
            t = _np_exact(a, b, float(x))
            assert Fraction(float(v)) <= t, (x, v, float(t))
            assert float(v) >= float(t) - 1e-12, (x, v, float(t))

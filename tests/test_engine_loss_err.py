"""The composition engine charges what a discrete curve's masses and losses are known to.

A :class:`~fdp.tradeoff.PiecewiseLinear` built by ``from_masses`` knows its masses to a relative
``mass_rtol`` and its losses within ``_loss_errs()`` (computed from the masses with rounding,
given with ``loss_err``, or an exact product's raised by ``_loss_bias``); its own δ and ε charge
them. The engine (:mod:`fdp.pld`) read the masses as an exact pair and each bin's loss as
log(q/p): a loss on a grid point (the grid is aligned to the atoms) whose truth lies above went
to the bin below and was clipped to the grid point, and the masses' ρ was charged nowhere, so
both ends of the brackets could land on the wrong side. References here are exact sums over the
joint outcomes in mpmath (tests/exact_sums.py), of the true pair, not fdp's reading of it.
"""

from __future__ import annotations

import math
import random

import mpmath as mp
import numpy as np
import pytest
from exact_sums import mp_delta, mp_eps, mp_pair

import fdp
from fdp import pld
from fdp.tradeoff import PiecewiseLinear

P = [0.2, 0.3, 0.5]
Q = [0.5, 0.3, 0.2]

# (the δ brackets next to the largest loss are wider than 10·tol: certified, and warned about)
pytestmark = pytest.mark.filterwarnings("ignore::fdp.AccuracyWarning")


def _exact_steps(p: list[float], q: list[float], n: int) -> list[tuple[list, list]]:  # type: ignore[type-arg]
    return [([mp.mpf(x) for x in p], [mp.mpf(x) for x in q])] * n


def _assert_brackets(g: fdp.TradeOff, steps: list, eps: list[float],  # type: ignore[type-arg]
                     deltas: list[float]) -> None:
    for e in eps:
        ex = mp_delta(steps, mp.mpf(e))
        lo, hi = g.delta_bracket(e)
        assert lo <= ex <= hi, (e, lo, hi, float(ex))
        assert g.delta(e) >= ex, (e, g.delta(e), float(ex))
    for d in deltas:
        ex = max(mp_eps(steps, d), 0)
        lo, hi = g.epsilon_bracket(d)
        assert lo <= ex <= hi, (d, lo, hi, float(ex))


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_engine_charges_mass_rtol(sign: int, n: int) -> None:
    # masses within ρ = 1e-8 of the exact pair (P, Q) (each side sums to 1 exactly), off in
    # the direction that lowers δ (sign 1) or raises it (−1). Before, the engine read them as
    # exact: compose(f, numeric=True) read δ(0) ∈ [0.29999999370, 0.29999999541] (sign 1) and
    # [0.30000000630, 0.30000000630] (sign −1) for the exact 0.3
    rho = 1e-8
    pt = [x * (1 + 0.9 * rho * s * sign) for x, s in zip(P, [1, 0, -1], strict=True)]
    qt = [x * (1 - 0.9 * rho * s * sign) for x, s in zip(Q, [1, 0, -1], strict=True)]
    f = PiecewiseLinear.from_masses(np.array(pt), np.array(qt), mass_rtol=rho)
    g = fdp.compose(f, repeat=n, numeric=True)
    top = n * math.log(2.5)
    with mp.workdps(60):
        _assert_brackets(g, _exact_steps(P, Q, n), [0.0, 0.3, 0.5, top - 1e-3, top - 1e-6],
                         [1e-3, 1e-6, 1e-9])


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_engine_charges_given_loss_err(sign: int, n: int) -> None:
    # exact masses, given losses 1e-7 off the masses' (within their loss_err 2e-7). Before,
    # the engine put the top outcome on its given loss's grid point (its loss log(q/p) clipped
    # there) and the composed largest loss was the given one: for n = 1, sign 1, δ(0)'s upper
    # end read 0.29999998000006 for the exact 0.3, δ(top given loss) 2.8e-15 for 5.0e-8, and
    # ε(1e-9) ∈ [0.91629062987, 0.91629062987] for the exact 0.91629072987
    true = [float(mp.log(mp.mpf(b) / mp.mpf(a))) for a, b in zip(P, Q, strict=True)]
    loss = np.array(true) - sign * 1e-7 * np.array([1.0, 0.0, -1.0])
    f = PiecewiseLinear.from_masses(np.array(P), np.array(Q), loss=loss,
                                    loss_err=np.full(3, 2e-7))
    g = fdp.compose(f, repeat=n, numeric=True)
    with mp.workdps(60):
        _assert_brackets(g, _exact_steps(P, Q, n),
                         [0.0, 0.5, n * true[0] - 1e-3, n * float(loss[0])],
                         [1e-3, 1e-9, 1e-30])


def _mp_profile(w: np.ndarray, q_inf: float, loss: np.ndarray, eps: float) -> mp.mpf:
    """δ of a grid measure, exactly: q_∞ + Σ w_k (1 − e^{ε − ℓ_k})₊ with the float values."""
    e = mp.mpf(eps)
    return mp.mpf(float(q_inf)) + mp.fsum(
        mp.mpf(float(wk)) * (1 - mp.exp(e - mp.mpf(float(lk))))
        for wk, lk in zip(w, loss, strict=True) if wk != 0 and lk > eps)


def _check_measures(p: list[float], q: list[float], h: float, offset: float) -> None:
    """Both grid measures of T(P, Q) against the exact profile of the pair normalized exactly,
    at the grid points, the floats just below them, and between them, evaluated exactly."""
    f = fdp.from_distributions(p, q)
    c = pld._Component(f, f, 1, h, offset)
    pm, qm = mp_pair(p, q)
    pts = sorted({*c.loss.tolist(), *(math.nextafter(x, -math.inf) for x in c.loss),
                  *(c.loss[:-1] + 0.37 * h).tolist()})
    for e in pts:
        true = mp.fsum(max(b - mp.exp(mp.mpf(e)) * a, 0) for a, b in zip(pm, qm, strict=True))
        # (its losses read higher by the loss errors, as the engine does: lower_shift)
        pess = _mp_profile(c.w, c.q_inf, c.loss, e - getattr(c, "lower_shift", 0.0))
        assert pess >= true, (p, q, h, offset, e, float(pess), float(true))
        # the optimistic measure's losses read lower by loss_err, its slack charged where it sits
        charged = sum(float(m) for m, l in zip(c.slack_mass, c.slack_loss, strict=True) if e < l)
        opt = _mp_profile(c.wo, c.qo_inf, c.loss, e + c.loss_err) - charged
        assert opt <= true, (p, q, h, offset, e, float(opt), float(true))


def test_grid_measures_bracket_exact_profile_at_an_aligned_atom() -> None:
    # the top loss of T([0.12, 0.88], [0.5, 0.5]) computes as 1.4271163556401456, 1.8e-16 below
    # the exact log(25/6); on a grid through it the pessimistic measure read δ = 0 there for the
    # exact 9.0e-17
    p, q = [0.12, 0.88], [0.5, 0.5]
    top = float(fdp.from_distributions(p, q)._masses[2][0])
    with mp.workdps(60):
        _check_measures(p, q, 0.5, top % 0.5)


def test_grid_measures_bracket_exact_profile_random_pairs() -> None:
    # grids aligned to an atom (the engine's choice) or not, for random pairs; before, 6 of
    # these 16 had a pessimistic δ below the exact one at an atom's grid point
    rng = random.Random(20240607)
    with mp.workdps(60):
        for _ in range(16):
            k = rng.choice([2, 3])
            a = [rng.randint(1, 30) for _ in range(k)]
            b = [rng.randint(1, 30) for _ in range(k)]
            p, q = [x / sum(a) for x in a], [x / sum(b) for x in b]
            atoms = fdp.from_distributions(p, q)._masses[2]
            h = rng.choice([0.5, 0.25, 0.1, rng.uniform(0.01, 0.7)])
            off = rng.choice([float(atoms[0]) % h, float(atoms[-1]) % h, rng.uniform(0.0, h)])
            _check_measures(p, q, h, off)


def test_engine_charges_an_envelopes_mass_rtol() -> None:
    # An envelope's masses are differenced from breakpoints built from its parts' running
    # sums, whose rounding its mass_rtol charges; the engine read them (and its +∞ atom) as
    # exact: compose(subsample(compose(T(P, Q), 3), 1), numeric=True) read δ(1000)'s upper
    # end 0.4247138289988145 for the exact atom 0.42471382899881455 and ε at that δ 102.1 for
    # ∞ (a sweep of engine compositions against exact products, seed 500148). The atom: the
    # P-only mass a of T(P, Q) (Q = 0 there), 1 − (1 − a)³, in exact rationals.
    from fractions import Fraction

    p = [0.03468113083497699, 0.16831032215647596, 0.1326429980276134, 0.16436554898093358,
         0.5, 7.632783294297951e-17]
    q = [2.220446049250313e-16, 0.0, 2.220446049250313e-16, 0.626953125,
         0.18652343749999978, 0.18652343749999978]
    assert sum(map(Fraction, p)) == 1 and sum(map(Fraction, q)) == 1
    atom = 1 - (1 - Fraction(p[1])) ** 3
    s = fdp.subsample(fdp.compose((fdp.from_distributions(p, q), 3)), 1.0)
    g = fdp.compose(s, repeat=1, numeric=True)
    for eps in (300.0, 1000.0):
        assert Fraction(g.delta_bracket(eps)[1]) >= atom
        assert Fraction(g.delta(eps)) >= atom
    assert g.epsilon(float(atom)) == math.inf

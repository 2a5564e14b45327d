"""The composition engine charges a discrete base's errors through mixtures and mirrors.

tests/test_engine_loss_err.py: a :class:`~fdp.tradeoff.PiecewiseLinear` built by
``from_masses`` knows its masses to ``mass_rtol`` ρ and its losses within ``_loss_errs()``, and
the engine gives each of its sides its own bins (``_engine_bins``) and reads the composed losses
moved by ``_engine_shift``. Curves that map a base's bins — the Poisson add pair
p f + (1 − p) Id (:class:`fdp.operations.Mixture`), an inverse of one
(:class:`fdp.tradeoff.Inverse`, ``_MixtureInverse``), f ⊗ f_{0,δ}
(:class:`fdp.composition.DeltaMix`) — read the base's exact bins, so neither was charged: both
ends of the brackets could land on the wrong side. References are exact sums over the joint
outcomes of the true pairs in mpmath (tests/exact_sums.py).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from exact_sums import mp_delta, mp_eps, mp_subsampled_pair

import fdp
from fdp.composition import DeltaMix
from fdp.tradeoff import PiecewiseLinear

P = [0.2, 0.3, 0.5]
Q = [0.5, 0.3, 0.2]
RHO = 1e-8

# (the δ brackets next to the largest loss are wider than 10·tol: certified, and warned about)
pytestmark = pytest.mark.filterwarnings("ignore::fdp.AccuracyWarning")


def _mp(xs: list[float]) -> list[mp.mpf]:
    return [mp.mpf(x) for x in xs]


def _rho_base(sign: int, p: list[float] = P, q: list[float] = Q) -> PiecewiseLinear:
    """Masses within 0.9ρ of the exact pair (p, q) (each side sums to 1 exactly), off in the
    direction that lowers δ (sign 1) or raises it (−1)."""
    pt = [x * (1 + 0.9 * RHO * s * sign) for x, s in zip(p, [1, 0, -1], strict=True)]
    qt = [x * (1 - 0.9 * RHO * s * sign) for x, s in zip(q, [1, 0, -1], strict=True)]
    return PiecewiseLinear.from_masses(np.array(pt), np.array(qt), mass_rtol=RHO)


def _loss_base(sign: int) -> PiecewiseLinear:
    """Exact masses, given losses 1e-7 off the masses' (within their loss_err 2e-7)."""
    true = [float(mp.log(mp.mpf(b) / mp.mpf(a))) for a, b in zip(P, Q, strict=True)]
    loss = np.array(true) - sign * 1e-7 * np.array([1.0, 0.0, -1.0])
    return PiecewiseLinear.from_masses(np.array(P), np.array(Q), loss=loss,
                                       loss_err=np.full(3, 2e-7))


def _add_pair(r: mp.mpf, p: list[float] = P, q: list[float] = Q) -> tuple[list, list]:  # type: ignore[type-arg]
    pm, qm = _mp(p), _mp(q)
    return pm, [(1 - r) * a + r * b for a, b in zip(pm, qm, strict=True)]


def _assert_brackets(c: fdp.TradeOff, pair: tuple[list, list], n: int,  # type: ignore[type-arg]
                     eps: list[float], deltas: list[float]) -> None:
    g = fdp.compose(c, repeat=n, numeric=True)
    steps = [pair] * n
    for e in eps:
        ex = mp_delta(steps, mp.mpf(e))
        lo, hi = g.delta_bracket(e)
        assert lo <= ex <= hi, (n, e, lo, hi, float(ex))
        assert g.delta(e) >= ex, (n, e, g.delta(e), float(ex))
    for d in deltas:
        ex = max(mp_eps(steps, d), 0)
        lo, hi = g.epsilon_bracket(d)
        assert lo <= ex <= hi, (n, d, lo, hi, float(ex))


def _top(pair: tuple[list, list], n: int) -> float:  # type: ignore[type-arg]
    return float(n * max(mp.log(b / a) for a, b in zip(*pair, strict=True) if a > 0 and b > 0))


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_poisson_add_charges_mass_rtol(sign: int, n: int) -> None:
    # before, the add pair (a Mixture) mapped the base's exact bins: n = 1, sign 1 read
    # δ(0.2) ∈ [0.1057194317, 0.1057194456] for the exact 0.1057194484 and ε(1e-9) ∈
    # [0.55961577222, 0.55961577223] for the exact 0.55961578508; sign −1 read δ(0)'s lower end
    # 0.1500000031 above the exact 0.15
    with mp.workdps(60):
        pair = _add_pair(mp.mpf(0.5))
        top = _top(pair, n)
        _assert_brackets(fdp.poisson_subsample(_rho_base(sign), 0.5).add, pair, n,
                         [0.0, 0.2, top - 1e-3, top - 1e-6], [1e-3, 1e-9])


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_poisson_add_charges_given_loss_err(sign: int, n: int) -> None:
    # before: n = 1, sign 1 read δ(0)'s upper end 0.14999999277 for the exact 0.15, and
    # ε(1e-9) ∈ [0.55961574891, 0.55961574891] for the exact 0.55961578508; sign −1 read
    # ε(1e-3) ∈ [0.55675462559, 0.55675455565] (its ends crossed) for the exact 0.55675455565
    with mp.workdps(60):
        pair = _add_pair(mp.mpf(0.5))
        top = _top(pair, n)
        _assert_brackets(fdp.poisson_subsample(_loss_base(sign), 0.5).add, pair, n,
                         [0.0, 0.2, top - 1e-3, top - 1e-6], [1e-3, 1e-9])


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("n", [1, 3])
def test_poisson_add_with_a_p_only_outcome(sign: int, n: int) -> None:
    # a base with P-mass at loss −∞ (the add pair's Q-mass (1 − p)P at log(1 − p)); before,
    # n = 3, sign 1 read δ(0)'s upper end 0.26324999505 for the exact 0.26325
    p = [0.2, 0.3, 0.4, 0.1]
    q = [0.5, 0.3, 0.2, 0.0]
    pm, qm = _mp(p), _mp(q)
    fp = [pm[0] * (1 + 0.9 * RHO * sign), pm[1], pm[2] * (1 + 0.225 * RHO * sign),
          pm[3] * (1 - 0.9 * RHO * sign)]
    fq = [qm[0] * (1 - 0.9 * RHO * sign), qm[1], qm[2] * (1 + 2.25 * RHO * sign), qm[3]]
    f = PiecewiseLinear.from_masses(np.array([float(x) for x in fp]),
                                    np.array([float(x) for x in fq]), mass_rtol=RHO)
    with mp.workdps(60):
        pair = _add_pair(mp.mpf(0.5), p, q)
        top = _top(pair, n)
        l1 = math.log(0.5)
        _assert_brackets(fdp.poisson_subsample(f, 0.5).add, pair, n,
                         [l1 - 1e-9, -0.1, 0.0, 0.2, top - 1e-3, top + (n - 1) * l1 - 1e-9],
                         [1e-3, 1e-9])


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_nested_poisson_add_and_its_inverse(sign: int, n: int) -> None:
    # the add pair of the add pair (a Mixture of a Mixture), and its inverse (a _MixtureInverse,
    # which mirrors the outer mixture's bins). Before, n = 1, sign 1: the add pair read
    # δ(0.1)'s upper end 0.0346703045 for the exact 0.0346703062 (n = 2), and the inverse
    # δ(0.05)'s 0.0216716505 for the exact 0.0216716511
    m = fdp.poisson_subsample(fdp.poisson_subsample(_rho_base(sign), 0.5).add, 0.3).add
    with mp.workdps(60):
        r = mp.mpf(0.5) * mp.mpf(0.3)
        pair = _add_pair(r)
        top = _top(pair, n)
        _assert_brackets(m, pair, n, [0.0, 0.1, top - 1e-3, top - 1e-7], [1e-3, 1e-9])
        inv = (pair[1], pair[0])
        top = _top(inv, n)
        _assert_brackets(m.inverse(), inv, n, [0.0, 0.05, top - 1e-3, top - 1e-7],
                         [1e-3, 1e-9])


@pytest.mark.parametrize("n", [1, 2])
def test_delta_mix_of_poisson_add(n: int) -> None:
    # f_p ⊗ f_{0,δ} (a DeltaMix of the Mixture): before, n = 1 read δ(0.2)'s upper end
    # 0.106613728023 for the exact 0.106613728920
    d = mp.mpf(1e-3)
    dm = fdp.compose([fdp.poisson_subsample(_rho_base(1), 0.5).add, fdp.EpsDelta(0.0, 1e-3)])
    assert isinstance(dm, DeltaMix)
    with mp.workdps(60):
        pm, bm = _add_pair(mp.mpf(0.5))
        pair = ([(1 - d) * x for x in pm] + [d, mp.mpf(0)],
                [(1 - d) * x for x in bm] + [mp.mpf(0), d])
        top = _top(pair, n)
        g = fdp.compose(dm, repeat=n, numeric=True)
        for e in [0.0, 0.2, top - 1e-3]:
            ex = mp_delta([pair] * n, mp.mpf(e))
            lo, hi = g.delta_bracket(e)
            assert lo <= ex <= hi, (n, e, lo, hi, float(ex))


@pytest.mark.parametrize("sign", [1, -1])
def test_other_poisson_directions_and_subsample(sign: int) -> None:
    # (PL curves built from the masses with ρ and the losses' errors carried: right before
    # too; kept as a guard) remove = T((1 − r)Q + rP, Q), add⁻¹, remove⁻¹, and C_r(f) of a
    # symmetric base
    f = _rho_base(sign)
    pairs = fdp.poisson_subsample(f, 0.5)
    r = mp.mpf(0.5)
    with mp.workdps(60):
        pm, qm = _mp(P), _mp(Q)
        add = _add_pair(r)
        rem = ([(1 - r) * b + r * a for a, b in zip(pm, qm, strict=True)], qm)
        for c, pair in ((pairs.remove, rem), (pairs.add.inverse(), (add[1], add[0])),
                        (pairs.remove.inverse(), (rem[1], rem[0]))):
            top = _top(pair, 2)
            _assert_brackets(c, pair, 2, [0.0, 0.2, top - 1e-3], [1e-3])
        # a symmetric base (masses off within ρ, symmetric exactly): C_r(f) = min{f_r, f_r⁻¹}**
        sp = [0.1 * (1 + 0.9 * RHO * sign), 0.5, 0.4 * (1 - 0.225 * RHO * sign)]
        sym = PiecewiseLinear.from_masses(np.array(sp), np.array(sp[::-1]), mass_rtol=RHO)
        pair = mp_subsampled_pair([(_mp([0.1, 0.5, 0.4]), _mp([0.4, 0.5, 0.1]))], r)
        top = _top(pair, 2)
        _assert_brackets(fdp.subsample(sym, 0.5), pair, 2, [0.0, 0.2, top - 1e-3], [1e-3])

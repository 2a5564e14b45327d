"""Group privacy's +∞ atom on both sides, against an exact reference in mpmath (helper-57).

group(f, k) of an exact curve f with an optimistic twin caps its points (the lower curve's)
by certified bounds of the true kinks (``_left_below``), which lie below them by f's and the
iteration's reading margins ρ: for f = EpsDelta(3.1569, 1e-10)^{⊗3} the +∞ atom of
group(f, 2) read 3.892489748453447e-6 for the exact 3.8924897484529753e-6 (1.2e-13 relative
above, its mass_rtol 1.4e-14). Its own bracket took the lower end from the (uncapped) twin, but
the composition engine read the capped masses as accurate to mass_rtol on its optimistic side
too: compose(g, numeric=True) read δ(100)'s lower end 2.7e-15 relative above the exact one."""

from __future__ import annotations

import mpmath as mp
import pytest
from exact_sums import (
    mp_breakpoints,
    mp_exponential_pair,
    mp_group_points,
    mp_joint,
    mp_points_delta,
)

import fdp


def _exact_group(eps: float, delta: float, repeat: int, k: int) -> list[tuple[mp.mpf, mp.mpf]]:
    """Breakpoints of group(EpsDelta(ε, δ)^{⊗repeat}, k), exactly (the float parameters as
    given): the pair of f_{ε,δ} is P = (0, a, b, δ), Q = (δ, b, a, 0) with
    a = (1 − δ)/(1 + e^ε), b = (1 − δ)e^ε/(1 + e^ε)."""
    e, d = mp.mpf(eps), mp.mpf(delta)
    a = (1 - d) / (1 + mp.exp(e))
    b = (1 - d) * mp.exp(e) / (1 + mp.exp(e))
    joint = mp_joint([([mp.mpf(0), a, b, d], [d, b, a, mp.mpf(0)])] * repeat)
    pts = mp_breakpoints([x for x, _ in joint], [y for _, y in joint])
    return mp_group_points(pts, k)


CASES = [
    (3.1569, 1e-10, 3, 2),  # (the sweep's case)
    (4.4773, 1e-10, 3, 2),  # (before: the engine's and the inverse's lower ends above)
    (2.9967, 1e-5, 3, 2),  # (the inverse's)
    (1.8989, 1e-14, 4, 3),  # (the engine's)
    (2.0818, 1e-9, 4, 3),
    (1.0, 1e-6, 2, 2),
    (0.5, 1e-8, 4, 2),
    (3.1569, 1e-10, 2, 3),
]


@pytest.mark.parametrize(("eps", "delta", "repeat", "k"), CASES)
def test_group_atom_sides(eps: float, delta: float, repeat: int, k: int) -> None:
    with mp.workdps(60):
        exact = _exact_group(eps, delta, repeat, k)
        g = fdp.group(fdp.compose(fdp.EpsDelta(eps, delta), repeat=repeat), k)
        c = fdp.compose(g, numeric=True)
        top = k * repeat * eps
        for at in (100.0, top + 1.0, top, 0.5 * top, 0.0):
            ref = mp_points_delta(exact, mp.mpf(at))
            for name, curve in (("group", g), ("engine", c)):
                lo, hi = curve.delta_bracket(at)
                assert mp.mpf(lo) <= ref, (name, at, lo, float(ref))
                assert mp.mpf(hi) >= ref, (name, at, hi, float(ref))
        # the inverse's optimistic side too (its −∞ atom is the group's +∞ one)
        inv = [(b, a) for a, b in exact][::-1]
        gi = g.inverse()
        for at in (100.0, top, 0.0):
            ref = mp_points_delta(inv, mp.mpf(at))
            lo, hi = gi.delta_bracket(at)
            assert mp.mpf(lo) <= ref, ("inverse", at, lo, float(ref))
            assert mp.mpf(hi) >= ref, ("inverse", at, hi, float(ref))


def test_group_inverse_exponential_mechanism() -> None:
    """Hunt seed 408873: group(exponential(u, u', 5), 2).inverse() read its optimistic δ up to
    4.1e-14 relative above the exact one (δ(3.69206187456)'s lower end 0.2654274545576411 for
    0.2654274545576302; ε(0.2654274543)'s 3.6920618875086 for 3.6920618875081): the group's
    capped points were read as the inverse's own optimistic masses. Exact reference: the
    mechanism's masses exp(εu_i/2)/Σ (McSherry & Talwar 2007) at 60 digits."""
    u, v, eps = [-1.0, 0.0, -20.0, 0.0], [-2.0, 1.0, -19.0, 0.0], 5.0
    with mp.workdps(60):
        pm, qm = mp_exponential_pair(u, v, eps)
        base = fdp.mechanisms.exponential(u, v, eps)
        for k in (2, 3):
            exact = mp_group_points(mp_breakpoints(pm, qm), k)
            inv = [(b, a) for a, b in exact][::-1]
            losses = sorted({float(mp.log((inv[i][1] - inv[i + 1][1])
                                          / (inv[i + 1][0] - inv[i][0])))
                             for i in range(len(inv) - 1) if inv[i + 1][0] > inv[i][0]
                             and inv[i][1] > inv[i + 1][1]})
            gi = fdp.group(base, k).inverse()
            for at in [*losses, 0.0, 1.0, 5.0]:
                ref = mp_points_delta(inv, mp.mpf(at))
                lo, hi = gi.delta_bracket(at)
                assert mp.mpf(lo) <= ref, (k, at, lo, float(ref))
                assert mp.mpf(hi) >= ref, (k, at, hi, float(ref))
                if at > 0.0 and 1e-12 < ref < 1.0 - 1e-12:  # (ε ≥ 0 by convention)
                    e_lo, e_hi = gi.epsilon_bracket(float(ref))
                    # (the lower end of ε at the exact δ(at): the exact δ there still reaches it)
                    assert mp_points_delta(inv, mp.mpf(e_lo)) >= ref, (k, at, e_lo)
                    assert mp_points_delta(inv, mp.mpf(e_hi)) <= ref, (k, at, e_hi)

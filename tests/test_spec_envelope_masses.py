"""Envelopes (symmetrize, min_envelope) reloaded from their JSON spec, against exact mpmath
references (helper-63; hunt seed 410105).

An envelope's breakpoints are the hull of its parts'. A group's lower curve caps its points at
certified bounds of the true kinks (:func:`fdp.operations._group_general`), left of and below
them by more than its mass_rtol (its optimistic side is read from an uncapped twin), and the
envelope of such parts inherits those points: a pessimistic garbling whose optimistic reading
comes from the parts' twins, not from its own masses. curve_to_spec wrote the envelope by its
(differenced) masses, which a reloaded curve read on both sides as known to mass_rtol:
symmetrize(group(exponential(u, u', 5), 2)), its point 1 − α = 2.153167844155523e-22 for the
exact 2.1531678441552462e-22 (1.3e-13 relative, mass_rtol 1.4e-14), read δ(0)'s lower end
2.0959513547704154e-22 for the exact 2.0959513547703933e-22 after a round trip. Exact
reference: the exponential mechanism's masses exp(ε u_i / 2) / Σ_j exp(ε u_j / 2) (McSherry &
Talwar 2007), group 1 − (1 − f)^{∘k} (DRS Thm 2.14), symmetrize the lower convex hull of f's
and f⁻¹'s breakpoints, δ(ε) the largest 1 − β − e^ε α over breakpoints."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import mpmath as mp
import pytest
from exact_sums import (
    mp_breakpoints,
    mp_delta,
    mp_group_points,
    mp_hull_pair,
    mp_joint,
    mp_points_delta,
    mp_poisson_symmetric_of,
    mp_subsampled_pair,
)

import fdp
import fdp.mechanisms as FM
from fdp.accountant import curve_from_spec, curve_to_spec
from fdp.operations import min_envelope

U3 = [0.5, -20.0, -20.0]
V3 = [1.5, -21.0, -19.934029664106834]
U2 = [-1.0, 0.0, -3.0, 0.25]
V2 = [-2.0, 1.0, -2.0, 0.25]

Pts = list[tuple[Any, Any]]
SLACK = mp.mpf("1e-70")


def _mech(u: list[float], v: list[float], eps: float) -> tuple[list[Any], list[Any]]:
    """The exponential mechanism's (P, Q) masses, exactly (sensitivity 1)."""
    wp = [mp.exp(mp.mpf(eps) * mp.mpf(x) / 2) for x in u]
    wq = [mp.exp(mp.mpf(eps) * mp.mpf(x) / 2) for x in v]
    return [w / mp.fsum(wp) for w in wp], [w / mp.fsum(wq) for w in wq]


def _sym(pts: Pts) -> Pts:
    return mp_breakpoints(*mp_hull_pair(pts + [(b, a) for a, b in pts]))


def _group(u: list[float], v: list[float], eps: float, k: int) -> Pts:
    return mp_group_points(mp_breakpoints(*_mech(u, v, eps)), k)


def _case_sym_group() -> tuple[Any, Pts]:
    f = fdp.symmetrize(fdp.group(FM.exponential(U3, V3, 5.0), 2))
    return f, _sym(_group(U3, V3, 5.0, 2))


def _case_sym_group_eps4() -> tuple[Any, Pts]:
    f = fdp.symmetrize(fdp.group(FM.exponential(U3, V3, 4.0), 2))
    return f, _sym(_group(U3, V3, 4.0, 2))


def _case_sym_group3() -> tuple[Any, Pts]:
    f = fdp.symmetrize(fdp.group(FM.exponential(U3, V3, 5.0), 3))
    return f, _sym(_group(U3, V3, 5.0, 3))


def _case_envelope_group_inverse() -> tuple[Any, Pts]:
    g = fdp.group(FM.exponential(U3, V3, 5.0), 2)
    return min_envelope(g, g.inverse()), _sym(_group(U3, V3, 5.0, 2))


def _case_sym_product() -> tuple[Any, Pts]:
    f = fdp.symmetrize(fdp.compose(FM.exponential(U3, V3, 5.0), FM.exponential(U2, V2, 3.0)))
    joint = mp_joint([_mech(U3, V3, 5.0), _mech(U2, V2, 3.0)])
    return f, _sym(mp_breakpoints([a for a, _ in joint], [b for _, b in joint]))


def _case_envelope_groups() -> tuple[Any, Pts]:
    f = min_envelope(fdp.group(FM.exponential(U3, V3, 5.0), 2),
                     fdp.group(FM.exponential(U2, V2, 3.0), 2))
    return f, mp_breakpoints(*mp_hull_pair(_group(U3, V3, 5.0, 2) + _group(U2, V2, 3.0, 2)))


def _case_subsample_sym_group() -> tuple[Any, Pts]:
    f = fdp.subsample(fdp.symmetrize(fdp.group(FM.exponential(U3, V3, 5.0), 2)), 0.3)
    pm, qm = mp_hull_pair(_sym(_group(U3, V3, 5.0, 2)))
    return f, mp_breakpoints(*mp_subsampled_pair([(pm, qm)], mp.mpf(0.3)))


CASES: dict[str, Callable[[], tuple[Any, Pts]]] = {
    "sym_group": _case_sym_group,
    "sym_group_eps4": _case_sym_group_eps4,
    "sym_group3": _case_sym_group3,
    "envelope_group_inverse": _case_envelope_group_inverse,
    "sym_product": _case_sym_product,
    "envelope_groups": _case_envelope_groups,
    "subsample_sym_group": _case_subsample_sym_group,
}


def _losses(pts: Pts) -> list[float]:
    """The exact kinks' losses (the slopes' logs), as floats, with their float neighbours."""
    out: set[float] = set()
    for (a0, b0), (a1, b1) in zip(pts[:-1], pts[1:], strict=True):
        if a1 > a0 and b0 > b1:
            x = float(mp.log((b0 - b1) / (a1 - a0)))
            out |= {x, x - 1e-13 * (abs(x) + 1.0), x + 1e-13 * (abs(x) + 1.0)}
    return sorted(out)


def _check(name: str, curve: Any, pts: Pts, at: list[float]) -> None:
    for e in at:
        ref = mp_points_delta(pts, mp.mpf(e))
        lo, hi = curve.delta_bracket(e)
        # (the reference's own rounding, at 80 digits, well below any float reading)
        assert mp.mpf(lo) <= ref + SLACK, (name, e, lo, float(ref))
        assert mp.mpf(hi) >= ref - SLACK, (name, e, hi, float(ref))


def _reload(curve: Any) -> Any:
    return curve_from_spec(json.loads(json.dumps(curve_to_spec(curve))))


def test_repro_seed_410105() -> None:
    with mp.workdps(80):
        f, pts = _case_sym_group()
        g = _reload(f)
        for e, exact in ((0.0, 2.0959513547703933e-22), (1.0, 1.9976373007721806e-22),
                         (7.335074152932012, 5.141329052177529e-23)):
            ref = mp_points_delta(pts, mp.mpf(e))
            assert abs(float(ref) - exact) <= 1e-15 * exact
            for curve in (f, g):
                lo, hi = curve.delta_bracket(e)
                assert mp.mpf(lo) <= ref + SLACK, (e, lo, float(ref))
                assert mp.mpf(hi) >= ref - SLACK, (e, hi, float(ref))


@pytest.mark.parametrize("case", sorted(CASES))
def test_envelope_reloaded(case: str) -> None:
    with mp.workdps(80):
        f, pts = CASES[case]()
        at = [e for e in _losses(pts) if e > -12.0] + [0.0, 0.5, 1.0, 2.0, 3.0, 6.0]
        inv = [(b, a) for a, b in pts][::-1]  # (T(P, Q)⁻¹ = T(Q, P))
        _check(case, f, pts, at)
        _check(case + " inverse", f.inverse(), inv, at)
        g = _reload(f)
        _check(case + " reloaded", g, pts, at)
        _check(case + " reloaded, inverse", g.inverse(), inv, at)
        h = _reload(g)  # (a second round trip reads the same)
        _check(case + " reloaded twice", h, pts, at)
        _check(case + " reloaded twice, inverse", h.inverse(), inv, at)
        pm, qm = mp_hull_pair(pts)
        s = fdp.subsample(g, 0.5)
        _check(case + " reloaded, subsampled", s,
               mp_breakpoints(*mp_subsampled_pair([(pm, qm)], mp.mpf(0.5))), at)
        ps = fdp.poisson_subsample(g, 0.3).symmetric
        _check(case + " reloaded, Poisson-symmetric", ps,
               mp_breakpoints(*mp_poisson_symmetric_of(pm, qm, mp.mpf(0.3))), at)


@pytest.mark.parametrize("eps0", [5.0, 4.0])
def test_product_of_envelope(eps0: float) -> None:
    """The exact product f ⊗ f of the envelope, before and after a round trip, against exact
    sums over the joint outcomes (it read the envelope's capped masses optimistically: for
    ε₀ = 5, δ(10)'s lower end 4.9e-36 for the exact 2.8e-44)."""
    with mp.workdps(80):
        f = fdp.symmetrize(fdp.group(FM.exponential(U3, V3, eps0), 2))
        pair = mp_hull_pair(_sym(_group(U3, V3, eps0, 2)))
        for name, c in (("original", f), ("reloaded", _reload(f))):
            prod = fdp.compose(c, c)
            for e in (0.0, 1.0, 3.0, 5.0, 8.0, 10.0, 14.6, 15.0, 20.0):
                ref = mp_delta([pair, pair], mp.mpf(e))
                lo, hi = prod.delta_bracket(e)
                assert mp.mpf(lo) <= ref + SLACK, (name, e, lo, float(ref))
                assert mp.mpf(hi) >= ref - SLACK, (name, e, hi, float(ref))

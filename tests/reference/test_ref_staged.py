"""Long dense powers composed in two stages, f^{⊗n} = (f^{⊗m})^{⊗q} ⊗ f^{⊗r} (issue #17).

A single curve repeated n ≥ 2¹⁶ times whose one-stage bulk window needs ≥ 2¹⁸ points is composed
as the engine's bracket of f^{⊗m}, m ≈ √n, composed q times (``fdp.pld._staged``): DP-SGD with
σ = 2, p = 1e-3, T = 10⁶ on 2¹⁵ + 2¹⁵ points instead of 2¹⁹. A composition of brackets is the
code path where earlier wrong-side answers lived, so every value here comes from outside fdp:

- ε(δ) of Poisson DP-SGD by inverting the moment generating function of the T-step privacy loss
  along a vertical line, both directions, the larger (``ref_dpsgd_eps`` in
  benchmarks/bench_extremes.py; its stored ``DPSGD_REFS``, recomputed by
  ``python benchmarks/bench_extremes.py --check-references``);
- the closed form of G_μ^{⊗n} = G_{μ√n} (DRS Cor 3.3), through mpmath.
"""

from __future__ import annotations

import math
import warnings

import pytest

import fdp
from fdp import pld
from fdp.operations import Mixture

from ._ref import M, mp

#: (σ, p, T, δ) → ε, from benchmarks/bench_extremes.py DPSGD_REFS (MGF inversion). T is not a
#: square in three of them: the stages then include the rest r = T − m·q.
STAGED_REFS = {
    (2.0, 1e-3, 10**6, 1e-5): 2.142700559,
    (3.0, 0.00133, 1_260_000, 1e-5): 2.04683269,
    (1.942, 0.00119, 1_160_000, 1e-5): 2.942035981,
    (2.167, 0.00442, 979_000, 1e-8): 13.7517575,
    (1.265, 0.00318, 1_930_000, 1e-5): 25.34183174,
}


@pytest.mark.parametrize("key", sorted(STAGED_REFS))
def test_staged_dpsgd_holds_the_inversion_reference(key: tuple[float, float, int, float]) -> None:
    s, p, t, delta = key
    ref = STAGED_REFS[key]
    h = fdp.dpsgd(s, p, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fdp.AccuracyWarning)  # (within tol: no warning)
        lo, hi = h.epsilon_bracket(delta)
    stages = h._f.info.get("stages")  # type: ignore[attr-defined]
    assert stages is not None, "the path under test: two stages"
    m, q, r = stages["inner"], stages["outer"], stages["rest"]
    assert m * q + r == t and m == math.isqrt(t)
    # the side: the stored references carry 10 digits
    assert lo <= ref * (1 + 1e-9) and hi >= ref * (1 - 1e-9)
    assert hi - lo <= 1e-3 * hi  # the default tol
    assert h.epsilon(delta) == hi
    if key == (3.0, 0.00133, 1_260_000, 1e-5):
        # (here the screen cannot tell, so the remove direction f⁻¹ is composed, in two stages
        # as well, with a rest: the reference is the larger of the two directions' ε)
        g = h._g  # type: ignore[attr-defined]
        assert g is not None and g.info["stages"]["rest"] > 0


@pytest.mark.parametrize(("mu", "n"), [(0.001, 10**6), (0.002, 1_100_000)])
def test_staged_gaussian_power_holds_the_closed_form(mu: float, n: int) -> None:
    h = fdp.compose(fdp.Gaussian(mu), repeat=n, numeric=True)
    assert h.info.get("stages") is not None
    big = mp.mpf(mu) * mp.sqrt(n)

    def gdp_delta(e: object) -> object:  # G_big's privacy profile (DRS Cor 2.13)
        return M(mp.ncdf(-e / big + big / 2) - mp.exp(e) * mp.ncdf(-e / big - big / 2))

    for delta in (1e-3, 1e-6, 1e-10):
        lo, hi = h.epsilon_bracket(delta)
        truth = mp.findroot(lambda e, d=delta: gdp_delta(e) - d, float(hi))
        assert lo <= truth <= hi, (delta, lo, float(truth), hi)
        assert hi - lo <= 1e-3 * hi
        # δ at the conservative ε is at most the δ asked (the guarantee's side)
        assert gdp_delta(mp.mpf(hi)) <= delta * (1 + 1e-12)


def test_staged_bulk_grid_answers_down_to_1e12() -> None:
    # the add direction of DP-SGD σ = 2, p = 1e-3, T = 10⁶, whose ε(1e-12) (MGF inversion,
    # DPSGD_REFS; the remove direction's is smaller) is 3.696601045. The outer stage is tilted
    # at once, so δ = 1e-12 is answered without a rebuild (an untilted outer grid sent such
    # queries through every stage again), and each inner copy leaves out 1/q of the tail mass
    # (q copies of a window's 1e-16 had made this bracket 0.29 % wide)
    h = fdp.compose(Mixture(fdp.Gaussian(0.5), 1e-3), repeat=10**6, numeric=True)
    before = dict(h.info)
    with warnings.catch_warnings():
        warnings.simplefilter("error", fdp.AccuracyWarning)
        lo, hi = h.epsilon_bracket(1e-12)
    assert h.info["grid_points"] == before["grid_points"] and "stages" in h.info
    assert lo <= 3.696601045 * (1 + 1e-9) and hi >= 3.696601045 * (1 - 1e-9)
    assert hi - lo <= 1e-3 * hi


def test_a_sparse_block_is_composed_in_one_stage() -> None:
    # p·√T = 0.1: a block of 1000 steps is mostly one atom with a far tail; its window would
    # need more points than the one-stage grid saves, and the fit test says so before any
    # inner stage is built
    step = Mixture(fdp.Gaussian(1.25), 1e-4)
    comps, h, _ = pld._plan([(step, 10**6)], [(step, 10**6)], 1e-3, None, pld.FAST0)
    need = pld._window(comps, h, pld.FAST0.window_tail)[1]
    assert need >= pld.STAGE_NEED
    assert not pld._stage_fits(comps[0], h, need, pld.FAST0)
    dense = Mixture(fdp.Gaussian(0.5), 1e-3)
    comps, h, _ = pld._plan([(dense, 10**6)], [(dense, 10**6)], 1e-3, None, pld.FAST0)
    need = pld._window(comps, h, pld.FAST0.window_tail)[1]
    assert pld._stage_fits(comps[0], h, need, pld.FAST0)

"""A long loss grid's bins computed a chunk at a time (:func:`fdp.pld._loss_bins_chunked`) are
those of the whole grid.

The Poisson add pair p f + (1 − p) Id (:class:`fdp.operations.Mixture`) puts the base's P-mass
at loss −∞ at log(1 − p) (Q-mass (1 − p)P). A chunk whose edges all lie below log(1 − p) read
that atom BELOW itself (in ``p_below``/``q_below``), and the chunk holding log(1 − p) binned it
again: the chunked bins counted it twice, the first chunk's below (or, mirrored by an inverse,
the last chunk's above). A composition of the inverse of such a mixture on a grid of more than
2¹⁸ sub-bins whose last chunk lies past −log(1 − p) read both ends of its δ brackets too high:
the optimistic end δ(0) = 0.0552 and δ(1) = 1.93e-5 for the exact 0.0431 and 4.82e-6. The
reference is an exact sum over the joint outcomes of the true pairs in mpmath
(tests/exact_sums.py).
"""

from __future__ import annotations

import math
from typing import Any

import mpmath as mp
import numpy as np
import pytest
from exact_sums import mp_delta

import fdp
import fdp.pld as pld
from fdp.pld import _loss_bins_chunked, _side_bins

# (the δ brackets next to the largest loss are wider than 10·tol: certified, and warned about)
pytestmark = pytest.mark.filterwarnings("ignore::fdp.AccuracyWarning")

E = fdp.EpsDelta(1.0, 0.1)  # (P-mass 0.1 at loss −∞)
# B: the inverse of a mixture of a mixture, with P-mass 0.015 at loss −∞ (the Q-mass at +∞ of
# the mixtures), and not a PiecewiseLinear curve, so that its mixture's inverse is the generic
# mirror of the mixture's bins (operations._MixtureInverse)
B = fdp.poisson_subsample(fdp.poisson_subsample(E, 0.5).add, 0.3).add.inverse()
G = fdp.poisson_subsample(B, 0.4).add


def _curves() -> dict[str, Any]:
    return {
        "mixture": fdp.poisson_subsample(E, 0.3).add,
        "nested": fdp.poisson_subsample(fdp.poisson_subsample(E, 0.3).add, 0.5).add,
        "of_inverse": G,
        "its_inverse": G.inverse(),
        "B": B,
    }


@pytest.mark.parametrize("name", list(_curves()))
@pytest.mark.parametrize("side", [None, "lower", "upper"])
@pytest.mark.parametrize("chunk", [1, 3, 4, 7])
@pytest.mark.parametrize("lo, hi, n", [(-3.0, 3.0, 61), (-1.0, 0.5, 41), (-2.5, -0.3, 23)])
def test_chunked_bins_equal_the_whole_grids(name: str, side: str | None, chunk: int, lo: float,
                                            hi: float, n: int) -> None:
    c = _curves()[name]
    edges = np.linspace(lo, hi, n)  # (log(1 − p) for p = 0.3, 0.4: −0.357, −0.511, mid-grid)
    a = _side_bins(c, edges, side)
    b = _loss_bins_chunked(c, edges, chunk=chunk, side=side)
    np.testing.assert_allclose(b.p, a.p, rtol=1e-13, atol=0.0)
    np.testing.assert_allclose(b.q, a.q, rtol=1e-13, atol=0.0)
    for f in ("p_below", "q_below", "p_above", "q_above", "q_inf"):
        assert math.isclose(getattr(b, f), getattr(a, f), rel_tol=1e-12, abs_tol=1e-16), f
    if side is None:  # (each measure's masses sum to 1)
        assert math.isclose(float(b.p.sum()) + b.p_below + b.p_above, 1.0, rel_tol=1e-12)
        assert math.isclose(float(b.q.sum()) + b.q_below + b.q_above + b.q_inf, 1.0,
                            rel_tol=1e-12)


def test_a_mixture_on_edges_all_below_its_atom_reads_it_above() -> None:
    # every edge below log(1 − p) = −0.357: the atom 0.1 at loss −∞ of the base lies above
    m = fdp.poisson_subsample(E, 0.3).add
    b = m._loss_bins(np.array([-2.0, -1.0, -0.5]))
    assert b.p_below == 0.0 and b.q_below == 0.0
    assert float(b.p.sum()) == 0.0 and float(b.q.sum()) == 0.0
    assert math.isclose(b.p_above, 1.0, rel_tol=1e-15)
    assert math.isclose(b.q_above, 1.0 - 0.3 * 0.1, rel_tol=1e-15)


def _exact_pair() -> tuple[list[Any], list[Any]]:
    """The true pair of G⁻¹: EpsDelta(1, 0.1) as (P, Q) on the losses −∞, −1, 1, ∞; the add
    pair T(P, (1 − p)P + pQ); the inverse T(Q, P)."""
    e, d = mp.e, mp.mpf(0.1)
    p = [d, (1 - d) * e / (1 + e), (1 - d) / (1 + e), mp.mpf(0)]
    q = [mp.mpf(0), (1 - d) / (1 + e), (1 - d) * e / (1 + e), d]

    def add(pp: list[Any], qq: list[Any], r: float) -> list[Any]:
        return [(1 - mp.mpf(r)) * a + mp.mpf(r) * b for a, b in zip(pp, qq, strict=True)]

    # B = T(Q2, P) with Q2 the mixtures' Q; G = T(Q2, 0.6 Q2 + 0.4 P); G⁻¹ its mirror
    q2 = add(p, add(p, q, 0.5), 0.3)
    return add(q2, p, 0.4), q2


@pytest.mark.parametrize("h, tail", [(8.8364e-6, 8), (8.836488364e-6, 4)])
def test_composition_on_a_chunked_grid_against_exact_sums(monkeypatch: pytest.MonkeyPatch,
                                                          h: float, tail: int) -> None:
    # grid steps at which the component of G⁻¹ has 2¹⁸ + ``tail`` sub-bins: its last chunk,
    # the mixture's first ``tail`` sub-bins, lies wholly past −log(1 − p) = 0.511
    seen: list[tuple[int, float]] = []
    chunked = pld._loss_bins_chunked

    def spy(c: Any, edges: np.ndarray, chunk: int = 1 << 18, side: str | None = None) -> Any:
        seen.append((edges.size - 1, float(edges[(edges.size - 2) // chunk * chunk])))
        return chunked(c, edges, chunk, side)

    monkeypatch.setattr(pld, "_loss_bins_chunked", spy)
    g = G.inverse()
    c = fdp.compose(g, repeat=2, grid_step=h)
    # (the case: a grid of 2¹⁸ + tail sub-bins, its last chunk's first edge past the atom)
    assert any(n == (1 << 18) + tail for n, _ in seen), seen
    assert all(first > -math.log1p(-0.4) for n, first in seen if n == (1 << 18) + tail)
    mp.mp.dps = 40
    pair = _exact_pair()
    eps = [0.0, 0.1, 0.3, 0.5, 1.0]
    lo, up = c.lower.delta(np.array(eps)), c.upper.delta(np.array(eps))
    for e, d_lo, d_up in zip(eps, lo, up, strict=True):
        exact = mp_delta([pair, pair], mp.mpf(e))
        assert d_up <= exact <= d_lo, (e, d_up, float(exact), d_lo)
        assert d_lo - d_up <= 1e-2 * float(exact), (e, d_up, float(exact), d_lo)

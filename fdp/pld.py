"""Privacy-loss distributions on a grid: the certified FFT composition engine.

:func:`fdp.compose` sends every product without a closed form here. The result is a
:class:`~fdp.numeric.Bracketed` curve whose ``lower`` and ``upper`` curves bracket the exact
composition at every α.

**The bilinear form.** For a nonnegative measure μ on the losses (−∞, +∞] write
δ_μ(x) = ∫ (1 − x e^{−ℓ})₊ dμ(ℓ), x = e^ε. For the Q-distribution of a pair's privacy loss
L = log dQ/dP this is the pair's privacy profile δ(ε) = sup_S Q(S) − e^ε P(S) (theory §3), and for
product pairs the losses add (theory §4), so the profile of a composition is
δ_{μ*ν}(x) = ∫ δ_μ(x e^{−l}) dν(l): symmetric and monotone in each measure. Hence if, for every
curve, μ̃ ≥ 0 and δ_μ̃ ≥ δ_μ (resp. ≤) pointwise, then the same holds for the convolutions, and
the trade-off curve sup_x (1 − δ(x) − xα) (clipped to a trade-off function) is a certified lower
(resp. upper) curve. Each side therefore needs one grid measure per curve, and nothing is lost
by composing: no per-step error accumulates beyond the per-curve ones.

1. **Pessimistic measure (lower curve): connect the dots** (Doroshenko, Ghazi, Kamath, Kumar &
   Manurangsi 2022). Each bin's (P, Q)-mass is split between its two end points, preserving both
   masses. δ is then exact at grid points and linear in x between them: it is the chord
   interpolation of the convex δ, hence ≥ δ. Q-mass below the grid goes to its bottom point, Q-mass
   above it to the +∞ atom.
2. **Optimistic measure (upper curve).** On a bin [x_k, x_{k+1}] the gap chord − δ is concave
   and vanishes at both ends. It is a sum over the bin's P-mass, and the part due to mass at y
   lies below (y − x_k)(x_{k+1} − x)/Δx and below (x_{k+1} − y)(x − x_k)/Δx. Charging each
   sub-bin to its nearer end gives end values (L_k, R_k), exact by linearity, and
   c_k = max(R_{k−1}, L_k). Near the top of the support the half-bins are charged to the left end
   instead, so that v never drops below δ's floor. The piecewise-linear function through
   v_k = δ(x_k) − c_k therefore lies below δ. Its greatest convex minorant (slopes by isotonic
   regression) is the profile of a nonnegative grid measure μ̃ with δ_μ̃ ≤ δ. Each bin has four
   sub-bins, with slivers of width ~h·2⁻²⁰ at both ends, so a point mass on a grid point costs
   nothing. Q-mass below the grid is dropped; Q-mass above it and above loss 700 (where P-masses
   underflow) is placed at its bin's left end (lower losses lower δ at every ε), counted as a
   lump at the last interpolated point while the chords are built.
   The split and the charges read the same computed offsets, whose rounding is absolute (near
   loss 0 most of the offset): they are exact for the masses moved up by at most d_i, so the
   upper curve reads its losses lower by Σ n_i d_i (:func:`_optimistic`).
   Where rounding leaves a mass negative it is set to 0, which raises δ_μ̃ by at most
   s_j 1[ε < ℓ_j] (a mass at ℓ only moves δ below ℓ): these *slack charges* are kept with their
   losses. In a composition they lift δ by at most Σ_i Σ_j s_j Q[S_{−i} > ε − ℓ_j], with S_{−i}
   the sum of the other steps' losses (replace the steps' measures one at a time; the
   probability by Chernoff from the components' MGFs). Subtracted as a constant, n·s ≈ 1e-12
   after 10⁴ steps would floor the optimistic δ; charged where it sits it is negligible far
   into the tail.
3. **Grid.** A common spacing h; each curve sits on its own lattice o_i + hℤ (the composition then
   lies on Σ n_i o_i + hℤ). h and the offsets o_i are chosen so that point masses of the loss
   (Laplace's ±μ, randomized response, …) fall on or near grid points. The search runs over steps
   d/k for the atom spacings d and minimizes the mass-weighted distance of every curve's atoms
   to its lattice: for Laplace(0.1) with Laplace(0.1·√2) it finds √2 ≈ 99/70. For smooth parts
   both sides err by O(h²) per step; a point mass at distance t·h from the grid costs the
   optimistic side about t·h per step. Where a curve's mass piles up within a few steps (sparse
   subsampling, next to log(1 − p)), the offset is searched instead (:func:`_piled_offset`).
   A curve whose point masses no step aligns is composed in **coupled mode**. Its upper side uses
   the connect-the-dots measure too, which is a Markov kernel whose mean error is at most
   c(h) ≈ h²/8. By Hoeffding's inequality, the coupled steps' losses exceed the truth by at most
   s = n_A c(h) + h √(n_A ln(1/η)/2) except with probability η = 1e-14 plus the Q-mass that left
   the coupled curves' grids; the upper curve is that composition with losses shifted down by s
   and δ lowered by that probability. Coupled mode uses the connect-the-dots measure of each
   curve's own upper curve (they differ for bracketed inputs). Conditioning on the coupled
   steps shows that the two modes mix within one composition.
4. **FFT, tilted, with a proved round-off bound.** Q-measures of the discretized losses are
   convolved by FFT on a power-of-two grid, a curve repeated n times as a pointwise n-th power
   in the Fourier domain, so the cost barely depends on n. The window of the composed loss comes
   from its mean and variance and is certified by Chernoff bounds computed from the components'
   moment generating functions (tail mass ≤ 1e-36 on each side; each component's grid leaves
   out ≤ 1e-42 of Q-mass). Mass that can wrap around the circular convolution goes to the +∞
   atom on the lower side and is subtracted from δ on the upper side. Round-off is bounded, not
   modelled: a radix-2 FFT is a product of log₂N butterfly stages, so each computed coefficient
   is within ((1 + η)^{log₂N} − 1)‖x‖₁ of the exact one (Higham, "Accuracy and Stability of
   Numerical Algorithms", 2002, §24.1), which the powers, the products and the inverse transform
   propagate into a bound per grid point (see ``_tilted_power``); the lower side adds it to every
   mass, the upper side subtracts it. To keep δ(ε) accurate in relative terms far into the
   tail, the composition is also computed for exponentially tilted measures w(ℓ) e^{θℓ} (θ at
   the Chernoff-optimal points where the upper tail is 1e-12 and 1e-28), whose FFT has its
   round-off relative to the tail, and every grid point takes the result with the smallest
   bound (the tilted results also carry a Chernoff bound on the mass that wraps around from
   above the window, which the untilting amplifies). Where the chosen bounds still exceed 1e-4
   of the mass above a point (heavy tails: the steep Chernoff tilts of sparse subsampling wrap
   around badly below their centres), up to three more tilts are added, each between the tilt
   in use at the worst such point and its neighbour: gentler where the error there is mostly
   wrap-around, steeper where it is mostly round-off. Where points stay above 1e-4 and the
   steepest tilt lost them to its wrap-around alone, the FFT is run again on a window padded
   to twice its length, then four times (if that fits the memory cap and the error would move
   ε by more than ``tol`` somewhere; there up to three more tilts are tried as well). Which
   tilts are tried only chooses which
   proved bound applies at each point. The bound assumes scipy's FFT obeys the radix-2
   componentwise error bound.

   **Split of rare large losses.** A sparse long run (DP-SGD with p = 1e-5, T = 10⁶) reaches
   large ε through one step's rare large loss, whose density in ℓ is log-convex over a range:
   no tilt centres the n-fold composition there, and the round-off of every tilt, relative to
   the whole mass, was 25 % of δ at ε = 1 (bracket at δ = 1e-10: [1.023, 1.122]). Where points
   stay above 1e-4 after the tilts, a single repeated curve's measure ν (each side's) is split
   at a grid loss into a bulk ν_b and a rare part ν_r whose mass over all n steps is at most
   1e-6 (:data:`SPLIT_RATE`), and the composition is computed as the binomial sum
   ``ν^{*n} = Σ_{k ≤ K} C(n, k) ν_b^{*(n−k)} * ν_r^{*k}`` (convolution is bilinear and
   commutative: an identity for any split into nonnegative measures). Each term is its own
   tilted FFT, at its own Chernoff tilts and with its own wrap-around bound, so its round-off
   is relative to its own mass; every point takes the split's value where its bound is
   smaller. The terms k > K carry at most R = (A + B)ⁿ C(n, K+1) (B/(A + B))^{K+1} (the union
   bound on P[Bin(n, B/(A+B)) > K]), K the least with R ≤ 1e-3 × the grid's smallest tail: the
   pessimistic side puts R on its +∞ atom, the optimistic side drops them. The same bracket
   is then [1.077292, 1.077328] (prv_accountant at eps_error 0.002: [1.0750, 1.0794]). The
   term with one rare step is split again by that step's loss (pieces of 1e-4 of the mass
   above): the rare density can be log-convex over a long range (σ = 0.8). The deep grid
   splits wherever points stay above 1e-4; the bulk grid only where its round-off would move
   ε by more than ``tol``, at once if that happens above δ = :data:`LAZY_SPLIT_DELTA`, else for
   the first query below the reach of the grid without it (``_Resplit``).
5. **Choosing h.** The bracket width in ε is predicted before any FFT as R·Σ n_i D_i, where
   D_i is the difference of the mean losses of the two discretized measures of curve i and
   R = ε/σ² + 1/2. The R factor is the Gaussian-limit ratio of the loss density to |dδ/dε|, with
   σ² the composed loss variance. The relative error of δ is predicted as R² times the same sum.
   The drift below a curve's loss support (a difference of P-masses) reaches large ε only
   through the upper tail of the rest of the sum and is weighted by σ/(σ + 3). h starts from the
   smooth-case estimate (D_i ≈ h²/8) and is refined or coarsened until the width at
   ε_ref = mean + 3σ is at most 0.8·tol·ε_ref and, on the deep grid (step 6), the δ error at
   δ ≈ 1e-30 is at most 0.6·10·tol. Measured, the prediction is within a few percent of the
   achieved width on the Gaussian, Laplace and DP-SGD workloads. It chooses h only; the bracket
   is certified for any h. A window that does not fit MAX_GRID points is re-planned coarser (the
   better of a re-plan at a larger tol, which keeps atoms aligned, and a coarser fixed step).
6. **Two grids.** By default the grid is built for the bulk (``FAST``): the step meets the width
   target at ε_ref only, the window reaches a Chernoff tail of 1e-16, and the FFT is tilted at
   the 1e-12 point of the tail. The tilted run is made only when a query needs it: the bulk
   grid is first computed untilted (``FAST0``), and answers δ down to where its proved
   round-off would move ε by 5 % of ``tol`` (``info["min_delta"]``, ``_untilted_reach``); a
   query below builds the tilted bulk grid (windows over 2¹⁷ points are tilted at once). The
   bulk grid answers every query at δ ≥ 1e-12 (:data:`fdp.numeric.DEEP_DELTA`); its ε
   bracket aims at ``tol`` from ε_ref down to that δ (and is wider, relative to ε, well below
   ε_ref). The planner's width model holds within a
   few percent for smooth compositions (Gaussian, Laplace, DP-SGD); with atoms off the grid,
   nested compositions or flat pieces of δ(ε) the bracket can be wider at some δ, and a bracket
   query (``epsilon_bracket``) that finds it wider than ``tol`` there warns. The first deeper
   query, or any use of the curves themselves (``lower``/``upper``, values, plots,
   operations), replaces it once by the ``DEEP`` grid (the δ target above, window 1e-36, tilts
   at 1e-12 and 1e-28). MNIST DP-SGD: 0.07 s instead of 0.46 s for ε(1e-5); a query at
   δ = 1e-20 then adds the deep build of the add direction. A bulk
   grid over the memory cap is re-planned coarser as a bulk grid. On the bulk grid the steps
   together leave up to 1e-18 of Q-mass outside their grids (``_Mode.comp_tail``; each step
   1e-18/n, at least TAIL): the lower side moves it to the +∞ atom or the grid's bottom, the
   upper side drops it, so δ moves by at most 1e-18. It lets a sparse long run's steps end
   their grids where their mass ends: dpsgd(1, 1e-5, 10⁷) is 0.07 % wide at δ = 1e-5 and 1e-10
   instead of 1.0 % and 4.3 % (capped).
7. **Two stages for long dense powers** (:func:`_staged`). One stage needs n·D(h) within the
   budget, D(h) ≈ h²/8 a step, over the window of the n-fold sum: its grid grows like √n
   (DP-SGD σ = 2, p = 1e-3, T = 10⁶: 2¹⁹ points). Where one curve is repeated n ≥ 2¹⁶ times
   and that window needs ≥ 2¹⁸ points, the bulk grid composes f^{⊗n} as
   (f^{⊗m})^{⊗q} ⊗ f^{⊗r}, m = ⌊√n⌋, n = qm + r: the engine's bracket of f^{⊗m} (half of
   ``tol``, tilted, each copy leaving out 1/q of the usual tail mass) is composed q times
   like any bracketed curve, and is certified as any composition of brackets is (a lower
   curve's pessimistic measure has a profile above the truth's, and the profile of a
   composition is monotone in each measure). Both grids grow like n^{1/4}: 2¹⁵ and 2¹⁴
   points for the run above, 0.23 → 0.04 s for ε(1e-5), its bracket 0.057 % → 0.071 % wide
   (the outer stage is planned to tol, and not aligned to the inner grid's masses: aligning
   held its step at fractions of their span). A sparse block (DP-SGD with p√n ≲ 1: √n steps
   are mostly one narrow pile with a far tail) would need more points, not fewer: where the
   block's window needs more than an eighth of the one-stage window, or the outer plan misses
   ``tol``, the composition stays in one stage. The deep grid is always one stage.

Accuracy of δ(ε) (measured; tests/reference/test_ref_tail.py checks it against closed forms and
quadrature): both sides within 1 % of the true δ down to δ = 1e-30 for Gaussian, Laplace and
DP-SGD compositions (on the deep grid, which such queries build; the MNIST schedule's ε bracket
at 1e-30 is 2e-5 wide, relative). A δ query whose bracket is wider than 10·tol relative (the
bulk grid is planned for ε: where δ falls steeply in ε it can be several % wide) rebuilds its
grid — the bulk grid at a smaller tol, then the deep grid, then a small deep grid at a smaller
tol (:meth:`fdp.numeric.Bracketed._refocus`) — and ``delta_bracket`` warns where no grid that
fits meets it (next to the largest loss, or with atoms off the grid). Below the window
(Chernoff tail 1e-36) the conservative side is the closed-form tail bound and the bracket
widens, but stays finite down to δ = 1e-300.

Memory is bounded: the composed window is capped at 2²¹ points and each component's grid at
2²⁰, so one composition stays under about 0.6 GB (measured on ``dpsgd(0.5, 1e-4, 1000)``, 1.6 GB
before); past the caps the step grows, ``info["grid_capped"]`` says so, and an
:class:`AccuracyWarning` gives the predicted width when it exceeds ``tol``. When no step fits
(a coarser step drifts the window wider as fast as it grows), the result is the trivial bracket
[0, Id] with the closed-form tail bound as its conservative side, ``info["grid_failed"]``, and
a warning that says so. Losses beyond the
float64 range of P-masses (ℓ ≳ 700) keep their exact δ: the curves carry their losses, and a
bin whose P- (or Q-) mass is below 2⁻¹⁰⁰⁰ takes its loss from the curve's bounds on it
(:class:`~fdp.tradeoff.LossBins`), not from log(q/p) of a subnormal mass.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
import warnings
import weakref
from typing import Any, NamedTuple

import numpy as np
from scipy import fft as sfft
from scipy.optimize import isotonic_regression
from scipy.signal import lfilter

from ._numerics import TINY, UNIT_ROUNDOFF, add_up, merged_loss_err, norm_cdf
from .numeric import DEEP_DELTA, Bracketed
from .tradeoff import TINY_P, LossBins, PiecewiseLinear, TradeOff

__all__ = ["compose_numeric", "AccuracyWarning"]


class AccuracyWarning(UserWarning):
    """The requested accuracy (``tol``) could not be met within the memory bounds; the result is
    still a certified bracket, only wider."""

#: largest FFT grid; past it the grid step grows (and the info dict says so)
MAX_GRID = 1 << 21
#: largest grid over one component's loss support (a user's grid step may ask for 4× this).
#: With MAX_GRID these are the memory knobs: peak memory is about 0.6 GB at the defaults and
#: 1.1 GB at twice both (sparse DP-SGD, σ = 0.5, p = 1e-5, T = 10⁵, whose bracket at δ = 1e-5
#: then goes from 0.25 % to 0.055 % wide): where a capped grid warns and the memory is there,
#: set ``fdp.pld.MAX_GRID = 1 << 22`` and ``fdp.pld.MAX_COMPONENT = 1 << 21``
MAX_COMPONENT = 1 << 20
#: most breakpoints kept in a numeric curve (atoms are merged conservatively beyond that)
MAX_BREAKPOINTS = 400_000
#: Q-mass of each component's loss outside its grid (on either side)
TAIL = 1e-42
#: Chernoff bound required on each side of the composed window
WINDOW_TAIL = 1e-36
#: largest loss kept on the optimistic side (e^ℓ must stay finite)
MAX_OPT_LOSS = 700.0
#: smallest and largest grid step the planner chooses
H_MIN, H_MAX = 1e-7, 0.1
#: failure probability of the coupling bound for curves composed in coupled mode
ETA = 1e-14


class _Mode(NamedTuple):
    """What a grid is built for: the bulk (``FAST``, every δ ≥ :data:`fdp.numeric.DEEP_DELTA`)
    or the far tail (``DEEP``, δ(ε) within 1 % down to δ = 1e-30). Both are certified; they differ
    only in where the grid spends its points."""

    #: the planner also bounds the relative δ error at mean + k_sd·sd (None: the bulk width only)
    k_sd: float | None
    #: Chernoff bound required on each side of the composed window
    window_tail: float
    #: Chernoff levels of the composed upper tail at which the FFT is tilted
    tilt_levels: tuple[float, ...]
    #: gentler tilts and FFT padding are added only where the mass above exceeds this
    tail_floor: float
    #: Q-mass all steps together may leave outside their grids (None: TAIL per step)
    trunc_budget: float | None

    def comp_tail(self, steps: int) -> float:
        """Q-mass each of ``steps`` steps may leave outside its grid on either side.

        The lower side sends what lies above the grid to the +∞ atom (and what lies below to
        the grid's bottom); the upper side drops both. So the composed δ moves by at most
        ``steps`` times this, whatever the step's shape: on the bulk grid 1e-18 in all, a 1e-6
        share of the smallest δ it answers, which lets a long run's steps cut their far tails
        (p = 1e-5, T = 10⁷: each step's grid ends at loss 0.16 instead of 1.9)."""
        if self.trunc_budget is None:
            return TAIL
        return max(TAIL, self.trunc_budget / max(steps, 1))


FAST = _Mode(k_sd=None, window_tail=1e-16, tilt_levels=(1e-12,), tail_floor=1e-14,
             trunc_budget=1e-18)
#: the bulk grid without tilts: built first; its untilted round-off decides down to which δ it
#: answers (``info["min_delta"]``), and a query below builds FAST (see compose_numeric)
FAST0 = FAST._replace(tilt_levels=())
#: windows longer than this are tilted at once: their untilted round-off reaches δ ~ 1e-4
#: (DP-SGD σ = 2, p = 1e-3, T = 10⁶: 5e5 points), far above the δ users ask
UNTILTED_MAX = 1 << 17
DEEP = _Mode(k_sd=11.3, window_tail=WINDOW_TAIL, tilt_levels=(1e-12, 1e-28), tail_floor=1e-40,
             trunc_budget=None)


# ------------------------------------------------------------------------------ discretizations
def _bin_offsets(
    p: np.ndarray, q: np.ndarray, left: np.ndarray, h: float | np.ndarray, rnd: int = 0,
    loss: tuple[np.ndarray | None, np.ndarray | None] = (None, None),
    err: list[float] | None = None,
) -> np.ndarray:
    """u = log(q/p) − left, clipped to [0, h]: each bin's loss above its left grid point.

    Bins without P-mass (P underflowed next to Q-mass) whose loss is not given get u = h for
    ``rnd`` = +1 and u = 0 otherwise: their loss is only known to lie in the bin.
    ``rnd`` = +1 (−1): u rounded up (down) by a bound on its rounding,
    32u_r (|log q| + |log p| + |left|) + 256u_r: log q − log p − left cancels, and on a fine
    grid its absolute error is a visible share of h (an atom on a grid point at h = 1e-7 had
    2.2e-9 of its Q-mass split a whole step below it, and 130-fold products of the pair read ε
    26 ulps below the truth). The masses' own rounding enters too: the two logarithms and
    subtractions are within 4u of their sizes, and a normal bin's mass, a difference of two
    tails only where it keeps a sixth of the larger (:func:`fdp.families.normal_bin_masses`),
    carries scipy's Φ error (≈ (0.6 z² + 2) ulps: Φ(−30) is 512 ulps off, from rounding
    its argument z/√2) times at most 8.5 (|z| ≥ 4) or 40 (|z| < 4, where the error is a few
    ulps); with |log p| ≈ z²/2 the bound covers it (measured against mpmath on 1,500 random
    Gaussian grids: 8u and no constant left u up to 5e-15 short).

    ``loss`` = (``loss_lo``, ``loss_hi``) of :class:`~fdp.tradeoff.LossBins`: where given (not
    NaN) the bin's loss bounds replace log(q/p), whose P-mass is too small to carry it: the
    upper bound for ``rnd`` = +1, the lower one otherwise (rnd = 0 is the optimistic sides'
    reading, and a lower loss only lowers δ), each less or more by the subtraction's ulps.

    ``err`` (a list): appends a bound on that rounding allowance over all bins (the largest
    |log q|, |log p| and |left| in it), so on how far any u may exceed its exact offset. It is
    absolute, not relative to u: near loss 0 (q ≈ p) it is most of u.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        lq, lp = np.log(q), np.log(p)
        u = lq - lp - left
        if rnd:
            u = u + rnd * UNIT_ROUNDOFF * (32.0 * (np.abs(lq) + np.abs(lp) + np.abs(left))
                                           + 256.0)
    # (NaN → 0, ±∞ → h or 0 by the clip: np.nan_to_num's result, at a third of its cost)
    u = np.clip(u, 0.0, h)
    u[np.isnan(u)] = 0.0
    # a bin whose P-mass underflowed to 0 next to Q-mass has no loss of its own; without a
    # given bound only that the loss lies in the bin is known: its top for the pessimistic
    # reading (rnd = +1), its bottom for the others (a lower loss only lowers δ; the coupled
    # kernel's L̃ − L stays in [−u, h − u] with mean ≤ c_max, as its Hoeffding shift needs).
    # The top for every reading put G_1000's Q-mass, whose P-masses underflow, at the bin tops
    # in the coupled kernel: compose(G_1000, EpsDelta(0.01), repeat=300)'s certified lower end
    # of ε(1e-3) read 7.1 above the truth (4.7e-8 relative)
    u = np.where(p > 0, u, h if rnd > 0 else 0.0)
    if err is not None:  # (log q, log p ≤ 0 but for rounding: both ends of each)
        big = [float(np.max(np.abs([np.min(x, where=y > 0, initial=0.0),
                                    np.max(x, where=y > 0, initial=0.0)])))
               for x, y in ((lq, q), (lp, p))]
        err.append(UNIT_ROUNDOFF * (32.0 * (big[0] + big[1] + float(np.max(np.abs(left))))
                                    + 256.0))
    lam = loss[1] if rnd > 0 else loss[0]
    if lam is not None:
        lam = np.broadcast_to(lam, u.shape)
        given = np.isfinite(lam)
        if given.any():
            sgn = 1.0 if rnd > 0 else -1.0
            with np.errstate(invalid="ignore"):
                v = lam - left
                v = v + sgn * 2.0 * UNIT_ROUNDOFF * (np.abs(lam) + np.abs(left))
            u = np.where(given, np.clip(np.nan_to_num(v, nan=0.0), 0.0, h), u)
    return u


def _ctd(lb: LossBins, edges: np.ndarray, up: bool = True) -> tuple[np.ndarray, float]:
    """Connect-the-dots Q-masses on the grid points (pessimistic), and the +∞ mass.

    A bin (e_j, e_{j+1}] with masses (p, q) and loss λ = log(q/p) = e_j + u goes to e_j and e_{j+1}
    preserving both masses: the share of Q at e_{j+1} is (1 − e^{−u})/(1 − e^{−h}). ``up``
    (the pessimistic measure): u is rounded up (:func:`_bin_offsets`), which moves Q-mass to the
    higher loss and so only raises δ; the coupled mode's kernel (``up=False``) keeps it exact.
    """
    w = _split(lb.p, lb.q, edges, 1 if up else 0, (lb.loss_lo, lb.loss_hi))
    w[0] += lb.q_below  # Q-mass below the grid rounds up to its bottom point
    # above the grid: +∞ (pessimistic; the sum rounded up)
    return np.maximum(w, 0.0), add_up(float(lb.q_inf), float(lb.q_above))


def _split(p: np.ndarray, q: np.ndarray, edges: np.ndarray, rnd: int = 0,
           loss: tuple[np.ndarray | None, np.ndarray | None] = (None, None)) -> np.ndarray:
    """The connect-the-dots split of bin masses onto the M + 1 grid points (Q-masses); ``rnd``
    rounds each bin's offset up (+1: more Q-mass at the higher loss, δ up) or down (−1);
    ``loss``: the bins' given loss bounds (:func:`_bin_offsets`)."""
    h = float(edges[1] - edges[0])
    u = _bin_offsets(p, q, edges[:-1], h, rnd, loss)
    qb = q * (-np.expm1(-u) / -math.expm1(-h))
    w = np.zeros(edges.size)
    w[:-1] += q - qb
    w[1:] += qb
    return w


@functools.lru_cache(maxsize=256)
def _c_max(h: float) -> float:
    """max over u ∈ [0, h] of E_Q[L̃ − L | L] for the connect-the-dots kernel (≈ h²/8);
    memoized (the planner asks it per step it tries, every composition)."""
    u = np.linspace(0.0, h, 2001)
    c = h * (-np.expm1(-u)) / -math.expm1(-h) - u
    return float(c.max()) * 1.01 + 1e-300


def _rowsum(x: np.ndarray) -> np.ndarray:
    """x.sum(axis=1) for a few columns, column by column in the same order (numpy's reduction
    over a short inner axis took 0.3 ms on 16k × 2, forty times the column additions)."""
    out = x[:, 0].copy()
    for j in range(1, x.shape[1]):
        out += x[:, j]
    return out


def _sub_count(atoms: tuple[np.ndarray, np.ndarray]) -> int:
    """Sub-bins per grid bin for a curve with these atoms (:func:`_atoms`): 4 (slivers at both
    ends and two halves) where point masses may sit on grid points, 2 (the halves) where the
    loss has no atoms (Q-mass < 1e-9 at them: DP-SGD steps).

    The optimistic side's charges are valid for any partition of a bin (each sub-bin's mass is
    charged to one end, exact by linearity; see :func:`_optimistic`), and a sliver is charged
    to its nearer end like the half it joins, so without atoms the halves alone give the same
    charges up to the slivers' mass (a 2⁻¹⁹ share of a bin's) wherever a half is sent to its far
    end. Half the special-function work of a component (MNIST's final grid: 12 → 7.5 ms, 5.8 ms
    with the column row sums of :func:`_rowsum`)."""
    return 4 if float(atoms[1].sum()) >= 1e-9 else 2


def _sub_edges(edges: np.ndarray, n: int = 4) -> np.ndarray:
    """``n`` sub-bins per grid bin: 4 (slivers at both ends, two halves between them) or 2 (the
    two halves)."""
    if n == 2:
        sub = np.stack([edges[:-1], 0.5 * (edges[:-1] + edges[1:])], axis=1).ravel()
        return np.append(sub, edges[-1])
    h = float(edges[1] - edges[0])
    ulp = 64.0 * np.finfo(float).eps * float(np.max(np.abs(edges)))
    tau = min(h / 8.0, max(h * 2.0**-20, ulp))
    e0, e1 = edges[:-1], edges[1:]
    sub = np.stack([e0, e0 + tau, 0.5 * (e0 + e1), e1 - tau], axis=1).ravel()
    return np.append(sub, edges[-1])


def _sub_bins(sub: LossBins, subs: int, edges: np.ndarray) -> tuple[
    LossBins, np.ndarray, np.ndarray, np.ndarray | None
]:
    """The grid bins of sub-bin masses ``sub`` (``subs`` per bin, :func:`_sub_edges`), and the
    sub-bins' P- and Q-masses and lower loss bounds as (M, subs) arrays.

    A bin whose P-mass is below :data:`~fdp.tradeoff.TINY_P` gets loss bounds from its sub-bins'
    (see :class:`~fdp.tradeoff.LossBins`): λ = e_j + log q − log Σ_s q_s e^{−(λ_s − e_j)},
    widened by (subs + 4) ulps and 4 ulps of |e_j| + |log q| + |log Σ| + h."""
    ps, qs = sub.p.reshape(-1, subs), sub.q.reshape(-1, subs)
    p, q = _rowsum(ps), _rowsum(qs)
    lo = hi = lo_s = None
    if sub.loss_lo is not None and sub.loss_hi is not None:
        lo_s = sub.loss_lo.reshape(-1, subs)
        tiny = (p < TINY_P) & (q > 0.0)
        left = edges[:-1]
        lq = np.log(np.where(tiny, q, 1.0))
        out = []
        for sgn, lam_s in ((-1.0, lo_s), (1.0, sub.loss_hi.reshape(-1, subs))):
            with np.errstate(invalid="ignore", over="ignore", under="ignore"):
                t = np.where(qs > 0.0, qs * np.exp(-(lam_s - left[:, None])), 0.0)
                s = _rowsum(t)
                ok = tiny & np.isfinite(s) & (s > 0.0)
                ls = np.log(np.where(ok, s, 1.0))
            pad = merged_loss_err(subs, left, lq, ls, np.diff(edges))
            # (a bin with one sub-bin of Q-mass has that sub-bin's bounds)
            lone = _rowsum(np.where(qs > 0.0, np.nan_to_num(lam_s), 0.0))
            n_q = _rowsum((qs > 0.0).astype(float))
            n_missing = _rowsum(((qs > 0.0) & ~np.isfinite(lam_s)).astype(float))
            alone = (n_q == 1.0) & (n_missing == 0.0)
            out.append(np.where(tiny & alone, lone, np.where(ok, left + lq - ls + sgn * pad,
                                                              np.nan)))
        lo, hi = out
    lb = LossBins(p=p, q=q, p_below=sub.p_below, q_below=sub.q_below, p_above=sub.p_above,
                  q_above=sub.q_above, q_inf=sub.q_inf, loss_lo=lo, loss_hi=hi)
    return lb, ps, qs, lo_s


def _optimistic(
    lb: LossBins, ps: np.ndarray, qs: np.ndarray, edges: np.ndarray,
    lo_s: np.ndarray | None = None,
) -> tuple[np.ndarray, float, np.ndarray, np.ndarray, float]:
    """A nonnegative grid measure μ̃ with δ_μ̃(ε) ≤ δ(ε − d) everywhere (step 2 of the module
    docstring; d below).

    ``lb`` holds the grid bins, ``ps``, ``qs`` (shape (M, 4) or (M, 2), :func:`_sub_edges`) their
    sub-bin masses, ``lo_s`` their lower loss bounds where given (:func:`_sub_bins`).
    Rounding: the split (w_in) and the charges read each sub-bin's offset as computed, the same
    value for both, so that they are exact (to relative rounding, left to the 1e-9 relative
    margin on the charges below) for the measure μ' with each sub-bin's Q-mass at its computed
    loss. That loss exceeds the sub-bin's exact one, log(q_s/p_s), by at most d, the offsets'
    rounding allowance (:func:`_bin_offsets`; absolute, 32u(|log q| + |log p| + |left|) + 256u,
    so that near loss 0 it is most of the offset), and δ of a sub-bin's mass is at least that
    of its Q-mass at log(q_s/p_s) (Jensen): δ_μ'(ε) ≤ δ(ε − d), and the composition reads its
    optimistic losses lower by Σ n_i d_i (``_Component.loss_err``, ``res["loss_err"]``). (The
    split read from the whole bin rounded differently from the charges: a Poisson step of rate
    1e-12, losses ≤ 6.5e-12 on a grid step of 1e-7, had v 1.1e-18 above δ at the point below
    its top loss, a Q-mass of 1.1e-11 one step up, and compose(·, repeat=3)'s certified lower
    end of ε(1e-300) read 3e-7 for the exact 1.96e-11.) Each was tried rounded the safe way,
    and each cost more than it bought: a charge rounded up gives an atom on a grid point (true
    charge 0) a charge of its rounding allowance, which at an end of the support (no room) is
    clamped into slack whose rounds cost Laplace(0.1)^1000 10 % (A rounded up) to 50 % (B
    rounded down) more time; w_in rounded down (alone) leaves the interpolant a rounding below
    δ at grid points where the convex minorant needs it exact, and a Poisson step's
    (p = 0.0043, h = 0.105) optimistic δ(−0.10) fell from the exact 0.098 to 0.033. Returns the
    Q-masses at the grid points, the +∞ atom, and the δ-slack as charges (losses ℓ_j, amounts
    s_j ≥ 0, at rounding level in practice): clipping the measure where rounding left it negative
    may have raised δ_μ̃, but by at most Σ_j s_j 1[ε < ℓ_j] (raising a mass at ℓ by m raises δ
    by m (1 − e^{ε − ℓ})₊; ℓ_j = +∞ for charges that hold at every ε), and d.

    On bin [x_j, x_{j+1}] the gap G = chord − δ is concave and vanishes at both ends, and it is
    a sum over the P-mass in the bin. The part from mass at y lies below A_y (x_{j+1} − x)/Δx and
    below B_y (x − x_j)/Δx, with A_y = y − x_j and B_y = x_{j+1} − y. Each sub-bin is charged to
    the nearer end, with Σ p_s(ȳ_s − x_j) or Σ p_s(x_{j+1} − ȳ_s), exact by linearity. That
    gives (L_j, R_j), and c_k = max(R_{k−1}, L_k) keeps the interpolant of v_k = δ(x_k) − c_k
    below δ. A bin whose R_j exceeds the room δ(x_{j+1}) − q_inf is charged wholly to its left
    end, so v never drops below δ's floor q_inf. Q-mass below the grid is dropped.
    """
    h = float(edges[1] - edges[0])
    halves = slice(1, 3) if ps.shape[1] == 4 else slice(0, 2)  # (the columns of the halves)
    p, q = lb.p.copy(), lb.q.copy()
    # points 0..K get the interpolant; Q-mass above MAX_OPT_LOSS (where P-masses underflow)
    # goes to its bin's left end, below
    k_top = int(np.searchsorted(edges, MAX_OPT_LOSS, side="right")) - 1
    if k_top < 1 or h > 700.0:
        # all above MAX_OPT_LOSS, or bins wider than e^ℓ's float range (μ ≳ 10⁴; e^h would
        # overflow below): each bin's Q-mass at its left end, which lowers δ at every ε
        out = np.zeros(edges.size)
        np.add.at(out, _high_ends(lb, edges, 0), lb.q)
        out[-1] += float(lb.q_above)
        return out, float(lb.q_inf), np.zeros(0), np.zeros(0), 0.0
    nb = k_top  # bins 0..K−1
    p[nb:] = 0.0
    q[nb:] = 0.0
    # per sub-bin charges A_s = p_s(ȳ_s − x_j) = q_s(1 − e^{−u}), B_s = q_s(e^{h−u} − 1), and the
    # connect-the-dots split from the same offsets: a share (1 − e^{−u})/(1 − e^{−h}) of q_s at
    # x_{j+1} (see Rounding above)
    pss, qss = ps[:nb], qs[:nb]
    a_s, b_s = np.empty_like(qss), np.empty_like(qss)
    w_in = np.zeros(k_top + 1)
    d_loss = 0.0
    for i in range(0, nb, 1 << 16):  # (in row blocks: a grid at its cap has 2²² sub-bins)
        j = min(i + (1 << 16), nb)
        pj, qj = pss[i:j], qss[i:j]
        lj = None if lo_s is None else lo_s[i:j]
        e_s: list[float] = []
        u_s = _bin_offsets(pj, qj, edges[i:j, None], h, 0, (lj, None), e_s)
        d_loss = max(d_loss, e_s[0])
        up_s = -np.expm1(-u_s)
        f_s = np.minimum(up_s / -math.expm1(-h), 1.0)
        w_in[i:j] += _rowsum(qj * (1.0 - f_s))
        w_in[i + 1 : j + 1] += _rowsum(qj * f_s)
        has = pj > 0 if lj is None else (pj > 0) | np.isfinite(lj)
        a_s[i:j] = np.where(has, qj * up_s, qj)
        b_s[i:j] = np.where(has, qj * np.expm1(h - u_s), qj)
    # The Q-mass above x_K (bins K.., and above the grid) joins the interpolated measure as a
    # lump at x_K (a point on the grid: exact in the interpolant, and it gives the bins below
    # their room); it is moved up to its bins' left ends at the end. Moving Q-mass down lowers
    # (1 − e^{ε−ℓ})₊ at every ε, so the lumped measure's δ is below the true δ; the interpolant
    # is below the lumped δ, and moving the lump back up to points still at or below the true
    # losses keeps the sum below the true δ (δ is linear in the measure).
    # (Not where the grid reaches below a loss of −700: _convexify works with x = e^ℓ, which
    # underflows there; the mass above is then only placed at its left ends, valid as well —
    # the interpolant of the rest is below its own δ — but the last bin's charge is clamped.)
    hi_q = lb.q[nb:]
    lump = float(hi_q.sum()) + float(lb.q_above) if edges[0] >= -700.0 else 0.0
    w_in[k_top] += lump
    left_end = a_s <= b_s
    # The lowest bin with mass is charged wholly to its right end: below it δ is linear in x
    # (slope −P), and a charge at its left end would bend the interpolant concave there, so
    # that the convex minorant pools back to x = 0 and gives μ̃ excess P-mass c/x (which a
    # long composition multiplies: the excess lowers δ_μ̃ below the support, and the other
    # steps carry that to every ε). Charged to the right end the slope after x_j only drops to
    # the chord's minus R_j/Δx ≥ −P: no pooling across x_j.
    pb = _rowsum(pss)
    if (pb > 0).any():
        first = int(np.argmax(pb > 0))
        # (and every bin of the rising run of P-masses after it: there a right-end charge keeps
        # the slopes increasing, since R_k ≈ p_k Δx/2 and the chord slopes rise by ≈ p_k)
        fall = np.flatnonzero(np.diff(pb[first:]) < 0)
        last = first + (int(fall[0]) if fall.size else pb.size - first - 1)
        # (the two halves only: the slivers hold point masses on grid points, which the nearer
        # end charges nothing; charged to the far end an atom just above x_j would cost q·h)
        left_end[first : last + 1, halves] = False
    if lump > 0.0:  # the last bin wholly to its left end: at x_K the lump has no room (δ is
        left_end[nb - 1, :] = True  # flat beyond it), a right-end charge would hold at every ε
    lo_c = _rowsum(np.where(left_end, a_s, 0.0))
    hi_c = _rowsum(np.where(left_end, 0.0, b_s))
    # room_k = δ(x_k) − q_inf = (1 − e^{−h}) Σ_{m>k} S_m, S_m = Σ_{j≥m} w_j e^{−h(j−m)}
    s_disc = lfilter([1.0], [1.0, -math.exp(-h)], w_in[::-1])[::-1]
    room = -math.expm1(-h) * np.append(np.cumsum(s_disc[:0:-1])[::-1], 0.0)
    over = hi_c > room[1:]
    if over.any():  # charge the half-bins of these bins to their left end (slivers stay)
        mid = np.zeros(ps.shape[1], dtype=bool)
        mid[halves] = True
        move = over[:, None] & mid[None, :] & ~left_end
        lo_c = lo_c + _rowsum(np.where(move, a_s, 0.0))
        hi_c = hi_c - _rowsum(np.where(move, b_s, 0.0))
    c = np.zeros(k_top + 1)
    c[:-1] = lo_c
    c[1:] = np.maximum(c[1:], hi_c)
    c *= 1.0 + 1e-9
    del a_s, b_s, left_end  # (the sub-bin arrays: 4 per bin; memory at the grid cap)
    # what still exceeds the room (sliver-level) is clamped; the interpolant then exceeds δ by
    # at most clamp_k, and only on the segments next to x_k (ε < x_{k+1}; at the top point,
    # whose value the flat part beyond it repeats, at every ε)
    clamp = np.maximum(c - room, 0.0)
    ck = np.flatnonzero(clamp > 0)
    at_loss = [np.where(ck < k_top, edges[np.minimum(ck + 1, k_top)], np.inf)]
    at_mass = [clamp[ck]]
    c -= clamp
    # masses of the interpolant of v_k = δ(x_k) − c_k, from the differences of c (no x_k needed)
    a_l = 1.0 / -math.expm1(-h)  # x_k / (x_k − x_{k−1})
    a_r = 1.0 / math.expm1(h)  # x_k / (x_{k+1} − x_k)
    dc = np.diff(c)
    w = w_in.copy()
    w[1:] += dc * a_l
    w[:-1] -= dc * a_r
    w[0] += c[0]
    q_inf = float(lb.q_inf) - float(c[-1])
    if (w < 0).any() and edges[0] >= -700.0:  # (x = e^ℓ must not underflow in _convexify;
        # below, the negatives are clipped and charged where they sit, like rounding's)
        w, q_inf = _convexify(w, q_inf, w_in, c, edges[: k_top + 1], room, float(lb.q_inf))
    w[k_top] -= lump  # (the lump goes back up, below)
    neg = np.flatnonzero(w < 0)
    if neg.size:  # rounding-level negatives: raising a mass at ℓ by m raises δ by ≤ m 1[ε < ℓ]
        at_loss.append(edges[neg])
        at_mass.append(-w[neg])
        w = np.maximum(w, 0.0)
    if q_inf < 0:  # (the atom at +∞ raises δ at every ε)
        at_loss.append(np.array([np.inf]))
        at_mass.append(np.array([-q_inf]))
        q_inf = 0.0
    # δ_μ̃ ≤ δ forces the atom to at most the true one (x → ∞); any excess is round-off of the
    # regression, and lowering an atom only lowers δ_μ̃
    q_inf = min(q_inf, float(lb.q_inf))
    out = np.zeros(edges.size)
    out[: k_top + 1] = w
    # the lump at its bins' left ends (dropping that mass, as before, left huge-loss steps with
    # an empty optimistic measure: σ = 1e-3 DP-SGD had an optimistic ε of 0)
    if hi_q.size and hi_q.any():
        np.add.at(out, _high_ends(lb, edges, nb), hi_q)
    if lb.q_above > 0:
        out[-1] += float(lb.q_above)
    return out, q_inf, np.concatenate(at_loss), np.concatenate(at_mass), d_loss * (1.0 + 1e-9)


def _high_ends(lb: LossBins, edges: np.ndarray, j0: int) -> np.ndarray:
    """Where the optimistic measure puts the Q-mass of bins j0, j0 + 1, … above
    :data:`MAX_OPT_LOSS`: at each bin's left end (a lower loss lowers δ at every ε), or at its
    right end where the bin's given lower loss bound reaches it (an atom on a grid point:
    EpsDelta(744)'s ±744 lost a step a copy)."""
    pos = np.arange(j0, lb.q.size)
    if lb.loss_lo is not None:
        with np.errstate(invalid="ignore"):
            pos = pos + (lb.loss_lo[j0:] >= edges[j0 + 1 : lb.q.size + 1])
    return pos


def _convexify(
    w: np.ndarray, q_inf: float, w_in: np.ndarray, c: np.ndarray, pts: np.ndarray,
    room: np.ndarray, q_inf0: float,
) -> tuple[np.ndarray, float]:
    """Greatest convex minorant of the profile of the signed masses ``w``: the slopes on the
    segments [0, x_0], [x_0, x_1], …, are replaced by their weighted isotonic regression (Barlow,
    Bartholomew, Bremner & Brunk 1972: the slopes of the greatest convex minorant of a cumulative
    sum diagram), capped at 0 for the flat part beyond the grid. Masses change only where slopes
    were pooled, so the update is computed from the (local) slope changes.

    The new +∞ atom is the minorant's value at the end, read directly rather than as the sum of
    the slope changes (whose rounding, ~u·x_K·|slope|, could leave a negative atom that raises δ
    at every ε): the isotonic fit keeps the value at x_K, where the profile is
    v_K = q_inf; when a positive tail of slopes is capped at 0 from x_{j−1} on, it is the value
    v_{j−1} = q_∞ + room_{j−1} − c_{j−1} ≥ 0 there (v ≥ δ's floor by construction).
    """
    x = np.exp(pts)
    pw = w_in / x
    ptail = np.cumsum(pw[::-1])[::-1]  # P_{≥k}
    dx = np.empty(x.size)
    dx[0] = x[0]
    dx[1:] = np.diff(x)
    s = np.empty(x.size)
    s[0] = -ptail[0] - c[0] / x[0]
    s[1:] = -ptail[1:] - np.diff(c) / dx[1:]
    iso = isotonic_regression(s, weights=dx).x
    st = np.minimum(iso, 0.0)
    d = np.append(st - s, 0.0)
    capped = iso > 0.0
    if not capped.any():
        q_end = q_inf
    elif capped[0]:  # (flat from α = 0: no touching point to read)
        q_end = q_inf + float((dx * d[:-1]).sum())
    else:
        j = int(np.argmax(capped))
        q_end = q_inf0 + float(room[j - 1]) - float(c[j - 1])
    return w + x * (d[1:] - d[:-1]), q_end


# ------------------------------------------------------------------------------ support, atoms
_CACHE: dict[tuple[Any, ...], tuple[TradeOff, Any]] = {}


def _cached(kind: str, c: TradeOff, arg: float, compute: Any) -> Any:
    """Per-curve facts (support, moments) cached by value for hashable curves (G_μ, L_μ, …,
    which compare by parameters) and by identity otherwise."""
    try:
        key: tuple[Any, ...] = (kind, type(c), hash(c), arg)
        by_value = True
    except TypeError:
        key, by_value = (kind, id(c), arg), False
    hit = _CACHE.get(key)
    if hit is not None and (hit[0] == c if by_value else hit[0] is c):
        return hit[1]
    out = compute()
    if len(_CACHE) > 512:
        _CACHE.clear()
    _CACHE[key] = (c, out)
    return out


def _side_bins(c: TradeOff, edges: np.ndarray, side: str | None = None) -> LossBins:
    """c's loss bins on ``edges`` for the engine's ``side`` ("lower": the pessimistic measure,
    "upper": the optimistic one): a curve whose masses or losses carry errors gives each side
    its own (:meth:`~fdp.tradeoff.PiecewiseLinear._engine_bins`), others one for both."""
    get = getattr(c, "_engine_bins", None) if side is not None else None
    got = get(edges, side) if get is not None else None
    return c._loss_bins(edges) if got is None else got


def _sided(c: TradeOff) -> bool:
    """Whether c gives the engine's two sides different bins (see :func:`_side_bins`)."""
    twin = getattr(c, "_engine_twin", None)  # (a garbled curve's optimistic side: its twin's)
    if twin is not None and twin() is not None:
        return True
    own = getattr(c, "_engine_sided", None)  # (a curve mapping a base's: Mixture)
    if own is not None:
        return bool(own())
    get = getattr(c, "_engine_outcomes", None)
    return get is not None and get("lower") is not None


def _loss_bins_chunked(c: TradeOff, edges: np.ndarray, chunk: int = 1 << 18,
                       side: str | None = None) -> LossBins:
    """c's loss bins on ``edges`` (for ``side``: :func:`_side_bins`), computed a chunk of bins
    at a time (each bin's masses depend on its own end points only; below/above from the
    first/last chunk): a component at the grid cap has 2²² sub-bins, whose intermediates in one
    piece peaked at 0.4 GB."""
    if edges.size <= chunk + 1:
        return _side_bins(c, edges, side)
    parts = [_side_bins(c, edges[i: i + chunk + 1], side)
             for i in range(0, edges.size - 1, chunk)]

    def given(name: str) -> np.ndarray | None:
        if all(getattr(x, name) is None for x in parts):
            return None
        return np.concatenate([np.full(x.p.size, np.nan) if getattr(x, name) is None
                               else getattr(x, name) for x in parts])

    return LossBins(
        p=np.concatenate([x.p for x in parts]), q=np.concatenate([x.q for x in parts]),
        p_below=parts[0].p_below, q_below=parts[0].q_below,
        p_above=parts[-1].p_above, q_above=parts[-1].q_above, q_inf=parts[-1].q_inf,
        loss_lo=given("loss_lo"), loss_hi=given("loss_hi"),
    )


def _support(c: TradeOff, tail: float) -> tuple[float, float]:
    """A loss interval outside which c's Q-mass (finite losses) is below ``tail`` on each side."""
    out: tuple[float, float] = _cached("support", c, tail, lambda: _support_uncached(c, tail))
    return out


def _support_closed(c: TradeOff, tail: float) -> tuple[float, float] | None:
    """_support in closed form for the remove pair of a Poisson-subsampled Gaussian,
    (p G_μ + (1 − p) Id)⁻¹, else None. Its loss is −ℓ(x), ℓ(x) = log(1 − p + p e^{μx − μ²/2}),
    a decreasing function of one coordinate x ~ N(0, 1) under its Q, so the interval is the
    image of [−z, z] with Φ(−z) = tail/2 (half: mapping a loss edge back to x cancels in
    e^ℓ − (1 − p) where ℓ flattens). (Any interval serves: the grid charges whatever lies
    outside; the bisection over 3 × 4001 bins cost ~5 ms a query, for DP-SGD's screen and
    remove direction. The add pair keeps the bisection: its grid's ends decide where the
    optimistic side's rounding slack falls, and a closed form there moved dpsgd(1, 0.003, 3000)'s
    slack from 1e-51 to 4e-13, flooring its optimistic curve at δ = 1e-20.)"""
    from scipy.special import ndtri

    from .families import Gaussian
    from .operations import Mixture
    from .tradeoff import Inverse

    if not isinstance(c, Inverse):
        return None
    m = c.base
    if not (isinstance(m, Mixture) and isinstance(m.base, Gaussian) and 0.0 < m.p < 1.0
            and 0.0 < m.base.mu < 1e3 and 0.0 < tail < 0.25):
        return None
    p, mu = m.p, m.base.mu
    z = -float(ndtri(0.5 * tail))
    return -_subsampled_loss(p, mu, z), -_subsampled_loss(p, mu, -z)


def _subsampled_loss(p: float, mu: float, x: float) -> float:
    """The add pair's loss of a Poisson-subsampled Gaussian, p G_μ + (1 − p) Id, at the
    coordinate x: log(1 − p + p e^{μx − μ²/2}) (increasing in x)."""
    return float(np.logaddexp(math.log1p(-p), math.log(p) + mu * x - 0.5 * mu * mu))


def _support_uncached(c: TradeOff, tail: float) -> tuple[float, float]:
    closed = _support_closed(c, tail)
    if closed is not None:
        return closed
    if isinstance(c, PiecewiseLinear):  # (its outcomes, summed: 10 ms of bisection saved)
        return c._loss_support(tail)
    lo, hi = -2000.0, 2000.0
    probe = c._loss_bins(np.array([lo, hi]))
    if probe.q_below + float(probe.q.sum()) + probe.q_above <= 0.0:
        return 0.0, 0.0  # no finite-loss Q-mass (e.g. a perfectly distinguishable pair)
    # losses beyond ±2000 (e.g. G_μ with μ ≳ 60): widen until the tails are inside
    while probe.q_above > tail and hi < 1e15:
        hi *= 4.0
        probe = c._loss_bins(np.array([lo, hi]))
    while probe.q_below > tail and lo > -1e15:
        lo *= 4.0
        probe = c._loss_bins(np.array([lo, hi]))
    for npts in (4001, 4001, 4001):
        edges = np.linspace(lo, hi, npts)
        lb = c._loss_bins(edges)
        cq = lb.q_below + np.concatenate([[0.0], np.cumsum(lb.q)])  # Q[L ≤ e_k]
        above = lb.q_above + np.concatenate([np.cumsum(lb.q[::-1])[::-1], [0.0]])  # Q[e_k < L < ∞]
        i0 = int(np.searchsorted(cq, tail, side="right")) - 1  # last edge with Q[L ≤ e] ≤ tail
        i1 = int(np.argmax(above <= tail))  # first edge with Q[L > e] ≤ tail
        step = edges[1] - edges[0]
        new_lo = edges[max(i0, 0)] if i0 >= 0 else edges[0]
        new_hi = edges[i1]
        if new_hi <= new_lo:
            new_lo, new_hi = new_lo - step, new_lo + step
        if step < 1e-3 * max(new_hi - new_lo, 1e-6):
            return float(new_lo), float(new_hi)
        lo, hi = new_lo - step, new_hi + step
    return float(lo), float(hi)


def _moments(c: TradeOff) -> tuple[float, float]:
    """Mean and variance of c's privacy loss under Q (finite part), from 4001 bins."""
    out: tuple[float, float] = _cached("moments", c, TAIL, lambda: _moments_uncached(c))
    return out


def _moments_uncached(c: TradeOff) -> tuple[float, float]:
    known = c._loss_moments()
    if known is not None:
        return known
    # bins 1/4000 of the support at each of a few tail levels: a step of sparse subsampling
    # (p = 1e-5) has its Q-mass within 1e-4 of 0 but its 1e-42 tail at loss 1.9, and one
    # uniform grid over that put all the mass in two bins (variance off by 12x)
    edges = np.unique(np.concatenate([
        np.linspace(*_support(c, tail), 4001) for tail in (1e-4, 1e-12, TAIL)
    ]))
    lb = c._loss_bins(edges)
    # each bin's mass at its own loss log(q/p): exact for point masses (a midpoint would move
    # an atom by up to half a bin, enough to make E_Q[L] = KL(Q‖P) ≥ 0 come out negative)
    loss = edges[:-1] + _bin_offsets(lb.p, lb.q, edges[:-1], np.diff(edges), 0,
                                     (lb.loss_lo, lb.loss_hi))
    tot = lb.q.sum()
    if tot <= 0:
        return 0.0, 0.0
    m = float((lb.q * loss).sum() / tot)
    return m, float((lb.q * (loss - m) ** 2).sum() / tot)


def _atoms(c: TradeOff) -> tuple[np.ndarray, np.ndarray]:
    """c's finite point masses of the loss (as far as c knows them) and their Q-masses."""
    a = c._atoms()
    if a is None or a.size == 0:
        return np.zeros(0), np.zeros(0)
    a = np.unique(a[np.isfinite(a)])
    if a.size == 0:
        return a, np.zeros(0)
    gap = float(np.diff(a).min()) if a.size > 1 else 1.0
    scale = max(1.0, float(np.max(np.abs(a))))
    tau = max(min(0.25 * gap, 1e-9 * scale), 8.0 * np.finfo(float).eps * scale)
    if a.size > 1 and 2.0 * tau > gap:
        return a, np.ones(a.size)  # too close to separate: weigh equally
    lb = c._loss_bins(np.stack([a - tau, a + tau], axis=1).ravel())
    return a, lb.q[0::2] + 1e-300


def _misfit(a: np.ndarray, m: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each step in ``h``: the least Q-mass-weighted distance of the atoms ``a`` to a lattice
    o + hℤ over offsets o that put one of the 4 heaviest atoms on it,
    Σ_a m_a · h · min(t_a, 1 − t_a) with t_a = frac((a − o)/h), and that offset o ∈ [0, h).

    An atom at distance t·h from the grid costs the optimistic side about that much loss per step.
    """
    anchors = a[np.argsort(m)[::-1][:4]]
    r = (a[None, None, :] - anchors[None, :, None]) / h[:, None, None]
    cost = (m * np.abs(r - np.round(r))).sum(axis=2) * h[:, None]  # (steps, anchors)
    best = np.argmin(cost, axis=1)
    o = anchors[best]
    # (np.fmod is exact: o − h⌊o/h⌋ lost every digit at |o| ≫ h — Laplace(1e300)'s atoms gave an
    # offset of 1.5e284, and the grid's indices left int64)
    r = np.fmod(o, h)
    r = np.where(r < 0.0, r + h, r)
    return cost[np.arange(h.size), best], np.where(r >= h, 0.0, r)


def _align(h: float, atoms: list[tuple[np.ndarray, np.ndarray]], counts: list[int]) -> tuple[
    float, list[float]
]:
    """A step h' ∈ [h/2, h] and per-curve offsets that put the point masses of the loss on (or
    near) grid points. Candidates are h' = d/k for atom spacings d and integers k (a small
    simultaneous Diophantine search when several curves have atoms); the coarsest candidate
    whose weighted misfit Σ n_i misfit_i is within 10 % of the smooth drift n h'²/8 (or of the
    least misfit found) wins."""
    comps = [(a[np.argsort(m)[::-1][:64]], np.sort(m)[::-1][:64]) for a, m in atoms]
    if not any(a.size for a, _ in comps):
        return h, [0.0] * len(atoms)
    cands = [h]
    for a, _ in comps:
        if a.size > 1:
            srt = np.sort(a)
            for d in {float(np.diff(srt).min()), float(srt[-1] - srt[0])}:
                k0 = math.ceil(d / h - 1e-9)
                if d >= h / 2:
                    cands.extend(d / np.arange(k0, min(2 * k0, k0 + 400) + 1))
    hc = np.unique(np.asarray(cands))
    hc = hc[hc >= h / 2]
    mis = np.zeros(hc.size)
    for (a, m), k in zip(comps, counts, strict=True):
        if a.size:
            mis += k * _misfit(a, m, hc)[0]
    ok = mis <= np.maximum(mis.min() * 1.05, 0.1 * sum(counts) * hc**2 / 8)
    chosen = float(hc[ok].max())
    return chosen, _offsets(comps, chosen)


#: A curve without point masses whose Q-mass has its interquartile range within this many grid
#: steps gets its lattice offset searched (:func:`_piled_offset`).
PILE_STEPS = 8.0


def _local_drift(lower: TradeOff, upper: TradeOff, h: float, o: float, lo: float,
                 hi: float, subs: int = 4) -> float:
    """The two grid measures' mean-loss difference over the bins of o + hℤ between ``lo`` and
    ``hi`` alone (the mass outside is left out on both sides): the part of a component's
    ``drift`` that its lattice offset decides where the mass piles up (a few ms: ~300 bins)."""
    k0, k1 = math.floor((lo - o) / h) - 1, math.ceil((hi - o) / h) + 1
    edges = o + np.arange(k0, k1 + 1) * h
    sub = upper._loss_bins(_sub_edges(edges, subs))
    up, ps, qs, lo_s = _sub_bins(sub, subs, edges)
    up = dataclasses.replace(up, p_below=0.0, q_below=0.0, p_above=0.0, q_above=0.0, q_inf=0.0)
    if lower is upper:
        low = up
    else:
        low = dataclasses.replace(lower._loss_bins(edges), p_below=0.0, q_below=0.0,
                                  p_above=0.0, q_above=0.0, q_inf=0.0)
    w = _ctd(low, edges)[0]
    wo = _optimistic(up, ps, qs, edges, lo_s)[0]
    return float(((w - wo) * edges).sum())


def _piled_offset(lower: TradeOff, upper: TradeOff, h: float, offset: float,
                  atoms: tuple[np.ndarray, np.ndarray]) -> float:
    """The lattice offset for a curve whose Q-mass piles up within a few grid steps, else
    ``offset``.

    Sparse Poisson subsampling piles a step's Q-mass up next to the end of its loss support
    (dpsgd(0.5, 1e-5, ·): half of it within 1.4e-6 of log(1 − p), a fifth of a grid step). The
    optimistic measure's cost there depends on where the pile sits between two grid points: at
    h = 8.6e-6 its mean-loss error ranged from 2.3e-12 to 2.7e-10 per step with the offset (the
    pessimistic one's is 4.5e-12 at any offset), and a run of 10⁷ steps adds them up. The
    planner aligned the grid to log(1 − p) (an atom in the limit μ → ∞, where it is exact, and
    the mass there was 1.6e-4 within 1e-9 of it), which was the worst offset. So where the mass
    piles up (no atoms and an interquartile range within :data:`PILE_STEPS` steps, or an atom
    holding less than half the mass within a step of it and that mass at least 5 %), the
    aligned offset and 16 others are tried on the ~300 bins around the pile
    (:func:`_local_drift`, which ranks them as the whole grid does) and the least drift wins.
    Where the mass does not pile up and the offset was aligned to an atom of negligible mass
    (below 1e-9: the end of the support), the grid point is moved h/64 below it (a grid point
    exactly on it left the optimistic side's cost to the last bit of rounding).
    Any offset is certified; this only chooses the tightest."""
    if not math.isfinite(h) or h <= 0.0:
        return offset
    try:
        if atoms[1].size and float(atoms[1].sum()) >= 1e-9:
            a = float(atoms[0][int(np.argmax(atoms[1]))])
            near = upper._loss_bins(np.array([a - h, a + h]))
            m_h = float(near.q.sum())
            if not (m_h >= 0.05 and m_h > 2.0 * float(atoms[1].max())):
                return offset  # (a real point mass: aligned is best)
            lo, hi = a - 128.0 * h, a + 128.0 * h
        else:
            q25, q75 = _quartiles(upper)
            if not (q75 - q25 < PILE_STEPS * h):
                if atoms[1].size:
                    # (the offset put a grid point exactly on an atom of negligible mass at the
                    # end of the support, log(1 − p) for the add pair: which bin takes the mass
                    # there then hangs on the last bit of the losses' rounding, and on one
                    # machine the optimistic measure's clamp charged 4.9e-12 a step there:
                    # dpsgd(0.8, 1e-5, 10⁶) at 1e-10 read [0.107298, 0.107412], 0.106 %
                    # wide. A grid point h/64 below it: [0.107352, 0.107412], 0.056 %; the
                    # lower ends elsewhere move up in the 7th digit, the upper ends stay)
                    return (offset - h / 64.0) % h
                return offset
            lo, hi = q25 - 64.0 * h, q75 + 192.0 * h
    except (ValueError, FloatingPointError):  # pragma: no cover - a curve without bins
        return offset
    cands = [offset] + [h * j / 16.0 for j in range(16)]
    with np.errstate(all="ignore"):
        drifts = [_local_drift(lower, upper, h, o, lo, hi, _sub_count(atoms)) for o in cands]
    ok = [(d, i) for i, d in enumerate(drifts) if math.isfinite(d)]
    return cands[min(ok)[1]] if ok else offset


def _quartiles(c: TradeOff) -> tuple[float, float]:
    """An interval holding the middle half of c's Q-mass of the loss (to tell where it piles up;
    any answer is certified, this only chooses an offset). For the add pair of a
    Poisson-subsampled Gaussian, p G_μ + (1 − p) Id, in closed form: its loss
    ℓ(x) = log(1 − p + p e^{μx − μ²/2}) increases in one coordinate x with Q-distribution
    F(x) = (1 − p) Φ(x) + p Φ(x − μ), so the quartiles are ℓ(F⁻¹(1/4)) and ℓ(F⁻¹(3/4)) (F
    inverted by Brent's method; the bisection over 3 × 4001 bins took 0.7 ms of a 30 ms DP-SGD
    query). Otherwise :func:`_support` at tail 1/4."""
    from scipy.optimize import brentq

    from .families import Gaussian
    from .operations import Mixture

    if not (type(c) is Mixture and type(c.base) is Gaussian and 0.0 < c.p < 1.0
            and 0.0 < c.base.mu < 1e3):
        return _support(c, 0.25)
    p, mu = c.p, c.base.mu

    def cdf(x: float, q: float) -> float:
        return (1.0 - p) * float(norm_cdf(x)) + p * float(norm_cdf(x - mu)) - q

    lo, hi = -10.0, mu + 10.0  # (F(−10) < 1e-23, F(μ + 10) > 1 − 1e-23)
    return (_subsampled_loss(p, mu, brentq(cdf, lo, hi, args=(0.25,), xtol=1e-12)),
            _subsampled_loss(p, mu, brentq(cdf, lo, hi, args=(0.75,), xtol=1e-12)))


def _offsets(atoms: list[tuple[np.ndarray, np.ndarray]], h: float) -> list[float]:
    """Per-curve lattice offsets for step h: the least-misfit ones (0 for curves without atoms)."""
    one = np.array([h])
    return [float(_misfit(a, m, one)[1][0]) if a.size else 0.0 for a, m in atoms]


# ------------------------------------------------------------------------------ components
def _offset_charges(c: TradeOff) -> tuple[np.ndarray, np.ndarray] | None:
    """The offset of an engine's optimistic curve as slack charges (losses, amounts), or None
    for any other curve.

    Such a curve (a bracket's ``upper``, :func:`_curve_from_atoms`) holds masses whose δ exceeds
    the true one by at most off(ε): ``offset`` below e_0, v_k on [e_k, e_{k+1}), v_last from
    the last edge on (its ``offset_steps`` (e, v); a constant ``offset`` without them). Its
    breakpoints subtract the constant, so a grid reading them loses δ below it (δ = 0 beyond
    ε ≈ 7.7 for G_√0.74's, whose off(ε) falls from 8e-19 to 5e-51 at ε ≥ 6). Composed from its
    masses instead, with off(ε) = v_last + Σ_k (v_{k−1} − v_k)₊ 1[ε < e_k] (v_{−1} = offset;
    the positive parts only raise it) as the optimistic measure's slack charges — the
    charge at loss e_k holds for ε < e_k, the one at +∞ everywhere, as :func:`_optimistic`'s
    — the composition charges them by :func:`_slack_steps`' telescoping bound."""
    if not (isinstance(c, PiecewiseLinear) and c._lifted):
        return None
    if c._offset_steps is None:
        return np.array([np.inf]), np.array([c._offset])
    e, v = (np.asarray(x, dtype=float) for x in c._offset_steps)
    prev = np.concatenate([[c._offset], v[:-1]])
    return (np.append(e, np.inf), np.append(np.maximum(prev - v, 0.0), max(float(v[-1]), 0.0)))


class _Component:
    """One distinct curve of a composition on its lattice o + hℤ: both grid measures.

    Grid point k (an integer) has loss o + k h; the arrays start at k0. ``w``/``q_inf``: the
    pessimistic measure (from ``lower``), ``wo``/``qo_inf``/``slack``: the optimistic one (from
    ``upper``), ``wc``/``qc_inf``: the connect-the-dots measure of ``upper`` (coupled mode), whose
    kernel moves a loss by more than h only on the Q-mass ``trunc`` outside the grid.
    """

    def __init__(
        self, lower: TradeOff, upper: TradeOff, count: int, h: float, offset: float,
        tail: float = TAIL, subs: int | None = None,
    ) -> None:
        # an engine's optimistic curve (a bracket's ``upper``): its masses, with its offset as
        # slack charges of the optimistic measure (see _offset_charges)
        charges = _offset_charges(upper)
        if charges is not None:
            upper = upper._masses_curve  # type: ignore[attr-defined]
        self.charged = charges is not None
        lo, hi = _support(lower, tail)
        if upper is not lower:
            lo2, hi2 = _support(upper, tail)
            lo, hi = min(lo, lo2), max(hi, hi2)
        self.k0 = math.floor((lo - offset) / h) - 1
        k1 = math.ceil((hi - offset) / h) + 1
        self.offset = offset
        self.count = count
        self.unbounded = _unbounded(lower)
        self.coupled = False  # set by the planner: upper side from wc plus a coupling shift
        edges = offset + np.arange(self.k0, k1 + 1) * h
        self.loss = edges
        if subs is None:  # (sub-bins per bin: see _sub_count)
            subs = _sub_count(_atoms(upper))
        # (each side its own bins where the curve's masses carry errors: _side_bins)
        sub = _loss_bins_chunked(upper, _sub_edges(edges, subs), side="upper")
        lb_up, ps, qs, lo_s = _sub_bins(sub, subs, edges)
        lb_lo = lb_up if lower is upper and not _sided(lower) else _side_bins(
            lower, edges, "lower")
        self.w, self.q_inf = _ctd(lb_lo, edges)
        # (the coupled mode's kernel ``wc`` is built when first used; its +∞ atom is _ctd's)
        self._lb_up = lb_up
        self.qc_inf = float(lb_up.q_inf + lb_up.q_above)
        self.trunc = float(lb_up.q_below + lb_up.q_above)
        # (``loss_err``: how far the optimistic measure's losses may read above the true ones)
        self.wo, self.qo_inf, self.slack_loss, self.slack_mass, self.loss_err = _optimistic(
            lb_up, ps, qs, edges, lo_s
        )
        # (and how far upper's own bins read its losses above the true ones: _side_bins; in
        # coupled mode too, whose kernel reads the same bins)
        get = getattr(upper, "_engine_shift", None)
        self.loss_shift = float(get("upper")) if get is not None else 0.0
        self.loss_err += self.loss_shift
        # (the pessimistic side's: its composed losses read that much higher, _fft_compose)
        get = getattr(lower, "_engine_shift", None)
        self.lower_shift = float(get("lower")) if get is not None else 0.0
        if charges is not None:
            self.slack_loss = np.concatenate([self.slack_loss, charges[0]])
            self.slack_mass = np.concatenate([self.slack_mass, charges[1]])
        self.slack = float(self.slack_mass.sum())  # a bound at every ε
        tot = self.w.sum()
        self.mean = float((self.w * edges).sum() / tot) if tot > 0 else 0.0
        self.var = float((self.w * (edges - self.mean) ** 2).sum() / tot) if tot > 0 else 0.0
        # This curve's share of the bracket width: ∫ (δ_w − δ_wo) dε, the mean-loss difference
        # of the two measures, split into the part over the support (``drift``) and the part
        # below it (``drift_tail`` = e^{ℓ_0} × the P-mass difference), which reaches large ε of
        # the composition only through the upper tail of the other steps' sum.
        dw = self.w - self.wo
        total = float((dw * edges).sum())
        with np.errstate(under="ignore"):
            self.drift_tail = max(-float((dw * np.exp(edges[0] - edges)).sum()), 0.0)
        self.drift = total - self.drift_tail
        # Chernoff bounds use, per t, the largest of the MGFs of the measures the sides use (w,
        # and wo, or wc in coupled mode), which bounds the MGF of each (and the product of
        # these maxima bounds every composition of them). Not the MGF of max(w, wc, wo): that
        # measure's mass exceeds 1 by the drift, which n-fold composition amplifies to
        # e^{n·drift}. Masses are summed in
        # blocks of b ≤ 16 grid points placed at the block's top (t > 0) or bottom (t < 0): an
        # upper bound on the MGF, off by at most e^{|t| (b−1) h}, which the window absorbs: over n
        # steps that moves the composed loss by n (b−1) h, kept below a tenth of the steps'
        # standard deviation √n·sd (long runs get b = 1).
        b = max(1, min(16, self.w.size // 40_000))
        sd_n = math.sqrt(count * max(self.var, 0.0))
        b = max(1, min(b, 1 + int(0.1 * sd_n / (count * h))))
        if b == 1:  # (the grid losses themselves: two more grid-sized arrays on deep grids)
            self._blk = (edges, edges)
        else:
            start = edges[0] + h * b * np.arange(-(-self.w.size // b))
            self._blk = (start, start + h * (b - 1))
        self._b = b

    @property
    def wc(self) -> np.ndarray:
        """The connect-the-dots measure of ``upper`` with offsets not rounded up (the coupled
        mode's kernel, see _ctd), built on first use."""
        if "_wc" not in self.__dict__:
            self._wc = _ctd(self._lb_up, self.loss, up=False)[0]
        return self._wc

    @property
    def _logwb(self) -> list[np.ndarray]:
        """Logs of the block sums of the measures the sides use: w, and wc if the planner chose
        coupled mode for this curve, else wo (rebuilt if that choice changes)."""
        key = bool(self.coupled)
        hit = self.__dict__.get("_logwb_memo")
        if hit is not None and hit[0] == key:
            return hit[1]
        b = self._b
        out = []
        for nu in (self.w, self.wc if key else self.wo):
            pad = (-nu.size) % b
            wb = np.concatenate([np.maximum(nu, 0.0), np.zeros(pad)]).reshape(-1, b).sum(axis=1)
            with np.errstate(divide="ignore"):
                out.append(np.log(wb))
        self._logwb_memo = (key, out)
        return out

    def log_mgf(self, t: np.ndarray) -> np.ndarray:
        """Upper bounds on log ∫ e^{tℓ} dν(ℓ) for each measure ν the sides use (w, and wc in
        coupled mode, else wo) over the finite grid losses (the largest), for t all > 0 or < 0
        (memoized per t array and mode)."""
        key = (t.tobytes(), bool(self.coupled))
        memo = self.__dict__.setdefault("_mgf_memo", {})
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = self._log_mgf(t)
        return hit.copy()

    def _log_mgf(self, t: np.ndarray) -> np.ndarray:
        loss = self._blk[1] if t[0] > 0 else self._blk[0]
        # (the bound of log_mgf_bound is within ~1e-11 of the exact sum and, on the engine's
        # uniform grids, a matrix product: from ~1,000 points on it is faster, 3.4 → 0.37 ms
        # for 71 t on 7,850 points, a tenth of dpsgd(2, 1e-3, 10⁶)'s time at 8,192 before)
        if loss.size >= 1024:
            return self._log_mgf_pruned(t, loss)
        out = np.full(t.size, -np.inf)
        # (in chunks of t, so that the (t, grid) matrix stays near 2²¹ entries)
        step = max(1, (1 << 21) // max(loss.size, 1))
        for lw in self._logwb:
            for i in range(0, t.size, step):
                tt = t[i : i + step]
                x = tt[:, None] * loss[None, :]
                x += lw[None, :]
                m = x.max(axis=1)
                m0 = np.where(np.isfinite(m), m, 0.0)
                x -= m0[:, None]  # (in place: the same values, a third less memory traffic)
                with np.errstate(divide="ignore", invalid="ignore"):
                    val = m + np.log(np.exp(x, out=x).sum(axis=1))
                val = np.where(np.isfinite(m), val, -np.inf)
                out[i : i + step] = np.maximum(out[i : i + step], val)
        return out

    def _log_mgf_pruned(self, t: np.ndarray, loss: np.ndarray) -> np.ndarray:
        """_log_mgf on long grids (:func:`log_mgf_bound` per measure, the largest)."""
        out = np.full(t.size, -np.inf)
        for lw in self._logwb:
            out = np.maximum(out, log_mgf_bound(lw, loss, t))
        return out


def log_mgf_bound(
    lw: np.ndarray, loss: np.ndarray, t: np.ndarray, B: int = 256, cut: float = 60.0
) -> np.ndarray:
    """An upper bound on log Σ_k e^{lw_k + t ℓ_k} for each t (all of one sign), ``loss``
    increasing.

    On a grid whose spacings are equal to within 1e-6 (every grid the engine and the fast path
    build), in blocks of b points with anchor a (the block's largest loss for t > 0, its smallest
    for t < 0) every loss is within (distance in points)·d of a, d the least spacing, so
    e^{tℓ} ≤ e^{ta} z^j with z = e^{−|t| d}: each block is a polynomial in z, all t at once by
    one matrix product. b keeps |t| b d ≤ 600, so that terms that underflow in a block's
    normalized weights (below e^{−745} of its largest) are below e^{−145} of that term after
    the z^j factor; they are charged b e^{m_b − 700 + ta} per block. Other grids: blocks of B
    points whose every term is below e^{−cut} of a term that exists are not summed but charged
    B e^{ub} each (ub ≥ every term of the block); the other blocks are summed exactly."""
    G = loss.size
    if G < 2:
        with np.errstate(divide="ignore"):
            return np.full(t.size, float(lw[0]) if G else -np.inf) + (t * loss[0] if G else 0.0)
    dl = np.diff(loss)
    d = float(dl.min())
    if d > 0 and float(dl.max()) <= d * (1.0 + 1e-6) and np.all(np.isfinite(t)):
        return _log_mgf_uniform(lw, loss, t, d)
    nb = -(-G // B)
    pad = nb * B - G
    lp = np.concatenate([loss, loss[-1] + (loss[-1] - loss[-2]) * np.arange(1, pad + 1)])
    lp = lp.reshape(nb, B)
    edge = lp[:, -1] if t[0] > 0 else lp[:, 0]  # block end where e^{tℓ} is largest
    out = np.full(t.size, -np.inf)
    lwp = np.concatenate([lw, np.full(pad, -np.inf)]).reshape(nb, B)
    bmax = lwp.max(axis=1)
    live = np.isfinite(bmax)
    if not live.any():
        return out
    lwp, lpl, bmax, edge_l = lwp[live], lp[live], bmax[live], edge[live]
    at = lpl[np.arange(bmax.size), lwp.argmax(axis=1)]  # loss of each block's top term
    for i, tt in enumerate(t):
        ub = bmax + tt * edge_l
        keep = ub > float(np.max(bmax + tt * at)) - cut
        x = lwp[keep] + tt * lpl[keep]
        m = float(x.max())
        with np.errstate(under="ignore"):
            tot = float(np.exp(x - m).sum()) + B * float(np.exp(ub[~keep] - m).sum())
        out[i] = m + math.log(tot)
    return out


#: most entries of a (blocks, t) array in :func:`_log_mgf_uniform` (memory: 16 MB each)
MGF_CHUNK = 1 << 21


#: most multiply-adds per BLAS call in :func:`_small_matmul` (OpenBLAS runs a product this small
#: on the calling thread: its threshold is 2¹⁸)
_MATMUL_CHUNK = 1 << 17


def _small_matmul(c: np.ndarray, z: np.ndarray) -> np.ndarray:
    """c @ z in row blocks of at most :data:`_MATMUL_CHUNK` multiply-adds each. One call on
    MNIST's grid (64 × 256 × 48) is multithreaded by OpenBLAS, and with another process on
    the machine its threads wait on each other: ``_window`` took 14.6 ms (median of 20) for
    its 2.1 ms minimum, and one DP-SGD query 75 ms for 31. Blocked, the median is the minimum.
    Each block is the same product of the same rows (the error bound of the caller holds)."""
    rows = max(1, _MATMUL_CHUNK // max(c.shape[1] * z.shape[1], 1))
    if c.shape[0] <= rows:
        return c @ z
    out = np.empty((c.shape[0], z.shape[1]))
    for i in range(0, c.shape[0], rows):
        out[i: i + rows] = c[i: i + rows] @ z
    return out


def _log_mgf_uniform(lw: np.ndarray, loss: np.ndarray, t: np.ndarray, d: float) -> np.ndarray:
    """:func:`log_mgf_bound` on a grid of spacings ≥ d (and within 1e-6 of it): block
    polynomials in z = e^{−|t| d}, one matrix product for all t."""
    up = bool(t[0] > 0)
    tm = float(np.max(np.abs(t)))
    b = int(max(1, min(256, 600.0 / max(tm * d, 1e-300))))
    if not up:  # mirror: the anchor is then each block's smallest loss, at its end
        lw, loss = lw[::-1], loss[::-1]
    G = loss.size
    nb = -(-G // b)
    pad = nb * b - G
    # blocks start at the front (padding at the front of the first block)
    lwp = np.concatenate([np.full(pad, -np.inf), lw]).reshape(nb, b)
    anchor = loss[np.arange(nb) * b + b - 1 - pad]  # each block's last point (largest |tℓ|)
    mb = lwp.max(axis=1)
    live = np.isfinite(mb)
    out = np.full(t.size, -np.inf)
    if not live.any():
        return out
    lwp, anchor, mb = lwp[live], anchor[live], mb[live]
    # z^j for the point j places before the block's anchor: e^{−|t| j d}
    with np.errstate(under="ignore"):
        z = np.exp(-np.abs(t)[None, :] * d * np.arange(b - 1, -1, -1)[:, None])  # (b, t)

    def terms(rows: slice) -> tuple[np.ndarray, np.ndarray]:
        """log of each block's sum (rows, t), and the sizes of its summands (for rounding)."""
        with np.errstate(under="ignore"):
            c = np.exp(lwp[rows] - mb[rows, None])  # each row's largest is 1
            s = _small_matmul(c, z)  # ≥ the row's top term times its z ≥ e^{−600}: no underflow
            s += b * math.exp(-700.0)  # the terms that underflowed in c, charged in full
        ta = t[None, :] * anchor[rows, None]
        ls = np.log(s)
        return mb[rows, None] + ta + ls, np.abs(mb[rows])[:, None] + np.abs(ta) + np.abs(ls)

    # rows per pass: (rows, t) arrays of at most MGF_CHUNK entries (a long grid with few points
    # per block, e.g. G_10 subsampled at p = 1e-15, asked for 2.5 GB in one pass)
    step = max(1, MGF_CHUNK // t.size)
    parts = [slice(i, i + step) for i in range(0, mb.size, step)]
    top, mag = np.full(t.size, -np.inf), np.zeros(t.size)
    for rows in parts:
        x, size = terms(rows)
        top, mag = np.maximum(top, x.max(axis=0)), np.maximum(mag, size.max(axis=0))
    tot = np.zeros(t.size)
    for rows in parts:  # (a second pass where there are several: the sum needs the top of all)
        if len(parts) > 1:
            x = terms(rows)[0]
        tot += np.exp(x - top[None, :]).sum(axis=0)
    out = top + np.log(tot)
    # rounding, upward: relative to the summands' sizes, which may cancel, and to the sums'
    mag = mag + np.abs(out)
    return out + 1e-12 + 16.0 * UNIT_ROUNDOFF * mag


def _unbounded(c: TradeOff) -> bool:
    """Whether c's privacy loss is unbounded above (a Gaussian inside), as far as c says."""
    from .composition import DeltaMix
    from .families import Gaussian
    from .operations import Mixture, Subsampled
    from .tradeoff import Inverse

    if isinstance(c, Gaussian):
        return c.mu > 0
    if isinstance(c, (Mixture, Subsampled, Inverse, DeltaMix)):
        return _unbounded(c.base)
    if isinstance(c, Bracketed):
        return any(_unbounded(x) for x, _ in c.info.get("items", []))
    return False


def _chernoff(lm: np.ndarray, t: np.ndarray, a: float) -> float:
    """Chernoff bound min_t e^{−ta} Π M_i(t)^{n_i} on ν^{*n}(Σ L > a) (t > 0) or (Σ L < a) (t < 0),
    with lm = Σ n_i log M_i(t) computed once for a fixed grid of t."""
    return float(min(1.0, math.exp(min(float(np.min(lm - t * a)), 0.0))))


# ------------------------------------------------------------------------------ planning
def _coupling_shift(n_a: int, h: float) -> float:
    """Hoeffding shift s = n_A c(h) + h √(n_A ln(1/η)/2) over n_A coupled steps (0 if none)."""
    return n_a * _c_max(h) + h * math.sqrt(n_a * math.log(1.0 / ETA) / 2.0) if n_a else 0.0


def _couple(comps: list[_Component], h: float, ratio: float, kappa: float) -> float:
    """Choose each curve's mode for the upper side and return the predicted ε-width.

    Optimistic mode costs ≈ R n_i D_i. Coupled mode uses the connect-the-dots measure and shifts
    the composed losses down by s = n_A c_max(h) + h √(n_A ln(1/η)/2) (Hoeffding over the n_A
    coupled steps) with δ-slack η. It wins for curves whose point masses cannot all be put on the
    grid (an off-grid atom costs the optimistic side O(h) per step, the coupling O(h/√n)).
    """
    cm = _c_max(h)
    log_eta = math.log(1.0 / ETA)
    n_a = 0
    width = 0.0
    sd = math.sqrt(sum(c.count * c.var for c in comps))
    for c in comps:
        # (a step whose support starts within the composed sd of its mean, like sparse
        # subsampling's log(1 − p), has its "tail" part inside the bulk: weigh it fully)
        k = max(kappa, 1.0 - min(1.0, (c.mean - float(c.loss[0])) / max(sd, 1e-300)))
        opt = ratio * c.count * max(c.drift + k * c.drift_tail, 0.0)
        # (not a curve whose optimistic side carries offset charges: the coupled measure
        # would take its masses' curve for an optimistic one)
        c.coupled = not c.charged and opt > h * math.sqrt(c.count * log_eta / 2.0) + (
            c.count * cm)
        if c.coupled:
            n_a += c.count
        else:
            width += opt
    return width + _coupling_shift(n_a, h)


def bulk_scale(lower_items: list[tuple[TradeOff, int]]) -> tuple[float, float, float]:
    """(mean, variance, ε_ref) of the composed privacy loss under Q of ``lower_items`` ((curve,
    count) pairs, the lower sides): ε_ref = max(mean + 3 sd, 3 sd, 1e-12) is about ε at δ ≈
    1e-3, the ε whose width the bulk grid is planned for (:func:`_plan`)."""
    mean = var = 0.0
    for c, k in lower_items:
        m, v = _moments(c)
        mean += k * m
        var += k * v
    return mean, var, max(mean + 3.0 * math.sqrt(var), 3.0 * math.sqrt(var), 1e-12)


class _Start(NamedTuple):
    """The planner's starting point (:func:`_start`)."""

    counts: list[int]
    atoms: list[tuple[np.ndarray, np.ndarray]]
    mean: float
    var: float
    eps_ref: float
    ratio: float
    kappa: float
    target: float
    ctail: float
    spans: list[float]
    h_floor: float
    h: float


def _start(
    lower_items: list[tuple[TradeOff, int]], upper_items: list[tuple[TradeOff, int]],
    tol: float, grid_step: float | None, mode: _Mode, stage: bool = False,
) -> _Start:
    """The model :func:`_plan` starts from: the composed loss's scale, the target ε-width, the
    memory floor of the step, and the first step (the user's, or the smooth guess, floored)."""
    counts = [n for _, n in lower_items]
    # (the outer stage of _staged composes grid measures, whose masses sit on a lattice far
    # finer than this grid: aligning to them only held the step at fractions of their span,
    # and searching an offset for their "pile" cost 10 ms)
    atoms = [(np.zeros(0), np.zeros(0)) if stage else _atoms(c) for c, _ in upper_items]
    mean, var, eps_ref = bulk_scale(lower_items)
    ratio = eps_ref / max(var, 1e-300) + 0.5  # R: ε-width per unit of total drift
    # weight of the drift below the support at ε_ref (Gaussian tail of the rest of the sum)
    kappa = math.sqrt(var) / (math.sqrt(var) + 3.0)
    # relative δ error of the lower curve ≈ (2/3) R² · drift at the ε where δ ≈ 1e-30 (about
    # mean + 11.3 sd; the lower side carries ~2/3 of the drift): keep it ≤ 0.6 · 10 tol, leaving
    # room for the round-off floor. As an ε-width at ε_ref that is 9 tol · R / R₁₀².
    # The model is Gaussian: sparse subsampling's rare large losses have a far flatter tail
    # than its sd suggests (dpsgd(0.5, 1e-4, 1000): ε ≈ 16 at 1e-30, not mean + 11.3 sd ≈ 0.26),
    # and its grid was 3x finer than needed (33 s). So the first grid also measures the gap
    # directly (_tail_width, ∝ the drift), and where keeping it ≤ tol asks less, that target
    # is used, with the ε-width at ε_ref ≤ 0.4 tol (half the bulk's: 0.8 tol let dpsgd(2, 1e-4,
    # 100) read 0.83 % at 1e-30). The gap can read 3–4x below the δ width (dpsgd(2, 1e-4, 10⁴):
    # 0.29 % for 1.2 % at 1e-30), hence tol, not 10 tol.
    target = 0.8 * tol * eps_ref
    if mode.k_sd is not None:  # (DEEP: k_sd = 11.3, δ ≈ 1e-30)
        r10 = (mean + mode.k_sd * math.sqrt(var)) / max(var, 1e-300) + 0.5
        target = min(target, 9.0 * tol * (ratio / r10) / r10)
    # no grid finer than MAX_COMPONENT points over a component's support or 2·MAX_COMPONENT
    # over 24 sd of the composed window (2²⁰ and 2²¹ by default)
    ctail = mode.comp_tail(sum(counts))
    spans = [float(np.subtract(*_support(c, ctail)[::-1])) for c, _ in lower_items + upper_items]
    h_floor = max(H_MIN, max(spans) / MAX_COMPONENT, 24.0 * math.sqrt(var) / (2 * MAX_COMPONENT))
    # smooth case: drift ≈ h²/8 per step and unit of continuous Q-mass (atoms on the grid cost
    # nothing), so start from Σ n_i (1 − atom mass_i) h²/8 = target / R
    # (continuous mass next to atoms drifts more: count at least a fifth), with a 5 % margin
    smooth = sum(k * max(1.0 - float(m.sum()), 0.2) for (_, m), k in zip(atoms, counts,
                                                                      strict=True))
    h = grid_step if grid_step is not None else 0.95 * math.sqrt(target / (ratio * smooth / 8))
    h = min(max(h, h_floor), max(H_MAX, h_floor))
    return _Start(counts, atoms, mean, var, eps_ref, ratio, kappa, target, ctail, spans,
                  h_floor, h)


def floored_bulk(items: list[tuple[TradeOff, int]], tol: float) -> bool:
    """Whether the bulk grid of the composition of ``items`` ((exact curve, count) pairs) starts
    at the memory floor of its step: its ε_ref, about ε at δ ≈ 1e-3, is so small against the
    loss's support that the width it aims at needs the finest grid (2²¹ points), as in a
    sparse run whose queries at small δ are about far larger ε."""
    lower = [(c.lower, n) for c, n in items]
    upper = [(c.upper, n) for c, n in items]
    st = _start(lower, upper, tol, None, FAST0)
    return st.h <= st.h_floor * (1.0 + 1e-9)


def _plan(
    lower_items: list[tuple[TradeOff, int]],
    upper_items: list[tuple[TradeOff, int]],
    tol: float,
    grid_step: float | None,
    mode: _Mode = DEEP,
    eps_floor: float | None = None,
    stage: bool = False,
) -> tuple[list[_Component], float, dict[str, Any]]:
    """Components on a grid whose predicted bracket width meets ``tol`` (step 5); a deep grid
    with ``eps_floor`` serves ε ≥ eps_floor only (its width cap is relative to it). ``stage``:
    the outer stage of :func:`_staged` (no alignment to the masses of its grid measures)."""
    st = _start(lower_items, upper_items, tol, grid_step, mode, stage)
    counts, atoms, eps_ref = st.counts, st.atoms, st.eps_ref
    ratio, kappa, target, ctail, spans = st.ratio, st.kappa, st.target, st.ctail, st.spans
    h_floor, h = st.h_floor, st.h
    measure_gap = mode.k_sd is not None and grid_step is None  # (on the first grid)
    if grid_step is not None and grid_step * (4 * MAX_COMPONENT) < max(spans):
        # (a component's grid is built before any window check: at 1e-9 over Laplace(1)'s
        # support it asked for 15 GiB and raised MemoryError. Plans of the engine's own stay
        # at MAX_COMPONENT points; an inverse recomposed at its forward plan's step may need
        # twice that)
        raise ValueError(
            f"grid_step={grid_step:g} needs {max(spans) / grid_step:.3g} points over a "
            f"component's loss support (width {max(spans):.4g}), over the cap of "
            f"{4 * MAX_COMPONENT} (4·fdp.pld.MAX_COMPONENT) per component (memory): "
            f"grid_step must be at least {max(spans) / (4 * MAX_COMPONENT):.3g}"
        )
    if grid_step is None and all(float(m.sum()) < 1e-9 for _, m in atoms):
        # no atoms: the drift is smooth in h (D ≈ c h², c stable within ~15 % from 8h down to
        # h on DP-SGD steps, but 1.6–3.5x the h²/8 guess), so measure c on a probe grid 4x
        # coarser, at a quarter of the cost, and build once at the step it predicts (instead
        # of a first build at the guess that missed the target and a second one)
        h = min(4.0 * h, max(H_MAX, h_floor))
        aim = 0.85  # (c measured 4x coarser is up to ~15 % low: aim below the target)
        probe = True
    else:
        if grid_step is None:
            # (with atoms the h²/8 guess is optimistic: Laplace(0.1)^1000 at 0.2/14 predicted
            # 1.2x the target width, and the planner built its components twice, at 0.2/14
            # and 0.2/17 (0.25 ms of 2.7). 0.85 of 0.95: one build for Laplace(μ)^n from μ =
            # 0.01 to 1 and n = 100 to 10⁴, each bracket still ≤ 0.06 % wide at tol = 1e-3)
            h = min(max(h * (0.85 / 0.95), h_floor), max(H_MAX, h_floor))
        aim = 0.95
        probe = False
    history: list[tuple[float, float]] = []  # (step, predicted width)
    good: tuple[list[_Component], float, float] | None = None  # coarsest plan meeting the target
    while True:
        if grid_step is None:
            hh, offsets = _align(h, atoms, counts)
        else:  # the user's step: only the offsets are chosen
            hh = grid_step
            offsets = _offsets(atoms, hh)
        offsets = [  # (where the mass piles up within a few steps: the best offset; not on
            # the probe grid, whose drift stands for the final grid's: MNIST's piles up there)
            o if probe and not history else _piled_offset(lo, up, hh, o, a)
            for (lo, _), (up, _), a, o in zip(lower_items, upper_items, atoms, offsets,
                                              strict=True)
        ]
        comps = [
            _Component(lo, up, k, hh, o, ctail, _sub_count(a))
            for (lo, k), (up, _), o, a in zip(lower_items, upper_items, offsets, atoms,
                                              strict=True)
        ]
        pred = _couple(comps, hh, ratio, kappa)
        if measure_gap:
            measure_gap = False
            gap = _tail_width(comps, mode.tilt_levels[-1])
            if gap > 0.0 and pred > 0.0:
                # (for the far tail only, the cap is relative to the smallest ε it serves)
                cap_ref = eps_ref if eps_floor is None else max(eps_ref, eps_floor)
                target = min(0.4 * tol * cap_ref, max(target, tol * pred / gap))
        history.append((hh, pred))
        if grid_step is not None:
            break
        # width ∝ h^a with a ∈ [1, 2]: 2 for smooth parts, 1 for point masses off the grid and
        # for coupled curves
        a = 2.0
        if len(history) >= 2:
            (h1, d1), (h2, d2) = history[-2], history[-1]
            if d1 > 0 and d2 > 0 and h1 != h2:
                a = min(max(math.log(d1 / d2) / math.log(h1 / h2), 1.0), 2.0)
        if pred <= target:
            if good is None or hh > good[1]:
                good = (comps, hh, pred)
            if pred >= target / 4 or hh >= max(H_MAX, h_floor) or len(history) >= 6 or (
                len(history) >= 2 and history[-2][0] > hh
            ):
                break
            if pred <= 0.0:  # nothing to refine (a single atom on the grid, say)
                break
            # (the target is met: only ever coarsen here, never below the floor)
            grow = max(1.0, min(4.0, 0.9 * (target / pred) ** (1.0 / a)))
            h = max(min(hh * grow, max(H_MAX, h_floor)), h_floor)
            continue
        if good is not None or hh <= h_floor or len(history) >= 6:
            break
        h = max(hh * min(0.9, max(0.1, aim * (target / pred) ** (1.0 / a))), h_floor)
        aim = 0.95
    if good is not None:  # its components carry the modes chosen for them
        comps, hh, pred = good
    info = {
        "predicted_width": pred, "eps_ref": eps_ref, "refinements": len(history) - 1,
        # (the step stopped at the memory floor: a wider bracket than tol then warns)
        "floored": grid_step is None and hh <= h_floor * (1.0 + 1e-9),
        "coupled": [c.coupled for c in comps],
    }
    return comps, hh, info


def _tail_width(comps: list[_Component], level: float) -> float:
    """The largest Σ n_i log(M_{w_i}(t)/M_{wo_i}(t)) over the MGF grid's t up to the
    Chernoff-optimal t where the composed upper tail's bound is ``level``: about the largest
    relative gap between the two sides' δ(ε) down to δ ≈ ``level`` (the measure tilted by t,
    which carries δ(ε) at the ε where t is optimal, weighs each step's pessimistic and
    optimistic masses by e^{tℓ}). Sparse subsampling's Chernoff t barely moves over the deep
    levels while the gap peaks just below it, hence the largest over smaller t too. 0 when the
    loss has no spread. Used only to size the grid."""
    mgf = _mgf_grid(comps)
    if mgf is None:
        return 0.0
    top = sum(c.count * float(c.loss[-1]) for c in comps)
    mean = sum(c.count * c.mean for c in comps)
    t_end = _chernoff_tilts(mgf[0], mgf[2], mean, top, (level,))[-1]
    ts = mgf[0][mgf[0] <= t_end * (1.0 + 1e-12)]
    out = np.zeros(ts.size)
    for c in comps:
        m, d = np.zeros(ts.size), np.zeros(ts.size)
        top = float(c.loss[-1])
        for i in range(0, c.loss.size, _GAP_CHUNK):  # (blocks: 48 × 2²⁰ doubles is 0.4 GB)
            sl = slice(i, i + _GAP_CHUNK)
            with np.errstate(under="ignore"):
                e = np.exp(np.multiply.outer(ts, c.loss[sl] - top))
            wo = c.wo[sl]
            m += e @ wo
            d += e @ (c.w[sl] - wo)
        ok = m > 0.0
        out[ok] += c.count * np.log1p(np.maximum(d[ok] / m[ok], 0.0))
    return float(out.max()) if out.size else 0.0


#: grid points per block in :func:`_tail_width` (48 × 2¹⁶ doubles: 25 MB)
_GAP_CHUNK = 1 << 16


def _capped_plan(
    lower_items: list[tuple[TradeOff, int]], upper_items: list[tuple[TradeOff, int]],
    tol: float, grid_step: float | None, h: float, need0: int, mode: _Mode,
) -> tuple[list[_Component], float, dict[str, Any]] | None:
    """A coarser plan whose composed window fits MAX_GRID points, when the plan at ``tol``
    (step h, window of need0 points) does not: the one with the smaller predicted width of two
    searches. (1) Re-plan for a larger tol, so that the planner still aligns the atoms with the
    grid. (2) Coarsen the step itself (``h·1.05·need/MAX_GRID``; a step off the atoms' lattice
    drifts and the drift widens the window, but a step that happens to align can be better:
    Laplace(0.1)^{10⁸} fits at h = 0.0125, width 551, by (1) and at h = 0.0154, width 221, by
    (2)), and, for curves with atoms, a few coarser steps than (2)'s. A user's step is only
    coarsened."""
    found: list[tuple[float, list[_Component], float, dict[str, Any]]] = []
    if grid_step is None:
        t_plan, need, prev = tol, need0, h
        for _ in range(8):
            t_plan *= min(max((1.05 * need / MAX_GRID) ** 2, 1.5), 100.0)  # (h ∝ √tol)
            comps, hh, info = _plan(lower_items, upper_items, t_plan, None, mode)
            need = _window(comps, hh, mode.window_tail)[1]
            if need <= MAX_GRID:
                found.append((info["predicted_width"], comps, hh, info))
                break
            if hh == prev:  # the planner kept its step (its target was met already): escalate
                t_plan *= 10.0
            prev = hh
    step, prev_need = h * 1.05 * need0 / MAX_GRID, need0
    while True:
        comps, step, info = _plan(lower_items, upper_items, tol, step, mode)
        need = _window(comps, step, mode.window_tail)[1]
        if need <= MAX_GRID:
            found.append((info["predicted_width"], comps, step, info))
            break
        if need >= 0.95 * prev_need:
            # a coarser step no longer narrows the window: the steps' drift (∝ n h² in loss)
            # widens it as fast as the step grows (the remove direction of dpsgd(0.5, 1e-5,
            # 10⁷) went on to a step of 1e154 and a NaN)
            break
        prev_need = need
        step *= 1.05 * need / MAX_GRID
    # (the width is far from monotone in a step that atoms may or may not align with: a few
    # coarser candidates, each of which fits if its drift does not widen the window; without
    # atoms a coarser step only drifts more)
    atoms = any(float(_atoms(c)[1].sum()) >= 1e-9 for c, _ in upper_items)
    for k in (1.1, 1.25, 1.4) if atoms and found else ():
        comps, hh, info = _plan(lower_items, upper_items, tol, step * k, mode)
        if _window(comps, hh, mode.window_tail)[1] <= MAX_GRID:
            found.append((info["predicted_width"], comps, hh, info))
    if not found:
        return None
    _, comps, hh, info = min(found, key=lambda x: x[0])
    return comps, hh, info


# ------------------------------------------------------------------------------ FFT
def _cpow(z: np.ndarray, n: int) -> np.ndarray:
    """z**n for complex arrays by repeated squaring (3x faster than np.power, same accuracy).

    Coefficients with n log|z| < −745 underflow to 0 in float64 anyway and are skipped."""
    if n > 8:
        with np.errstate(divide="ignore"):
            live = n * np.log(np.abs(z)) > -745.0
        if not live.all():
            out_full = np.zeros_like(z)
            out_full[live] = _cpow(z[live], n) if live.any() else 0.0
            return out_full
    out: np.ndarray | None = None
    base = z
    while n:
        if n & 1:
            out = base.copy() if out is None else out * base
        n >>= 1
        if n:
            base = base * base
    return np.ones_like(z) if out is None else out


#: the t grids of the Chernoff bounds, in units of the composed sd⁻¹ (:func:`_window`,
#: :func:`_t_up`, :func:`_fft_compose`'s wrap-around bound), made once
_T_DN = np.geomspace(0.5, 80.0, 16)
_T_UP = np.geomspace(0.05, 200.0, 48)
_T_SMALL = np.geomspace(0.01, 3.0, 8)


def _window(
    comps: list[_Component], h: float, tail: float = WINDOW_TAIL
) -> tuple[int, int, float, float]:
    """Grid index range [ka, ka + need) of the composed loss and the Chernoff tail bounds
    (each at most ``tail``)."""
    origin = sum(c.count * c.offset for c in comps)
    mean = sum(c.count * c.mean for c in comps)
    sd = math.sqrt(sum(c.count * c.var for c in comps))
    lowest = origin + h * sum(c.count * c.k0 for c in comps)
    highest = origin + h * sum(c.count * (c.k0 + c.w.size - 1) for c in comps)
    # Chernoff exponents over a fixed geometric grid of t scaled by the composed sd: the
    # per-component moment generating functions are computed once and reused for every a
    # (the upper side on _mgf_grid's t, so that the components' memoized MGFs serve both)
    t_up = _t_up(sd)
    t_dn = _T_DN / max(sd, 1e-12)
    lm_up = sum(c.count * c.log_mgf(t_up) for c in comps)
    lm_dn = sum(c.count * c.log_mgf(-t_dn) for c in comps)
    w_lo = w_hi = 8.0
    while True:  # widen each side until its Chernoff tail bound is below ``tail``
        a_lo = max(lowest, mean - w_lo * sd - 10 * h)
        tau_lo = 0.0 if a_lo <= lowest else _chernoff(lm_dn, -t_dn, a_lo)
        if tau_lo <= tail or a_lo <= lowest:
            break
        w_lo *= 1.25
    while True:
        a_hi = min(highest, mean + w_hi * sd + 10 * h)
        tau_hi = 0.0 if a_hi >= highest else _chernoff(lm_up, t_up, a_hi)
        if tau_hi <= tail or a_hi >= highest:
            break
        w_hi *= 1.25
    ka = math.floor((a_lo - origin) / h)
    need = math.ceil((a_hi - origin) / h) - ka + 1
    return ka, need, origin, tau_lo + tau_hi


#: unit roundoff, and the FFT error constant η of Higham (2002), Thm 24.2: η = μ + γ₄(√2 + μ)
#: with twiddle-factor error μ ≤ u, rounded up
_U = UNIT_ROUNDOFF
_ETA_FFT = 12.0 * _U


def _t_up(sd: float) -> np.ndarray:
    """The t > 0 at which Chernoff bounds on the composed upper tail are tried: 48 points from
    0.05 to 200 sd⁻¹ (ratio 1.19), and where sd < 1, more at that ratio down to t = 0.05. A
    small sd with a heavy per-step tail needs the small t: dpsgd(1.1, 1e-4, 100) has sd = 0.0012
    (the grid began at t = 43), but its tail at 1e-36 lies at ε ≈ 3, where the Chernoff bound is
    tightest at t ≈ 10; at t ≥ 43 the window reached ε = 87 (2²¹ points at a step 28x the one
    planned, and the memory cap). Only where the grid would start at t ≤ 1e4 (sd ≥ 5e-6): a
    smaller sd comes of far-apart atoms with tiny masses (rr(350)³: 1e-73), whose tilts are
    chosen among t ≈ 1e72, and small t there widened its deep bracket from 1e-9 to 7e-7."""
    t = _T_UP / max(sd, 1e-12)
    if 0.05 < t[0] <= 1e4:
        n_lo = math.ceil(math.log(t[0] / 0.05) / math.log(1.2))
        t = np.concatenate([np.geomspace(0.05, t[0], n_lo, endpoint=False), t])
    return t


#: (t grid, each component's log-MGF bound per step, the composition's Σ n_c log M_c)
_MGF = tuple[np.ndarray, list[np.ndarray], np.ndarray]


def _mgf_grid(comps: list[_Component]) -> _MGF | None:
    """A grid of t > 0 scaled by the composed sd, each component's log-MGF bound on it (per
    step) and the composition's; None when the composed loss has no spread."""
    sd = math.sqrt(sum(c.count * c.var for c in comps))
    if sd <= 0.0:
        return None
    t = _t_up(sd)
    per = [c.log_mgf(t) for c in comps]
    return t, per, np.sum([c.count * x for c, x in zip(comps, per, strict=True)], axis=0)


def _tail_from_profile(
    w: np.ndarray, err: np.ndarray, loss: np.ndarray, q_inf: float, slack: float,
    points: int = 512, offsets: int = 24, lift: np.ndarray | None = None,
) -> Any:
    """A bound on ν[(a, +∞]] for every measure ν that ``_slack_steps`` meets: the sum of all
    steps but one, each under its exact or its optimistic measure, read off the composition's
    own pessimistic profile instead of a Chernoff bound (which the heavy per-step tail of sparse
    subsampling makes weak: 0.43 at ε = 0.2 for dpsgd(0.5, 1e-5, 10⁵), where δ is 1e-5).

    **Claim.** ν[(a, ∞]] ≤ (D(ε') + S e^S) / (1 − e^{ε' − a}) for every ε' < a, with D the
    composition's pessimistic δ (the lower side's masses ``w`` plus their round-off bounds
    ``err``, the +∞ atom and the window's tail ``q_inf``) and S = Σ n_i s_i its total slack.
    **Proof.** (1 − e^{ε' − l})₊ ≥ 1 − e^{ε' − a} for l > a, so ν[(a, ∞]] ≤ δ_ν(ε') /
    (1 − e^{ε' − a}). Replacing the optimistic measures of ν by the exact ones one at a time
    changes δ_ν by at most s_j times the total mass of the rest, which is at most e^S (each
    optimistic measure has mass ≤ 1 + s_j: its δ at ε = −∞); so δ_ν ≤ δ_{T−1} + S e^S, with
    δ_{T−1} the exact δ of the steps but one. That is at most the exact δ of all T steps
    (composing one more pair of distributions never lowers δ: the test may ignore it), which
    is at most D (step 1 of the module docstring). ∎

    With ``lift`` (at each grid loss, non-increasing: a bound from :func:`_slack_steps` made
    with an earlier such tail bound) S e^S is replaced by lift(ε'). **Proof.** The telescoping
    sum of :func:`_slack_steps` bounds the excess δ_ν(ε') − δ_{exact}(ε') of any sum ν of at
    most T − 1 steps by Σ_i Σ_j s_j ν_{−i}[(ε' − ℓ_j, ∞]] over its own steps i, each ν_{−i}
    again such a sum; a tail bound valid for all of them makes that at most the sum over all
    T steps, which is what ``lift`` holds. ∎

    D is evaluated at the grid losses L_k with the losses read η = 16u max|L| higher, as
    D_k = Σ_{j≥k} q_j + q_inf − e^{−η} Σ_{j≥k} q_j e^{L_k − L_j}, the second sum by a first-order
    recursion whose relative rounding stays below 4(N + 10)u (taken off it), and rounded up.
    The bound is taken at ``points`` values a_g of a, each at the grid losses L_k at or below
    a_g − c for ``offsets`` distances c from h to the window's width (any ε' < a is valid);
    for any a, the value at the largest a_g ≤ a applies (the bound falls as a grows), ∞ below
    the window. Returns that function of an array ``a``."""
    q = np.maximum(w, 0.0) + err
    n = q.size
    if n < 2:
        return None
    h = float(loss[1] - loss[0])
    eta = 16.0 * _U * max(float(np.max(np.abs(loss))), 1.0)
    tail = np.cumsum(q[::-1])[::-1] + q_inf
    ptail = lfilter([1.0], [1.0, -math.exp(-h)], q[::-1])[::-1]
    ptail *= math.exp(-eta) * (1.0 - 4.0 * (n + 10) * _U)
    d = np.maximum(tail - ptail, 0.0) * (1.0 + 1e-9) + 64.0 * _U * tail
    if lift is None:
        d += slack * math.exp(min(slack, 700.0)) * (1.0 + 1e-9)
    else:
        d += np.minimum(lift, slack * math.exp(min(slack, 700.0))) * (1.0 + 1e-9)
    d[~np.isfinite(d)] = np.inf  # (no bound where a mass's error bound is not finite)
    grid = np.linspace(float(loss[0]), float(loss[-1]), points)
    span = max(float(loss[-1] - loss[0]), h)
    c = np.geomspace(h, span, offsets)
    # k with L_k ≈ a_g − c on the uniform grid (which k is only a choice: any L_k < a_g is valid,
    # and the value uses L_k itself)
    k = np.floor((grid[None, :] - c[:, None] - float(loss[0])) / h).astype(np.int64)
    kk = np.clip(k, 0, n - 1)
    ok = (k >= 0) & (loss[kk] < grid[None, :])
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        ratio = np.where(ok, d[kk] / -np.expm1(np.minimum(loss[kk] - grid[None, :], 0.0)),
                         np.inf)
    bound = np.min(ratio, axis=0) * (1.0 + 1e-9)
    bound[np.isnan(bound)] = np.inf

    def at(a: np.ndarray) -> np.ndarray:
        j = np.searchsorted(grid, a, side="right") - 1
        return np.where(j >= 0, bound[np.maximum(j, 0)], np.inf)

    return at


def _slack_steps(
    comps: list[_Component], mgf: _MGF | None, p_inf: float,
    edges: np.ndarray, above: Any = None, shift: float = 0.0,
) -> np.ndarray:
    """A bound on how much the optimistic measures' slack raises the composed δ, at each ε of
    the increasing ``edges`` and for all larger ε up to the next edge (it is non-increasing).

    Step i of the composition uses the optimistic measure μ̃_i, whose profile exceeds the
    exact one by at most g_i(ε) = Σ_j s_j 1[ε < ℓ_j] (its slack charges, see ``_optimistic``).
    Since δ_{μ*ν}(ε) = ∫ δ_μ(ε − l) dν(l), replacing the measures one at a time (a telescoping
    sum) bounds the composed excess by Σ_i E[g_i(ε − S_{−i})], where S_{−i} is the sum of the
    other steps' losses, each under its exact or its optimistic measure; so by
    Σ_i Σ_j s_j Q[S_{−i} > ε − ℓ_j]. The probability is bounded by Chernoff,
    min_t e^{−ta} Π M(t), with the components' MGF bounds (which bound both measures), plus the
    chance p_inf that some other step has loss +∞; or, where smaller, by ``above(a)``
    (:func:`_tail_from_profile`, from the composition's pessimistic δ).

    The probability is capped at e^S, S = Σ n_i s_i, not at 1: an optimistic measure's mass is
    up to 1 + s_i (its clamped charges add mass), so the other steps' product measure can
    exceed 1. (Capped at 1, a Poisson curve whose charges were 8.8e-5 a step read its
    optimistic ε 2.5e-9 relative above the truth, composed twice.)

    ``shift``: Σ n_i d_i, how far the optimistic measures' losses may read above the true ones
    (``_Component.loss_err``): the steps' exact measures are replaced by their shifts up by d_i
    (δ_μ̃ ≤ δ of those, :func:`_optimistic`), whose sums' tails are the exact ones at a − shift
    (for Chernoff, their MGFs are e^{t d_i} times the exact ones): every bound is taken there."""
    out = np.zeros(edges.size)
    log_cap = min(sum(c.count * c.slack for c in comps if not c.coupled), 700.0)
    cap = math.exp(log_cap) * (1.0 + 1e-12)
    for k, c in enumerate(comps):
        if c.coupled or c.slack_mass.size == 0:
            continue
        fin = np.isfinite(c.slack_loss)
        out += c.count * float(c.slack_mass[~fin].sum()) * cap
        if not fin.any():
            continue
        if mgf is None:
            out += c.count * float(c.slack_mass[fin].sum()) * cap
            continue
        t = mgf[0]
        rest = mgf[2] - mgf[1][k]
        order = np.argsort(c.slack_loss[fin])
        ll, mm = c.slack_loss[fin][order], c.slack_mass[fin][order]
        for chunk_l, chunk_m in zip(np.array_split(ll, min(32, ll.size)),
                                    np.array_split(mm, min(32, ll.size)), strict=True):
            a = edges - float(chunk_l[-1]) - shift  # the chunk's mass at its largest loss
            expo = np.min(rest[:, None] - t[:, None] * a[None, :], axis=0)
            expo += 1e-9 * (1.0 + np.abs(expo))  # the rounding of the exponent
            prob = np.minimum(np.exp(np.minimum(expo, log_cap)) + p_inf, cap)
            if above is not None:
                prob = np.minimum(prob, above(a))
            out += c.count * float(chunk_m.sum()) * prob
    return out * (1.0 + 1e-12)


def _tilts(
    comps: list[_Component], top: float, mgf: _MGF | None, levels: tuple[float, ...]
) -> list[float]:
    """Exponential tilts θ for the FFT: 0 for the bulk, then the Chernoff-optimal θ at the
    losses a where the Chernoff bound min_t e^{−ta} Π M_i(t)^{n_i} on the composed upper tail
    is each of ``levels`` (1e-12 and 1e-28 for the deep grid): the tilted measure is centred
    near a, so δ(ε) keeps its relative precision there whatever the shape of the tail
    (Gaussian-like or the rare large losses of sparse subsampling). Any θ is valid: the error
    bounds decide per grid point which result is used."""
    if mgf is None:
        return [0.0]
    return _chernoff_tilts(mgf[0], mgf[2], sum(c.count * c.mean for c in comps), top, levels)


def _chernoff_tilts(
    t: np.ndarray, lm: np.ndarray, mean: float, top: float, levels: tuple[float, ...]
) -> list[float]:
    """0 and the Chernoff-optimal t (on the grid ``t``, with ``lm`` the log-MGF there) at the
    losses a ∈ [mean, top] where min_t e^{lm − ta} is each of ``levels`` (in increasing order
    of t; a tilt within 5 % of the last is skipped)."""
    out = [0.0]
    if top <= mean:
        return out

    def expo(a: float) -> tuple[float, float]:  # (log Chernoff bound at a, its minimizing t)
        v = lm - t * a
        k = int(np.argmin(v))
        return float(v[k]), float(t[k])

    for log_target in [math.log(x) for x in levels]:
        lo, hi = mean, top
        if expo(hi)[0] > log_target:  # the window ends before the tail gets this thin
            a = hi
        else:
            for _ in range(40):
                a = 0.5 * (lo + hi)
                if expo(a)[0] > log_target:
                    lo = a
                else:
                    hi = a
            a = hi
        theta = expo(a)[1]
        if theta > out[-1] * 1.05:
            out.append(theta)
    return out


def _min_of_lines(b: np.ndarray, s: np.ndarray, x: np.ndarray) -> np.ndarray:
    """min_k (b_k + s_k x) at every x, from the lower envelope of the lines (slopes sorted
    decreasingly, the convex-hull trick): O(K log K + N log K) instead of K·N. Each line is
    itself a valid bound where it is used (Chernoff at its t), so a breakpoint misplaced by
    rounding only picks a neighbour line, a larger but still valid value."""
    order = np.lexsort((b, -s))  # slope descending; equal slopes: the smaller intercept first
    hull: list[int] = []
    for k in order.tolist():
        if hull and s[hull[-1]] == s[k]:
            continue  # the same slope with a larger intercept is never the minimum
        while len(hull) >= 2:
            i, j = hull[-2], hull[-1]
            x_ij = (b[j] - b[i]) / (s[i] - s[j])  # where j takes over from i
            x_jk = (b[k] - b[j]) / (s[j] - s[k])  # where k takes over from j
            if x_jk <= x_ij:
                hull.pop()
            else:
                break
        hull.append(k)
    idx = np.asarray(hull)
    brk = (b[idx[1:]] - b[idx[:-1]]) / (s[idx[:-1]] - s[idx[1:]])
    pick = idx[np.searchsorted(brk, x)]
    out: np.ndarray = b[pick] + s[pick] * x
    return out


def _tilt(w: np.ndarray, loss: np.ndarray, theta: float) -> tuple[np.ndarray, float, float]:
    """The measure w(ℓ) e^{θℓ}/M, M = Σ w e^{θℓ} as computed: (tilted masses, log M, ξ), each
    entry e^{log w + θℓ − log M} within relative ξ of the exact ratio (log, product, sums and
    exp: a few ulps of the largest magnitude involved). log M = 0 and ξ = 0 without mass."""
    with np.errstate(divide="ignore"):
        lw = np.where(w > 0, np.log(np.maximum(w, 1e-320)), -np.inf) + theta * loss
    fin = np.isfinite(lw)
    if not fin.any():
        return np.zeros_like(w), 0.0, 0.0
    lmc = float(np.logaddexp.reduce(lw[fin]))
    with np.errstate(under="ignore"):
        out = np.exp(np.minimum(lw - lmc, 0.0))
    return out, lmc, 8.0 * _U * (float(np.abs(lw[fin]).max()) + abs(lmc) + 2.0)


def _tilted_power(
    comps: list[Any], side: str, theta: float, N: int,
    cache: dict[tuple[int, float], tuple[np.ndarray, float, float, float]]
    | None = None,
) -> tuple[np.ndarray, float, float, float]:
    """The circular convolution Π_c (x_c)^{*n_c} of the tilted measures
    x_c(ℓ) = w_c(ℓ) e^{θℓ}/M_c(θ), M_c(θ) = Σ_ℓ w_c(ℓ) e^{θℓ}, by FFT, and a proved bound on
    its round-off.

    Returns (values at positions 0..N−1 holding grid index kmin + m, the absolute error bound per
    position, log Π_c M_c(θ)^{n_c}, a relative error bound from rounding the tilted inputs);
    untilting multiplies position m by Π_c M_c^{n_c} e^{−θ L_m}.

    ``comps`` are :class:`_Component` or :class:`_Piece` objects (their measures ``w``, ``wo``,
    ``wc``, ``loss``, ``count``, ``coupled``); ``cache`` keeps each measure's transform, its
    bound and its tilt's log M and ξ per (measure, θ) for the next call.

    The bound (componentwise, Higham 2002, §24.1, proof of Thm 24.2): a radix-2 FFT is a
    product of log₂N butterfly stages A_j, computed as (A_j + ΔA_j) with |ΔA_j| ≤ η|A_j|, and
    |A_L|⋯|A_1| is the all-ones matrix, so every computed coefficient is within
    γ‖x‖₁, γ = (1 + η)^{log₂N} − 1, of the exact one (x ≥ 0 here, so ‖x‖₁ = Σx). With
    A_k = |ẑ_k| + ε_c ≥ |ẑ_k|, |z_k|: |ẑ_k^n − z_k^n| ≤ n A_k^{n−1} ε_c, and the repeated squaring
    adds at most 6 n u A_k^n (≤ 2 log₂ n complex products of relative error ≤ √5 u, Higham
    §3.6). The product over components telescopes; the inverse transform passes spectral errors
    e_k through as (1/N) Σ_k |e_k| per position and adds its own γ (1/N) Σ_k |Ŝ_k|. The bound
    assumes scipy's FFT obeys the radix-2 componentwise bound (N is a power of two).
    """
    half = N // 2 + 1
    spec: np.ndarray | None = None
    wt = np.full(half, 2.0)
    wt[0] = 1.0
    if N % 2 == 0:
        wt[-1] = 1.0
    gamma = math.expm1(math.log2(N) * math.log1p(_ETA_FFT))
    log_m = 0.0
    log_xi = 0.0  # log of the bound (1 + ξ)^n on the tilted buffers' relative rounding
    parts = []
    for c in comps:
        w = c.w if side == "lower" else (c.wc if c.coupled else c.wo)
        key = (id(w), theta)
        hit = None if cache is None else cache.get(key)
        if hit is None:
            lmc = xi = 0.0
            if theta > 0.0:
                w, lmc, xi = _tilt(w, c.loss[: w.size], theta)
            # grid index k0 + j at position j (folded modulo N if longer); a piece of a
            # component starts at its own index ``start``
            st = getattr(c, "start", 0)
            if st + w.size <= N:
                buf = np.zeros(N)
                buf[st: st + w.size] = w
            else:
                buf = np.bincount((st + np.arange(w.size)) % N, weights=w, minlength=N)
            z = sfft.rfft(buf)
            # (‖buf‖₁ ≤ ‖w‖₁, equal unless folded: w is all of buf's mass, without its zeros)
            eps_c = 1.01 * gamma * float(np.abs(w).sum())
            hit = (z, eps_c, lmc, xi)
            if cache is not None:
                cache[key] = hit
        z, eps_c, lmc, xi = hit
        a = np.abs(z) + eps_c
        log_xi += c.count * math.log1p(xi)
        log_m += c.count * lmc
        parts.append((c.count, eps_c, a))
        zn = _cpow(z, c.count)
        if spec is None:
            spec = zn
        else:
            spec *= zn
    if spec is None:  # (no components: the empty product)
        spec = np.ones(half, dtype=complex)
    # log of the bounds B_c = A_c^{n_c} (1 + ρ_c) on both the exact and the computed powers,
    # on the live frequencies only: where Σ n_c log A_c < cut, every term below is at most
    # e^{−700} (ρ_c ≤ n_c (1 + 6u) as ε_c ≤ A_c, so B_c ≤ A_c^{n_c} 2n_c, and the n_c ε_c A^{n_c−1}
    # Π_rest term is at most n_c Π_c B_c), charged in full per frequency
    with np.errstate(divide="ignore"):
        # (a component without finite mass — all of it at +∞ — has a = 0: its bound is 0)
        loga = [np.log(a) for _, _, a in parts]
    raw = np.zeros(half)
    for (n, _, _), la in zip(parts, loga, strict=True):
        raw += n * la
    cut = -700.0 - sum(math.log(2.0 * n) + math.log(n) for n, _, _ in parts) - math.log(
        len(parts) + 3.0)
    live = raw > cut
    n_dead = int(half - np.count_nonzero(live))
    e = np.zeros(half)
    with np.errstate(under="ignore", over="ignore", divide="ignore", invalid="ignore"):
        logs = []
        for (n, eps, a), la in zip(parts, loga, strict=True):
            al = a[live]
            logs.append(n * la[live] + np.log1p(n * (np.divide(eps, al, out=np.zeros_like(al),
                                                                where=al > 0) + 6.0 * _U)))
        total = np.sum(logs, axis=0)
        e_live = np.zeros(total.size)
        for (n, eps, a), la, lb in zip(parts, loga, logs, strict=True):
            g = np.exp(np.minimum((n - 1) * la[live] + total - lb, 700.0))  # A^{n−1} Π_rest
            e_live += n * g * (eps + 6.0 * _U * a[live])
        e_live += 3.0 * len(parts) * _U * np.exp(np.minimum(total, 700.0))
        e[live] = e_live
    e_dead = 2.0 * n_dead * (len(parts) + 1) * math.exp(-700.0)
    # (weighted sums as numpy pairwise sums, error ≤ ⌈log₂ n⌉ u Σ, inside the 1.01 guard; not
    # np.dot: a multithreaded BLAS call costs ~8 ms per call on a busy machine)
    e_sum = float((wt * e).sum()) + e_dead
    err = (e_sum + 1.01 * gamma * (float((wt * np.abs(spec)).sum()) + e_sum)) / N + 1e-300
    # positive inputs with relative errors ≤ ξ give every output of the multilinear
    # convolution a relative error ≤ (1 + ξ)^n − 1
    return sfft.irfft(spec, n=N), err, log_m, math.expm1(min(log_xi, 700.0))


#: the rare part of a split step (see :func:`_split_plan`) holds the largest losses whose
#: Q-mass over all n steps is at most this
SPLIT_RATE = 1e-6
#: most rare steps a split composition keeps (terms k = 0..K)
SPLIT_TERMS = 24
#: on the bulk grid the split is made at once only where the round-off without it would move
#: ε by more than tol at some δ above this; else when a query below its reach asks for it
LAZY_SPLIT_DELTA = 1e-7


class _Piece:
    """A part of a component's grid measures: grid indices ``start`` up to the slice's end (views
    of the component's arrays, no copies), repeated ``count`` times: a term of a split
    composition (:func:`_split_plan`)."""

    def __init__(self, c: _Component, sl: slice, count: int) -> None:
        start, stop, _ = sl.indices(c.w.size)
        self.start, self.count, self.coupled = start, count, c.coupled
        self.loss = c.loss[start:]
        self.w = c.w[start:stop]
        self.wo = c.wo[start:min(stop, c.wo.size)]
        self.wc = c.wc[start:min(stop, c.wc.size)] if c.coupled else self.wo
        self._memo: dict[bytes, np.ndarray] = {}

    def log_mgf(self, t: np.ndarray) -> np.ndarray:
        """Upper bounds on log ∫ e^{tℓ} dν(ℓ) over the measures the sides use (w, and wo or
        wc), the largest, for t all of one sign (memoized per t array; shared by the copies
        of :meth:`counted`)."""
        key = t.tobytes()
        hit = self._memo.get(key)
        if hit is None:
            out = np.full(t.size, -np.inf)
            for x in {id(a): a for a in (self.w, self.wc if self.coupled else self.wo)}.values():
                with np.errstate(divide="ignore"):
                    lw = np.where(x > 0.0, np.log(np.maximum(x, 1e-320)), -np.inf)
                out = np.maximum(out, log_mgf_bound(lw, self.loss[: x.size], t))
            hit = self._memo[key] = out
        return hit.copy()

    def counted(self, count: int) -> _Piece:
        """The same measures repeated ``count`` times (the arrays shared)."""
        other = object.__new__(_Piece)
        other.__dict__.update(self.__dict__)
        other.count = count
        return other


def _split_plan(c: _Component, floor: float) -> tuple[int, int, float] | None:
    """Where to split one curve's step measure ν (each side's) into a bulk ν_b (grid indices
    below i) and a rare part ν_r (from i up), and how many terms to keep.

    The n-fold composition is exactly the binomial sum ν^{*n} = Σ_k C(n, k) ν_b^{*(n−k)} * ν_r^{*k}
    (convolution is commutative and bilinear, and the split is any decomposition into
    nonnegative measures). A sparse long run (DP-SGD with p = 1e-5, T = 10⁶) reaches large ε
    through one step's rare large loss: the tilted FFT of ν^{*n} stays centred on the bulk and
    its round-off, relative to the whole mass, swamps δ there (25 % of δ at ε = 1). Each term
    computed by itself, tilted to its own centre, keeps its round-off relative to its own mass.
    The terms k > K are left out: on the pessimistic side their mass, at most
    R = (A + B)ⁿ C(n, K+1) (B / (A + B))^{K+1} (A, B the masses of ν_b and ν_r: the binomial
    tail P[Bin(n, B/(A+B)) > K] by the union bound), goes to the +∞ atom; the optimistic side
    just drops them (that only lowers its δ).

    Returns (i, K, log R) with i the first grid index where n·B ≤ SPLIT_RATE·(A + B) and K the
    least with R ≤ 1e-3·``floor`` (the smallest tail the grid answers), or None where no such
    split exists (no rare part, or K > SPLIT_TERMS)."""
    n = c.count
    w = np.maximum(c.w, 0.0)
    total = float(w.sum())
    if n < 2 or total <= 0.0:
        return None
    above = np.cumsum(w[::-1])[::-1]  # mass from each index up
    ok = np.flatnonzero(n * above <= SPLIT_RATE * total)
    if ok.size == 0 or ok[0] == 0 or above[ok[0]] <= 0.0:
        return None
    i = int(ok[0])
    b = float(above[i]) * (1.0 + 1e-12)  # (the sum's rounding, upward)
    a_b = total * (1.0 + 1e-12)
    log_q = math.log(b / a_b)
    base = n * math.log(a_b)
    target = math.log(1e-3 * floor)
    for k in range(1, min(SPLIT_TERMS, n) + 1):
        if k == n:  # (every term kept: nothing left out)
            return i, k, -math.inf
        log_r = base + math.lgamma(n + 1) - math.lgamma(k + 2) - math.lgamma(n - k) + (
            k + 1) * log_q
        log_r += 1e-9 * (1.0 + abs(log_r))  # (lgamma's rounding, upward)
        if log_r <= target:
            return i, k, log_r
    return None


def _fft_compose(
    comps: list[_Component], h: float, pad: int = 1, mode: _Mode = DEEP,
    tol: float | None = None, split_ok: bool = True,
    window: tuple[int, int, float, float] | None = None,
) -> dict[str, Any]:
    """Both composed measures on one window: loss grid, masses, atoms, tails, round-off.

    Each side is computed at a few exponential tilts θ (the tilted measures' FFT keeps relative
    precision in the far upper tail; untilting multiplies position m by e^{θ(L_ref − L_m)}), and
    every position takes the value with the smallest proved error bound. The lower side adds
    that bound to each mass, the upper side subtracts it; the upper side also subtracts, for
    tilted values, a Chernoff bound on the mass that wrapped around from above the window
    (amplified by the untilting).
    """
    # (``window``: the caller's :func:`_window` of these components at this step and tail)
    ka, need, origin, tau = window or _window(comps, h, mode.window_tail)
    N = pad << max(1, math.ceil(math.log2(max(need, 2))))  # radix 2: Higham Thm 24.2 applies
    kmin = sum(c.count * c.k0 for c in comps)
    loss = origin + (ka + np.arange(N)) * h
    out: dict[str, Any] = {"h": h, "N": N, "need": need, "loss": loss, "tau": tau}
    # (the MGF grid places the tilts and serves their wrap-around bounds and the split; an
    # untilted plan runs θ = 0 alone and needs it only for the slack rounds, which build it)
    mgf = _mgf_grid(comps) if mode.tilt_levels else None
    thetas = _tilts(comps, float(loss[min(need, N) - 1]), mgf, mode.tilt_levels) if (
        mode.tilt_levels) else [0.0]
    sd = math.sqrt(sum(c.count * c.var for c in comps))
    # mass wrapped around from above the window, amplified by the untilting (a Chernoff bound
    # from the components' MGFs, the same for both sides): the upper side must subtract it; the
    # lower side may keep it (it only adds mass), but it counts when choosing the tilt
    alias: dict[Any, np.ndarray] = {}
    # (the MGFs at the points s > θ of _mgf_grid, already computed, with t = s − θ, plus a
    # few small t; for t the exact s − θ the lines are those of M(s), and rounding s − θ moves
    # each by ≤ u t |ℓ + Nh|, inside the 1e-9 guard below). The small t start at 0.01 sd⁻¹: for
    # a heavy per-step tail (sparse subsampling) the wrap-around bound of a tilted measure is
    # smallest at a t far below the untilted window's; any t > 0 is valid.
    t_grid = None if mgf is None else mgf[0]
    lm_grid = None if mgf is None else mgf[2]
    t_small = _T_SMALL / max(sd, 1e-12)

    def alias_of(theta: float, parts: list[_Piece] | None = None,
                 log_c: float = 0.0) -> np.ndarray:
        if parts is not None:  # a term of a split: its own MGF bounds (the pieces' measures)
            t_al = t_small if t_grid is None else np.concatenate(
                [t_small, t_grid[t_grid > theta] - theta])
            lm = log_c + np.sum([x.count * x.log_mgf(theta + t_al) for x in parts], axis=0)
            return lines(theta, t_al, lm)
        lm_s = np.sum([c.count * c.log_mgf(theta + t_small) for c in comps], axis=0)
        if lm_grid is not None and t_grid is not None:
            above = t_grid > theta
            t_al = np.concatenate([t_small, t_grid[above] - theta])
            lm = np.concatenate([lm_s, lm_grid[above]])
        else:
            t_al, lm = t_small, lm_s
        return lines(theta, t_al, lm)

    def lines(theta: float, t_al: np.ndarray, lm: np.ndarray) -> np.ndarray:
        if np.any(lm == -np.inf):  # a measure without mass: nothing wraps around
            return np.zeros(N)
        # the exponent min_t [lm_t − t N h − (θ + t) ℓ]: the lower envelope of these lines
        expo = _min_of_lines(lm - t_al * (N * h), -(theta + t_al), loss)
        expo += 1e-9 * (1.0 + np.abs(expo))  # the rounding of lm and of the lines
        with np.errstate(under="ignore"):
            return np.exp(np.minimum(expo, 700.0))

    def one_tilt(side: str, theta: float, parts: list[Any] | None = None, log_c: float = 0.0,
                 cache: dict[Any, Any] | None = None) -> tuple[np.ndarray, np.ndarray]:
        # (``parts``, ``log_c``: a term C·Π parts of a split composition, log C = log_c)
        vals, err, log_m, rel = _tilted_power(comps if parts is None else parts, side, theta,
                                              N, cache)
        # position m holds index kmin + m (mod N); rotate so that position j holds ka + j
        vals = np.roll(vals, kmin - ka)
        if theta <= 0.0 and log_c == 0.0:
            return vals, np.full(N, err)
        key: Any = theta if parts is None else (theta, id(parts))
        if theta > 0.0 and key not in alias:
            alias[key] = alias_of(theta, parts, log_c)
        # (on the window only: callers read positions from ``need`` on as empty)
        win = slice(0, min(need, N))
        lu = (log_m + log_c) - theta * loss[win]  # log of the untilting factor
        # relative error of the untilting factor (lu is a difference of large numbers): at
        # most rel_u, per point where that is large
        rel_u: Any = 8.0 * _U * (abs(log_m) + abs(log_c) + theta * float(
            np.abs(loss[win]).max()) + 2.0)
        if rel_u > 1.0:
            rel_u = 8.0 * _U * (abs(log_m) + abs(log_c) + theta * np.abs(loss[win]) + 2.0)
        out_v, e_m = np.zeros(N), np.zeros(N)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            u_fac = np.exp(np.minimum(lu, 700.0))
            v = vals[win] * u_fac
            tot = np.expm1(np.minimum(rel_u, 700.0)) + rel * (1.0 + rel_u)
            ee = (err * (1.0 + tot)) * u_fac + np.abs(v) * tot
        if theta > 0.0:
            ee += alias[key][win]
        # where the untilting factor's exponent is uncertain by more than 1 (a tilt of 1e84 on
        # a measure of sd 1e-83: lu is a difference of numbers near 1e87), the factor is unknown
        # and so is the value: no bound (before, an underflowed factor times a capped
        # e^{700} read as an error bound of 0 on a value of 0, where the mass was 1)
        ee[(lu >= 700.0) | (rel_u > 1.0)] = np.inf
        out_v[win], e_m[win] = v, ee
        vals = out_v
        return vals, e_m

    def run(side: str, ths: list[float], best: np.ndarray, best_err: np.ndarray,
            which: np.ndarray) -> None:
        for theta in ths:
            vals, e_m = one_tilt(side, theta)
            # positions past the window's top (power-of-two rounding and padding) hold mass
            # above a_hi, which the Chernoff bound τ already charges (+∞ atom on the lower
            # side, lift on the upper): read them as empty rather than sum their error bounds
            vals[need:] = 0.0
            e_m[need:] = 0.0
            take = e_m < best_err
            best[take] = vals[take]
            best_err[take] = e_m[take]
            which[take] = theta
            if theta > 0.0:
                wrap[take] = alias[theta][take]

    best, best_err, which = np.zeros(N), np.full(N, np.inf), np.zeros(N)
    wrap = np.zeros(N)  # the wrap-around part of best_err
    run("lower", thetas, best, best_err, which)
    memo: dict[str, Any] = {}

    def lower_tails() -> tuple[np.ndarray, np.ndarray]:
        """The suffix sums of the lower side's mass and error bound as they stand (kept until
        a tilt or the split changes them: 5 ms a pair at N = 2¹⁹, asked up to three times)."""
        if "tails" not in memo:
            memo["tails"] = (np.cumsum(np.maximum(best, 0.0)[::-1])[::-1],
                             np.cumsum(best_err[::-1])[::-1])
        return memo["tails"]

    # More tilts where the error bound is still large next to the mass above. For a heavy tail
    # (sparse subsampling) the Chernoff-placed tilts are steep, and their wrap-around bound,
    # amplified by the untilting, dominates below their centre; a gentler tilt (half the one
    # in use there, or half the first positive one) fills the gap, up to three times. (Tilts
    # only choose which proved bound applies at each point.) Not below a tail of 1e-40 (deep
    # grid; 1e-14 for the bulk's): the window itself ends where the Chernoff bound on the rest
    # is its window_tail.
    # The new tilt goes the way the error at the bad points asks: gentler (towards the next
    # smaller tilt, or half the smallest) where it is mostly wrap-around, steeper (towards the
    # next larger tilt, or twice the largest) where it is mostly round-off. Halving alone left
    # a gap: dpsgd(0.8, 1e-4, 10⁵) had tilts 3.4, 6.9, 13.7, where 6.9's round-off was 30 % of
    # the mass at ε = 1 and 13.7's wrap-around 10³ times the mass; the bracket at δ = 1e-12 was
    # [0.894, 1.002]. A candidate within 5 % of a tilt in use ends the search.
    # Past three, up to three more where the round-off still moves ε by more than ``tol``
    # (the search then aims at the point where it moves ε most): dpsgd(0.8, 1e-4, 10⁵) on a
    # step of 1.16e-5 kept 0.7 % of δ as round-off at δ = 1e-10, 0.27 % of ε.
    # (the lower side's +∞ atom, 1 − Π(1 − q_i)^n: the round-off test below reads it too)
    # (rounded up: log1p, the products, the sum and expm1 each within a few u relative, and
    # −expm1(x) is no more sensitive to x's relative error than x itself for x < 0; exact, and
    # kept, where one step alone has an atom: an (ε, δ) step composed once, whose δ(ε) then
    # reaches δ itself beyond a bounded rest)
    with_atom = [c for c in comps if c.q_inf > 0.0]
    if len(with_atom) == 1 and with_atom[0].count == 1:
        q_inf_lo = min(float(with_atom[0].q_inf), 1.0)
    else:
        q_inf_lo = min(1.0, -math.expm1(
            sum(c.count * math.log1p(-min(c.q_inf, 1.0)) if c.q_inf < 1 else -math.inf
                for c in comps)
        ) * (1.0 + 2.0 * _U * (len(comps) + 6)))
    for it in range(6 if len(thetas) > 1 and tol is not None else 3 if len(thetas) > 1 else 0):
        tail, etail = lower_tails()
        bad = np.flatnonzero((etail > 1e-4 * tail) & (tail > mode.tail_floor))
        if bad.size == 0:
            break
        worst = -1
        if it >= 3:
            assert tol is not None
            moves = _roundoff_moves({"loss": loss, "need": need, "lower": best,
                                     "err_lower": best_err, "q_inf_lower": q_inf_lo}, tol,
                                    floor=mode.tail_floor, share=1.0, ratio=True)
            if not np.any(moves > 1.0):
                break
            worst = int(np.argmax(moves)) + (min(need, loss.size) - moves.size)
        region = slice(int(bad[0]), None)
        fin = np.isfinite(best_err[region])
        if worst < 0:
            worst = int(bad[0]) + int(np.argmax(np.where(fin, best_err[region], -1.0)))
        used = float(which[worst])
        pos = sorted(x for x in thetas if x > 0.0)
        wrapped = float(wrap[region][fin].sum()) > 0.5 * float(best_err[region][fin].sum())
        if used <= 0.0:
            theta = 0.5 * pos[0]
        elif wrapped:
            smaller = [x for x in pos if x < used]
            theta = math.sqrt(used * smaller[-1]) if smaller else 0.5 * used
        else:
            larger = [x for x in pos if x > used]
            theta = math.sqrt(used * larger[0]) if larger else 2.0 * used
        if any(abs(theta - x) <= 0.05 * max(theta, x) for x in thetas):
            break
        thetas = sorted([*thetas, theta])
        run("lower", [theta], best, best_err, which)
        memo.clear()
    # A sparse long run whose far tail is one step's rare large loss: the binomial split of
    # its step measure (see _split_plan), each term tilted to its own centre; every point
    # takes the split's value where its error bound is smaller
    split = None
    if len(comps) == 1 and len(thetas) > 1 and mgf is not None:
        tail, etail = lower_tails()
        # (on the bulk grid only where the round-off would move ε by more than tol: the split
        # costs seconds, and dpsgd(0.7, 1e-4, 10⁶) is 0.018 % wide at δ = 1e-10 without it)
        if np.any((etail > 1e-4 * tail) & (tail > mode.tail_floor)) and (
            tol is None or np.any(_roundoff_moves(
                {"loss": loss, "need": need, "lower": best, "err_lower": best_err,
                 "q_inf_lower": q_inf_lo}, tol, floor=mode.tail_floor, share=1.0))):
            # (on the bulk grid, where the round-off's reach is below LAZY_SPLIT_DELTA, the
            # caller answers the δ above it without the split, and splits for queries below)
            if split_ok or tol is None or _untilted_reach(
                    {"loss": loss, "need": need, "lower": best, "err_lower": best_err,
                     "q_inf_lower": q_inf_lo}, tol, share=1.0) > LAZY_SPLIT_DELTA:
                split = _split_plan(comps[0], mode.tail_floor)
            else:
                out["split_wanted"] = _split_plan(comps[0], mode.tail_floor) is not None
    split_terms: list[tuple[list[_Piece], float, list[float]]] = []
    if split is not None and mgf is not None:
        i_r, n_k, log_r = split
        c0 = comps[0]
        bulk, rare = _Piece(c0, slice(0, i_r), 0), _Piece(c0, slice(i_r, None), 0)
        top = float(loss[min(need, N) - 1])
        n0 = c0.count
        stats: dict[int, tuple[np.ndarray, float]] = {}
        # (the t grid reaches small t (_t_up): a term with two rare steps of dpsgd(1.1, 1e-4,
        # 100), whose loss density is log-convex up to ℓ ≈ 3, needs t ≈ 5–20 to be centred;
        # from t = 43 on only its untilted round-off bound was of use, 3e-22 at ε = 1 where δ
        # is 1e-26)

        def piece_stats(x: _Piece) -> tuple[np.ndarray, float]:
            """The piece's log-MGF bound on the t grid and its mean loss (to place tilts)."""
            if id(x) not in stats:
                m = float(x.w.sum())
                stats[id(x)] = (x.log_mgf(mgf[0]),
                                float((x.w * x.loss[: x.w.size]).sum()) / m if m > 0 else 0.0)
            return stats[id(x)]

        def add_term(counts: list[tuple[_Piece, int]], log_c: float) -> None:
            parts = [x.counted(k) for x, k in counts if k > 0]
            lm_k = log_c + np.sum([k * piece_stats(x)[0] for x, k in counts if k > 0], axis=0)
            mean_k = sum(k * piece_stats(x)[1] for x, k in counts if k > 0)
            mass = float(lm_k[0])  # (≈ log of the term's mass: t small)
            levels = tuple(sorted({x for x in (1e-2 * math.exp(min(mass, 0.0)),
                                               *mode.tilt_levels)
                                   # (a term whose mass underflows: math.log(0) raised)
                                   if x > 0.0 and math.log(x) < mass},
                                  reverse=True))
            ths = _chernoff_tilts(mgf[0], lm_k, mean_k, top, levels)
            # (on a ladder of ratio 1.1, so that terms share their pieces' transforms)
            snap = sorted({0.0, *(1.1 ** round(math.log(x) / math.log(1.1)) for x in ths
                                  if x > 0.0)})
            split_terms.append((parts, log_c, snap))

        # The term with one rare step is split once more, by the rare step's loss, into pieces
        # each holding 1e-4 of the mass above it: the rare part's density can be log-convex in
        # ℓ over a long range (σ = 0.8: from its start at ℓ ≈ 0.04 up to ℓ ≈ 3), where no tilt
        # centres the term, and each such piece is narrow enough for its own tilts. (The terms
        # with k ≥ 2 rare steps are ~n·B ≤ 1e-6 of the k = 1 term where they matter.)
        w_r = np.maximum(c0.w[i_r:], 0.0)
        above_r = np.cumsum(w_r[::-1])[::-1]
        cuts = [0]
        while len(cuts) <= 16:
            nxt = np.flatnonzero(above_r < 1e-4 * above_r[cuts[-1]])
            nxt = nxt[nxt > cuts[-1]]
            if nxt.size == 0 or n0 * float(above_r[nxt[0]]) < 1e-3 * mode.tail_floor:
                break
            cuts.append(int(nxt[0]))
        subs = [_Piece(c0, slice(i_r + lo, i_r + hi if hi is not None else None), 0)
                for lo, hi in zip(cuts, [*cuts[1:], None], strict=True)]
        for k in range(n_k + 1):
            log_c = math.lgamma(n0 + 1) - math.lgamma(k + 1) - math.lgamma(n0 - k + 1)
            if k == 1 and len(subs) > 1:
                for sub in subs:
                    add_term([(bulk, n0 - 1), (sub, 1)], log_c)
            else:
                add_term([(bulk, n0 - k), (rare, k)], log_c)

    def split_side(side: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """The split composition's values, error bounds and wrap-around part per point: the
        sum over the terms of each term's value with the smallest bound over its tilts."""
        lower = side == "lower"  # (the wrap-around part is the lower side's only)
        tot, err, wrp = np.zeros(N), np.zeros(N), np.zeros(N) if lower else None
        # (memory: the transforms of the pieces several terms share are kept, those of a
        # piece of one term and the terms' wrap-around bounds go when the term is done: they
        # took 0.7 GB at σ = 0.6, p = 1e-5, T = 10⁶)
        cache: dict[Any, Any] = {}
        shared = {id(x) for piece in (bulk, rare) for x in (piece.w, piece.wo, piece.wc)}
        for i_t, (parts, log_c, ths) in enumerate(split_terms):
            b_v, b_e = np.zeros(N), np.full(N, np.inf)
            b_w = np.zeros(N) if lower else None
            for theta in ths:
                vals, e_m = one_tilt(side, theta, parts, log_c, cache)
                vals[need:] = 0.0
                e_m[need:] = 0.0
                take = e_m < b_e
                b_v[take], b_e[take] = vals[take], e_m[take]
                a_t = alias.pop((theta, id(parts)), None) if theta > 0.0 else None
                if b_w is not None:
                    b_w[take] = a_t[take] if a_t is not None else 0.0
                del vals, e_m, take, a_t
            later = {th for _, _, t in split_terms[i_t + 1:] for th in t}
            for key in [k for k in cache if k[0] not in shared or k[1] not in later]:
                del cache[key]
            tot += b_v
            err += b_e
            if wrp is not None:
                wrp += b_w
            del b_v, b_e, b_w
        # (the sum of K + 1 terms: rounding ≤ K u per point, relative to the sum of sizes)
        err += len(split_terms) * _U * np.abs(tot) * 1.01
        return tot, err, wrp

    def use_split(side: str, best: np.ndarray, best_err: np.ndarray) -> bool:
        s_v, s_e, s_w = split_side(side)
        take = s_e < best_err
        best[take], best_err[take] = s_v[take], s_e[take]
        if s_w is not None:
            wrap[take] = s_w[take]
        return bool(take.any())

    r_lower = 0.0  # mass of the split's dropped terms, moved to the lower side's +∞ atom
    for key in [k for k in alias if split_terms and k != max(thetas)]:
        # (memory, at the split's peak: the wrap-around bounds of the tilts in use are read
        # again only by the optimistic side, which recomputes them; the steepest's is read
        # below)
        del alias[key]
    if split_terms and use_split("lower", best, best_err):
        memo.clear()
        r_lower = math.exp(split[2]) if split is not None else 0.0
        q_inf_lo = min(1.0, add_up(q_inf_lo, r_lower * (1.0 + 1e-12)))
    # Where the error is still large next to the mass above, and mostly wrap-around from above
    # the window (a heavy tail whose tilted composition lies far beyond it), a longer FFT
    # (more zero padding) would shrink it: the caller may re-run with ``pad`` doubled.
    # (or where points are still bad and the steepest tilt lost them to its wrap-around alone:
    # padded, steeper tilts serve there. dpsgd(0.8, 1e-4, 10⁵): the δ error bound at ε = 0.5
    # is 0.33 % of δ instead of 1 %)
    # (compose_numeric pads only where the error moves ε by more than tol)
    steep = max(thetas)
    out["wrap_limited"] = out["wrap_bound"] = False
    if steep > 0.0 or wrap.any():  # (else no wrap-around bound is in use anywhere)
        tail, etail = lower_tails()
        memo.clear()
        wtail = np.cumsum(wrap[::-1])[::-1]
        bad_now = (etail > 1e-4 * tail) & (tail > mode.tail_floor)
        del tail
        out["wrap_limited"] = steep > 0.0 and bool(np.any(bad_now)) and float(
            np.mean(alias[steep][bad_now] > best_err[bad_now])) > 0.5
        out["wrap_bound"] = bool(np.any(bad_now & (wtail > 0.5 * etail)))
    out["tilts"] = thetas
    if split is not None:
        out["split"] = {"index": split[0], "terms": split[1] + 1, "dropped": r_lower}
    out["lower"], out["err_lower"] = best, best_err
    final_thetas = list(thetas)

    def upper_side() -> None:  # the optimistic side's FFTs, run when the upper curve is built
        b, b_err = np.zeros(N), np.full(N, np.inf)
        run("upper", final_thetas, b, b_err, np.zeros(N))
        if split_terms:  # (the terms left out only lower the optimistic δ: nothing to charge)
            use_split("upper", b, b_err)
        out["upper"], out["err_upper"] = b, b_err

    out["_upper_side"] = upper_side
    # +∞ atoms: lower 1 − Π(1 − q_i)^n; upper Π T_i^n − Π F_i^n for the sub-probability measures
    out["q_inf_lower"] = q_inf_lo
    if any(c.unbounded for c in comps):
        # an unbounded loss has δ(ε) > 0 at every ε, even where its tail underflows float64:
        # keep the smallest positive atom, so that ε(0) = ∞ and δ never reads 0
        out["q_inf_lower"] = max(out["q_inf_lower"], TINY)
    log_f = 0.0
    grow = 0.0
    upper = [(c.wc, c.qc_inf) if c.coupled else (c.wo, c.qo_inf) for c in comps]
    for c, (w, qi) in zip(comps, upper, strict=True):
        f = float(w.sum())
        if f <= 0.0:
            log_f = -math.inf
            break
        log_f += c.count * math.log(f)
        grow += c.count * math.log1p(qi / f)
    if log_f == -math.inf:
        expo = sum(c.count * math.log(qi) if qi > 0 else -math.inf for c, (_, qi) in
                   zip(comps, upper, strict=True))
        out["q_inf_upper"] = math.exp(expo)
        size = abs(expo)
    else:
        # Π T^n − Π F^n = e^{log F + grow} (1 − e^{−grow}), T = F + q_inf: no overflow of
        # e^{grow} next to an underflowing F^n (a step with Q-mass 0.9997 at +∞ composed 104
        # times raised OverflowError)
        out["q_inf_upper"] = math.exp(min(log_f + grow, 0.0)) * -math.expm1(-grow)
        size = abs(log_f) + abs(grow)
    # (rounded down, the optimistic side's: the exponent's absolute rounding is at most
    # 2u·Σ n (|log f| + |log1p|) ≤ 2u (|log F| + grow + ...), relative in e^x; expm1 and the
    # product a few u more)
    if out["q_inf_upper"] > 0.0 and math.isfinite(size):
        out["q_inf_upper"] *= max(1.0 - 4.0 * _U * (size + len(comps) + 8), 0.0)
    # the slack lifts the composed δ by at most Σ_i s_i × the mass of the other steps, each
    # optimistic measure's at most 1 + s_i (its clamped charges add mass): S e^S in all, not S
    # (a Poisson curve with charges of 8.8e-5 a step, composed twice, read its optimistic δ
    # s² = 7.8e-9 above the truth; see _slack_steps)
    s_tot = sum(c.count * c.slack for c in comps if not c.coupled)
    # the optimistic measures' losses read up to d_i above the true ones (see _optimistic): the
    # upper curve reads the composed losses lower by their sum (``loss_err``)
    d_opt = math.fsum(c.count * (c.loss_shift if c.coupled else c.loss_err)
                      for c in comps) * (1.0 + 1e-12)
    out["slack"] = s_tot * math.exp(min(s_tot, 700.0)) * (1.0 + 1e-12) if s_tot > 0.0 else 0.0
    if out["slack"] > 0.0:

        def slack_steps(floor: float) -> tuple[np.ndarray, np.ndarray]:
            """The optimistic side's lift per ε (run when the upper curve is built). ``floor``:
            the smallest δ this grid answers (0: every δ)."""
            slack = out["slack"]
            # where the slack is charged matters far in the tail: δ there is far below the sum
            p_inf = sum(c.count * max(c.q_inf, c.qc_inf, c.qo_inf) for c in comps)
            edges = np.linspace(float(loss[0]), float(loss[-1]), 513)
            above = None
            # (the rounds below only where the total slack could move an answer of this grid:
            # not where S e^S is below 1e-2·tol of the smallest δ it answers, which lowers
            # the optimistic δ there by 1e-5 of itself at most. Laplace(0.1)^1000: S = 1.1e-13
            # on a grid that answers δ ≥ 3.4e-8; the rounds were a fifth of its time)
            far = tol is None or floor <= 0.0 or slack * math.exp(min(slack, 1.0)) > (
                1e-2 * tol * floor)
            if slack > 1e-30 and far and not any(c.coupled for c in comps):
                above = _tail_from_profile(out["lower"][:need], out["err_lower"][:need],
                                           loss[:need], out["q_inf_lower"] + tau, slack)
            mgf_s = mgf if mode.tilt_levels else _mgf_grid(comps)
            steps = np.minimum(_slack_steps(comps, mgf_s, p_inf, edges, above, d_opt), slack)
            for _ in range(2 if above is not None else 0):
                # the excess of any sum of the steps (but one) is at most the lift just
                # bounded: charged where it sits instead of as the total slack S e^S, the tail
                # bound falls by the factor n·s each round (dpsgd(0.8, 1e-5, 10⁶): S = 8.9e-7
                # floored the optimistic δ near 1e-13, so ε(1e-20) read [0.109, 1.22])
                j = np.searchsorted(edges, loss[:need], side="right") - 1
                lift = np.where(j >= 0, steps[np.maximum(j, 0)], slack)
                above = _tail_from_profile(out["lower"][:need], out["err_lower"][:need],
                                           loss[:need], out["q_inf_lower"] + tau, slack,
                                           lift=lift)
                steps = np.minimum(steps, _slack_steps(comps, mgf_s, p_inf, edges, above,
                                                       d_opt))
            return edges, steps

        out["_slack_steps"] = slack_steps
    n_a = sum(c.count for c in comps if c.coupled)
    out["shift"] = _coupling_shift(n_a, h)
    out["loss_err"] = d_opt
    # (the pessimistic side's losses read higher by the steps' loss errors: _Component)
    out["loss_up"] = math.fsum(c.count * c.lower_shift for c in comps) * (1.0 + 1e-12)
    # the coupling fails with probability η, or where a coupled step's loss left its grid
    out["eta"] = ETA + sum(c.count * c.trunc for c in comps if c.coupled) if n_a else 0.0
    return out


def _curve_from_atoms(res: dict[str, Any], side: str) -> PiecewiseLinear:
    """The curve of the δ-profile of Q-atoms (losses l_k, masses w_k) plus a +∞ atom.

    lower: round-off mass added at every point, wrap-around tail mass added to the +∞ atom;
    upper: round-off mass removed, the curve raised by the wrap-around tail and the slack.
    """
    h = res["h"]
    if side == "upper" and "upper" not in res:
        res.pop("_upper_side")()  # (computed on first use)
    e_pt = res[f"err_{side}"]  # proved round-off bound per grid point
    loss = res["loss"]
    # A grid loss origin + k h is computed with a few ulps of error (and an atom aligned to
    # the grid sits within them of its true loss): the lower side reads every loss that much
    # higher (δ up), the upper side lower (δ down)
    eta = 16.0 * _U * max(float(np.max(np.abs(loss))), 1.0)
    # For a composition of bounded losses (no +∞ atom, no Gaussian), the mass the window and
    # the grid do not hold lies at or below the composed largest loss ``top``: the lower side
    # places it there instead of at +∞ (moving Q-mass up raises δ at every ε), so that δ(ε) = 0
    # beyond it and ε(δ = 0) is finite (it was ∞ from a +∞ atom of 1e-47).
    top = res.get("top") if side == "lower" else None
    if side == "lower":
        w = res["lower"] + e_pt
        q_inf = add_up(res["q_inf_lower"], res["tau"] if top is None else 0.0)
        lift = 0.0
        eta = eta + res.get("loss_up", 0.0)
        loss = loss + eta
    else:
        w = res["upper"] - e_pt
        loss = loss - res["shift"] - res.get("loss_err", 0.0) - eta
        q_inf = res["q_inf_upper"]
        lift = res["tau"] + res["slack"] + res["eta"]
    # The positions past the window (power-of-two rounding, padding) hold no mass on either
    # side (``run`` zeroes them): only the window's are read, so that padding does not coarsen
    # the blocks below
    n_win = min(int(res.get("need", w.size)), w.size)
    w, loss = w[:n_win], loss[:n_win]
    # On very large grids, merge blocks of k grid points: a block's mass moves to its highest
    # loss (lower curve: pessimistic) or its lowest (upper curve: optimistic).
    k = max(1, -(-w.size // MAX_BREAKPOINTS))
    if k > 1:
        pad = (-w.size) % k
        w = np.concatenate([w, np.zeros(pad)]).reshape(-1, k).sum(axis=1)
        first = loss[0] + h * k * np.arange(w.size)
        loss = first + (h * (k - 1) if side == "lower" else 0.0)
    # w is a proved bound on a nonnegative mass on its side (+ or − the round-off bound), so
    # negative values can be read as 0 on either side
    # Masses below 1e-290 (a deep tilt's round-off bound can be denormal) would make P-masses
    # and losses garbage: the lower side moves them to the +∞ atom (pessimistic), the upper
    # side drops them (a lower δ: optimistic)
    tiny = (w > 0) & (w < 1e-290)
    if tiny.any() and side == "lower":
        q_inf = add_up(q_inf, float(w[tiny].sum()) * (1.0 + w.size * _U))
    nz = w >= 1e-290
    if not nz.all():
        w, loss = w[nz], loss[nz]
    if top is not None:  # (the window's tail mass τ, and below what the grid does not hold)
        top_loss = max(float(top) * (1.0 + 8.0 * _U) + eta, float(loss[-1]) if loss.size else 0.0)
        w = np.append(w, float(res["tau"]) + 1e-300)
        loss = np.append(loss, top_loss)
    w, loss = w[::-1], loss[::-1]  # decreasing loss
    n = w.size
    with np.errstate(under="ignore"):
        p = w * np.exp(np.minimum(-loss, 700.0))
    # δ and ε come from the masses themselves (losses beyond 700 included); the breakpoints,
    # built from running sums, serve evaluation
    masses = (p, w, loss)
    # (the +∞ atom first: δ and ε need only the masses and it; the breakpoints, for evaluating
    # the curve, are built on first use)
    tot_w = float(w.sum())
    unacc = 1.0 - q_inf - tot_w
    if top is not None and unacc > 0.0:  # at the largest loss (see above), rounded up
        w[0] += unacc * (1.0 + 4.0 * _U)
        tot_w = float(w.sum())
        unacc = 0.0
    if side == "lower" and unacc > 0.0:
        # Q-mass the grid does not hold (below the window) goes to the +∞ atom: placed at the
        # bottom it would join the P-mass beyond the grid in one segment of finite loss, which
        # is not pessimistic for the inverse (f⁻¹'s top losses)
        q_inf = add_up(q_inf, unacc)
        unacc = 0.0
    steps = None
    if side == "upper" and "_slack_steps" in res:  # (computed on first use)
        res["slack_steps"] = res.pop("_slack_steps")(float(res.get("answer_floor", 0.0)))
    if side == "upper" and "slack_steps" in res:
        e, v = res["slack_steps"]
        steps = (e, v + (res["tau"] + res["eta"]))

    def breakpoints() -> PiecewiseLinear:
        return _breakpoints(p, w, n, q_inf, unacc, lift, tot_w, side)

    return _LazyCurve(
        breakpoints, masses=masses, side=side, offset=lift if side == "upper" else 0.0,
        mass_q_inf=q_inf, offset_steps=steps,
    )


_LAZY = ("_a", "_b", "_ac", "_bc", "_qc", "_qinf")


class _LazyCurve(PiecewiseLinear):
    """An engine curve whose breakpoints (for evaluation and plotting) are built on first use;
    δ and ε come from the masses (``_Profile``) and never need them."""

    def __init__(self, build: Any, *, masses: Any, side: str, offset: float, mass_q_inf: float,
                 offset_steps: Any) -> None:
        self.__dict__.update(
            kind="exact", _name=None, _given_masses=masses, _side=side, _offset=float(offset),
            _offset_steps=offset_steps, _bound=True, _mass_qinf=float(mass_q_inf),
            _mass_rtol=0.0, _self_inverse=False, _inverse_of=None, _build=build,
        )

    def __getattr__(self, name: str) -> Any:
        if name in _LAZY and "_build" in self.__dict__:
            full = self.__dict__.pop("_build")()
            for k in _LAZY:
                self.__dict__[k] = full.__dict__[k]
            return self.__dict__[name]
        raise AttributeError(name)

    def __getstate__(self) -> dict[str, Any]:
        self._a  # noqa: B018 - build before pickling (the builder is a closure)
        return self.__dict__


def _breakpoints(p: np.ndarray, w: np.ndarray, n: int, q_inf: float, unacc: float, lift: float,
                 tot_w: float, side: str) -> PiecewiseLinear:
    """The breakpoints of ``_curve_from_atoms``'s curve, clipped to a valid trade-off curve."""
    a = np.zeros(n + 1)
    np.cumsum(p, out=a[1:])
    # 1 − α from the bottom: the P-mass not on the grid (at loss −∞) plus tail sums, so that the
    # curve near α = 1 keeps its relative precision; the few ulps of 1 in the first term are
    # charged on the curve's side (1 − α up moves the lower curve left, down the upper right)
    # (when the masses overshoot 1 — the lower side adds its round-off bound at every point,
    # which e^{−ℓ} amplifies at low losses — the curve is cut where α passes 1 and 1 − α is
    # only needed below the cut: it is then 1 − a itself)
    # (numpy's pairwise sum: error ≤ ⌈log₂ n⌉ u Σp, Higham §4.2, charged with the guard)
    total = float(p.sum())
    ac = np.zeros(n + 1)
    if total <= 1.5:
        np.cumsum(p[::-1], out=ac[-2::-1])
        ac += 1.0 - total
        guard = (math.ceil(math.log2(max(n, 2))) + 4) * 1.5 * _U
    else:
        ac = 1.0 - a
        guard = 4.0 * _U
    ac += guard if side == "lower" else -guard
    qc = np.zeros(n + 1)
    np.cumsum(w, out=qc[1:])
    b = np.zeros(n + 1)
    np.cumsum(w[::-1], out=b[-2::-1])  # Q-mass at or below each breakpoint's loss
    # (the upper curve reads β from the bottom; where its measure holds more Q than
    # 1 − q_inf — rounding of the composed masses — β from the top, b + unacc, would sit
    # below the truth near α = 1, where β itself is tiny, and end in a P-only segment that a
    # mixture's inverse reads as the largest loss −log(1 − p). Raising an upper curve keeps it
    # above the truth.)
    b += (max(unacc, 0.0) if side == "upper" else unacc) + lift
    # The running sums carry their rounding: the k-th of a recursive sum of nonnegative terms
    # is within (k − 1)u of its value, relatively (Higham 2002, §4.2), and each p_j within 2u.
    # Each breakpoint moves by that bound on the curve's side (the lower curve left and down,
    # the upper right and up), so the interpolant stays on its side of the masses' curve.
    k = np.arange(n + 1, dtype=float)
    s = 1.0 if side == "upper" else -1.0
    # (and in absolute terms where the sums are subnormal: each P-mass and each partial sum
    # rounds there to within TINY/2, a relative u no longer; the upper curve of
    # compose((compose(T(P, Q), repeat=2), 2), (randomized_response(700, 5).inverse(), 1),
    # numeric=True) had its kink at α = 5.3803873051240975e-316 one TINY to the left, and
    # read f(5.38038723e-316) 0.019701232553793076 below the exact 0.019701232696994826;
    # a sweep of engine compositions, seed 510296)
    a = np.maximum(a * (1.0 + s * (k + 3.0) * _U) + s * k * TINY, 0.0)
    ac = ac * (1.0 - s * (n - k + 3.0) * _U)
    lg = math.ceil(math.log2(max(n, 2)))
    # (the lower curve's β allowance is (n + 3)u|b| at every breakpoint, not the tighter
    # (n − k + 3)u|b| of its own running sum: a factor that shrinks with k made it rise by
    # ~1e-16 where β is flat next to a +∞ atom; b is monotone, so b·(1 − c) stays monotone)
    kk = np.zeros(1) if side == "lower" else k
    b = b + s * ((n - kk + 3.0) * _U * np.abs(b) + (lg + 4.0) * _U * max(tot_w, 1.0))
    qc = qc * (1.0 - s * (k + 3.0) * _U)
    return _valid_curve(a, ac, b, qc, q_inf - lift, side)


def _valid_curve(
    a: np.ndarray, ac: np.ndarray, b: np.ndarray, qc: np.ndarray, q_inf: float, side: str
) -> PiecewiseLinear:
    """Clip a convex decreasing PL curve to a valid trade-off curve on its side of the truth.

    Breakpoints (a_k, b_k) with 1 − a_k = ac_k and 1 − b_k = q_inf + qc_k (kept apart for
    precision: near α = 1 the complements ac carry the curve); a may pass 1 (ac < 0), b may leave
    [0, 1]. Applies max(·, 0), then the convex envelope of min(·, 1 − α) on [0, 1].
    """
    # cut where α passes 1 or β passes 0 (the curve is decreasing, so both cut a prefix)
    bad = (ac < 0.0) | (b < 0.0)
    if bad.any():
        k = int(np.argmax(bad))
        if k == 0 and side == "lower":
            # nothing valid remains: the lower bound is the curve β ≡ 0 (never the identity,
            # which would claim perfect privacy)
            a, ac, b, qc = np.array([0.0]), np.array([1.0]), np.array([0.0]), np.array([0.0])
            q_inf = 1.0
        elif k == 0:  # the upper bound: the identity lies above every curve
            a, ac, b, qc = np.array([0.0]), np.array([1.0]), np.array([1.0]), np.array([0.0])
            q_inf = 0.0
        else:
            a0, b0, a1, b1 = a[k - 1], b[k - 1], a[k], b[k]
            c0, c1 = ac[k - 1], ac[k]
            t_a = c0 / (c0 - c1) if c1 < 0.0 else math.inf
            t_b = b0 / (b0 - b1) if b1 < 0.0 else math.inf
            lo_side = side == "lower"
            if t_b <= t_a:
                # β reaches 0 here: exactly 0 (an interpolated b0 + t (b1 − b0) keeps an ulp of b0,
                # 1e-30 next to a β of 1e-14, which lifted the chord to (1, 0) above the exact
                # curve near α = 1); the crossing's α rounded on the curve's side (the lower
                # curve reaches 0 earlier, the upper later)
                t = min(t_b * (1.0 - 4.0 * _U) if lo_side else t_b * (1.0 + 4.0 * _U), 1.0)
                a_new, ac_new = min(a0 + t * (a1 - a0), 1.0), max(c0 + t * (c1 - c0), 0.0)
                b_new = 0.0
            else:  # α reaches 1 here: the value there rounded on the curve's side
                t = t_a
                r = 1.0 - 4.0 * _U if lo_side else 1.0 + 4.0 * _U
                b_new = max(b0 + t * (b1 - b0), 0.0) * r
                a_new, ac_new = 1.0, 0.0
            a = np.append(a[:k], a_new)
            ac = np.append(ac[:k], ac_new)
            b = np.append(b[:k], b_new)
            qc = np.append(qc[:k], qc[k - 1] + t * (qc[k] - qc[k - 1]))
    # start: if β_0 > 1 (q_inf < 0), go from (0, 1) along the tangent to the curve
    if q_inf < 0.0:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            slope = np.where(a > 0, -(q_inf + qc) / a, np.inf)  # (β − 1)/α
        k1 = int(np.argmin(slope))
        a = np.insert(a[k1:], 0, 0.0)
        ac = np.insert(ac[k1:], 0, 1.0)
        b = np.insert(b[k1:], 0, 1.0)
        qc = np.insert(q_inf + qc[k1:], 0, 0.0)
        q_inf = 0.0
    # end: tangent from (1, 0) to the curve (also handles min with 1 − α and max with 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(ac > 0.0, b / ac, np.inf)
    k2 = int(np.argmin(ratio))
    a = np.append(a[: k2 + 1], 1.0)
    ac = np.append(ac[: k2 + 1], 0.0)
    b = np.append(b[: k2 + 1], 0.0)
    qc = np.append(qc[: k2 + 1], 1.0 - q_inf)
    # segment lengths: in α where α ≤ 1/2, in 1 − α above (where α itself cannot resolve them)
    d = np.where(a[1:] > 0.5, ac[:-1] - ac[1:], np.diff(a))
    if (d <= 0).any():
        # Zero-length segments: P-mass that underflowed next to Q-mass (losses ≳ 700). The lower
        # curve keeps the last point of each run (the Q-mass becomes +∞ loss: pessimistic), the
        # upper curve the first (a higher curve: optimistic).
        if side == "lower":
            keep = np.append(d > 0, True)
        else:
            keep = np.insert(d > 0, 0, True)
        a, ac, b, qc = a[keep], ac[keep], b[keep], qc[keep]
        if a[0] > 0:  # the lower curve dropped (0, ·): restore it
            a, ac = np.insert(a, 0, 0.0), np.insert(ac, 0, 1.0)
            b, qc = np.insert(b, 0, b[0]), np.insert(qc, 0, qc[0])
        if side == "lower" and qc[0] > 0:  # a vertical drop at α = 0 is a +∞ atom
            q_inf, qc = q_inf + qc[0], qc - qc[0]
    return PiecewiseLinear(a, b, alpha_c=ac, beta_c=q_inf + qc, q_inf=q_inf, q_cum=qc)


# ------------------------------------------------------------------------------ entry point
def _symmetric_types() -> tuple[type, ...]:
    from .families import EpsDelta, Gaussian, Identity, Laplace
    from .operations import Subsampled

    return (Gaussian, EpsDelta, Identity, Laplace, Subsampled)


def compose_numeric(
    items: list[tuple[TradeOff, int]], *, tol: float, grid_step: float | None,
    deep: bool = False, tilted: bool = False, split: bool = False,
    eps_floor: float | None = None, max_need: int | None = None, copies: int = 1,
    stage: bool = False,
) -> TradeOff:
    """The certified numerical composition of ``items`` ((curve, repeat count) pairs).

    Parameters
    ----------
    items : list of (TradeOff, int)
        Distinct curves and how often each occurs.
    tol : float
        Target relative width of the ε bracket; chooses the grid step (see the module docstring).
    grid_step : float or None
        A fixed grid step instead (the bracket is certified for any step).
    deep : bool
        Build the grid for the far tail at once (δ(ε) within 1 % down to δ = 1e-30). By default
        the grid is built for the bulk (the ε bracket within ``tol`` from ε_ref, about
        δ = 1e-3, down to δ = :data:`fdp.numeric.DEEP_DELTA`; at larger δ, where ε is small,
        the width stays about the same in absolute terms), and the result rebuilds itself on the
        deep grid
        the first time a query needs a smaller δ or its ``lower``/``upper`` curves are taken
        (by the user, a plot or an operation). A fixed ``grid_step`` is always deep.
    eps_floor : float or None
        With ``deep``: the grid serves ε ≥ eps_floor only (the far tail), its step sized for the
        width there (:meth:`fdp.numeric.Bracketed._step_tail` keeps the bulk grid beside it).
    max_need, copies : int; stage : bool
        Internal (:func:`_staged`): raise :class:`_StageMiss` if the planned window needs more
        points than ``max_need``; the result will be composed ``copies`` times (its bulk grid
        leaves out 1/copies of the usual tail mass); ``stage``: the items are the inner
        stages' curves (see :func:`_plan`).

    Returns
    -------
    TradeOff
        A :class:`~fdp.numeric.Bracketed` curve with ``lower ≤ exact ≤ upper``, or an
        approximation if any input is one (composing an approximation gives an approximation).

    Examples
    --------
    >>> import fdp
    >>> h = compose_numeric([(fdp.Laplace(0.1), 1000)], tol=1e-3, grid_step=None)
    >>> lo, hi = h.epsilon_bracket(1e-6)
    >>> bool(lo <= 18.950287 <= hi), bool(hi - lo <= 1e-3 * hi)
    (True, True)
    """
    approx = any(c.kind == "approximation" for c, _ in items)
    lower_items = [(c if c.kind == "approximation" else c.lower, n) for c, n in items]
    if not approx and any(_vanishes(c) for c, _ in lower_items):
        return _revealing(items)
    upper_items = [(c if c.kind == "approximation" else c.upper, n) for c, n in items]
    mode = DEEP if deep or approx or grid_step is not None else (FAST if tilted else FAST0)
    if copies > 1 and mode is not DEEP:
        # (an inner stage of _staged, composed ``copies`` times: the mass its window and its
        # steps leave out adds up over the copies, so each leaves out a share)
        mode = mode._replace(window_tail=mode.window_tail / copies,
                             tail_floor=mode.tail_floor / copies,
                             trunc_budget=(mode.trunc_budget or 0.0) / copies or None)
    comps, h, plan = _plan(lower_items, upper_items, tol, grid_step, mode,
                           eps_floor if mode is DEEP else None, stage=stage)
    # (a bulk grid over the memory cap stays a bulk grid: re-planned coarser below, it is
    # tighter at the δ it answers than the deep grid at the same cap, whose components and
    # window reach 1e-42 and 1e-36 — dpsgd(0.5, 1e-4, 10⁷) at δ = 1e-5: 0.20 % instead of
    # 0.38 %, in 5.6 s instead of 7.9 s — and a deeper query builds the deep grid then)
    win = _window(comps, h, mode.window_tail)
    need = win[1]
    if max_need is not None and (need > max_need or plan.get("floored")):
        raise _StageMiss
    if mode is not DEEP and need >= STAGE_NEED and len(items) == 1 and (
            items[0][1] >= STAGE_MIN) and _stage_fits(comps[0], h, need, mode):
        staged = _staged(items, tol, split=split, need=need, step=h)
        if staged is not None:
            return staged
    if need > MAX_GRID:
        # the composed window must fit MAX_GRID points: otherwise coarsen the step
        plan["grid_capped"] = True
        got = _capped_plan(lower_items, upper_items, tol, grid_step, h, need, mode)
        if got is None:
            if approx:  # (no bound to fall back on: an approximation has no certified side)
                raise ValueError(
                    f"no grid of at most {MAX_GRID} points (fdp.pld.MAX_GRID) holds this "
                    f"composition of approximations (the nearest plan needs {need} points)"
                )
            return _no_grid(items, tol, need)
        comps, h, capped = got
        win = _window(comps, h, mode.window_tail)
        plan["predicted_width"] = capped["predicted_width"]
        plan["coupled"] = capped["coupled"]  # (the modes of the re-planned components)
    floor_hit = any(c.loss.size >= MAX_COMPONENT for c in comps) or bool(
        plan.get("grid_capped")) or bool(plan.get("floored"))
    width = plan["predicted_width"] / max(plan["eps_ref"], 1e-300)
    # (a bulk grid says nothing here: its queries report the width achieved at the δ asked,
    # ``capped_tol``, which a prediction at ε_ref overstated — dpsgd(0.5, 1e-5, 10⁶) warned of
    # 0.12 % and answered ε(1e-5) 0.016 % wide; the deep grid, which also serves curves that
    # no query checks, warns from its prediction)
    if grid_step is None and floor_hit and width > tol and mode is DEEP:
        warnings.warn(
            f"the grid is capped (memory); the ε bracket is predicted to be {width:.2%} wide "
            f"relative at ε ≈ {plan['eps_ref']:.4g}, more than tol = {tol:g}. The bracket is "
            "still certified. (Memory: doubling fdp.pld.MAX_GRID and fdp.pld.MAX_COMPONENT "
            "halves the grid step and about doubles the memory.)",
            AccuracyWarning,
            stacklevel=3,
        )
    if mode is FAST0 and win[1] > UNTILTED_MAX:
        mode = FAST  # (a long window's untilted round-off reaches far above the δ asked)
    extra = None if grid_step is not None or mode is DEEP else tol  # (more tilts: bulk grid)
    # (the binomial split of rare large losses: on the deep grid at once; on the bulk grid
    # only when asked, by a query below the reach of the grid without it, see _Resplit)
    split_ok = split or mode is DEEP
    res = _fft_compose(comps, h, mode=mode, tol=extra, split_ok=split_ok, window=win)
    pad, top_pad = 1, 2 if mode is DEEP else 4
    while (res["wrap_bound"] or res["wrap_limited"]) and 2 * res["N"] <= MAX_GRID and (
            pad < top_pad) and (
            _roundoff_moves(res, tol, floor=mode.tail_floor, share=1.0).any()):
        # (only where the round-off would move ε by more than tol itself: at 5 % of tol,
        # dpsgd(0.5, 1e-4, 1000) padded too, 1.1 → 5.7 s for a bracket already 8e-5 wide)
        # the far tail's error is wrap-around from above the window: pad the FFT (it changes
        # nothing but which proved bound is smallest; dpsgd(1, 0.003, 3000): ε(1e-20)
        # [4.1955, 4.2357] → [4.21797, 4.21807]), twice if twice was not enough
        # (the bulk grid's, δ ≥ 1e-12; measured on dpsgd(0.8, 1e-4, 10⁵) at a step of
        # 1.16e-5: ε(1e-10) 0.16 % → 0.05 % wide, ε(1e-12) 0.16 % → 0.02 %)
        pad *= 2
        res = _fft_compose(comps, h, pad=pad, mode=mode, tol=extra, split_ok=split_ok,
                           window=win)
    if all(not c.unbounded and c.q_inf == 0.0 and (c.w > 0).any() for c in comps):
        # the composed largest loss: each step's largest grid loss with lower-side mass (its
        # lower measure holds everything up to there; what lies above went to its q_inf)
        res["top"] = sum(c.count * float(c.loss[int(np.flatnonzero(c.w > 0)[-1])])
                         for c in comps)
    lower = _curve_from_atoms(res, "lower")
    names = _names(items)
    if approx:
        lower.kind = "approximation"
        lower._name = f"numeric[{names}] (approximation)"
        return lower
    info = {
        "symmetric": all(isinstance(c, _symmetric_types()) for c, _ in items),
        "grid_step": h, "grid_points": res["N"], "offsets": [c.offset for c in comps],
        "tail": res["tau"], "slack": res["slack"], "shift": res["shift"], "eta": res["eta"],
        "loss_err": res["loss_err"],
        "roundoff_bound": float(np.min(res["err_lower"])), "tilts": res["tilts"], **plan,
        "grid_mode": "deep" if mode is DEEP else "fast",
        # (queries then report the width achieved at their δ when it exceeds tol)
        "capped_tol": tol if grid_step is None and floor_hit else None,
        # the composed (curve, count) pairs: certified GDP bounds of the components compose
        # (fdp.clt.gdp_mu uses them for the tails the grid cannot see)
        "items": [(c, n) for c, n in items],
    }

    refine: Any = None if mode is DEEP else _Deepen(items, tol)
    if mode is FAST0:
        reach = _untilted_reach(res, tol)
        if reach > DEEP_DELTA:  # (else the untilted grid answers all the tilted one would)
            info["min_delta"] = reach
            refine = _Retilt(items, tol)
    elif mode is FAST and res.get("split_wanted"):
        reach = _untilted_reach(res, tol, share=1.0)
        if reach > DEEP_DELTA:  # (sparse long runs: dpsgd(0.6, 1e-5, 10⁶) 4 → 8 s split)
            info["min_delta"] = reach
            refine = _Resplit(items, tol)
    # the smallest δ this grid answers (its optimistic side's slack rounds depend on it; the
    # curves themselves, ``lower``/``upper``, come from the deep grid)
    res["answer_floor"] = 0.0 if refine is None else float(info.get("min_delta", DEEP_DELTA))
    return _engine_result(items, lower, lambda: _curve_from_atoms(res, "upper"), info, tol,
                          grid_step, refine)


#: a single curve repeated at least STAGE_MIN times whose one-stage bulk window needs at
#: least STAGE_NEED points is composed in two stages (:func:`_staged`); the deep grid stays
#: one stage
STAGE_MIN = 1 << 16
STAGE_NEED = 1 << 18
#: share of ``tol`` the inner stage may spend (its step is about √share of the one-stage step)
STAGE_SHARE = 0.5
#: each stage's window must need at most 1/STAGE_GAIN of the one-stage window's points
STAGE_GAIN = 8


def _stage_fits(comp: _Component, h: float, need: int, mode: _Mode) -> bool:
    """Whether :func:`_staged`'s inner stage is likely to fit its budget, from the one-stage
    component alone: the window of √n of its steps at this step h, over √STAGE_SHARE (the
    inner step is about √STAGE_SHARE·h), within need/STAGE_GAIN. (A sparse block, DP-SGD with
    p·√n ≲ 1, has the far tail of a few sampled steps in that window: it fails here in a
    millisecond instead of after the inner stage's plan, up to 0.5 s.)"""
    inner = copy.copy(comp)
    inner.count = math.isqrt(comp.count)
    k = _window([inner], h, mode.window_tail)[1]
    return k / math.sqrt(STAGE_SHARE) <= need / STAGE_GAIN


class _StageMiss(Exception):
    """A stage of :func:`_staged` would need more points than staging saves."""


def _staged(items: list[tuple[TradeOff, int]], tol: float, *, split: bool, need: int,
            step: float) -> Bracketed | None:
    """f^{⊗n} as (f^{⊗m})^{⊗q} ⊗ f^{⊗r}, n = qm + r, m ≈ √n, on the bulk grid; None where
    a stage's window needs more than 1/:data:`STAGE_GAIN` of the one-stage window's ``need``
    points (a sparse block: DP-SGD with p·m ≪ 1 has a narrow inner sum with a far tail), or
    the outer plan misses ``tol``: the caller then composes in one stage (at ``step``, which
    the result's ``info["screen_step"]`` keeps for DP-SGD's screens).

    The inner bracket is built tilted and with ``copies = q`` (its window and steps leave out
    1/q of the bulk grid's tail mass: q copies of a window's 1e-16 made the bracket at δ = 1e-12
    0.29 % wide, now 0.065 %).

    Composition is associative, and the engine's result for f^{⊗m} is a certified bracket
    lower_m ≤ f^{⊗m} ≤ upper_m (module docstring, 1.–4.), so composing those two curves q
    times by the engine brackets (f^{⊗m})^{⊗q} again: the pessimistic measure of lower_m has
    a profile above lower_m's, which is above f^{⊗m}'s (a lower curve has the larger δ), the
    optimistic measure of upper_m one below f^{⊗m}'s, and the profile of a composition is
    monotone in each measure (module docstring). Each stage is a certified bracket; the width
    adds up (the outer stage plans its step for what the inner's bracket leaves of tol).

    Why: one stage needs a step h with n·D(h) ≈ tol, D(h) ≈ h²/8 per smooth step, over a
    window of the n-fold sum's spread, so its grid grows like √n. The inner stage spends
    ``STAGE_SHARE``·tol at about the same step over a √m-times narrower window, the outer one
    composes q ≈ √n copies of a curve √m times wider, at a step about √m times coarser:
    both grids grow like n^{1/4}. DP-SGD σ = 2, p = 1e-3, T = 10⁶: 2¹⁹ points in one stage,
    2¹⁵ and 2¹⁴ in two.
    """
    c, n = items[0]
    m = math.isqrt(n)
    q, r = divmod(n, m)
    inner_tol = STAGE_SHARE * tol
    stages = [(m, q)] + ([(r, 1)] if r else [])
    parts: list[tuple[TradeOff, int]] = []
    budget = max(need // STAGE_GAIN, 1)
    with warnings.catch_warnings(record=True) as caught:  # (kept only if the stages are)
        warnings.simplefilter("always")
        try:
            for count, times in stages:
                # (tilted at once: the inner round-off is part of the outer bracket, and no
                # query of the inner curve can ask for more)
                inner = compose_numeric([(c, count)], tol=inner_tol, grid_step=None,
                                        tilted=True, split=split, max_need=budget,
                                        copies=times)
                if not isinstance(inner, Bracketed) or _missed(inner.info, inner_tol):
                    return None
                parts.append((Bracketed(inner._side_lower(), inner._side_upper(),
                                        name=f"{c!r}^{count}"), times))
            # (tilted at once too: a short window's tilt costs little, and an untilted outer
            # grid sent queries below its reach, δ ≈ 1e-8, through every stage again)
            outer = compose_numeric(parts, tol=tol, grid_step=None, tilted=True, split=split,
                                    max_need=budget, stage=True)
        except _StageMiss:
            return None
    if not isinstance(outer, Bracketed) or _missed(outer.info, tol):
        return None
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=4)
    info = dict(outer.info)
    info["items"] = [(c, n)]
    info["symmetric"] = isinstance(c, _symmetric_types())
    info["stages"] = {"inner": m, "outer": q, "rest": r, "inner_tol": inner_tol}
    info["screen_step"] = step
    refine: Any = outer._refine
    if refine is not None:  # (the same recipe for the whole composition: staged again)
        refine = type(refine)([(c, n)], tol)
    return _engine_result([(c, n)], outer._side_lower(), outer._upper, info, tol, None,
                          refine)


def _missed(info: dict[str, Any], tol: float) -> bool:
    """An engine result's plan was capped or floored (memory) or predicts a bracket wider
    than ``tol``."""
    return bool(info.get("grid_capped") or info.get("floored") or (
        info["predicted_width"] > tol * max(info["eps_ref"], 1e-300)))


def _engine_result(
    items: list[tuple[TradeOff, int]], lower: PiecewiseLinear, upper: Any,
    info: dict[str, Any], tol: float, grid_step: float | None, refine: Any,
) -> Bracketed:
    """The engine's :class:`~fdp.numeric.Bracketed` result for ``items``: its two sides, with
    the inverse, the closed-form tail bounds and the refinement recipe of the composition."""
    inverse = _EngineInverse(items, tol, grid_step)
    from .tails import SampledCountBound, TailBound

    result = Bracketed(
        lower, upper, name=f"numeric[{_names(items)}]", info=info,
        inverse=inverse, tail=TailBound.lazy(items), closed=SampledCountBound.of_items(items),
        refine=refine,
    )
    inverse.own = weakref.ref(result)  # the result, held weakly (no reference cycle)
    result._tol = tol if grid_step is None else None  # (a bracket query wider than this warns)
    return result


def _names(items: list[tuple[TradeOff, int]]) -> str:
    """The label of a composition: "f^n ⊗ g ⊗ …"."""
    return " ⊗ ".join(f"{c!r}" + (f"^{n}" if n > 1 else "") for c, n in items)


def _vanishes(c: TradeOff) -> bool:
    """f(0) = 0: f ≡ 0 (non-increasing, ≥ 0), all Q-mass at loss +∞ (perfectly revealing).

    A piecewise-linear curve is asked through its masses, which the grid composes: an engine
    curve whose finite losses are all large (G_35 ⊗ G_35: 450 to 2000) keeps them in its masses,
    but its breakpoints' P-masses q e^{−ℓ} lie below 1e-196 and its values read 0 from α = 0
    on, so a composition with it was the trivial bracket [0, Id] (ε ∈ [0, ∞], no warning)."""
    if isinstance(c, PiecewiseLinear) and c._offset == 0.0:
        _, q, loss = c._masses
        return not bool(np.any(q[np.isfinite(loss)] > 0.0))
    return float(np.asarray(c(np.zeros(1)), dtype=float).ravel()[0]) <= 0.0


def _revealing(items: list[tuple[TradeOff, int]]) -> TradeOff:
    """The composition when a component's lower curve is ≡ 0: composing with a perfectly
    revealing pair (P ⊥ Q) reveals (P ⊗ P' ⊥ Q ⊗ Q'), so the lower curve is ≡ 0; the upper is ≡ 0
    too when some upper curve is, and otherwise the identity (above every curve). (The grid
    has nothing to hold there: its FFT bounds read 0/0, and the lower curve's δ was NaN, read
    as ε = 0.)"""
    from .numeric import Bracketed

    zero = PiecewiseLinear.revealing()
    exact = any(_vanishes(c.upper if c.kind != "exact" else c) for c, _ in items)
    upper = zero if exact else PiecewiseLinear(np.array([0.0, 1.0]), np.array([1.0, 0.0]))
    names = _names(items)
    info = {"symmetric": False, "revealing": True, "items": [(c, n) for c, n in items]}
    return Bracketed(zero, upper._as_upper() if not exact else zero,
                     name=f"numeric[{names}]", info=info)


def _no_grid(items: list[tuple[TradeOff, int]], tol: float, need: int) -> TradeOff:
    """The composition when no grid of at most MAX_GRID points holds its window (every coarser
    step drifts the window wider): the trivial bracket [0, Id] with the closed-form tail bound
    (:mod:`fdp.tails`) as the conservative side, which is finite wherever the components'
    moments are known. Warns with the reason."""
    from .families import Identity
    from .tails import THETAS_WIDE, SampledCountBound, TailBound

    names = _names(items)
    warnings.warn(
        f"numeric[{names}]: no grid of at most {MAX_GRID} points (fdp.pld.MAX_GRID) holds the "
        f"composed loss (the nearest plan needs {need}; a coarser step drifts the window wider). "
        "The result is certified from the closed-form tail bound alone (lower curve 0 at "
        "the grid's place, upper curve the identity).",
        AccuracyWarning,
        stacklevel=3,
    )
    zero = PiecewiseLinear.revealing()
    info = {"symmetric": False, "grid_capped": True, "grid_failed": True, "capped_tol": tol,
            "grid_mode": "deep", "items": [(c, n) for c, n in items]}
    # (fractional θ too: with no grid the tail bound is the answer, and the best θ may be ≪ 1)
    return Bracketed(zero, lambda: Identity(), name=f"numeric[{names}]", info=info,
                     tail=TailBound.lazy(items, THETAS_WIDE),
                     closed=SampledCountBound.of_items(items))


class _Deepen:
    """Rebuilds a bulk (``FAST``) engine result on its deep grid; picklable (a recipe). With
    ``eps_floor``, the deep grid for ε ≥ eps_floor only (:meth:`tail`; see
    :meth:`fdp.numeric.Bracketed._step_tail`)."""

    def __init__(self, items: list[tuple[TradeOff, int]], tol: float,
                 eps_floor: float | None = None) -> None:
        self.items, self.tol, self.eps_floor = items, tol, eps_floor

    def __call__(self) -> TradeOff:
        return compose_numeric(self.items, tol=self.tol, grid_step=None, deep=True,
                               eps_floor=getattr(self, "eps_floor", None))

    def tail(self, eps_floor: float) -> _Deepen:
        return _Deepen(self.items, self.tol, eps_floor)

    def refocus(self, tol: float) -> _Refocus:
        """The bulk grid again, at ``tol`` (for δ queries; see :class:`_Refocus`)."""
        return _Refocus(self.items, tol, self, tilted=True)


class _Refocus:
    """Rebuilds a bulk engine result at a smaller ``tol`` (the same mode), its next refinement
    still ``then`` (the original's: deeper queries get the grid planned at the promised tol).
    For δ queries whose bracket is wider than promised on the bulk grid, planned for the ε
    bracket (:meth:`fdp.numeric.Bracketed._delta_too_wide`): a finer bulk grid costs a few
    times the bulk one where the deep grid costs ~100x (MNIST at δ = 1e-9: 2.2 s). Picklable."""

    def __init__(self, items: list[tuple[TradeOff, int]], tol: float, then: Any, *,
                 tilted: bool) -> None:
        self.items, self.tol, self.then, self.tilted = items, tol, then, tilted

    def __call__(self) -> TradeOff:
        from .numeric import Bracketed

        r = compose_numeric(self.items, tol=self.tol, grid_step=None, tilted=self.tilted)
        if isinstance(r, Bracketed) and r._refine is not None:
            r._refine = self.then
        return r


class _Retilt:
    """Rebuilds an untilted bulk (``FAST0``) engine result as the tilted bulk grid (``FAST``),
    for queries below its reach; ``deep`` goes straight to the deep grid. Picklable."""

    def __init__(self, items: list[tuple[TradeOff, int]], tol: float) -> None:
        self.items, self.tol = items, tol
        self.deep = _Deepen(items, tol)

    def __call__(self) -> TradeOff:
        return compose_numeric(self.items, tol=self.tol, grid_step=None, tilted=True)

    def refocus(self, tol: float) -> _Refocus:
        """The untilted bulk grid again, at ``tol`` (see :class:`_Refocus`)."""
        return _Refocus(self.items, tol, self, tilted=False)


class _Resplit(_Retilt):
    """Rebuilds a tilted bulk (``FAST``) engine result with the binomial split of rare large
    losses (see :func:`_split_plan`), for queries below the reach of its round-off; ``deep``
    goes straight to the deep grid (which splits at once). Picklable."""

    def __call__(self) -> TradeOff:
        return compose_numeric(self.items, tol=self.tol, grid_step=None, tilted=True,
                               split=True)

    def refocus(self, tol: float) -> _Refocus:
        """The tilted bulk grid again, at ``tol`` (see :class:`_Refocus`)."""
        return _Refocus(self.items, tol, self, tilted=True)


def _untilted_reach(res: dict[str, Any], tol: float, share: float = 0.05) -> float:
    """The smallest δ down to which an untilted bulk composition keeps its round-off within
    5 % (``share``) of ``tol`` in ε (the tilted one is built for queries below; for a tilted
    one without the split of rare large losses, all of tol, and the split one below).

    At a grid loss ε = L_k, the lower side's δ(ε) = Σ_{L_j > ε} q_j (1 − e^{ε − L_j}) moves by
    at most the round-off added above it, E_k, and its slope is −e^{ε} Σ_{L_j > ε} q_j e^{−L_j}
    (= −(tail − δ)), so ε moves by about E_k/(e^{ε} P_k), P_k that sum. The reach is twice δ at
    the lowest grid loss above 0 (where the mass above is at most 1e-2, the bulk's ε_ref range)
    at which that exceeds 0.05·tol·ε; DEEP_DELTA or below means everywhere. The bracket is
    certified whatever this says: it only decides which grid answers a query."""
    bad, delta = _roundoff_moves(res, tol, with_delta=True, share=share)
    idx = np.flatnonzero(bad)
    return 2.0 * float(delta[idx[0]]) if idx.size else 0.0


def _roundoff_moves(res: dict[str, Any], tol: float, with_delta: bool = False,
                    floor: float = FAST.tail_floor, share: float = 0.05,
                    ratio: bool = False) -> Any:
    """At the grid losses above 0 where the mass above is at most 1e-2 (and above ``floor``):
    whether the lower side's round-off moves ε by more than ``share`` of ``tol`` (see
    :func:`_untilted_reach`); with ``with_delta``, also δ at those losses; with ``ratio``,
    instead the move over ``share·tol·ε`` (0 elsewhere), on the same losses (the last ones of
    the window)."""
    loss = res["loss"][: res.get("need", res["loss"].size)]
    best = np.maximum(res["lower"][: loss.size], 0.0)
    pos = np.flatnonzero(loss > 0.0)
    if pos.size == 0:
        return (np.zeros(0, bool), np.zeros(0)) if with_delta else np.zeros(0, bool)
    k0 = int(pos[0])
    q, ll = best[k0:], loss[k0:]
    tail = np.cumsum(q[::-1])[::-1] + res["q_inf_lower"]
    etail = np.cumsum(res["err_lower"][k0: loss.size][::-1])[::-1]
    # e^{L_k} Σ_{j ≥ k} q_j e^{−L_j} = q_k + e^{−h} (the same at k + 1): a first-order
    # recursion from the top (the grid is uniform), which never overflows
    h = float(ll[1] - ll[0]) if ll.size > 1 else 1.0
    ptail = lfilter([1.0], [1.0, -math.exp(-h)], q[::-1])[::-1]
    if ratio:
        with np.errstate(divide="ignore", invalid="ignore"):
            r = etail / (share * tol * ll * ptail)
        return np.where((tail <= 1e-2) & (tail > floor) & np.isfinite(r), r, 0.0)
    bad = (tail <= 1e-2) & (etail > share * tol * ll * ptail) & (tail > floor)
    if not with_delta:
        return bad
    return bad, np.maximum(tail - ptail, 0.0)


class _EngineInverse:
    """Builds an engine result's inverse: the composition of the inverted items,
    (⊗ f_i)⁻¹ = ⊗ f_i⁻¹ (DRS Prop 3.2), whose own inverse links back to the result weakly.
    ``recipe()`` (inverted items, tol, grid step) lets a pickled result rebuild it."""

    weak = False

    def __init__(self, items: list[tuple[TradeOff, int]], tol: float,
                 grid_step: float | None) -> None:
        self.items, self.tol, self.grid_step = items, tol, grid_step
        self.own: weakref.ref[Bracketed] | None = None

    def recipe(self) -> tuple[list[tuple[TradeOff, int]], float, float | None]:
        return [(c.inverse(), n) for c, n in self.items], self.tol, self.grid_step

    def __call__(self) -> TradeOff:
        items, tol, grid_step = self.recipe()
        inv = compose_numeric(items, tol=tol, grid_step=grid_step)
        if isinstance(inv, Bracketed) and self.own is not None:
            back = _WeakBack(self.own, self.items, self.tol, self.grid_step)
            inv._inverse = back  # type: ignore[assignment]
        return inv


class _WeakBack:
    """The inverse of an engine result's inverse: the result itself while it lives (held
    weakly, so the two do not keep each other's grids alive), else recomposed."""

    weak = True

    def __init__(self, ref: weakref.ref[Bracketed], items: Any, tol: Any, grid_step: Any) -> None:
        self.ref, self.items, self.tol, self.grid_step = ref, items, tol, grid_step

    def recipe(self) -> tuple[Any, Any, Any]:
        """(items, tol, grid step) of the result this links back to."""
        return self.items, self.tol, self.grid_step

    def __call__(self) -> TradeOff:
        out = self.ref()
        if out is not None:
            return out
        return compose_numeric(self.items, tol=self.tol, grid_step=self.grid_step)

"""Trade-off curves: the base class and the exact piecewise-linear curve.

A trade-off function f: [0, 1] → [0, 1] is convex, continuous, non-increasing and f(α) ≤ 1 − α
(Dong, Roth & Su 2022, "Gaussian Differential Privacy", below DRS, Prop 2.2). Every curve in fdp is
a :class:`TradeOff`; the closed-form families live in :mod:`fdp.families`, numeric compositions in
:mod:`fdp.composition`. Operations (composition, group privacy, subsampling, …) return new curves;
curves are immutable.

Privacy-loss view (theory §1): with L = log dQ/dP, the Neyman–Pearson tests threshold L, so
α(t) = P[L > t] and 1 − β(t) = Q[L > t]. A piecewise-linear curve is exactly the curve of a pair of
discrete distributions: segment j carries P-mass p_j and Q-mass q_j, with loss log(q_j / p_j).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ._checks import as_array, check_int
from ._numerics import (
    MIN_NORMAL,
    TINY,
    UNIT_ROUNDOFF,
    add_down,
    add_up,
    lower_hull,
    merged_loss_err,
    moved_coordinate,
    sum_up,
)

if TYPE_CHECKING:  # pragma: no cover
    import matplotlib.axes

__all__ = ["TradeOff", "PiecewiseLinear", "Inverse", "LossBins", "Kind"]

Kind = Literal["exact", "bracket", "approximation"]

#: Tolerance used by :meth:`TradeOff.dominates` and the axiom checks.
DOMINATES_TOL = 1e-9


@dataclass(frozen=True)
class LossBins:
    """Masses of the privacy loss L = log dQ/dP binned on a grid of edges e_0 < … < e_M.

    ``p[j]``, ``q[j]`` are P[L ∈ (e_j, e_{j+1}]] and Q[L ∈ (e_j, e_{j+1}]]; ``*_below`` is the
    mass with L ≤ e_0 (finite L for Q; P may include L = −∞), ``*_above`` the mass with
    e_M < L < ∞, and ``q_inf`` the Q-mass at L = +∞ (where P has none).

    ``loss_lo``, ``loss_hi`` (optional) bound each bin's loss log(q_j/p_j) from below and above
    where ``p[j]`` is too small to carry it (below :data:`TINY_P`: subnormal, or 0 next to
    Q-mass; NaN in the other bins, whose loss the engine reads from the masses). A curve that
    knows its losses (:class:`PiecewiseLinear` with losses ≳ 700; G_μ from log-space masses,
    :func:`fdp.families.normal_bin_loss_bounds`) gives them: a subnormal P-mass
    keeps a few bits, and its log moved a bin's Q-mass by a whole share of the step
    (``compose(subsample(EpsDelta(744), 0.3), repeat=2, numeric=True)`` read ε(1e-3) 0.18
    below the truth).
    """

    p: np.ndarray
    q: np.ndarray
    p_below: float
    q_below: float
    p_above: float
    q_above: float
    q_inf: float
    loss_lo: np.ndarray | None = None
    loss_hi: np.ndarray | None = None


#: P-masses of a bin below this do not carry its loss log(q/p) (see :class:`LossBins`)
TINY_P = 2.0**-1000


def tiny_bins(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The bins whose P- or Q-mass is below :data:`TINY_P` next to mass on the other side: their
    loss log(q/p) is not carried by the masses, and a curve gives bounds on it instead."""
    return ((p < TINY_P) & (q > 0.0)) | ((q < TINY_P) & (p > 0.0))


def outcome_bin_losses(edges: np.ndarray, j: np.ndarray, inside: np.ndarray, pb: np.ndarray,
                   qb: np.ndarray, p: np.ndarray, q: np.ndarray, loss: np.ndarray,
                   err: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Bounds on the losses λ_j = log(q_j/p_j) of the bins (masses ``pb``, ``qb``) whose P- or
    Q-mass is below :data:`TINY_P` (NaN elsewhere; None if there are none) from their
    outcomes' own masses ``p``, ``q`` and losses ℓ_i = ``loss`` (within ``err``), outcome i in
    bin ``j[i]`` where ``inside[i]`` (see :class:`LossBins`). With the larger of the two
    masses: λ_j = e_j + log q_j − log s_j, s_j = Σ_i q_i e^{−(ℓ_i − e_j)} ∈ [q_j e^{−h}, q_j]
    (tiny P; no underflow), or
    λ_j = e_j + log r_j − log p_j, r_j = Σ_i p_i e^{ℓ_i − e_j − h} e^h (tiny Q; the
    inverse's tiny P), evaluated at ℓ_i ∓ their rounding bounds and widened by its own
    rounding: each term's argument, exp and the sum within (n_j + 4) ulps, the logarithms
    and the additions within 4 ulps of |e_j| + |log q_j| + |log s_j| + h."""
    tiny = tiny_bins(pb, qb)
    tiny_p = (pb < TINY_P) & (qb > 0.0)
    tiny_q = tiny & ~tiny_p
    if not tiny.any():
        return None
    sel = inside & tiny[np.where(inside, j, 0)]
    js, ps, qs, ls, es = j[sel], p[sel], q[sel], loss[sel], err[sel]
    use_q = tiny_p[js]
    nb = qb.size
    cnt = np.bincount(js, minlength=nb).astype(float)
    with np.errstate(invalid="ignore"):
        h = np.diff(edges)
    # log of the bin's larger mass (the one the sum is not taken over)
    lm = np.log(np.where(tiny_p, qb, np.where(tiny_q, pb, 1.0)))
    out = []
    for sgn in (-1.0, 1.0):
        # (bins with an infinite edge, a mixture's below log(1 − p), give NaN: not given)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            arg = ls + sgn * es - edges[js]  # ℓ_i − e_j ∈ (0, h] up to the bound
            t = np.where(use_q, qs * np.exp(-arg), ps * np.exp(arg - h[js]))
            s = np.bincount(js, weights=t, minlength=nb)
            ok = tiny & (s > 0.0) & np.isfinite(s) & np.isfinite(h)
            ls_ = np.log(np.where(ok, s, 1.0))
            lam = np.where(tiny_p, edges[:-1] + lm - ls_, edges[:-1] + h + ls_ - lm)
        with np.errstate(invalid="ignore"):
            pad = merged_loss_err(cnt, edges[:-1], lm, ls_, 2.0 * h)
        # (a bin with one outcome has that outcome's loss, without the sum's rounding)
        lone = np.full(nb, np.nan)
        one = cnt[js] == 1.0
        lone[js[one]] = ls[one] + sgn * es[one]
        out.append(np.where(cnt == 1.0, lone, np.where(ok, lam + sgn * pad, np.nan)))
    return out[0], out[1]


def _interp(x: np.ndarray, xp: np.ndarray, fp: np.ndarray) -> np.ndarray:
    """np.interp, but where a segment is so short that its slope overflows (a kink at a
    subnormal α next to one at 1e-311: slope −2e309), read it as f_j + t (f_{j+1} − f_j) with
    t = (x − x_j)/(x_{j+1} − x_j) ∈ [0, 1]. np.interp read −∞ there: an engine curve's lower
    side was 0 at α = 1e-320 and 0.60 at 1e-300 (not non-increasing), and its upper side 0 at
    5e-324 for the true 0.949 (a hunt)."""
    v = np.interp(x, xp, fp)
    bad = ~np.isfinite(v) & np.isfinite(x)
    if bad.any() and xp.size > 1:
        xb = x[bad] if np.ndim(x) else x
        j = np.clip(np.searchsorted(xp, xb, side="right") - 1, 0, xp.size - 2)
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.clip((xb - xp[j]) / (xp[j + 1] - xp[j]), 0.0, 1.0)
        w = fp[j] + t * (fp[j + 1] - fp[j])
        if np.ndim(v):
            v = v.copy()
            v[bad] = w
        else:
            v = w
    return v


def _as_alpha(alpha: Any) -> np.ndarray:
    return as_array("alpha", alpha, low=0.0, high=1.0)


def _scalar_or_array(x: np.ndarray, like: np.ndarray) -> float | np.ndarray:
    return float(x) if like.ndim == 0 else x


class TradeOff:
    """Base class of trade-off curves f(α) = β.

    Subclasses implement ``_eval`` (vectorized on a float array in [0, 1]) and, where a closed form
    exists, ``_delta``, ``_epsilon``, ``inverse`` and ``_loss_bins``. The generic fallbacks here
    are numerical and documented as such.

    Examples
    --------
    >>> import fdp
    >>> f = fdp.Gaussian(1.0)
    >>> round(f(0.05), 6)
    0.740489
    >>> round(f.delta(1.0), 6)
    0.126937
    """

    #: what the curve is: "exact", "bracket" (certified lower/upper) or "approximation".
    kind: Kind = "exact"
    #: whether ``_as_upper`` (where there is one) reads this exact curve's ε and δ rounded
    #: toward more privacy, so that brackets take their lower ends from it; False for curves
    #: whose masses are already a pessimistic garbling (``fdp.composition._exact_product``)
    _twin_ok: bool = True

    # ------------------------------------------------------------------ evaluation
    def __call__(self, alpha: Any) -> float | np.ndarray:
        """β = f(α), vectorized over α ∈ [0, 1]."""
        a = _as_alpha(alpha)
        out = np.clip(np.asarray(self._eval(np.atleast_1d(a)), dtype=float), 0.0, None)
        # (an optimistic reading, an upper curve's or a bracket's upper side, caps at 1 − α
        # rounded up)
        up = getattr(self, "_side", "") == "upper" or getattr(self, "_optimistic", False)
        out = np.minimum(out, _one_minus(np.atleast_1d(a), up))
        return _scalar_or_array(out.reshape(a.shape), a)

    def _eval(self, alpha: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must implement _eval")

    # ------------------------------------------------------------------ structure
    @property
    def lower(self) -> TradeOff:
        """A certified lower curve (≤ the true curve everywhere). Exact curves return themselves."""
        if self.kind == "approximation":
            raise AttributeError(
                f"{self!r} is an approximation and carries no certified lower curve"
            )
        return self

    @property
    def upper(self) -> TradeOff:
        """A certified upper curve (≥ the true curve everywhere). Exact curves return themselves."""
        if self.kind == "approximation":
            raise AttributeError(
                f"{self!r} is an approximation and carries no certified upper curve"
            )
        return self

    def inverse(self) -> TradeOff:
        """f⁻¹(α) = inf{t ∈ [0, 1] : f(t) ≤ α} (DRS Def 2.3 ff.); T(P, Q)⁻¹ = T(Q, P).

        The generic version is :class:`Inverse` (evaluation by bisection, δ(ε) by the identity
        δ_{f⁻¹}(ε) = 1 − e^ε + e^ε δ_f(−ε)); families override it with their closed form.
        """
        return Inverse(self)

    def to_piecewise(self, n: int = 4001) -> PiecewiseLinear:
        """The chord interpolation of f through n points dense near α = 0 and 1.

        Chords of a convex curve lie above it, so the result is ≥ f (an upper approximation):
        each value is rounded up by 8 ulps (the closed forms' rounding), and no point is taken
        below α = 1e-12, where 1 − f(α) has few significant digits left in β (points at
        α = 1e-16 read β = 1 − 3.3e-16 for the true 1 − 3.2e-16 of L_1, a chord below f that
        group() amplified: group(Laplace(1), 2)'s upper curve read ε(0) = 2.06 for 2).
        """
        t = np.linspace(0.0, 1.0, n)
        a = np.unique(np.concatenate([0.5 * (1 - np.cos(np.pi * t)), np.logspace(-12, -1, 200)]))
        a = a[(a == 0.0) | (a >= 1e-12)]
        # (values from above: G_20's conservative values are 4e-13 relative below the truth,
        # which the 8 ulps below did not cover; the chords then lay below the curve)
        b = np.minimum(np.asarray(self._eval_up(a), dtype=float), 1.0)
        # capped at 1 − α rounded UP (f ≤ 1 − α): to nearest, the cap fell below f(α) where
        # f(α) = 1 − α(1 + 1e-8) (p G_μ + (1 − p) Id, tiny p), and the chord from (0, 1) read
        # δ(1e-5) = 2.7e-17 for a true 1e-2489 (1 − cap is exact for α < 1/2, and 1 − α for
        # α ≥ 1/2, by Sterbenz's lemma)
        cap = _one_minus(a, True)
        b = np.minimum(b * (1.0 + 8.0 * _U) + TINY, cap)  # (f(0) too: C_p(G_1) read 1 − 9e-16)
        # the chords: the lower hull of the points and (1, 0) (from_points would cap β at
        # 1 − α to nearest again)
        a, b = np.append(a, 1.0), np.append(b, 0.0)
        idx = lower_hull(a, b, exact=False)  # (every point is above f: any chords will do)
        a, b = a[idx], b[idx]
        keep = np.concatenate([[True], np.diff(b) <= 0])
        return PiecewiseLinear(a[keep], b[keep], kind="approximation")

    def _eval_up(self, alpha: np.ndarray) -> np.ndarray:
        """f(α) rounded UP (an upper bound on the true value, for optimistic curves built from
        values, e.g. :meth:`to_piecewise`): the optimistic reading where the curve has one
        (``_as_upper``: G_μ, L_μ), else the value itself (exact curves read within a few ulps
        of the truth; :meth:`to_piecewise` adds 8 more)."""
        up = self._as_upper() if (self.kind == "exact" and hasattr(self, "_as_upper")
                                  and not isinstance(self, PiecewiseLinear)) else self
        return np.asarray(up(alpha), dtype=float)

    @property
    def is_symmetric(self) -> bool:
        """Whether f = f⁻¹ (checked on a grid to 1e-9 for general curves)."""
        a = np.linspace(0.0, 1.0, 1001)
        return bool(np.max(np.abs(self(a) - self.inverse()(a))) <= 1e-9)

    def dominates(self, other: TradeOff, tol: float = DOMINATES_TOL) -> bool:
        """Whether f ≥ g − tol on [0, 1], checked on a dense grid plus both curves' kinks."""
        a = _check_grid(self, other)
        return bool(np.all(self(a) >= other(a) - tol))

    # ------------------------------------------------------------------ privacy profile
    def delta(self, eps: Any) -> float | np.ndarray:
        """δ(ε) = sup_α (1 − e^ε α − f(α)) (DRS Prop 2.12), vectorized over ε ∈ ℝ ∪ {±∞}.

        f is (ε, δ(ε))-DP for every ε; for an exact curve the value is exact, for a bracketed
        curve it is the conservative (upper) bound on δ.
        """
        e = as_array("eps", eps, allow_inf=True)
        out = np.asarray(self._delta(np.atleast_1d(e)), dtype=float).reshape(e.shape)
        floor = np.where(e < 0, -np.expm1(np.minimum(e, 0.0)), 0.0)
        if getattr(self, "_side", None) == "upper" or getattr(self, "_optimistic", False):
            # (an optimistic curve's floor must not exceed the true 1 − e^ε: expm1 is rounded
            # to nearest, within an ulp; 2u down keeps it below. Optimistic twins flagged
            # ``_optimistic`` (a mixture's, a subsampling's) too: poisson_subsample(f, 1e-6)
            # .add, whose δ(−0.001) is exactly 1 − e^{−0.001}, read its lower end
            # 0.0009995001666250085, one ulp above the truth)
            floor = floor * (1.0 - 2.0 * UNIT_ROUNDOFF)
        out = np.clip(np.maximum(out, floor), 0.0, 1.0)
        return _scalar_or_array(out, e)

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        """Generic δ(ε) = sup_α (1 − e^ε α − f(α)): the objective is concave in α, so a grid
        search followed by golden-section refinement finds the sup to ~1e-12 (families override
        this with closed forms)."""
        grid = np.unique(np.concatenate([np.linspace(0.0, 1.0, 2001), np.logspace(-15, -1, 300)]))
        fg = np.asarray(self(grid))
        out = np.empty(eps.shape)
        for i, e in enumerate(np.ravel(eps)):
            x = math.exp(min(float(e), 700.0))
            vals = 1.0 - x * grid - fg
            k = int(np.argmax(vals))
            lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
            g = (math.sqrt(5.0) - 1.0) / 2.0
            for _ in range(80):
                m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
                v1 = 1.0 - x * m1 - float(self(m1))
                v2 = 1.0 - x * m2 - float(self(m2))
                if v1 < v2:
                    lo = m1
                else:
                    hi = m2
            best = max(float(vals[k]), 1.0 - x * lo - float(self(lo)))
            out.flat[i] = best
        return out

    def epsilon(self, delta: Any) -> float | np.ndarray:
        """The smallest ε ≥ 0 with δ(ε) ≤ delta (vectorized over delta ∈ [0, 1]).

        0 when delta ≥ δ(0); ``inf`` when no finite ε works (e.g. delta < 1 − f(0)).
        For a bracketed curve this is a certified upper bound on the true ε. At delta = 1 it
        is 0 for every curve (δ(0) is a total variation distance, at most 1), whatever the
        rounding margins of δ near 1 would read (EpsDelta(50).epsilon(1.0) read 15.57).
        """
        d = as_array("delta", delta, low=0.0, high=1.0)
        out = np.asarray(self._epsilon(np.atleast_1d(d)), dtype=float).reshape(d.shape)
        return _scalar_or_array(np.where(d >= 1.0, 0.0, np.maximum(out, 0.0)), d)

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        """Generic ε(δ): bisection on the non-increasing δ(ε) with a growing bracket, returning
        the upper end of the final bracket (so δ(ε) ≤ delta holds at the returned ε); on an
        optimistic reading (``_optimistic``, whose δ lies below the truth) the lower end, where
        δ(ε) > delta, so the true ε lies above it."""
        out = np.empty(delta.shape)
        for i, d in enumerate(np.ravel(delta)):
            if float(self._delta(np.array([0.0]))[0]) <= d:
                out.flat[i] = 0.0
                continue
            if float(self._delta(np.array([np.inf]))[0]) > d:
                out.flat[i] = math.inf
                continue
            lo, hi = 0.0, 1.0
            while float(self._delta(np.array([hi]))[0]) > d:
                lo, hi = hi, hi * 2.0
                if hi > 1e6:
                    hi = math.inf
                    break
            if math.isfinite(hi):
                for _ in range(200):
                    # (relative: an absolute 1e-14 was 1e-6 of ε = 1e-8, the largest loss of
                    # (p G_2 + (1 − p) Id)⁻¹ at p = 1e-8)
                    if hi - lo <= 1e-14 * hi:
                        break
                    mid = 0.5 * (lo + hi)
                    if float(self._delta(np.array([mid]))[0]) > d:
                        lo = mid
                    else:
                        hi = mid
            out.flat[i] = lo if getattr(self, "_optimistic", False) else hi
        return out

    def epsilon_bracket(self, delta: Any) -> tuple[Any, Any]:
        """Certified (lower, upper) bounds on the exact ε(δ): ``(upper.epsilon, lower.epsilon)``.

        For an exact curve the upper end is ``epsilon(delta)`` (rounded up) and the lower end
        the curve's optimistic reading (``_as_upper``: G_μ, L_μ, piecewise-linear curves, their
        mixtures, subsamplings and δ-mixtures, exact products, and those of a product's
        curve, read from its factors' twins). A curve without one (``_has_twin()`` False: built
        from merged masses by a path that has no twin of its own) gives ``epsilon(delta)`` at
        both ends; its lower end is then not a bound.
        """
        up = self.upper
        if up is self and self.kind == "exact" and self._has_twin():
            up = self._as_upper()  # type: ignore[attr-defined]
        hi = self.lower.epsilon(delta)
        if self._answers_from_base():
            hi = _scalar_or_array(np.minimum(hi, self.epsilon(delta)), np.asarray(hi))
        return up.epsilon(delta), hi

    def _answers_from_base(self) -> bool:
        """Whether this bracket-kind curve's own δ and ε (its formula on its base's certified
        profile, e.g. :class:`~fdp.operations.Mixture`'s p δ_f(ε')) are certified upper bounds
        that can beat its lower curve's: they keep a bracketed base's deep tail (the base's
        closed-form tail bound), which the lower curve of lines does not
        (``poisson_subsample(h, 0.3).add.epsilon_bracket(1e-50)`` read ∞ for a finite 22.31;
        a hunt). Curves on the generic grid search of :meth:`_delta` do not qualify."""
        t = type(self)
        return (self.kind == "bracket" and t._delta is not TradeOff._delta
                and t._epsilon is not TradeOff._epsilon)

    def delta_bracket(self, eps: Any) -> tuple[Any, Any]:
        """Certified (lower, upper) bounds on the exact δ(ε): ``(upper.delta, lower.delta)``.

        For an exact curve the upper end is ``delta(eps)`` (rounded up) and the lower end the
        curve's optimistic reading (``_as_upper``, as for :meth:`epsilon_bracket`); a curve
        without one gives ``delta(eps)`` at both ends, and its lower end is then not a bound.

        Examples
        --------
        >>> import fdp
        >>> lo, hi = fdp.Gaussian(1.0).delta_bracket(1.0)
        >>> bool(0 < lo <= hi <= lo * (1 + 1e-12))
        True
        """
        up = self.upper
        if up is self and self.kind == "exact" and self._has_twin():
            up = self._as_upper()  # type: ignore[attr-defined]
        hi = self.lower.delta(eps)
        if self._answers_from_base():
            hi = _scalar_or_array(np.minimum(hi, self.delta(eps)), np.asarray(hi))
        return up.delta(eps), hi

    def _has_twin(self) -> bool:
        """Whether ``_as_upper`` gives an optimistic reading of this exact curve: from its own
        masses (``_twin_ok``) or from a builder (``_twin_build``)."""
        return hasattr(self, "_as_upper") and (
            self._twin_ok or getattr(self, "_twin_build", None) is not None)

    # ------------------------------------------------------------------ privacy-loss view
    def _loss_bins(self, edges: np.ndarray) -> LossBins:
        """Binned privacy-loss masses (see :class:`LossBins`); used by the composition engine."""
        raise TypeError(
            f"{type(self).__name__} has no privacy-loss distribution; it cannot be composed "
            "numerically"
        )

    def _p_at_minus_inf(self) -> float | None:
        """The P-mass at loss −∞ (where Q has none), if known in closed form, else None: the
        Q-mass at +∞ of the inverse, which :class:`Inverse` otherwise finds by bisection."""
        return None

    def _loss_moments(self) -> tuple[float, float] | None:
        """Mean and variance under Q of the finite part of the loss log(dQ/dP), if known in
        closed form or by a quadrature more accurate than the engine's 4001-bin estimate, else
        None. The engine's planner uses them to choose a grid step (never to certify)."""
        return None

    def _atoms(self) -> np.ndarray | None:
        """Finite losses that carry point masses (P- and Q-mass), or None if unknown.

        The composition engine aligns its grid with them (a point mass on a grid point costs no
        discretization error); correctness never depends on this list.
        """
        return None

    # ------------------------------------------------------------------ algebra (other modules)
    def __matmul__(self, other: TradeOff) -> TradeOff:
        """f @ g is the tensor product f ⊗ g (DRS Def 3.1); see :func:`fdp.compose`."""
        if not isinstance(other, TradeOff):
            return NotImplemented
        from .composition import compose

        return compose(self, other)

    def __pow__(self, n: int) -> TradeOff:
        """f ** n is the n-fold product f^{⊗n}; see :func:`fdp.compose`."""
        from .composition import compose

        return compose(self, repeat=check_int("n", n, low=0))

    def group(self, k: int) -> TradeOff:
        """Group privacy for groups of size k: 1 − (1 − f)^{∘k} (DRS Thm 2.14)."""
        from .operations import group

        return group(self, k)

    def symmetrize(self) -> TradeOff:
        """min{f, f⁻¹}**, the guarantee for both orders from a one-sided f (DRS Definition F.1,
        first case); see :func:`fdp.operations.symmetrize`."""
        from .operations import symmetrize

        return symmetrize(self)

    def subsample(self, p: float) -> TradeOff:
        """C_p(f) = min{f_p, f_p⁻¹}** with f_p = p f + (1 − p) Id (DRS Thm 4.2)."""
        from .operations import subsample

        return subsample(self, p)

    def kl(self) -> float:
        """kl(f) = −∫₀¹ log|f'(x)| dx (DRS Sec 3.3); see :mod:`fdp.clt`."""
        from .clt import kl

        return kl(self)

    def kappa2(self) -> float:
        """κ₂(f) = ∫₀¹ log²|f'(x)| dx (DRS Sec 3.3); see :mod:`fdp.clt`."""
        from .clt import kappa2

        return kappa2(self)

    def kappa3(self) -> float:
        """κ₃(f) = ∫₀¹ |log|f'(x)||³ dx (DRS Sec 3.3); see :mod:`fdp.clt`."""
        from .clt import kappa3

        return kappa3(self)

    def kappa3_bar(self) -> float:
        """κ̄₃(f) = ∫₀¹ |log|f'(x)| + kl(f)|³ dx (DRS Sec 3.3); see :mod:`fdp.clt`."""
        from .clt import kappa3_bar

        return kappa3_bar(self)

    def gdp_mu(self) -> float:
        """The smallest μ with f ≥ G_μ (theory §3; certified for bracketed curves)."""
        from .clt import gdp_mu

        return gdp_mu(self)

    def plot(self, ax: matplotlib.axes.Axes | None = None, **kw: Any) -> matplotlib.axes.Axes:
        """Draw the curve with :func:`fdp.plot.tradeoff`."""
        from .plot import tradeoff

        return tradeoff(self, ax=ax, **kw)

    # breakpoints used to check domination; piecewise-linear curves report their kinks.
    def _kinks(self) -> np.ndarray:
        return np.empty(0)

    def _label(self) -> str:
        """A mathtext label for plots."""
        return repr(self)


def _check_grid(*curves: TradeOff) -> np.ndarray:
    t = np.linspace(0.0, 1.0, 4001)
    base = [0.5 * (1 - np.cos(np.pi * t)), np.logspace(-12, -1, 300), 1 - np.logspace(-12, -1, 300)]
    base += [c._kinks() for c in curves]
    return np.unique(np.clip(np.concatenate(base), 0.0, 1.0))


class PiecewiseLinear(TradeOff):
    """An exact piecewise-linear trade-off curve given by its breakpoints.

    Breakpoints (α_k, β_k), k = 0..m, with α_0 = 0 < α_1 < … < α_m = 1, β_m = 0, convex and
    non-increasing. The complements 1 − α_k and 1 − β_k are stored too, computed as tail sums where
    the curve comes from masses, so that δ(ε) and values near α = 1 keep full relative precision.

    Segment j has P-mass p_j = α_{j+1} − α_j, Q-mass q_j = β_j − β_{j+1} and privacy loss
    log(q_j/p_j); the curve is T(P, Q) of these discrete distributions (theory §1), plus a Q-atom
    1 − β_0 at loss +∞. δ(ε) = max_k (1 − β_k − e^ε α_k) exactly (theory §3).

    Use the constructors :func:`fdp.from_points`, :func:`fdp.from_distributions` and
    :func:`fdp.from_eps_delta` rather than this class directly.

    Examples
    --------
    >>> import fdp
    >>> f = fdp.from_distributions([0.75, 0.25], [0.25, 0.75])
    >>> round(float(f(0.1)), 12)  # (values are rounded down by a few ulps: guarantees)
    0.7
    >>> round(f.epsilon(0.0), 12) == round(float(np.log(3)), 12)
    True
    """

    #: the given +∞ atom is exact (see __init__); a class default for curves built lazily
    _exact_atom = False
    #: the same for the P-mass at loss −∞ (the inverse's +∞ atom)
    _exact_neg_atom = False
    #: bounds on the rounding of losses that from_masses computed (aligned with _masses)
    _loss_err: np.ndarray | None = None
    #: a bound on how far the given losses were moved, one way, on purpose (an exact product's
    #: sums rounded up, or down for its optimistic twin): its own side needs no charge for it,
    #: but a curve derived from the masses that reads the losses the other way (a mixture's
    #: inverse, an optimistic reading) does, so :meth:`_loss_errs` includes it
    _loss_bias = 0.0
    #: the given losses of ``_given_masses`` are the pair's exact ones, within
    #: :meth:`_loss_errs` (set by the constructors that know them, e.g. the mechanisms'), so a
    #: mass below the normal range can be read in log space from its outcome's other mass:
    #: q_j = p_j e^{ℓ_j} (:func:`fdp.clt.gdp_mu`). Not carried to derived curves
    _exact_losses = False
    #: the given masses are exact floats (a user's distributions, :func:`fdp.from_distributions`
    #: without renormalizing): a subnormal one carries no absolute error, so gdp_mu reads the
    #: breakpoints below the normal range with the sums' relative rounding only. Not carried to
    #: derived curves
    _exact_masses = False
    #: per-segment bounds (above, below) on the exact curve's losses where they are known
    #: from elsewhere than the breakpoints (aligned with the segments; NaN where not known):
    #: a group's losses are sums of its curve's losses (:func:`fdp.operations.group`), while
    #: differenced from its computed kinks they are off by more than their charge. Each side
    #: reads the breakpoints' loss moved past the bound, never towards the truth
    _loss_bounds: tuple[np.ndarray, np.ndarray] | None = None

    def __init__(
        self,
        alpha: np.ndarray,
        beta: np.ndarray,
        *,
        alpha_c: np.ndarray | None = None,
        beta_c: np.ndarray | None = None,
        q_inf: float | None = None,
        q_cum: np.ndarray | None = None,
        kind: Kind = "exact",
        name: str | None = None,
        masses: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        side: str = "lower",
        offset: float = 0.0,
        mass_q_inf: float | None = None,
        bound: bool = False,
        mass_rtol: float = 0.0,
        offset_steps: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        a = np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0)  # rounding can leave ±1e-16
        b = np.clip(np.asarray(beta, dtype=float), 0.0, 1.0)
        # near 1, a breakpoint is best known from its complement (tail sums keep full relative
        # precision there; running sums carry their rounding): make the two agree
        if beta_c is not None:
            bc_in = np.asarray(beta_c, dtype=float)
            b = np.where(bc_in < 0.5, np.clip(1.0 - bc_in, 0.0, 1.0), b)
        if alpha_c is not None:
            ac_in = np.asarray(alpha_c, dtype=float)
            a = np.where(ac_in < 0.5, np.clip(1.0 - ac_in, 0.0, 1.0), a)
        self._a = a
        self._b = b
        # below α = 1/2 the value itself is the precise one: 1 − a is within an ulp there, while
        # a complement summed from the other end carries that sum's rounding
        self._ac = 1.0 - a if alpha_c is None else np.where(a < 0.5, 1.0 - a, ac_in)
        # the same for β: below β = 1/2, 1 − b is within an ulp of the truth, a complement
        # summed from the top end (e.g. all the Q-mass of a long grid) may be off by 1e-15
        self._bc = 1.0 - b if beta_c is None else np.where(b < 0.5, 1.0 - b, bc_in)
        # The +∞ atom (1 − f(0)) and the finite Q-mass above each breakpoint are kept apart, so
        # that segment masses far below the atom's size are not lost to rounding.
        self._qinf = float(self._bc[0]) if q_inf is None else float(q_inf)
        self._qc = (
            np.maximum(self._bc - self._bc[0], 0.0)
            if q_cum is None
            else np.asarray(q_cum, dtype=float)
        )
        self.kind = kind
        self._name = name
        # the exact segment masses (P-mass, Q-mass, loss), sorted by decreasing loss, when the
        # curve was built from masses: δ(ε) and ε(δ) are computed from them, not from differences
        # of breakpoints (which lose masses below rounding)
        self._given_masses = masses
        # which way δ and ε are rounded, and δ's offset (see _Profile): "upper" only for the
        # optimistic curve of a bracket
        self._side = side
        self._offset = float(offset)
        # a smaller offset for δ at large ε (see _Profile), the breakpoints keep ``offset``
        self._offset_steps = offset_steps
        self._bound = bound  # a certified lower/upper curve: evaluation rounds outward
        # the +∞ atom of the given masses, when it differs from 1 − f(0) (engine curves)
        self._mass_qinf = self._qinf if mass_q_inf is None else float(mass_q_inf)
        # a bound on the relative error of the given masses (charged by _Profile)
        self._mass_rtol = float(mass_rtol)
        for arr in (self._a, self._b, self._ac, self._bc, self._qc):
            arr.setflags(write=False)
        # set by constructions that are their own inverse (min{f, f⁻¹}**): inverse() is self
        self._self_inverse = False
        # set where the given +∞ atom is exact (a privacy profile's own δ): mass_rtol is then
        # charged on the finite masses only, so that ε(min δ_i) is the largest ε_i, not ∞
        self._exact_atom = False
        # set on a curve built by inverse(): its own inverse is that curve (an involution;
        # rebuilding it would negate losses whose rounding was charged for the other side)
        self._inverse_of: PiecewiseLinear | None = None

    # ---- constructors --------------------------------------------------------------------
    @classmethod
    def revealing(cls) -> PiecewiseLinear:
        """f ≡ 0: perfectly distinguishable (all Q-mass at loss +∞). Exact.

        Examples
        --------
        >>> float(PiecewiseLinear.revealing()(0.3))
        0.0
        """
        return cls(np.array([0.0, 1.0]), np.array([0.0, 0.0]), q_inf=1.0)

    @classmethod
    def from_points(
        cls, alpha: Any, beta: Any, *, kind: Kind = "exact", name: str | None = None
    ) -> PiecewiseLinear:
        """Lower convex envelope of the points together with (0, 1) clipped and (1, 0).

        Points must satisfy β ≤ 1 − α (within 1e-12). See :func:`fdp.from_points`.
        """
        a = as_array("alpha", alpha, low=0.0, high=1.0).ravel()
        b = as_array("beta", beta, low=0.0, high=1.0).ravel()
        if a.shape != b.shape:
            raise ValueError(f"alpha and beta must have the same length, got {a.size} and {b.size}")
        if np.any(b > 1.0 - a + 1e-12):
            i = int(np.argmax(b - (1.0 - a)))
            raise ValueError(
                "points must satisfy beta <= 1 - alpha (a trade-off curve lies below the "
                f"diagonal), got alpha={a[i]!r}, beta={b[i]!r}"
            )
        b = np.minimum(b, 1.0 - a)
        if not np.any(a == 0.0):  # f(0) ≤ 1: (0, 1) is the loosest admissible start
            a, b = np.append(a, 0.0), np.append(b, 1.0)
        a, b = np.append(a, 1.0), np.append(b, 0.0)
        idx = lower_hull(a, b)
        a, b = a[idx], b[idx]
        # A trade-off curve is non-increasing: drop hull points past the minimum (only (1, 0)
        # can follow a zero, so after the hull this removes nothing but rising parts).
        keep = np.concatenate([[True], np.diff(b) <= 0])
        return cls(a[keep], b[keep], kind=kind, name=name)

    @classmethod
    def from_masses(
        cls,
        p: np.ndarray,
        q: np.ndarray,
        *,
        q_inf: float = 0.0,
        loss: np.ndarray | None = None,
        kind: Kind = "exact",
        name: str | None = None,
        mass_rtol: float = 0.0,
        loss_err: np.ndarray | None = None,
    ) -> PiecewiseLinear:
        """The curve T(P, Q) of discrete masses (p_j, q_j) plus a Q-atom q_inf where P = 0.

        ``mass_rtol`` bounds the relative error of every given mass (e.g. masses computed in
        log space); δ(ε) and ε(δ) are then rounded outward by it on the curve's side.
        ``loss_err`` bounds the absolute error of each given ``loss`` (default: exact); δ and ε
        read every finite loss that much higher, as they do losses computed from the masses.

        Masses need not be sorted; outcomes are ordered by decreasing likelihood ratio q/p.
        ``loss`` (optional) gives each outcome's privacy loss log(q_j/p_j) directly; it is then
        the authority, so losses beyond the float64 range of p (ℓ ≳ 700) keep their exact
        δ(ε) = Σ_j q_j (1 − e^{ε − ℓ_j})₊ even where p_j = q_j e^{−ℓ_j} underflows.
        """
        p = np.asarray(p, dtype=float).ravel()
        q = np.asarray(q, dtype=float).ravel()
        err: np.ndarray | None = None
        if loss is None:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                lq, lp = np.log(q), np.log(p)
                loss = lq - lp
                # its rounding (each log within an ulp of its size, the difference another),
                # charged on δ and ε (see _profile); the order of the outcomes keeps the
                # nearest values
                err = np.where(np.isfinite(loss),
                               2.0 * _U * (np.abs(lq) + np.abs(lp)) + _U * np.abs(loss), 0.0)
                # for q/p in [1/2, 2] q − p is exact (Sterbenz): log1p((q − p)/p) is within
                # a few ulps of its own size (0 for p = q: the identity stays exact)
                near = (p > 0) & (q >= 0.5 * p) & (q <= 2.0 * p)
                l1 = np.log1p((q - p) / np.where(near, p, 1.0))
                loss = np.where(near, l1, loss)
                err = np.where(near, 4.0 * _U * np.abs(l1), err)
                # masses known to a relative ρ: log(q/p) within log((1 + ρ)/(1 − ρ)) ≤
                # 2ρ/(1 − ρ) of the exact loss besides (p = q too: its loss 0 is then not exact)
                if mass_rtol > 0.0:
                    err = np.where(np.isfinite(loss),
                                   err + 2.0 * mass_rtol / (1.0 - mass_rtol), 0.0)
            q_only = (p == 0) & (q > 0)
        else:  # given losses are the authority: a P-mass that underflowed keeps its loss
            loss = np.asarray(loss, dtype=float).ravel()
            q_only = np.isposinf(loss)
            if loss_err is not None:
                err = np.where(np.isfinite(loss), np.asarray(loss_err, dtype=float).ravel(), 0.0)
        # +∞ losses (P-mass 0) join the Q-atom; empty outcomes are dropped
        # (rounded up: to nearest, 0.5 + 4.9e-17 was 0.5, and from_distributions read
        # ε(0.5) = 1.52 where δ(ε) > 0.5 at every ε, so the truth is ∞; a helper's hunt)
        q_inf = sum_up([float(q_inf), *q[q_only].tolist()]) if q_only.any() else float(q_inf)
        keep = ~q_only & ((p > 0) | (q > 0))
        p, q, loss = p[keep], q[keep], loss[keep]
        order = np.argsort(-loss, kind="stable")
        p, q, loss = p[order], q[order], loss[order]
        if err is not None:
            err = err[keep][order]
        ninf = np.isneginf(loss)
        if np.count_nonzero(ninf) > 1:
            # the P-only outcomes in one, their P-mass summed up (the inverse's +∞ atom and
            # where the curve reaches 0): merged below to nearest, 0.212… + 0.5 + 1.4e-17 lost
            # its last term, and symmetrize(from_distributions(P, Q)) read ε(0.7120082815734989)
            # = 8.6e-15 where the exact atom exceeds that δ, so no finite ε has it (hunt 403721)
            k = int(np.argmax(ninf))
            p = np.append(p[:k], sum_up(p[k:]))
            q = np.append(q[:k], float(q[k:].sum()))
            loss = np.append(loss[:k], -np.inf)
            if err is not None:
                err = np.append(err[:k], 0.0)
        # merge equal losses where the outcomes are colinear (their own q/p equal to 1e-12).
        # Merging sums the masses: the chord over the group's segments, which lies above them
        # where their likelihood ratios differ, as for given losses charged on a side (a curve
        # differenced from breakpoints, whose losses are raised and monotone-filled: the
        # mixture of a tangent-line curve with 15 segments at one raised loss read f_p 7.9e-4
        # above the exact curve, subsample(poisson_subsample(...).add, 0.3) 5e-3 relative; a
        # helper's hunt). A group that is not colinear keeps its outcomes, ordered within it
        # by their own q/p (the convex order: never above the segments), each with the group's
        # largest loss error.
        if p.size > 1:
            new = np.concatenate([[True], loss[1:] != loss[:-1]])
            grp = np.cumsum(new) - 1
            ng = int(grp[-1]) + 1
            pg, qg = np.bincount(grp, weights=p), np.bincount(grp, weights=q)
            # (colinear: each outcome's q/p equal to the group's first one's up to the two
            # products' rounding. Before, within a relative 1e-12 of the group's summed q/p:
            # a chord over ratios 1e-12 apart lies up to ~1e-12·β above the true kink, beyond
            # the ρ = 8u + 2·mass_rtol its reading moves points by. Hunt seed 403525: the
            # inverse of a Poisson-symmetric envelope, losses pooled to 1.0e-9 ± 1e-9 over
            # segments of q/p 1 + 6.25e-13 and 1 + 2e-16, mixed at p = 1 − 9.3e-10, merged the
            # kink at α = 0.32455; the remove curve of poisson_subsample(·, p) then read
            # f(0.5) = 0.39473007721863823 for the exact 0.39473007721860515)
            head = np.flatnonzero(new)[grp]
            with np.errstate(invalid="ignore", over="ignore"):
                a_, b_ = q * p[head], p * q[head]
                col = np.abs(a_ - b_) <= 2.0 * _U * (a_ + b_)
            whole = np.ones(ng, dtype=bool)
            np.logical_and.at(whole, grp, col | ~np.isfinite(loss))
            if err is not None:
                e_max = np.zeros(ng)
                np.maximum.at(e_max, grp, err)
            if whole.all():
                p, q, loss = pg, qg, loss[new]
                if err is not None:
                    err = e_max
            else:
                keep_row = ~whole[grp]  # (rows of groups kept apart)
                first = new & whole[grp]  # (one row per merged group)
                rows = np.flatnonzero(keep_row | first)
                gp = np.where(first, pg[grp], p)[rows]
                gq = np.where(first, qg[grp], q)[rows]
                g_loss = loss[rows]
                g_err = None if err is None else e_max[grp][rows]
                # within a kept group, by decreasing own ratio q/p (log q − log p; P = 0 first)
                with np.errstate(divide="ignore", invalid="ignore"):
                    own = np.where(gp > 0, np.log(gq) - np.log(gp), np.inf)
                order = np.lexsort((-own, grp[rows]))
                p, q, loss = gp[order], gq[order], g_loss[order]
                if g_err is not None:
                    err = g_err[order]
        masses = (p.copy(), q.copy(), loss.copy())
        for arr in masses:
            arr.setflags(write=False)
        zero = np.zeros(1)
        a = np.concatenate([zero, np.cumsum(p)])
        ac = np.concatenate([np.cumsum(p[::-1])[::-1], zero])
        b = np.concatenate([np.cumsum(q[::-1])[::-1], zero])
        qc = np.concatenate([zero, np.cumsum(q)])
        bc = q_inf + qc
        # normalise the last breakpoint exactly to (1, 0)
        a[-1], ac[-1], b[-1] = 1.0, 0.0, 0.0
        a = np.minimum(a, 1.0)
        # a P-mass too small to move α in float64 leaves a zero-length segment (a vertical step
        # that would break convexity): for evaluation, merge it into the previous segment by
        # dropping its left breakpoint (β moves by less than that segment's tiny Q-mass, α not at
        # all). δ and ε are computed from the masses themselves, which keep it.
        # At α = 0 the left breakpoint (0, 1 − q_∞) goes: the drop becomes part of 1 − f(0),
        # so evaluation stays on the pessimistic side.
        # Near α = 1 the complements ac carry the P-mass (a δ = 1e-300 atom at loss −∞ moves ac
        # from 1e-300 to 0): such a segment has length in 1 − α and is kept.
        with np.errstate(invalid="ignore"):
            zero = np.flatnonzero(np.where(a[1:] > 0.5, np.diff(ac) >= 0, np.diff(a) <= 0))
        if zero.size:
            drop = zero[zero < a.size - 1]  # (flatnonzero: sorted, no repeats)
            if drop.size:
                a, ac, b, qc = (np.delete(x, drop) for x in (a, ac, b, qc))
                bc = q_inf + qc
        mass_q_inf = q_inf
        if qc[0] > 0:  # the curve starts below 1 − q_∞: for evaluation that is a +∞ atom
            q_inf, qc = q_inf + float(qc[0]), qc - qc[0]
        out = cls(
            a,
            b,
            alpha_c=ac,
            beta_c=np.minimum(bc, 1.0),
            q_inf=q_inf,
            q_cum=qc,
            kind=kind,
            name=name,
            masses=masses,
            mass_q_inf=mass_q_inf,
            mass_rtol=mass_rtol,
        )
        out._loss_err = err
        return out

    # ---- data ----------------------------------------------------------------------------
    @property
    def breakpoints(self) -> tuple[np.ndarray, np.ndarray]:
        """The breakpoints (α_k, β_k) as two read-only arrays."""
        return self._a, self._b

    def _kinks(self) -> np.ndarray:
        return self._a

    @cached_property
    def _segments(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(p_j, q_j, loss_j) per segment between consecutive breakpoints, loss non-increasing;
        the +∞ atom is excluded. Aligned with the breakpoints (segment j joins k = j and j + 1).

        Masses are differences of breakpoints, taken from whichever end keeps precision. A
        difference that rounds to 0 gives a loss of ±∞ that convexity rules out in the middle of
        the curve: such losses are replaced by their neighbours' (never carried along).
        """
        return self._segments_on(self._side)

    def _segments_on(self, side: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:attr:`_segments` with the losses' rounding charged on ``side`` ("lower": up)."""
        a, ac, b, qc = self._a, self._ac, self._b, self._qc
        p = np.where(a[:-1] < 0.5, np.diff(a), -np.diff(ac))
        # Q-masses from the Q above (qc) only where both ends have β ≥ 1/2: the segment where β
        # crosses 1/2 joins a point read from qc to one read from β itself, and the two need not
        # agree (an engine curve's qc carries its round-off additions, ~5e-13 of excess mass on
        # a lower curve); differenced from β there, the masses sum to the curve's own 1 − q_inf.
        # (The excess, read as Q-mass of a lower curve, lowered δ of its inverse at ε < 0.)
        q = np.where(b[1:] < 0.5, -np.diff(b), np.diff(qc))
        p = np.maximum(p, 0.0)
        q = np.maximum(q, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = np.log(q) - np.log(p)
        # a difference of two coordinates is known only to a few ulps of them: a segment whose
        # masses are both that small has no reliable loss (it would be garbage, and a running
        # minimum would carry it to the segments after it); it takes its predecessor's
        ua = 8.0 * UNIT_ROUNDOFF * np.where(a[:-1] < 0.5, a[1:], ac[:-1])
        ub = 8.0 * UNIT_ROUNDOFF * np.where(b[:-1] < 0.5, b[:-1], qc[1:])
        noisy = (p <= ua) & (q <= ub) & ((p > 0) | (q > 0))
        if noisy.any():
            loss = np.where(noisy, np.nan, loss)
        # the loss log q − log p of differenced masses is off by about ua/p + ub/q: charged on
        # the curve's side (up for a lower or exact curve: δ and ε up). The breakpoints are
        # known only to ρ = 8u + 2·mass_rtol (:attr:`_rho`), not 8u: each end of a segment
        # moves by 2·mass_rtol of its stored coordinate (α or 1 − α, β or 1 − β, whichever
        # is below 1/2) besides, and its masses by the sum of the two.
        # (Charged 8u alone, the losses of symmetrize(group(exponential(u, u', 5), 2)), its
        # kinks 1.75e-14 relative off for a mass_rtol of 1.4e-14, were read on the optimistic
        # side 1.1e-14 above the truth, and so were a reloaded curve's (curve_to_spec records
        # the gap between the two sides' readings as the losses' error): δ(5.00788525363643)'s
        # lower end 2.1e-18 for the exact 0; hunt seed 406257)
        # A curve with loss bounds of its own (group's, below: certified from its factors'
        # losses, and tested against exact group points) reads those instead.
        m2 = 2.0 * self._mass_rtol
        with np.errstate(divide="ignore", invalid="ignore"):
            lerr = np.where((p > 0) & (q > 0), ua / p + ub / q, 0.0)
            if m2 > 0.0 and self._loss_bounds is None:
                ca = np.where(a < 0.5, a, ac)
                cb = np.minimum(b, self._bc)
                lerr = lerr + np.where((p > 0) & (q > 0), m2 * (
                    (ca[:-1] + ca[1:]) / p + (cb[:-1] + cb[1:]) / q), 0.0)
        # (capped: a segment of negligible mass must not move its neighbours' losses, which the
        # monotone fill below would carry along; not below a segment's own masses' charge)
        lerr = np.minimum(lerr, 1e-9 + 4.0 * m2)
        # and the rounding of the logs (an ulp each: numpy's are not correctly rounded) and of
        # their difference, 2u(|log q| + |log p|) + u|loss|: group(EpsDelta(3, 0), 20)'s top
        # loss read 60 − 7e-15 and its δ 0 one ulp below 60 for the true 6.8e-15 (a hunt
        # against mpmath)
        with np.errstate(divide="ignore", invalid="ignore"):
            lerr = lerr + np.where(np.isfinite(loss), UNIT_ROUNDOFF * (
                2.0 * (np.abs(np.log(q)) + np.abs(np.log(p))) + np.abs(loss)), 0.0)
        loss = loss + (lerr if side == "lower" else -lerr)
        bounds = self._loss_bounds
        if bounds is not None and bounds[0].size == loss.size:
            # (NaN losses, massless segments, keep taking their predecessor's)
            with np.errstate(invalid="ignore"):
                moved = np.fmax(loss, bounds[0]) if side == "lower" else np.fmin(loss, bounds[1])
            loss = np.where(np.isnan(loss), loss, moved)
        loss = _monotone_losses(loss, side)
        return p, q, loss

    @property
    def lower(self) -> TradeOff:
        """A certified lower curve. Exact curves return themselves, except an engine's
        optimistic curve (a bracket's ``upper``: its δ is its masses' less an offset, a
        constant one in its breakpoints and a smaller one at large ε in its δ and ε): its
        masses' own curve, whose δ is at least both. (Composed as an exact curve, the grid
        read its breakpoints, whose δ at ε = 10 was 0 for G_√0.74's optimistic curve, and the
        bracket came out inverted below its own δ(ε) = 1.5e-30.)"""
        return self._masses_curve if self._lifted else super().lower

    @property
    def _lifted(self) -> bool:
        """An engine's optimistic curve: exact-kind masses read with an offset (lift)."""
        return self._side == "upper" and self._given_masses is not None and (
            self._offset > 0.0 or self._offset_steps is not None) and self.kind == "exact"

    @cached_property
    def _masses_curve(self) -> PiecewiseLinear:
        """The curve of this curve's masses and +∞ atom, without the offset (side "lower")."""
        p, q, loss = self._given_masses  # type: ignore[misc]
        return PiecewiseLinear.from_masses(p, q, q_inf=self._mass_qinf, loss=loss)

    @cached_property
    def _masses(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The pair's outcome masses (p_j, q_j, loss_j), sorted by decreasing finite-or-−∞ loss,
        without the +∞ atom: the exact masses when the curve was built from masses."""
        if self._given_masses is not None:
            return self._given_masses
        p, q, loss = self._segments
        keep = (p > 0) | (q > 0)
        return p[keep], q[keep], loss[keep]

    @property
    def q_inf(self) -> float:
        """Q-mass at loss +∞: 1 − f(0)."""
        return self._qinf

    @cached_property
    def _profile(self) -> _Profile:
        q, loss = self._profile_masses()
        return _Profile(
            q, loss, self._mass_qinf, self._side, self._offset, self._mass_rtol,
            self._offset_steps, self._mass_qinf if self._exact_atom else 0.0,
        )

    def _profile_masses(self) -> tuple[np.ndarray, np.ndarray]:
        """The Q-masses and losses the profile reads (decreasing loss; losses computed from
        masses raised by their rounding)."""
        _, q, loss = self._masses
        err = self._loss_err
        if err is not None and err.size == loss.size and err.any() and self._side == "upper":
            # (the optimistic twin, :meth:`_as_upper`: lowered by their rounding, kept
            # non-increasing: the smallest lowered value at or before each)
            fin = np.isfinite(loss)
            down = np.where(fin, loss - err, loss)
            down = np.where(fin, np.minimum.accumulate(np.where(fin, down, np.inf)), loss)
            return q, np.minimum(down, loss)
        if err is not None and err.size == loss.size and err.any():
            # losses computed from the masses, raised by their rounding (kept non-increasing:
            # the largest raised value at or after each): from_distributions([.75, .25],
            # [.25, .75]).epsilon(1e-300) read 1.0986122886681096, 2 ulps below log 3
            fin = np.isfinite(loss)
            up = np.where(fin, loss + err, loss)
            up = np.where(fin, np.maximum.accumulate(np.where(fin, up, -np.inf)[::-1])[::-1],
                          loss)
            loss = np.maximum(up, loss)
        return q, loss

    @cached_property
    def _window_prep(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(q, loss, cumulative q) for :meth:`_epsilon_window`, or None where it does not
        apply (the upper side, an offset, fewer than 8192 masses, non-finite losses)."""
        if self._side != "lower" or self._offset != 0.0 or self._offset_steps is not None:
            return None
        q, loss = self._profile_masses()
        if q.size < 8192 or not np.all(np.isfinite(loss)) or not (q > 0).all():
            return None
        return q, loss, np.cumsum(q)

    def _epsilon_window(self, delta: float) -> float | None:
        """ε(δ) of the lower side from the masses between a loss x with δ(x) ≥ δ certain and
        the least loss ℓ_k whose Q-mass above (with the +∞ atom) is below δ, so that
        ε(δ) ≤ ℓ_k, with the masses above ℓ_k merged into one outcome. Merging outcomes is
        post-processing and leaves δ(ε) = q_∞ + Σ_{ℓ_j > ε} (q_j − e^ε p_j) unchanged at every
        ε ≤ ℓ_k; masses below x do not enter δ at ε ≥ x. The merged loss log(Q/P) is rounded
        up and P down (δ up), and the merged mass counts as all its terms in the rounding
        allowance (:class:`_Profile`'s ``count``, ``wmin``), so the answer is within the whole
        profile's allowance. None where that saves little or does not apply (the whole
        profile answers). An engine curve of DP-SGD on MNIST holds ~10⁵ masses: its profile
        was 5 ms of a 40 ms query. Scalar queries always take this path where it applies, so
        an answer does not depend on the queries before it."""
        prep = self._window_prep
        if prep is None:
            return None
        q, loss, qc = prep  # (qc: the Q-mass at losses ≥ ℓ_j, losses decreasing)
        m = q.size
        q_inf = self._mass_qinf
        thr = delta * (1.0 - 1e-6) - q_inf * (1.0 + 1e-12)
        if thr <= 0.0:
            return None
        k = int(np.searchsorted(qc, thr * (1.0 - (m + 4) * _U), side="right"))
        c = 0.25  # δ(x) ≥ (1 − e^{−c}) Q[L > x + c]: keep the losses ≥ x
        j = int(np.searchsorted(qc, 1.01 * delta / -math.expm1(-c), side="left")) + 1
        if k < 64 or j >= m:
            return None
        end = int(np.searchsorted(-loss, -(loss[j] - c), side="right"))  # losses ≥ ℓ_j − c
        if end - k < 16 or end >= m - 1:
            return None
        prof = _merged_window(q[:k], loss[:k], q[k:end], loss[k:end], q_inf, self._mass_rtol,
                              q_inf if self._exact_atom else 0.0)
        if prof is None:
            return None
        e = float(prof.epsilon(np.array([delta]))[0])
        if not (math.isfinite(e) and loss[end - 1] <= e <= loss[k]):
            return None
        return e

    @cached_property
    def _beta0(self) -> float:
        """f(0) = 1 − (the +∞ atom): when the atom is close to 1, the finite Q-mass summed
        (1 − q_∞ would keep only its absolute precision)."""
        if self._mass_qinf <= 0.5:
            return 1.0 - self._mass_qinf
        _, q, loss = self._masses
        return float(math.fsum(q[~np.isposinf(loss)]))

    @cached_property
    def _beta0_down(self) -> float:
        """f(0) rounded down: 1 − q_∞ is exact for q_∞ = 0, else taken an ulp lower where the
        float subtraction rounded up (and by the masses' relative error)."""
        b = self._beta0
        if self._mass_qinf <= 0.0:
            return b
        if self._mass_qinf > 0.5 or Fraction(b) + Fraction(self._mass_qinf) > 1:
            b = math.nextafter(b, 0.0)
        return max(b * (1.0 - 2.0 * self._mass_rtol) - self._tiny_q, 0.0)

    @cached_property
    def _tiny_q(self) -> float:
        """An absolute bound on what subnormal Q-masses add to β beyond the truth: each is
        within the least subnormal of its true value (a product's Q-mass that underflowed is
        raised to it, :func:`fdp.composition._exp_up`, which δ needs; a subnormal's rounding is
        absolute), which the relative ρ does not cover. (Without it compose(subsample(
        EpsDelta(1, 9.1e-13), 0.999), randomized_response(700), repeat=2) read f(1e-300) =
        1.5e-323, three raised masses above the exact 9.7e-609; a hunt, seed 2466.)"""
        _, q, _ = self._masses
        return float(np.count_nonzero((q > 0.0) & (q < 2.2250738585072014e-308))) * TINY

    @property
    def _rho(self) -> float:
        """The relative error the breakpoints of an exact curve are read with (see
        :meth:`_eval_pair`): 8u, plus twice the masses' relative error."""
        return 8.0 * _U + 2.0 * self._mass_rtol

    # ---- TradeOff interface --------------------------------------------------------------
    def _eval(self, alpha: np.ndarray) -> np.ndarray:
        alpha = np.asarray(alpha, dtype=float)
        return self._eval_pair(alpha, _one_minus(alpha, self._side == "upper"))[0]

    def _eval_pair(
        self, alpha: np.ndarray, alpha_c: np.ndarray, rounding: str | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """(f(α), 1 − f(α)) at α given with its complement 1 − α (both known to full relative
        precision): above α = 1/2 the curve is read in the complement coordinates, so points
        1e-300 apart near α = 1 stay apart. At α = 0 the value is 1 − (the +∞ atom), even where
        kinks underflowed to α = 0; a certified side (``bound``) rounds outward, since β
        carries a few ulps of 1.

        ``rounding`` ("down", "up" or "nearest"; default: down, up on an optimistic curve) is
        the side the value is rounded to: a guarantee reads f rounded down (less privacy), a
        caller building an optimistic curve from an exact one asks for "up", and one that
        charges the rounding of the curve it builds itself (group's kink-by-kink iteration,
        whose result carries ``mass_rtol``) for "nearest". An exact curve is read at
        α' = α(1 + ρ) (near α = 1: 1 − α' = (1 − α)(1 − ρ)) and its value scaled by 1 − ρ, with
        ρ = :attr:`_rho` (opposite signs for "up"). If each computed breakpoint (a_k, b_k) is
        within ρ relative (in its stored coordinate) of a true kink, the moved breakpoints lie
        left of and below the true kinks, so on or below the supporting line of each true
        segment, and so does each chord between them: the value is certified below the truth.
        To nearest, ``EpsDelta(5, 0)`` read 4e-14 relative above the truth next to its kink and
        ``EpsDelta(5, 0.5)(0.5)`` 8.7e-19 where the truth is 0 (a helper's hunt against
        mpmath)."""
        alpha = np.asarray(alpha, dtype=float)
        alpha_c = np.asarray(alpha_c, dtype=float)
        if rounding is None:
            rounding = "up" if self._side == "upper" else "down"
        directed = (self._side == "lower" and self.kind == "exact" and not self._bound
                    and rounding != "nearest")
        # an exact curve's optimistic twin (bound, side "upper") whose breakpoints carry the
        # masses' relative error (derived P-masses: an envelope's q e^{−ℓ}, swapped into its
        # inverse's Q-masses) reads them moved up by ρ too, as the lower side moves them down:
        # the bound's 2e-15 alone left min_envelope(from_distributions([2e-308, 3e-16, 1,
        # 1e-300, 3e-16], …), from_distributions([.64, .035, .33, 5e-324, 1e-310], …))
        # .inverse()._as_upper() at α = 1e-310 0.3603515624999904 for the exact 0.3603515625
        # (its breakpoint there 5.6e-14 relative low, its mass_rtol 7.6e-13; a hunt, seed 5149)
        directed = directed or (self._side == "upper" and self._bound and self.kind == "exact"
                                and self._mass_rtol > 0.0 and rounding == "up")
        if directed:
            # read at α moved by ρ relative (in the coordinate near its end of [0, 1], and by 8
            # subnormal ulps), then scale β by 1 ∓ ρ: monotone and convex, and below the truth
            # (above, for "up") when every breakpoint is within ρ of a point of the true curve
            rho = self._rho
            alpha0, alpha_c0 = alpha, alpha_c
            alpha, alpha_c = moved_coordinate(alpha, alpha_c, rho, rounding == "down")
        hi = alpha > 0.5
        v = _interp(alpha, self._a, self._b)
        vc = _interp(alpha, self._a, self._bc)
        if hi.any():
            ac_r, b_r, bc_r = self._ac[::-1], self._b[::-1], self._bc[::-1]
            v = np.where(hi, _interp(alpha_c, ac_r, b_r), v)
            vc = np.where(hi, _interp(alpha_c, ac_r, bc_r), vc)
        big = vc > 0.5  # f < 1/2: 1 − f is better from f itself
        vc = np.where(big, 1.0 - v, vc)
        if directed:
            # (a segment of subnormal length has an infinite slope in float: the shifted α,
            # 8 subnormal ulps from its end, reads ±∞ there; take the far end of the range)
            ok = np.isfinite(v) & np.isfinite(vc)
            if not ok.all():
                far = 0.0 if rounding == "down" else 1.0
                v, vc = np.where(ok, v, far), np.where(ok, vc, 1.0 - far)
            if rounding == "down":
                tq = self._tiny_q
                vc = np.minimum((vc + rho * v) * (1.0 + 2.0 * _U) + 2.0 * TINY + tq, 1.0)
                v = np.maximum(v * (1.0 - rho) - 2.0 * TINY - tq, 0.0)
            else:
                vc = np.maximum((vc - rho * v) * (1.0 - 2.0 * _U) - 2.0 * TINY, 0.0)
                v = np.minimum(v * (1.0 + rho) + 2.0 * TINY, np.maximum(alpha_c0, 0.0))
            alpha, alpha_c = alpha0, alpha_c0
        if self._offset == 0.0 and not self._bound:
            at0 = alpha == 0.0
            if rounding == "down" and self.kind == "exact":
                b0 = self._beta0_down
                v = np.where(at0, b0, v)
                vc = np.where(at0, max(self._mass_qinf, 1.0 - b0), vc)
            else:
                v = np.where(at0, self._beta0, v)
                vc = np.where(at0, self._mass_qinf, vc)
        if self._bound:
            r = -2e-15 if self._side == "lower" else 2e-15
            vc = vc - r * v
            v = v * (1.0 + r)
            if self._side == "upper":
                # an optimistic curve also takes an absolute 1e-14 below β = 1/2 (tapering to 0
                # at β = 1, so it stays monotone): a small β computed as 1 − (a sum close to 1),
                # e.g. 1 − the +∞ atom, carries that sum's absolute rounding; capped by 1 − α
                add = 1e-14 * np.minimum(1.0, 2.0 * vc)
                v = np.minimum(v + add, np.maximum(alpha_c, 0.0))
                vc = np.where(v > 0.5, vc - add, 1.0 - v)
        return v, vc

    def _eval_up(self, alpha: np.ndarray) -> np.ndarray:
        alpha = np.asarray(alpha, dtype=float)
        return self._eval_pair(alpha, _one_minus(alpha, True), "up")[0]

    #: builds this curve's optimistic twin where its own masses cannot give one (see
    #: ``_twin_ok``; :func:`fdp.composition._exact_product`)
    _twin_build: Any = None
    #: builds the optimistic twin of this curve's inverse, where ``_twin_build`` is set (the
    #: inverse of a twin read from breakpoints is loose: see ``_build_inverse``)
    _inverse_twin_build: Any = None
    #: builds this curve's inverse where its masses cannot give it: an exact product's losses
    #: are raised (its sums rounded up, its factors' recorded errors added), which is the
    #: pessimistic side for the curve but, negated, the optimistic one for its inverse. Its
    #: inverse is then the product of its factors' inverses, (⊗ f_i)⁻¹ = ⊗ f_i⁻¹ (Dong, Roth
    #: & Su 2022, Prop 2.6 and Thm 3.2), rounded up the same way
    #: (:func:`fdp.composition._exact_product`). None if that product is too large.
    _inverse_build: Any = None

    def _loss_errs(self) -> np.ndarray:
        """Bounds on the rounding of the losses of ``_masses`` (0 where none): the recorded ones
        of given masses; for masses differenced from breakpoints (whose losses carry their
        charge on this side already), the gap to the other side's reading, so that a curve
        derived from them and read optimistically lowers them past the truth (kov(0, 1e-6, 1)
        read δ(0)'s lower end 6.9e-16 above the exact 1e-6: Identity's loss 0 carried 1.8e-15)."""
        loss = self._masses[2]
        if self._given_masses is None:  # (the other side's segments: the same masses)
            other = "upper" if self._side == "lower" else "lower"
            p, q, o_loss = self._segments_on(other)
            o_loss = o_loss[(p > 0) | (q > 0)]
            fin = np.isfinite(loss) & np.isfinite(o_loss)
            return np.where(fin, np.abs(loss - np.where(fin, o_loss, 0.0)), 0.0)
        err = self._loss_err
        if err is None or err.size != loss.size:
            err = np.zeros(loss.size)
        return np.where(np.isfinite(loss), err + self._loss_bias, 0.0)

    def _as_upper(self) -> PiecewiseLinear:
        """The same curve read as a certified UPPER curve: δ and ε rounded down, not up."""
        if self._side == "upper":
            return self
        if self._twin_build is not None:
            twin = self.__dict__.get("_twin")
            if twin is None:
                twin = self._twin = self._twin_build()
            return twin  # type: ignore[no-any-return]
        a, ac, b, bc, qc, q_inf = self._unfolded()
        out = PiecewiseLinear(
            a, b, alpha_c=ac, beta_c=bc, q_inf=q_inf,
            q_cum=qc, kind=self.kind, name=self._name, masses=self._given_masses,
            side="upper", offset=0.0, mass_q_inf=self._mass_qinf, bound=True,
            mass_rtol=self._mass_rtol,
        )
        out._loss_err = self._loss_err  # (its losses read lowered by them: _profile_masses)
        out._loss_bias = self._loss_bias
        out._loss_bounds = self._loss_bounds
        out.__dict__["_reading_of"] = self  # (operations on a twin start from what it reads)
        return out

    def _unfolded(
        self,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
        """The breakpoints (α, 1 − α, β, 1 − β, q_cum, q_∞) read as an UPPER curve. Given masses
        of finite loss whose P-mass underflowed to 0 put their kinks at α = 0, where the
        breakpoints read them as a +∞ atom (1 − f(0) above the true atom), and those whose
        Q-mass underflowed put β = 0 before α = 1: below the truth on the optimistic side.
        group(oue(800), 4).upper(0) read 0.5 for the exact 1, and its symmetrization (the hull of
        these breakpoints) δ(3201)'s lower end 0.5 and ε(1e-300)'s ∞ for the exact 0 and 3200.
        The upper reading starts at (0, 1 − q_∞) and moves those kinks to α = n·TINY (resp. β =
        n·TINY) for the n such outcomes, each below TINY: the chord lies above the convex truth."""
        a, ac, b, bc, qc, q_inf = self._a, self._ac, self._b, self._bc, self._qc, self._qinf
        if self._given_masses is None or self.kind != "exact" or a.size < 2:
            return a, ac, b, bc, qc, q_inf
        p, q, loss = self._given_masses
        fin = np.isfinite(loss)
        n0 = int(np.count_nonzero(fin & (p == 0.0) & (q > 0.0)))
        n1 = int(np.count_nonzero(fin & (q == 0.0) & (p > 0.0)))
        m_inf = float(self._mass_qinf)
        if n0 and a[0] == 0.0 and q_inf > m_inf:
            j = int(np.count_nonzero(a == 0.0)) - 1  # the last point at α = 0 (lowest β)
            a = np.concatenate([[0.0, n0 * TINY], a[j + 1:]])
            ac = np.concatenate([[1.0, 1.0], ac[j + 1:]])
            b = np.concatenate([[1.0 - m_inf], b[j:]])
            bc = np.concatenate([[m_inf], bc[j:]])
            qc = np.concatenate([[0.0], qc[j:] + (q_inf - m_inf)])
            q_inf = m_inf
        zero = (b == 0.0) & (a < 1.0)
        if n1 and zero.any():
            i = int(np.argmax(zero))  # the first zero before α = 1 is n1·TINY, the rest dropped
            keep = ~zero
            keep[i] = True
            b, bc = b.copy(), bc.copy()
            b[i], bc[i] = n1 * TINY, 1.0
            a, ac, b, bc, qc = a[keep], ac[keep], b[keep], bc[keep], qc[keep]
        return a, ac, b, bc, qc, q_inf

    def _twin_lower(self, inverse: bool = False) -> PiecewiseLinear:
        """The curve this curve's optimistic twin (of its inverse, with ``inverse``) reads:
        operations on a twin (group, subsampling, f ⊗ f_{0,δ}) start from its masses on the
        lower side, whose inverse keeps them (an upper reading's inverse is rebuilt from
        breakpoints, 5,563 of 13,680 outcomes in a reference case, and read ε 9e-5 low)."""
        twin = (self.inverse() if inverse else self)._as_upper()
        return twin.__dict__.get("_reading_of", twin)  # type: ignore[no-any-return]

    def _eval_c(self, alpha: np.ndarray) -> np.ndarray:
        """1 − f(α) from the complements (full relative precision where f is close to 1)."""
        alpha = np.asarray(alpha, dtype=float)
        v = np.interp(alpha, self._a, self._bc)
        lo = v > 0.5  # f(α) < 1/2: 1 − f is better from f itself
        if lo.any():
            v = np.where(lo, 1.0 - np.asarray(self._eval(alpha)), v)
        return v

    def inverse(self) -> PiecewiseLinear:
        """f⁻¹: breakpoints swapped (exact); T(P, Q)⁻¹ = T(Q, P)."""
        if self._self_inverse:
            return self
        if self._inverse_of is not None:
            return self._inverse_of
        out = self._build_inverse()
        out._inverse_of = self
        return out

    def _build_inverse(self) -> PiecewiseLinear:
        if self._inverse_build is not None and self.kind == "exact":
            got = self._inverse_build()
            if got is not None:
                return got  # type: ignore[no-any-return]
        out = inherit_twin(self._build_inverse_of(), self)
        build = self._inverse_twin_build
        if not self._twin_ok and build is not None and self.kind == "exact":
            # (a curve derived from an exact product's masses: its inverse's twin is built the
            # same way from the factors' inverses, e.g. ⊗ f_i⁻¹ for the product itself;
            # without it symmetrize(compose(f, repeat=3)) had no lower δ end)
            out._twin_build = build
        return out

    def _swapped_p_rtol(self) -> float:
        """The relative error of the given P-masses beyond ``mass_rtol``, which an inverse or a
        mixture built from the swapped masses reads as its Q-masses: 0 here (P-masses given),
        an envelope's derived ones' in :class:`fdp.operations._PartsEnvelope`."""
        return 0.0

    def _build_inverse_of(self) -> PiecewiseLinear:
        # from the masses only for a probability pair (an engine curve's grid measure is not one)
        plain = self._offset == 0.0 and not self._bound
        given = self._given_masses is not None
        if plain and (given or (self._qinf > 0 and self._mass_qinf == self._qinf)):
            # (given masses are the authority: their +∞ atom is _mass_qinf, whatever Q-mass
            # evaluation merged into 1 − f(0) where P-masses underflowed)
            atom = self._mass_qinf
            if given:
                p, q, loss = self._masses
            else:
                # differenced masses: their losses' rounding is charged the other way, so that
                # negated it lands on this curve's side
                p, q, loss = self._segments_on("upper" if self._side == "lower" else "lower")
                o_loss = self._segments_on(self._side)[2]
                keep = (p > 0) | (q > 0)
                p, q, loss, o_loss = p[keep], q[keep], loss[keep], o_loss[keep]
                # the truth lies between the two sides' readings: given as their midpoint with
                # half their gap as its rounding bound, each side reads its own (the charge
                # baked into the losses was invisible to the optimistic reading, _as_upper,
                # and to curves derived from the masses: the upper end of
                # poisson_subsample(poisson_subsample(group(from_eps_delta([1], [.1]), 2),
                # 1 − 2.8e-14).add, 1).symmetric read δ(2) 3.4e-13 relative above the truth)
                fin = np.isfinite(loss) & np.isfinite(o_loss)
                lf, of = np.where(fin, loss, 0.0), np.where(fin, o_loss, 0.0)
                mid = 0.5 * lf + 0.5 * of
                d_err = np.where(fin, np.maximum(np.abs(lf - mid), np.abs(of - mid))
                                 + 2.0 * _U * (np.abs(lf) + np.abs(of)), 0.0)
                loss = np.where(fin, mid, loss)
            (pp, qq, ll), q_inf = _swap_masses(p, q, loss, atom)
            # (given P-masses that are derived, an envelope's q e^{−ℓ}, become Q-masses here:
            # their relative error is charged, :meth:`_swapped_p_rtol`)
            rtol = self._mass_rtol + (self._swapped_p_rtol() if given else 0.0)
            out = PiecewiseLinear.from_masses(
                pp, qq, q_inf=q_inf, loss=ll, kind=self.kind, mass_rtol=rtol,
                loss_err=None if given else np.append(d_err[~np.isneginf(loss)][::-1], 0.0),
            )
            if given:  # (an exact atom at either end is the inverse's exact atom at the other)
                out._exact_atom, out._exact_neg_atom = self._exact_neg_atom, self._exact_atom
            err = self._loss_err
            if given and err is not None and err.size == loss.size:
                # the same rounding bounds, for the negated losses (charged up there too),
                # matched by value (from_masses drops empty outcomes and merges equal losses)
                e = np.append(err[~np.isneginf(loss)][::-1], 0.0)
                lo = out._masses[2]
                srt = np.argsort(ll, kind="stable")
                j = np.clip(np.searchsorted(ll[srt], lo), 0, ll.size - 1)
                hit = ll[srt][j] == lo
                out._loss_err = np.where(hit, e[srt][j], 0.0)
            if given or self._side != "lower":
                return out
            # Differenced masses rebuild the breakpoints from sums and drop or merge what
            # rounds away: a segment lost between two kept breakpoints leaves their chord,
            # which lies above a convex curve. A lower curve's inverse must stay below its
            # mirror (the swapped breakpoints, exact): where the masses' curve is above it at
            # the mirror's breakpoints, the mirror is the inverse. (symmetrize(Mixture(L_30,
            # 0.1)): 574 of 3,792 breakpoints lost next to the kink of slope −1, the inverse
            # 1.5e-12 above f_p⁻¹ and the symmetrized lower curve 8e-13 above the truth.)
            mirror = self._mirror()
            a, b = mirror._a, mirror._b
            got = out._eval(np.clip(a, 0.0, 1.0))
            if np.any(got > b * (1.0 + 16.0 * _U) + 1e-300):
                return mirror
            return out
        return self._mirror()

    def _mirror(self) -> PiecewiseLinear:
        """The inverse from the swapped breakpoints, with this curve's loss bounds negated
        (T(P, Q)⁻¹ = T(Q, P): segment losses negated, in reverse order)."""
        a, ac, b, bc = self._swapped()
        # (with the breakpoints' relative error: dropped, group(olh(3), 2)'s inverse read
        # 3.5e-16 relative above the truth, its kinks further off than the default 8u)
        out = PiecewiseLinear(a, b, alpha_c=ac, beta_c=bc, kind=self.kind,
                              mass_rtol=self._mass_rtol)
        bounds = self._loss_bounds
        if bounds is not None and bounds[0].size == self._a.size - 1:
            # (_swapped drops the leading points of α = 0 but the last, appends (1, 0) where
            # f(0) < 1: the segments between the dropped points go, the appended one is unknown)
            drop = int(np.count_nonzero(self._b == 0.0)) - 1 if self._b[-1] == 0.0 else 0
            up, lo = -bounds[1][::-1][max(drop, 0):], -bounds[0][::-1][max(drop, 0):]
            extra = out._a.size - 1 - up.size
            if extra in (0, 1):
                nan = np.full(extra, np.nan)
                out._loss_bounds = (np.append(up, nan), np.append(lo, nan))
        return out

    def _swapped(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The inverse's breakpoints (α, 1 − α, β, 1 − β): these swapped, pointwise exact."""
        a = self._b[::-1]
        ac = self._bc[::-1]
        b = self._a[::-1]
        bc = self._ac[::-1]
        # f vanishing on [α₀, 1] gives several points with new α = 0: keep the lowest
        zeros = np.flatnonzero(a == 0.0)
        if zeros.size > 1:
            drop = zeros[:-1]
            a, ac, b, bc = (np.delete(x, drop) for x in (a, ac, b, bc))
        # f(0) < 1: the inverse is 0 on [f(0), 1]. Read from the complement too: an atom
        # 1 − f(0) below an ulp of 1 leaves a[-1] = 1.0, and the segment it spans (a P-mass
        # at loss −∞) was lost to the inverse's masses (a mixture of it dropped the atom's
        # (1 − p) share: poisson_subsample(·).remove read δ(10) = 0 for 9.5e-19)
        if a[-1] < 1.0 or ac[-1] > 0.0:
            a, ac = np.append(a, 1.0), np.append(ac, 0.0)
            b, bc = np.append(b, 0.0), np.append(bc, 1.0)
        return a, ac, b, bc

    @cached_property
    def is_symmetric(self) -> bool:  # type: ignore[override]
        """Exact check: f and f⁻¹ agree at the union of their breakpoints (to 1e-12)."""
        inv = self.inverse()
        pts = np.union1d(self._a, inv._a)
        return bool(np.max(np.abs(self._eval(pts) - inv._eval(pts))) <= 1e-12)

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        return self._profile.delta(eps)

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        # (a scalar query always from its window where one applies, whatever was asked
        # before: the same question gets the same answer to the last bit)
        if np.size(delta) == 1:
            e = self._epsilon_window(float(np.asarray(delta).flat[0]))
            if e is not None:
                return np.full(np.shape(delta), e)
        return self._profile.epsilon(delta)

    def _bin_masses(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """The outcome masses (p, q, loss) and +∞ atom that the engine discretizes."""
        if self._offset > 0.0:  # the offset lives in the breakpoints only
            p, q, loss = self._segments
            return p, q, loss, self._qinf
        (p, q, loss), q_inf = self._masses, self._mass_qinf
        return p, q, loss, q_inf

    def _finite_outcomes(self) -> tuple[np.ndarray, np.ndarray]:
        """The Q-masses and losses of the outcomes with finite loss and Q-mass > 0."""
        _, q, loss, _ = self._bin_masses()
        fin = np.isfinite(loss) & (q > 0.0)
        return q[fin], loss[fin]

    def _loss_moments(self) -> tuple[float, float] | None:
        """Mean and variance under Q of the finite losses, summed over the outcomes (exact up
        to rounding; the engine's 4001-bin estimate read a curve of 16,000 masses in 6 ms)."""
        q, loss = self._finite_outcomes()
        tot = float(q.sum())
        if tot <= 0.0:
            return 0.0, 0.0
        m = float((q * loss).sum() / tot)
        return m, float((q * (loss - m) ** 2).sum() / tot)

    def _loss_support(self, tail: float) -> tuple[float, float]:
        """The smallest interval of outcome losses outside which the finite losses' Q-mass is
        at most ``tail`` on each side ((0, 0) if there is none)."""
        q, loss = self._finite_outcomes()
        if loss.size == 0:
            return 0.0, 0.0
        order = np.argsort(loss, kind="stable")
        ll, qq = loss[order], q[order]
        below = np.cumsum(qq)  # Q[L ≤ ℓ_i]
        above = np.cumsum(qq[::-1])[::-1]  # Q[L ≥ ℓ_i]
        i0 = int(np.searchsorted(below, tail, side="right"))  # first with Q[L ≤ ℓ] > tail
        i1 = int(np.flatnonzero(above > tail)[-1]) if (above > tail).any() else ll.size - 1
        i0 = min(i0, ll.size - 1)
        return float(ll[min(i0, i1)]), float(ll[max(i0, i1)])

    def _loss_bins(self, edges: np.ndarray) -> LossBins:
        p, q, loss, q_inf = self._bin_masses()
        return self._outcome_bins(edges, p, q, loss, q_inf, None)

    def _engine_bins(self, edges: np.ndarray, side: str) -> LossBins | None:
        """The composition engine's bins for one side (``"lower"``: its pessimistic measure,
        ``"upper"``: its optimistic one), where the given masses are not exact; None where
        they are (:meth:`_loss_bins` serves both sides).

        :meth:`_loss_bins` reads the masses as an exact pair, and the engine each bin's loss as
        log(q/p) of its masses. But the masses are known to a relative ``mass_rtol`` ρ and the
        losses within :meth:`_loss_errs` e (computed from the masses, given, or an exact
        product's raised by ``_loss_bias``), which the curve's own δ and ε charge
        (:meth:`_profile_masses`, :class:`_Profile`) and the engine did not: an outcome whose
        computed loss sits on a grid point (the grid is aligned to them, :meth:`_atoms`) while
        its true loss is above went to the bin below, and the clipped split put its loss at
        the grid point; from_masses with ρ = 1e-8 composed read δ(0)'s upper end 3.0e-9 below
        the exact one (tests/test_engine_loss_err.py). Each outcome is read here as Q-mass
        q/(1 − ρ) (lower) or q/(1 + ρ) (upper) at its computed loss ℓ̂ (|ℓ̂ − ℓ| ≤ e), with the
        P-mass q e^{−ℓ̂}: every true outcome's δ term q (1 − e^{ε−ℓ})₊ lies below its lower
        replacement's at ε − e, and above its upper one's at ε + e (the engine reads the
        composed losses higher, or lower, by Σ n_i × :meth:`_engine_shift`, the largest e),
        so the measures bound δ on their side
        at every ε (the engine's certificate is per nonnegative measure; the totals need not be
        1). Only the engine reads these: a consumer that mirrors P and Q
        (:class:`fdp.operations.Subsampled`) would need the loss moved the other way."""
        if side == "upper":
            twin = self._engine_twin()
            if twin is not None:
                from .pld import _side_bins

                return _side_bins(twin, edges, "upper")
        got = self._engine_outcomes(side)
        if got is None:
            return None
        pp, qq, lam, q_inf = got
        return self._outcome_bins(edges, pp, qq, lam, q_inf, np.zeros(lam.size))

    def _engine_twin(self) -> PiecewiseLinear | None:
        """The curve whose masses the engine's optimistic side reads in place of this curve's,
        where these are a pessimistic garbling (``_twin_ok`` False: an exact product's merged
        outcomes, :func:`fdp.composition._exact_product`, and curves derived from them): its
        optimistic twin's (:meth:`_twin_lower`); None where its own masses serve. (Before, the
        engine read the garbled masses on both sides: compose(g, repeat=2, numeric=True) for
        g = compose(poisson_subsample(T(P, Q), 1e-12).add.inverse(), repeat=2), whose 25
        outcomes of losses within 3e-12 the product merged into two at the ends, read δ(0)'s
        lower end 1.6738589744864958e-12 for the exact 7.922368778858737e-13; a sweep of
        engine compositions, seed 500316. A garbled curve without a twin keeps its masses.)"""
        if (self._twin_ok or self.kind != "exact" or self._side != "lower"
                or self._offset != 0.0 or not self._has_twin()):
            return None
        twin = self._twin_lower()
        return None if twin is self else twin

    def _engine_shift(self, side: str | None = None) -> float:
        """How far the losses of :meth:`_engine_bins` for ``side`` (None: either) may lie from
        the true ones: the largest error of a finite loss with Q-mass (the optimistic side's
        from the twin's bins where :meth:`_engine_twin` gives them). The bins keep the losses
        where they are (on the grid points aligned to them; moved each by its own error, they
        sat beside them, and the optimistic measure's clamped charges there cost
        compose(T(P, Q), repeat=500) half its time again in slack bounds), and the engine
        reads the composed losses higher by Σ n_i × this on the pessimistic side and lower on
        the optimistic one, as it does its own rounding (``pld._Component.loss_err``,
        ``lower_shift``)."""
        twin = self._engine_twin() if side != "lower" else None
        if twin is not None:  # (the optimistic side reads the twin's bins, and their errors)
            t_shift = float(twin._engine_shift("upper"))
            if side == "upper":
                return t_shift
        else:
            t_shift = 0.0
        if self._engine_outcomes("lower") is None:
            return t_shift
        p, q, loss = self._masses
        err = self._loss_errs()[np.isfinite(loss) & (q > 0.0)]
        return max(float(err.max()) * (1.0 + 1e-12) if err.size else 0.0, t_shift)

    def _engine_outcomes(self, side: str) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                   float] | None:
        """The outcomes (p, q, loss) and +∞ atom :meth:`_engine_bins` bins for ``side``, or
        None (computed once per side: the engine bins a curve many times while it plans)."""
        memo = self.__dict__.setdefault("_engine_memo", {})
        if side not in memo:
            memo[side] = self._engine_outcomes_uncached(side)
        return memo[side]  # type: ignore[no-any-return]

    def _engine_outcomes_uncached(self, side: str) -> tuple[
            np.ndarray, np.ndarray, np.ndarray, float] | None:
        # (differenced masses too: an envelope's breakpoints come from its parts' running sums,
        # whose rounding its mass_rtol charges: subsample(compose(T(P, Q), 3), 1) read its
        # +∞ atom 0.4247138289988145 for the exact 0.42471382899881455, and composed, ε at that
        # δ finite for ∞; a sweep of engine compositions)
        if self._offset != 0.0:
            return None
        p, q, loss = self._masses
        err = self._loss_errs()
        rho = self._mass_rtol
        if rho == 0.0 and not err.any():
            return None
        lower = side == "lower"
        fin = np.isfinite(loss) & (q > 0.0)
        # the losses stay where they are, on the grid points aligned to them (:meth:`_atoms`):
        # the engine reads each side's composed losses moved by Σ n_i × _engine_shift. (Each
        # raised by its own error on the lower side, they sat just above those grid points, a
        # step from their bins' tops, and could not all be aligned at once: ±ℓ + e: the planner
        # refined the grid five times for compose(T(P, Q), repeat=100), 2.5 → 5.6 ms)
        lam = loss
        # (1 ± 4u: the scale's and the product's rounding)
        s = (1.0 + 4.0 * _U) / (1.0 - rho) if lower else (1.0 - 4.0 * _U) / (1.0 + rho)
        qq = q * s if rho > 0.0 else q
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            # (in log space where e^{−ℓ} would overflow)
            pl = np.where(lam > -700.0, qq * np.exp(-np.where(fin, lam, 0.0)),
                          np.exp(np.log(qq) - lam))
        # (the P-masses at loss −∞, which carry no Q-mass here, scaled for the side as well: a
        # mixture reads them as Q-mass (1 − p)P at log(1 − p), operations.Mixture._engine_bins)
        if rho > 0.0 or self._swapped_p_rtol() > 0.0:
            r_p = rho + self._swapped_p_rtol()
            p = p * ((1.0 + 4.0 * _U) / (1.0 - r_p) if lower else (1.0 - 4.0 * _U) / (1.0 + r_p))
        pp = np.where(fin, pl, p)
        q_inf = self._mass_qinf
        if rho > 0.0 and not self._exact_atom:
            q_inf = q_inf * s
        return pp, qq, lam, q_inf

    def _outcome_bins(self, edges: np.ndarray, p: np.ndarray, q: np.ndarray, loss: np.ndarray,
                      q_inf: float, err: np.ndarray | None) -> LossBins:
        """Bins of the outcomes (p, q, loss) and the +∞ atom; ``err``: the losses' error bounds
        for the tiny-P bins' loss bounds (None: :meth:`_loss_errs`)."""
        j = np.searchsorted(edges, loss, side="left") - 1  # bin (e_j, e_{j+1}]
        nb = edges.size - 1
        below = j < 0
        above = j >= nb
        inside = ~below & ~above
        pb = np.bincount(j[inside], weights=p[inside], minlength=nb)
        qb = np.bincount(j[inside], weights=q[inside], minlength=nb)
        lo = hi = None
        if self._offset == 0.0 and pb.size:
            if err is None:
                lo, hi = self._bin_losses(edges, j, inside, pb, qb) or (None, None)
            else:
                lo, hi = outcome_bin_losses(edges, j, inside, pb, qb, p, q, loss, err) or (
                    None, None)
        return LossBins(
            p=pb,
            q=qb,
            p_below=float(p[below].sum()),
            q_below=float(q[below].sum()),
            p_above=float(p[above].sum()),
            q_above=float(q[above].sum()),
            q_inf=q_inf,
            loss_lo=lo,
            loss_hi=hi,
        )

    def _bin_losses(self, edges: np.ndarray, j: np.ndarray, inside: np.ndarray,
                    pb: np.ndarray, qb: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Bounds on the losses of the bins whose P- or Q-mass is below :data:`TINY_P`, from
        the outcomes' own losses (:func:`outcome_bin_losses`)."""
        p, q, loss = self._masses
        return outcome_bin_losses(edges, j, inside, pb, qb, p, q, loss, self._loss_errs())

    def _atoms(self) -> np.ndarray:
        p, q, loss = self._masses
        return loss[np.isfinite(loss) & (q > 0)]

    def __repr__(self) -> str:
        if self._name:
            return self._name
        return f"PiecewiseLinear({self._a.size} breakpoints, kind={self.kind!r})"



class TwinOfBase:
    """Mixin for an exact curve built from one base curve f and a parameter (the attribute
    named by ``_twin_param``): its optimistic reading (ε and δ rounded toward more privacy,
    the lower ends of its brackets) is the same construction on f's (``_as_upper``), with its
    own roundings flipped (``_optimistic``); none where f has none."""

    _optimistic = False
    _twin_param = ""
    base: TradeOff
    kind: Kind

    def _as_upper(self) -> Any:
        if self._optimistic or self.kind != "exact" or not self.base._has_twin():
            return self
        out = type(self)(self.base._as_upper(),  # type: ignore[attr-defined, call-arg]
                         getattr(self, self._twin_param))
        out._optimistic = True
        return out

    def _has_twin(self) -> bool:
        return self._as_upper() is not self


def inherit_twin(out: TradeOff, *parents: TradeOff) -> Any:
    """``out`` with ``_twin_ok`` False where a parent's is (a curve derived from masses that are
    a pessimistic garbling has no optimistic reading either); returns ``out``."""
    if not all(getattr(f, "_twin_ok", True) for f in parents):
        out._twin_ok = False
    return out


def _swap_masses(
    p: np.ndarray, q: np.ndarray, loss: np.ndarray, atom: float
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], float]:
    """The masses of T(Q, P) from those of T(P, Q) (sorted by decreasing loss) and its +∞ atom:
    P and Q swapped, losses negated and reversed (still decreasing); P-only outcomes (loss −∞)
    become the +∞ atom, the +∞ atom a P-only outcome. Returns ((p', q', loss'), q_inf')."""
    neg = np.isneginf(loss)
    out = (np.append(q[~neg][::-1], atom), np.append(p[~neg][::-1], 0.0),
           np.append(-loss[~neg][::-1], -np.inf))
    return out, float(p[neg].sum())


def _one_minus(alpha: np.ndarray, up: bool) -> np.ndarray:
    """1 − α, rounded up where ``up`` (the cap f ≤ 1 − α of an optimistic reading: to nearest,
    1 − 0.3 is 5.6e-17 below the exact 1 − 0.3, and upper curves equal to 1 − α read below
    it; hunts, seeds 101023, 200031), else to nearest. 1 − α is exact for α ≥ 1/2 (Sterbenz's
    lemma); below, fl(1 − α) is short of it exactly where 1 − fl(1 − α) (exact) exceeds α."""
    c = 1.0 - alpha
    if not up:
        return c
    return np.where((alpha < 0.5) & (1.0 - c > alpha), np.nextafter(c, 2.0), c)


def _monotone_losses(loss: np.ndarray, side: str = "lower") -> np.ndarray:
    """Losses of consecutive segments made non-increasing without carrying ±∞ along.

    NaN (a massless segment) takes its predecessor's loss; −∞ (a Q-mass that rounded to 0)
    before a finite loss takes the next finite loss; +∞ (a P-mass that rounded to 0) after a
    finite loss takes the previous one. Remaining violations (a curve convex only up to
    rounding) are removed on the curve's side: a lower (or exact) curve raises a loss to the
    largest after it (δ up: pessimistic), an upper curve lowers it to the smallest before it.
    """
    loss = loss.copy()
    if loss.size == 0:
        return loss
    fin = np.isfinite(loss)
    if fin.any():
        idx = np.flatnonzero(fin)
        last_fin = idx[-1]
        first_fin = idx[0]
        # −∞ before the last finite loss: next finite value (backward fill)
        bad = np.isneginf(loss) & (np.arange(loss.size) < last_fin)
        if bad.any():
            nxt = np.searchsorted(idx, np.flatnonzero(bad))
            loss[bad] = loss[idx[nxt]]
        # +∞ after the first finite loss: previous finite value
        bad = np.isposinf(loss) & (np.arange(loss.size) > first_fin)
        if bad.any():
            prv = np.searchsorted(idx, np.flatnonzero(bad)) - 1
            loss[bad] = loss[idx[prv]]
    nan = np.isnan(loss)
    if nan.any():  # predecessor's loss
        idx = np.where(~nan, np.arange(loss.size), 0)
        np.maximum.accumulate(idx, out=idx)
        first = np.flatnonzero(~nan)
        loss = np.where(nan & (np.arange(loss.size) >= (first[0] if first.size else 0)),
                        loss[idx], loss)
        loss = np.where(np.isnan(loss), np.inf, loss)  # leading NaN: above everything
    if side == "lower":
        return np.maximum.accumulate(loss[::-1])[::-1]
    return np.minimum.accumulate(loss)


#: unit roundoff of float64
_U = UNIT_ROUNDOFF


#: relative amount an optimistic (upper) curve's δ gives up beyond its proved rounding bounds
_UPPER_RTOL = 1e-13


class _Profile:
    """δ(ε) and ε(δ) of a discrete pair: the one place where fdp computes them from masses.

    For outcomes with Q-masses q_j and losses ℓ_j = log(q_j/p_j) sorted decreasingly, plus a
    Q-atom q_∞ at ℓ = +∞ (theory §3; Dong, Roth & Su 2022, Prop 2.12):

        δ(ε) = q_∞ + Σ_{ℓ_j > ε} q_j (1 − e^{ε − ℓ_j}) = q_∞ + Qc_k − e^ε Pc_k,

    with k = #{j : ℓ_j > ε}, Qc_k = Σ_{j<k} q_j and Pc_k = Σ_{j<k} p_j, p_j = q_j e^{−ℓ_j} (kept
    as log Pc_k, so ε > 709 and underflowed p_j are fine). Every term of the sum is ≥ 0; the
    rounding of the two sums and of their difference is at most
    err = (k + 4) u (q_∞ + Qc_k + e^ε Pc_k) (recursive summation, Higham, "Accuracy and Stability
    of Numerical Algorithms", 2002, §4.2), plus rtol·δ for masses that are themselves known
    only to a relative rtol (the losses being exact, every term of the sum moves by rtol of
    itself).

    ``side="lower"`` (a certified lower curve, or an exact curve reported as a guarantee): δ is
    rounded up by err and ε(δ) is an upper bound on the exact one. ``side="upper"`` (a certified
    upper curve, optimistic): ``offset`` ≥ 0 is subtracted from δ (the engine's lift), δ is
    rounded down by err, and ε(δ) is a lower bound. ``offset_steps`` = (e, v), if given, is a
    non-increasing step function that replaces the constant offset: v_j on [e_j, e_{j+1}),
    v_{−1} from the last edge on (and at ε = +∞), ``offset`` below e_0. The resulting δ need
    not be monotone; it lies below the true (non-increasing) δ, so the smallest ε at which it
    reaches a target is still a lower bound on the true ε.

    ``count`` and ``wmin`` (per mass, optional) describe masses that stand for several merged
    outcomes (:class:`fdp.fastpath._MassCurve`): a mass counts as ``count`` terms in the
    rounding allowance and its weight w_j is at least ``wmin`` (the merged masses' largest),
    so the allowance is at least the one of the unmerged masses.
    """

    def __init__(
        self, q: np.ndarray, loss: np.ndarray, q_inf: float, side: str = "lower",
        offset: float = 0.0, rtol: float = 0.0,
        offset_steps: tuple[np.ndarray, np.ndarray] | None = None, exact_atom: float = 0.0,
        count: np.ndarray | None = None, wmin: np.ndarray | None = None,
    ) -> None:
        top = np.isposinf(loss)
        fin = ~np.isneginf(loss) & ~top & (q > 0)  # −∞ losses never exceed ε
        self.sign = 1.0 if side == "lower" else -1.0
        # (the atoms at +∞ gathered, the sum rounded toward this side's bound)
        extra = float(q[top].sum()) if top.any() else 0.0
        self.q_inf = (add_up if self.sign > 0 else add_down)(float(q_inf), extra)
        if self.sign < 0 and 0.0 < self.q_inf < MIN_NORMAL:
            # (a subnormal atom may be a product raised to the least subnormal for the lower
            # side, fdp.operations._mixture_pl_of: the optimistic reading takes it off)
            self.q_inf = max(self.q_inf - TINY, 0.0)
        self.offset = float(offset) if side == "upper" else 0.0
        self.steps = offset_steps if side == "upper" else None
        self.rtol = float(rtol)  # relative error of the masses themselves
        # the part of the +∞ atom known exactly (no rtol charged on it: a profile's own δ)
        self.exact_atom = min(float(exact_atom), self.q_inf)
        self.loss = loss[fin]
        q = q[fin]
        m = self.loss.size
        self.m = m
        # kx[k]: the terms the first k masses stand for beyond one each (merged outcomes)
        self.kx: np.ndarray | None = None
        if count is not None:
            self.kx = np.zeros(m + 1)
            np.cumsum(np.asarray(count, dtype=float)[fin] - 1.0, out=self.kx[1:])
        self.qc = np.zeros(m + 1)
        np.cumsum(q, out=self.qc[1:])
        self.lpc = np.full(m + 1, -np.inf)
        # log Σ_{j<k} p_j w_j, w_j = |log q_j| + |ℓ_j|: log p_j = log q_j − ℓ_j is rounded by u·w_j
        # (times 2 with the log's own), which e^{·} turns into an error of p_j of 2u·p_j·w_j
        self.lpw = np.full(m + 1, -np.inf)
        # lpc's absolute rounding beyond u·(|lpc| + k), in units of 2u (:func:`_log_cumsum`)
        self.lmag: np.ndarray | float = 0.0
        if m:
            lq = np.log(q)
            lp = lq - self.loss
            w = np.abs(lq) + np.abs(self.loss)
            if wmin is not None:
                w = np.maximum(w, np.asarray(wmin, dtype=float)[fin])
            if lp.min() > -700.0 and lp.max() < 700.0:
                # (a running sum of the P-masses themselves where none under- or overflows:
                # its k-th partial sum is within (k − 1)u of the exact one, inside the
                # (k + 4)u allowance of _err; 20× faster than logaddexp.accumulate)
                with np.errstate(divide="ignore"):
                    ep = np.exp(lp)
                    self.lpc[1:] = np.log(np.cumsum(ep))
                    self.lpw[1:] = np.log(np.cumsum(ep * w, out=ep))
            else:
                # (not np.logaddexp.accumulate: each step rounds the running log-sum to its
                # magnitude, an absolute u|lpc| per term that adds up with k — and one way where
                # the terms are tiny. sue(745) ⊗ f_{3.4232, 9.1e-13}'s deep lower curve, 122
                # masses above ε(0.1) at losses ≈ 748.4, read lpc 6.1e-12 high and ε(0.1) =
                # 748.3142098025126 for the exact 748.3142098025156: the bracket inverted)
                self.lpc[1:], self.lmag = _log_cumsum(lp)
                with np.errstate(divide="ignore"):
                    self.lpw[1:] = _log_cumsum(lp + np.log(w))[0]
        # Σ p_j w_j / Σ p_j over the losses above (≤ max w_j), once: _at's error term is then
        # e^{ε + lpc}·(|ε| + |lpc| + wbar) without a second exponential per query
        with np.errstate(invalid="ignore", over="ignore"):
            self.wbar = np.where(np.isfinite(self.lpc), np.exp(self.lpw - self.lpc), 0.0)
        self._dk: np.ndarray | None = None

    def _lmag(self, k: np.ndarray) -> np.ndarray | float:
        """lpc[k]'s extra rounding (:func:`_log_cumsum`), in units of 2u."""
        return self.lmag[k] if isinstance(self.lmag, np.ndarray) else self.lmag

    def _err(
        self, k: np.ndarray, qc: np.ndarray, ep: np.ndarray, off: np.ndarray | float
    ) -> np.ndarray:
        # k = 0: δ is the atom (minus the offset) with no sum to round; each operation also
        # rounds absolutely by up to the least subnormal (masses there: kov's underflowed ones)
        kk = k + self.kx[k] if self.kx is not None else k
        return np.where(k > 0, (kk + 4.0) * (_U * (self.q_inf + off + qc + ep) + TINY), 0.0)

    def _off(self, eps: np.ndarray) -> np.ndarray | float:
        """The offset subtracted from δ at ε (``offset`` itself, or the step function)."""
        if self.steps is None:
            return self.offset
        e, v = self.steps
        j = np.searchsorted(e, eps, side="right") - 1
        return np.where(j < 0, self.offset, v[np.maximum(j, 0)])

    def _at(self, eps: np.ndarray, k: np.ndarray, off_eps: np.ndarray | None = None) -> np.ndarray:
        """The rounded δ at finite ε with k losses above it (the offset read at ``off_eps``,
        by default at ε)."""
        lpc = self.lpc[k]
        with np.errstate(over="ignore", invalid="ignore"):
            ep = np.where(lpc == -np.inf, 0.0, np.exp(np.minimum(eps + lpc, 709.0)))
        qc = self.qc[k]
        off = self._off(eps if off_eps is None else off_eps)
        base = self.q_inf - off + qc - ep
        # masses known to a relative rtol (losses exact): every term q_j (1 − e^{ε − ℓ_j}) ≥ 0
        # moves by rtol of itself, so δ by rtol·δ
        # (below the normal range a mass known to a relative rtol is known only to the least
        # subnormal: the mixture's atom p·q_∞ = 1e-12 · 1e-300, to nearest, read δ = 1e-312 at
        # every ε above the losses, 1.5e-324 below the exact atom, and ε(1e-312) finite for
        # ∞; a hunt, seed 1929)
        rel = np.maximum(base - self.exact_atom, 0.0)
        err = self._err(k, qc, ep, off) + self.rtol * rel + np.where(
            (rel > 0.0) & (self.rtol > 0.0), TINY, 0.0)
        # e^{ε + lpc}: the rounding of its exponent (the sum and lpc's log) is absolute,
        # u·(|ε| + |lpc|), and each log p_j's is u·w_j: relative errors of ep that cancellation
        # in q − e^ε p magnifies (they moved δ by 1e-13 where |log p| ≈ 250)
        with np.errstate(invalid="ignore"):
            err = err + np.where(ep > 0, 2.0 * _U * ep * (np.abs(eps) + np.abs(lpc)
                                                          + self.wbar[k] + self._lmag(k)), 0.0)
        if self.sign > 0:
            return np.maximum(base, self.q_inf) + err
        # (an optimistic δ also gives up a relative 1e-13: the masses' own few ulps)
        return np.maximum(base * (1.0 - _UPPER_RTOL) - err, 0.0)

    @property
    def floor(self) -> float:
        """The rounded δ above every finite loss (k = 0): no finite ε does better."""
        return float(self._at(np.zeros(1), np.zeros(1, dtype=int), np.full(1, np.inf))[0])

    def delta(self, eps: np.ndarray) -> np.ndarray:
        eps = np.asarray(eps, dtype=float)
        k = np.searchsorted(-self.loss, -eps, side="left")  # #{ℓ_j > ε}
        out = self._at(np.where(np.isfinite(eps), eps, 0.0), k)
        off_inf = float(np.max(self._off(np.full(1, np.inf))))
        # (at ε = +∞ δ is the atom; on the lower side with the masses' relative error charged
        # as at every finite ε: subsample's p·q_∞, rounded to nearest, read 5e-23 below the
        # true atom, and gdp_mu_delta's τ with it)
        x = max(self.q_inf - self.exact_atom, 0.0)
        x = self.rtol * x + (TINY if x > 0.0 and self.rtol > 0.0 else 0.0)
        atom = add_up(self.q_inf, x) if (
            self.sign > 0) else max(self.q_inf - off_inf, 0.0) * (1.0 - _UPPER_RTOL)
        out = np.where(np.isposinf(eps), atom, out)
        return np.where(np.isneginf(eps), 1.0, out)

    def kink_deltas(self) -> np.ndarray:
        """D_i = δ(ℓ_i), made non-decreasing in i (it is, up to rounding)."""
        if self._dk is None:
            i = np.arange(self.m)
            self._dk = np.maximum.accumulate(self._at(self.loss, i)) if self.m else np.zeros(0)
        return self._dk

    def _kinks_at_most(self, t: np.ndarray) -> np.ndarray:
        """#{i : D_i ≤ t} per target t (D: :meth:`kink_deltas`). For one t before the D_i are
        built: the first i whose δ(ℓ_i) is not ≤ t (D_i > t iff some δ(ℓ_j), j ≤ i, is), in
        blocks from the top loss down, so that a small δ reads a few blocks, not every kink
        (the same count; Laplace(0.1)^1000's lower curve at δ = 1e-6: ~1,500 of 5,000)."""
        if self._dk is not None or t.size != 1:
            return np.searchsorted(self.kink_deltas(), t, side="right")
        target = float(t[0])
        start, block = 0, 512
        while start < self.m:
            i = np.arange(start, min(start + block, self.m))
            over = np.flatnonzero(~(self._at(self.loss[i], i) <= target))
            if over.size:
                return np.full(t.shape, start + int(over[0]))
            start, block = start + block, 2 * block
        return np.full(t.shape, self.m)

    def epsilon(self, delta: np.ndarray) -> np.ndarray:
        delta = np.asarray(delta, dtype=float)
        out = np.zeros(delta.shape)
        need = delta < self.delta(np.zeros(1))[0]
        inf = need & (delta < self.floor)
        out[inf] = np.inf
        todo = need & ~inf
        if not todo.any():
            return out
        t = delta[todo]
        if self.sign < 0:
            t = t / (1.0 - _UPPER_RTOL)  # δ(1 − r) ≤ t ⟺ δ ≤ t/(1 − r), as in _at
        m = self.m
        # big = #{i : D_i ≤ t} ≥ 1 (D_0 = floor ≤ t): the answer lies in (ℓ_big, ℓ_{big−1}],
        # where exactly k = big losses exceed ε and δ(ε) = q_∞ − offset + Qc_k − e^ε Pc_k
        big = np.clip(self._kinks_at_most(t), 1, m)
        qc = self.qc[big]
        # (a step offset is read at the piece's low end, where it is largest: δ there is lower,
        # so the ε found is lower still)
        lo_end = np.where(big < m, self.loss[np.minimum(big, m - 1)], -np.inf)
        off = self._off(lo_end)
        num = self.q_inf - off + qc - t
        # bound num's rounding (and e^ε Pc_k ≤ Qc_k + q_∞ on the piece) on the chosen side
        num = num + self.sign * (self._err(big, qc, qc + self.q_inf, off)
                                 + self.rtol * np.maximum(t - self.exact_atom, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            lnum = np.log(np.maximum(num, 1e-320))
            e = np.where(num > 0, lnum - self.lpc[big], -np.inf)
        # the logarithms' rounding, and lpc's (absolute: see _at; Σ p_j w_j / Σ p_j ≤ max w_j)
        mag = 2.0 * np.abs(lnum) + np.abs(self.lpc[big]) + 2.0 * self.wbar[big] + big + (
            self.kx[big] if self.kx is not None else 0.0) + self._lmag(big)
        e = e * (1.0 + self.sign * 8.0 * _U) + self.sign * (8.0 * _U + 2.0 * _U * mag)
        hi = self.loss[big - 1]
        lo = np.where(big < m, self.loss[np.minimum(big, m - 1)], -np.inf)
        e = np.maximum(np.clip(e, lo, hi), 0.0)
        if self.sign > 0:
            # never below the target's side: move up until the rounded-up δ meets the target
            for i in range(400):
                over = self.delta(e) > t
                if not over.any():
                    break
                step = np.maximum(np.abs(e), 1.0) * (4.0 * _U) * 2.0 ** (i // 2)
                e = np.where(over, np.minimum(e + step, max(self.loss[0], 0.0)), e)
        out[todo] = e
        return out


#: :func:`_log_cumsum` sums a block of log-terms spanning at most this as e^{x − r}, |x − r| ≤ 600
_LOG_BLOCK = 1200.0


def _log_cumsum(x: np.ndarray, blocks: int = 64) -> tuple[np.ndarray, np.ndarray | float]:
    """log Σ_{j≤k} e^{x_j} for every k, and a bound on its rounding beyond u·(|result| + k)
    (absolute, in units of 2u; a scalar or one per k).

    Blocks of consecutive x within :data:`_LOG_BLOCK` of each other are summed as
    e^r Σ e^{x_j − r} with |x_j − r| ≤ 600 (the running sum before the block, its carry, one
    more term): each term is within (600 + 1)u of its value relatively (the rounding of x − r,
    then of exp), their running sum within (k − 1)u (Higham 2002, §4.2), and log s, |log s| ≤
    600 + log k, rounds by u|log s| before r is added (u|result|): 1300u beyond u·(|result| +
    k), charged as 650 · 2u. Terms more than 600 below r (underflowing when far below)
    are below e^{−600} of the carry or of the block's largest term, and never the running
    sum's. More than ``blocks`` blocks (|x| spans beyond 10⁴): np.logaddexp.accumulate, whose
    every step rounds by u(|result| + 1) or so, charged as k·(max |result| + 1)·2u."""
    fin = x > -np.inf  # (e^{−∞} = 0 adds nothing: the sums of the others, carried forward)
    if not fin.all():
        got, mag = _log_cumsum(x[fin], blocks)
        at = np.cumsum(fin) - 1
        out = np.where(at >= 0, got[np.maximum(at, 0)] if got.size else -np.inf, -np.inf)
        if isinstance(mag, np.ndarray):
            mag = np.concatenate([[0.0], mag[1:][np.maximum(at, 0)]]) * np.append(1.0, at >= 0)
        return out, mag
    n = x.size
    out = np.empty(n)
    carry, i, used = -np.inf, 0, 0
    while i < n and used < blocks:
        rest = x[i:]
        span = np.maximum.accumulate(rest) - np.minimum.accumulate(rest)
        over = np.flatnonzero(span > _LOG_BLOCK)
        j = i + int(over[0]) if over.size else n
        blk = x[i:j]
        r = max(float(blk.max()), carry) - 0.5 * _LOG_BLOCK
        with np.errstate(under="ignore"):
            t = np.exp(np.concatenate([[carry - r], blk - r]))
        out[i:j] = r + np.log(np.cumsum(t)[1:])
        carry, i, used = float(out[j - 1]), j, used + 1
    if i == n:
        return out, 650.0
    out = np.logaddexp.accumulate(x)
    k = np.arange(n + 1, dtype=float)
    big = np.concatenate([[0.0], np.maximum.accumulate(np.abs(out))])
    return out, k * (big + 1.0)


def _merged_window(
    q_hi: np.ndarray, l_hi: np.ndarray, q_win: np.ndarray, l_win: np.ndarray, q_inf: float,
    rtol: float = 0.0, exact_atom: float = 0.0,
) -> _Profile | None:
    """The lower-side profile of a window of masses (``q_win``, ``l_win``: losses decreasing)
    with every mass above it (``q_hi``, ``l_hi``, losses > ``l_win[0]``, any order) merged
    into one outcome, or None where the merge is degenerate.

    Merging outcomes is post-processing: δ(ε) = q_∞ + Σ_{ℓ_j > ε} (q_j − e^ε p_j) is unchanged
    at every ε ≤ ``l_win[0]``, below all the merged losses (theory §3). The merged Q-mass is
    rounded up and its P-mass Σ q_j e^{−ℓ_j} down (m terms: within (m + 4)u and (2m + 8)u,
    Higham 2002, §4.2), its loss log(Q/P) rounded up: δ up, on the certified side. The merged
    mass counts as its m terms in the rounding allowance, with the largest weight
    |log q_j| + |ℓ_j| among them (:class:`_Profile`'s ``count``, ``wmin``), so the allowance is
    at least the one of the unmerged masses and ε(δ) read off this profile is within the whole
    profile's. Used by scalar ε queries of large lower curves
    (:meth:`PiecewiseLinear._epsilon_window`, :meth:`fdp.fastpath._MassCurve.epsilon`).
    """
    m = q_hi.size
    if not (m and l_win.size):
        return None
    q_min = float(q_hi.min())
    if not q_min > 0.0:  # (the least positive mass, for the allowance's weight)
        pos = q_hi[q_hi > 0.0]
        if not pos.size:
            return None
        q_min = float(pos.min())
    with np.errstate(under="ignore"):
        p_sum = float((q_hi * np.exp(-l_hi)).sum()) * (1.0 - (2 * m + 8) * _U)
    q_sum = float(q_hi.sum()) * (1.0 + (m + 4) * _U)
    if not (p_sum > 0.0 and q_sum > 0.0):
        return None
    l_m = math.log(q_sum / p_sum)
    l_m += 8.0 * _U * (abs(l_m) + 1.0)
    if not l_m >= l_win[0]:
        return None
    w_top = abs(math.log(q_min)) + max(abs(float(l_hi.max())), abs(float(l_hi.min())))
    count = np.ones(l_win.size + 1)
    count[0] = m
    wmin = np.zeros(l_win.size + 1)
    wmin[0] = w_top
    return _Profile(
        np.append(q_sum, q_win), np.append(l_m, l_win), q_inf, "lower", 0.0, rtol, None,
        exact_atom, count=count, wmin=wmin,
    )


#: the ε at which :meth:`Inverse._delta` also reads its value, to cap it above (see there)
_INVERSE_EPS_CAPS = (1.0, 3.0, 7.0)


class BaseBinsMixin:
    """Mixin for a curve whose composition-engine bins map its ``base``'s (a mixture, an
    inverse, a (0, δ) mix): the engine's two sides read different bins where the base's do
    (:func:`fdp.pld._sided`), and the mapped losses lie as far from the true ones as the base's
    (:meth:`_engine_shift`; the maps have slope at most 1)."""

    base: TradeOff

    def _engine_sided(self) -> bool:
        from .pld import _sided

        return _sided(self.base)

    def _engine_shift(self, side: str | None = None) -> float:
        """How far the engine bins' losses may lie from the true ones: the base's."""
        get = getattr(self.base, "_engine_shift", None)
        return float(get(side)) if get is not None else 0.0

    def _engine_scale(self, side: str) -> float:
        """e^{±e} (e = :meth:`_engine_shift`), rounded outward: masses that the map reads at a
        loss within e of the true one move by at most that factor (see the users)."""
        err = self._engine_shift(side)
        return (math.exp(err) * (1.0 + 4.0 * _U) if side == "lower"
                else math.exp(-err) * (1.0 - 4.0 * _U))


class Inverse(BaseBinsMixin, TradeOff):
    """The inverse f⁻¹ = T(Q, P) of a curve f = T(P, Q), for curves without a closed-form inverse.

    Evaluation: f⁻¹(α) = inf{t : f(t) ≤ α} by bisection on the non-increasing f (60 halvings,
    exact to ~1e-16). Privacy profile: δ_{f⁻¹}(ε) = 1 − e^ε + e^ε δ_f(−ε) (swap P and Q and negate
    the loss; exact wherever f's profile is). Privacy loss: f's loss negated, P and Q swapped.
    """

    def __init__(self, base: TradeOff) -> None:
        self.base = base
        self.kind = base.kind
        self._q_inf_cache: float | None = None

    @property
    def lower(self) -> TradeOff:
        return self if self.kind == "exact" else self.base.lower.inverse()

    @property
    def upper(self) -> TradeOff:
        return self if self.kind == "exact" else self.base.upper.inverse()

    def inverse(self) -> TradeOff:
        return self.base

    def _eval(self, alpha: np.ndarray) -> np.ndarray:
        """f⁻¹(α) = inf{t : f(t) ≤ α} by bisection on the bit patterns of t ∈ [0, 1] (64 steps
        reach adjacent floats at every scale), returning the lower end: f(lo) exceeds α by
        more than 4 ulps as computed (f is within them of its true value, or below it where its
        own _eval rounds down), so lo lies below the infimum, the guarantee side (values of f
        that close to α give 0 here: f⁻¹(1 − 1e-16) is then 0, not its ~1e-23). Before, a
        bisection in t returned the upper
        end, 2⁻⁶⁰ = 8.7e-19 above the truth at worst: Mixture(G_2, 0.1).inverse()(1 − 1e-16)
        read 8.7e-19 for 1.6e-23 (a helper's hunt against mpmath)."""
        alpha = np.asarray(alpha, dtype=float)
        lo = np.zeros(alpha.shape, dtype=np.int64)
        hi = np.full(alpha.shape, np.float64(1.0).view(np.int64))
        for _ in range(64):  # invariant: f(hi) ≤ α; f(lo) > α unless lo = 0
            mid = lo + (hi - lo) // 2
            v = np.asarray(self.base(mid.view(np.float64)))
            # (the lower end moves up only where f(mid) > α for certain: by 4 ulps of the
            # values, which covers a base rounded to nearest, e.g. p f + (1 − p) Id; without it
            # Mixture(L_1, 0.1).inverse()(1 − 1e-12) read 2.9e-5 above the truth)
            ok = v <= alpha + 4.0 * UNIT_ROUNDOFF * (np.abs(v) + np.abs(alpha))
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        out = lo.view(np.float64)
        return np.where(np.asarray(self.base(np.zeros_like(alpha))) <= alpha, 0.0, out)

    def _eval_up(self, alpha: np.ndarray) -> np.ndarray:
        """f⁻¹(α) rounded UP, for optimistic curves built from values (:meth:`to_piecewise`):
        the bisection of :meth:`_eval` returning its upper end, which moves down only where
        f(hi) < α for certain (f read rounded up, less 4 ulps). The lower end read as the
        optimistic value lay 1.5e-15 below the truth (the tolerance over f's slope, not 8 ulps
        of β): symmetrize(poisson_subsample(poisson_subsample(rr(0.5, 2), 0.01).add,
        0.01).add.inverse()).delta_bracket(6.487e-5) had its lower end 1.5e-15 for 4.3e-21."""
        alpha = np.asarray(alpha, dtype=float)
        lo = np.zeros(alpha.shape, dtype=np.int64)
        hi = np.full(alpha.shape, np.float64(1.0).view(np.int64))
        for _ in range(64):  # invariant: f(hi) < α for certain, or hi = 1
            mid = lo + (hi - lo) // 2
            v = np.asarray(self.base._eval_up(mid.view(np.float64)), dtype=float)
            ok = v < alpha - 4.0 * UNIT_ROUNDOFF * (np.abs(v) + np.abs(alpha))
            hi = np.where(ok, mid, hi)
            lo = np.where(ok, lo, mid)
        return hi.view(np.float64)

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        """1 − e^ε + e^ε δ_f(−ε), rounded up by a bound on its rounding: the two terms cancel
        (each within 2 ulps, the sum within one more), so 4u (|e^ε − 1| + e^ε δ_f(−ε)) is added
        (to nearest, p G_{0.62} + 0.38 Id's inverse read 3.8509893252e-7 for 3.8509893263e-7,
        and 0 for positive δ below 1e-16)."""
        with np.errstate(over="ignore", invalid="ignore"):
            x = np.exp(np.minimum(eps, 700.0))
            base = np.asarray(self.base.delta(-eps), dtype=float)
            em1 = np.expm1(np.minimum(eps, 700.0))
            allow = 4.0 * UNIT_ROUNDOFF * (np.abs(em1) + x * base)
            val = np.minimum(-em1 + x * base + allow, 1.0)
        # That allowance is e^ε times an ulp of δ_f(−ε) ≈ 1: it grows as e^ε, and a nested
        # Poisson subsample's inverse, whose losses are below 1.3e-13 (δ = 0 beyond), read
        # δ(1) = 2.2e-15 but δ(20) = 6.7e-7 and δ(35) = 1 (a hunt, seed 400456). δ is
        # non-increasing in ε, so where the allowance is a visible share of the value the
        # readings at ε = 1, 3, 7 below ε (each an upper bound) bound it too.
        for at in _INVERSE_EPS_CAPS:
            far = np.isfinite(eps) & (eps > at) & (allow > 1e-3 * val)
            if far.any():
                cap = float(self._delta(np.array([at]))[0])
                val = np.where(far, np.minimum(val, cap), val)
        return np.where(np.isposinf(eps), self._q_inf(), np.maximum(val, 0.0))

    def _q_inf(self) -> float:
        """Q-mass at +∞ of T(Q, P): the P-mass of f at loss −∞, i.e. 1 − min{t : f(t) = 0}
        (the base's closed form where it has one, else by bisection)."""
        if self._q_inf_cache is None:  # the curve is immutable: bisect once
            known = self.base._p_at_minus_inf()
            self._q_inf_cache = (float(known) if known is not None else
                                 float(1.0 - np.asarray(self._eval(np.array([0.0])))[0]))
        return self._q_inf_cache

    def _loss_bins(self, edges: np.ndarray) -> LossBins:
        return self._mirrored_bins(self.base._loss_bins(-edges[::-1]), 1.0)

    def _engine_bins(self, edges: np.ndarray, side: str) -> LossBins | None:
        """The engine's bins for ``side`` where the base's masses or losses carry errors
        (:meth:`PiecewiseLinear._engine_bins`), None where they do not: the base's bins for
        that side mirrored. Each base outcome there has Q-mass q̂ on its side of the true Q,
        loss ℓ̂ within e (:meth:`_engine_shift`) of the true ℓ and P-mass q̂ e^{−ℓ̂}; the true
        P-mass Q e^{−ℓ}, this curve's Q-mass, lies within the factor e^{±e} of that: the
        finite outcomes' masses are scaled by e^e (lower) or e^{−e} (upper), and the losses
        −ℓ̂ read moved by e. (Before, the base's exact bins were mirrored:
        poisson_subsample(poisson_subsample(f, 0.5).add, 0.3).add.inverse() of from_masses with
        ρ = 1e-8 composed read δ(0.05)'s upper end 0.0216716505 for the exact 0.0216716511;
        tests/test_engine_mixture_err.py.) The +∞ atom, the base's P-mass at −∞, is scaled
        as well (0 for the mixtures whose inverses reach here, p < 1)."""
        from .pld import _side_bins, _sided

        if not _sided(self.base):
            return None
        return self._mirrored_bins(_side_bins(self.base, -edges[::-1], side),
                                   self._engine_scale(side))

    def _mirrored_bins(self, b: LossBins, k: float) -> LossBins:
        """This curve's bins from the base's on the mirrored edges, masses scaled by ``k``
        (:meth:`_engine_bins`)."""
        q_inf = k * self._q_inf()
        return LossBins(
            p=k * b.q[::-1],
            q=k * b.p[::-1],
            p_below=k * (b.q_above + b.q_inf),
            q_below=k * b.p_above,
            p_above=k * b.q_below,
            q_above=max(k * b.p_below - q_inf, 0.0),
            q_inf=q_inf,
            # (given losses negated: the inverse's pair is (Q, P); they bound bins whose Q-mass
            # is tiny, which keep them though no bound is needed there)
            loss_lo=None if b.loss_hi is None else -b.loss_hi[::-1],
            loss_hi=None if b.loss_lo is None else -b.loss_lo[::-1],
        )

    def _atoms(self) -> np.ndarray | None:
        a = self.base._atoms()
        return None if a is None else -a[::-1]

    def __repr__(self) -> str:
        return f"{self.base!r}.inverse()"

    def _label(self) -> str:
        return f"({self.base._label()})" + "$^{-1}$"

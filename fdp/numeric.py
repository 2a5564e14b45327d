"""Numeric curves that carry a certified bracket: lower ≤ exact ≤ upper at every α.

Results of the numerical composition engine, of numeric subsampling/DP-SGD accounting and of any
operation on them are :class:`Bracketed` curves. Their own value, δ(ε) and ε(δ) are the
conservative ones (those of ``lower``): ``h.epsilon(d)`` is a certified upper bound on the true ε,
``h.upper.epsilon(d)`` a certified lower bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ._numerics import TINY
from .tradeoff import LossBins, PiecewiseLinear, TradeOff

__all__ = ["Bracketed", "Approximation", "DEEP_DELTA"]

#: Queries at δ below this are *deep*: a curve built for the bulk (the engine's default grid)
#: first rebuilds itself on its deep grid, and the closed-form tail bound is consulted.
DEEP_DELTA = 1e-12


#: the smallest δ whose δ(ε) bracket is promised to 10·tol relative (δ queries refine, or warn,
#: down to here): 1e-30 with room for rounding — a query at ε(1e-30) reads δ ≈ 1e-30 within an
#: ulp, 9.99999999996889e-31 for L_1.2286^103, which 1e-30 itself left out (3.8 % wide, unsaid)
DELTA_PROMISE_FLOOR = 0.5e-30

#: why a bracket is wider than asked when the grid was not capped
_MISSED = "the planned grid step missed it; a smaller tol narrows it"
#: why, when it was (with the memory knobs)
_CAPPED = ("the grid was capped by memory; doubling fdp.pld.MAX_GRID and fdp.pld.MAX_COMPONENT "
           "halves the grid step and about doubles the memory")


def _promised(info: dict[str, Any], delta: Any, hi: Any) -> np.ndarray:
    """The scale of the width the engine aims at, where it aims at one (δ ≥ DEEP_DELTA and
    ε ≥ 1e-3; below DEEP_DELTA the deep grid aims at δ within 1 % instead), NaN elsewhere (no
    width warning there): ε at ε ≥ ε_ref, where the width is at most tol·ε; 2 ε_ref below, where
    the plan aims at the absolute width tol·ε_ref and its model is not calibrated (a factor 2:
    misses of a few % there, 0.11 % for 0.1 %, are the model's noise, and calibration loops
    would warn on them). Below ε_ref the bracket was not checked at all, and a heavy-tailed
    composition's missed the plan there silently: compose(poisson_subsample(G_4, 0.001).remove,
    repeat=10) at 1e-5 was 14 % wide (ε ≈ 0.011, ε_ref = 0.17: 12x tol·ε_ref)."""
    d = np.asarray(delta, dtype=float)
    e = np.asarray(hi, dtype=float)
    ref = float(info.get("eps_ref", 0.0))
    ok = (d >= DEEP_DELTA) & (e >= 1e-3)
    return np.where(ok, np.where(e >= ref, e, 2.0 * ref), np.nan)


def _warn_widest(curve: Any, what: str, at: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                 width: np.ndarray, bad: np.ndarray, rule: str, stacklevel: int) -> None:
    """The AccuracyWarning for the widest of the brackets ``bad`` (indices) wider than ``rule``
    says (nothing if none)."""
    if not bad.size:
        return
    import warnings

    from .pld import AccuracyWarning

    i = int(bad[np.argmax(width[bad])])
    warnings.warn(
        f"{curve!r}: the certified {what} = {float(at.flat[i]):g} is "
        f"[{float(lo.flat[i]):.6g}, {float(hi.flat[i]):.6g}], {float(width.flat[i]):.2%} wide, "
        f"more than {rule}. The bracket is certified; the conservative end is the guarantee.",
        AccuracyWarning,
        stacklevel=stacklevel,
    )


class _Released:
    """Stands for an optimistic side released before a refinement (see
    :meth:`Bracketed._step`): it is then taken from the refined grid."""

    def __call__(self) -> PiecewiseLinear:  # pragma: no cover - _side_upper refines first
        raise RuntimeError("the optimistic side was released and no refinement is pending")


class Bracketed(TradeOff):
    """A trade-off curve known up to a certified bracket ``lower ≤ f ≤ upper``.

    Parameters
    ----------
    lower, upper : PiecewiseLinear
        Valid trade-off curves with lower ≤ exact ≤ upper on [0, 1]. Either may be a
        zero-argument callable that builds it on first use.
    name : str, optional
        What the curve is, for ``repr`` and plot labels.
    info : dict, optional
        Facts about how the bracket was computed (grid spacing, tail masses, …).
    inverse : callable, optional
        Builds the inverse curve with its own bracket (used by the composition engine).
    tail : optional
        A certified closed-form upper bound on δ (:class:`fdp.tails.TailBound`), consulted for
        deep queries (δ < :data:`DEEP_DELTA`), where the grid gives ε = ∞, and when the grid
        was capped.
    closed : optional
        Closed-form certified bounds on δ(ε) on both sides (:class:`fdp.tails.SampledCountBound`:
        methods ``delta_upper``, ``epsilon_upper``, ``delta_lower``, ``epsilon_lower``),
        consulted by every δ and ε query: the answer is the best of them and the grid's.
    refine : callable, optional
        Builds a tighter bracket of the same curve for the far tail (the engine's deep grid).
        It replaces this one, once, on the first query at δ < :data:`DEEP_DELTA` (or at an ε
        where the lower curve's δ is below it), and whenever ``lower``, ``upper`` or the
        curve's values are taken: only ε(δ), δ(ε) and their brackets are answered from the bulk
        grid. Both brackets are certified; values may tighten when it is replaced. A bulk grid
        computed without tilts answers δ ≥ ``info["min_delta"]`` only; below, its ``refine``
        builds the tilted bulk grid, whose own ``refine`` builds the deep one.

    Examples
    --------
    >>> import fdp
    >>> lo, hi = fdp.EpsDelta(1.1, 0.0), fdp.EpsDelta(0.9, 0.0)
    >>> h = Bracketed(lo, hi, name="demo")
    >>> h.kind, h(0.2) == lo(0.2), abs(h.upper(0.2) - hi(0.2)) < 1e-12  # upper: rounded up
    ('bracket', True, True)
    """

    kind = "bracket"
    _refine: Callable[[], TradeOff] | None = None
    #: earlier grids' (lower, upper) curves kept beside the current one (the bulk grid beside
    #: a deep grid for the far tail only, :meth:`_step_tail`, or beside a deep grid built for
    #: curves); queries take the tightest certified value of all
    _bulk: tuple[tuple[PiecewiseLinear, PiecewiseLinear], ...] = ()

    def __init__(
        self,
        lower: PiecewiseLinear | Callable[[], PiecewiseLinear],
        upper: PiecewiseLinear | Callable[[], PiecewiseLinear],
        *,
        name: str | None = None,
        info: dict[str, Any] | None = None,
        inverse: Callable[[], Bracketed] | None = None,
        tail: Any = None,
        closed: Any = None,
        refine: Callable[[], TradeOff] | None = None,
    ) -> None:
        self._lower = lower
        self._upper = upper
        self._name = name
        self.info: dict[str, Any] = dict(info or {})
        self._inverse = inverse
        self._tail = tail  # a certified closed-form upper bound on δ (fdp.tails.TailBound)
        self._closed = closed  # closed-form certified bounds on both sides (or None)
        self._refine = refine

    @property
    def _min_delta(self) -> float:
        """The smallest δ the current grid answers (0 once nothing finer is left to build):
        ``info["min_delta"]`` (an untilted bulk grid whose round-off reaches larger δ), else
        :data:`DEEP_DELTA`."""
        if self._refine is None:
            return 0.0
        return float(self.info.get("min_delta", DEEP_DELTA))

    def _step(self, build: Callable[[], TradeOff], keep: bool = False,
              then: Callable[[], TradeOff] | None = None) -> None:
        """Replace the bracket by the one ``build`` makes (with its own next refinement).

        An optimistic side not built yet is released first: its builder holds the whole FFT
        state of the grid being replaced (the engine's lazy upper side; on a sparse long run
        about 0.3 GB, which lifted ``dpsgd(0.8, 1e-5, 10**6).epsilon(1e-20)`` to a peak RSS of
        1.10 GB). Should the build fail (MemoryError, an interrupt), the refinement stays
        pending, and asking for the upper side builds it (both sides then come from the
        refined grid).

        ``keep``: the current grid's curves, where both are built, stay beside the new grid
        in ``_bulk`` (queries take the tightest); grids kept before stay. ``then``: the
        refinement left pending after this one (instead of the new grid's own), the new grid
        answering every δ meanwhile."""
        bulk = self._bulk
        if keep and isinstance(self._lower, TradeOff) and isinstance(self._upper, TradeOff):
            bulk = (*bulk, (self._lower, self._side_upper()))
        self._refine = None
        if not isinstance(self._upper, TradeOff):
            self._upper = _Released()
        try:
            nxt = build()
        except BaseException:
            self._refine = then or build
            raise
        if not isinstance(nxt, Bracketed):  # pragma: no cover - the engine always brackets
            self._refine = then
            return
        self._lower, self._upper = nxt._lower, nxt._upper
        self._bulk = bulk
        if "min_delta" not in nxt.info:
            self.info.pop("min_delta", None)
        self.info.update(nxt.info)
        if then is not None:
            self.info["min_delta"] = 0.0  # (every δ answered; ``then`` is left to curves)
        if self._tail is None:
            self._tail = nxt._tail
        self._refine = nxt._refine if then is None else then

    def _refine_for(self, delta: Any) -> None:
        """Refine (a level at a time) until the grid answers every δ in ``delta``."""
        d = np.asarray(delta, dtype=float)
        while self._refine is not None and d.size and np.any(d < self._min_delta):
            self._step_query()

    #: a query's deep grid is built for the far tail only (:meth:`_step_tail`) where the bulk
    #: grid's ε at DEEP_DELTA is at least this many times its ε_ref
    TAIL_ONLY_RATIO = 4.0

    def _step_query(self) -> None:
        """The next refinement for a query below the current grid's reach: the deep grid for
        the far tail alone (:meth:`_step_tail`) where the bulk grid's ε at DEEP_DELTA lies far
        above its ε_ref, else the next grid (:meth:`_step`)."""
        r = self._refine
        if r is None:  # pragma: no cover - callers check
            return
        tail = getattr(r, "tail", None)
        if tail is not None and not self._bulk:
            ref = float(self.info.get("eps_ref", 0.0))
            with np.errstate(all="ignore"):
                floor = float(self._side_lower()._epsilon(np.array([DEEP_DELTA]))[0])
            if ref > 0.0 and math.isfinite(floor) and floor >= self.TAIL_ONLY_RATIO * ref:
                self._step_tail(tail(floor), r)
                return
        self._step(r)

    def _step_tail(self, build: Callable[[], TradeOff], full: Callable[[], TradeOff]) -> None:
        """Build the deep grid for the far tail only and keep the bulk grid beside it.

        A sparse short run (DP-SGD with T·p ≪ 1) has a tiny loss spread in the bulk (ε_ref ≈
        0.003 for σ = 1.1, p = 1e-4, T = 100) and a far tail set by its rare sampled steps
        (ε ≈ 0.04 at δ = 1e-12, 1.35 at 1e-30). The deep grid, built to answer the bulk as
        well, resolved ε_ref (2²¹ points, 36 s). Built for ε at or above the bulk grid's
        conservative ε at DEEP_DELTA (``build``; every deep query's ε lies above it), it takes
        1–8 s. Both grids are certified, so queries take the tighter of the two at every δ
        (conservative: the smaller δ and ε; optimistic: the larger). Curves (``lower``,
        ``upper``) still build the full deep grid (``full``) when taken."""
        self._side_lower()  # (the bulk's curves, both built, to be kept)
        self._side_upper()
        self._step(build, keep=True, then=full)

    def _grid_lower_delta(self, eps: np.ndarray) -> np.ndarray:
        """The conservative δ of the grid(s) held (the smaller of bulk and far-tail grids)."""
        d = self._side_lower()._delta(eps)
        for lo, _ in self._bulk:
            d = np.minimum(d, lo._delta(eps))
        return d

    def _grid_lower_epsilon(self, delta: np.ndarray) -> np.ndarray:
        """The conservative ε of the grid(s) held (the smaller)."""
        e = self._side_lower()._epsilon(delta)
        for lo, _ in self._bulk:
            e = np.minimum(e, lo._epsilon(delta))
        return e

    def _grid_upper_delta(self, eps: Any) -> Any:
        """The optimistic δ of the grid(s) held (the larger), as ``upper.delta``."""
        d = self._side_upper().delta(eps)
        for _, up in self._bulk:
            d = _same_shape(np.maximum(d, up.delta(eps)), d)
        return d

    def _grid_upper_epsilon(self, delta: Any) -> Any:
        """The optimistic ε of the grid(s) held (the larger), as ``upper.epsilon``."""
        e = self._side_upper().epsilon(delta)
        for _, up in self._bulk:
            e = _same_shape(np.maximum(e, up.epsilon(delta)), e)
        return e

    def _deepen(self, need: Any = True) -> None:
        """Replace the bracket by the deep one (once) if ``need`` (any true entry); from an
        untilted bulk grid straight to the deep one (its recipe's ``deep``)."""
        while self._refine is not None and np.any(need):
            # (the bulk grid, where both its curves are built, stays for queries: a deep grid
            # capped by memory can be wider in the bulk than tol)
            self._step(getattr(self._refine, "deep", None) or self._refine, keep=True)

    def deepen(self) -> Bracketed:
        """Build the deep (far-tail) grid now, if this curve has one to build, and return self.

        Queries build it on their own when they need it (δ below :data:`DEEP_DELTA`), and so
        does taking ``lower``/``upper``; this is for reports and timings that want one bracket
        throughout.

        Examples
        --------
        >>> import fdp
        >>> h = fdp.compose(fdp.Gaussian(0.1), repeat=100, numeric=True)
        >>> h.info["grid_mode"], h.deepen().info["grid_mode"]
        ('fast', 'deep')
        """
        self._deepen()
        return self

    @property
    def lower(self) -> PiecewiseLinear:
        """The certified lower curve (pessimistic: less privacy than the truth)."""
        self._deepen()
        return self._side_lower()

    @property
    def upper(self) -> PiecewiseLinear:
        """The certified upper curve (optimistic: more privacy than the truth)."""
        self._deepen()
        return self._side_upper()

    def _side_lower(self) -> PiecewiseLinear:
        """The lower curve of the bracket as it stands (bulk or deep)."""
        if not isinstance(self._lower, TradeOff):
            self._lower = self._lower()
        return self._lower

    def _side_upper(self) -> PiecewiseLinear:
        """The upper curve of the bracket as it stands (bulk or deep)."""
        while isinstance(self._upper, _Released) and self._refine is not None:
            self._step(self._refine)  # (released for a refinement whose build failed)
        if not isinstance(self._upper, TradeOff):
            self._upper = self._upper()
        if isinstance(self._upper, PiecewiseLinear) and self._upper._side != "upper":
            self._upper = self._upper._as_upper()  # round δ and ε toward more privacy
        elif hasattr(self._upper, "_as_upper") and not isinstance(self._upper, PiecewiseLinear):
            self._upper = self._upper._as_upper()  # (a closed form, e.g. G_μ: the same)
        return self._upper

    def _eval(self, alpha: np.ndarray) -> np.ndarray:
        return self.lower._eval(alpha)

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        """The best certified δ: the lower curve's, or the closed-form tail bound where smaller
        (both are upper bounds on the true δ, so their minimum is one too)."""
        d = self._grid_lower_delta(eps)
        while self._refine is not None and np.any(d < self._min_delta):
            self._step_query()
            d = self._grid_lower_delta(eps)
        if self._delta_too_wide(eps, d):
            d = self._refocus(eps, d)
        if self._tail is not None and self._consult_tail(d):
            d = np.minimum(d, self._tail.delta(eps))
        if self._closed is not None:
            d = np.minimum(d, self._closed.delta_upper(eps, 1e-6 * d).reshape(np.shape(d)))
        if self._tail is not None:
            # the composed loss is at most ``top`` (fdp.tails.composed_max_loss): δ = 0 at
            # ε ≥ top, where a grid step wider than a step's loss range can leave δ > 0; below
            # it a δ that underflowed to 0 is the least subnormal (the true δ is positive
            # there; 0 would claim pure DP at ε)
            top = self._tail.top
            e_arr = np.asarray(eps)
            d = np.where((d <= 0.0) & (e_arr < top), TINY, d)
            if math.isfinite(top):
                d = np.where(e_arr >= top, 0.0, d)
        return d

    #: δ(ε) is promised to this many times ``tol`` relative (:func:`fdp.compose`)
    DELTA_TOL_FACTOR = 10.0

    def _delta_width(self, eps: Any, d: Any) -> np.ndarray:
        """The relative width (d − lo)/d of the grid(s)' δ bracket at ``eps`` (``d``: their
        conservative δ; 0 where d is 0)."""
        d = np.asarray(d, dtype=float)
        lo = np.asarray(self._grid_upper_delta(eps), dtype=float).reshape(d.shape)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(d > 0.0, (d - np.minimum(lo, d)) / d, 0.0)

    #: a δ query's bulk grid is rebuilt at tol times at least this (else the deep grid)
    REFOCUS_MIN = 1.0 / 16.0

    #: how many finer deep grids a δ query may add (:meth:`_refocus`)
    DEEP_RETRIES = 2

    def _live(self, d: np.ndarray) -> np.ndarray:
        """Where δ is promised to DELTA_TOL_FACTOR · tol: δ in [DEEP_DELTA, 0.5) on the bulk
        grid, down to 1e-30 on the deep one."""
        floor = DEEP_DELTA if self.info.get("grid_mode") == "fast" else DELTA_PROMISE_FLOOR
        return (d >= floor) & (d < 0.5)

    def _worst_delta_width(self, eps: np.ndarray, d: np.ndarray) -> float:
        """The largest relative δ width at the ε of ``eps`` where δ is promised (:meth:`_live`)."""
        live = self._live(d)
        e = np.asarray(eps, dtype=float).reshape(d.shape)[live]
        return float(np.max(self._delta_width(e, d[live]), initial=0.0))

    def _refocus(self, eps: np.ndarray, d: np.ndarray) -> np.ndarray:
        """A δ query wider than promised (:meth:`_delta_too_wide`). On the bulk grid: the bulk
        grid again at a tol scaled to the width found (the δ width ∝ the ε width ∝ tol), kept
        beside the first; where that is still too wide (or would need a tol below
        :attr:`REFOCUS_MIN` · tol), the deep grid. On the deep grid, with nothing left to
        refine: the deep grid again at a smaller tol, kept beside it, at most
        :attr:`DEEP_RETRIES` times and while the grid is small (next to the largest loss δ
        falls like (top − ε), and its relative width like h/(top − ε)). Returns the new
        conservative δ.

        MNIST (σ = 1.1, p = 256/60000, T = 14063) at ε(1e-9): 1.12 % → 0.87 % wide in 0.05 s
        on the refocused grid (the deep grid: 0.13 % in 2.2 s). L_1 ⊗ L_1 at ε = 1.99, 0.005
        below its largest loss: 1.29 % on the deep grid, 0.19 % on one at tol/16, in 5 ms."""
        if self._tol is None:  # pragma: no cover - callers check (_delta_too_wide)
            return d
        aim = 0.7 * self.DELTA_TOL_FACTOR * self._tol
        if self.info.get("grid_mode") == "fast":
            factor = aim / self._worst_delta_width(eps, d)
            make = getattr(self._refine, "refocus", None)
            if make is not None and factor >= self.REFOCUS_MIN and not self.info.get(
                    "refocused"):
                self._step(make(self._tol * factor), keep=True)
                self.info["refocused"] = True  # (once: a second miss builds the deep grid)
                self._keep_capped_tol()
                d = self._grid_lower_delta(eps)
                if not self._delta_too_wide(eps, d):
                    return d
            self._deepen()
            d = self._grid_lower_delta(eps)
        from .pld import _Deepen

        while self._delta_too_wide(eps, d):  # (the deep grid, nothing pending)
            tol = float(self.info.get("deep_tol", self._tol))
            # (near the largest loss the width goes about like tol: h ∝ √tol, width ∝ h)
            shrink = (aim / self._worst_delta_width(eps, d)) ** 2
            nxt = tol * min(0.5, max(self.REFOCUS_MIN, shrink))
            retries = int(self.info.get("deep_retries", 0)) + 1
            self._step(_Deepen(self.info["items"], nxt), keep=True)
            self.info["deep_tol"], self.info["deep_retries"] = nxt, retries
            self._keep_capped_tol()
            d = self._grid_lower_delta(eps)
        return d

    def _keep_capped_tol(self) -> None:
        """After a rebuild at a smaller tol: the width warnings stay relative to the tol asked."""
        if self.info.get("capped_tol") is not None:
            self.info["capped_tol"] = self._tol

    def _delta_too_wide(self, eps: np.ndarray, d: np.ndarray) -> bool:
        """Whether a δ query misses the promised relative accuracy of δ
        (:attr:`DELTA_TOL_FACTOR` · tol) where a finer grid can still be built
        (:meth:`_refocus`): on the bulk grid, or on a deep grid with nothing pending that is
        small enough (at most MAX_GRID/8 points) and was retried fewer than
        :attr:`DEEP_RETRIES` times.

        The bulk grid's step is planned for the ε bracket (relative width tol at ε_ref); where
        δ falls steeply in ε (large ε, d log δ/dε ≫ 1/ε) the same step leaves δ much wider:
        Gaussian(1.46)^853 (numeric) read δ(1111.67) 3.9 % above the truth and Laplace(3)^3800
        δ(8331.5) 8.7 % above, both within 0.1 % in ε; a finer bulk grid, or the deep grid,
        whose step is planned for δ (within 1 % down to 1e-30), brings them within 1 %. Not
        where the grid is at its memory floor or cap (no finer grid fits)."""
        if self._tol is None:
            return False
        from .pld import MAX_GRID

        points = int(self.info.get("grid_points", 0))
        mode = self.info.get("grid_mode")
        if mode == "fast":
            if self._refine is None:
                return False
        elif mode != "deep" or self._refine is not None or not self.info.get("items") or (
                int(self.info.get("deep_retries", 0)) >= self.DEEP_RETRIES
                or 8 * points > MAX_GRID):
            return False
        if self.info.get("floored") or self.info.get("grid_capped") or 2 * points > MAX_GRID:
            # (the grid is at its memory floor or cap already: the deep grid, over a wider
            # window, is no finer — dpsgd(0.8, 1e-5, 10⁶) at δ = 1e-10: the same 2.9 %
            # bracket, its lower end the loose one, in about twice the time)
            return False
        d = np.asarray(d, dtype=float)
        if not np.any(self._live(d)):
            return False
        return self._worst_delta_width(eps, d) > self.DELTA_TOL_FACTOR * self._tol

    def _warn_delta_width(self, eps: Any, lo: Any, hi: Any, tol: float) -> None:
        """Say so where a δ bracket is wider than the promised DELTA_TOL_FACTOR · tol relative
        (δ from DELTA_PROMISE_FLOOR to 0.5; no finer grid was left to build, or none fits in
        memory)."""
        hi = np.atleast_1d(np.asarray(hi, dtype=float))
        lo = np.atleast_1d(np.asarray(lo, dtype=float))
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        with np.errstate(invalid="ignore", divide="ignore"):
            width = np.where(hi > 0.0, (hi - np.minimum(lo, hi)) / hi, 0.0)
        bad = np.flatnonzero((hi >= DELTA_PROMISE_FLOOR) & (hi < 0.5)
                             & (width > self.DELTA_TOL_FACTOR * tol))
        _warn_widest(self, "δ bracket at ε", e, lo, hi, width, bad,
                     f"{self.DELTA_TOL_FACTOR:g}·tol = {self.DELTA_TOL_FACTOR * tol:g}", 4)

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        self._refine_for(delta)
        e = self._grid_lower_epsilon(delta)
        if self._tail is not None and self._consult_tail(delta, e):
            e = np.minimum(e, self._tail.epsilon(delta))
        if self._tail is not None:  # (δ = 0 at the composed largest loss and beyond)
            e = np.minimum(e, self._tail.top)
        if self._closed is not None:
            e = np.minimum(e, self._closed.epsilon_upper(delta, e).reshape(np.shape(e)))
        if self.info.get("capped_tol") is not None and not self._quiet:
            self._warn_width(delta, e)
        return e

    def _consult_tail(self, delta: Any, eps: Any = 0.0) -> bool:
        """Whether the closed-form tail bound can beat the grid: at deep δ, where the grid's ε
        is ∞, or when the grid was capped (elsewhere the grid is far tighter; skipping the
        bound only ever keeps the larger of two certified values)."""
        return bool(np.any(np.asarray(delta) < DEEP_DELTA) or not np.all(np.isfinite(eps))
                    or self.info.get("grid_capped"))

    #: a part of a larger bracket (the directions of DP-SGD) leaves the width warning to it
    _quiet = False
    #: the width the engine was asked for (set by the engine on its own results; None: no
    #: promise to check)
    _tol: float | None = None

    def _warn_width(self, delta: np.ndarray, hi: np.ndarray, lo: Any = None,
                    tol: float | None = None, why: str = _CAPPED,
                    scale: Any = None) -> None:
        """When the engine's grid was capped (memory), say at query time how wide the certified
        bracket achieved at this δ is, if wider than the requested ``tol`` (and, for bracket
        queries, whose both ends are at hand, whatever the reason: ``why``). The width is
        relative to ``scale`` (default ``hi``; NaN: not checked)."""
        tol = float(self.info["capped_tol"]) if tol is None else tol
        if lo is None:
            lo = self._optimistic_eps(delta)
        lo = np.atleast_1d(np.asarray(lo, dtype=float))
        delta = np.atleast_1d(np.asarray(delta, dtype=float))
        hi = np.atleast_1d(np.asarray(hi, dtype=float))
        sc = hi if scale is None else np.atleast_1d(np.asarray(scale, dtype=float))
        with np.errstate(invalid="ignore", divide="ignore"):
            width = np.where(hi > 0, (hi - lo) / hi, 0.0)
            over = np.where(sc > 0, (hi - lo) / sc, 0.0) > tol
        bad = np.flatnonzero(np.isfinite(hi) & np.isfinite(sc) & over)
        _warn_widest(self, "ε bracket at δ", delta, lo, hi, width, bad, f"tol = {tol:g} ({why})",
                     5)

    def _optimistic_eps(self, delta: Any) -> np.ndarray:
        """The certified lower bound on ε(δ): the upper curve's, or the closed-form one where
        larger."""
        d = np.asarray(delta, dtype=float)
        lo = np.asarray(self._grid_upper_epsilon(np.atleast_1d(d)), dtype=float)
        if self._closed is not None:
            lo = np.maximum(lo, self._closed.epsilon_lower(np.atleast_1d(d), lo))
        # (far in the tail the grid's lower end stops at its largest loss, and a grid that
        # cannot resolve the composition reads 0: each component's own ε is a certified lower
        # bound there, fdp.tails.component_epsilon_lower. compose(G_35 ⊗ G_35 numeric, G_0.001)
        # at 1e-5: [0, 1435.31] → [1435.07, 1435.31])
        deep = (np.atleast_1d(d) < DEEP_DELTA) | (lo <= 0.0)
        if deep.any() and self.info.get("items"):
            from .tails import component_epsilon_lower

            comp = component_epsilon_lower(self.info["items"], np.atleast_1d(d)[deep])
            lo = lo.copy()
            lo[deep] = np.maximum(lo[deep], comp)
        return lo.reshape(d.shape)

    def epsilon_bracket(self, delta: Any) -> tuple[Any, Any]:
        """Certified (lower, upper) bounds on the exact ε(δ): the upper curve's ε and the best
        certified ε (:meth:`epsilon`)."""
        hi = self.epsilon(delta)  # (first: it may rebuild the bracket for a deep δ)
        lo = _same_shape(self._optimistic_eps(delta), hi)
        tol = self._tol
        if tol is not None and self.info.get("capped_tol") is None and not self._quiet:
            # (a capped grid's query warned already; here both ends are at hand, so a bracket
            # wider than asked where tol is promised says so: the planner can miss)
            self._warn_width(np.asarray(delta, dtype=float), np.asarray(hi, dtype=float), lo=lo,
                             tol=float(tol), why=_MISSED, scale=_promised(self.info, delta, hi))
        return lo, hi

    def delta_bracket(self, eps: Any) -> tuple[Any, Any]:
        """Certified (lower, upper) bounds on the exact δ(ε): the upper curve's δ and the best
        certified δ (:meth:`delta`).

        Examples
        --------
        >>> import fdp
        >>> lo, hi = fdp.compose(fdp.Laplace(0.1), repeat=100, numeric=True).delta_bracket(1.0)
        >>> bool(0 < lo <= hi)
        True
        """
        hi = self.delta(eps)
        lo = self._grid_upper_delta(eps)
        if self._closed is not None:
            lo = _same_shape(np.maximum(lo, self._closed.delta_lower(eps).reshape(np.shape(lo))),
                             lo)
        if self.info.get("items") and np.any((np.asarray(hi) < DEEP_DELTA)
                                             | (np.asarray(lo) <= 0.0)):
            from .tails import component_delta_lower  # (as in _optimistic_eps)

            comp = component_delta_lower(self.info["items"], eps).reshape(np.shape(lo))
            lo = _same_shape(np.maximum(lo, comp), lo)
        if self._tol is not None and not self._quiet:
            self._warn_delta_width(eps, lo, hi, self._tol)
        return lo, hi

    def certificate(self, delta: float) -> dict[str, Any]:
        """The conservative ε(δ) and what certified it: ``"grid"`` (the lower curve of the
        numeric bracket), ``"tail bound"`` (the closed-form moment bound of :mod:`fdp.tails`,
        BBGHS Thm 21) or ``"largest loss"`` (the sum of the components' largest losses, where
        δ is 0), whichever is smallest.

        Examples
        --------
        >>> import fdp
        >>> fdp.compose(fdp.Gaussian(0.3), repeat=10, numeric=True).certificate(1e-6)["source"]
        'grid'
        """
        self._refine_for(delta)
        grid = float(self._grid_lower_epsilon(np.array([float(delta)]))[0])
        tail = float(self._tail.epsilon(np.array([delta]))[0]) if self._tail else float("inf")
        best = min(tail, grid)
        out: dict[str, Any] = ({"epsilon": tail, "source": "tail bound", "grid": grid}
                               if tail < grid else
                               {"epsilon": grid, "source": "grid", "tail bound": tail})
        if self._closed is not None:
            closed = float(self._closed.epsilon_upper(delta, best)[0])
            out[self._closed.name] = closed
            if closed < best:
                out.update(epsilon=closed, source=self._closed.name, grid=grid)
        top = self._tail.top if self._tail is not None else float("inf")
        if top <= out["epsilon"] and top < grid:  # (δ = 0 from the composed largest loss on)
            out.update({"epsilon": top, "source": "largest loss", "grid": grid,
                        "largest loss": top})
        return out

    def inverse(self) -> Bracketed:
        """Inversion is monotone, so the bracket carries over: lower⁻¹ ≤ f⁻¹ ≤ upper⁻¹.

        Curves from the composition engine recompute the inverse as the composition of the
        inverses, (f ⊗ g)⁻¹ = f⁻¹ ⊗ g⁻¹ (DRS Prop 3.2), which keeps the inverse's own tails as
        accurate as the original's (inverting the curves would amplify round-off near α = 1).
        """
        if self._inverse is not None:
            if isinstance(self._inverse, Bracketed):
                return self._inverse
            out = self._inverse()
            # a weak link (the inverse of an engine result, pointing back at it) is not stored:
            # storing it would make a reference cycle that keeps both grids alive until the
            # cycle collector runs (1.6 GB after 16 calibration steps)
            if not getattr(self._inverse, "weak", False):
                self._inverse = out
            return out
        return Bracketed(
            self.lower.inverse(),
            lambda: self.upper.inverse(),
            name=_inv_name(self._name),
            info={k: v for k, v in self.info.items() if k != "items"},
        )

    @property
    def is_symmetric(self) -> bool:
        return bool(self.lower.is_symmetric and self.upper.is_symmetric)

    def __getstate__(self) -> dict[str, Any]:
        """Pickling support (sweeps in worker processes return curves): the sides built on first
        use are built now (their builders are closures, which do not pickle), and an engine
        inverse that is not built yet is kept as a picklable recipe (the inverse items, ``tol``
        and grid step), so the unpickled curve has the same bracket, the same ε and the same
        :meth:`inverse`. A builder that cannot be described is dropped, and :meth:`inverse` then
        inverts the bracket (certified as well, less tight in the tails).

        Examples
        --------
        >>> import pickle, fdp
        >>> h = fdp.compose(fdp.Laplace(0.1), repeat=100, numeric=True)
        >>> pickle.loads(pickle.dumps(h)).epsilon(1e-6) == h.epsilon(1e-6)
        True
        """
        state = self.__dict__.copy()
        state["_lower"] = self._side_lower()
        state["_upper"] = self._side_upper()
        inv = state.get("_inverse")
        if inv is not None and not isinstance(inv, (Bracketed, _Recompose)):
            state["_inverse"] = _Recompose.of(inv)
        return state

    def _loss_bins(self, edges: np.ndarray) -> LossBins:
        return self.lower._loss_bins(edges)

    def _atoms(self) -> np.ndarray | None:
        return self.lower._atoms()

    def _kinks(self) -> np.ndarray:
        return self.lower._kinks()

    def __repr__(self) -> str:
        return self._name or "Bracketed(lower, upper)"

    def _label(self) -> str:
        return self._name or "numeric"


class _Recompose:
    """A picklable recipe for an engine result's inverse: compose ``items`` (already inverted)
    again, as :func:`fdp.pld.compose_numeric` would (same ``tol`` and grid step)."""

    weak = False

    def __init__(self, items: list[tuple[TradeOff, int]], tol: float,
                 grid_step: float | None) -> None:
        self.items, self.tol, self.grid_step = items, tol, grid_step

    @classmethod
    def of(cls, builder: Any) -> _Recompose | None:
        """The recipe behind an engine inverse builder (``fdp.pld._EngineInverse``, or its weak
        link back to the original result, both with ``recipe()``), or None for another one."""
        recipe = getattr(builder, "recipe", None)
        if recipe is None:
            return None
        items, tol, grid_step = recipe()
        return cls(list(items), tol, grid_step)

    def __call__(self) -> TradeOff:
        from .pld import compose_numeric

        return compose_numeric(self.items, tol=self.tol, grid_step=self.grid_step)


def _same_shape(x: Any, like: Any) -> Any:
    """``x`` as a float where ``like`` is a scalar."""
    return float(np.asarray(x).ravel()[0]) if np.ndim(like) == 0 else x


def _inv_name(name: str | None) -> str | None:
    return None if name is None else f"({name})^-1"


class Approximation(TradeOff):
    """A curve labelled as an approximation (CLT, Edgeworth, …): not a bound on either side.

    Evaluation, δ(ε) and ε(δ) are those of the wrapped curve; ``lower`` and ``upper`` raise.

    Examples
    --------
    >>> import fdp
    >>> g = Approximation(fdp.Gaussian(1.0), name="CLT")
    >>> g.kind, round(g(0.05), 6)
    ('approximation', 0.740489)
    """

    kind = "approximation"

    def __init__(self, curve: TradeOff, *, name: str | None = None) -> None:
        self.curve = curve
        self._name = name

    def _eval(self, alpha: np.ndarray) -> np.ndarray:
        return np.asarray(self.curve(alpha))

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        return np.asarray(self.curve.delta(eps), dtype=float)

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        return np.asarray(self.curve.epsilon(delta), dtype=float)

    def inverse(self) -> Approximation:
        return Approximation(self.curve.inverse(), name=_inv_name(self._name))

    @property
    def is_symmetric(self) -> bool:
        return self.curve.is_symmetric

    @property
    def mu(self) -> float:
        """μ of a wrapped Gaussian."""
        return float(self.curve.mu)  # type: ignore[attr-defined]

    def _loss_bins(self, edges: np.ndarray) -> LossBins:
        return self.curve._loss_bins(edges)

    def _atoms(self) -> np.ndarray | None:
        return self.curve._atoms()

    def _kinks(self) -> np.ndarray:
        return self.curve._kinks()

    def __repr__(self) -> str:
        return self._name or f"Approximation({self.curve!r})"

    def _label(self) -> str:
        return self._name or self.curve._label()

"""Composition f ⊗ g: exact closed forms and a certified FFT privacy-loss engine.

Closed forms (DRS Sec 3, KOV Thm 3.3, MATH §4):

- G_{μ₁} ⊗ … ⊗ G_{μ_n} = G_{√(Σμ_i²)}; Id is the unit.
- f_{ε,0}^{⊗k} = T(Bin(k, e^ε/(1+e^ε)), Bin(k, 1/(1+e^ε))) (KOV Thm 3.3), computed in log space so
  k up to 10⁶ and beyond works; f_{ε,δ} = f_{ε,0} ⊗ f_{0,δ}.
- f ⊗ f_{0,δ}(α) = (1 − δ) f(α/(1 − δ)) for α ≤ 1 − δ, else 0.
- Products of small discrete curves (from_distributions, randomized response, …) are exact products
  of the underlying distributions.

Everything else goes through one numerical engine (:func:`compose` with ``numeric=True`` forces it).
The scheme, chosen so that per-step rounding errors do not add up over n steps:

1. **Dominating discretization (lower curve).** Each curve's privacy loss L = log dQ/dP is binned
   on a grid of spacing h (aligned to 0) and each bin's (P, Q)-mass is split between its two end
   points so that P- and Q-mass are preserved ("connect the dots": the δ(ε) profile is exact at
   grid points and interpolated linearly in e^ε between them, hence ≥ the true one, Doroshenko,
   Ghazi, Kamath, Kumar & Manurangsi 2022). The discretized pair is dominated in the f-DP order by
   construction, and tensor products preserve the order, so the composition of the discretized
   pairs is a certified lower curve. Q-mass below the grid is moved up to its bottom point, Q-mass
   above it to the +∞ atom.
2. **Coupling (upper curve).** The split is a Markov kernel: given the true loss L_i the
   discretized loss L̃_i lies in an interval of width h around it and E[L̃_i − L_i | L_i] ≤ c(h) ≈
   h²/8. By Hoeffding's inequality, Σ(L̃_i − L_i) ≤ n c(h) + h √(n ln(1/η)/2) =: s except with
   probability η. Hence δ_true(ε) ≥ δ̃(ε + s) − η − (tail masses), which gives a certified upper
   curve from the same FFT: the bracket width in ε is ≈ s, i.e. O(h√n), not O(nh).
3. **FFT.** The Q-distributions of the discretized losses are convolved by FFT; a curve repeated n
   times is a pointwise n-th power in the Fourier domain (the cost barely depends on n). The window
   of the composed loss is chosen from its mean and variance and certified with Chernoff bounds
   computed from the discretized components' moment generating functions; mass that can wrap around
   the circular convolution goes to the +∞ atom (lower curve) or is subtracted from δ (upper
   curve). Round-off of the FFT is charged per grid point from a round-off model
   (about (n + log₂N)·1e-16 of the mean spectral magnitude).
4. **Curves.** Each side becomes a piecewise-linear curve through its δ(ε) profile (a max of
   lines), clipped to a valid trade-off curve with the operations that keep it on its side of the
   truth (max with 0 and the convex envelope of min(·, 1 − α)).

δ(ε) is accurate to 1 % relative down to about δ = 1e-12 at the defaults (the round-off allowance
and η = 1e-14 set the floor); ``tol`` sets the target width of the ε bracket. Grids are capped at
2²³ points; past that the step grows and ``info["grid_step"]`` says so. P-masses below the float64
range (losses ≳ 700) are treated as +∞ losses on the lower curve, so such extreme compositions
give valid but trivial brackets.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import fft as sfft
from scipy.special import gammaln, logsumexp

from ._checks import check_int, check_scalar
from .families import EpsDelta, Gaussian, Identity, Laplace
from .numeric import Bracketed
from .tradeoff import LossBins, PiecewiseLinear, TradeOff

__all__ = ["compose", "DeltaMix", "kov"]

#: largest number of outcomes for which products of discrete curves are formed exactly
EXACT_PRODUCT_LIMIT = 200_000
#: largest FFT grid; past it the grid step grows (and the info dict says so)
MAX_GRID = 1 << 23
#: most breakpoints kept in a numeric curve (atoms are merged conservatively beyond that)
MAX_BREAKPOINTS = 400_000


# ---------------------------------------------------------------------------------- closed forms
class DeltaMix(TradeOff):
    """f ⊗ f_{0,δ}: (1 − δ) f(α/(1 − δ)) on [0, 1 − δ], 0 beyond (DRS Sec 3, MATH §4). Exact.

    In privacy-loss terms, with probability δ the loss is +∞, otherwise it is f's loss; so
    δ'(ε) = δ + (1 − δ) δ_f(ε).

    Examples
    --------
    >>> h = DeltaMix(Gaussian(1.0), 1e-6)
    >>> round(h(0.1), 6)
    0.610855
    """

    def __init__(self, base: TradeOff, delta: float) -> None:
        self.base = base
        self.delta_ = check_scalar("delta", delta, low=0.0, high=1.0)
        self.kind = base.kind

    def _eval(self, alpha: np.ndarray) -> np.ndarray:
        d = self.delta_
        if d >= 1.0:
            return np.zeros_like(alpha)
        x = np.minimum(alpha / (1.0 - d), 1.0)
        return np.where(alpha <= 1.0 - d, (1.0 - d) * np.asarray(self.base(x)), 0.0)

    @property
    def lower(self) -> TradeOff:
        return self if self.kind == "exact" else DeltaMix(self.base.lower, self.delta_)

    @property
    def upper(self) -> TradeOff:
        return self if self.kind == "exact" else DeltaMix(self.base.upper, self.delta_)

    def inverse(self) -> DeltaMix:
        """(f ⊗ f_{0,δ})⁻¹ = f⁻¹ ⊗ f_{0,δ} (DRS Prop 3.2)."""
        return DeltaMix(self.base.inverse(), self.delta_)

    @property
    def is_symmetric(self) -> bool:
        return self.base.is_symmetric

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        d = self.delta_
        return d + (1.0 - d) * np.asarray(self.base.delta(eps), dtype=float)

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        d = self.delta_
        out = np.full(delta.shape, np.inf)
        ok = delta >= d
        if d < 1.0 and ok.any():
            inner = np.clip((delta[ok] - d) / (1.0 - d), 0.0, 1.0)
            out[ok] = self.base.epsilon(inner)
        return out

    def _loss_bins(self, edges: np.ndarray) -> LossBins:
        b = self.base._loss_bins(edges)
        s = 1.0 - self.delta_
        return LossBins(
            p=s * b.p, q=s * b.q, p_below=s * b.p_below, q_below=s * b.q_below,
            p_above=s * b.p_above, q_above=s * b.q_above, q_inf=self.delta_ + s * b.q_inf,
        )

    def _kinks(self) -> np.ndarray:
        return (1.0 - self.delta_) * self.base._kinks()

    def __repr__(self) -> str:
        return f"{self.base!r} ⊗ EpsDelta(eps=0, delta={self.delta_:.6g})"

    def _label(self) -> str:
        return f"{self.base._label()} $\\otimes f_{{0,{self.delta_:.3g}}}$"


def _delta_mix_pl(f: PiecewiseLinear, d: float) -> PiecewiseLinear:
    """f ⊗ f_{0,δ} for a piecewise-linear f, as a piecewise-linear curve (exact)."""
    if d == 0.0:
        return f
    s = 1.0 - d
    a, b = f.breakpoints
    a2 = np.append(s * a, 1.0)
    b2 = np.append(s * b, 0.0)
    ac2 = np.append(1.0 - s * a, 0.0)
    bc2 = np.append(d + s * f._bc, 1.0)
    qc2 = np.append(s * f._qc, s * f._qc[-1] + s * (1.0 - f.q_inf - f._qc[-1]))
    if a2[-2] >= 1.0:
        a2, b2, ac2, bc2, qc2 = a2[:-1], b2[:-1], ac2[:-1], bc2[:-1], qc2[:-1]
    return PiecewiseLinear(
        a2, b2, alpha_c=ac2, beta_c=bc2, q_inf=d + s * f.q_inf, q_cum=qc2, kind=f.kind
    )


def kov(eps: float, delta: float, k: int) -> PiecewiseLinear:
    """Exact k-fold composition f_{ε,δ}^{⊗k} (Kairouz, Oh & Viswanath 2015, Thm 3.3). Exact.

    f_{ε,0}^{⊗k} = T(Bin(k, e^ε/(1+e^ε)), Bin(k, 1/(1+e^ε))): outcome l has loss (k − 2l)ε.
    Binomial masses are computed in log space, so k = 10⁶ works; masses below the float64 range
    (< 1e-308) are dropped, which changes the curve by less than that.

    Examples
    --------
    >>> f = kov(0.5, 0.0, 10)
    >>> round(float(f.delta(2.0)), 8)
    0.14546645
    """
    e = check_scalar("eps", eps, low=0.0)
    d = check_scalar("delta", delta, low=0.0, high=1.0)
    k = check_int("k", k, low=0)
    if k == 0 or e == 0.0:
        base: PiecewiseLinear = Identity()
    else:
        l = np.arange(k + 1, dtype=float)
        log_s = -math.log1p(math.exp(-e))  # log(e^ε/(1+e^ε))
        log_r = -e + log_s  # log(1/(1+e^ε))
        logc = gammaln(k + 1) - gammaln(l + 1) - gammaln(k - l + 1)
        lp = logc + l * log_s + (k - l) * log_r
        lq = logc + l * log_r + (k - l) * log_s
        base = PiecewiseLinear.from_masses(np.exp(lp), np.exp(lq))
    dk = -math.expm1(k * math.log1p(-d)) if d < 1.0 else 1.0  # 1 − (1 − δ)^k
    out = _delta_mix_pl(base, dk) if k else base
    out._name = f"EpsDelta(eps={e:.6g}, delta={d:.6g}) ** {k}"
    return out


def _exact_product(curves: list[tuple[PiecewiseLinear, int]]) -> PiecewiseLinear | None:
    """Exact product of discrete curves by convolving their masses; None if too large."""
    p = np.ones(1)
    q = np.ones(1)
    loss = np.zeros(1)
    keep_inf = 1.0  # probability of no +∞ atom
    for f, n in curves:
        fp, fq, fl = f._segments
        keep_inf *= (1.0 - f.q_inf) ** n
        for _ in range(n):
            if p.size * fp.size > EXACT_PRODUCT_LIMIT:
                return None
            p = np.outer(p, fp).ravel()
            q = np.outer(q, fq).ravel()
            loss = np.add.outer(loss, fl).ravel()
            # merge outcomes whose losses agree to rounding: keeps sizes polynomial for repeats
            fin = np.isfinite(loss)
            key = np.where(fin, np.round(loss, 10), loss)
            uniq, inv = np.unique(key, return_inverse=True)
            p = np.bincount(inv, weights=p)
            q = np.bincount(inv, weights=q)
            loss = uniq
    return PiecewiseLinear.from_masses(p, q, q_inf=1.0 - keep_inf)


# ---------------------------------------------------------------------------------- front end
def compose(
    *curves: TradeOff,
    repeat: int = 1,
    numeric: bool = False,
    tol: float = 1e-3,
    grid_step: float | None = None,
    eta: float = 1e-14,
) -> TradeOff:
    """The tensor product f₁ ⊗ … ⊗ f_m, the whole list repeated ``repeat`` times (DRS Def 3.1).

    Adaptive composition of f_i-DP mechanisms is (f₁ ⊗ … ⊗ f_m)-DP, and tight (DRS Thm 3.2).
    Results stay in closed form where the mathematics allows (Gaussian, Identity, f_{ε,δ} repeats,
    f ⊗ f_{0,δ}, small discrete curves); everything else is composed by the certified FFT engine
    described in the module docstring and returned as a :class:`~fdp.numeric.Bracketed` curve.

    Parameters
    ----------
    *curves : TradeOff
        The curves to compose.
    repeat : int, default 1
        How many times the list is repeated (``f ** n`` is ``compose(f, repeat=n)``); the cost
        of the numeric engine barely depends on it.
    numeric : bool, default False
        Force the numeric engine even where a closed form exists (for comparisons and tests).
    tol : float, default 1e-3
        Target relative width of the certified ε bracket (0.1 %); sets the grid step.
    grid_step : float, optional
        The loss-grid spacing h; overrides ``tol``.
    eta : float, default 1e-14
        Failure probability of the coupling bound used for the upper curve (subtracted from δ).

    Returns
    -------
    TradeOff
        Exact (closed form) or a Bracketed curve with ``.lower ≤ exact ≤ .upper``.

    Examples
    --------
    >>> import fdp
    >>> (fdp.Gaussian(0.3) @ fdp.Gaussian(0.4)).mu
    0.5
    >>> h = fdp.compose(fdp.Laplace(0.1), repeat=100)
    >>> lo, hi = h.epsilon_bracket(1e-6)
    >>> bool(0 < hi - lo < 0.01), round(float(hi), 2)
    (True, 4.69)
    """
    for i, c in enumerate(curves):
        if not isinstance(c, TradeOff):
            raise TypeError(f"curves[{i}] must be a TradeOff, got {type(c).__name__}")
    repeat = check_int("repeat", repeat, low=0)
    tol = check_scalar("tol", tol, low=0.0, low_open=True)
    eta = check_scalar("eta", eta, low=0.0, high=1e-3, low_open=True)
    if grid_step is not None:
        grid_step = check_scalar("grid_step", grid_step, low=1e-9, high=1.0)

    # group equal curves: a curve repeated n times is one FFT power, not n products
    items: list[list[Any]] = []
    for c in curves:
        for it in items:
            if it[0] is c or (type(it[0]) is type(c) and _eq(it[0], c)):
                it[1] += repeat
                break
        else:
            items.append([c, repeat])
    items = [it for it in items if it[1] > 0 and not isinstance(it[0], Identity)]
    if not items:
        return Identity()
    if len(items) == 1 and items[0][1] == 1 and not numeric:
        return items[0][0]
    if not numeric:
        closed = _closed_form([(c, n) for c, n in items])
        if closed is not None:
            return closed
    return _numeric([(c, n) for c, n in items], tol=tol, grid_step=grid_step, eta=eta)


def _eq(a: TradeOff, b: TradeOff) -> bool:
    try:
        return bool(a == b)
    except Exception:  # pragma: no cover - exotic __eq__
        return False


def _closed_form(items: list[tuple[TradeOff, int]]) -> TradeOff | None:
    # pull out f_{0,δ} factors (and the δ part of every f_{ε,δ})
    keep = 1.0
    rest: list[tuple[TradeOff, int]] = []
    for c, n in items:
        if isinstance(c, EpsDelta) and c.delta_ > 0:
            keep *= (1.0 - c.delta_) ** n
            if c.eps > 0:
                rest.append((EpsDelta(c.eps, 0.0), n))
        elif isinstance(c, DeltaMix):
            keep *= (1.0 - c.delta_) ** n
            rest.append((c.base, n))
        else:
            rest.append((c, n))
    d = 1.0 - keep
    inner: TradeOff | None
    if not rest:
        inner = Identity()
    elif all(isinstance(c, Gaussian) for c, _ in rest):
        inner = Gaussian(math.sqrt(sum(n * c.mu**2 for c, n in rest)))  # type: ignore[attr-defined]
    elif len(rest) == 1 and isinstance(rest[0][0], EpsDelta):
        inner = kov(rest[0][0].eps, 0.0, rest[0][1])  # type: ignore[attr-defined]
    elif len(rest) == 1 and rest[0][1] == 1:
        inner = rest[0][0]
    elif all(isinstance(c, PiecewiseLinear) and c.kind == "exact" for c, _ in rest):
        inner = _exact_product(rest)  # type: ignore[arg-type]
    else:
        inner = None
    if inner is None:
        return None
    if d == 0.0:
        return inner
    if isinstance(inner, PiecewiseLinear):
        return _delta_mix_pl(inner, d)
    return DeltaMix(inner, d)


# ---------------------------------------------------------------------------------- the engine
def _ctd(lb: LossBins, edges: np.ndarray) -> tuple[np.ndarray, float]:
    """Connect-the-dots split of binned masses onto the grid points (Q-masses), and the +∞ mass.

    A bin (e_j, e_{j+1}] with masses (p, q) and loss λ = log(q/p) = e_j + u goes to e_j and e_{j+1}
    preserving both masses: the share of Q at e_{j+1} is (1 − e^{−u})/(1 − e^{−h}).
    """
    h = edges[1] - edges[0]
    p, q = lb.p, lb.q
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.log(q) - np.log(p) - edges[:-1]
    u = np.where(p > 0, np.clip(np.nan_to_num(u, nan=0.0, posinf=h), 0.0, h), h)
    share = -np.expm1(-u) / -math.expm1(-h)
    qb = q * share
    qa = q - qb
    w = np.zeros(edges.size)
    w[:-1] += qa
    w[1:] += qb
    w[0] += lb.q_below  # Q-mass below the grid rounds up to its bottom point
    q_inf = lb.q_inf + lb.q_above  # above the grid: +∞ (pessimistic)
    return np.maximum(w, 0.0), float(q_inf)


def _c_max(h: float) -> float:
    """max over u ∈ [0, h] of E[L̃ − L | L] for the connect-the-dots kernel (≈ h²/8)."""
    u = np.linspace(0.0, h, 2001)
    c = h * (-np.expm1(-u)) / -math.expm1(-h) - u
    return float(c.max()) * 1.01 + 1e-300


_SUPPORT_CACHE: dict[tuple[int, float], tuple[TradeOff, tuple[float, float]]] = {}


def _support(c: TradeOff, tail: float) -> tuple[float, float]:
    """A loss interval outside which c's Q-mass (finite losses) is below ``tail`` on each side."""
    key = (id(c), tail)
    hit = _SUPPORT_CACHE.get(key)
    if hit is not None and hit[0] is c:
        return hit[1]
    out = _support_uncached(c, tail)
    if len(_SUPPORT_CACHE) > 256:
        _SUPPORT_CACHE.clear()
    _SUPPORT_CACHE[key] = (c, out)
    return out


def _support_uncached(c: TradeOff, tail: float) -> tuple[float, float]:
    lo, hi = -2000.0, 2000.0
    probe = c._loss_bins(np.array([lo, hi]))
    if probe.q_below + float(probe.q.sum()) + probe.q_above <= 0.0:
        return 0.0, 0.0  # no finite-loss Q-mass (e.g. a perfectly distinguishable pair)
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


class _Component:
    """One distinct curve of a composition on the common grid: Q-masses from grid index k0 on."""

    def __init__(self, curve: TradeOff, count: int, h: float, tail: float) -> None:
        lo, hi = _support(curve, tail)
        self.k0 = math.floor(lo / h) - 1
        k1 = math.ceil(hi / h) + 1
        edges = np.arange(self.k0, k1 + 1) * h
        lb = curve._loss_bins(edges)
        self.w, self.q_inf = _ctd(lb, edges)
        self.count = count
        self.trunc = lb.q_below + lb.q_above  # Q-mass outside the grid (coupling exclusions)
        self.loss = edges
        tot = self.w.sum()
        self.mean = float((self.w * self.loss).sum() / tot) if tot > 0 else 0.0
        self.var = float((self.w * (self.loss - self.mean) ** 2).sum() / tot) if tot > 0 else 0.0
        # For the Chernoff bounds, masses summed in blocks of b ≤ 16 grid points and placed at the
        # block's top (t > 0) or bottom (t < 0): an upper bound on the MGF, off by at most
        # e^{|t| (b−1) h} per component, which the window search absorbs.
        b = max(1, min(16, self.w.size // 40_000))
        pad = (-self.w.size) % b
        wb = np.concatenate([self.w, np.zeros(pad)]).reshape(-1, b).sum(axis=1)
        start = self.loss[0] + h * b * np.arange(wb.size)
        with np.errstate(divide="ignore"):
            self._logwb = np.log(wb)
        self._blk = (start, start + h * (b - 1))
        self._mgf_cache: dict[float, float] = {}

    def log_mgf(self, t: np.ndarray) -> np.ndarray:
        """An upper bound on log E_Q[e^{t L̃}; L̃ finite] for each t (cached per t)."""
        out = np.empty(t.size)
        for i, ti in enumerate(t):
            v = self._mgf_cache.get(float(ti))
            if v is None:
                loss = self._blk[1] if ti > 0 else self._blk[0]
                v = float(logsumexp(self._logwb + ti * loss))
                self._mgf_cache[float(ti)] = v
            out[i] = v
        return out


def _chernoff(comps: list[_Component], a: float, upper: bool, sd: float) -> float:
    """Chernoff bound min_t e^{−ta} Π M_i(t)^{n_i} on Q[Σ L̃ > a] (upper) or Q[Σ L̃ < a] (lower).

    t runs over a fixed geometric grid scaled by the composed standard deviation, so the per-
    component moment generating functions are computed once per t and reused for every a.
    """
    t = np.geomspace(0.5, 80.0, 16) / max(sd, 1e-12) * (1.0 if upper else -1.0)
    lm = sum(c.count * c.log_mgf(t) for c in comps)
    vals = lm - t * a
    return float(min(1.0, math.exp(min(float(np.min(vals)), 0.0))))


def _moments(c: TradeOff) -> tuple[float, float]:
    """Mean and variance of c's privacy loss under Q (finite part), from 4001 bins."""
    lo, hi = _support(c, 1e-18)
    edges = np.linspace(lo, hi, 4001)
    lb = c._loss_bins(edges)
    mid = 0.5 * (edges[:-1] + edges[1:])
    tot = lb.q.sum()
    if tot <= 0:
        return 0.0, 0.0
    m = float((lb.q * mid).sum() / tot)
    return m, float((lb.q * (mid - m) ** 2).sum() / tot)


def _grid_step(items: list[tuple[TradeOff, int]], tol: float, eta: float) -> float:
    """The grid step for a target relative width ``tol`` of the ε bracket.

    The scale of ε is taken as mean + 3 sd of the composed loss (at least 1); the upper curve's
    shift is s ≈ h √(n ln(1/η)/2) (Hoeffding), so h = tol · scale / √(n ln(1/η)/2).
    """
    n = sum(c for _, c in items)
    mean = var = 0.0
    for c, k in items:
        m, v = _moments(c if c.kind == "approximation" else c.lower)
        mean += k * m
        var += k * v
    scale = max(1.0, mean + 3.0 * math.sqrt(var))
    h = tol * scale / max(math.sqrt(n * math.log(1.0 / eta) / 2.0), 1.0)
    return float(min(max(h, 1e-7), 1e-2))


def _symmetric_types() -> tuple[type, ...]:
    from .operations import Subsampled

    return (Gaussian, EpsDelta, Identity, Laplace, Subsampled)


def _numeric(
    items: list[tuple[TradeOff, int]], *, tol: float, grid_step: float | None, eta: float
) -> TradeOff:
    _SYMMETRIC_TYPES = _symmetric_types()  # noqa: N806
    approx = any(c.kind == "approximation" for c, _ in items)
    lower_items = [(c if c.kind == "approximation" else c.lower, n) for c, n in items]
    upper_items = [(c if c.kind == "approximation" else c.upper, n) for c, n in items]
    same = all(a is b for (a, _), (b, _) in zip(lower_items, upper_items, strict=True))
    h = grid_step if grid_step is not None else _grid_step(items, tol, eta)
    lo_res = _fft_compose(lower_items, h, eta)
    up_res = lo_res if same else _fft_compose(upper_items, h, eta)
    lower = _curve_from_atoms(lo_res, side="lower")

    def upper() -> PiecewiseLinear:
        return _curve_from_atoms(up_res, side="upper")

    names = " ⊗ ".join(f"{c!r}" + (f"^{n}" if n > 1 else "") for c, n in items)
    if approx:  # composing an approximation gives an approximation, with no bracket
        lower.kind = "approximation"
        lower._name = f"numeric[{names}] (approximation)"
        return lower  # type: ignore[return-value]
    sym = all(isinstance(c, _SYMMETRIC_TYPES) for c, _ in items)
    info = {
        "symmetric": sym,
        "grid_step": lo_res["h"], "grid_points": lo_res["N"], "shift": up_res["shift"],
        "eta": eta, "tail_lower": lo_res["tau"], "tail_upper": up_res["tau"],
        "roundoff_per_point": lo_res["e_pt"],
    }
    def inverse() -> Bracketed:
        inv = _numeric(
            [(c.inverse(), n) for c, n in items], tol=tol, grid_step=grid_step, eta=eta
        )
        if isinstance(inv, Bracketed):
            inv._inverse = result
        return inv

    result = Bracketed(lower, upper, name=f"numeric[{names}]", info=info, inverse=inverse)
    return result


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


def _fft_compose(items: list[tuple[TradeOff, int]], h: float, eta: float) -> dict[str, Any]:
    tail = 1e-18
    n_total = sum(n for _, n in items)
    while True:
        comps = [_Component(c, n, h, tail) for c, n in items]
        mean = sum(c.count * c.mean for c in comps)
        sd = math.sqrt(sum(c.count * c.var for c in comps))
        kmin = sum(c.count * c.k0 for c in comps)
        kmax = sum(c.count * (c.k0 + c.w.size - 1) for c in comps)
        # widen each side of the window until its Chernoff tail bound is below 1e-20
        w_lo = w_hi = 8.0
        while True:
            a_lo = max(kmin * h, mean - w_lo * sd - 10 * h)
            tau_lo = 0.0 if a_lo <= kmin * h else _chernoff(comps, a_lo, upper=False, sd=sd)
            if tau_lo <= 1e-20 or a_lo <= kmin * h:
                break
            w_lo *= 1.25
        while True:
            a_hi = min(kmax * h, mean + w_hi * sd + 10 * h)
            tau_hi = 0.0 if a_hi >= kmax * h else _chernoff(comps, a_hi, upper=True, sd=sd)
            if tau_hi <= 1e-20 or a_hi >= kmax * h:
                break
            w_hi *= 1.25
        ka = math.floor(a_lo / h)
        need = math.ceil(a_hi / h) - ka + 1
        if need <= MAX_GRID:
            break
        h *= 2.0 * need / MAX_GRID  # grid too large: coarser step, recorded in the result
    N = int(sfft.next_fast_len(need, real=True))
    spec = np.ones(N // 2 + 1, dtype=complex)
    q_keep = 1.0
    for c in comps:
        buf = np.zeros(N)
        if c.w.size <= N:  # grid index k0 + j at position j (folded modulo N if longer)
            buf[: c.w.size] = c.w
        else:
            buf = np.bincount(np.arange(c.w.size) % N, weights=c.w, minlength=N)
        spec *= _cpow(sfft.rfft(buf), c.count)
        q_keep *= (1.0 - c.q_inf) ** c.count
    # position m of the product holds loss index kmin + m (mod N); rotate so that position j
    # holds loss index ka + j
    w = np.roll(sfft.irfft(spec, n=N), kmin - ka)
    # Round-off allowance (a model, not a proof): a spectral coefficient z_k raised to the n-th
    # power carries an error ≈ (n + log2 N) ε_mach |z_k|^n, so every output point is off by about
    # e_pt = (n + log2 N) ε_mach · mean_k |S_k|. (Measured round-off on n-fold Gaussians is about
    # 30 times smaller.) The lower curve adds e_pt of Q-mass at every grid point, the upper curve
    # removes it.
    eps_m = 2.3e-16
    absum = 2.0 * float(np.abs(spec).sum()) - abs(spec[0])
    e_pt = eps_m * (n_total + math.log2(max(N, 2))) * absum / N
    loss = (ka + np.arange(N)) * h
    n_sum = float(n_total)
    hoeff = h * math.sqrt(n_sum * math.log(1.0 / eta) / 2.0)
    shift = n_sum * _c_max(h) + hoeff
    trunc = sum(c.count * c.trunc for c in comps)
    return {
        "h": h, "N": N, "loss": loss, "w": w, "q_inf": 1.0 - q_keep, "tau": tau_lo + tau_hi,
        "e_pt": e_pt, "shift": shift, "eta": eta + trunc,
    }


def _curve_from_atoms(res: dict[str, Any], side: str) -> PiecewiseLinear:
    """The curve of the δ-profile of Q-atoms (losses l_k, masses w_k) plus a +∞ atom.

    lower: round-off mass added at every point, wrap-around tail mass added to the +∞ atom;
    upper: round-off mass removed, losses shifted down by the coupling shift s and the curve
    raised by η + tails.
    """
    if side == "lower":
        w = res["w"] + res["e_pt"]
        loss = res["loss"]
        q_inf = res["q_inf"] + res["tau"]
        lift = 0.0
    else:
        w = res["w"] - res["e_pt"]
        loss = res["loss"] - res["shift"]
        q_inf = res["q_inf"]
        lift = res["eta"] + res["tau"]
    # Thin the atoms to blocks of k grid points, k h ≤ shift/200: a block's mass moves to its
    # highest loss (lower curve: pessimistic) or its lowest (upper curve: optimistic), which moves
    # ε by at most k h, a two-hundredth of the bracket width (or, on very large grids, what keeps
    # the curve at most MAX_BREAKPOINTS points).
    h = res["h"]
    k = max(1, int(0.005 * res["shift"] / h), -(-res["w"].size // MAX_BREAKPOINTS))
    if k > 1:
        pad = (-w.size) % k
        w = np.concatenate([w, np.zeros(pad)]).reshape(-1, k).sum(axis=1)
        first = loss[0] + h * k * np.arange(w.size)
        loss = first + (h * (k - 1) if side == "lower" else 0.0)
    nz = w > 0
    if not nz.all():
        w, loss = w[nz], loss[nz]
    w, loss = w[::-1], loss[::-1]  # decreasing loss
    n = w.size
    p = w * np.exp(np.minimum(-loss, 700.0))
    a = np.zeros(n + 1)
    np.cumsum(p, out=a[1:])
    qc = np.zeros(n + 1)
    np.cumsum(w, out=qc[1:])
    b = np.zeros(n + 1)
    np.cumsum(w[::-1], out=b[-2::-1])  # Q-mass at or below each breakpoint's loss
    b += (1.0 - q_inf - qc[-1]) + lift  # + Q-mass not accounted for (≥ 0 up to rounding)
    return _valid_curve(a, b, qc, q_inf - lift, side)


def _valid_curve(
    a: np.ndarray, b: np.ndarray, qc: np.ndarray, q_inf: float, side: str
) -> PiecewiseLinear:
    """Clip a convex decreasing PL curve to a valid trade-off curve on its side of the truth.

    Breakpoints (a_k, b_k) with 1 − b_k = q_inf + qc_k (kept apart for precision); a may pass 1,
    b may leave [0, 1]. Applies max(·, 0), then the convex envelope of min(·, 1 − α) on [0, 1].
    """
    # cut where α passes 1 or β passes 0 (the curve is decreasing, so both cut a prefix)
    bad = (a > 1.0) | (b < 0.0)
    if bad.any():
        k = int(np.argmax(bad))
        if k == 0:
            a, b, qc = np.array([0.0]), np.array([1.0]), np.array([0.0])
            q_inf = 0.0
        else:
            a0, b0, a1, b1 = a[k - 1], b[k - 1], a[k], b[k]
            t = 1.0
            if a1 > 1.0:
                t = min(t, (1.0 - a0) / (a1 - a0))
            if b1 < 0.0:
                t = min(t, b0 / (b0 - b1))
            a = np.append(a[:k], a0 + t * (a1 - a0))
            b = np.append(b[:k], max(b0 + t * (b1 - b0), 0.0))
            qc = np.append(qc[:k], qc[k - 1] + t * (qc[k] - qc[k - 1]))
    # start: if β_0 > 1 (q_inf < 0), go from (0, 1) along the tangent to the curve
    if q_inf < 0.0:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            slope = np.where(a > 0, -(q_inf + qc) / a, np.inf)  # (β − 1)/α
        k1 = int(np.argmin(slope))
        a = np.insert(a[k1:], 0, 0.0)
        b = np.insert(b[k1:], 0, 1.0)
        qc = np.insert(q_inf + qc[k1:], 0, 0.0)
        q_inf = 0.0
    # end: tangent from (1, 0) to the curve (also handles min with 1 − α and max with 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(a < 1.0, b / (1.0 - a), np.inf)
    k2 = int(np.argmin(ratio))
    a = np.append(a[: k2 + 1], 1.0)
    b = np.append(b[: k2 + 1], 0.0)
    qc = np.append(qc[: k2 + 1], 1.0 - q_inf)
    d = np.diff(a)
    if (d <= 0).any():
        # Zero-length segments: P-mass that underflowed next to Q-mass (losses ≳ 700). The lower
        # curve keeps the last point of each run (the Q-mass becomes +∞ loss: pessimistic), the
        # upper curve the first (a higher curve: optimistic).
        if side == "lower":
            keep = np.append(d > 0, True)
        else:
            keep = np.insert(d > 0, 0, True)
        a, b, qc = a[keep], b[keep], qc[keep]
        if a[0] > 0:  # the lower curve dropped (0, ·): restore it
            a, b, qc = np.insert(a, 0, 0.0), np.insert(b, 0, b[0]), np.insert(qc, 0, qc[0])
        if side == "lower" and qc[0] > 0:  # a vertical drop at α = 0 is a +∞ atom
            q_inf, qc = q_inf + qc[0], qc - qc[0]
    return PiecewiseLinear(a, b, beta_c=q_inf + qc, q_inf=q_inf, q_cum=qc)

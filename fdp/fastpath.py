"""The fast certified profile: one pessimistic grid per curve and one FFT power per curve.

A lean, one-sided companion of the engine (:mod:`fdp.pld`): each curve's Q-measure of the
privacy loss is discretized by connect-the-dots onto the lattice hℤ (Doroshenko, Ghazi, Kamath,
Kumar & Manurangsi 2022), which keeps δ exact at grid points and a chord in e^ε between them,
hence ≥ the true δ; the composition is one FFT power per curve with its round-off bounded
(Higham 2002, Thm 24.2) and added to every mass, and the mass that can wrap around the window
(Chernoff bound) goes to the +∞ atom. The result is a certified *upper* bound on δ(ε) for
ε ≥ 0 (so on ε(δ)), with no lower side: the accountant's per-epoch queries use it, and DP-SGD
queries use it to show that the remove direction cannot decide ε without composing it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._numerics import TINY, UNIT_ROUNDOFF
from .pld import _ETA_FFT
from .tradeoff import TradeOff

_U = UNIT_ROUNDOFF

#: Q-mass left outside each step's grid (it is moved pessimistically: below → bottom, above → +∞)
_STEP_TAIL = 1e-30
#: Chernoff bound on the composed mass outside the FFT window, on each side
_WINDOW_TAIL = 1e-30
#: the accountant's tails (step, window): what lies beyond adds at most ~1e-16 to δ, so its
#: fast path answers δ ≥ FAST_MIN_DELTA only (1e3 times that; the engine answers below). A
#: sparse long run's window is 4.5x shorter than at 1e-30 (DP-SGD σ = 1, p = 1e-4, T = 10⁶).
BULK_TAILS = (1e-24, 1e-16)
FAST_MIN_DELTA = 1e-13
_T_GRID = np.geomspace(1e-3, 1e3, 31)  # Chernoff exponents (absolute, so per-step MGFs cache)
_MAX_FAST_GRID = 1 << 22
#: log of the bound on the mass a tilted FFT may wrap around (see _fast_power)
_WRAP_LOG = math.log(1e-20)


def dyadic_step(h: float) -> float:
    """The largest m·2^k ≤ h with m ∈ {4, 5, 6, 7} (within 25 % below h): a lattice step whose
    every point h·k the fast path uses (|k| < 2^50) is exact in float64, so that the losses the
    step grids are discretized at are exactly the lattice the FFT composes on.

    Examples
    --------
    >>> dyadic_step(1.0), dyadic_step(0.3), dyadic_step(2.0**-12) == 2.0**-12
    (1.0, 0.25, True)
    """
    if not (math.isfinite(h) and h > 0.0):
        raise ValueError(f"h={h!r} must be a positive finite step")
    k = math.floor(math.log2(h)) - 2
    m = math.floor(h / 2.0**k)
    while m * 2.0**k > h:  # (log2 rounding at an exact power of 2)
        m -= 1
    while m >= 8:
        m, k = m // 2, k + 1
    return m * 2.0**k


def _short_dyadic(h: float) -> bool:
    """Whether h = m·2^k with an integer m < 2^8 (every h·k with |k| < 2^45 is exact in
    float64)."""
    m, _ = math.frexp(h)
    return (m * 2**8) == int(m * 2**8)


class _StepGrid:
    """One curve's pessimistic (connect-the-dots) Q-measure on the lattice hℤ, with its cached
    spectra and moment generating function. The split of each bin between its end points keeps
    both masses, so δ is exact at grid points and a chord in e^ε between them, hence ≥ the true δ
    (Doroshenko et al. 2022; :mod:`fdp.pld`, step 1); Q-mass below the grid goes to its bottom
    point and Q-mass above it to the +∞ atom (both raise δ)."""

    def __init__(self, curve: TradeOff, h: float, tail: float = _STEP_TAIL) -> None:
        from .pld import _ctd, _support, log_mgf_bound

        if not _short_dyadic(h):  # (callers round their steps with dyadic_step)
            raise ValueError(f"fast-path step h={h!r} must be m·2^k with m < 2^8 (dyadic_step)")
        lo, hi = _support(curve, tail)
        k0 = math.floor(lo / h) - 1
        k1 = math.ceil(hi / h) + 1
        if k1 - k0 > _MAX_FAST_GRID:  # (μ ≳ 10³: the fast path gives way to the engine, whose
            # grid adapts to the loss range; this one would allocate gigabytes)
            raise OverflowError(f"a step's loss support needs {k1 - k0} fast-path grid points")
        edges = h * np.arange(k0, k1 + 1, dtype=float)
        w, q_inf = _ctd(curve._loss_bins(edges), edges)
        nz = np.flatnonzero(w > 0)
        if nz.size == 0:
            w, nz = np.zeros(1), np.zeros(1, dtype=int)
        self.k0 = k0 + int(nz[0])
        self.x = np.ascontiguousarray(w[nz[0]: nz[-1] + 1])
        self.q_inf = min(float(q_inf), 1.0)
        self.loss = h * (self.k0 + np.arange(self.x.size))
        tot = float(self.x.sum())
        self.mean = float((self.x * self.loss).sum() / tot) if tot > 0 else 0.0
        self.var = float((self.x * (self.loss - self.mean) ** 2).sum() / tot) if tot > 0 else 0.0
        with np.errstate(divide="ignore"):
            lx = np.log(self.x)
        # log M(±t) = log Σ x e^{±t ℓ}, rounded up (relative rounding ≤ (size + 2) u per sum)
        pad = math.log1p((self.x.size + 4) * 4.0 * _U)
        # (blocks far below the largest term charged in bulk: still upper bounds)
        self.lm_up = log_mgf_bound(lx, self.loss, _T_GRID) + pad
        self.lm_dn = log_mgf_bound(lx, self.loss, -_T_GRID) + pad
        self._spec: dict[tuple[int, float], tuple[Any, ...]] = {}
        # (n_fft, θ) → (k, [ẑ, ẑ², ẑ⁴, …]): the squares the binary method multiplies, on the
        # frequencies [0, k) (the live ones of the call that made them: on the MNIST schedule
        # ~10² of 3·10⁴)
        self._squares: dict[tuple[int, float], tuple[int, list[np.ndarray]]] = {}
        self._log_abs: dict[tuple[int, float], np.ndarray] = {}  # log|ẑ| for power's mask

    def power(self, n_fft: int, theta: float, n: int, stop: int | None = None) -> np.ndarray:
        """ẑⁿ for :meth:`spectrum`'s ẑ at the frequencies [0, ``stop``) (all by default), bit for
        bit :func:`fdp.pld._cpow` there (the same products in the same order, and the same
        entries set to 0), with the squares ẑ^{2^j} kept: an accountant's next epoch multiplies
        popcount(n) of them instead of squaring again. The result does not depend on which
        powers were asked before (a checkpointed accountant and a fresh one agree to the last
        bit)."""
        z = self.spectrum(n_fft, theta)[0]
        key = (n_fft, float(theta))
        k = z.size if stop is None else min(int(stop), z.size)
        hit = self._squares.get(key)
        if hit is None or hit[0] < k:  # (squares of fewer frequencies: made again, longer)
            if len(self._squares) > 1:
                self._squares.clear()
                self._log_abs.clear()
            hit = self._squares[key] = (k, [z[:k]])
        sq = hit[1]
        live = None
        if n > 8:  # (as _cpow: coefficients with n log|z| < −745 underflow anyway, set to 0)
            la = self._log_abs.get(key)
            if la is None:
                with np.errstate(divide="ignore"):
                    la = self._log_abs[key] = np.log(np.abs(z))
            live = n * la[:k] > -745.0
            if live.all():
                live = None
        out: np.ndarray | None = None
        j, m = 0, n
        while m:
            while len(sq) <= j:
                sq.append(sq[-1] * sq[-1])
            if m & 1:
                base = sq[j][:k] if live is None else sq[j][:k][live]
                out = base.copy() if out is None else out * base
            m >>= 1
            j += 1
        if out is None:
            return np.ones(k, dtype=z.dtype)
        if live is None:
            return out
        full = np.zeros(k, dtype=z.dtype)
        full[live] = out
        return full

    def release(self) -> None:
        """Drop the kept squares of :meth:`power` (one grid-sized array per bit of n: 0.17 GB
        for a screen of ``dpsgd(0.8, 1e-5, 10**6)``, where every frequency is live)."""
        self._squares.clear()
        self._log_abs.clear()

    def spectrum(self, n_fft: int, theta: float = 0.0) -> tuple[Any, ...]:
        """(ẑ = rfft of x folded onto N points, log A, ρ₁, log M, ξ) for the measure tilted by
        θ ≥ 0, x_θ(ℓ) = x(ℓ) e^{θℓ}/M with M = Σ x e^{θℓ} as computed (log M; 0 and M = 1 at
        θ = 0), each entry within relative ξ of that ratio. A = |ẑ| + ε_c ≥ |z|, |ẑ| and
        ρ₁ = ε_c / A + 6u, where ε_c = 1.01 min(η log₂N √N ‖x_θ‖₂, γ‖x_θ‖₁) bounds |ẑ_k − z_k|
        (Higham 2002, Thm 24.2 with Parseval ‖z‖₂ = √N ‖x_θ‖₂, and the componentwise bound of its
        proof with γ = (1 + η)^{log₂N} − 1)."""
        from scipy import fft as sfft

        key = (n_fft, float(theta))
        hit = self._spec.get(key)
        if hit is None:
            from .pld import _tilt

            x, lmc, xi = (_tilt(self.x, self.loss, theta) if theta > 0.0
                          else (self.x, 0.0, 0.0))
            buf: np.ndarray  # float64 either way (bincount with float weights)
            if x.size <= n_fft:
                buf = np.zeros(n_fft)
                buf[: x.size] = x
            else:
                buf = np.bincount(np.arange(x.size) % n_fft, weights=x, minlength=n_fft)
            z = sfft.rfft(buf)
            # (‖x‖₂ and ‖x‖₁ as pairwise sums, error ≤ ⌈log₂ n⌉ u, inside the 1.01 guard; not
            # np.dot, whose multithreaded BLAS call costs milliseconds on a busy machine). Both
            # bounds hold (the normwise one of Thm 24.2 with Parseval, and the componentwise one
            # of its proof, γ‖x‖₁ with γ = (1 + η)^{log₂N} − 1, as in fdp.pld._tilted_power);
            # the ℓ1 one is the smaller for a spread-out step (x ≥ 0: ‖x‖₁ = Σx)
            lg = math.log2(n_fft)
            eps_c = 1.01 * min(
                _ETA_FFT * lg * math.sqrt(n_fft) * math.sqrt(float(np.sum(buf * buf))),
                math.expm1(lg * math.log1p(_ETA_FFT)) * float(np.sum(buf)),
            )
            a = np.abs(z) + eps_c
            hit = (z, np.log(a), eps_c / a + 6.0 * _U, lmc, xi)
            if len(self._spec) > 4:
                self._spec.clear()
            self._spec[key] = hit
        return hit


def chernoff_theta(items: list[tuple[_StepGrid, int]], eps: float) -> float:
    """The θ on the Chernoff grid that minimizes Σ n log M(θ) − θε: the tilt that centres the
    composed measure near loss ε (0 when no θ > 0 gives a bound below 1)."""
    lm_up = sum(n * g.lm_up for g, n in items)
    expo = lm_up - _T_GRID * eps
    i = int(np.argmin(expo))
    return float(_T_GRID[i]) if expo[i] < 0.0 else 0.0


def _fast_power(
    items: list[tuple[_StepGrid, int]], h: float, theta: float = 0.0,
    window_tail: float = _WINDOW_TAIL,
) -> tuple[_MassCurve, float]:
    """A certified lower curve of ⊗ items (each a pessimistic grid measure with its count), for
    ε ≥ 0 queries only: the composed Q-measure by one FFT power per item, with every position's
    proved round-off bound added to it, Q-mass that can wrap around from above the window
    (Chernoff bound) added to the +∞ atom, and only the masses with loss > 0 kept (δ(ε) for
    ε ≥ 0 depends on no others). Round-off proof: that of :func:`fdp.pld._tilted_power` at tilt
    0 (Higham 2002, Thm 24.2 and §3.6). Also returns the total round-off mass added (δ values
    below ten times it are left to the engine).

    With ``theta`` > 0 the measures are tilted first (:meth:`_StepGrid.spectrum`) and the
    composed masses untilted: position L gets Π M^n e^{−θL} (computed + its round-off bound),
    divided by (1 − ξ)^n for the tilted inputs' rounding (the exact convolution of inputs within
    relative ξ is within (1 ± ξ)^n of the exact one; linear convolution ≤ circular, all masses
    ≥ 0) and rounded up. The round-off is then relative to the mass near the tilt's centre and
    above it, so a query there is not floored by it (a long run's floor was 1e-5 untilted: DP-SGD
    σ = 2, p = 1e-3, T = 10⁶). Mass below the window would wrap around shrunk by the untilting,
    so its Chernoff bound joins the +∞ atom."""
    from scipy import fft as sfft

    mean = sum(n * g.mean for g, n in items)
    sd = math.sqrt(max(sum(n * g.var for g, n in items), 1e-300))
    kmin = sum(n * g.k0 for g, n in items)
    kmax = sum(n * (g.k0 + g.x.size - 1) for g, n in items)
    lm_up = sum(n * g.lm_up for g, n in items)
    lm_dn = sum(n * g.lm_dn for g, n in items)
    log_tail = math.log(window_tail)
    # Q[S > a] ≤ exp(lm_up(t) − t a) and Q[S < a] ≤ exp(lm_dn(t) + t a) for every t > 0
    a_hi = min(float(np.min((lm_up - log_tail) / _T_GRID)), kmax * h)
    a_lo = max(float(np.max((log_tail - lm_dn) / _T_GRID)), kmin * h)
    a_lo = min(a_lo, mean - 8.0 * sd)
    a_hi = max(a_hi, mean + 8.0 * sd)
    ka = max(math.floor(a_lo / h), kmin)
    kb = min(math.ceil(a_hi / h), kmax)
    tau = 0.0 if kb >= kmax else float(np.exp(min(float(np.min(lm_up - _T_GRID * kb * h)), 0.0)))
    need = kb - ka + 1
    n_fft = 1 << max(1, math.ceil(math.log2(max(need, 2))))
    if n_fft > _MAX_FAST_GRID:
        raise OverflowError("composed window too large for the fast path")
    if theta > 0.0:
        # Mass at index ka + N and above wraps around the circular convolution, N positions
        # down, and untilting amplifies it by e^{θ N h}: sound (it only adds mass), but it
        # would swamp δ there. Only losses > 0 are kept, so what lands there counts: it came
        # from above N h, at most Q[S ≥ N h] e^{θ N h} (Chernoff). The FFT is doubled, then
        # the tilt lowered, until that is below 1e-20.
        def wrap_log(n: int, th: float) -> float:
            return float(np.min(lm_up - _T_GRID * max(ka + n, n) * h)) + th * n * h

        if wrap_log(n_fft, theta) > _WRAP_LOG and 2 * n_fft <= _MAX_FAST_GRID:
            n_fft *= 2  # (once: a longer one costs more than the engine)
        if wrap_log(n_fft, theta) > _WRAP_LOG:
            theta = max(0.0, (_WRAP_LOG - wrap_log(n_fft, 0.0)) / (n_fft * h))
    # Only the frequencies [0, K) enter the bounds and the power: beyond the last one with
    # log Π A^n > −746, every bound term A^n (…) and every spectrum power is 0 in float64
    # (e^{−746} rounds to 0), so the values are those of the whole arrays. On the MNIST schedule
    # that is ~10² of 3·10⁴ frequencies.
    specs = [g.spectrum(n_fft, theta) for g, _ in items]
    log_a: Any = 0.0
    for (_, n), sp in zip(items, specs, strict=True):
        log_a = log_a + n * sp[1]
    half = n_fft // 2 + 1
    alive = np.flatnonzero(log_a > -746.0)
    kk = int(alive[-1]) + 1 if alive.size else 1
    log_a = log_a[:kk]
    spec: Any = None
    rho: Any = 0.0
    log_m, log_xi = 0.0, 0.0
    for (g, n), (_, _, r1, lmc, xi) in zip(items, specs, strict=True):
        rho = rho + n * r1[:kk]
        log_m += n * lmc
        log_xi -= n * math.log1p(-xi)
        zn = g.power(n_fft, theta, n, kk)
        spec = zn.copy() if spec is None else spec * zn
    with np.errstate(under="ignore", over="ignore"):
        e = np.exp(log_a) * (np.expm1(np.minimum(rho, 700.0)) + 3.0 * len(items) * _U)
    # (weights 1 at frequency 0 and at N/2, 2 between: the real spectrum's two halves)
    e_sum = float(e[0] + 2.0 * e[1:].sum() - (e[-1] if n_fft % 2 == 0 and kk == half else 0.0))
    mag = np.abs(spec) + e
    norm = math.sqrt(float(mag[0] ** 2 + 2.0 * (mag[1:] ** 2).sum()))
    l1 = float(mag[0] + 2.0 * mag[1:].sum())
    lg = math.log2(n_fft)
    # the inverse transform's own rounding: normwise (Thm 24.2, ‖·‖∞ ≤ ‖·‖₂) or componentwise
    # (γ (1/N) Σ_k |Ŝ_k|, as fdp.pld._tilted_power), whichever is smaller
    inv = min(_ETA_FFT * lg * norm / math.sqrt(n_fft),
              math.expm1(lg * math.log1p(_ETA_FFT)) * l1 / n_fft)
    err = e_sum / n_fft + 1.01 * inv + 1e-300
    if kk < half:
        full = np.zeros(half, dtype=complex)
        full[:kk] = spec
        spec = full
    raw = sfft.irfft(spec, n=n_fft)  # position m holds grid index kmin + m (mod N)
    # the window's indices ka … ka + N − 1 with loss > 0 (index ≥ 1), read off the circle
    k_lo = max(ka, 1)
    idx = np.arange(k_lo, ka + n_fft)
    start = (k_lo - kmin) % n_fft
    head = raw[start: start + idx.size]
    vals = head if head.size == idx.size else np.concatenate([head, raw[: idx.size - head.size]])
    w = vals + err
    keep = w > 0.0
    n_keep = int(np.count_nonzero(keep))
    if n_keep == w.size:  # (the usual case: no copies)
        loss = h * idx
    else:
        w, loss = w[keep], h * idx[keep]
    if theta > 0.0:
        # log of the untilting factor Π M^n e^{−θL} (1 − ξ)^{−n}, its rounding charged up
        lf = log_m - theta * loss + log_xi
        lf = lf + 8.0 * _U * (abs(log_m) + theta * np.abs(loss) + log_xi + 2.0)
        with np.errstate(under="ignore", over="ignore"):
            lw = np.log(w)
            w = np.exp(np.minimum(lw + lf + 4.0 * _U * (np.abs(lw) + 1.0), 0.0))  # (≤ 1)
            e_pos = np.exp(np.minimum(math.log(err) + lf, 0.0))  # (the round-off part of w)
        floor = float(e_pos.sum())
        if ka > kmin:  # (Q-mass below the window: Chernoff, to the +∞ atom)
            tau += float(np.exp(min(float(np.min(lm_dn + _T_GRID * ka * h)), 0.0)))
    else:
        floor = err * float(n_keep)  # all round-off mass added where it can count
        e_pos = err  # (the same at every position)
    keep_log = sum(n * math.log1p(-g.q_inf) if g.q_inf < 1.0 else -math.inf for g, n in items)
    q_inf = min((-math.expm1(keep_log) if keep_log > -math.inf else 1.0) * (1.0 + 1e-12) + tau,
                1.0)
    return _MassCurve(w, loss, q_inf, e_pos), floor


class _MassCurve:
    """δ(ε) and ε(δ) (ε ≥ 0) of the fast path's grid masses, straight from their profile
    (:class:`fdp.tradeoff._Profile`, side "lower": rounded up), without the breakpoints a
    :class:`PiecewiseLinear` would build (a query per epoch needs only these two). ``err``:
    the round-off bound added to each mass (:meth:`err_above` says how much of δ it can be)."""

    def __init__(self, q: np.ndarray, loss: np.ndarray, q_inf: float,
                 err: np.ndarray | float | None = None) -> None:
        self._q, self._loss, self._q_inf = q, loss, q_inf
        self._err = 0.0 if err is None else err  # (per mass, or one value for every mass)
        self._err_tail: np.ndarray | None = None
        self._q_tail: np.ndarray | None = None
        self._prof: tuple[int, Any] | None = None

    def err_above(self, eps: float) -> float:
        """The round-off mass added above loss ε: at most this much of δ(ε) is round-off."""
        i = int(np.searchsorted(self._loss, eps, side="right"))
        if not isinstance(self._err, np.ndarray):  # (one value: times the masses above ε,
            return float(self._err) * (self._q.size - i) * (1.0 + 2.0 * self._q.size * _U)
        if self._err_tail is None:  # rounded up by their count's summation error)
            self._err_tail = np.concatenate([np.cumsum(self._err[::-1])[::-1], [0.0]])
        return float(self._err_tail[i])

    def _pr(self, i0: int = 0) -> Any:
        """The profile of the masses at index ≥ i0 (losses ≥ loss[i0]) and the +∞ atom: δ(ε)
        is the full measure's at every ε ≥ loss[i0] (only masses above ε count)."""
        if self._prof is None or self._prof[0] > i0:
            from .tradeoff import _Profile

            # (losses increasing and distinct on the grid; the profile wants them decreasing)
            self._prof = (i0, _Profile(self._q[i0:][::-1].copy(), self._loss[i0:][::-1].copy(),
                                       self._q_inf, "lower"))
        return self._prof[1]

    def _start(self, delta: float) -> int:
        """An index i0 with ε(δ) ≥ loss[i0] for the profile: δ(x) ≥ (1 − e^{−c}) Q[L > x + c]
        for c > 0 (each mass above x + c counts at least that share), so δ(x) ≥ δ wherever
        Q[L > x + c] ≥ δ/(1 − e^{−c}); x is the largest such grid loss (0 if none)."""
        if self._q_tail is None:
            self._q_tail = np.concatenate([np.cumsum(self._q[::-1])[::-1], [0.0]]) + self._q_inf
        # (the tail sums, rounded, are only used to choose where the profile starts: a profile
        # from a lower start is the same profile above it)
        best = 0
        for c in (1.0, 0.25, 0.0625):  # (the same bound with e^{−c}, c > 0: the best start)
            k = int(np.searchsorted(-self._q_tail, -delta / -math.expm1(-c) * 1.01,
                                    side="right")) - 1  # last index with tail ≥ the threshold
            if k > 0:
                at = self._loss[min(k, self._loss.size - 1)] - c
                best = max(best, int(np.searchsorted(self._loss, at, side="left")) - 1)
        return best

    def delta_bound(self, eps: float) -> float:
        """A certified upper bound on this measure's δ at one ε ≥ 0, summed directly (no
        profile): q_∞ + Σ_{ℓ > ε} q (1 − e^{ε−ℓ}), each term within 2u of itself and the sum
        of k terms within (k + 2)u of the exact one, rounded up by (k + 6)u of q_∞ + Σ q."""
        i = int(np.searchsorted(self._loss, eps, side="right"))
        q = self._q[i:]
        s = float((q * -np.expm1(eps - self._loss[i:])).sum())
        return self._q_inf + s + (q.size + 6) * _U * (self._q_inf + float(q.sum()))

    def epsilon(self, delta: Any) -> Any:
        d = np.atleast_1d(np.asarray(delta, dtype=float))
        i0 = self._start(float(np.max(d)))
        if d.size == 1:
            e = self._epsilon_checked(float(d[0]), i0)
            if e is None:
                e = self._epsilon_window(float(d[0]), i0)
            if e is not None:
                return np.full(1, e) if np.ndim(delta) else e
        out = np.maximum(self._pr(i0).epsilon(d), 0.0)
        return out if np.ndim(delta) else float(out[0])

    def _epsilon_checked(self, delta: float, i0: int) -> float | None:
        """ε(δ) from suffix sums of the masses above ``i0``, certified by a bound checked at
        the answer. On [ℓ_{j−1}, ℓ_j) the measure's δ(ε) = q_∞ + A_j − e^ε B_j with
        A_j = Σ_{i≥j} q_i and B_j = Σ_{i≥j} q_i e^{−ℓ_i} (masses nonnegative). Both sums are
        bounded from their computed values: recursive summation of m nonnegative terms is within
        γ_{m−1} of the sum (Higham 2002, §4.2), each e^{−ℓ_i} and product within 2u, so
        A_j ≤ Â_j (1 + 1.01 (m + 2)u) and B_j ≥ B̂_j (1 − 1.01 (m + 4)u); e^ε is within 2u and
        the two final operations within 2u of their magnitudes. So
        D(ε) = q_∞ + Â_j(1 + ·) − e^ε(1 − 2u) B̂_j(1 − ·), plus 4u times the magnitudes, is an
        upper bound on δ(ε) (less (m + 1) times the least subnormal inside B̂, for products
        that are subnormal), and D(ε) ≤ δ means ε(δ) ≤ ε (δ(·) is non-increasing). The
        answer solves q_∞ + Â_j − e^ε B̂_j = δ′ on the segment where that crosses (found by
        bisection on j), δ′ being δ less the bound's allowance there, and is then checked;
        four times the margin on a second try. None where both fail, or the answer lies at or
        below loss[i0] (the profile answers). Cancellation in A − e^ε B costs the bound about
        (m + 4)u (A + e^ε B), within 1e-9 of δ where A ≲ 10⁴ δ. A per-epoch query of the
        MNIST schedule: 0.15 ms instead of the merged window's 0.5 ms."""
        q, loss = self._q[i0:], self._loss[i0:]
        m = q.size
        tail = self._q_tail
        if m < 2 or tail is None or not 0.0 < delta < 1.0 or float(loss[-1]) >= 700.0:
            return None  # (losses ≥ 700: e^ε would overflow; the profile answers)
        qi = self._q_inf
        a = tail[i0:]  # q_∞ + Σ_{i≥j} q_i as computed (m + 1 entries, the last q_∞)
        with np.errstate(under="ignore"):
            b = np.cumsum((q * np.exp(-loss))[::-1])[::-1]  # B̂_j
        up_a = 1.0 + 1.01 * (m + 3) * _U
        lo_b = 1.0 - 1.01 * (m + 4) * _U - 2.0 * _U
        # (e^{−ℓ} > e^{−700} is a normal number; a product q e^{−ℓ} may be subnormal, off by
        # up to half the least subnormal each: charged absolutely)
        lo_abs = (m + 1) * TINY

        def bound(eps: float, k: int) -> float:
            """D(ε) for ε in [ℓ_{k−1}, ℓ_k) (k = m: only q_∞ above)."""
            if k >= m:
                return qi * (1.0 + 2.0 * _U)
            ee = math.exp(eps) * (1.0 - 2.0 * _U)
            big = float(a[k]) * up_a
            sub = ee * max(float(b[k]) * lo_b - lo_abs, 0.0)
            return (big - sub) + 4.0 * _U * (big + sub)

        def delta_at(k: int) -> float:  # q_∞ + Â − e^ℓ B̂ at the grid loss ℓ_k (masses above)
            return float(a[k + 1]) - math.exp(min(float(loss[k]), 700.0)) * (
                float(b[k + 1]) if k + 1 < m else 0.0)

        def crossing(target: float) -> int:
            """The least j in [0, m) with δ(ℓ_j) ≤ target (m if none), by bisection."""
            lo, hi = 0, m
            while lo < hi:
                mid = (lo + hi) // 2
                if delta_at(mid) <= target:
                    hi = mid
                else:
                    lo = mid + 1
            return lo

        j = crossing(delta)
        if j == 0 or j >= m:  # (at or below loss[i0], or above the last loss)
            return None
        allow = 1.01 * (m + 8) * _U * 2.0 * float(a[j]) + 1e-13 * delta
        for margin in (allow, 4.0 * allow):
            target = delta - margin
            if not target > qi:
                return None
            j = crossing(target)
            if j == 0 or j >= m:
                return None
            # ε on [ℓ_{j−1}, ℓ_j]: q_∞ + Â_j − e^ε B̂_j = target (Â_j holds q_∞)
            num = float(a[j]) - target
            if float(b[j]) > 0.0 and num > 0.0:
                eps = math.log(num / float(b[j]))
                eps = min(max(eps, float(loss[j - 1])), float(loss[j]))
            else:
                eps = float(loss[j])
            eps = math.nextafter(eps, math.inf)
            k = int(np.searchsorted(loss, eps, side="right"))  # first loss above ε
            if bound(eps, k) <= delta:
                return max(eps, 0.0)
        return None

    def _epsilon_window(self, delta: float, i0: int) -> float | None:
        """ε(δ) from the masses between the start ``i0`` and the first grid loss ℓ_k at which
        the Q-mass above, an upper bound on δ(ℓ_k), is below δ (so ε(δ) ≤ ℓ_k), with every mass
        above ℓ_k merged into one outcome (their Q- and P-masses summed). Merging outcomes is
        post-processing; it leaves δ(ε) = Σ_{ℓ_j > ε} (q_j − e^ε p_j) unchanged at every
        ε ≤ ℓ_k, below all the merged losses, which is where the answer lies. The merged loss
        log(Q/P) is rounded up and P down (δ up, on the certified side). On the MNIST schedule
        the profile then holds ~10³ masses instead of ~5·10⁴ (a per-epoch query was 4 ms of
        profile). None where that saves little (the full profile answers)."""
        n = self._q.size
        tail = self._q_tail
        if tail is None:  # pragma: no cover - _start builds it
            return None
        thr = delta * (1.0 - 1e-6)
        # k: the least index ≥ i0 with Q-mass above ℓ_k (indices > k, and q_∞) at most thr
        k = max(int(np.searchsorted(-tail, -thr, side="left")) - 1, i0)
        if k - i0 < 64 or n - k < 1024:
            return None
        from .tradeoff import _merged_window

        prof = _merged_window(self._q[k + 1:], self._loss[k + 1:], self._q[i0: k + 1][::-1],
                              self._loss[i0: k + 1][::-1], self._q_inf)
        if prof is None:
            return None
        e = float(prof.epsilon(np.array([delta]))[0])
        if not (math.isfinite(e) and e <= self._loss[k]):  # (outside the window: the full one)
            return None
        return max(e, 0.0)

    def delta(self, eps: Any) -> Any:
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        lo = float(np.min(e)) if e.size else 0.0
        i0 = max(int(np.searchsorted(self._loss, lo, side="right")) - 1, 0)
        out = np.clip(self._pr(i0).delta(e), 0.0, 1.0)
        return out if np.ndim(eps) else float(out[0])


class _Direction:
    """One direction of a composition on the fast path: its step grids, and its profiles
    (:func:`_fast_power`) untilted and tilted for the queries asked, built on first use (a few
    kept). A query at δ tilts at the Chernoff point of the ε that bounds δ, a query at ε at
    that ε's (:func:`chernoff_theta`), so that the round-off stays small next to the answer."""

    def __init__(self, grids: list[tuple[_StepGrid, int]], step: float,
                 window_tail: float = _WINDOW_TAIL) -> None:
        self.grids, self.step, self.window_tail = grids, step, window_tail
        self._curves: dict[float, _MassCurve] = {}

    def curve(self, theta: float = 0.0) -> _MassCurve:
        hit = self._curves.get(theta)
        if hit is None:
            hit = _fast_power(self.grids, self.step, theta, self.window_tail)[0]
            if len(self._curves) >= 3:  # (keep the untilted one, drop the oldest tilt)
                old = next((k for k in self._curves if k != 0.0), None)
                if old is not None:
                    del self._curves[old]
            self._curves[theta] = hit
        return hit

    def theta_for_delta(self, delta: float) -> float:
        """The θ of the Chernoff bound ε_C(δ) = min_θ (Σ n log M(θ) − log δ)/θ (0 if none is
        positive): the composed measure tilted by it is centred near ε_C ≥ ε(δ)."""
        lm = sum(n * g.lm_up for g, n in self.grids)
        with np.errstate(divide="ignore"):
            e = (lm - math.log(max(delta, 1e-300))) / _T_GRID
        i = int(np.argmin(e))
        return float(_T_GRID[i]) if e[i] > 0.0 else 0.0

    def theta_for_eps(self, eps: float) -> float:
        return chernoff_theta(self.grids, eps)


"""Independent references for the reference suite, in mpmath at 60 significant digits.

Nothing in this module imports fdp. Every reference is computed from first principles (docs/theory.rst):

- Discrete pairs (P, Q) are lists of outcomes ``(loss, p, q)`` with loss = log(q/p) ∈ ℝ ∪ {±∞}.
  Products are formed exactly by convolving outcome masses (multinomial types for repeats, a
  binomial recurrence for long binary repeats), losses add.
- A discrete pair becomes an exact piecewise-linear curve :class:`PL` by Neyman–Pearson: outcomes
  in decreasing loss order, α = cumulative P-mass, β = 1 − cumulative Q-mass. Every breakpoint is
  stored with both complements (1 − α and 1 − β, as sums from the other end), so tails keep their
  relative precision. δ(ε) = max_k (1 − β_k − e^ε α_k) over breakpoints (theory §3), and
  ε(δ) = max(0, max_k log((1 − β_k − δ)/α_k)): both exact formulas for a piecewise-linear curve.
- Inverse (swap the coordinates), mixtures p f + (1 − p) Id, the lower convex hull min{f, g}**,
  C_p(f) = min{f_p, f_p⁻¹}**, symmetrization min{f, f⁻¹}**, Poisson add/remove pairs and group
  privacy 1 − (1 − f)^{∘k} (evaluated by composing the curve with itself) are built on PL curves.
- G_μ: Φ(Φ⁻¹(1 − α) − μ) and δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (valid for all real ε).
- L_μ: the closed forms (theory §2), δ(ε) for all real ε: 1 − e^ε (ε ≤ −μ), 1 − e^{(ε−μ)/2}
  (|ε| < μ), 0 (ε ≥ μ).
- Compositions with Laplace factors: δ_{L ⊗ R}(ε) = E_Q[δ_R(ε − L)] over the Laplace loss under Q
  (atoms at ±μ and a density on (−μ, μ)), integrated by mpmath quadrature split at the kinks.
- For references known only through δ(ε), β(α) = sup_ε (1 − δ(ε) − e^ε α) (convex duality),
  maximized by golden section in y = e^ε where the objective is concave.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
from mpmath import MPContext
from scipy.special import ndtri

mp = MPContext()
mp.dps = 60

INF = mp.inf
ZERO = mp.mpf(0)
ONE = mp.mpf(1)


def M(x: object) -> object:
    """Exact conversion of a float (or int/str) to an mpf of this context."""
    if isinstance(x, (float, np.floating)):
        x = float(x)
        if math.isinf(x):
            return INF if x > 0 else -INF
    return mp.mpf(x)


def float_below(a: object) -> float:
    """The largest float ≤ a (an mpmath number): a query just at or below an exact atom."""
    f = float(a)
    return f if M(f) <= a else math.nextafter(f, 0.0)


# ============================================================================ discrete pairs
Outcome = tuple  # (loss, p, q)


def _loss(p: object, q: object) -> object:
    if p == 0:
        return INF
    if q == 0:
        return -INF
    return mp.log(q) - mp.log(p)


def merge(outcomes: Sequence[Outcome]) -> list[Outcome]:
    """Sort by loss (descending) and merge outcomes with exactly equal loss; drop empty ones."""
    out: list[Outcome] = []
    for l, p, q in sorted(outcomes, key=lambda o: o[0], reverse=True):
        if p == 0 and q == 0:
            continue
        if out and out[-1][0] == l:
            out[-1] = (l, out[-1][1] + p, out[-1][2] + q)
        else:
            out.append((l, p, q))
    return out


def dist(p: Sequence[float], q: Sequence[float], normalize: bool = True) -> list[Outcome]:
    """The pair (P, Q) from probability vectors (floats converted exactly, normalized in mp)."""
    P = [M(x) for x in p]
    Q = [M(x) for x in q]
    if normalize:
        sp, sq = mp.fsum(P), mp.fsum(Q)
        P = [x / sp for x in P]
        Q = [x / sq for x in Q]
    return merge([(_loss(a, b), a, b) for a, b in zip(P, Q, strict=False)])


def rr_dist(eps: float) -> list[Outcome]:
    """Binary randomized response f_{ε,0} = T(Bern(e^ε/(1+e^ε)), Bern(1/(1+e^ε))), exactly."""
    e = M(eps)
    s = 1 / (1 + mp.exp(-abs(e)))
    r = 1 - s  # exact (Sterbenz: s ≥ 1/2), so that the masses sum to exactly 1
    if e < 0:
        r, s = s, r
    return merge([(e, r, s), (-e, s, r)])


def eps_delta_dist(eps: float, delta: float) -> list[Outcome]:
    """f_{ε,δ} = f_{ε,0} ⊗ f_{0,δ} as a 4-outcome pair: a Q-atom δ at +∞, a P-atom δ at −∞."""
    d = M(delta)
    out = [(INF, ZERO, d), (-INF, d, ZERO)]
    # at 1500 digits, so that the masses sum to 1 to far below any δ (1 − 1e-300 is not a
    # 60-digit number): a zero of a group curve near α = 1 sits at 1 − δ·(…) exactly
    with mp.workdps(1500):
        if eps == 0:
            out.append((ZERO, 1 - d, 1 - d))
        else:
            (l1, p1, q1), (l2, p2, q2) = rr_dist(eps)
            a1, b1 = (1 - d) * p1, (1 - d) * q1
            out += [(l1, a1, b1), (l2, (1 - d) - a1, (1 - d) - b1)]
    return merge(out)


def product(*dists: Sequence[Outcome]) -> list[Outcome]:
    """The product pair P₁×P₂×…, Q₁×Q₂×…: outcome masses multiply, losses add."""
    cur: list[Outcome] = [(ZERO, ONE, ONE)]
    for d in dists:
        nxt = []
        for l1, p1, q1 in cur:
            for l2, p2, q2 in d:
                p, q = p1 * p2, q1 * q2
                if p == 0 and q == 0:
                    continue
                if p == 0:
                    l = INF
                elif q == 0:
                    l = -INF
                else:
                    l = l1 + l2
                nxt.append((l, p, q))
        cur = merge(nxt)
    return cur


def power(d: Sequence[Outcome], n: int) -> list[Outcome]:
    """The n-fold product of a pair, by multinomial types (exact integer coefficients)."""
    d = list(d)
    if n == 0:
        return [(ZERO, ONE, ONE)]
    k = len(d)
    if k == 1:
        l, p, q = d[0]
        return [(l * n if mp.isfinite(l) else l, p**n, q**n)]
    if k == 2 and n > 60:
        return _binomial_power(d, n)
    powp = [[ONE] for _ in range(k)]
    powq = [[ONE] for _ in range(k)]
    for i, (_, p, q) in enumerate(d):
        for _ in range(n):
            powp[i].append(powp[i][-1] * p)
            powq[i].append(powq[i][-1] * q)
    out = []
    fact = [math.factorial(j) for j in range(n + 1)]
    for cuts in itertools.combinations(range(n + k - 1), k - 1):
        counts = []
        prev = -1
        for c in cuts:
            counts.append(c - prev - 1)
            prev = c
        counts.append(n + k - 2 - prev)
        coef = fact[n]
        for c in counts:
            coef //= fact[c]
        p = mp.mpf(coef)
        q = mp.mpf(coef)
        for i, c in enumerate(counts):
            p *= powp[i][c]
            q *= powq[i][c]
        if p == 0 and q == 0:
            continue
        if p == 0:
            l = INF
        elif q == 0:
            l = -INF
        else:
            l = mp.fsum(c * d[i][0] for i, c in enumerate(counts) if c)
        out.append((l, p, q))
    return merge(out)


def _binomial_power(d: Sequence[Outcome], n: int) -> list[Outcome]:
    (l0, p0, q0), (l1, p1, q1) = d
    if min(p0, p1, q0, q1) == 0:  # rare: fall back to direct powers
        out = []
        c = ONE
        for j in range(n + 1):
            p = c * p0**j * p1 ** (n - j)
            q = c * q0**j * q1 ** (n - j)
            out.append((_loss(p, q), p, q))
            c = c * (n - j) / (j + 1)
        return merge(out)
    # masses by the recurrence m_{j+1} = m_j (n − j)/(j + 1) (p0/p1), from m_0 = p1^n
    rp, rq = p0 / p1, q0 / q1
    p, q = p1**n, q1**n
    out = []
    for j in range(n + 1):
        out.append((j * l0 + (n - j) * l1, p, q))
        f = mp.mpf(n - j) / (j + 1)
        p = p * f * rp
        q = q * f * rq
    return merge(out)


def binomial_rr_product(spec: Sequence[tuple[float, int]]) -> list[Outcome]:
    """rr(ε₁)^{⊗n₁} ⊗ rr(ε₂)^{⊗n₂} ⊗ …: products of binomial sums (KOV Thm 3.3 for each)."""
    return product(*[power(rr_dist(e), n) for e, n in spec])


# ============================================================================ PL curves
class PL:
    """An exact piecewise-linear trade-off curve in mp, stored as masses (never as differences).

    ``pos`` is the Q-atom at loss +∞ (so f(0) = 1 − pos); segment k, in decreasing loss order,
    carries P-mass dp[k] and Q-mass dq[k] (a segment with dq = 0 is P-mass at loss −∞).
    Breakpoints k = 0..m are cumulative sums of the masses: A[k] (P-mass before k, from the top),
    Ac[k] = 1 − A[k] (from the bottom), B[k] = f(A[k]) (Q-mass after k, from the bottom) and
    Bc[k] = 1 − B[k] (pos plus Q-mass before k). Every coordinate is a sum of positive terms, so
    tiny masses keep their full relative precision wherever they sit on the curve.
    """

    def __init__(self, pos, segs, losses=None):  # noqa: ANN001
        self.pos = pos
        segs = [(p, q) for p, q in segs if p > 0 or q > 0]
        self.dp = [p for p, _ in segs]
        self.dq = [q for _, q in segs]
        self._loss = None if losses is None else list(losses)
        m = len(segs)
        A, Bc = [ZERO], [pos]
        for p, q in segs:
            A.append(A[-1] + p)
            Bc.append(Bc[-1] + q)
        Ac, B = [ZERO] * (m + 1), [ZERO] * (m + 1)
        for k in range(m - 1, -1, -1):
            Ac[k] = Ac[k + 1] + segs[k][0]
            B[k] = B[k + 1] + segs[k][1]
        self.A, self.Ac, self.B, self.Bc = A, Ac, B, Bc

    @property
    def loss(self) -> list:
        """Segment losses log(dq/dp) (computed on first use)."""
        if self._loss is None:
            self._loss = [_loss(p, q) for p, q in zip(self.dp, self.dq, strict=False)]
        return self._loss

    @property
    def _negloss(self) -> list:
        if "_nl" not in self.__dict__:
            self.__dict__["_nl"] = [-x for x in self.loss]
        return self.__dict__["_nl"]

    def preimage(self, y: object) -> object:
        """inf{t : f(t) ≤ y} (the inverse curve at y), by interpolation on the segment."""
        y = M(y)
        if y >= self.B[0]:
            return ZERO
        # first breakpoint k + 1 with B[k + 1] ≤ y (B is non-increasing)
        lo, hi = 0, len(self.B) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if self.B[mid + 1] <= y:
                hi = mid
            else:
                lo = mid + 1
        k = lo
        return self.A[k] + self.dp[k] * (self.B[k] - y) / self.dq[k]

    # ---------------------------------------------------------------- constructors
    @classmethod
    def from_dist(cls, d: Sequence[Outcome]) -> PL:
        """Neyman–Pearson curve of a pair: outcomes in decreasing loss order."""
        d = merge(d)
        pos = mp.fsum(q for l, p, q in d if l == INF)
        fin = [(l, p, q) for l, p, q in d if l != INF]
        return cls(pos, [(p, q) for _, p, q in fin], [l for l, _, _ in fin])

    def to_dist(self) -> list[Outcome]:
        """The pair whose Neyman–Pearson curve this is."""
        out = [(INF, ZERO, self.pos)] if self.pos > 0 else []
        out += [(l, p, q) for l, p, q in zip(self.loss, self.dp, self.dq, strict=False)]
        return merge(out)

    def points(self) -> list[tuple]:
        return list(zip(self.A, self.Ac, self.B, self.Bc, strict=False))

    # ---------------------------------------------------------------- evaluation
    def beta2(self, alpha: object) -> tuple:
        """(f(α), 1 − f(α))."""
        a = M(alpha)
        if a <= 0:
            return self.B[0], self.Bc[0]
        if a >= 1:
            return self.B[-1], self.Bc[-1]
        k = bisect.bisect_right(self.A, a) - 1
        k = min(max(k, 0), len(self.A) - 2)
        if a > 0.5:
            t = (self.Ac[k] - (1 - a)) / self.dp[k]
        else:
            t = (a - self.A[k]) / self.dp[k]
        t = min(max(t, ZERO), ONE)
        return self.B[k] - self.dq[k] * t, self.Bc[k] + self.dq[k] * t

    def beta(self, alpha: object) -> object:
        return self.beta2(alpha)[0]

    def delta(self, eps: object) -> object:
        """δ(ε) = max_k (1 − β_k − e^ε α_k), any real ε (theory §3); the maximum sits at the
        breakpoint after the segments with loss > ε."""
        e = M(eps)
        if e == INF:
            return self.pos
        if e == -INF:
            return ONE
        x = mp.exp(e)
        k = bisect.bisect_left(self._negloss, -e)  # number of segments with loss > ε
        best = ZERO
        for j in range(max(k - 2, 0), min(k + 3, len(self.A))):
            v = self.Bc[j] - x * self.A[j]
            if v > best:
                best = v
        return best

    def qtail(self, eps: object) -> object:
        """Q[L > ε]: the magnitude of the terms summed in δ(ε) (a float-rounding scale)."""
        e = M(eps)
        if e == INF:
            return self.pos
        k = bisect.bisect_left(self._negloss, -e)
        return self.Bc[min(k, len(self.Bc) - 1)]

    def epsilon(self, delta: object) -> object:
        """The smallest ε ≥ 0 with δ(ε) ≤ delta: max(0, max_k log((1 − β_k − δ)/α_k))."""
        d = M(delta)
        cache = self.__dict__.setdefault("_eps_cache", {})
        if d not in cache:
            cache[d] = self._epsilon(d)
        return cache[d]

    def _epsilon(self, d: object) -> object:
        if self.pos > d:
            return INF
        best = ONE
        for a, bc in zip(self.A, self.Bc, strict=False):
            if bc > d and a > 0:
                r = (bc - d) / a
                if r > best:
                    best = r
        return mp.log(best)

    def max_loss(self) -> float:
        fin = [l for l in self.loss if mp.isfinite(l)]
        return float(max(fin)) if fin else 0.0

    def atoms(self) -> list[float]:
        return [float(l) for l in self.loss if mp.isfinite(l)]

    # ---------------------------------------------------------------- operations
    def inverse(self) -> PL:
        """f⁻¹ = T(Q, P): swap the masses of every outcome (losses change sign)."""
        return PL.from_dist([(-l, q, p) for l, p, q in self.to_dist()])

    def mixture(self, p: float) -> PL:
        """f_p = p f + (1 − p) Id = T(P, (1 − p)P + pQ), outcome by outcome."""
        w = M(p)
        with mp.workdps(1500):  # exact for 60-digit inputs: the masses still sum to 1 exactly
            return PL.from_dist([(_loss(a, (1 - w) * a + w * b), a, (1 - w) * a + w * b)
                                 for _, a, b in self.to_dist()])

    def group(self, k: int) -> PL:
        """1 − (1 − f)^{∘k}: g₁ = f, g_j(α) = f(1 − g_{j−1}(α)), evaluated directly at the
        breakpoints of g_{j−1} and the preimages of f's breakpoints. The new curve's masses are
        differences of evaluated points, so this runs at 1500 digits (exact to far below any
        mass in the suite)."""
        with mp.workdps(1500):
            # the breakpoints again at 1500 digits, so that A + Ac = 1 and B + Bc = 1 hold to
            # that precision (at 15 digits the two sums differ by an ulp, which a chain of
            # preimages near α = 1 turns into spurious tiny values of β)
            f = g = PL(self.pos, list(zip(self.dp, self.dq, strict=False)), self._loss)
            for _ in range(k - 1):
                xs = set(g.A)
                for ac in f.Ac:  # 1 − g(α) = A_i(f)  ⇔  g(α) = Ac_i
                    if ac <= g.B[0]:
                        xs.add(g.preimage(ac))
                xs = sorted(xs)
                vals = []
                tiny = mp.mpf(10) ** -1400  # rounding of this 1500-digit computation
                for x in xs:
                    _, gc = g.beta2(x)
                    v, vc = f.beta2(gc)
                    if abs(v) < tiny:  # a zero of f reached through a computed preimage
                        v, vc = ZERO, ONE
                    vals.append((v, vc))
                pos = vals[0][1]
                segs = []
                for i in range(len(xs) - 1):
                    dp, dq = xs[i + 1] - xs[i], vals[i][0] - vals[i + 1][0]
                    if dp < tiny and dq < tiny:  # a rounding residue of this computation
                        continue
                    segs.append((dp, dq))
                g = PL(pos, segs)
        return PL(+g.pos, [(+p, +q) for p, q in zip(g.dp, g.dq, strict=False)])


def hull(*curves: PL) -> PL:
    """min{f, g, …}**: the lower convex hull of all breakpoints (the convex envelope of a min of
    convex piecewise-linear functions is the hull of their breakpoints). A hull edge between two
    breakpoints of the same curve carries the sum of that curve's masses in between; an edge
    bridging two curves takes coordinate differences (from the end where they are small).

    Runs at 1500 digits, with every curve's breakpoints rebuilt there, so that points 1e-302
    apart next to α = 1 (a tiny atom at loss −∞) stay apart."""
    with mp.workdps(1500):
        out = _hull([PL(c.pos, list(zip(c.dp, c.dq, strict=False))) for c in curves])
    return PL(+out.pos, [(+p, +q) for p, q in zip(out.dp, out.dq, strict=False)])


def _hull(curves: list[PL]) -> PL:
    pts = []
    for ci, c in enumerate(curves):
        for k, (a, ac, b, bc) in enumerate(c.points()):
            pts.append((a, b, ac, bc, ci, k))
    pts.sort(key=lambda t: (t[0], t[1]))
    uniq: list[tuple] = []
    for t in pts:
        if uniq and uniq[-1][0] == t[0]:
            continue
        uniq.append(t)
    lo: list[tuple] = []
    for t in uniq:
        while len(lo) >= 2:
            o, a = lo[-2], lo[-1]
            cross = (a[0] - o[0]) * (t[1] - o[1]) - (a[1] - o[1]) * (t[0] - o[0])
            if cross <= 0:
                lo.pop()
            else:
                break
        lo.append(t)
    segs = []
    for u, v in zip(lo[:-1], lo[1:], strict=False):
        if u[4] == v[4]:
            c = curves[u[4]]
            segs.append((mp.fsum(c.dp[u[5]:v[5]]), mp.fsum(c.dq[u[5]:v[5]])))
        else:
            dp = v[0] - u[0] if v[0] <= 0.5 else u[2] - v[2]
            dq = v[3] - u[3] if v[3] <= 0.5 else u[1] - v[1]
            segs.append((dp, dq))
    return PL(lo[0][3], segs)


def symmetrize(f: PL) -> PL:
    """min{f, f⁻¹}** (the one-sided-guarantee symmetrization, theory §6)."""
    return hull(f, f.inverse())


def subsample(f: PL, p: float) -> PL:
    """C_p(f) = min{f_p, f_p⁻¹}** (theory §7)."""
    fp = f.mixture(p)
    return hull(fp, fp.inverse())


def poisson(f: PL, p: float) -> tuple[PL, PL, PL]:
    """Poisson subsampling: add = p f + (1−p) Id, remove = (p f⁻¹ + (1−p) Id)⁻¹, and
    the symmetric guarantee min{add, add⁻¹, remove, remove⁻¹}**."""
    add = f.mixture(p)
    rem = f.inverse().mixture(p).inverse()
    return add, rem, hull(add, add.inverse(), rem, rem.inverse())


# ============================================================================ Gaussian
def ninv(a: object) -> object:
    """Φ⁻¹(a) in mp: Newton's method on log Φ(z) = log a (log Φ is concave, so the iteration is
    monotone and safe deep in the tail), from the asymptotic start −√(−2 log a)."""
    a = M(a)
    if a > 0.5:
        return -ninv(1 - a)
    if a == 0.5:
        return ZERO
    la = mp.log(a)
    z = mp.mpf(float(ndtri(float(a)))) if float(a) > 1e-300 else -mp.sqrt(-2 * la)
    for _ in range(200):
        c = mp.ncdf(z)
        dz = (mp.log(c) - la) * c / mp.npdf(z)
        z -= dz
        if abs(dz) < mp.mpf(10) ** -55 * max(1, abs(z)):
            break
    return z


def solve_decreasing(fn: Callable, target: object, lo: object, hi: object, tol: float = 1e-40):
    """Smallest x in [lo, hi] with fn(x) ≤ target for a continuous non-increasing fn: the Illinois
    variant of regula falsi on g = log fn − log target inside the bracket, with a bisection step
    every third iteration (so the bracket always shrinks). Returns the upper end of the bracket,
    where fn ≤ target holds."""
    t = M(target)
    lo, hi = M(lo), M(hi)
    flo, fhi = fn(lo), fn(hi)
    if flo <= t:
        return lo
    assert fhi <= t, "root not bracketed"

    def g(v):  # noqa: ANN001, ANN202
        if t <= 0:
            return v - t
        return mp.log(v) - mp.log(t) if v > 0 else -mp.mpf(10) ** 4

    glo, ghi = g(flo), g(fhi)
    last = 0
    for it in range(600):
        if hi - lo <= mp.mpf(tol) * max(ONE, abs(hi)):
            break
        if it % 3 == 2 or glo == ghi:
            mid = (lo + hi) / 2
        else:
            mid = lo + (hi - lo) * glo / (glo - ghi)
            if not lo < mid < hi:
                mid = (lo + hi) / 2
        fm = fn(mid)
        gm = g(fm)
        if fm > t:
            lo, glo = mid, gm
            if last == 1:
                ghi /= 2
            last = 1
        else:
            hi, ghi = mid, gm
            if last == -1:
                glo /= 2
            last = -1
    return hi


class GaussRef:
    """G_μ = T(N(0,1), N(μ,1))."""

    def __init__(self, mu: object) -> None:
        self.mu = M(mu)

    def beta(self, alpha: object) -> object:
        a = M(alpha)
        if a <= 0:
            return ONE
        if a >= 1:
            return ZERO
        if self.mu == 0:
            return 1 - a
        return mp.ncdf(-ninv(a) - self.mu)

    def betac(self, alpha: object) -> object:
        """1 − G_μ(α) = Φ(Φ⁻¹(α) + μ), accurate when G_μ(α) is close to 1."""
        a = M(alpha)
        if a <= 0:
            return ZERO
        if a >= 1:
            return ONE
        return mp.ncdf(ninv(a) + self.mu)

    def delta(self, eps: object) -> object:
        e = M(eps)
        mu = self.mu
        if e == INF:
            return ZERO
        if e == -INF:
            return ONE
        if mu == 0:
            return max(ZERO, 1 - mp.exp(e))
        return max(ZERO, mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2))

    def qtail(self, eps: object) -> object:
        e = M(eps)
        if e == INF or self.mu == 0:
            return ZERO
        return mp.ncdf(-e / self.mu + self.mu / 2)

    def epsilon(self, delta: object) -> object:
        d = M(delta)
        if d >= self.delta(0):
            return ZERO
        if d <= 0:
            return INF
        hi = mp.mpf(1)
        while self.delta(hi) > d:
            hi *= 2
        return solve_decreasing(self.delta, d, ZERO, hi)

    def inverse(self) -> GaussRef:
        return self

    def eps_grid(self) -> list[float]:
        mu = float(self.mu)
        top = mu * 38.0 + mu * mu / 2.0
        return sorted({-1.0, -0.1, 0.0, 1e-3, *np.linspace(0.0, top, 18).tolist(), 2 * top, math.inf})


class SubsampledSymRef:
    """C_p(f) = min{f_p, f_p⁻¹}** for a symmetric, strictly convex-at-x* reference f (G_μ, L_μ),
    f_p = p f + (1 − p) Id. f is symmetric, so f_p⁻¹ is the reflection of f_p in the diagonal and
    the convex envelope is f_p up to the point x* where f_p' = −1 (⇔ f'(x*) = −1), the line of
    slope −1, then f_p⁻¹ (theory §7). For G_μ, x* = Φ(−μ/2); for L_μ, x* = e^{−μ/2}/2.
    For ε ≥ 0 the sup defining δ(ε) lies on the f_p part, whose loss is log(1 − p + p e^L):
    δ(ε) = p δ_f(log(1 + (e^ε − 1)/p))."""

    def __init__(self, base: object, p: float, xstar: object) -> None:
        self.g = base
        self.p = M(p)
        self.xs = xstar
        self.ys = self._fp(self.xs)

    def _fp(self, a: object) -> object:
        return self.p * self.g.beta(a) + (1 - self.p) * (1 - a)

    def _fp_inv(self, b: object) -> object:
        """f_p⁻¹(b) for the strictly decreasing f_p (regula falsi inside a bracket)."""
        b = M(b)
        if b >= self._fp(ZERO):
            return ZERO
        # in u = log t, to a relative 1e-45 at every scale (near b = 1 the value is tiny: 6e-58
        # at b = 1 − 1e-12 for G_10, p = 0.001, where an absolute tolerance of 1e-50 is none)
        lo = mp.log(mp.mpf(10) ** -600)
        if self._fp(mp.exp(lo)) <= b:
            return solve_decreasing(self._fp, b, ZERO, mp.exp(lo), tol=1e-50)
        u = solve_decreasing(lambda v: self._fp(mp.exp(v)), b, lo, ZERO, tol=1e-47)
        return mp.exp(u)

    def beta(self, alpha: object) -> object:
        a = M(alpha)
        if a <= self.xs:
            return self._fp(a)
        if a <= self.ys:
            return self.xs + self.ys - a
        return self._fp_inv(a)

    def delta(self, eps: object) -> object:
        e = M(eps)
        if e == INF:
            return ZERO
        if e < 0:  # symmetric: δ(−ε) = 1 − e^{−ε} + e^{−ε} δ(ε)
            return 1 - mp.exp(e) + mp.exp(e) * self.delta(-e)
        return self.p * self.g.delta(mp.log(1 + mp.expm1(e) / self.p))

    def qtail(self, eps: object) -> object:
        e = M(eps)
        if e < 0 or e == INF:
            return ONE if e < 0 else ZERO
        return self.p * self.g.qtail(mp.log(1 + mp.expm1(e) / self.p))

    def epsilon(self, delta: object) -> object:
        d = M(delta)
        if d >= self.delta(0):
            return ZERO
        ein = self.g.epsilon(d / self.p)
        if ein == INF:
            return INF
        return mp.log(1 + self.p * mp.expm1(ein))

    def inverse(self) -> SubsampledSymRef:
        return self

    def eps_grid(self) -> list[float]:
        return sorted({-0.5, *[float(x) for x in self.g.eps_grid() if x >= 0], math.inf})


def subsampled_gauss(mu: object, p: float) -> SubsampledSymRef:
    g = GaussRef(mu)
    return SubsampledSymRef(g, p, mp.ncdf(-g.mu / 2))


def subsampled_laplace(mu: object, p: float) -> SubsampledSymRef:
    lap = LaplaceRef(mu)
    return SubsampledSymRef(lap, p, mp.exp(-lap.mu / 2) / 2)


class DeltaMixRef:
    """f ⊗ f_{0,δ}: the product with the pair (0, 1−δ, δ) / (δ, 1−δ, 0): with Q-probability δ the
    loss is +∞, P-mass δ sits at −∞, otherwise f's pair scaled by 1 − δ. Hence
    β(α) = (1 − δ) f(α/(1 − δ)) on [0, 1 − δ] (0 beyond) and δ'(ε) = δ + (1 − δ) δ_f(ε)."""

    def __init__(self, base: object, delta: float) -> None:
        self.base = base
        self.d = M(delta)
        self.cheap_epsilon = isinstance(base, PL) or getattr(base, "cheap_epsilon", False)

    def beta(self, alpha: object) -> object:
        a = M(alpha)
        if a >= 1 - self.d:
            return ZERO
        return (1 - self.d) * self.base.beta(a / (1 - self.d))

    def delta(self, eps: object) -> object:
        return self.d + (1 - self.d) * self.base.delta(eps)

    def qtail(self, eps: object) -> object:
        return self.d + (1 - self.d) * self.base.qtail(eps)

    def epsilon(self, delta: object) -> object:
        x = M(delta)
        if x < self.d:
            return INF
        return self.base.epsilon((x - self.d) / (1 - self.d))

    def inverse(self) -> DeltaMixRef:
        return DeltaMixRef(self.base.inverse(), self.d)

    def eps_grid(self) -> list[float]:
        return self.base.eps_grid()


class MixtureRef:
    """p f + (1 − p) Id for a continuous reference f: loss L' = log(1 − p + p e^L), monotone in
    L, so for ε > log(1 − p): δ(ε) = p δ_f(log(1 + (e^ε − 1)/p)); 1 − e^ε below."""

    def __init__(self, base: object, p: float) -> None:
        self.base = base
        self.p = M(p)

    def beta(self, alpha: object) -> object:
        a = M(alpha)
        return self.p * self.base.beta(a) + (1 - self.p) * (1 - a)

    def _inner(self, e: object) -> object:
        return mp.log(1 + mp.expm1(e) / self.p)

    def delta(self, eps: object) -> object:
        e = M(eps)
        if e == INF:
            return self.p * self.base.delta(INF)
        if self.p < 1 and e <= mp.log(1 - self.p):
            return 1 - mp.exp(e)
        return self.p * self.base.delta(self._inner(e))

    def qtail(self, eps: object) -> object:
        e = M(eps)
        if e == INF:
            return self.delta(e)
        if self.p < 1 and e <= mp.log(1 - self.p):
            return ONE
        return self.p * self.base.qtail(self._inner(e))

    def epsilon(self, delta: object) -> object:
        d = M(delta)
        if d >= self.delta(0):
            return ZERO
        ein = self.base.epsilon(min(d / self.p, ONE))
        if ein == INF:
            return INF
        return mp.log(1 + self.p * mp.expm1(ein))

    def eps_grid(self) -> list[float]:
        return self.base.eps_grid()


# ============================================================================ Laplace
def laplace_power_delta(mu: object, n: int, eps: object) -> object:
    """δ(ε) of L_μ^{⊗n} by inverting the privacy-loss MGF along the line Re s = c (theory §3–§4):
    δ(ε) = (1/π) ∫₀^∞ Re[M(c + iy)ⁿ e^{−(c+iy)ε} / ((c + iy)(c + iy + 1))] dy with M(s) =
    E_P[e^{sL}] for one step (L = μ w.p. ½, −μ w.p. e^{−μ}/2, density e^{(l−μ)/2}/4 on
    (−μ, μ)) and c the saddle point (n (log M)'(c) = ε). The atoms at ±μ make |M(c + iy)|
    revive at y = kπ/μ with amplitude about (1 − μ/2)ⁿ relative: those bumps are added one
    period at a time (alternating, ~1/k²) and the tail's last two partial sums averaged (a
    window around y = 0 alone was 0.2–3 % off at μ = 0.01, n = 50–400). 30 digits. Where the
    bumps hardly decay ((1 − μ/2)ⁿ near 1: μ = 0.012, n = 12) the averaged tail is still
    ~1e-4 off (an exact sum over the atoms' counts with Irwin–Hall densities said so); the
    tests use it where nμ/2 > 60 (no revivals)."""
    with mp.workdps(30):
        m, e = M(mu), M(eps)

        def logm(s: object) -> object:
            cont = (mp.exp(-m / 2) * (mp.exp((s + 0.5) * m) - mp.exp(-(s + 0.5) * m))
                    / (4 * (s + 0.5)))
            return mp.log(mp.exp(s * m) / 2 + mp.exp(-m * (1 + s)) / 2 + cont)

        def k(s: object) -> object:
            return n * logm(s)

        c = mp.re(mp.findroot(lambda s: mp.diff(k, s) - e, mp.mpf(0.5)))
        k0, k2 = mp.re(k(c)), mp.re(mp.diff(k, c, 2))

        def f(y: object) -> object:
            z = c + 1j * y
            return mp.re(mp.exp(k(z) - k0 - 1j * y * e) / (z * (z + 1)))

        period = mp.pi / m
        if n * m / 2 > 60:  # (revivals below e^{−nμ/2} of the main bump: none to add)
            total = prev = mp.quad(f, mp.linspace(0, 40 / mp.sqrt(k2), 9))
        else:
            base = mp.quad(f, mp.linspace(0, period / 2, 17))
            total = prev = base
            for j in range(1, 60):
                bump = mp.quad(f, mp.linspace((j - 0.5) * period, (j + 0.5) * period, 17))
                prev, total = total, total + bump
                if abs(bump) < 1e-10 * abs(base):
                    prev = total
                    break
        return mp.exp(k0 - c * e) * (total + prev) / 2 / mp.pi


class LaplaceRef:
    """L_μ = T(Lap(0,1), Lap(μ,1)) (theory §2)."""

    cheap_epsilon = True

    def __init__(self, mu: object) -> None:
        self.mu = M(mu)

    def beta(self, alpha: object) -> object:
        a, mu = M(alpha), self.mu
        if a <= 0:
            return ONE
        if a >= 1:
            return ZERO
        if a < mp.exp(-mu) / 2:
            return 1 - mp.exp(mu) * a
        if a <= 0.5:
            return mp.exp(-mu) / (4 * a)
        return mp.exp(-mu) * (1 - a)

    def betac(self, alpha: object) -> object:
        """1 − L_μ(α), accurate when L_μ(α) is close to 1."""
        a, mu = M(alpha), self.mu
        if a <= 0:
            return ZERO
        if a >= 1:
            return ONE
        if a < mp.exp(-mu) / 2:
            return mp.exp(mu) * a
        if a <= 0.5:
            return 1 - mp.exp(-mu) / (4 * a)
        return 1 - mp.exp(-mu) * (1 - a)

    def delta(self, eps: object) -> object:
        e, mu = M(eps), self.mu
        if e == INF:
            return ZERO
        if e == -INF:
            return ONE
        if e >= mu:
            return ZERO
        if e <= -mu:
            return 1 - mp.exp(e)
        return -mp.expm1((e - mu) / 2)

    def qtail(self, eps: object) -> object:
        return self._qt(M(eps))

    def _qt(self, e: object) -> object:
        # Q[L > ε]: atom μ (1/2) plus the density ¼ e^{(l−μ)/2} on (max(ε, −μ), μ)
        mu = self.mu
        if e >= mu:
            return ZERO
        if e == -INF:
            return ONE
        lo = max(e, -mu)
        return mp.mpf(1) / 2 + (1 - mp.exp((lo - mu) / 2)) / 2 + (mp.exp(-mu) / 2 if e < -mu else 0)

    def epsilon(self, delta: object) -> object:
        d, mu = M(delta), self.mu
        if d >= self.delta(0):
            return ZERO
        if d <= 0:
            return mu
        return mu + 2 * mp.log1p(-d)

    def inverse(self) -> LaplaceRef:
        return self

    def kinks(self) -> list:
        return [-self.mu, self.mu]

    def eps_grid(self) -> list[float]:
        mu = float(self.mu)
        return sorted({-mu - 1, -0.5 * mu, 0.0, *np.linspace(0, mu, 12).tolist(), mu, mu + 1, math.inf})


class LaplaceConvRef:
    """δ of L_{μ₁} ⊗ R for a reference R with δ_R known for every real argument:
    δ(ε) = E_Q[δ_R(ε − L)] with L the Laplace loss under Q = Lap(μ₁, 1):
    atom μ₁ (mass ½), atom −μ₁ (mass e^{−μ₁}/2), density ¼ e^{(l−μ₁)/2} on (−μ₁, μ₁).
    The integral is split at the kinks of δ_R(ε − ·) and done by tanh-sinh quadrature."""

    def __init__(self, mu1: object, rest: object) -> None:
        self.mu = M(mu1)
        self.rest = rest

    def kinks(self) -> list:
        rk = self.rest.kinks() if hasattr(self.rest, "kinks") else []
        return [k + s * self.mu for k in rk for s in (-1, 1)]

    def delta(self, eps: object) -> object:
        e, mu = M(eps), self.mu
        if e == INF:
            return ZERO
        if e == -INF:
            return ONE
        if isinstance(self.rest, LaplaceRef):
            return self._delta_ll(e)
        r = self.rest.delta
        atoms = r(e - mu) / 2 + mp.exp(-mu) / 2 * r(e + mu)
        pts = sorted({-mu, mu, *[e - k for k in (self.rest.kinks() if hasattr(self.rest, "kinks") else []) if -mu < e - k < mu]})

        def integrand(l):  # noqa: ANN001, ANN202
            return mp.exp((l - mu) / 2) / 4 * r(e - l)

        return max(ZERO, atoms + mp.quad(integrand, pts))

    def _delta_ll(self, e: object) -> object:
        """L_{μ₁} ⊗ L_{μ₂} in closed form: δ₂(t) is 0 (t ≥ μ₂), 1 − e^{(t−μ₂)/2} (|t| < μ₂),
        1 − e^t (t ≤ −μ₂); with t = ε − l the density integral splits into exponentials.
        Evaluated at 420 digits so that the cancellation 1 − e^{…} costs nothing down to δ ≈ 1e-350."""
        with mp.workdps(420):
            mu1, mu2 = self.mu, self.rest.mu
            r = self.rest.delta
            total = r(e - mu1) / 2 + mp.exp(-mu1) / 2 * r(e + mu1)
            c0 = mp.exp(-mu1 / 2) / 4
            # piece B: l ∈ (ε − μ₂, ε + μ₂) ∩ (−μ₁, μ₁): integrand c0 e^{l/2} (1 − e^{(ε−l−μ₂)/2})
            lo, hi = max(e - mu2, -mu1), min(e + mu2, mu1)
            if lo < hi:
                total += c0 * 2 * (mp.exp(hi / 2) - mp.exp(lo / 2))
                total -= c0 * mp.exp((e - mu2) / 2) * (hi - lo)
            # piece C: l ∈ [ε + μ₂, μ₁): integrand c0 e^{l/2} (1 − e^{ε − l})
            lo, hi = max(e + mu2, -mu1), mu1
            if lo < hi:
                total += c0 * 2 * (mp.exp(hi / 2) - mp.exp(lo / 2))
                total -= c0 * mp.exp(e) * 2 * (mp.exp(-lo / 2) - mp.exp(-hi / 2))
            out = max(ZERO, total)
        return +out

    def epsilon(self, delta: object) -> object:
        d = M(delta)
        if d >= self.delta(0):
            return ZERO
        top = self.max_loss()
        if d <= 0:
            return top if mp.isfinite(top) else INF
        hi = mp.mpf(1)
        while self.delta(hi) > d:
            hi *= 2
        return solve_decreasing(self.delta, d, ZERO, hi, tol=1e-25)

    def max_loss(self) -> object:
        rm = self.rest.max_loss() if hasattr(self.rest, "max_loss") else INF
        return self.mu + rm

    def beta(self, alpha: object) -> object:
        return beta_from_delta(self.delta, alpha, self._slope_range())

    def _slope_range(self) -> tuple:
        t = self.max_loss()
        if not mp.isfinite(t):
            t = mp.mpf(60)
        return (-t - 1, t + 1)


def _laplace_max_loss(self: LaplaceRef) -> object:
    return self.mu


LaplaceRef.max_loss = _laplace_max_loss  # type: ignore[attr-defined]


def delta_from_betac(betac: Callable, eps: object, iters: int = 170) -> object:
    """δ(ε) = sup_α (1 − e^ε α − f(α)) = sup_α ((1 − f(α)) − e^ε α), from an accurate complement
    1 − f. The objective is concave in α, hence unimodal in log α: a scan of log α ∈ [−750, 0]
    locates the maximum to within a grid cell, golden-section search refines it."""
    e = M(eps)
    x = mp.exp(e)

    def obj(t):  # noqa: ANN001, ANN202
        a = mp.exp(t)
        return betac(a) - x * a

    grid = [mp.mpf(-750) + 750 * mp.mpf(i) / 100 for i in range(101)]
    vals = [obj(t) for t in grid]
    i = max(range(len(grid)), key=lambda j: vals[j])
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    best = max(vals[i], betac(ZERO), 1 - x)
    g = (mp.sqrt(5) - 1) / 2
    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = obj(x1), obj(x2)
    for _ in range(iters):
        if f1 < f2:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + g * (hi - lo)
            f2 = obj(x2)
        else:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - g * (hi - lo)
            f1 = obj(x1)
        best = max(best, f1, f2)
    return max(best, ZERO)


class GroupRef:
    """1 − (1 − f)^{∘k} for a continuous reference f with an accurate complement 1 − f,
    evaluated pointwise by composing: with c₁ = 1 − f(α) and c_j = 1 − f(c_{j−1}), the group
    curve is g_k(α) = f(c_{k−1}) and its complement 1 − g_k(α) = c_k. δ(ε) = sup_α (c_k(α) − e^ε α)
    by :func:`delta_from_betac`; ε(δ) by root finding on δ."""

    def __init__(self, base: object, k: int, top: float) -> None:
        self.base, self.k, self.top = base, k, top

    def betac(self, alpha: object) -> object:
        c = self.base.betac(M(alpha))
        for _ in range(self.k - 1):
            c = self.base.betac(c)
        return c

    def beta(self, alpha: object) -> object:
        c = M(alpha)
        for _ in range(self.k - 1):
            c = self.base.betac(c)
        return self.base.beta(c)

    def delta(self, eps: object) -> object:
        e = M(eps)
        if e == INF:
            return self.betac(ZERO)
        return delta_from_betac(self.betac, e)

    def qtail(self, eps: object) -> object:
        return ONE

    def epsilon(self, delta: object) -> object:
        d = M(delta)
        if d >= self.delta(0):
            return ZERO
        if self.delta(INF) > d:
            return INF
        hi = mp.mpf(self.top)
        if self.delta(hi) > d:
            return INF
        return solve_decreasing(self.delta, d, ZERO, hi, tol=1e-22)

    def inverse(self) -> GroupRef:
        return self  # the group curve of a symmetric f is symmetric

    def eps_grid(self) -> list[float]:
        return sorted({0.0, *np.linspace(0, self.top, 8).tolist()})


def beta_from_delta(delta: Callable, alpha: object, log_y_range: tuple, iters: int = 140) -> object:
    """f(α) = sup_ε (1 − δ(ε) − e^ε α) (convex duality; the objective is concave in y = e^ε, so
    unimodal in ε): golden-section search on ε, then the best value seen."""
    a = M(alpha)
    if a <= 0:
        return 1 - delta(INF)
    if a >= 1:
        return ZERO
    lo, hi = M(log_y_range[0]), M(log_y_range[1])
    g = (mp.sqrt(5) - 1) / 2

    def obj(e):  # noqa: ANN001, ANN202
        return 1 - delta(e) - mp.exp(e) * a

    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = obj(x1), obj(x2)
    best = max(f1, f2, obj(lo), obj(hi))
    for _ in range(iters):
        if f1 < f2:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + g * (hi - lo)
            f2 = obj(x2)
        else:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - g * (hi - lo)
            f1 = obj(x1)
        best = max(best, f1, f2)
    return max(best, ZERO)


class Memo:
    """Caches a reference's values (the same reference is checked against several fdp curves)."""

    def __init__(self, ref: object) -> None:
        self.ref = ref
        self._c: dict = {}

    def _get(self, name: str, x: object) -> object:
        key = (name, mp.nstr(M(x), 40) if not isinstance(x, str) else x)
        if key not in self._c:
            self._c[key] = getattr(self.ref, name)(x)
        return self._c[key]

    def beta(self, a: object) -> object:
        return self._get("beta", a)

    def delta(self, e: object) -> object:
        return self._get("delta", e)

    def epsilon(self, d: object) -> object:
        return self._get("epsilon", d)

    def qtail(self, e: object) -> object:
        return self._get("qtail", e)

    def __getattr__(self, name: str) -> object:
        return getattr(self.ref, name)

"""Side checks of fdp curves against the independent references of :mod:`._ref`.

Tolerances (the only slack anywhere in the suite):

- exact curves (``kind == "exact"``): β within 1e-9·ref + 1e-15; δ(ε) within 1e-9·ref +
  η·Q[L > ε − η] + 1e-300 with η = 1e-14 + 1e-13·|ε| (float rounding of the atoms' locations:
  |dδ/dε| ≤ Q[L > ε]), plus 1e-16 absolute on the safe side (δ too large); ε(δ) no larger than
  the reference at δ(1 − 1e-9) plus 1e-9·max(1, ε), and never below the reference at δ(1 + 1e-9) minus 1e-15 + 1e-14·ε (the 1e-9 relative accuracy of
  δ carried over to ε; beyond that, reported ε may be rounded up, not down).
- bracketed curves (``kind == "bracket"``): ``lower(α) ≤ ref + 1e-15`` and ``upper(α) ≥ ref −
  1e-15``; conservative δ(ε) ≥ ref·(1 − 2e-15) − 1e-300 and optimistic ``upper.delta(ε) ≤
  ref·(1 + 2e-15) + 1e-300``; conservative ε(δ) ≥ reference ε at δ(1 + 2e-15) − 1e-15·max(1, ε),
  optimistic ε ≤ reference ε at δ(1 − 2e-15) + 1e-15·max(1, ε), and lo ≤ hi.
- the trade-off axioms on a dense grid (tails included): values in [0, 1], f(α) ≤ 1 − α + 1e-15,
  non-increasing to 1e-15, convex to 1e-13 (each value at most the chord of its neighbours).

Failures are collected and reported together, each with the fdp value and the reference.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from ._ref import INF, PL, M, mp

ALPHAS: list[float] = sorted(
    {0.0, 1.0}
    | {float(x) for x in np.logspace(-300, -1, 26)}
    | {float(x) for x in np.linspace(0.02, 0.98, 25)}
    | {float(1.0 - x) for x in np.logspace(-12, -1.3, 10)}
    | {0.5}
)

DELTAS: list[float] = [
    0.5, 0.3, 0.1, 0.03, 1e-2, 3e-3, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-10, 1e-12, 1e-15,
    1e-20, 1e-30, 1e-50, 1e-75, 1e-100, 1e-150, 1e-200, 1e-250, 1e-300, 0.0,
]

AXIOM_GRID = np.unique(
    np.concatenate(
        [
            np.linspace(0.0, 1.0, 2001),
            np.logspace(-300, -1, 80),
            1.0 - np.logspace(-15, -1, 40),
            0.5 * (1 - np.cos(np.pi * np.linspace(0, 1, 501))),
        ]
    )
)


def pl_eps_grid(ref: PL, n_atoms: int = 10) -> list[float]:
    """ε values for a piecewise-linear reference: 0, a sweep to beyond the largest finite loss,
    some of the atoms themselves (kinks of δ), negatives, far beyond, and +∞."""
    top = ref.max_loss()
    atoms = sorted(set(ref.atoms()))
    if len(atoms) > n_atoms:
        idx = np.unique(np.linspace(0, len(atoms) - 1, n_atoms).round().astype(int))
        atoms = [atoms[i] for i in idx]
    grid = {0.0, -0.5, -0.01, top, top + 1.0, 2 * top + 3, 50.0, 700.0, math.inf}
    grid |= {float(x) for x in np.linspace(0.0, 1.1 * top + 0.1, 15)}
    grid |= {a for a in atoms}
    return sorted(grid)


class Failures:
    """Collects failures of one check and raises them together."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.items: list[str] = []

    def add(self, what: str, at: object, got: object, ref: object, note: str = "") -> None:
        r = mp.nstr(ref, 17) if not isinstance(ref, str) else ref
        self.items.append(f"  {what} at {at!r}: fdp = {got!r}, reference = {r}{note}")

    def raise_if_any(self) -> None:
        if self.items:
            head = f"{self.label}: {len(self.items)} failure(s)\n"
            raise AssertionError(head + "\n".join(self.items[:25]))


def _arr(x: object) -> np.ndarray:
    return np.atleast_1d(np.asarray(x, dtype=float))


def _round_slack(x: object) -> object:
    """Downward rounding allowed for the ε of an exact curve: 1e-15 + 1e-14·|ε| (the float
    rounding of losses computed as log(q/p) from rounded masses and summed over a product)."""
    x = M(x)
    if x == INF:
        return M(0)
    return M(1e-15) + M(1e-14) * abs(x)


def _cheap(ref: object) -> bool:
    """References whose ε(δ) is a closed form or an exact finite maximum (no root finding)."""
    return isinstance(ref, PL) or bool(getattr(ref, "cheap_epsilon", False))


def _ge_true_eps(ref: object, delta: float, v: float, rel: float, slack: object) -> bool:
    """v ≥ ε_true(δ(1 + rel)) − slack. Equivalent to δ_true(v + slack) ≤ δ(1 + rel) (ε_true is
    the smallest ε ≥ 0 with δ_true(ε) ≤ target), which needs no root finding."""
    if math.isnan(v):
        return False
    if v == math.inf:
        return True
    target = M(delta) * (1 + M(rel))
    if _cheap(ref):
        e = ref.epsilon(target)
        return e != INF and M(v) >= e - slack
    return ref.delta(max(M(v) + slack, M(0))) <= target


def _le_true_eps(ref: object, delta: float, v: float, rel: float, slack: object) -> bool:
    """v ≤ ε_true(δ(1 − rel)) + slack. Without root finding: δ_true(v − slack) ≥ δ(1 − rel) is
    necessary and, away from a flat stretch of δ_true at exactly the target, sufficient; the
    flat stretch of δ_true (its floor 1 − f(0) beyond the largest loss) is handled by computing
    ε_true itself when the target is at or below that floor (δ = 0 for most curves)."""
    if math.isnan(v):
        return False
    target = M(delta) * (1 - M(rel))
    if _cheap(ref) or target <= ref.delta(INF):
        e = ref.epsilon(target)
        if e == INF:
            return True
        return v != math.inf and M(v) <= e + slack
    if v == math.inf:
        return False
    x = M(v) - slack
    return x <= 0 or ref.delta(x) >= target


# ------------------------------------------------------------------------ exact curves
def check_exact(
    f: object,
    ref: object,
    fails: Failures,
    alphas: Sequence[float],
    epss: Sequence[float],
    deltas: Sequence[float],
) -> None:
    a = np.asarray(alphas, dtype=float)
    for x, v in zip(a, _arr(f(a)), strict=False):
        r = ref.beta(x)
        if not abs(M(v) - r) <= M(1e-9) * r + M(1e-15):
            fails.add("beta(alpha) [exact]", float(x), float(v), r)
    e = np.asarray(epss, dtype=float)
    for x, v in zip(e, _arr(f.delta(e)), strict=False):
        r = ref.delta(x)
        # δ moves by at most Q[L > ε]·η when the atoms move by η (|dδ/dε| ≤ Q[L > ε]): allow the
        # float rounding of atom locations, η = 1e-14 + 1e-13·|ε|, on the terms' scale
        eta = M(1e-14) + M(1e-13) * abs(M(x)) if math.isfinite(x) else M(1e-14)
        scale = ref.qtail(M(x) - eta) if math.isfinite(x) else ref.qtail(x)
        tol = M(1e-9) * r + eta * scale + M(1e-300)
        # an excess (the safe side) of up to 1e-16 absolute is float noise of an exact curve
        if not (r - tol <= M(v) <= r + tol + M(1e-16)):
            fails.add("delta(eps) [exact]", float(x), float(v), r)
    d = np.asarray(deltas, dtype=float)
    got = _arr(f.epsilon(d))
    blo, bhi = f.epsilon_bracket(d)
    for x, v, lo, hi in zip(d, got, _arr(blo), _arr(bhi), strict=False):
        for name, val in (("epsilon(delta) [exact]", v), ("epsilon_bracket hi [exact]", hi)):
            val = float(val)
            if not _le_true_eps(ref, x, val, 1e-9, M(1e-9) * max(1.0, abs(val))):
                fails.add(name + " too large", float(x), val, ref.epsilon(x))
            if not _ge_true_eps(ref, x, val, 1e-9, _round_slack(val)):
                fails.add(name + " below the exact value", float(x), val, ref.epsilon(x))
        # the lower end is a certified lower bound: at or below the exact value, and close;
        # where the curve has no optimistic reading (derived from a merged product's masses,
        # TradeOff._has_twin) it is the conservative value, checked above with the others
        lo = float(lo)
        if not f._has_twin():
            if lo != float(v):
                fails.add("epsilon_bracket lo [exact, no twin] not the value", float(x), lo, v)
            continue
        if not _le_true_eps(ref, x, lo, 0.0, M(0)):
            fails.add("epsilon_bracket lo [exact] above the exact value", float(x), lo,
                      ref.epsilon(x))
        # (at δ = 0 a tiny +∞ atom, 1e-300, may be below the optimistic reading's margin)
        if x > 0.0 and not _ge_true_eps(ref, x, lo, 1e-9, M(1e-12) * max(1.0, abs(lo))):
            fails.add("epsilon_bracket lo [exact] far below the exact value", float(x), lo,
                      ref.epsilon(x))


# ------------------------------------------------------------------------ bracketed curves
BR_REL = M(2e-15)
BR_ABS_BETA = M(1e-15)


def _check_bulk(
    f: object, ref: object, fails: Failures, epss: Sequence[float], deltas: Sequence[float]
) -> None:
    """An engine result built for the bulk (``info["grid_mode"] == "fast"``) answers queries at
    δ ≥ DEEP_DELTA from that grid; every other check below takes its sides, which builds the
    deep grid. So first: its ε and δ brackets at such δ, against the reference, and that the ε
    brackets came from the bulk grid (a δ query whose bracket misses 10·tol rebuilds its grid,
    up to the deep one: Bracketed._refocus)."""
    from fdp.numeric import DEEP_DELTA

    if getattr(f, "info", {}).get("grid_mode") != "fast":
        return
    d = np.asarray([x for x in deltas if x >= DEEP_DELTA], dtype=float)
    if d.size:
        blo, bhi = f.epsilon_bracket(d)
        for x, lo, hi in zip(d, _arr(blo), _arr(bhi), strict=False):
            if not _ge_true_eps(ref, x, float(hi), 2e-15, M(1e-15) * max(1.0, abs(float(hi)))):
                fails.add("bulk epsilon_bracket hi below the exact epsilon", float(x), float(hi),
                          ref.epsilon(x))
            if not _le_true_eps(ref, x, float(lo), 2e-15, M(1e-15) * max(1.0, abs(float(lo)))):
                fails.add("bulk epsilon_bracket lo above the exact epsilon", float(x), float(lo),
                          ref.epsilon(x))
    if f.info.get("grid_mode") != "fast":
        fails.add("a bulk ε query built the deep grid", "", f.info.get("grid_mode"), "fast")
    e = np.asarray([x for x in epss if ref.delta(x) >= 10 * DEEP_DELTA], dtype=float)
    if e.size:
        dlo, dhi = f.delta_bracket(e)
        for x, lo, hi in zip(e, _arr(dlo), _arr(dhi), strict=False):
            r = ref.delta(x)
            if not M(float(hi)) >= r * (1 - BR_REL) - M(1e-300):
                fails.add("bulk delta_bracket hi below the exact delta", float(x), float(hi), r)
            if not M(float(lo)) <= r * (1 + BR_REL) + M(1e-300):
                fails.add("bulk delta_bracket lo above the exact delta", float(x), float(lo), r)


def check_bracket(
    f: object,
    ref: object,
    fails: Failures,
    alphas: Sequence[float],
    epss: Sequence[float],
    deltas: Sequence[float],
) -> None:
    _check_bulk(f, ref, fails, epss, deltas)
    a = np.asarray(alphas, dtype=float)
    own, lo_c, hi_c = _arr(f(a)), _arr(f.lower(a)), _arr(f.upper(a))
    for x, v, lo, hi in zip(a, own, lo_c, hi_c, strict=False):
        r = ref.beta(x)
        if not M(v) <= r + BR_ABS_BETA:
            fails.add("beta(alpha) above the exact curve", float(x), float(v), r)
        if not M(lo) <= r + BR_ABS_BETA:
            fails.add("lower(alpha) above the exact curve", float(x), float(lo), r)
        if not M(hi) >= r - BR_ABS_BETA:
            fails.add("upper(alpha) below the exact curve", float(x), float(hi), r)
    e = np.asarray(epss, dtype=float)
    dl, dll, du = _arr(f.delta(e)), _arr(f.lower.delta(e)), _arr(f.upper.delta(e))
    for x, v, vl, vu in zip(e, dl, dll, du, strict=False):
        r = ref.delta(x)
        if not M(v) >= r * (1 - BR_REL) - M(1e-300):
            fails.add("delta(eps) below the exact delta", float(x), float(v), r)
        if not M(vl) >= r * (1 - BR_REL) - M(1e-300):
            fails.add("lower.delta(eps) below the exact delta", float(x), float(vl), r)
        if not M(vu) <= r * (1 + BR_REL) + M(1e-300):
            fails.add("upper.delta(eps) above the exact delta", float(x), float(vu), r)
    d = np.asarray(deltas, dtype=float)
    cons = _arr(f.epsilon(d))
    blo, bhi = f.epsilon_bracket(d)
    for x, v, lo, hi in zip(d, cons, _arr(blo), _arr(bhi), strict=False):
        for name, val in (("epsilon(delta)", v), ("epsilon_bracket hi", hi)):
            val = float(val)
            if not _ge_true_eps(ref, x, val, 2e-15, M(1e-15) * max(1.0, abs(val))):
                fails.add(name + " below the exact epsilon", float(x), val, ref.epsilon(x))
        if not _le_true_eps(ref, x, float(lo), 2e-15, M(1e-15) * max(1.0, abs(float(lo)))):
            fails.add("epsilon_bracket lo above the exact epsilon", float(x), float(lo),
                      ref.epsilon(x))
        if not float(lo) <= float(hi):
            fails.add("epsilon_bracket inverted (lo > hi)", float(x), (float(lo), float(hi)),
                      ref.epsilon(x))


# ------------------------------------------------------------------------ axioms
def check_axioms(f: object, fails: Failures, name: str = "f") -> None:
    """Trade-off axioms (theory §1) on a dense grid with both tails."""
    curves = [(name, f)]
    if f.kind == "bracket":
        curves += [(name + ".lower", f.lower), (name + ".upper", f.upper)]
    a = AXIOM_GRID
    for nm, c in curves:
        y = _arr(c(a))
        if not np.all(np.isfinite(y)):
            fails.add(f"axiom: {nm} finite", "grid", "non-finite", "finite")
            continue
        bad = np.flatnonzero((y < 0) | (y > 1))
        if bad.size:
            i = bad[0]
            fails.add(f"axiom: {nm} in [0, 1]", float(a[i]), float(y[i]), "[0, 1]")
        bad = np.flatnonzero(y > 1 - a + 1e-15)
        if bad.size:
            i = bad[0]
            fails.add(f"axiom: {nm} <= 1 - alpha", float(a[i]), float(y[i]), f"{1 - a[i]!r}")
        bad = np.flatnonzero(np.diff(y) > 1e-15)
        if bad.size:
            i = bad[0]
            fails.add(f"axiom: {nm} non-increasing", float(a[i + 1]), float(y[i + 1]),
                      f"{y[i]!r} at {a[i]!r}")
        lam = (a[2:] - a[1:-1]) / (a[2:] - a[:-2])
        chord = lam * y[:-2] + (1 - lam) * y[2:]
        bad = np.flatnonzero(y[1:-1] > chord + 1e-13)
        if bad.size:
            i = bad[0]
            fails.add(f"axiom: {nm} convex", float(a[i + 1]), float(y[i + 1]),
                      f"chord {chord[i]!r}")


# ------------------------------------------------------------------------ front door
def check_curve(
    f: object,
    ref: object,
    label: str,
    *,
    alphas: Iterable[float] | None = None,
    epss: Iterable[float] | None = None,
    deltas: Iterable[float] | None = None,
    inverse: bool = True,
    axioms: bool = True,
    expect_kind: str | None = None,
) -> None:
    """Check an fdp curve against a reference on its side, per its kind; also its inverse
    (against the reference's inverse) and the axioms. Raises AssertionError listing failures."""
    fails = Failures(label)
    alphas = list(ALPHAS if alphas is None else alphas)
    deltas = list(DELTAS if deltas is None else deltas)
    if epss is None:
        epss = pl_eps_grid(ref) if isinstance(ref, PL) else ref.eps_grid()
    epss = list(epss)
    kind = getattr(f, "kind", None)
    if expect_kind is not None and kind != expect_kind:
        fails.add("kind", label, kind, expect_kind)
    if kind == "exact":
        check_exact(f, ref, fails, alphas, epss, deltas)
    elif kind == "bracket":
        check_bracket(f, ref, fails, alphas, epss, deltas)
    else:
        fails.add("kind (a certified curve was expected)", label, kind, "exact or bracket")
        fails.raise_if_any()
    if axioms:
        check_axioms(f, fails)
    if inverse and hasattr(ref, "inverse"):
        fi, ri = f.inverse(), ref.inverse()
        sub = Failures(label + " [inverse]")
        ig = pl_eps_grid(ri) if isinstance(ri, PL) else ri.eps_grid()
        if fi.kind == "exact":
            check_exact(fi, ri, sub, alphas, ig, deltas[::3])
        elif fi.kind == "bracket":
            check_bracket(fi, ri, sub, alphas, ig, deltas[::3])
        else:
            sub.add("kind of the inverse", label, fi.kind, "exact or bracket")
        if axioms:
            check_axioms(fi, sub, "inverse")
        fails.items += [" [inverse]" + it for it in sub.items]
    fails.raise_if_any()


class Collect:
    """Runs several checks and raises one AssertionError with all their messages (so a failing
    base curve does not hide the result of the operation applied to it)."""

    def __init__(self) -> None:
        self.msgs: list[str] = []

    def run(self, fn, *args, **kw) -> None:  # noqa: ANN001
        try:
            fn(*args, **kw)
        except AssertionError as e:
            self.msgs.append(str(e))

    def done(self) -> None:
        if self.msgs:
            raise AssertionError("\n".join(self.msgs))

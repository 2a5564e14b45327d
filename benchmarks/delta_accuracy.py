"""Random hunt: fdp's δ(ε) brackets for Gaussian and Laplace powers against mpmath references.

For each random power it takes the ε where fdp puts δ ≈ 1e-3 … 1e-30, asks ``delta_bracket``
there, and checks that the bracket holds the reference (the side) and that its conservative end
is within 1 % (10·tol at the default) of it. References, none from fdp:

- G_μ^⊗n = G_{μ√n}: δ(ε) = Φ(−ε/M + M/2) − e^ε Φ(−ε/M − M/2), M = μ√n (mpmath, 40 digits);
- L_μ^⊗n with nμ/2 > 60: the privacy-loss MGF inverted along its saddle-point line (the atoms'
  revivals of |M(c + iy)| are below e^{−nμ/2} there);
- L_μ^⊗n with n ≤ 40: an exact sum over the counts of steps at +μ, −μ and in between, the
  in-between part's density e^{(s − mμ)/2} U_m(s)/4^m with U_m the m-fold convolution of
  1_{(−μ, μ)} (Irwin–Hall), integrated by mpmath between its knots.
Other Laplace powers (the MGF inversion there needs its revivals summed, and is 1e-4 off where
they hardly decay) are skipped.

    python benchmarks/delta_accuracy.py [--seed S] [--cases N] [--kind gauss|laplace|both]
"""

from __future__ import annotations

import argparse
import math
import random
import time
import warnings
from typing import Any

import mpmath as mp

import fdp


def gauss_delta(m: float, eps: float) -> Any:
    with mp.workdps(40):
        mm, e = mp.mpf(m), mp.mpf(eps)
        return mp.ncdf(-e / mm + mm / 2) - mp.exp(e) * mp.ncdf(-e / mm - mm / 2)


def laplace_delta_mgf(mu: float, n: int, eps: float) -> Any:
    """Saddle-point MGF inversion (no revivals: use where nμ/2 > 60)."""
    with mp.workdps(30):
        m, e = mp.mpf(mu), mp.mpf(eps)

        def k(s: Any) -> Any:
            cont = mp.exp(-m / 2) * (mp.exp((s + 0.5) * m) - mp.exp(-(s + 0.5) * m)) / (
                4 * (s + 0.5))
            return n * mp.log(mp.exp(s * m) / 2 + mp.exp(-m * (1 + s)) / 2 + cont)

        c = mp.re(mp.findroot(lambda s: mp.diff(k, s) - e, mp.mpf(0.5)))
        k0, k2 = mp.re(k(c)), mp.re(mp.diff(k, c, 2))

        def f(y: Any) -> Any:
            z = c + 1j * y
            return mp.re(mp.exp(k(z) - k0 - 1j * y * e) / (z * (z + 1)))

        return mp.exp(k0 - c * e) * mp.quad(f, mp.linspace(0, 40 / mp.sqrt(k2), 9)) / mp.pi


def laplace_delta_exact(mu: float, n: int, eps: float) -> Any:
    """E_P[(1 − e^{ε − L})₊] summed over the counts (k at +μ, j at −μ, m in between)."""
    with mp.workdps(50):
        m_, e = mp.mpf(mu), mp.mpf(eps)
        pa, pb = mp.mpf(1) / 2, mp.exp(-m_) / 2
        total = mp.mpf(0)
        for m in range(n + 1):
            knots = [-m * m_ + 2 * m_ * i for i in range(m + 1)]

            def u(s: Any, m: int = m) -> Any:
                tot = mp.mpf(0)
                for i in range(m + 1):
                    x = s + m * m_ - 2 * m_ * i
                    if x > 0:
                        tot += (-1) ** i * mp.binomial(m, i) * x ** (m - 1)
                return tot / mp.factorial(m - 1)

            for k in range(n - m + 1):
                j = n - m - k
                w = mp.binomial(n, m) * mp.binomial(n - m, k) * pa**k * pb**j
                t = e - (k - j) * m_
                if m == 0:
                    val = (1 - mp.exp(t)) if t < 0 else mp.mpf(0)
                elif t >= m * m_:
                    continue
                else:
                    lo = max(t, -m * m_)
                    pts = [lo] + [x for x in knots if lo < x < m * m_] + [m * m_]
                    val = mp.quad(lambda s, t=t, m=m, u=u: (1 - mp.exp(t - s))
                                  * mp.exp((s - m * m_) / 2) * u(s) / 4**m, pts)
                total += w * val
        return total


def check(curve: Any, ref: Any, targets: tuple[float, ...], label: str) -> tuple[int, int]:
    bad = wide = 0
    for target in targets:
        e = float(curve.epsilon_bracket(target)[1])
        try:
            truth = ref(e)
        except ValueError:  # (the saddle point runs off next to the largest loss)
            print(f"{label} δ≈{target:g} ε={e:.6g}: no reference", flush=True)
            continue
        if truth <= 0:
            continue
        lo, hi = curve.delta_bracket(e)
        side_ok = mp.mpf(float(lo)) <= truth <= mp.mpf(float(hi))
        above = float((mp.mpf(float(hi)) - truth) / truth)
        bad += not side_ok
        wide += above > 1e-2
        flag = ("" if side_ok else " WRONG SIDE") + (" over 1 %" if above > 1e-2 else "")
        below = float((mp.mpf(float(lo)) - truth) / truth)
        print(f"{label} δ≈{target:g} ε={e:.6g}: lo {below:+.2e} hi {above:+.2e}{flag}",
              flush=True)
    return bad, wide


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--kind", choices=["gauss", "laplace", "both"], default="both")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    warnings.simplefilter("ignore", fdp.AccuracyWarning)
    bad = wide = done = 0
    t0 = time.perf_counter()
    for _ in range(args.cases):
        if args.kind in ("gauss", "both"):
            mu, n = 10 ** rng.uniform(-2, 1), int(10 ** rng.uniform(0.3, 4))
            h = fdp.compose(fdp.Gaussian(mu), repeat=n, numeric=True)
            total = mu * math.sqrt(n)
            b, w = check(h, lambda e, m=total: gauss_delta(m, e), (1e-3, 1e-6, 1e-10),
                         f"G({mu:.4g})^{n}")
            bad, wide, done = bad + b, wide + w, done + 1
        if args.kind in ("laplace", "both"):
            mu, n = 10 ** rng.uniform(-2, 0.5), int(10 ** rng.uniform(0.5, 4))
            if n * mu / 2 > 60:
                ref = laplace_delta_mgf
            elif n <= 40:
                ref = laplace_delta_exact
            else:
                continue
            h = fdp.Laplace(mu) ** n
            b, w = check(h, lambda e, f=ref, mu=mu, n=n: f(mu, n, e),
                         (1e-6, 1e-12, 1e-20, 1e-30), f"L({mu:.4g})^{n}")
            bad, wide, done = bad + b, wide + w, done + 1
    print(f"{done} curves: {bad} brackets on the wrong side, {wide} conservative ends over 1 % "
          f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()

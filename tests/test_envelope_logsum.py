"""min{f, g}**'s masses sum each part's P-masses above a kink in logs (log A, A near e^{−600}
here): np.logaddexp.accumulate rounded every step to an ulp of the running log, a relative
u·|log A| of A each time, and that drifted one way: after a large P-mass, each of 2000 P-masses
of 0.45 ulp of A was rounded away (A 1e-10 low, charged 2ku = 4.4e-13), so the crossing below
f's kink read 1e-10 low in loss for its charged 2.7e-12, and compose(min_envelope(f, g), K) read
δ's upper end up to 15% below the exact value (0.55 ulp each: its lower end above it).
Exact reference: the envelope's profile is max(δ_f, δ_g), and a product's δ(ε) is
Σ_j q_j δ(ε − ℓ_j) over the other pair's outcomes (mpmath, exact normalization)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

import fdp
from fdp.operations import _envelope_masses, min_envelope
from fdp.tradeoff import _log_cumsum

_U = 2.0**-53


def _pairs(n: int, frac: float, a: float = 0.5, l1: float = 3.0, la: float = -600.0):
    """f: P-mass e^{la} at loss l1 (and one below 2^-1000, far below); g: a P-mass a·e^{la} just
    above l1, then n P-masses of ``frac`` ulp of log A each at distinct losses just below it."""
    p1 = math.exp(la)
    q1 = p1 * math.exp(l1)
    pm = a * p1
    pt = frac * math.ulp(abs(la)) * pm
    l_f = float(np.log(q1) - np.log(p1))
    qs_t: list[float] = []
    last, k = None, 1
    while len(qs_t) < n:  # (log q − log p resolves ~1e-13: one distinct loss each)
        qk = pt * math.exp(l1) * math.exp(k * 1.2e-13)
        lq = float(np.log(qk))
        if lq != last and lq - float(np.log(pt)) > l_f:
            qs_t.append(qk)
            last = lq
        k += 1
    qs_t = qs_t[::-1]
    qm = pm * math.exp(float(np.log(qs_t[0]) - np.log(pt)) + 3e-13)
    P = [p1, 1e-305, 1.0]
    Q = [q1, 1e-305 * math.exp(-5.0), 0.0]
    Q[-1] = 1.0 - math.fsum(Q)
    P2 = [pm] + [pt] * n + [1.0]
    Q2 = [qm] + qs_t + [0.0]
    Q2[-1] = 1.0 - math.fsum(Q2)
    return P, Q, P2, Q2


def _exact(p: list[float]) -> list:
    s = sum(map(Fraction, p))
    return [mp.mpf(Fraction(x).numerator) / Fraction(x).denominator
            / (mp.mpf(s.numerator) / s.denominator) for x in p]


def _delta(pm: list, qm: list, eps) -> mp.mpf:
    x = mp.exp(eps)
    return mp.fsum(max(q - x * p, 0) for p, q in zip(pm, qm, strict=True))


@pytest.mark.parametrize("frac", [0.45, 0.55])
def test_envelope_crossing_and_a_product_against_mpmath(frac):
    with mp.workdps(60):
        P, Q, P2, Q2 = _pairs(2000, frac)
        f, g = fdp.from_distributions(P, Q), fdp.from_distributions(P2, Q2)
        pf, qf, pg, qg = _exact(P), _exact(Q), _exact(P2), _exact(Q2)
        # the exact crossing of δ_f and δ_g below f's kink l1: (q1 − B_g)/(p1 − A_g)
        head = [(p, q) for p, q in zip(pg, qg, strict=True) if q * pf[0] > qf[0] * p and p < 0.5]
        b_g, a_g = mp.fsum(q for _, q in head), mp.fsum(p for p, _ in head)
        lc = mp.log((qf[0] - b_g) / (pf[0] - a_g))
        # the envelope's mass there carries its loss within its recorded bound
        _, qq, loss, ee = _envelope_masses(f, g)
        i = int(np.argmin(np.abs(loss - float(lc))))
        assert abs(mp.mpf(float(loss[i])) - lc) <= ee[i], (loss[i], float(lc), ee[i])
        # end to end: a product with T(K) reads the envelope's masses
        h = min_envelope(f, g)
        c = fdp.compose(h, fdp.from_distributions([0.5, 0.5], [0.75, 0.25]))
        kq, kl = [mp.mpf(0.75), mp.mpf(0.25)], [mp.log(mp.mpf(1.5)), mp.log(mp.mpf(0.5))]
        for off in (-3e-10, -1e-10, -4e-11, -2e-11, 0.0, 2e-11):
            eps = float(lc + kl[0] + off)
            t = mp.fsum(w * max(_delta(pf, qf, mp.mpf(eps) - lk), _delta(pg, qg, mp.mpf(eps) - lk))
                        for w, lk in zip(kq, kl, strict=True))
            lo, hi = c.delta_bracket(eps)
            lo, hi = mp.mpf(float(lo)), mp.mpf(float(hi))
            assert lo <= t <= hi, (off, float(lo), float(hi), float(t))


def test_log_cumsum_charge_covers_the_drift_of_a_log_sum():
    """The bound the envelope charges, u·(|log A| + k) + 2u·mag (:func:`_log_cumsum`), against
    mpmath on log-sums near −700 whose accumulate drifts: equal terms, random terms, and a large
    term followed by terms of 0.45 and 0.55 ulp of it (every step rounds the same way)."""
    rng = np.random.default_rng(58)
    big = -600.0
    ulp = math.ulp(abs(big))
    cases = [np.full(1000, -700.0), rng.uniform(-740.0, -700.0, 1000),
             np.sort(rng.uniform(-740.0, -300.0, 1000))[::-1]]
    for frac in (0.45, 0.55):
        cases.append(np.concatenate([[big], np.full(1000, big + math.log(frac * ulp))]))
    for x in cases:
        out, mag = _log_cumsum(x)
        mag = np.broadcast_to(mag, (x.size + 1,))
        with mp.workdps(50):
            s, worst_acc = mp.mpf(0), 0.0
            acc = np.logaddexp.accumulate(x)
            for k, v in enumerate(x, start=1):
                s += mp.exp(mp.mpf(float(v)))
                ls = mp.log(s)
                err = abs(float(mp.mpf(float(out[k - 1])) - ls))
                assert err <= _U * (abs(out[k - 1]) + k + 2.0 * mag[k]), (k, err / _U)
                worst_acc = max(worst_acc, abs(float(mp.mpf(float(acc[k - 1])) - ls)) / (k * _U))
        if x[0] == big:  # the accumulate's drift: ~460u a step, past the 2u a step once charged
            assert worst_acc > 100.0

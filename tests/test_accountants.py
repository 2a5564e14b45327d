"""fdp.compare: every method's row, bound/approximation labels, ordering of bounds."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fdp
from fdp.accountants import compare


def test_workload_rows_and_order() -> None:
    c = compare([(fdp.Laplace(0.1), 1000)], delta=1e-6)
    methods = [r.method for r in c.rows]
    assert methods == ["exact", "gdp_clt", "edgeworth", "rdp", "advanced"]
    ex = c.row("exact")
    assert ex.eps_lower <= 18.9503 <= ex.eps  # PEERS: ≈ 18.950
    # every certified upper bound is ≥ the certified lower bound on the exact ε
    for r in c.rows:
        if r.kind == "certified upper bound":
            assert r.eps >= ex.eps_lower
    assert c.row("rdp").eps > ex.eps and c.row("advanced").eps > c.row("rdp").eps
    assert c.row("gdp_clt").kind == "approximation"
    assert "approximation" in str(c) and "certified" in str(c)
    json.dumps(c.to_dict())
    assert set(c.curves) >= {"exact", "gdp_clt", "edgeworth", "rdp"}


def test_dpsgd_rows() -> None:
    c = compare(
        noise_multiplier=1.0,
        sample_rate=0.01,
        steps=1000,
        delta=1e-5,
        methods=["exact", "gdp_clt", "rdp"],
    )
    ex = c.row("exact")
    assert c.row("gdp_clt").eps < ex.eps_lower  # the CLT underestimates here
    assert c.row("rdp").eps > ex.eps
    assert c.conventions is not None and c.conventions["neighbours"] == "add-remove"
    text = str(c)
    assert "neighbours: add-remove (Poisson sampling), sensitivity 1·C, noise std σ·C" in text
    d = c.to_dict()
    assert d["conventions"]["sensitivity"] == 1.0 and d["conventions"]["sampling"] == "poisson"
    json.dumps(d)


def test_dpsgd_uniform_rows_use_replace_one() -> None:
    # issue 12 item 8: fixed-size batches, replace-one, one step C_p(G_{2/σ}) in every row
    kw = {"noise_multiplier": 1.0, "sample_rate": 0.01, "steps": 1000, "delta": 1e-5}
    c = compare(sampling="uniform", **kw)
    p = compare(**kw, methods=["exact"])
    ex = c.row("exact")
    assert 14.7 < ex.eps_lower <= ex.eps < 14.9  # was ≈ 2.20 (one step taken as G_{1/σ})
    assert ex.eps_lower > p.row("exact").eps  # not the Poisson answer
    for r in c.rows:  # every certified bound lies above the certified lower exact ε
        if r.kind == "certified upper bound":
            assert r.eps >= ex.eps_lower, r
    rdp_row = c.row("rdp")
    assert rdp_row.kind == "certified upper bound" and "Wang, Balle" in rdp_row.note
    assert "replace-one (fixed-size batches without replacement), sensitivity 2·C" in str(c)
    assert c.to_dict()["conventions"]["neighbours"] == "replace-one"
    # DRS's convention (noise 2σC): sensitivity 1 gives the DRS CLT μ for σ = 1
    d = compare(sampling="uniform", sensitivity=1.0, methods=["gdp_clt"], **kw)
    assert d.row("gdp_clt").curve.mu == pytest.approx(0.5407945346280163, rel=1e-9)
    assert "sensitivity 1·C" in str(d) and "user's claim" in str(d)


def test_dpsgd_sensitivity_moves_every_row() -> None:
    kw = {"sample_rate": 0.02, "steps": 50, "delta": 1e-5, "methods": ["exact", "gdp_clt", "rdp"]}
    a = compare(noise_multiplier=2.0, sensitivity=2.0, **kw)
    b = compare(noise_multiplier=1.0, **kw)
    for m in ["exact", "gdp_clt", "rdp"]:
        assert a.row(m).eps == pytest.approx(b.row(m).eps, rel=1e-9), m


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="workload"):
        compare(delta=1e-5)
    with pytest.raises(ValueError, match="methods"):
        compare([(fdp.Gaussian(1.0), 2)], methods=["magic"])
    with pytest.raises(ValueError, match="delta"):
        compare([(fdp.Gaussian(1.0), 2)], delta=0.0)
    dp = {"noise_multiplier": 1.0, "sample_rate": 0.01, "steps": 10}
    with pytest.raises(ValueError, match="neighbours='replace-one' with sampling='poisson'"):
        compare(**dp, neighbours="replace-one")
    with pytest.raises(ValueError, match="neighbours='add-remove' with sampling='uniform'"):
        compare(**dp, sampling="uniform", neighbours="add-remove")
    with pytest.raises(ValueError, match="sensitivity"):
        compare(**dp, sensitivity=-1.0)
    with pytest.raises(ValueError, match="sampling"):
        compare(**dp, sampling="shuffle")
    with pytest.raises(ValueError, match="DP-SGD"):
        compare([(fdp.Gaussian(1.0), 2)], sampling="uniform")


def test_advanced_composition_where_e_to_the_eps_overflows() -> None:
    # ε > 709: e^ε − 1 overflowed (OverflowError from compare's "advanced" row and the CLI);
    # the bound is ∞ there and basic composition kε answers
    from fdp import classical as C

    assert C.advanced(710.0, 0.0, 3, 1e-5) == (math.inf, 1e-5)
    e, _ = C.advanced(1.0, 0.0, 3, 1e-5)
    assert e >= math.sqrt(6 * math.log(1e5)) + 3 * math.expm1(1.0)
    c = fdp.compare([(fdp.Laplace(1000.0), 3)], delta=1e-300)
    assert c.row("advanced").eps == pytest.approx(3000.0, rel=1e-12)


def test_compare_on_a_mechanism_without_privacy_loss() -> None:
    # rr(0), G_0, Id: the Edgeworth row read "alpha must be a number in [0, 1], got NaN" and
    # the RDP row "rho must lie in [0, inf], got [3.3e-15, -1.7e-15, ...]" (rounding)
    for curve in (fdp.mechanisms.randomized_response(0.0), fdp.Gaussian(0.0)):
        c = fdp.compare([(curve, 3)], delta=1e-5)
        assert c.row("exact").eps == 0.0 and c.row("edgeworth").eps == 0.0
        assert 0.0 <= c.row("rdp").eps < 0.05
    e = fdp.edgeworth(fdp.Gaussian(0.0), n=10)
    assert e.kind == "approximation" and float(e(0.3)) == pytest.approx(0.7, abs=1e-15)


def test_compare_says_why_an_edgeworth_row_is_infinite() -> None:
    # Laplace(10)^100: the expansion is no distribution over its range (its curve has an atom
    # of 1 at α = 0); the row says so in its note instead of a bare ∞ and a stray warning
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        c = fdp.compare([(fdp.Laplace(10.0), 100)], delta=1e-6,
                        methods=["exact", "edgeworth"])
    row = c.row("edgeworth")
    assert row.eps == math.inf and "no distribution" in row.note
    assert c.row("exact").eps < 1000.0  # (≤ the summed largest loss, 100 μ)
    assert "no distribution" not in compare([(fdp.Laplace(0.1), 1000)], delta=1e-6,
                                            methods=["edgeworth"]).row("edgeworth").note


def test_rdp_of_discrete_curves_is_rounded_up() -> None:
    # ρ(λ) of randomized response / a discrete pair against mpmath: never below, and ≥ 0
    import mpmath as mp

    from fdp import rdp

    orders = [1.5, 2.0, 10.0, 64.0]
    with mp.workdps(40):
        for eps in (0.0, 1e-9, 1.0, 5.0):
            E = mp.mpf(eps)
            p = 1 / (1 + mp.exp(-E))
            got = rdp.randomized_response(eps, orders)
            for g, lam in zip(got, orders, strict=True):
                L = mp.mpf(lam)
                want = mp.log(p**L * (1 - p) ** (1 - L) + (1 - p) ** L * p ** (1 - L)) / (L - 1)
                assert g >= want and g <= want + mp.mpf(1e-12) * (1 + want), (eps, lam, g, want)
        got = rdp.of_curve(fdp.from_distributions([0.75, 0.25], [0.25, 0.75]), orders)
        for g, lam in zip(got, orders, strict=True):
            L = mp.mpf(lam)
            a, b = mp.mpf(3) / 4, mp.mpf(1) / 4
            want = mp.log(a**L * b ** (1 - L) + b**L * a ** (1 - L)) / (L - 1)
            assert g >= want and g <= want + mp.mpf(1e-12) * (1 + want), (lam, g, want)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 10.0), min_size=1, max_size=20),
       st.lists(st.floats(0.0, 1e-3), min_size=1, max_size=20))
def test_classical_sums_are_rounded_up(eps: list[float], delta: list[float]) -> None:
    """Basic and advanced composition report their sums rounded up (exact rationals as the
    reference): Σ of floats to nearest can fall an ulp below the exact sum, e.g. 0.1 + 0.7."""
    from fractions import Fraction

    n = min(len(eps), len(delta))
    e, d = eps[:n], delta[:n]
    be, bd = fdp.classical.basic(e, d)
    assert Fraction(be) >= sum(map(Fraction, e)) and Fraction(bd) >= sum(map(Fraction, d))
    assert be <= math.fsum(e) * (1 + 4e-16) + 1e-300
    _, ad = fdp.classical.advanced(0.5, d[0], n, 1e-6)
    assert Fraction(ad) >= n * Fraction(d[0]) + Fraction(1e-6) or ad == 1.0


def test_classical_sum_one_ulp_case() -> None:
    # 0.1 + 0.7 rounds to nearest 0.7999999999999999, below the exact 0.79999999999999998889...
    from fractions import Fraction

    be, _ = fdp.classical.basic([0.1, 0.7], [0.0, 0.0])
    assert Fraction(be) >= Fraction(0.1) + Fraction(0.7)


def test_comparison_table_prints_certified_eps_rounded_up() -> None:
    """str(compare(...)) prints six digits: certified ε rounded up, lower ends down."""
    c = compare([(fdp.Gaussian(0.5), 10)], delta=1e-5, methods=["exact", "rdp", "advanced"])
    text = str(c).splitlines()
    for r in c.rows:
        line = next(x for x in text if x.startswith(r.method + " "))
        parts = line.split()
        assert float(parts[1]) >= r.eps, (r.method, parts[1], r.eps)
        if r.eps_lower is not None:
            assert float(parts[2]) <= r.eps_lower


def test_exact_row_lower_end_of_a_product_of_pure_dp_curves_against_exact_sums() -> None:
    # A hunt: the exact row's eps_lower (documented a certified lower bound) was the value
    # itself, 2.5e-13 above the truth for EpsDelta workloads. A product of different curves
    # now has an optimistic twin (plain merges at the smallest loss). Reference: the product
    # of randomized responses with ε₁ = 1 (×3) and ε₂ = 0.5 (×2) has losses
    # (3 − 2i)·1 + (2 − 2j)·0.5 with binomial Q-masses; δ(ε) = Σ q (1 − e^{ε − ℓ})₊ in mpmath,
    # and ε(δ) by bisection.
    import mpmath as mp

    mp.mp.dps = 40
    e1, e2 = mp.mpf(1), mp.mpf("0.5")
    out = []
    for i in range(4):
        for j in range(3):
            q = (mp.binomial(3, i) * (mp.exp(e1) / (1 + mp.exp(e1))) ** (3 - i)
                 * (1 / (1 + mp.exp(e1))) ** i
                 * mp.binomial(2, j) * (mp.exp(e2) / (1 + mp.exp(e2))) ** (2 - j)
                 * (1 / (1 + mp.exp(e2))) ** j)
            out.append((q, (3 - 2 * i) * e1 + (2 - 2 * j) * e2))

    def delta(e: mp.mpf) -> mp.mpf:
        return mp.fsum(q * (1 - mp.exp(e - ll)) for q, ll in out if ll > e)

    for d in [1e-1, 1e-3, 1e-6]:
        lo_e, hi_e = mp.mpf(0), mp.mpf(4)
        for _ in range(120):
            mid = (lo_e + hi_e) / 2
            lo_e, hi_e = (mid, hi_e) if delta(mid) > d else (lo_e, mid)
        row = compare([(fdp.EpsDelta(1.0), 3), (fdp.EpsDelta(0.5), 2)], delta=d).row("exact")
        assert row.eps_lower is not None
        assert row.eps_lower <= lo_e and row.eps >= hi_e, (d, row.eps_lower, row.eps, lo_e)
        assert row.eps - row.eps_lower <= 1e-9 * row.eps


def test_clt_rows_use_every_item_of_a_long_workload() -> None:
    # over 10,000 mechanisms the CLT and Edgeworth rows used the first item alone: 6000 G_0.01
    # and 5000 G_1 read ε = 3.26 (G_{0.01·√6000}) for the true 2800.92 (a hunt). For Gaussians
    # the CLT is exact: μ = √(Σ n_i μ_i²). Reference: δ_μ(ε) by Balle & Wang's closed form in
    # mpmath, solved for ε.
    import mpmath as mp

    mp.mp.dps = 40
    mu = mp.sqrt(6000 * mp.mpf("0.01") ** 2 + 5000)
    truth = mp.findroot(lambda e: mp.ncdf(-e / mu + mu / 2)
                        - mp.exp(e) * mp.ncdf(-e / mu - mu / 2) - mp.mpf("1e-5"), 2800)
    c = fdp.accountants.compare([(fdp.Gaussian(0.01), 6000), (fdp.Gaussian(1.0), 5000)],
                                delta=1e-5)
    assert c.row("gdp_clt").eps == pytest.approx(float(truth), rel=1e-9)
    r = fdp.clt.clt(fdp.Gaussian(0.01), fdp.Gaussian(1.0), counts=[6000, 5000])
    assert r.mu == pytest.approx(float(mu), rel=1e-12)
    with pytest.raises(ValueError, match="counts"):
        fdp.clt.clt(fdp.Gaussian(1.0), counts=[1, 2])

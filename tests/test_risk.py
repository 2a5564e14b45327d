"""fdp.risk: advantage, TPR at FPR, posterior success, and risk-target calibration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

import fdp
from fdp.risk import advantage, calibrate_dpsgd_risk, posterior_success, tpr


def test_gaussian_closed_forms() -> None:
    g = fdp.Gaussian(1.3)
    assert advantage(g) == pytest.approx(norm.cdf(0.65) - norm.cdf(-0.65), abs=1e-12)
    a = np.array([1e-4, 1e-3, 0.05, 0.5])
    assert np.allclose(tpr(g, a), norm.sf(norm.isf(a) - 1.3), atol=1e-12)
    assert posterior_success(g, 0.5) == pytest.approx(0.5 + advantage(g) / 2, abs=1e-12)


def test_posterior_success_is_the_bayes_risk() -> None:
    f = fdp.from_distributions([0.6, 0.3, 0.1], [0.1, 0.3, 0.6])
    grid = np.linspace(0, 1, 200001)
    for prior in (0.05, 0.3, 0.5, 0.8):
        direct = 1.0 - float(np.min(prior * np.asarray(f(grid)) + (1 - prior) * grid))
        assert posterior_success(f, prior) == pytest.approx(direct, abs=1e-6)
    # without information the best is to guess the likelier answer
    assert posterior_success(fdp.Identity(), [0.2, 0.7]) == pytest.approx([0.8, 0.7])
    with pytest.raises(ValueError):
        posterior_success(f, 0.0)


def test_bracketed_curves_give_certified_upper_bounds() -> None:
    h = fdp.dpsgd(1.0, 0.05, 200)
    a = np.array([1e-3, 1e-2, 0.1])
    up = tpr(h, a)
    assert np.all(up >= 1.0 - np.asarray(h.upper(a)) - 1e-15)
    assert np.all(up == 1.0 - np.asarray(h.lower(a)))
    assert advantage(h) >= float(h.upper.delta(0.0))
    eps_tpr = tpr(fdp.EpsDelta(1.0, 0.0), 0.01)
    assert eps_tpr == pytest.approx(math.e * 0.01)
    with pytest.raises(TypeError):
        advantage(1.0)  # type: ignore[arg-type]


def test_calibration_to_risk_targets() -> None:
    s = calibrate_dpsgd_risk(0.05, 50, advantage=0.05, rtol=5e-2)
    assert advantage(fdp.dpsgd(s, 0.05, 50)) <= 0.05
    assert advantage(fdp.dpsgd(s * 0.9, 0.05, 50)) > 0.05
    t = calibrate_dpsgd_risk(0.05, 50, tpr=0.02, fpr=0.01, rtol=5e-2)
    assert tpr(fdp.dpsgd(t, 0.05, 50), 0.01) <= 0.02
    assert tpr(fdp.dpsgd(t * 0.9, 0.05, 50), 0.01) > 0.02
    # the former name is a thin wrapper of fdp.calibrate_dpsgd's risk targets
    assert t == fdp.calibrate_dpsgd(0.05, 50, tpr=0.02, fpr=0.01, rtol=5e-2)
    with pytest.raises(ValueError, match="give a target"):
        calibrate_dpsgd_risk(0.02, 200)
    with pytest.raises(ValueError, match="not both"):
        calibrate_dpsgd_risk(0.02, 200, advantage=0.1, tpr=0.5, fpr=0.1)
    with pytest.raises(ValueError, match=r"tpr must lie in \(fpr, 1\)"):
        calibrate_dpsgd_risk(0.02, 200, tpr=0.005, fpr=0.01)  # below the trivial TPR = FPR


def test_tpr_and_posterior_success_round_toward_less_privacy() -> None:
    # A hunt: 1 − β was rounded to nearest (an ulp below the exact TPR where β < 1/2). Against
    # mpmath: TPR = 1 − G_μ(α) and the posterior success 1 − π(1 − δ_μ(ln((1 − π)/π))), never
    # below, for random μ, α and π.
    import mpmath as mp

    rng = np.random.default_rng(11)
    with mp.workdps(50):
        for _ in range(60):
            mu = float(10 ** rng.uniform(-2, 1))
            f = fdp.Gaussian(mu)
            a = float(10 ** rng.uniform(-12, -0.01))
            exact = 1 - mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * mp.mpf(a) - 1) - mu)
            assert mp.mpf(float(tpr(f, a))) >= exact, (mu, a)
            pi = float(rng.uniform(0.01, 0.99))
            e = mp.log((1 - mp.mpf(pi)) / mp.mpf(pi))
            m = mp.mpf(mu)
            d = mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)
            assert mp.mpf(float(posterior_success(f, pi))) >= 1 - mp.mpf(pi) * (1 - d), (mu, pi)

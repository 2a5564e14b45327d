"""DP-SGD (NoisySGD) accounting: the exact f-DP curve with a certified bracket, and its CLT.

Each step adds Gaussian noise of standard deviation σ·C to the sum of per-example gradients clipped
to norm C over a minibatch; one step on the minibatch is G_{1/σ}-DP.

- ``sampling="poisson"`` (each example joins a batch independently with probability p; add/remove
  neighbours): one step's add pair is T(P, (1 − p)P + pQ) = p G_{1/σ} + (1 − p) Id, its remove
  pair the inverse (Gaussian symmetry), so T steps are min{f, f⁻¹}**-DP with
  f = (p G_{1/σ} + (1 − p) Id)^{⊗T} (BDLS; Zhu, Dong & Wang 2022; MATH §7).
- ``sampling="uniform"`` (batches of fixed size m drawn without replacement, p = m/n; replace-one
  neighbours): T steps are C_p(G_{1/σ})^{⊗T}-DP (DRS Thm 4.2 and Sec 5).

The composition runs through the certified engine of :mod:`fdp.composition`, so ``dpsgd(...)``
returns a :class:`~fdp.numeric.Bracketed` curve: ``.epsilon(δ)`` is a certified upper bound on ε,
``.epsilon_bracket(δ)`` brackets the exact value. :func:`dpsgd_clt` is the central-limit
approximation (not a bound; it underestimates ε for realistic settings).

Examples
--------
>>> h = dpsgd(1.0, 0.01, 1000)
>>> lo, hi = h.epsilon_bracket(1e-5)
>>> round(lo, 2), round(hi, 2)
(1.83, 1.83)
>>> round(float(dpsgd_clt(1.0, 0.01, 1000).epsilon(1e-5)), 3)
1.618
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import check_int, check_scalar
from .composition import compose
from .families import Gaussian
from .numeric import Approximation, Bracketed
from .operations import Mixture, min_envelope, subsample
from .tradeoff import TradeOff

__all__ = ["dpsgd", "dpsgd_clt", "poisson_subsampled_gaussian"]

_SAMPLINGS = ("poisson", "uniform")


def _check(noise_multiplier: float, sample_rate: float, steps: int, sampling: str) -> tuple:
    s = check_scalar("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    p = check_scalar("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    t = check_int("steps", steps, low=1)
    if sampling not in _SAMPLINGS:
        raise ValueError(f"sampling must be one of {_SAMPLINGS}, got {sampling!r}")
    return s, p, t


def poisson_subsampled_gaussian(noise_multiplier: float, sample_rate: float) -> Mixture:
    """One DP-SGD step with Poisson sampling, add direction: p G_{1/σ} + (1 − p) Id. Exact."""
    s, p, _ = _check(noise_multiplier, sample_rate, 1, "poisson")
    return Mixture(Gaussian(1.0 / s), p)


def dpsgd(
    noise_multiplier: float,
    sample_rate: float,
    steps: int,
    sampling: str = "poisson",
    *,
    tol: float = 1e-3,
) -> Bracketed:
    """The f-DP curve of DP-SGD with a certified bracket (see the module docstring).

    Parameters
    ----------
    noise_multiplier : σ > 0 (noise standard deviation over the clipping norm).
    sample_rate : p ∈ (0, 1] (Poisson rate, or batch size over dataset size for "uniform").
    steps : T ≥ 1.
    sampling : "poisson" (add/remove neighbours) or "uniform" (replace-one neighbours).
    tol : target relative width of the ε bracket (passed to :func:`fdp.compose`).
    """
    s, p, t = _check(noise_multiplier, sample_rate, steps, sampling)
    name = f"DP-SGD(σ={s:g}, p={p:g}, T={t}, {sampling})"
    if sampling == "uniform":
        h = compose(subsample(Gaussian(1.0 / s), p), repeat=t, numeric=True, tol=tol)
        if not isinstance(h, Bracketed):  # pragma: no cover - the engine always brackets
            raise TypeError("expected a bracketed composition")
        return Bracketed(h.lower, lambda: h.upper, name=name, info=h.info)
    f = compose(Mixture(Gaussian(1.0 / s), p), repeat=t, numeric=True, tol=tol)
    if not isinstance(f, Bracketed):  # pragma: no cover - the engine always brackets
        raise TypeError("expected a bracketed composition")
    g = f.inverse()  # the remove direction, composed by the engine in its own right
    info = {**f.info, "symmetric": True}  # min{f, f⁻¹}** is symmetric
    return _SymmetricMin(f, g, name=name, info=info)


class _SymmetricMin(Bracketed):
    """min{f, g}** of two bracketed curves, with δ and ε taken directly from the parts.

    The envelope's privacy profile is max(δ_f, δ_g), so ε(δ) = max(ε_f(δ), ε_g(δ)) exactly; the
    envelopes themselves (for evaluation and plotting) are built only when needed.
    """

    def __init__(self, f: Bracketed, g: Bracketed, **kw: object) -> None:
        super().__init__(lambda: min_envelope(f.lower, g.lower),
                         lambda: min_envelope(f.upper, g.upper), **kw)  # type: ignore[arg-type]
        self._parts = (f, g)

    def _delta(self, eps):  # type: ignore[no-untyped-def]
        f, g = self._parts
        return np.maximum(f.lower._delta(eps), g.lower._delta(eps))

    def _epsilon(self, delta):  # type: ignore[no-untyped-def]
        f, g = self._parts
        return np.maximum(f.lower._epsilon(delta), g.lower._epsilon(delta))

    def epsilon_bracket(self, delta: object) -> tuple[object, object]:
        f, g = self._parts
        lo = np.maximum(f.upper.epsilon(delta), g.upper.epsilon(delta))
        hi = np.maximum(f.lower.epsilon(delta), g.lower.epsilon(delta))
        if np.ndim(lo) == 0:
            return float(lo), float(hi)
        return lo, hi


def dpsgd_clt(
    noise_multiplier: float, sample_rate: float, steps: int, sampling: str = "poisson"
) -> TradeOff:
    """The GDP central-limit approximation of DP-SGD: an approximation, not a bound.

    Poisson (BDLS Thm 5): μ = p √(T (e^{1/σ²} − 1)). Uniform (DRS Sec 5):
    μ = √2 p √T √(e^{1/σ²} Φ(1.5/σ) + 3 Φ(−0.5/σ) − 2). Both can underestimate the true μ (and ε).
    """
    s, p, t = _check(noise_multiplier, sample_rate, steps, sampling)
    if sampling == "poisson":
        mu = p * math.sqrt(t * math.expm1(1.0 / s**2))
    else:
        from ._numerics import norm_cdf

        inner = (
            math.exp(1.0 / s**2) * float(norm_cdf(1.5 / s)) + 3.0 * float(norm_cdf(-0.5 / s)) - 2.0
        )
        mu = math.sqrt(2.0) * p * math.sqrt(t) * math.sqrt(max(inner, 0.0))
    return Approximation(Gaussian(mu), name=f"CLT G_{mu:.4g} of DP-SGD(σ={s:g}, p={p:g}, T={t})")

"""DP-SGD (NoisySGD) accounting: the exact f-DP curve with a certified bracket, and its CLT.

Conventions
-----------
Each step clips every per-example gradient to L2 norm C, sums the clipped gradients over the
batch and adds Gaussian noise of standard deviation σ·C to the **sum**. The noise multiplier σ is
relative to the clipping norm C, as in Opacus and TF Privacy. Under a neighbouring relation the sum
moves by at most Δ·C, where Δ (``sensitivity``, in units of C) depends on the relation:

- ``neighbours="add-remove"`` (add or remove one example): Δ = 1;
- ``neighbours="replace-one"`` (replace one example by another): Δ = 2.

One step on a batch is then G_{Δ/σ}-DP (DRS Thm 2.7). The sampling scheme fixes the relation
that can be accounted soundly:

- ``sampling="poisson"`` (each example joins a batch independently with probability p):
  add/remove neighbours (default Δ = 1). One step's add pair is T(P, (1 − p)P + pQ) =
  p G_{Δ/σ} + (1 − p) Id, its remove pair the inverse (Gaussian symmetry), so T steps are
  min{f, f⁻¹}**-DP with f = (p G_{Δ/σ} + (1 − p) Id)^{⊗T} (BDLS; Zhu, Dong & Wang 2022; theory §7).
- ``sampling="uniform"`` (batches of fixed size m drawn without replacement, p = m/n):
  replace-one neighbours (default Δ = 2). T steps are C_p(G_{Δ/σ})^{⊗T}-DP (DRS Thm 4.2).

Other combinations (Poisson with replace-one, fixed-size batches with add/remove) are not
accounted and raise ValueError. A ``sensitivity`` below the relation's natural one (e.g. 1 with
replace-one) is accepted, but it is then *your* claim about your mechanism (for example, a
replace-one relation where only one of the two examples' gradients can be non-zero); the defaults
are the sound values for clipped per-example gradients.

Reproducing the papers. Dong, Roth & Su (2022, Sec 5) state NoisySGD with fixed-size batches as
C_p(G_{1/σ})^{⊗T}-DP, with the CLT μ = √2 p√T √(e^{1/σ²}Φ(1.5/σ) + 3Φ(−0.5/σ) − 2); their noise
has std 2σC on the sum, i.e. their σ is relative to 2C, the replace-one sensitivity (theory §7). To
reproduce their numbers pass ``noise_multiplier = 2·σ_DRS`` with the defaults (the sound reading
of their algorithm), or equivalently ``noise_multiplier = σ_DRS, sensitivity = 1`` (same curve).
Bu, Dong, Long & Su (2020) state their fixed-size-batch results in the same form C_p(G_{1/σ})^{⊗T};
a number stated in that form is reproduced the same way. Whether it is a guarantee for *your*
training loop depends on the noise the loop adds: with std σ·C on the sum of gradients clipped to
C, replace-one needs Δ = 2 (the default). Poisson results in the add/remove convention (Opacus, TF
Privacy, BDLS's Poisson theorem f = (p G_{1/σ} + (1 − p) Id)^{⊗T}) need no change.

The composition runs through the certified engine of :mod:`fdp.composition`, so ``dpsgd(...)``
returns a :class:`~fdp.numeric.Bracketed` curve: ``.epsilon(δ)`` is a certified upper bound on ε,
``.epsilon_bracket(δ)`` brackets the exact value. The curve's name and ``info`` state the
conventions. :func:`dpsgd_clt` is the central-limit approximation (not a bound; it underestimates
ε for realistic settings).

Examples
--------
>>> h = dpsgd(1.0, 0.01, 1000)
>>> lo, hi = h.epsilon_bracket(1e-5)
>>> round(lo, 2), round(hi, 2)
(1.83, 1.83)
>>> h.info["neighbours"], h.info["sensitivity"]
('add-remove', 1.0)
>>> u = dpsgd(1.0, 0.01, 1000, sampling="uniform")   # replace-one: one step is G_2
>>> round(u.epsilon(1e-5), 1)
14.8
>>> round(dpsgd(2.0, 0.01, 1000, sampling="uniform").epsilon(1e-5), 2)  # DRS's σ = 1
2.2
>>> round(float(dpsgd_clt(1.0, 0.01, 1000).epsilon(1e-5)), 3)
1.618
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import check_int, check_scalar
from ._numerics import UNIT_ROUNDOFF
from .composition import compose
from .families import Gaussian
from .numeric import Approximation, Bracketed
from .operations import Mixture, Subsampled, min_envelope, subsample
from .tradeoff import TradeOff

__all__ = [
    "dpsgd",
    "dpsgd_clt",
    "poisson_subsampled_gaussian",
    "dpsgd_step",
    "Conventions",
    "conventions",
]

_SAMPLINGS = ("poisson", "uniform")
_NEIGHBOURS = ("add-remove", "replace-one")
#: The one relation each sampling scheme is accounted under, and its natural sensitivity (in C).
_DEFAULT = {"poisson": ("add-remove", 1.0), "uniform": ("replace-one", 2.0)}
_SAMPLING_TEXT = {
    "poisson": "Poisson sampling",
    "uniform": "fixed-size batches without replacement",
}


@dataclass(frozen=True)
class Conventions:
    """How a DP-SGD run is accounted: sampling scheme, neighbouring relation, sensitivity.

    ``sensitivity`` is the L2 sensitivity of the sum of clipped per-example gradients in units of
    the clipping norm C; the noise multiplier σ is the noise std on that sum over C (Opacus, TF
    Privacy), so one step on a batch is G_{sensitivity/σ}.
    """

    sampling: str
    neighbours: str
    sensitivity: float

    @property
    def natural(self) -> bool:
        """Whether ``sensitivity`` is at least the relation's natural one (1 or 2 times C)."""
        return self.sensitivity >= _DEFAULT[self.sampling][1]

    def describe(self) -> str:
        """One line, e.g. ``neighbours: add-remove (Poisson sampling), sensitivity 1·C, noise
        std σ·C on the sum``."""
        s = (
            f"neighbours: {self.neighbours} ({_SAMPLING_TEXT[self.sampling]}), "
            f"sensitivity {self.sensitivity:g}·C, noise std σ·C on the sum "
            "(σ = noise multiplier relative to the clipping norm C)"
        )
        if not self.natural:
            nat = _DEFAULT[self.sampling][1]
            s += f"; a sensitivity below the natural {nat:g}·C is the user's claim"
        return s

    def short(self) -> str:
        """For curve names: ``poisson, add-remove, Δ=1·C``."""
        return f"{self.sampling}, {self.neighbours}, Δ={self.sensitivity:g}·C"

    def to_dict(self) -> dict[str, Any]:
        return {
            "sampling": self.sampling,
            "neighbours": self.neighbours,
            "sensitivity": self.sensitivity,
            "noise": "std σ·C on the sum of clipped per-example gradients "
            "(noise multiplier relative to the clipping norm C)",
        }


def conventions(
    sampling: str = "poisson", neighbours: str | None = None, sensitivity: float | None = None
) -> Conventions:
    """Validate and complete a DP-SGD accounting convention (see the module docstring).

    Defaults: Poisson sampling → add/remove neighbours, sensitivity 1 (in units of C); uniform
    (fixed-size batches without replacement) → replace-one, sensitivity 2. Combinations that cannot
    be accounted soundly here raise ValueError.

    Examples
    --------
    >>> conventions("uniform")
    Conventions(sampling='uniform', neighbours='replace-one', sensitivity=2.0)
    """
    if not isinstance(sampling, str) or sampling not in _SAMPLINGS:
        raise ValueError(f"sampling must be one of {_SAMPLINGS}, got {sampling!r}")
    default_rel, default_sens = _DEFAULT[sampling]
    if neighbours is None:
        rel = default_rel
    else:
        if not isinstance(neighbours, str):
            raise ValueError(f"neighbours must be one of {_NEIGHBOURS}, got {neighbours!r}")
        rel = neighbours.strip().lower().replace("_", "-").replace("/", "-").replace(" ", "-")
        if rel not in _NEIGHBOURS:
            raise ValueError(f"neighbours must be one of {_NEIGHBOURS}, got {neighbours!r}")
    if rel != default_rel:
        raise ValueError(
            f"neighbours={rel!r} with sampling={sampling!r} is not supported: fdp accounts "
            "sampling='poisson' under neighbours='add-remove' and sampling='uniform' (fixed-size "
            "batches) under neighbours='replace-one'"
        )
    sens = default_sens if sensitivity is None else check_scalar(
        "sensitivity", sensitivity, low=0.0, low_open=True
    )
    return Conventions(sampling, rel, sens)


def _check(
    noise_multiplier: float,
    sample_rate: float,
    steps: int,
    sampling: str,
    neighbours: str | None = None,
    sensitivity: float | None = None,
) -> tuple[float, float, int, Conventions]:
    s = check_scalar("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
    p = check_scalar("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
    t = check_int("steps", steps, low=1)
    return s, p, t, conventions(sampling, neighbours, sensitivity)


def _name(what: str, s: float, p: float, t: int, conv: Conventions) -> str:
    return f"{what}(σ={s:g}, p={p:g}, T={t}; {conv.short()}, noise σ·C)"


def _info(s: float, p: float, t: int, conv: Conventions) -> dict[str, Any]:
    return {
        **conv.to_dict(),
        "noise_multiplier": s,
        "sample_rate": p,
        "steps": t,
        "step_mu": conv.sensitivity / s,
        "conventions": conv.describe(),
    }


def poisson_subsampled_gaussian(
    noise_multiplier: float, sample_rate: float, *, sensitivity: float = 1.0
) -> Mixture:
    """One DP-SGD step with Poisson sampling, add direction: p G_{Δ/σ} + (1 − p) Id. Exact.

    σ is the noise std on the sum of clipped gradients over C and Δ the sensitivity in units of C
    (1 for add/remove neighbours).
    """
    s, p, _, conv = _check(noise_multiplier, sample_rate, 1, "poisson", None, sensitivity)
    return Mixture(Gaussian(conv.sensitivity / s), p)


def dpsgd_step(
    noise_multiplier: float,
    sample_rate: float,
    sampling: str = "poisson",
    *,
    neighbours: str | None = None,
    sensitivity: float | None = None,
) -> TradeOff:
    """The symmetric guarantee of one DP-SGD step, C_p(G_{Δ/σ}) = min{f_p, f_p⁻¹}** (exact).

    For both schemes one step is C_p(G_{Δ/σ}): for uniform sampling by DRS Thm 4.2; for Poisson
    it is the symmetrization of the add pair p G_{Δ/σ} + (1 − p) Id and its inverse (theory §7).
    """
    s, p, _, conv = _check(noise_multiplier, sample_rate, 1, sampling, neighbours, sensitivity)
    return Subsampled(Gaussian(conv.sensitivity / s), p)


def dpsgd(
    noise_multiplier: float,
    sample_rate: float,
    steps: int,
    sampling: str = "poisson",
    *,
    neighbours: str | None = None,
    sensitivity: float | None = None,
    tol: float = 1e-3,
) -> Bracketed:
    """The f-DP curve of DP-SGD with a certified bracket (see the module docstring).

    Parameters
    ----------
    noise_multiplier : float
        σ > 0: the std of the Gaussian noise added to the SUM of clipped per-example gradients,
        divided by the clipping norm C (Opacus / TF Privacy convention).
    sample_rate : float
        p ∈ (0, 1]: the Poisson rate, or batch size over dataset size for ``"uniform"``.
    steps : int
        T ≥ 1.
    sampling : {"poisson", "uniform"}
        Poisson sampling, or fixed-size batches drawn without replacement.
    neighbours : {"add-remove", "replace-one"}, optional
        The neighbouring relation. Default (and the only one supported for each scheme):
        "add-remove" for Poisson, "replace-one" for uniform; other combinations raise ValueError.
    sensitivity : float, optional
        L2 sensitivity of the clipped-gradient sum in units of C: default 1 for add-remove, 2 for
        replace-one. One step on a batch is G_{sensitivity/σ}. A smaller value than the default
        is your claim about your mechanism, not something fdp can check.
    tol : float
        Target relative width of the ε bracket (passed to :func:`fdp.compose`).

    Returns
    -------
    Bracketed
        Certified bracket of the exact curve; its name and ``info`` state the conventions.

    Notes
    -----
    To reproduce Dong–Roth–Su (whose noise is 2σC on the sum, σ relative to 2C) with fixed-size
    batches, pass ``noise_multiplier=2*σ_DRS`` (or ``sensitivity=1`` with σ_DRS).

    Examples
    --------
    >>> dpsgd(1.0, 0.01, 100, "uniform", sensitivity=1.0).info["step_mu"]
    1.0
    """
    s, p, t, conv = _check(noise_multiplier, sample_rate, steps, sampling, neighbours, sensitivity)
    mu = conv.sensitivity / s
    name = _name("DP-SGD", s, p, t, conv)
    if p == 1.0:
        # every example in every step: T Gaussian steps compose to G_{√T·Δ/σ} exactly (Dong,
        # Roth, Su 2022, Cor 3.3); no subsampling, so the two directions coincide
        exact = Gaussian(math.sqrt(t) * mu)
        info = {"symmetric": True, "exact": True, "items": [(Gaussian(mu), t)],
                **_info(s, p, t, conv)}
        return Bracketed(exact, lambda: exact, name=name, info=info)  # type: ignore[arg-type, return-value]
    if conv.sampling == "uniform":
        h = compose(subsample(Gaussian(mu), p), repeat=t, numeric=True, tol=tol)
        if not isinstance(h, Bracketed):  # pragma: no cover - the engine always brackets
            raise TypeError("expected a bracketed composition")
        info = {**h.info, **_info(s, p, t, conv)}
        # (with the composition's closed-form tail bound: without it the conservative ε was ∞
        # below δ ≈ 1e-37, where the grid's truncated mass sits at +∞)
        # (the bulk grid's sides as they stand, and h's deep grid on demand)
        out = Bracketed(h._side_lower, h._side_upper, name=name, info=info, tail=h._tail,
                        refine=h._refine)
        out._tol = h._tol
        return out
    f = compose(Mixture(Gaussian(mu), p), repeat=t, numeric=True, tol=tol)
    if not isinstance(f, Bracketed):  # pragma: no cover - the engine always brackets
        raise TypeError("expected a bracketed composition")
    g = f.inverse()  # the remove direction, composed by the engine in its own right
    info = {**f.info, "symmetric": True, **_info(s, p, t, conv)}  # min{f, f⁻¹}** is symmetric
    # every remove step's loss log(dQ/d((1 − p)Q + pP)) is at most log(1/(1 − p)), so the remove
    # direction is (T log(1/(1 − p)), 0)-DP (rounded up): a cap on its ε at every δ
    cap = -t * math.log1p(-p) * (1.0 + 8.0 * UNIT_ROUNDOFF) if p < 1.0 else math.inf
    return _SymmetricMin(f, g, name=name, info=info, remove_cap=cap)


class _SymmetricMin(Bracketed):
    """min{f, g}** of two bracketed curves, with δ and ε taken directly from the parts.

    The envelope's privacy profile is max(δ_f, δ_g), so ε(δ) = max(ε_f(δ), ε_g(δ)) exactly; the
    envelopes themselves (for evaluation and plotting) are built only when needed.
    """

    def __init__(
        self, f: Bracketed, g: Bracketed, remove_cap: float = math.inf, **kw: object
    ) -> None:
        super().__init__(lambda: min_envelope(f.lower, g.lower),
                         lambda: min_envelope(f.upper, g.upper), **kw)  # type: ignore[arg-type]
        self._parts = (f, g)
        self._cap = float(remove_cap)  # a certified bound on the remove direction's ε (δ = 0)
        for part in self._parts:  # (the width warning is about the answer, not each direction)
            part._quiet = True

    def _warn_combined(self, delta: object, lo: object, hi: object, both: bool = False) -> None:
        """The width warning for the answer's bracket (the remove direction's own bracket may
        be wide where the add direction decides): where a grid was capped, or, with ``both``
        ends of a bracket query at hand, wherever it is wider than asked."""
        from .numeric import _MISSED, _promised

        tols = [p.info["capped_tol"] for p in self._parts if p.info.get("capped_tol") is not None]
        if tols:
            self._warn_width(np.asarray(delta, dtype=float), np.asarray(hi), lo=lo,
                             tol=min(tols))
            return
        asked = [p._tol for p in self._parts if p._tol is not None]
        if both and asked:
            self._warn_width(np.asarray(delta, dtype=float),
                             _promised(self._parts[0].info, delta, hi), lo=lo, tol=min(asked),
                             why=_MISSED)

    def _deepen(self, need: object = True) -> None:
        """Both directions' deep grids (see :meth:`fdp.numeric.Bracketed.deepen`)."""
        for part in self._parts:
            part._deepen(need)
        super()._deepen(need)
        self._sync()

    def _sync(self) -> None:
        """info["grid_mode"]: the directions' grids ("mixed" when a query deepened only one)."""
        modes = {p.info.get("grid_mode") for p in self._parts}
        if "grid_mode" in self.info:
            self.info["grid_mode"] = modes.pop() if len(modes) == 1 else "mixed"

    # The remove direction g rarely decides ε: where its current grid's certified value (no
    # rebuild) is already no larger than f's, the answer is f's, and g's deep grid is not built
    # (max(f, g) ≤ max(f, g's bound) = f). Only where that bound exceeds f's value is g asked
    # properly (which may rebuild it on its deep grid for a small δ).

    def _g_eps(self, delta, f_eps):  # type: ignore[no-untyped-def]
        g = self._parts[1]
        d = np.atleast_1d(np.asarray(delta, dtype=float))
        fe = np.broadcast_to(np.atleast_1d(np.asarray(f_eps, dtype=float)), d.shape)
        out = np.minimum(np.asarray(g._side_lower()._epsilon(d), dtype=float), self._cap)
        need = out > fe
        if np.any(need):
            out = np.array(out, dtype=float)
            out[need] = np.minimum(g._epsilon(d[need]), self._cap)
        return out.reshape(np.shape(delta)) if np.ndim(delta) else float(out[0])

    def _g_delta(self, eps, f_delta):  # type: ignore[no-untyped-def]
        """g's certified δ where it could exceed f's (0 beyond g's cap, where its δ is 0)."""
        g = self._parts[1]
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        fd = np.broadcast_to(np.atleast_1d(np.asarray(f_delta, dtype=float)), e.shape)
        out = np.zeros(e.shape)
        below = e < self._cap  # (beyond the cap g's δ is 0: its grid is not asked)
        if np.any(below):
            out[below] = g._side_lower()._delta(e[below])
            need = below & (out > fd)
            if np.any(need):
                out[need] = g._delta(e[need])
        return out.reshape(np.shape(eps))

    def _delta(self, eps):  # type: ignore[no-untyped-def]
        f = self._parts[0]
        eps = np.asarray(eps, dtype=float)
        fd = f._delta(eps)
        out = np.maximum(fd, self._g_delta(eps, fd))
        self._sync()
        return out

    def _epsilon(self, delta):  # type: ignore[no-untyped-def]
        fe = self._parts[0]._epsilon(delta)
        out = np.maximum(fe, self._g_eps(delta, fe))
        self._sync()
        if any(p.info.get("capped_tol") is not None for p in self._parts):
            f, g = self._parts
            lo = np.maximum(f._side_upper()._epsilon(delta),
                            np.minimum(g._side_upper()._epsilon(delta), self._cap))
            self._warn_combined(delta, lo, out)
        return out

    def epsilon_bracket(self, delta: object) -> tuple[object, object]:
        f, g = self._parts
        f_lo, f_hi = f.epsilon_bracket(delta)
        g_hi = self._g_eps(delta, f_hi)
        # (g's optimistic ε from whichever grid it holds now: a certified lower bound)
        g_lo = g._side_upper().epsilon(delta)
        self._sync()
        lo = np.maximum(f_lo, np.minimum(g_lo, self._cap))
        hi = np.maximum(f_hi, np.minimum(g_hi, self._cap))
        self._warn_combined(delta, lo, hi, both=True)
        if np.ndim(lo) == 0:
            return float(lo), float(hi)
        return lo, hi

    def delta_bracket(self, eps: object) -> tuple[object, object]:
        f, g = self._parts
        e = np.asarray(eps, dtype=float)
        f_lo, f_hi = (np.asarray(x, dtype=float) for x in f.delta_bracket(e))
        g_hi = self._g_delta(e, f_hi)
        g_lo = np.zeros(e.shape)
        below = e < self._cap
        if np.any(below):
            g_lo[below] = g._side_upper().delta(e[below])
        self._sync()
        lo = np.maximum(f_lo, g_lo)
        hi = np.maximum(f_hi, g_hi)
        if np.ndim(lo) == 0:
            return float(lo), float(hi)
        return lo, hi

    def certificate(self, delta: float) -> dict[str, object]:
        """The conservative ε at δ with what certified it (the larger of the two directions;
        the remove direction's ε is also at most T log(1/(1 − p)), its largest loss)."""
        f, g = self._parts
        cf, cg = f.certificate(delta), g.certificate(delta)
        if self._cap < cg["epsilon"]:  # type: ignore[operator]
            cg = {"epsilon": self._cap, "source": "remove-direction loss bound T·log(1/(1 − p))",
                  "grid": cg.get("grid", cg["epsilon"])}
        return cf if cf["epsilon"] >= cg["epsilon"] else cg  # type: ignore[operator]


def dpsgd_clt(
    noise_multiplier: float,
    sample_rate: float,
    steps: int,
    sampling: str = "poisson",
    *,
    neighbours: str | None = None,
    sensitivity: float | None = None,
) -> TradeOff:
    """The GDP central-limit approximation of DP-SGD: an approximation, not a bound.

    With Δ the sensitivity in units of C (defaults as in :func:`dpsgd`), one step is G_{Δ/σ}, so
    the papers' formulas (stated for G_{1/σ}) apply with σ replaced by σ/Δ:
    Poisson (BDLS Thm 5): μ = p √(T (e^{Δ²/σ²} − 1)); uniform (DRS Sec 5):
    μ = √2 p √T √(e^{Δ²/σ²} Φ(1.5Δ/σ) + 3 Φ(−0.5Δ/σ) − 2). Both can underestimate the true μ
    (and ε). The returned curve's name and ``info`` state the conventions.
    """
    s, p, t, conv = _check(noise_multiplier, sample_rate, steps, sampling, neighbours, sensitivity)
    se = s / conv.sensitivity  # the papers' σ, relative to the sensitivity
    if conv.sampling == "poisson":
        mu = p * math.sqrt(t * math.expm1(1.0 / se**2))
    else:
        from ._numerics import norm_cdf

        inner = (
            math.exp(1.0 / se**2) * float(norm_cdf(1.5 / se))
            + 3.0 * float(norm_cdf(-0.5 / se))
            - 2.0
        )
        mu = math.sqrt(2.0) * p * math.sqrt(t) * math.sqrt(max(inner, 0.0))
    out = Approximation(Gaussian(mu), name=f"CLT G_{mu:.4g} of " + _name("DP-SGD", s, p, t, conv))
    out.info = {**_info(s, p, t, conv), "mu": mu}  # type: ignore[attr-defined]
    return out

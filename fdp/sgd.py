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

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import check_int, check_scalar
from ._numerics import FLOAT_MAX, LOG_FLOAT_MAX, UNIT_ROUNDOFF
from .composition import compose
from .families import Gaussian
from .numeric import Approximation, Bracketed
from .operations import Mixture, Subsampled, min_envelope, subsample, symmetrize
from .tradeoff import PiecewiseLinear, TradeOff

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
    conv = conventions(sampling, neighbours, sensitivity)
    check_step_mu(s, conv)
    return s, p, t, conv


def check_step_mu(noise_multiplier: float, conv: Conventions) -> float:
    """One step's μ = Δ/σ (a step on its batch is G_{Δ/σ}), or a ValueError that names
    ``noise_multiplier`` where it overflows the float range (σ = 1e-320 raised from G_μ, naming
    "mu", which the caller never gave)."""
    mu = conv.sensitivity / noise_multiplier
    if not math.isfinite(mu):
        raise ValueError(
            f"noise_multiplier must be at least sensitivity/{FLOAT_MAX:.6g} = "
            f"{conv.sensitivity / FLOAT_MAX:.6g} (one step is G_{{sensitivity/"
            f"noise_multiplier}}, whose μ must be a finite float), got {noise_multiplier!r} "
            f"with sensitivity {conv.sensitivity:g}"
        )
    return mu


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
    if t == 1:
        # one step: min{f, f⁻¹}** with f = p G_μ + (1 − p) Id (Poisson add pair), whose δ and ε
        # come from f's and f⁻¹'s closed forms (symmetrize's exact profile, theory §3, §7),
        # exact to 1e-9 at every δ down to 1e-300; no engine (it read [69.79, 71.08] at
        # δ = 1e-300 for σ = 0.5, p = 0.01, where ε is 71.0794)
        step = Mixture(Gaussian(mu), p)
        h = symmetrize(step)
        if isinstance(h, Bracketed):
            info = {"symmetric": True, "exact": True, "items": [(step, 1)], **_info(s, p, t, conv)}
            return Bracketed(h._side_lower, h._side_upper, name=name, info=info,
                             closed=h._closed)
    from .tails import SampledCountBound

    closed = SampledCountBound.of_items([(Mixture(Gaussian(mu), p), t)])
    build = functools.partial(_poisson_engine, s, p, t, conv, tol, name)
    if isinstance(closed, SampledCountBound):
        # rarely sampled (T·p ≤ 4): the closed-form bounds may decide without the engine
        info = {"symmetric": True, "items": [(Mixture(Gaussian(mu), p), t)], **_info(s, p, t, conv)}
        return _ClosedFirst(closed, build, _remove_cap(p, t), tol, name=name, info=info)
    return build()


def _remove_cap(p: float, t: int) -> float:
    """Every remove step's loss log(dQ/d((1 − p)Q + pP)) is at most log(1/(1 − p)), so the
    remove direction is (T log(1/(1 − p)), 0)-DP (rounded up): a cap on its ε at every δ."""
    return -t * math.log1p(-p) * (1.0 + 8.0 * UNIT_ROUNDOFF) if p < 1.0 else math.inf


def _poisson_engine(s: float, p: float, t: int, conv: Conventions, tol: float,
                    name: str, grid_step: float | None = None) -> _SymmetricMin:
    """Poisson DP-SGD (add-remove) by the engine: the add direction composed now, the remove
    direction (f⁻¹, composed by the engine in its own right) only where a query needs it (see
    :class:`_SymmetricMin`); on a fixed ``grid_step`` if given (certified on any grid)."""
    f = compose(Mixture(Gaussian(conv.sensitivity / s), p), repeat=t, numeric=True, tol=tol,
                grid_step=grid_step)
    if not isinstance(f, Bracketed):  # pragma: no cover - the engine always brackets
        raise TypeError("expected a bracketed composition")
    info = {**f.info, "symmetric": True, **_info(s, p, t, conv)}  # min{f, f⁻¹}** is symmetric
    return _SymmetricMin(f, None, name=name, info=info, remove_cap=_remove_cap(p, t))


class _Remove:
    """The remove direction g of a :class:`_SymmetricMin`, or f⁻¹ built on first :meth:`get`."""

    def __init__(self, f: Bracketed, g: Bracketed | None) -> None:
        self.f, self.g = f, g
        if g is not None:
            g._quiet = True  # (the width warning is about the answer, not each direction)

    def get(self) -> Bracketed:
        if self.g is None:
            self.g = self.f.inverse()
            self.g._quiet = True
        return self.g


#: the screens' grid steps, in units of the add direction's (see _SymmetricMin): a coarse
#: one (a sixteenth of the discretization error's cost), then one as fine where it cannot tell
SCREEN_COARSENING = (4.0, 1.0)


class _SymmetricMin(Bracketed):
    """min{f, g}** of two bracketed curves, with δ and ε taken directly from the parts.

    The envelope's privacy profile is max(δ_f, δ_g), so ε(δ) = max(ε_f(δ), ε_g(δ)) exactly; the
    envelopes themselves (for evaluation and plotting) are built only when needed.

    ``g`` may be None: then it is f⁻¹ (the remove direction of DP-SGD and of the accountant),
    built by the engine only when a query needs it. Before building it, a query asks a *screen*:
    the certified upper bound on g's δ(ε) of :mod:`fdp.fastpath` (connect-the-dots, one tilted
    FFT power), first on a grid 4× coarser than f's (a fifth of g's cost), then on f's step
    where that cannot tell. Where a screen's δ at f's conservative ε is at most δ, g's ε(δ) is
    at most f's, so the answer is f's (max(ε_f, ε_g) = ε_f) and g is not built; for δ(ε),
    where the screen's δ is at most f's, it is. On the MNIST schedule the remove direction's ε
    is 6–30 % below the add direction's and the coarse screen settles it (ε(1e-5): 74 → 41
    ms); at σ = 2, p = 1e-3, T = 10⁶ the two are 0.3 % apart and only a fine screen would
    settle it. A two-stage add direction (:func:`fdp.pld._staged`, long dense runs) keeps the
    one-stage step for the screens (``info["screen_step"]``) and asks the coarse screen only:
    its remove direction, two-staged too, costs about what the fine screen does and answers
    for certain.
    """

    def __init__(
        self, f: Bracketed, g: Bracketed | None, remove_cap: float = math.inf, **kw: object
    ) -> None:
        #: g is f⁻¹ (built on demand): then δ_g(0) = δ_f(0), the total variation distance of the
        #: pair, which is symmetric (theory §3), and no query at ε = 0 needs g
        self._inverse_pair = g is None
        rem = _Remove(f, g)  # (the envelopes' builders hold it, not self: no reference cycle)
        super().__init__(lambda: min_envelope(f.lower, rem.get().lower),
                         lambda: min_envelope(f.upper, rem.get().upper),
                         **kw)  # type: ignore[arg-type]
        self._f, self._rem = f, rem
        self._cap = float(remove_cap)  # a certified bound on the remove direction's ε (δ = 0)
        # the screens' step grids and tilted profiles, by level (see _screen)
        self._screen_grids: dict[int, Any] = {}
        self._screen_curves: dict[tuple[int, float, float], Any] = {}
        self._screen_failed: set[int] = set()
        f._quiet = True  # (the width warning is about the answer, not each direction)

    @property
    def _g(self) -> Bracketed | None:
        """The remove direction if built, else None."""
        return self._rem.g

    @property
    def _parts(self) -> tuple[Bracketed, Bracketed]:
        """Both directions (building the remove direction if it is not yet; its screens are
        then dropped)."""
        if self._rem.g is None:
            self._screen_grids, self._screen_curves = {}, {}
        return self._f, self._rem.get()

    @property
    def _built(self) -> tuple[Bracketed, ...]:
        """The directions built so far."""
        return (self._f,) if self._g is None else (self._f, self._g)

    def _screen(self, eps: float = 0.0, level: int = 0, tail: float = 1e-30) -> Any:
        """The remove direction's certified profile on the grid of screening ``level``
        (:data:`SCREEN_COARSENING`), as a :class:`fdp.fastpath._MassCurve` tilted for queries
        at ε and above (the Chernoff tilt at ``eps``: the untilted FFT's round-off floor
        reaches 1e-5 in long runs), or None where it is not available (g given, or a step that
        does not fit the fast path). ``tail``: the composed window's Chernoff tails, whose mass
        joins the +∞ atom (so the profile stays certified for any tail; it rises by ≤ 2 tail)."""
        from .fastpath import _fast_power, _StepGrid, chernoff_theta, dyadic_step

        # (a two-stage result keeps the one-stage step for its screens, fdp.pld._staged)
        items = self._f.info.get("items")
        h = self._f.info.get("screen_step") or self._f.info.get("grid_step")
        if self._g is not None or not items or not h or level in self._screen_failed:
            return None
        # (rounded down to a short dyadic step: the screen's grid losses are then exact)
        step = dyadic_step(SCREEN_COARSENING[level] * float(h))
        try:
            grids = self._screen_grids.get(level)
            if grids is None:
                grids = [(_StepGrid(c.inverse(), step), n) for c, n in items]
                self._screen_grids[level] = grids
            theta = chernoff_theta(grids, eps)
            key = (level, theta, tail)
            hit = self._screen_curves.get(key)
            if hit is None:
                hit = _fast_power(grids, step, theta, tail)[0]
                for g, _ in grids:  # (its squares serve an accountant's epochs, not a screen)
                    g.release()
                # (one tilt per level kept: queries come in runs)
                self._screen_curves = {k: v for k, v in self._screen_curves.items()
                                       if k[0] != level}
                self._screen_curves[key] = hit
        except OverflowError:  # (a grid that does not fit the fast path: no screen)
            self._screen_failed.add(level)
            return None
        return hit

    def _screened(self, eps: np.ndarray, bound: np.ndarray) -> np.ndarray:
        """Where g is not built: True where a screen shows g's δ at ``eps`` (≥ 0, finite) is at
        most ``bound`` (the coarse screen first, the fine one where it cannot tell)."""
        out = np.zeros(eps.shape, dtype=bool)
        if self._g is not None:
            return out
        todo = np.flatnonzero(np.isfinite(eps) & (eps >= 0.0))
        # (after a two-stage add direction the remove direction costs about what the fine
        # screen does, and tells more: the coarse screen only)
        levels = 1 if "stages" in self._f.info else len(SCREEN_COARSENING)
        # (window tails of 1e-6 of the least δ asked, at most 1e-11: the screen's δ rises by
        # 2e-6 of it at most, and its window, ±11 sd at 1e-30, shrinks to ±7 sd: σ = 2,
        # p = 1e-3, T = 10⁶ screens on 2¹⁷ points, not 2¹⁸, and its bracket takes 35 ms, not 44)
        floor = float(np.min(bound[todo])) if todo.size else 0.0
        tail = min(max(1e-6 * floor, 1e-30), 1e-11)
        for level in range(levels):
            if todo.size == 0:
                break
            scr = self._screen(float(np.min(eps[todo])), level, tail)
            if scr is None:
                continue
            for i in todo:
                out[i] = scr.delta_bound(float(eps[i])) <= bound[i]
            todo = todo[~out[todo]]
        return out

    def _warn_combined(self, delta: object, lo: object, hi: object, both: bool = False) -> None:
        """The width warning for the answer's bracket (the remove direction's own bracket may
        be wide where the add direction decides): where a grid was capped, or, with ``both``
        ends of a bracket query at hand, wherever it is wider than asked."""
        from .numeric import _MISSED, _promised

        parts = self._built
        tols = [p.info["capped_tol"] for p in parts if p.info.get("capped_tol") is not None]
        if tols:
            self._warn_width(np.asarray(delta, dtype=float), np.asarray(hi), lo=lo,
                             tol=min(tols))
            return
        asked = [p._tol for p in parts if p._tol is not None]
        if both and asked:
            self._warn_width(np.asarray(delta, dtype=float), np.asarray(hi, dtype=float),
                             lo=lo, tol=min(asked), why=_MISSED,
                             scale=_promised(self._f.info, delta, hi))

    def _deepen(self, need: object = True) -> None:
        """Both directions' deep grids (see :meth:`fdp.numeric.Bracketed.deepen`; a remove
        direction not built yet is built on its own grids when a query needs it)."""
        for part in self._built:
            part._deepen(need)
        super()._deepen(need)
        self._sync()

    def _sync(self) -> None:
        """info["grid_mode"]: the directions' grids ("mixed" when a query deepened only one)."""
        modes = {p.info.get("grid_mode") for p in self._built}
        if "grid_mode" in self.info:
            self.info["grid_mode"] = modes.pop() if len(modes) == 1 else "mixed"

    # The remove direction g rarely decides ε: where the screen, or g's current grid's certified
    # value (no rebuild), is already no larger than f's, the answer is f's, and g (or its deep
    # grid) is not built (max(f, g) ≤ max(f, g's bound) = f). Only where that bound exceeds f's
    # value is g asked properly (which may rebuild it on its deep grid for a small δ).

    def _g_eps(self, delta, f_eps):  # type: ignore[no-untyped-def]
        """A certified upper bound on min(g's ε, cap) where it could exceed f's ε (elsewhere
        f's ε itself, or a smaller certified value)."""
        d = np.atleast_1d(np.asarray(delta, dtype=float))
        fe = np.array(np.broadcast_to(np.atleast_1d(np.asarray(f_eps, dtype=float)), d.shape))
        out = np.minimum(fe, self._cap)
        todo = (self._cap > fe) & ~(self._inverse_pair & (fe == 0.0))  # (ε_f = 0: see _g_delta)
        todo[todo] = ~self._screened(fe[todo], d[todo])
        if np.any(todo):
            g = self._parts[1]
            cur = np.minimum(np.asarray(g._grid_lower_epsilon(d[todo]), dtype=float),
                             self._cap)
            need = cur > fe[todo]
            if np.any(need):
                cur[need] = np.minimum(g._epsilon(d[todo][need]), self._cap)
            out[todo] = cur
        return out.reshape(np.shape(delta)) if np.ndim(delta) else float(out[0])

    def _g_delta(self, eps, f_delta):  # type: ignore[no-untyped-def]
        """g's certified δ where it could exceed f's (0 beyond g's cap, where its δ is 0;
        elsewhere a certified value at most f's)."""
        e = np.atleast_1d(np.asarray(eps, dtype=float))
        fd = np.array(np.broadcast_to(np.atleast_1d(np.asarray(f_delta, dtype=float)), e.shape))
        out = np.zeros(e.shape)
        below = e < self._cap  # (beyond the cap g's δ is 0: its grid is not asked)
        if self._inverse_pair:  # δ_{f⁻¹}(0) = δ_f(0) (total variation): f's certified value
            at0 = below & (e == 0.0)
            out[at0] = fd[at0]
            below = below & ~at0
        scr = np.zeros(e.shape, dtype=bool)
        scr[below] = self._screened(e[below], fd[below])
        out[scr] = fd[scr]
        todo = below & ~scr
        if np.any(todo):
            g = self._parts[1]
            out[todo] = g._grid_lower_delta(e[todo])
            need = todo & (out > fd)
            if np.any(need):
                out[need] = g._delta(e[need])
        return out.reshape(np.shape(eps))

    def _delta(self, eps):  # type: ignore[no-untyped-def]
        f = self._f
        eps = np.asarray(eps, dtype=float)
        fd = f._delta(eps)
        out = np.maximum(fd, self._g_delta(eps, fd))
        self._sync()
        return out

    def _epsilon(self, delta):  # type: ignore[no-untyped-def]
        fe = self._f._epsilon(delta)
        out = np.maximum(fe, self._g_eps(delta, fe))
        self._sync()
        if any(p.info.get("capped_tol") is not None for p in self._built):
            lo = self._lower_eps(delta, self._f._optimistic_eps(delta))
            self._warn_combined(delta, lo, out)
        return out

    def _lower_eps(self, delta: object, f_lo: Any) -> Any:
        """A certified lower bound on ε: f's, or g's optimistic ε from whichever grid it holds
        now where larger (only if g is built: ε ≥ ε_f alone is certified too)."""
        if self._g is None:
            return f_lo
        return np.maximum(f_lo, np.minimum(self._g._grid_upper_epsilon(delta), self._cap))

    def epsilon_bracket(self, delta: object) -> tuple[object, object]:
        f = self._f
        f_lo, f_hi = f.epsilon_bracket(delta)
        g_hi = self._g_eps(delta, f_hi)
        lo = self._lower_eps(delta, f_lo)
        self._sync()
        hi = np.maximum(f_hi, g_hi)
        self._warn_combined(delta, lo, hi, both=True)
        if np.ndim(lo) == 0:
            return float(lo), float(hi)
        return lo, hi

    def delta_bracket(self, eps: object) -> tuple[object, object]:
        f = self._f
        e = np.asarray(eps, dtype=float)
        f_lo, f_hi = (np.asarray(x, dtype=float) for x in f.delta_bracket(e))
        g_hi = self._g_delta(e, f_hi)
        g_lo = np.zeros(e.shape)
        below = e < self._cap
        if np.any(below) and self._g is not None:
            g_lo[below] = self._g._grid_upper_delta(e[below])
        self._sync()
        lo = np.maximum(f_lo, g_lo)
        hi = np.maximum(f_hi, g_hi)
        asked = [p._tol for p in self._built if p._tol is not None]
        if asked:
            self._warn_delta_width(e, lo, hi, min(asked))
        if np.ndim(lo) == 0:
            return float(lo), float(hi)
        return lo, hi

    def certificate(self, delta: float) -> dict[str, object]:
        """The conservative ε at δ with what certified it (the larger of the two directions;
        the remove direction's ε is also at most T log(1/(1 − p)), its largest loss)."""
        cf = self._f.certificate(delta)
        if self._cap <= cf["epsilon"]:  # type: ignore[operator]
            return cf  # (the remove direction's ε is at most the cap: not built for this)
        f, g = self._parts
        cg = g.certificate(delta)
        if self._cap < cg["epsilon"]:  # type: ignore[operator]
            cg = {"epsilon": self._cap, "source": "remove-direction loss bound T·log(1/(1 − p))",
                  "grid": cg.get("grid", cg["epsilon"])}
        return cf if cf["epsilon"] >= cg["epsilon"] else cg  # type: ignore[operator]


def _rebuild_closed_first(closed: Any, build: Any, cap: float, tol: float,
                          engine: _SymmetricMin | None, name: str | None,
                          info: dict[str, Any]) -> _ClosedFirst:
    return _ClosedFirst(closed, build, cap, tol, engine, name=name, info=info)


def _no_curve() -> PiecewiseLinear:  # pragma: no cover - _ClosedFirst's sides are its engine's
    raise AssertionError("_ClosedFirst takes its sides from its engine")


class _ClosedFirst(Bracketed):
    """Poisson DP-SGD (add-remove) whose example is rarely sampled (T·p ≤ 4): queries ask the
    sampled-count bounds first, and the engine (:func:`_poisson_engine`) is built only where
    they cannot answer within ``tol``, or when the curves themselves are used.

    **Claim.** ε(δ) of min{f, f⁻¹}** lies in [ε_lo, max(ε_hi, c)], with [ε_lo, ε_hi] the
    sampled-count bracket of the add direction f (:class:`fdp.tails.SampledCountBound`) and
    c = T log(1/(1 − p)) the remove direction's largest loss; δ(ε) lies in [δ_lo, δ_hi] for
    ε ≥ c. **Proof.** The profile of the envelope is max(δ_f, δ_{f⁻¹}) (theory §3), ε_{f⁻¹} ≤ c
    at every δ and δ_{f⁻¹}(ε) = 0 for ε ≥ c, so ε = max(ε_f, ε_{f⁻¹}) ∈ [ε_f, max(ε_f, c)] and
    δ = δ_f there. ∎ A query is answered so where the bracket is within ``tol`` relative (ε:
    its width over its upper end; δ: likewise); ``certificate`` then names the bound. At
    σ = 0.1, p = 1e-12, T = 1000 the engine spent 3.3 s (and 520 MB) before the bounds
    answered ε(1e-10) anyway; at σ = 1e-3, p = 0.01, T = 100, 2 s. Where the bounds cannot
    answer and the planned grid would start at its memory floor (:meth:`_sparse_bulk`), engines
    on fixed grids sized from the bounds' ε come next (:meth:`_on_grids`); the planned engine
    answers the rest.
    """

    def __init__(self, closed: Any, build: Any, cap: float, tol: float,
                 engine: _SymmetricMin | None = None, **kw: Any) -> None:
        # (the sides are the engine's, by _side_lower/_side_upper: no builder closes over self)
        super().__init__(_no_curve, _no_curve, **kw)
        self._count, self._build, self._cap = closed, build, float(cap)
        self._tol = self._width = float(tol)
        self._engine: _SymmetricMin | None = engine
        #: the engines on fixed grids, by step (None: it could not be built), see _on_grids
        self._fixed: dict[float, _SymmetricMin | None] = {}

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled by its parts (the bounds, the engine's recipe, and the engine if built)."""
        return _rebuild_closed_first, (self._count, self._build, self._cap, self._width,
                                       self._engine, self._name, self.info)

    # -- the engine, on demand
    def _full(self) -> _SymmetricMin:
        if self._engine is None:
            self._engine = self._build()
        if len(self.info) < len(self._engine.info):
            self.info.update(self._engine.info)
        return self._engine

    def _side_lower(self) -> PiecewiseLinear:
        return self._full()._side_lower()

    def _side_upper(self) -> PiecewiseLinear:
        return self._full()._side_upper()

    @property
    def _parts(self) -> tuple[Bracketed, Bracketed]:
        """The engine's two directions (built on demand)."""
        return self._full()._parts

    @property
    def _built(self) -> tuple[Bracketed, ...]:
        """The directions built so far, the planned engine's and the fixed grids' (for
        :func:`fdp.calibration._release`)."""
        built = [e._built for e in self._fixed.values() if e is not None]
        if self._engine is not None:
            built.append(self._engine._built)
        return tuple(b for bs in built for b in bs)

    def _deepen(self, need: object = True) -> None:
        if bool(np.any(np.asarray(need))):
            self._full()._deepen(need)

    #: the ε at which the sampled-count bounds give the curve's supporting lines (theory §3)
    _CURVE_EPS = np.concatenate([[0.0], np.geomspace(1e-8, 1e3, 121)])

    def _count_lines(self) -> tuple[TradeOff, TradeOff]:
        """The curves implied by the sampled-count bounds at :attr:`_CURVE_EPS`
        (:func:`fdp.from_eps_delta`: the envelope of the (ε, δ)-DP guarantees, DRS Prop 2.5
        and 2.12), with δ_hi certified above for min{f, f⁻¹}** (the count bound of f, and
        below the cap 1 − e^{ε − c} ≥ the remove direction's δ, whose losses are at most c):
        a certified lower curve; and with the count bound's δ_lo (cached)."""
        from .constructors import from_eps_delta

        hit = getattr(self, "_lines", None)
        if hit is None:
            e = self._CURVE_EPS
            hi = np.asarray(self._count.delta_upper(e), dtype=float)
            with np.errstate(over="ignore"):
                rem = -np.expm1(np.minimum(e - self._cap, 0.0)) * (1.0 + 4.0 * UNIT_ROUNDOFF)
            hi = np.minimum(np.maximum(hi, rem), 1.0)
            lo = np.clip(np.asarray(self._count.delta_lower(e), dtype=float), 0.0, 1.0)
            hit = self._lines = (from_eps_delta(e, hi), from_eps_delta(e, lo))
        return hit

    def _eval(self, alpha: np.ndarray) -> np.ndarray:
        """The certified lower curve at α: the curve implied by the sampled-count bounds'
        (ε, δ_hi) guarantees (:meth:`_count_lines`), alone where the one implied by their lower
        δ is within ``tol`` relative (or 1e-12) of it at every α asked (a rarely sampled
        example: σ = 0.1, p = 1e-12, T = 1000 built the engine for ~50 s and read
        f(0.5) = 0.437, where f(0.5) ≥ 0.5 − 1e-9), else the larger of it and the engine's
        lower curve (the maximum of certified lower curves is one)."""
        alpha = np.asarray(alpha, dtype=float)
        lines_hi, lines_lo = self._count_lines()
        f_lo = np.asarray(lines_hi(alpha), dtype=float)
        f_up = np.asarray(lines_lo(alpha), dtype=float)
        if np.all(f_up - f_lo <= self._width * f_up + 1e-12):  # (relative, or 1e-12 absolute)
            return f_lo
        return np.maximum(self._full()._eval(alpha), f_lo)

    def inverse(self) -> Bracketed:
        return self._full().inverse()

    # -- the closed bounds first
    def _eps_closed(self, d: float) -> tuple[float, float] | None:
        b = self._count
        hi = float(b.epsilon_upper(d)[0])
        if not math.isfinite(hi):
            return None
        hi = max(hi, self._cap)  # (the remove direction's ε is at most the cap)
        if hi == 0.0:
            return 0.0, 0.0
        # (the lower bound searched above hi (1 − tol) only: 0 where it is not above it)
        lo = float(b.epsilon_lower(d, hi * (1.0 - self._width))[0])
        return (lo, hi) if hi - lo <= self._width * hi else None

    def _delta_closed(self, e: float) -> tuple[float, float] | None:
        if not e >= self._cap:  # (below the cap the remove direction's δ may count)
            return None
        if e == math.inf:  # (every loss is finite: no mass at +∞)
            return 0.0, 0.0
        b = self._count
        hi = float(b.delta_upper(e)[0])
        lo = float(b.delta_lower(e)[0])
        # (no width is promised below δ = 0.5e-30, as for the engine's: δ(∞) read the least
        # subnormal against 0 and built the engine for it)
        from .numeric import DELTA_PROMISE_FLOOR

        return (lo, hi) if hi - lo <= self._width * hi or hi < DELTA_PROMISE_FLOOR else None

    # -- then engines on fixed grids, coarse to fine
    #: the fixed grids' steps: from 2^⌊log2(0.01·ε)⌋ (ε clipped to [0.01, 10]), at least
    #: FIXED_PROBE, then as the widest miss asks (2 to 16x finer a level), while a grid needs
    #: at most FIXED_MAX points
    FIXED_PROBE = 2.0**-7
    FIXED_MAX = 1 << 18

    def _on_grids(self, x: np.ndarray, ref: np.ndarray, kind: str) -> tuple[
            np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Brackets at ``x`` (δ's for ``kind`` "eps", ε's for "delta") from the engine on fixed
        grids, and which of them are within ``tol`` (ε: hi − lo ≤ tol·max(hi, 1e-3), no width
        being promised below ε = 1e-3; δ: the engine's own promise, 10·tol relative from δ =
        0.5e-30 to 0.5). ``ref``: the ε each entry is about (∞: not tried).

        The planner sizes its grid for ε at δ ≈ 1e-3, about 0 in a sparse run, and builds 2²¹
        points whatever δ is asked: fdp.dpsgd(0.3, 8e-10, 1000).epsilon(1e-12) took 21 s for
        a bracket 2e-5 wide. The sampled-count bounds give ε to within a factor of a few, and a
        grid of step 0.01·ε is then about tol narrow (0.0156 there: 4096 points, 3e-4 wide,
        0.4 s). The engine's bracket is certified on every grid, so only the cost differs; an
        entry no grid up to FIXED_MAX points decides goes to the planned engine. Returns (lo,
        hi, decided, the step that decided)."""
        import warnings

        from .numeric import DELTA_PROMISE_FLOOR
        from .pld import AccuracyWarning

        lo, hi = np.zeros(x.shape), np.full(x.shape, math.inf)
        ok = np.zeros(x.shape, dtype=bool)
        at = np.zeros(x.shape)
        live = np.isfinite(ref)
        if not live.any():
            return lo, hi, ok, at
        top = 0.01 * min(max(float(np.max(ref[live])), 0.01), 10.0)
        step = max(2.0 ** math.floor(math.log2(top)), self.FIXED_PROBE)
        span = 0.0
        while not ok[live].all():
            if span and span / step > self.FIXED_MAX:
                break
            eng = self._fixed_engine(step)
            if eng is None:
                break
            span = float(eng._f.info["grid_points"]) * step
            todo = live & ~ok
            with warnings.catch_warnings():  # (an entry too wide here goes on: no warning)
                warnings.simplefilter("ignore", AccuracyWarning)
                got = (eng.epsilon_bracket if kind == "eps" else eng.delta_bracket)(x[todo])
            lo[todo], hi[todo] = (np.atleast_1d(np.asarray(v, dtype=float)) for v in got)
            w = hi - lo
            if kind == "eps":
                good = w <= self._width * np.maximum(hi, 1e-3)
            else:
                good = (w <= 10.0 * self._width * hi) | (hi < DELTA_PROMISE_FLOOR) | (hi >= 0.5)
            at[todo & good] = step
            ok |= todo & good
            # the next step from the widest miss, as if the width were linear in the step (it
            # is between linear and quadratic), on powers of 2 (grids shared across queries)
            miss = todo & ~good & np.isfinite(hi) & (w > 0.0)
            if not miss.any():
                break
            room = self._width * (np.maximum(hi, 1e-3) if kind == "eps" else 10.0 * hi)
            shrink = min(0.5, max(1.0 / 16.0, 0.7 * float(np.min(room[miss] / w[miss]))))
            step = 2.0 ** math.floor(math.log2(step * shrink))
        return lo, hi, ok, at

    #: fixed grids are tried where the planner's ε_ref is below this (see _sparse_bulk)
    FIXED_BELOW_REF = 1e-3

    def _sparse_bulk(self) -> bool:
        """Whether the planned bulk grid aims below ε = FIXED_BELOW_REF, or starts at the memory
        floor of its step (:func:`fdp.pld.floored_bulk`): its ε_ref (about ε at δ ≈ 1e-3) is
        tiny against the ε of queries at small δ, and the planned grid goes to 2²¹ points for
        a width no query asks (ε_ref = 1.9e-5 at σ = 0.3, p = 8e-10, T = 1000; 0.025 at σ =
        0.5, p = 1e-6, T = 1.3·10⁶, where ε(1e-10) ≈ 1 took 7 s). Elsewhere the planned grid
        is cheaper than fixed ones (σ = 2, p = 1e-3, T = 1000 at δ = 1e-6: 0.03 s against
        0.7 s)."""
        from .pld import bulk_scale, floored_bulk

        got = getattr(self, "_bulk_floored", None)
        if got is None:
            items = self.info["items"]
            got = bulk_scale([(c.lower, n) for c, n in items])[2] < self.FIXED_BELOW_REF or (
                floored_bulk(items, self._width))
            self._bulk_floored = got
        return bool(got)

    def _fixed_engine(self, step: float) -> _SymmetricMin | None:
        if step not in self._fixed:
            try:
                self._fixed[step] = self._build(grid_step=step)
            except (ValueError, MemoryError):  # (a step too fine for the memory cap)
                self._fixed[step] = None
        return self._fixed[step]

    def _ref_eps(self, delta: np.ndarray) -> np.ndarray:
        """The ε a fixed grid is sized for at each δ: the count bound's upper end with the
        remove direction's cap (∞ in the far tail, δ < 1e-30: the planned deep grid's)."""
        with np.errstate(all="ignore"):
            ref = np.maximum(np.asarray(self._count.epsilon_upper(delta), dtype=float),
                             self._cap)
        ref[delta < 1e-30] = math.inf
        return ref

    def _each(self, x: Any, kind: str, full: Any) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) at every entry of ``x`` (δ's for ``kind`` "eps", ε's for "delta"):
        the closed bracket where it decides, else the fixed grids' where one decides
        (:meth:`_on_grids`), else ``full`` (the planned engine's bracket) at the rest."""
        xs = np.atleast_1d(np.asarray(x, dtype=float)).ravel()
        closed = self._eps_closed if kind == "eps" else self._delta_closed
        lo, hi = np.empty(xs.shape), np.empty(xs.shape)
        done = np.zeros(xs.shape, dtype=bool)
        for i, v in enumerate(xs):
            r = closed(float(v))
            if r is not None:
                lo[i], hi[i] = r
                done[i] = True
        if not done.all() and self._engine is None and self._sparse_bulk():
            rest = ~done
            ref = self._ref_eps(xs[rest]) if kind == "eps" else xs[rest].copy()
            glo, ghi, gok, _ = self._on_grids(xs[rest], ref, kind)
            idx = np.flatnonzero(rest)[gok]
            lo[idx], hi[idx] = glo[gok], ghi[gok]
            done[idx] = True
        if not done.all():
            rest = np.flatnonzero(~done)
            flo, fhi = full(xs[rest])
            lo[rest], hi[rest] = np.atleast_1d(flo), np.atleast_1d(fhi)
        return lo, hi

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        return self._each(delta, "eps",
                          lambda d: (d, self._full()._epsilon(d)))[1].reshape(np.shape(delta))

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        return self._each(eps, "delta",
                          lambda e: (e, self._full()._delta(e)))[1].reshape(np.shape(eps))

    def epsilon_bracket(self, delta: Any) -> tuple[Any, Any]:
        lo, hi = self._each(delta, "eps", lambda d: self._full().epsilon_bracket(d))
        if np.ndim(delta) == 0:
            return float(lo[0]), float(hi[0])
        return lo.reshape(np.shape(delta)), hi.reshape(np.shape(delta))

    def delta_bracket(self, eps: Any) -> tuple[Any, Any]:
        lo, hi = self._each(eps, "delta", lambda e: self._full().delta_bracket(e))
        if np.ndim(eps) == 0:
            return float(lo[0]), float(hi[0])
        return lo.reshape(np.shape(eps)), hi.reshape(np.shape(eps))

    def certificate(self, delta: float) -> dict[str, object]:
        r = self._eps_closed(float(delta))
        if r is not None:
            return {"epsilon": r[1], "source": self._count.name, "grid": "not built"}
        if self._engine is None and self._sparse_bulk():  # (as _each answers it)
            d = np.array([float(delta)])
            _, _, ok, at = self._on_grids(d, self._ref_eps(d), "eps")
            if ok[0]:
                eng = self._fixed[float(at[0])]
                assert eng is not None
                return {**eng.certificate(delta), "grid_step": float(at[0])}
        return self._full().certificate(delta)


def dpsgd_clt_mu(s: float, p: float, t: int, conv: Conventions) -> float:
    """μ of :func:`dpsgd_clt` (arguments checked), or ∞ where e^{Δ²/σ²} leaves the float range
    (Δ/σ ≳ 26.6; 1/(σ/Δ)² divided by zero below σ/Δ ≈ 1e-162)."""
    x = conv.sensitivity / s
    x2 = x * x  # (∞ on overflow, as the result then is)
    if x2 > LOG_FLOAT_MAX:
        return math.inf
    if conv.sampling == "poisson":
        return p * math.sqrt(t * math.expm1(x2))
    from ._numerics import norm_cdf

    inner = math.exp(x2) * float(norm_cdf(1.5 * x)) + 3.0 * float(norm_cdf(-0.5 * x)) - 2.0
    return math.sqrt(2.0) * p * math.sqrt(t) * math.sqrt(max(inner, 0.0))


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
    mu = dpsgd_clt_mu(s, p, t, conv)
    if not math.isfinite(mu):
        raise ValueError(
            f"noise_multiplier={s!r}: the CLT μ of DP-SGD, which grows as e^{{Δ²/(2σ²)}}, "
            f"overflows the float range (σ/Δ = {s / conv.sensitivity:.3g}); fdp.dpsgd bounds "
            "such a run"
        )
    out = Approximation(Gaussian(mu), name=f"CLT G_{mu:.4g} of " + _name("DP-SGD", s, p, t, conv))
    out.info = {**_info(s, p, t, conv), "mu": mu}  # type: ignore[attr-defined]
    return out

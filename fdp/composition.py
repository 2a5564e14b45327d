"""Composition f ⊗ g: exact closed forms and a certified FFT privacy-loss engine.

Closed forms (DRS Sec 3, KOV Thm 3.3, theory §4):

- G_{μ₁} ⊗ … ⊗ G_{μ_n} = G_{√(Σμ_i²)}; Id is the unit.
- f_{ε,0}^{⊗k} = T(Bin(k, e^ε/(1+e^ε)), Bin(k, 1/(1+e^ε))) (KOV Thm 3.3), computed in log space so
  k up to 10⁶ and beyond works; f_{ε,δ} = f_{ε,0} ⊗ f_{0,δ}.
- f ⊗ f_{0,δ}(α) = (1 − δ) f(α/(1 − δ)) for α ≤ 1 − δ, else 0.
- Products of small discrete curves (from_distributions, randomized response, …) are exact products
  of the underlying distributions.

Everything else goes through the certified FFT engine of :mod:`fdp.pld` (:func:`compose` with
``numeric=True`` forces it). In short: each curve's privacy-loss distribution is discretized twice
on a common grid, pessimistically (connect the dots) and optimistically (chords lowered by a
certified gap bound, then convexified). Both discretizations are exact at grid points, so their
FFT compositions bracket the exact product with a width that grows like n h², not n h. The grid
is aligned with the point masses of the loss, and its step is chosen from a predicted width.
See :mod:`fdp.pld` for the details, and for the δ range over which the result is accurate.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ._checks import check_int, check_scalar
from ._numerics import TINY, UNIT_ROUNDOFF, add_up_array, log_binomial_terms
from .constructors import _named
from .families import EpsDelta, Gaussian, Identity
from .pld import compose_numeric
from .tradeoff import (
    BaseBinsMixin,
    LossBins,
    PiecewiseLinear,
    TradeOff,
    TwinOfBase,
    inherit_twin,
)

__all__ = ["compose", "DeltaMix", "kov"]

#: largest number of outcomes for which products of discrete curves are formed exactly
EXACT_PRODUCT_LIMIT = 200_000
#: total outcomes formed by an exact product before the engine takes over
EXACT_WORK_LIMIT = 5_000_000


# ---------------------------------------------------------------------------------- closed forms
class DeltaMix(TwinOfBase, BaseBinsMixin, TradeOff):
    """f ⊗ f_{0,δ}: (1 − δ) f(α/(1 − δ)) on [0, 1 − δ], 0 beyond (DRS Sec 3, theory §4). Exact.

    In privacy-loss terms, with probability δ the loss is +∞, otherwise it is f's loss; so
    δ'(ε) = δ + (1 − δ) δ_f(ε).

    Examples
    --------
    >>> h = DeltaMix(Gaussian(1.0), 1e-6)
    >>> round(h(0.1), 6)
    0.610855
    """

    def __init__(self, base: TradeOff, delta: float) -> None:
        self.base = base
        self.delta_ = check_scalar("delta", delta, low=0.0, high=1.0)
        self.kind = base.kind

    def _eval(self, alpha: np.ndarray) -> np.ndarray:
        d = self.delta_
        if d >= 1.0:
            return np.zeros_like(alpha)
        x = np.minimum(alpha / (1.0 - d), 1.0)
        return np.where(alpha <= 1.0 - d, (1.0 - d) * np.asarray(self.base(x)), 0.0)

    @property
    def lower(self) -> TradeOff:
        return self if self.kind == "exact" else DeltaMix(self.base.lower, self.delta_)

    @property
    def upper(self) -> TradeOff:
        return self if self.kind == "exact" else DeltaMix(self.base.upper, self.delta_)

    def inverse(self) -> DeltaMix:
        """(f ⊗ f_{0,δ})⁻¹ = f⁻¹ ⊗ f_{0,δ} (DRS Prop 3.2)."""
        return DeltaMix(self.base.inverse(), self.delta_)

    @property
    def is_symmetric(self) -> bool:
        return self.base.is_symmetric

    #: its optimistic twin (:class:`~fdp.tradeoff.TwinOfBase`) is f's twin ⊗ f_{0,δ}
    _twin_param = "delta_"

    @property
    def _rounds_up(self) -> bool:
        """Whether δ' is rounded up (less privacy: an exact curve or a pessimistic side) or
        down (the optimistic side of a bracket)."""
        return not self._optimistic and getattr(self.base, "_side", "lower") != "upper"

    def _delta(self, eps: np.ndarray) -> np.ndarray:
        """δ + (1 − δ) δ_f(ε), rounded toward this curve's side: where δ_f is far below an ulp
        of δ (G_{0.3} at ε = 60 next to δ = 0.1), rounding to nearest read δ'(ε) = δ, which
        is below the truth and claimed (60, 0.1)-DP while ε(0.1) = ∞."""
        d = self.delta_
        df = np.asarray(self.base.delta(eps), dtype=float)
        x = (1.0 - d) * df
        if self._rounds_up:  # (a positive δ_f stays positive: (1 − δ)·2⁻¹⁰⁷⁴ rounds to 0)
            x = np.where(df > 0.0, np.maximum(x * (1.0 + 4.0 * UNIT_ROUNDOFF), TINY), x)
            return np.minimum(add_up_array(d, x), 1.0)
        return -add_up_array(-d, -x * (1.0 - 4.0 * UNIT_ROUNDOFF))

    def _epsilon(self, delta: np.ndarray) -> np.ndarray:
        d = self.delta_
        out = np.full(delta.shape, np.inf)
        ok = delta >= d
        if d < 1.0 and ok.any():
            # (δ − d is exact near d, Sterbenz; the quotient's rounding goes to the side that
            # makes ε larger for a pessimistic answer, smaller for an optimistic one)
            r = 4.0 * UNIT_ROUNDOFF if self._rounds_up else -4.0 * UNIT_ROUNDOFF
            inner = np.clip((delta[ok] - d) / (1.0 - d) * (1.0 - r), 0.0, 1.0)
            out[ok] = self.base.epsilon(inner)
        return out

    def _loss_bins(self, edges: np.ndarray) -> LossBins:
        return self._scaled_bins(self.base._loss_bins(edges))

    def _engine_bins(self, edges: np.ndarray, side: str) -> LossBins | None:
        """The base's bins for the engine's ``side`` (where its masses or losses carry errors,
        :meth:`fdp.tradeoff.PiecewiseLinear._engine_bins`; None where not), scaled by 1 − δ:
        that scale is the truth's too, so each side stays on its side. (Before, the base's
        exact bins: compose(poisson_subsample(f, 0.5).add, EpsDelta(0, 1e-3)) of from_masses
        with ρ = 1e-8 composed read δ(0.2)'s upper end 0.106613728023 for the exact
        0.106613728920; tests/test_engine_mixture_err.py.)"""
        from .pld import _side_bins, _sided

        if not _sided(self.base):
            return None
        return self._scaled_bins(_side_bins(self.base, edges, side))

    def _scaled_bins(self, b: LossBins) -> LossBins:
        """This curve's bins from the base's on the same edges: masses times 1 − δ, +δ at +∞."""
        s = 1.0 - self.delta_
        return LossBins(
            p=s * b.p, q=s * b.q, p_below=s * b.p_below, q_below=s * b.q_below,
            p_above=s * b.p_above, q_above=s * b.q_above, q_inf=self.delta_ + s * b.q_inf,
            loss_lo=b.loss_lo, loss_hi=b.loss_hi,
        )

    def _atoms(self) -> np.ndarray | None:
        return self.base._atoms()

    def _kinks(self) -> np.ndarray:
        return (1.0 - self.delta_) * self.base._kinks()

    def __repr__(self) -> str:
        return f"{self.base!r} ⊗ EpsDelta(eps=0, delta={self.delta_:.6g})"

    def _label(self) -> str:
        return f"{self.base._label()} $\\otimes f_{{0,{self.delta_:.3g}}}$"


def _delta_mix_pl(f: PiecewiseLinear, d: float, keep: float | None = None) -> PiecewiseLinear:
    """f ⊗ f_{0,δ} for a piecewise-linear f, as a piecewise-linear curve (exact). ``keep`` is
    1 − δ when known more precisely than from δ (δ close to 1)."""
    out = inherit_twin(_delta_mix_pl_of(f, d, keep), f)
    if not f._twin_ok and f._has_twin():
        # (an exact product's curve: the same mixture of its twin lies above f ⊗ f_{0,δ}, and
        # of its inverse's twin above the inverse, f⁻¹ ⊗ f_{0,δ})
        out._twin_build = functools.partial(_delta_mix_twin, f, d, keep, False)
        out._inverse_twin_build = functools.partial(_delta_mix_twin, f, d, keep, True)
    if f._inverse_build is not None:
        # (the mixture of an exact product's raised losses: its inverse f⁻¹ ⊗ f_{0,δ} from the
        # product's own inverse, whose losses are raised for that direction)
        out._inverse_build = functools.partial(_delta_mix_inverse, f, d, keep)
    return out  # type: ignore[no-any-return]


def _delta_mix_inverse(f: PiecewiseLinear, d: float, keep: float | None) -> PiecewiseLinear:
    """(f ⊗ f_{0,δ})⁻¹ = f⁻¹ ⊗ f_{0,δ} (f_{0,δ} is symmetric; DRS Prop 2.6)."""
    return _delta_mix_pl(f.inverse(), d, keep)


def _delta_mix_twin(f: PiecewiseLinear, d: float, keep: float | None,
                    inverse: bool) -> PiecewiseLinear:
    """The optimistic reading of f ⊗ f_{0,δ} (or of its inverse f⁻¹ ⊗ f_{0,δ}) from the twin
    of f (or of f⁻¹) (:func:`_delta_mix_pl`)."""
    return _delta_mix_pl_of(f._twin_lower(inverse), d, keep)._as_upper()  # type: ignore[no-any-return]


def _delta_mix_pl_of(f: PiecewiseLinear, d: float, keep: float | None) -> PiecewiseLinear:
    if d == 0.0:
        return f
    s = 1.0 - d if keep is None else min(keep, 1.0 - d if d < 0.5 else keep)
    if not f._bound and f._side == "lower":  # from the masses: exact, no running sums
        p, q, loss = f._masses
        # the masses' rounding: f's own, s's (1 − d to an ulp, or ``keep``, rounded down from
        # e^{log(1 − δ)k} within 8.8e-16(1 + |log s|)) and the products'. Without them
        # kov(2, 0.001, 50).delta(43.4865) read 44 ulps below the exact KOV sum (a helper's
        # hunt against mpmath)
        s_err = 8.8e-16 * (1.0 + abs(math.log(s))) if s > 0.0 else 0.0
        err = np.append(f._loss_errs(), 0.0)
        out = PiecewiseLinear.from_masses(
            np.append(s * p, d), np.append(s * q, 0.0), q_inf=d + s * f._mass_qinf,
            loss=np.append(loss, -np.inf), loss_err=err, kind=f.kind,
            mass_rtol=f._mass_rtol + s_err + 2.0 * UNIT_ROUNDOFF,
        )
        # (an atom that is δ itself is exact: ε(δ) stays the largest finite loss, not ∞; so is
        # the P-mass δ at −∞ where f has none there, the inverse's atom)
        out._exact_atom = f._mass_qinf == 0.0 or f._exact_atom and s == 1.0
        out._exact_neg_atom = not bool(np.any(np.isneginf(loss) & (p > 0)))
        return out
    a, b = f.breakpoints
    a2 = np.append(s * a, 1.0)
    b2 = np.append(s * b, 0.0)
    ac2 = np.append(1.0 - s * a, 0.0)
    bc2 = np.append(d + s * f._bc, 1.0)
    qc2 = np.append(s * f._qc, s * f._qc[-1] + s * (1.0 - f.q_inf - f._qc[-1]))
    if a2[-2] >= 1.0:
        a2, b2, ac2, bc2, qc2 = a2[:-1], b2[:-1], ac2[:-1], bc2[:-1], qc2[:-1]
    return PiecewiseLinear(
        a2, b2, alpha_c=ac2, beta_c=bc2, q_inf=d + s * f.q_inf, q_cum=qc2, kind=f.kind
    )


def kov(eps: float, delta: float, k: int) -> PiecewiseLinear:
    """Exact k-fold composition f_{ε,δ}^{⊗k} (Kairouz, Oh & Viswanath 2015, Thm 3.3). Exact.

    f_{ε,0}^{⊗k} = T(Bin(k, e^ε/(1+e^ε)), Bin(k, 1/(1+e^ε))): outcome l has loss (k − 2l)ε.
    Binomial masses are computed in log space, so k = 10⁶ works; Q-masses below the float64
    range are rounded up to the least subnormal (δ only rises, by less than 1e-323 per outcome),
    so that ε(δ) below 1e-308 still reaches the largest loss kε.

    Examples
    --------
    >>> f = kov(0.5, 0.0, 10)
    >>> round(float(f.delta(2.0)), 8)
    0.14546645
    """
    e = check_scalar("eps", eps, low=0.0)
    d = check_scalar("delta", delta, low=0.0, high=1.0)
    k = check_int("k", k, low=0)
    if k == 0 or e == 0.0:
        base: PiecewiseLinear = Identity()
    else:
        l = np.arange(k + 1, dtype=float)
        s_ = 1.0 / (1.0 + math.exp(-e))  # e^ε/(1+e^ε), to a relative u
        r_ = math.exp(-e) / (1.0 + math.exp(-e))  # 1/(1+e^ε)
        # Loader's binomial terms (see _numerics.log_binomial_terms): the gammaln sum cancels
        # terms of size k log k
        lp, rp = log_binomial_terms(k, s_, r_)
        lq, rq = log_binomial_terms(k, r_, s_)
        # losses given (ℓ = (k − 2l)ε, raised by its rounding): beyond 709 the P-masses
        # underflow, and without them the outcomes would join the +∞ atom
        u = UNIT_ROUNDOFF
        loss = (k - 2.0 * l) * e
        # s_, r_ within u each: a term s^l r^{k−l} within k u, relatively
        rtol = max(rp, rq) + (k + 4.0) * u
        base = PiecewiseLinear.from_masses(np.exp(lp), _exp_up(lq), loss=loss,
                                           loss_err=2.0 * u * np.abs(loss), mass_rtol=rtol)
    lk = k * math.log1p(-d) if d < 1.0 else -math.inf
    # 1 − (1 − δ)^k, rounded up (as in _closed_form; to nearest, kov(0.1, 1e-3, 50).delta(43)
    # read an ulp below the exact atom)
    dk = (min(-math.expm1(lk) * (1.0 + 1e-15), 1.0) if k > 1 else d) if d < 1.0 else 1.0
    # (1 − δ)^k from the log, rounded down by its relative error (see _closed_form)
    keep = math.exp(lk) * (1.0 - 4.4e-16 * (1.0 + abs(lk))) if d < 1.0 else 0.0
    out = _delta_mix_pl(base, dk, keep) if k else base
    out._name = f"EpsDelta(eps={e:.6g}, delta={d:.6g}) ** {k}"
    return out


def _exp_up(lq: np.ndarray) -> np.ndarray:
    """Q-masses e^{lq}, those that underflow (lq finite) rounded up to the least subnormal: a
    Q-mass at loss ℓ adds q (1 − e^{ε − ℓ})₊ ≥ 0 to δ(ε), so raising it errs toward less
    privacy, and an outcome kept keeps its loss. Dropped, (EpsDelta(0.01, 0) ** 2000) read
    ε(0) = 16.08 for the true kε = 20 (δ is positive up to kε, if below 1e-308)."""
    with np.errstate(under="ignore"):
        q = np.exp(lq)
    return np.where((q == 0.0) & np.isfinite(lq), TINY, q)


def _binomial_power(f: PiecewiseLinear, n: int) -> PiecewiseLinear:
    """f^{⊗n} for a curve with two outcomes (plus a +∞ atom): outcome l (l of the n draws on the
    first outcome) has masses C(n, l) p₀^l p₁^{n−l}, C(n, l) q₀^l q₁^{n−l} and loss
    l ℓ₀ + (n − l) ℓ₁ (KOV Thm 3.3 in general form). Log space: n = 10⁷ works. Exact."""
    fp, fq, fl = f._masses
    l = np.arange(n + 1, dtype=float)
    lp, rp = log_binomial_terms(n, float(fp[0]), float(fp[1]))
    lq, rq = log_binomial_terms(n, float(fq[0]), float(fq[1]))
    with np.errstate(invalid="ignore"):
        loss = np.where(l > 0, l * fl[0], 0.0) + np.where(n - l > 0, (n - l) * fl[1], 0.0)
    with np.errstate(under="ignore"):
        p = np.exp(lp)
    q = _exp_up(lq)
    fin = np.isfinite(loss)
    loss = np.where(fin, loss, np.where(np.isneginf(loss) | np.isnan(loss), -np.inf, loss))
    # the losses' rounding, charged upward (δ up: the curve is reported as a guarantee): each
    # factor's log(q_i/p_i) is within 2u(|log q_i| + |log p_i|) + u|ℓ_i| of its masses' loss,
    # and the sum l ℓ₀ + (n − l) ℓ₁ adds 4u of its terms; a given loss is within its recorded
    # bound of the mechanism's (the exponential mechanism's: without it the inverse of
    # exponential(…)^2 read ε(0) 1.5e-13 below the exact largest loss; a helper's hunt)
    u = UNIT_ROUNDOFF
    rec = f._loss_errs()
    e0, e1 = (
        2.0 * u * (abs(math.log(fq[i])) + abs(math.log(fp[i]))) + 5.0 * u * abs(fl[i])
        + float(rec[i])
        if fp[i] > 0 and fq[i] > 0 and math.isfinite(fl[i]) else 0.0
        for i in (0, 1)
    )
    loss_err = np.where(np.isfinite(loss), l * e0 + (n - l) * e1, 0.0)
    # (the masses' own +∞ atom: evaluation's q_inf also holds segments whose P-mass underflowed,
    # which f._masses keep with their losses; counting them twice gave rr(800)^3 a q_inf of 2)
    qi = f._mass_qinf
    q_inf = -math.expm1(n * math.log1p(-qi)) if qi < 1.0 else 1.0
    # p, q are the masses of outcomes without a +∞ draw: scale by P(no +∞ draw) = 1 for P and
    # (1 − q_∞)^n for Q, which the binomial terms of q already carry (q₀ + q₁ = 1 − q_∞)
    # exp(x) of a log term known to |Δx| is known to a relative |Δx| (+ exp's own ulp)
    rtol = max(rp, rq) + 4.0 * UNIT_ROUNDOFF
    return inherit_twin(PiecewiseLinear.from_masses(  # type: ignore[no-any-return]
        p, q, q_inf=q_inf, loss=loss, loss_err=loss_err, name=f"{f!r}^{n}",
        mass_rtol=rtol + f._mass_rtol * n,
    ), f)


def _optimistic_product(curves: list[tuple[PiecewiseLinear, int]]) -> PiecewiseLinear:
    """The optimistic twin of :func:`_exact_product`'s curve (its ``_as_upper``). A factor whose
    own masses have no optimistic reading (an inner exact product's: merged and rounded up)
    enters through its twin, the optimistic product of its own factors: a product of pairs
    each a post-processing of the true one is a post-processing of the true product. (Without
    it a nested product had no lower end: compose(compose(f, repeat=3), f, repeat=2) read
    ε(1e-2) ∈ [26.300040274234767, 26.300040274234767], 5.8e-14 above the exact
    26.300040274234709.)"""
    curves = [(c if c._twin_ok else c._twin_lower(), n) for c, n in curves]
    out = _exact_product(curves, optimistic=True)
    assert out is not None  # (the same sizes as the product it stands for)
    return out._as_upper()


def _optimistic_inverse_product(curves: list[tuple[PiecewiseLinear, int]]) -> PiecewiseLinear:
    """The optimistic twin of the inverse of :func:`_exact_product`'s curve:
    (⊗ f_i)⁻¹ = ⊗ f_i⁻¹, read from the factors' inverses (each with its twin)."""
    return _optimistic_product([(c.inverse(), n) for c, n in curves])


def _exact_inverse_product(curves: list[tuple[PiecewiseLinear, int]]) -> PiecewiseLinear | None:
    """The inverse of :func:`_exact_product`'s curve, (⊗ f_i)⁻¹ = ⊗ f_i⁻¹ (DRS Prop 2.6 and
    Thm 3.2), by the same product of the factors' inverses, its losses raised for this
    direction. (The product's own masses swapped, its raised losses negated, read low:
    (exponential(…) ⊗ exponential(…))⁻¹ gave δ = 0 at an ε where the exact δ is 1.3e-14, and
    ε(0) 4.8e-14 below the exact one; a helper's hunt against mpmath.) Its work is that of the
    forward product, whose merges may differ by a few outcomes: the limits are doubled."""
    return _exact_product([(c.inverse(), n) for c, n in curves], limit_scale=2)


def _exact_product(curves: list[tuple[PiecewiseLinear, int]],
                   optimistic: bool = False, limit_scale: int = 1) -> PiecewiseLinear | None:
    """Product of discrete curves by convolving their masses; None if too large (the engine
    takes over). Work is capped at EXACT_PRODUCT_LIMIT outcomes per step and EXACT_WORK_LIMIT
    in total, so this path never goes quadratic in the number of steps.

    Exact but for two roundings, both toward less privacy. Each summed loss is rounded up.
    Outcomes whose losses agree to 1e-10 are merged (the sizes stay polynomial for repeats of
    a curve whose losses are sums of a few values) into at most two, at the smallest and the
    largest of their losses ℓ_min, ℓ_max: outcome j gives the top the share
    t_j = (e^{ℓ_j} − e^{ℓ_min}) / (e^{ℓ_max} − e^{ℓ_min}) of its P-mass and t_j e^{ℓ_max − ℓ_j} of
    its Q-mass, and the bottom the rest. (Where ℓ_max − ℓ_min is within 1e-12 (1 + |ℓ_max|),
    the rounding of a sum taken in another order, the group becomes one outcome at ℓ_max; its
    chord lies at most that share of β above the curve, charged as the masses' error.) The
    outcomes are a garbling of the two (each a mixture of their likelihood ratios with its
    own), so the curve is ≤ the exact one (data processing; δ(ε) = E_P[(e^L − e^ε)₊] is
    convex in e^L). A plain merge, which sums both masses, is itself post-processing: its
    chord lay 7.9e-12 above the exact RR(1) ⊗ RR(1 + 4e-11) at α = 0.269.

    ``optimistic``: the other way, for the lower ends of the brackets (the curve's
    ``_as_upper``): each summed loss rounded down (and the factors' losses lowered by their
    recorded rounding), and a group merged plainly (post-processing: δ no larger) at its
    smallest loss (δ lower still)."""
    if len(curves) == 1 and curves[0][0]._masses[0].size == 2 and curves[0][1] > 1:
        return _binomial_power(*curves[0])
    p = np.ones(1)
    q = np.ones(1)
    loss = np.zeros(1)
    keep_inf = 0.0  # log-probability of no +∞ atom
    work = 0
    chord = 0.0  # relative excess of the whole merges (see below)
    # how far the losses move one way (toward this side): the factors' recorded errors, each
    # rounded sum (under 2u of the largest |sum|, Σ n max|ℓ| at most, per addition) and the
    # spans of the groups merged at one end. The curve's own reading needs no charge for it;
    # a curve derived from its masses that reads them the other way does (PiecewiseLinear.
    # _loss_bias): subsample(compose(T(P, Q), repeat=2), 0.9) read ε(1e-100) 7.7e-16 relative
    # below the exact one, its mixture's inverse from the raised losses negated (a hunt)
    bias, reach, spans = 0.0, 0.0, 0.0
    for f, n in curves:
        fp, fq, fl = f._masses
        errs = f._loss_errs()
        fl = fl - errs if optimistic else fl + errs
        fin = np.isfinite(fl)
        bias += n * (float(errs.max()) if errs.size else 0.0)
        reach += n * (float(np.abs(fl[fin]).max()) if fin.any() else 0.0)
        keep_inf += n * math.log1p(-f._mass_qinf) if f._mass_qinf < 1.0 else -math.inf
        for _ in range(n):
            work += p.size * fp.size
            if (p.size * fp.size > limit_scale * EXACT_PRODUCT_LIMIT
                    or work > limit_scale * EXACT_WORK_LIMIT):
                return None
            p = np.outer(p, fp).ravel()
            pos = np.outer(q > 0, fq > 0).ravel()
            with np.errstate(under="ignore"):
                q = np.outer(q, fq).ravel()
            if optimistic:  # (a Q-mass that underflowed stays 0: raised, δ would rise)
                loss = -add_up_array(-np.repeat(loss, fl.size), -np.tile(fl, loss.size))
            else:
                q = np.where(pos & (q == 0.0), TINY, q)  # (see _exp_up)
                loss = add_up_array(np.repeat(loss, fl.size), np.tile(fl, loss.size))
            # merge outcomes whose losses agree to 1e-10, pessimistically (see the docstring)
            key = np.where(np.isfinite(loss), np.round(loss, 10), loss)
            order = np.argsort(key, kind="stable")
            key, loss, p, q = key[order], loss[order], p[order], q[order]
            new = np.concatenate([[True], key[1:] != key[:-1]])
            starts = np.flatnonzero(new)
            inv = np.cumsum(new) - 1
            lmax = np.maximum.reduceat(loss, starts)
            lmin = np.minimum.reduceat(loss, starts)
            if optimistic:  # a plain merge at the smallest loss
                p, q, loss = np.add.reduceat(p, starts), np.add.reduceat(q, starts), lmin
                both = np.isfinite(lmax) & np.isfinite(lmin)
                spans += float((lmax[both] - lmin[both]).max()) if both.any() else 0.0
                continue
            with np.errstate(invalid="ignore", divide="ignore"):
                span = np.where(np.isfinite(lmax), lmax - lmin, 0.0)
                # (spans within float rounding of sums taken in another order are merged
                # whole, their chord's relative excess, at most the span, charged below)
                tight = span <= 1e-12 * np.maximum(np.abs(lmax), 1.0)
                merged = span[tight]
                chord += 2.0 * float(merged.max()) if merged.size else 0.0
                spans += float(merged.max()) if merged.size else 0.0
                span = np.where(tight, 0.0, span)
                two = (span > 0.0)[inv]
                # outcome j's shares at the group's top: t of its P-mass, s of its Q-mass
                t = np.where(two, np.expm1(loss - lmin[inv]) / np.expm1(span[inv]), 1.0)
                s = np.clip(np.where(two, t * np.exp(lmax[inv] - loss), 1.0), 0.0, 1.0)
            t = np.clip(t, 0.0, 1.0)
            hi_p, hi_q = np.bincount(inv, weights=p * t), np.bincount(inv, weights=q * s)
            lo = span > 0.0
            lo_p = np.bincount(inv, weights=p * (1.0 - t))[lo]
            lo_q = np.bincount(inv, weights=q * (1.0 - s))[lo]
            p = np.concatenate([hi_p, lo_p])
            q = np.concatenate([hi_q, lo_q])
            loss = np.concatenate([lmax, lmin[lo]])
    q_inf = -math.expm1(keep_inf) if keep_inf > -math.inf else 1.0
    name = " ⊗ ".join(f"{c!r}^{n}" if n > 1 else repr(c) for c, n in curves)
    # each mass is a product of the factors' masses (u per factor) summed over merged outcomes
    # (a relative u per addition of nonnegative terms, at most one per step, and the shares of
    # a split, within 4u: (6 steps + 4)u, plus the factors' own relative errors
    steps = sum(n for _, n in curves)
    rtol = (6.0 * steps + 4.0) * UNIT_ROUNDOFF + sum(n * c._mass_rtol for c, n in curves) + chord
    out = PiecewiseLinear.from_masses(p, q, q_inf=q_inf, loss=loss, name=name, mass_rtol=rtol)
    out._loss_bias = bias + 2.0 * UNIT_ROUNDOFF * steps * reach + spans
    if not optimistic:
        # (its merges are garblings and its sums are rounded up: no optimistic reading comes
        # from these masses, nor from a curve derived from them; its own comes from the
        # optimistic product, where every factor has one)
        out._twin_ok = False
        # (its raised losses, negated, would read its inverse low: built from the factors')
        out._inverse_build = functools.partial(_exact_inverse_product, curves)
        if all(c._has_twin() for c, _ in curves):
            out._twin_build = functools.partial(_optimistic_product, curves)
            # (its inverse ⊗ f_i⁻¹: the optimistic product of the factors' inverses)
            out._inverse_twin_build = functools.partial(
                _optimistic_inverse_product, curves)
    return out


# ---------------------------------------------------------------------------------- front end
def compose(
    *curves: TradeOff,
    repeat: int = 1,
    numeric: bool = False,
    tol: float = 1e-3,
    grid_step: float | None = None,
) -> TradeOff:
    """The tensor product f₁ ⊗ … ⊗ f_m, the whole list repeated ``repeat`` times (DRS Def 3.1).

    Adaptive composition of f_i-DP mechanisms is (f₁ ⊗ … ⊗ f_m)-DP, and tight (DRS Thm 3.2).
    Results stay in closed form where the mathematics allows (Gaussian, Identity, f_{ε,δ} repeats,
    f ⊗ f_{0,δ}, small discrete curves); everything else is composed by the certified FFT engine
    described in the module docstring and returned as a :class:`~fdp.numeric.Bracketed` curve.

    Parameters
    ----------
    *curves : TradeOff or (TradeOff, int)
        The curves to compose; a (curve, count) pair stands for ``count`` copies (as in
        :func:`fdp.compare`), and one list of curves or pairs is taken as its items.
    repeat : int, default 1
        How many times the list is repeated (``f ** n`` is ``compose(f, repeat=n)``); the cost
        of the numeric engine barely depends on it.
    numeric : bool, default False
        Force the numeric engine even where a closed form exists (for comparisons and tests).
    tol : float, default 1e-3
        Accuracy target of the numeric engine: relative width of the certified ε bracket (at
        the default, ≤ 0.1 %) and 10·tol relative width of the δ(ε) bracket (a δ query
        rebuilds the grid where the first one misses it; ``delta_bracket`` warns where no grid
        that fits in memory meets it; see :mod:`fdp.pld` for the floor at large n). It
        chooses the grid step; the bracket is certified whatever it is.
    grid_step : float, optional
        The loss-grid spacing h; overrides ``tol`` (the result is certified for any h; ``tol``
        only chooses h).

    Returns
    -------
    TradeOff
        Exact (closed form) or a Bracketed curve with ``.lower ≤ exact ≤ .upper``.

    Examples
    --------
    >>> import fdp
    >>> (fdp.Gaussian(0.3) @ fdp.Gaussian(0.4)).mu
    0.5
    >>> h = fdp.compose(fdp.Laplace(0.1), repeat=100)
    >>> lo, hi = h.epsilon_bracket(1e-6)
    >>> bool(0 < hi - lo < 0.01), round(float(hi), 2)
    (True, 4.69)
    >>> fdp.compose((fdp.Gaussian(0.3), 4), (fdp.Gaussian(0.8), 1))
    Gaussian(mu=1)
    """
    pairs = _counted(curves)
    repeat = check_int("repeat", repeat, low=0)
    tol = check_scalar("tol", tol, low=0.0, low_open=True)
    if grid_step is not None:
        grid_step = check_scalar("grid_step", grid_step, low=1e-9, high=1.0)

    # group equal curves: a curve repeated n times is one FFT power, not n products
    items = grouped([(c, k * repeat) for c, k in pairs])
    if not items:
        return Identity()
    if len(items) == 1 and items[0][1] == 1 and not numeric:
        return items[0][0]
    if not numeric:
        closed = _closed_form(items)
        if closed is not None:
            return closed
    return compose_numeric(items, tol=tol, grid_step=grid_step)


def grouped(pairs: list[tuple[TradeOff, int]]) -> list[tuple[TradeOff, int]]:
    """(curve, count) pairs with equal curves (:func:`same_curve`) merged into one pair whose
    count is the sum, in order of first occurrence; zero counts and identities dropped.

    ``f`` composed n times is one FFT power in the engine (:mod:`fdp.pld`), n separate ones
    if each copy is its own item: 71 randomized-response curves built one by one took 71 FFTs
    per tilt where 3 distinct ones need 3.
    """
    out: list[list[Any]] = []
    for c, n in pairs:
        for it in out:
            if same_curve(it[0], c):
                it[1] += n
                break
        else:
            out.append([c, n])
    return [(c, int(n)) for c, n in out if n > 0 and not isinstance(c, Identity)]


def same_curve(a: TradeOff, b: TradeOff) -> bool:
    """Whether two curves are the same curve, so that composing them is a power of one: the
    same object; equal by their class's ``==`` (the families compare their parameters); or
    discrete curves (:class:`~fdp.tradeoff.PiecewiseLinear`, as every mechanism builds them)
    of one class whose state agrees attribute by attribute, arrays bit for bit (a state that
    differs in anything, a cache filled on one of them say, reads as different: they are then
    composed as two curves, which is certified too).

    Examples
    --------
    >>> import fdp
    >>> rr = fdp.mechanisms.randomized_response
    >>> same_curve(rr(1.0), rr(1.0)), same_curve(rr(1.0), rr(2.0))
    (True, False)
    """
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, PiecewiseLinear):
        return _same_state(vars(a), vars(b))
    try:
        return bool(a == b)
    except Exception:  # pragma: no cover - exotic __eq__
        return False


def _same_state(x: Any, y: Any) -> bool:
    """Value equality of two attribute values: arrays bit for bit (same dtype and shape, NaN
    equal to NaN), containers item by item, numbers and strings by ``==``, anything else
    (closures, curves) by identity."""
    if x is y:
        return True
    if type(x) is not type(y):
        return False
    if isinstance(x, np.ndarray):
        return x.dtype == y.dtype and x.shape == y.shape and bool(
            np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"))
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(_same_state(x[k], y[k]) for k in x)
    if isinstance(x, (tuple, list)):
        return len(x) == len(y) and all(_same_state(u, v) for u, v in zip(x, y, strict=True))
    if isinstance(x, float):
        return x == y or (math.isnan(x) and math.isnan(y))
    if isinstance(x, (int, str, bytes, bool, complex)):
        return bool(x == y)
    return False


def _counted(curves: tuple[Any, ...]) -> list[tuple[TradeOff, int]]:
    """(curve, count) pairs from compose's arguments: curves, (curve, count) pairs (as
    :func:`fdp.compare` takes them), or one list of either."""
    args = list(curves)
    if len(args) == 1 and isinstance(args[0], (list, tuple)) and not _is_pair(args[0]):
        args = list(args[0])
    out: list[tuple[TradeOff, int]] = []
    for i, c in enumerate(args):
        if isinstance(c, TradeOff):
            out.append((c, 1))
        elif _is_pair(c):
            out.append((c[0], check_int(f"the count of curves[{i}]", c[1], low=0)))
        else:
            raise TypeError(
                f"curves[{i}] must be a TradeOff or a (TradeOff, count) pair, got "
                f"{type(c).__name__}"
            )
    return out


def _is_pair(x: Any) -> bool:
    return isinstance(x, (list, tuple)) and len(x) == 2 and isinstance(x[0], TradeOff) and (
        not isinstance(x[1], TradeOff))




def _closed_form(items: list[tuple[TradeOff, int]]) -> TradeOff | None:
    # pull out f_{0,δ} factors (and the δ part of every f_{ε,δ}): 1 − Π(1 − δ_i)^{n_i}, in log
    # space (a power of a rounded 1 − δ loses (1 − δ)^n's digits), rounded up
    log_keep = 0.0
    rest: list[tuple[TradeOff, int]] = []
    deltas: list[tuple[float, int]] = []
    for c, n in items:
        if isinstance(c, EpsDelta) and c.delta_ > 0:
            log_keep += n * math.log1p(-c.delta_) if c.delta_ < 1.0 else -math.inf
            deltas.append((c.delta_, n))
            if c.eps > 0:
                rest.append((EpsDelta(c.eps, 0.0), n))
        elif isinstance(c, DeltaMix):
            log_keep += n * math.log1p(-c.delta_) if c.delta_ < 1.0 else -math.inf
            deltas.append((c.delta_, n))
            rest.append((c.base, n))
        else:
            rest.append((c, n))
    if len(deltas) == 1 and deltas[0][1] == 1:
        # one δ: the atom is δ itself (through the log it came out 1.000000000000001e-9, and
        # compose(EpsDelta(1), EpsDelta(1, 1e-9)).epsilon(1e-9) read ∞ for the true 2)
        d = deltas[0][0]
    else:
        d = min(-math.expm1(log_keep) * (1.0 + 1e-15), 1.0) if log_keep < 0.0 else 0.0
    # the kept mass Π(1 − δ_i)^{n_i} from the log directly (1 − d keeps only d's absolute
    # precision when d is close to 1), rounded down by its relative error ≤ 4u(1 + |log|)
    keep = math.exp(log_keep) * (1.0 - 4.4e-16 * (1.0 + abs(log_keep))) if log_keep < 0.0 else 1.0
    inner: TradeOff | None
    if not rest:
        inner = Identity()
    elif all(isinstance(c, Gaussian) for c, _ in rest):
        top = max(c.mu for c, _ in rest)  # type: ignore[attr-defined]
        scaled = sum(n * (c.mu / top) ** 2 for c, n in rest) if top > 0 else 0.0  # type: ignore
        inner = Gaussian(top * math.sqrt(scaled))  # √(Σ n μ²) without overflow
    elif len(rest) == 1 and isinstance(rest[0][0], EpsDelta):
        inner = kov(rest[0][0].eps, 0.0, rest[0][1])  # type: ignore[attr-defined]
    elif len(rest) == 1 and rest[0][1] == 1:
        inner = rest[0][0]
    elif all(isinstance(c, PiecewiseLinear) and c.kind == "exact" for c, _ in rest):
        inner = _exact_product(rest)  # type: ignore[arg-type]
    else:
        inner = None
    if inner is None:
        return None
    if d == 0.0:
        return inner
    if isinstance(inner, PiecewiseLinear):
        return _named(
            _delta_mix_pl(inner, d, keep), f"{inner!r} ⊗ EpsDelta(eps=0, delta={d:.6g})"
        )
    return DeltaMix(inner, d)

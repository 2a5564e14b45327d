"""A privacy statement: what a training run's guarantee is, under which assumptions, with sources.

``fdp.report(...)`` (this module is callable) takes an :class:`fdp.Accountant`, a trade-off curve,
or DP-SGD parameters, and returns a :class:`PrivacyReport` with ``.markdown()`` and
``.to_dict()`` (JSON-ready). It states

- the **assumptions**: sampling scheme, neighbouring relation, sensitivity (in units of the
  clipping norm C) and the noise convention of every kind of step, and the accounting method;
- the **certified ε bracket** at each requested δ (lower and upper bounds on the exact ε);
- the **certified μ** (the curve is μ-GDP; for DP-SGD this is the exact strict μ = √(Σ T Δ²/σ²),
  which subsampling does not lower) and the certified **(μ, τ)**: μ-GDP except with probability
  τ, with the ε that (μ, τ) implies at each δ and the largest gap between the curve and
  G_μ ⊗ f_{0,τ} (how far the curve is from Gaussian);
- **attack risk**: the largest TPR of any membership-inference attack at FPR 1e-3, 1e-2 and 0.1,
  and the largest advantage TPR − FPR (certified upper bounds);
- **user-level** numbers for users with k records: the same for the group curve 1 − (1 − f)^{∘k};
- the **references** behind each number.

Examples
--------
>>> import fdp
>>> r = fdp.report(noise_multiplier=1.0, sample_rate=0.01, steps=1000, deltas=(1e-5,))
>>> lo, hi = r.to_dict()["epsilon"][0]["bracket"]
>>> round(lo, 2), round(hi, 2)
(1.83, 1.83)
>>> print(r.markdown().splitlines()[0])
# Privacy report
"""

from __future__ import annotations

import math
import sys
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._checks import check_int, check_scalar
from ._numerics import UNIT_ROUNDOFF as _U
from ._numerics import echo_input, round_decimal
from .numeric import Bracketed
from .tradeoff import TradeOff

__all__ = ["report", "PrivacyReport", "REFERENCES"]

#: the sources behind each number of a report
REFERENCES: dict[str, str] = {
    "fdp": "Dong, Roth & Su (2022), Gaussian Differential Privacy, JRSS-B (arXiv 1905.02383): "
    "f-DP, trade-off functions, composition (Thm 3.2), group privacy (Thm 2.14), the (ε, δ) "
    "profile δ(ε) = sup_α (1 − e^ε α − f(α)) (Prop 2.12), μ-GDP (Cor 2.13).",
    "poisson": "Poisson subsampling, add/remove neighbours: the add pair is p f + (1 − p) Id, the "
    "run min{F, F⁻¹}** (Zhu, Dong & Wang 2022, AISTATS; Bu, Dong, Long & Su 2020, "
    "arXiv 1911.11607).",
    "uniform": "Fixed-size batches without replacement, replace-one neighbours: C_p(f) "
    "(Dong, Roth & Su 2022, Thm 4.2).",
    "shuffle": "Each example once per epoch, no amplification: one epoch is G_{Δ/σ} for the "
    "replace-one sensitivity Δ, epochs compose as Gaussians (Dong, Roth & Su 2022, Thm 2.7, "
    "Cor 3.3).",
    "engine": "Certified numerical composition: connect-the-dots (Doroshenko, Ghazi, Kamath, "
    "Kumar & Manurangsi 2022) and an optimistic grid measure bracket the exact curve; FFT "
    "round-off bounded by Higham (2002), Thm 24.2 (fdp.pld).",
    "gdp": "Certified μ: the smallest μ with f ≥ G_μ (Dong, Roth & Su 2022, Prop 2.12 and "
    "Cor 2.13; fdp.gdp_mu); (μ, τ): f ≥ G_μ ⊗ f_{0,τ} (fdp.gdp_mu_delta); reporting GDP: Gomez, "
    "Kulynych et al. (2025), arXiv 2503.10945.",
    "risk": "Attack risk: a test at FPR α has TPR ≤ 1 − f(α) (Dong, Roth & Su 2022, Def 2.1); "
    "advantage sup(TPR − FPR) = δ(0) (Prop 2.12 at ε = 0; Kulynych et al. 2024, Attack-aware "
    "noise calibration for DP); low-FPR evaluation: Carlini et al. (2022).",
    "group": "Users with k records: group privacy 1 − (1 − f)^{∘k} (Dong, Roth & Su 2022, "
    "Thm 2.14); μ-GDP gives kμ-GDP (Cor 2.15); for a bracketed f, ε is also capped by the "
    "classical (kε₀, δ(ε₀) Σ_{j<k} e^{jε₀}) bound from f's own profile (which Thm 2.14 "
    "implies).",
}


def _f(x: float, side: str | None = None) -> str:
    """Four significant digits; ``side`` "up"/"down" rounds toward less privacy for a
    guarantee (an ε upper end, μ, τ, a bound on attack risk up; a lower end down)."""
    if x is None:
        return "–"
    if math.isinf(x):
        return "∞"
    if x == 0:
        return "0"
    if side is not None and math.isfinite(x):
        x = float(round_decimal(x, 4, side))  # (4 digits exactly: printed back unchanged)
    return f"{x:.4g}" if (abs(x) >= 1e-3 and abs(x) < 1e4) else f"{x:.3e}"


def _x(x: float) -> str:
    """An input (δ, an FPR): :func:`_f`'s digits where they read back as x, else exact
    (:func:`fdp._numerics.echo_input`)."""
    return _f(x) if x is None else echo_input(x, _f(x))


@dataclass
class PrivacyReport:
    """The result of :func:`report`: ``markdown()`` for people, ``to_dict()`` for machines."""

    assumptions: list[str]
    conventions: list[dict[str, Any]]
    epsilon: list[dict[str, Any]]
    mu: float
    mu_tau: dict[str, Any]
    risk: dict[str, Any]
    user_level: list[dict[str, Any]]
    references: dict[str, str]
    summary: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (infinities as ``float('inf')``)."""
        return {
            "summary": self.summary,
            "assumptions": list(self.assumptions),
            "conventions": [dict(c) for c in self.conventions],
            "epsilon": [dict(e) for e in self.epsilon],
            "mu": self.mu,
            "mu_tau": dict(self.mu_tau),
            "risk": dict(self.risk),
            "user_level": [dict(u) for u in self.user_level],
            "references": dict(self.references),
            **self.extra,
        }

    def markdown(self) -> str:
        """The report as Markdown (a title, sections and tables)."""
        out = ["# Privacy report", "", self.summary, "", "## Assumptions", ""]
        out += [f"- {a}" for a in self.assumptions]
        out += ["", "## (ε, δ): certified bracket of the exact ε", "",
                "| δ | ε lower | ε upper (the guarantee) |", "|---|---|---|"]
        for e in self.epsilon:
            lo, hi = e["bracket"]
            out.append(f"| {_x(e['delta'])} | {_f(lo, 'down')} | {_f(hi, 'up')} |")
        out += ["", "Source: " + self.references["fdp"] + " " + self.references["engine"], ""]
        mt = self.mu_tau
        out += [
            "## Gaussian DP", "",
            f"- Certified μ = {_f(self.mu, 'up')}: the curve is μ-GDP at every α, tails included. "
            "For DP-SGD this is the exact strict μ, √(Σ T Δ²/σ²): subsampling does not lower it, "
            "because a subsampled step's tail is as informative as the unsubsampled one.",
            f"- Certified (μ, τ) = ({_f(mt['mu'], 'up')}, {_f(mt['tau'], 'up')}): μ-GDP except "
            "with probability τ, i.e. f ≥ G_μ ⊗ f_(0,τ) and (ε, τ + (1 − τ) δ_μ(ε))-DP for every "
            "ε. "
            f"Largest gap f − G_μ ⊗ f_(0,τ) on a grid: {_f(mt['gap'])}.",
        ]
        for row in mt["implied"]:
            out.append(f"  - at δ = {_x(row['delta'])}, (μ, τ) implies ε ≤ {_f(row['eps'], 'up')}")
        out += ["", "Source: " + self.references["gdp"], ""]
        r = self.risk
        out += ["## Attack risk (membership inference)", "",
                "| FPR | largest TPR (certified upper bound) |", "|---|---|"]
        for row in r["tpr"]:
            out.append(f"| {_x(row['fpr'])} | {_f(row['tpr'], 'up')} |")
        out += ["", f"Largest advantage TPR − FPR: {_f(r['advantage'], 'up')} "
                f"(a Bayes attacker with prior 1/2 is right with probability at most "
                f"{_f(r['success_half'], 'up')}).", "", "Source: " + self.references["risk"], ""]
        if self.user_level:
            out += ["## User-level guarantees (k records per user)", "",
                    "| k | δ | ε upper | μ | " + " | ".join(
                        f"TPR@{_x(x['fpr'])}" for x in self.user_level[0]["tpr"]) + " |",
                    "|---|---|---|---|" + "---|" * len(self.user_level[0]["tpr"])]
            for u in self.user_level:
                for e in u["epsilon"]:
                    out.append(
                        f"| {u['k']} | {_x(e['delta'])} | {_f(e['eps'], 'up')} | "
                        f"{_f(u['mu'], 'up')} | "
                        + " | ".join(_f(x["tpr"], 'up') for x in u["tpr"]) + " |"
                    )
            out += ["", "Source: " + self.references["group"], ""]
        out += ["## References", ""]
        out += [f"- **{k}**: {v}" for k, v in self.references.items()]
        return "\n".join(out) + "\n"

    def __str__(self) -> str:
        return self.markdown()


def _implied_eps(mu: float, tau: float, delta: float) -> float:
    from . import gdp

    if not math.isfinite(mu) or delta <= tau or tau >= 1.0:
        return math.inf
    if mu == 0.0:
        return 0.0
    # (the δ left for G_μ rounded down, so that ε errs up: three roundings, within 4u)
    return float(gdp.epsilon(mu, min((delta - tau) / (1.0 - tau) * (1.0 - 4.0 * _U), 1.0)))


def _gap(f: TradeOff, mu: float, tau: float) -> float:
    from .composition import DeltaMix
    from .families import Gaussian

    if not math.isfinite(mu):
        return math.nan
    g = DeltaMix(Gaussian(mu), tau) if tau > 0 else Gaussian(mu)
    a = np.linspace(0.0, 1.0, 2001)
    return float(np.max(np.asarray(f(a)) - np.asarray(g(a))))


def _dpsgd_settings(history: list[dict[str, Any]]) -> str:
    """The noise multipliers and sample rates of the DP-SGD steps in ``history`` (a privacy
    statement names them): each setting with its step count, or their ranges when many."""
    runs: dict[tuple[float, float, str], int] = {}
    for h in history:
        if h["kind"] == "dpsgd":
            key = (float(h["noise_multiplier"]), float(h["sample_rate"]), str(h["sampling"]))
            runs[key] = runs.get(key, 0) + int(h["count"])
    if not runs:
        return ""
    if len(runs) <= 4:
        # (inputs printed so that they read back as the floats accounted: echo_input)
        parts = [f"σ = {echo_input(s, f'{s:.6g}')}, p = {echo_input(p, f'{p:.6g}')}, {smp} "
                 f"sampling: {n} step(s)" for (s, p, smp), n in runs.items()]
        return " (" + "; ".join(parts) + ")"
    ss = [k[0] for k in runs]
    ps = [k[1] for k in runs]
    return (f" ({len(runs)} settings: σ from {min(ss):.6g} to {max(ss):.6g}, p from "
            f"{min(ps):.6g} to {max(ps):.6g})")


def report(
    source: Any = None,
    *,
    noise_multiplier: float | None = None,
    sample_rate: float | None = None,
    steps: int | None = None,
    sampling: str = "poisson",
    neighbours: str | None = None,
    sensitivity: float | None = None,
    deltas: Sequence[float] = (1e-5, 1e-6),
    fprs: Sequence[float] = (1e-3, 1e-2, 0.1),
    records_per_user: Sequence[int] | int | None = None,
    tol: float = 1e-3,
) -> PrivacyReport:
    """A privacy statement for an accountant, a curve, or DP-SGD parameters.

    Parameters
    ----------
    source : Accountant or TradeOff, optional
        What to report on. If omitted, give ``noise_multiplier``, ``sample_rate`` and ``steps``
        (DP-SGD with ``sampling``, ``neighbours``, ``sensitivity`` as in :func:`fdp.dpsgd`, and
        ``sampling="shuffle"`` as in :class:`fdp.Accountant`).
    deltas : sequence of float
        δ values for the ε bracket (default 1e-5 and 1e-6).
    fprs : sequence of float
        FPRs for the TPR bounds (default 1e-3, 1e-2, 0.1).
    records_per_user : int or sequence of int, optional
        k values for user-level numbers via ``curve.group(k)``.
    tol : float, default 1e-3
        Engine accuracy of the reported curve (relative width of the ε bracket).

    Returns
    -------
    PrivacyReport

    Notes
    -----
    Every number is certified on the side of less privacy: ε upper bounds, μ upper bounds, TPR
    and advantage upper bounds (from the certified lower curve); the ε lower bound says how
    tight the bracket is. The references are in :data:`REFERENCES`.

    Examples
    --------
    >>> import fdp
    >>> acc = fdp.Accountant().step(2.0, 0.01, steps=400, sampling="shuffle")
    >>> r = report(acc, deltas=(1e-5,), records_per_user=2)
    >>> r.to_dict()["mu"], r.to_dict()["user_level"][0]["mu"]
    (2.0, 4.0)
    """
    from .accountant import Accountant
    from .clt import gdp_mu, gdp_mu_delta
    from .risk import advantage, posterior_success, tpr

    if source is None:
        if noise_multiplier is None or sample_rate is None or steps is None:
            raise ValueError("give an Accountant or a curve, or noise_multiplier, sample_rate "
                             "and steps")
        source = Accountant().step(noise_multiplier, sample_rate, steps=steps, sampling=sampling,
                                   neighbours=neighbours, sensitivity=sensitivity)
    elif noise_multiplier is not None or sample_rate is not None or steps is not None:
        raise ValueError("give either a source (Accountant or curve) or DP-SGD parameters")
    ds = [float(d) for d in np.atleast_1d(np.asarray(deltas, dtype=float))]
    fs = [float(a) for a in np.atleast_1d(np.asarray(fprs, dtype=float))]
    for d in ds:
        if not 0.0 <= d <= 1.0:
            raise ValueError(f"deltas must lie in [0, 1], got {d!r}")
    for a in fs:
        if not 0.0 <= a <= 1.0:
            raise ValueError(f"fprs must lie in [0, 1], got {a!r}")
    check_scalar("tol", tol, low=0.0, low_open=True)
    ks: list[int] = []
    if records_per_user is not None:
        ks = [check_int("records_per_user", k, low=1)
              for k in np.atleast_1d(np.asarray(records_per_user, dtype=object))]
    refs = dict(REFERENCES)
    if isinstance(source, Accountant):
        curve = source.curve_at(tol)
        convs = source.conventions()
        assumptions = [c["conventions"] for c in convs]
        samplings = {h["sampling"] for h in source.history if h["kind"] == "dpsgd"}
        others = [h for h in source.history if h["kind"] == "curve"]
        for h in others:
            sub = "" if h["sample_rate"] is None else (
                f" on a {h['sampling']} subsample at rate {h['sample_rate']:g}"
            )
            assumptions.append(
                f"composed mechanism {h['curve']!r}{sub}, {h['count']} time(s): the claim that it "
                f"is f-DP for every ordered pair of {source.neighbours or 'neighbouring'} datasets"
            )
        summary = (
            f"{source.steps} DP-SGD step(s){_dpsgd_settings(source.history)}"
            + (f" and {sum(h['count'] for h in others)} other mechanism run(s)" if others else "")
            + f", neighbouring relation: {source.neighbours or 'unspecified'}."
        )
        what = repr(source)
    elif isinstance(source, TradeOff):
        curve = source
        convs = []
        samplings = set()
        assumptions = [
            f"the mechanism is f-DP for the given curve {source!r} ({source.kind}); its "
            "neighbouring relation and sensitivity are those under which that curve was derived"
        ]
        summary = f"Trade-off curve {source!r}."
        what = repr(source)
    else:
        raise TypeError(f"source must be an Accountant or a TradeOff, got {type(source).__name__}")
    if curve.kind == "approximation":
        assumptions.append("the curve is an APPROXIMATION (e.g. CLT): no number below is a bound")
    else:
        assumptions.append(
            "accounting: exact f-DP composition (closed form, or the certified FFT engine whose "
            "lower and upper curves bracket the exact curve); every guarantee below is computed "
            "from the certified lower curve (less privacy)"
        )
    for s in ("poisson", "uniform", "shuffle"):
        if s not in samplings:
            refs.pop(s, None)
    if isinstance(curve, Bracketed):
        # one bracket for every number of the report: μ, the risk rows and group privacy take
        # the curve's sides, which builds an engine result's deep grid (fdp.numeric.Bracketed)
        curve.deepen()
    eps_rows = []
    for d in ds:
        if curve.kind == "approximation":
            lo = hi = curve.epsilon(d)
        else:
            lo, hi = curve.epsilon_bracket(d)
        eps_rows.append({"delta": d, "bracket": [float(lo), float(hi)], "eps": float(hi)})
    mu = float(gdp_mu(curve))
    m_t, tau = gdp_mu_delta(curve)
    mu_tau = {
        "mu": float(m_t), "tau": float(tau), "gap": _gap(curve, float(m_t), float(tau)),
        "implied": [{"delta": d, "eps": _implied_eps(float(m_t), float(tau), d)} for d in ds],
    }
    t = np.atleast_1d(tpr(curve, fs))
    risk = {
        "advantage": advantage(curve),
        "success_half": float(posterior_success(curve, 0.5)),
        "tpr": [{"fpr": a, "tpr": float(x)} for a, x in zip(fs, t, strict=True)],
    }
    users = []
    for k in ks:
        g = curve.group(k)
        tk = np.atleast_1d(tpr(g, fs))
        users.append({
            "k": k,
            "mu": k * mu,
            "epsilon": [{"delta": d, "eps": float(g.epsilon(d))} for d in ds],
            "tpr": [{"fpr": a, "tpr": float(x)} for a, x in zip(fs, tk, strict=True)],
            "advantage": advantage(g),
        })
    return PrivacyReport(
        assumptions=assumptions, conventions=convs, epsilon=eps_rows, mu=mu, mu_tau=mu_tau,
        risk=risk, user_level=users, references=refs, summary=summary,
        extra={"source": what, "tol": tol},
    )


class _CallableModule(types.ModuleType):
    """``fdp.report`` is this module and also callable: ``fdp.report(acc)`` is :func:`report`."""

    def __call__(self, *args: Any, **kwargs: Any) -> PrivacyReport:
        return report(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

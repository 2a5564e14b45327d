"""Accountants side by side: ε(δ) of one workload by every method, each labelled bound or estimate.

:func:`compare` takes a workload — mechanisms (trade-off curves) with counts, or DP-SGD parameters —
and returns a :class:`Comparison`: one :class:`Row` per method with ε at the requested δ, whether
the number is a certified bound or an approximation, and the curve itself (for :mod:`fdp.plot`).

Methods (all implemented in fdp; no peer library at run time):

- ``exact``: the f-DP composition (closed form, or the certified FFT engine with its bracket);
  ε is an upper bound and ``eps_lower`` a certified lower bound on the exact value.
- ``gdp_clt``: the GDP central limit theorem (DRS Thm 3.5; BDLS for DP-SGD). An approximation:
  it can underestimate ε.
- ``edgeworth``: the degree-2 Edgeworth expansion (Zheng, Dong, Long & Su 2020). An approximation.
- ``rdp``: Rényi DP accounting converted with BBGHS Thm 21. A certified (looser) upper bound. For
  DP-SGD: Mironov, Talwar & Zhang 2019 (Poisson, add/remove), Wang, Balle & Kasiviswanathan
  2019 Thm 9 (fixed-size batches, replace-one), each for the same step G_{Δ/σ} as ``exact``.
- ``advanced``: advanced composition (Dwork, Rothblum & Vadhan 2010) of per-mechanism (ε, δ)
  guarantees, with the δ split optimized. A certified (loosest) upper bound.

DP-SGD conventions are those of :mod:`fdp.sgd` (noise multiplier σ = noise std on the sum of
clipped gradients over the clipping norm C; ``sampling``, ``neighbours``, ``sensitivity``), and the
comparison states them in its text and ``to_dict``.

Examples
--------
>>> import fdp
>>> c = compare([(fdp.Gaussian(0.5), 10)], delta=1e-5, methods=["exact", "advanced"])
>>> [r.method for r in c.rows]
['exact', 'advanced']
>>> c.row("exact").eps <= c.row("advanced").eps
True
"""

from __future__ import annotations

import importlib
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._checks import check_int, check_scalar
from ._numerics import round_decimal
from .composition import compose
from .tradeoff import TradeOff

__all__ = ["compare", "Comparison", "Row"]

ALL_METHODS = ("exact", "gdp_clt", "edgeworth", "rdp", "advanced")


@dataclass(frozen=True)
class Row:
    """One method's answer: ε at ``delta`` (and a certified lower ε where available)."""

    method: str
    eps: float
    kind: str  # "certified upper bound", "exact", or "approximation"
    eps_lower: float | None = None
    note: str = ""
    curve: TradeOff | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "eps": self.eps,
            "eps_lower": self.eps_lower,
            "kind": self.kind,
            "note": self.note,
        }


@dataclass(frozen=True)
class Comparison:
    """The rows of :func:`compare`, with a readable ``str`` and ``to_dict`` for JSON."""

    workload: str
    delta: float
    rows: tuple[Row, ...]
    conventions: dict[str, Any] | None = None  # DP-SGD: sampling, neighbours, sensitivity, noise

    def row(self, method: str) -> Row:
        for r in self.rows:
            if r.method == method:
                return r
        raise KeyError(f"no row for method {method!r}; have {[r.method for r in self.rows]}")

    @property
    def curves(self) -> dict[str, TradeOff]:
        """The curve of each method that has one, for plotting."""
        return {r.method: r.curve for r in self.rows if r.curve is not None}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "workload": self.workload,
            "delta": self.delta,
            "rows": [r.to_dict() for r in self.rows],
        }
        if self.conventions is not None:
            out["conventions"] = dict(self.conventions)
        return out

    def __str__(self) -> str:
        head = f"{self.workload}, ε at δ = {self.delta:g}"
        lines = [head]
        if self.conventions is not None:
            lines.append(str(self.conventions["text"]))
        lines.append(f"{'method':<11} {'ε':>12} {'certified lower ε':>18}  what it is")
        for r in self.rows:
            # (a certified ε is printed rounded up, its lower bound down; approximations to
            # nearest: six digits to nearest can show less than is certified)
            side = None if r.kind == "approximation" else "up"
            lo = "" if r.eps_lower is None else _six(r.eps_lower, "down")
            note = f" ({r.note})" if r.note else ""
            lines.append(f"{r.method:<11} {_six(r.eps, side):>12} {lo:>18}  {r.kind}{note}")
        return "\n".join(lines)


def _six(x: float, side: str | None) -> str:
    """Six significant digits, rounded toward ``side`` for a finite nonzero x."""
    if side is not None and math.isfinite(x) and x != 0.0:
        x = float(round_decimal(x, 6, side))
    return f"{x:.6g}"


def _exact_row(curve: TradeOff, delta: float) -> Row:
    lo, hi = curve.epsilon_bracket(delta)
    kind = "exact" if curve.kind == "exact" else "certified upper bound"
    # (an exact curve without an optimistic reading gives its value at both ends: no bound)
    low = None if curve.kind == "exact" and not curve._has_twin() else float(lo)
    return Row("exact", float(hi), kind, eps_lower=low, note="f-DP composition", curve=curve)


def compare(
    workload: Sequence[tuple[TradeOff, int]] | None = None,
    *,
    noise_multiplier: float | None = None,
    sample_rate: float | None = None,
    steps: int | None = None,
    sampling: str = "poisson",
    neighbours: str | None = None,
    sensitivity: float | None = None,
    delta: float = 1e-5,
    methods: Sequence[str] | None = None,
) -> Comparison:
    """ε at ``delta`` for one workload by every accountant.

    Parameters
    ----------
    workload : list of (curve, count), optional
        Mechanisms and how often each runs.
    noise_multiplier, sample_rate, steps : optional
        DP-SGD instead of ``workload``: σ is the noise std on the sum of clipped per-example
        gradients over the clipping norm C (Opacus / TF Privacy convention).
    sampling, neighbours, sensitivity : optional
        DP-SGD conventions, as in :func:`fdp.sgd.dpsgd`: ``"poisson"`` (default) with
        add-remove neighbours and sensitivity 1·C, or ``"uniform"`` (fixed-size batches without
        replacement) with replace-one neighbours and sensitivity 2·C. Only used for DP-SGD.
    delta : float
        The δ at which ε is reported.
    methods : list of str, optional
        Subset of ``("exact", "gdp_clt", "edgeworth", "rdp", "advanced")``; default all that
        apply to the workload (RDP needs mechanisms it knows: Gaussian, Laplace, randomized
        response, DP-SGD).

    Returns
    -------
    Comparison
    """
    d = check_scalar("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    if isinstance(methods, str) or not (methods is None or isinstance(methods, Sequence)):
        raise TypeError(f"methods must be a list of names from {ALL_METHODS}, got {methods!r}")
    meths = list(ALL_METHODS if methods is None else methods)
    for m in meths:
        if m not in ALL_METHODS:
            raise ValueError(f"methods must be among {ALL_METHODS}, got {m!r}")
    if workload is None:
        if noise_multiplier is None or sample_rate is None or steps is None:
            raise ValueError(
                "give a workload [(curve, count), ...] or noise_multiplier, sample_rate and steps"
            )
        dp = importlib.import_module("fdp.sgd")
        s = check_scalar("noise_multiplier", noise_multiplier, low=0.0, low_open=True)
        p = check_scalar("sample_rate", sample_rate, low=0.0, high=1.0, low_open=True)
        t = check_int("steps", steps, low=1)
        conv = dp.conventions(sampling, neighbours, sensitivity)
        name = f"DP-SGD (σ = {s:g}, p = {p:g}, T = {t}, {conv.sampling} sampling)"
        rows = _dpsgd_rows(s, p, t, conv, d, meths)
        return Comparison(
            workload=name,
            delta=d,
            rows=tuple(rows),
            conventions={**conv.to_dict(), "text": conv.describe()},
        )
    if (sampling, neighbours, sensitivity) != ("poisson", None, None):
        raise ValueError(
            "sampling, neighbours and sensitivity apply to DP-SGD (noise_multiplier, "
            "sample_rate, steps), not to a workload of curves"
        )
    if isinstance(workload, (str, bytes, TradeOff)) or not isinstance(workload, Sequence):
        raise TypeError(
            f"workload must be a list of (curve, count) pairs, got {type(workload).__name__}"
        )
    if len(workload) == 0:
        raise ValueError("workload must contain at least one (curve, count) pair, got none")
    items = []
    for i, item in enumerate(workload):
        if not (isinstance(item, (tuple, list)) and len(item) == 2):
            raise TypeError(f"workload[{i}] must be a (TradeOff, int) pair, got {item!r}")
        c, n = item
        if not isinstance(c, TradeOff):
            raise TypeError(f"workload[{i}] must be (TradeOff, int), got {type(c).__name__}")
        items.append((c, check_int(f"workload[{i}] count", n, low=0)))
    name = " ⊗ ".join(f"{c!r}^{n}" if n > 1 else repr(c) for c, n in items)
    rows = _workload_rows(items, d, meths)
    return Comparison(workload=name, delta=d, rows=tuple(rows))


def _workload_rows(items: list[tuple[TradeOff, int]], d: float, meths: list[str]) -> list[Row]:
    rows: list[Row] = []
    curves = [c for c, n in items for _ in range(1)]
    counts = [n for _, n in items]
    if "exact" in meths:
        h = compose(*[c for c, _ in items], repeat=1) if all(n == 1 for n in counts) else None
        if h is None:
            h = _compose_counts(items)
        rows.append(_exact_row(h, d))
    if "gdp_clt" in meths or "edgeworth" in meths:
        from . import clt

        # (every item with its count: from the first item alone, a 6000 G_0.01 + 5000 G_1
        # workload read ε = 3.26 for the true 2800.9; a hunt)
        if "gdp_clt" in meths:
            try:
                r = clt.clt(*curves, counts=counts)
                rows.append(
                    Row(
                        "gdp_clt",
                        float(r.approx.epsilon(d)),
                        "approximation",
                        note=f"μ = {r.mu:.4g}",
                        curve=r.approx,
                    )
                )
            except (ValueError, TypeError) as exc:
                rows.append(Row("gdp_clt", math.nan, "not applicable", note=str(exc)))
        if "edgeworth" in meths:
            try:
                with warnings.catch_warnings():  # (said in the row's note instead)
                    warnings.filterwarnings("ignore", "the Edgeworth expansion", UserWarning)
                    e = clt.edgeworth(*curves, counts=counts)
                note = (f"the expansion is no distribution here: a spurious atom of "
                        f"{e.q_inf:.3g} at α = 0" if e.q_inf > 0.0 else "")
                rows.append(Row("edgeworth", float(e.epsilon(d)), "approximation", note=note,
                                curve=e))
            except (ValueError, TypeError) as exc:
                rows.append(Row("edgeworth", math.nan, "not applicable", note=str(exc)))
    if "rdp" in meths:
        rows.append(_rdp_workload_row(items, d))
    if "advanced" in meths:
        rows.append(_advanced_row(items, d))
    return rows


def _compose_counts(items: list[tuple[TradeOff, int]]) -> TradeOff:
    if len(items) == 1:
        return compose(items[0][0], repeat=items[0][1])
    parts = [compose(c, repeat=n) for c, n in items]
    return compose(*parts)


def _rdp_workload_row(items: list[tuple[TradeOff, int]], d: float) -> Row:
    from . import rdp

    try:
        orders = rdp.DEFAULT_ORDERS
        rho = sum(n * rdp.of_curve(c, orders) for c, n in items)
        eps = float(rdp.to_epsilon(rho, orders, d))
        return Row(
            "rdp",
            eps,
            "certified upper bound",
            note="BBGHS Thm 21",
            curve=rdp.to_tradeoff(rho, orders),
        )
    except (TypeError, ValueError, AttributeError) as exc:
        return Row("rdp", math.nan, "not applicable", note=str(exc))


def _advanced_row(items: list[tuple[TradeOff, int]], d: float) -> Row:
    if len(items) != 1:
        return Row("advanced", math.nan, "not applicable", note="needs one repeated mechanism")
    c, n = items[0]
    from .classical import advanced_for_curve

    eps = advanced_for_curve(c, n, d)
    return Row("advanced", eps, "certified upper bound", note="DRV, optimal δ split")


def _dpsgd_rows(s: float, p: float, t: int, conv: Any, d: float, meths: list[str]) -> list[Row]:
    """The rows for DP-SGD; every method accounts the same step G_{Δ/σ} under ``conv``."""
    dp = importlib.import_module("fdp.sgd")
    kw = {"neighbours": conv.neighbours, "sensitivity": conv.sensitivity}
    se = s / conv.sensitivity  # the noise relative to the sensitivity: one step is G_{1/se}
    rows: list[Row] = []
    if "exact" in meths:
        rows.append(_exact_row(dp.dpsgd(s, p, t, conv.sampling, **kw), d))
    if "gdp_clt" in meths:
        g = dp.dpsgd_clt(s, p, t, conv.sampling, **kw)
        formula = (
            "μ = p√(T(e^{Δ²/σ²} − 1))"
            if conv.sampling == "poisson"
            else "μ = √2 p√T √(e^{Δ²/σ²}Φ(1.5Δ/σ) + 3Φ(−0.5Δ/σ) − 2)"
        )
        rows.append(
            Row(
                "gdp_clt",
                float(g.epsilon(d)),
                "approximation",
                note=f"{formula} = {g.mu:.4g}",
                curve=g,
            )
        )
    if "edgeworth" in meths:
        try:
            from . import clt

            step = (
                dp.poisson_subsampled_gaussian(s, p, sensitivity=conv.sensitivity)
                if conv.sampling == "poisson"
                else dp.dpsgd_step(s, p, conv.sampling, **kw)
            )
            e = clt.edgeworth(step, n=t)
            rows.append(Row("edgeworth", float(e.epsilon(d)), "approximation", curve=e))
        except (ImportError, AttributeError, TypeError, ValueError) as exc:
            rows.append(Row("edgeworth", math.nan, "not applicable", note=str(exc)))
    if "rdp" in meths:
        from . import rdp

        orders = rdp.DEFAULT_ORDERS
        if conv.sampling == "poisson":
            rho = t * rdp.subsampled_gaussian(se, p, orders)
            note = "Mironov, Talwar & Zhang 2019, Poisson/add-remove; BBGHS Thm 21"
        else:
            rho = t * rdp.subsampled_gaussian_wor(se, p, orders)
            note = (
                "Wang, Balle & Kasiviswanathan 2019 Thm 9, without replacement/replace-one; "
                "BBGHS Thm 21"
            )
        rows.append(
            Row(
                "rdp",
                float(rdp.to_epsilon(rho, orders, d)),
                "certified upper bound",
                note=note,
                curve=rdp.to_tradeoff(rho, orders),
            )
        )
    if "advanced" in meths:
        from .classical import advanced_for_curve

        # one step's symmetric guarantee C_p(G_{Δ/σ}) (both directions, both schemes; theory §7)
        step = dp.dpsgd_step(s, p, conv.sampling, **kw)
        eps = advanced_for_curve(step, t, d)
        rows.append(Row("advanced", eps, "certified upper bound", note="DRV, optimal δ split"))
    return rows

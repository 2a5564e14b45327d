r"""Plots of trade-off curves and privacy profiles (matplotlib only).

Every function takes ``ax=None`` (a new figure then) and returns the Axes; none calls
``plt.show()``. Bracketed curves draw their certified band (between ``lower`` and ``upper``) and
the conservative curve as the line; approximations are dashed; piecewise-linear curves are drawn
from their exact breakpoints. :func:`style` is a context manager with a paper style (colour-blind
safe Okabe–Ito cycle, single-column size, vector-friendly); nothing changes global rcParams.
Every curve gets a readable legend label by default (:func:`label`: ``$G_{1}$``,
``$L_{0.1}^{\otimes 10}$``, ``DP-SGD(σ=1, p=0.01, T=1000)``, ``T(P, Q) on 3 outcomes``, and
:func:`describe`'s ``curve 2 (exact, 5 breakpoints)`` for a curve without a name); pass
``labels=`` to choose your own.

matplotlib is an optional dependency (``pip install "fdp[plot]"``): it is imported only when a
function here draws, so ``import fdp`` works without it.

Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import fdp
>>> ax = tradeoff(fdp.Gaussian(1.0), fdp.EpsDelta(1.0, 1e-3))
>>> ax.get_xlabel()
'type I error α'
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .tradeoff import PiecewiseLinear, TradeOff

__all__ = ["tradeoff", "privacy_profile", "style", "label", "describe", "OKABE_ITO", "curve_xy"]

#: Okabe–Ito colour-blind-safe palette.
OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]

_PAPER = {
    "figure.figsize": (3.4, 3.0),
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 7.5,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "lines.linewidth": 1.4,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "savefig.dpi": 200,
    "pdf.fonttype": 42,
    "svg.fonttype": "none",
}


@contextlib.contextmanager
def style(**overrides: Any) -> Iterator[None]:
    """A paper style for the duration of a ``with`` block (user overrides win)."""
    mpl = _matplotlib()
    from cycler import cycler

    params: Any = dict(_PAPER)
    params["axes.prop_cycle"] = cycler(color=OKABE_ITO)
    params.update(overrides)
    with mpl.rc_context(params):
        yield


def _matplotlib() -> Any:
    """Import matplotlib, or say which extra installs it."""
    try:
        import matplotlib
    except ImportError as e:  # pragma: no cover - exercised only without the plot extra
        raise ImportError(
            'fdp.plot needs matplotlib: pip install "fdp[plot]" (or the dev extra)'
        ) from e
    return matplotlib


# Readable forms of the reprs that can appear inside curve names (numeric results, CLT fits).
_REPR_TO_TEX = [
    # an anonymous piecewise-linear curve inside a name, e.g. group(PiecewiseLinear(...), 2)
    (re.compile(r"PiecewiseLinear\((\d+) breakpoints, kind='(\w+)'\)"), r"\2 curve"),
    (re.compile(r"Gaussian\(mu=([^)]*)\)"), r"$G_{\1}$"),
    (re.compile(r"Laplace\(mu=([^)]*)\)"), r"$L_{\1}$"),
    (re.compile(r"EpsDelta\(eps=([^,]*), delta=([^)]*)\)"), r"$f_{\1,\2}$"),
    (re.compile(r"Identity\(\)"), r"$\\mathrm{Id}$"),
    (re.compile(r"\}\$\^(\d+)"), r"}^{\\otimes \1}$"),  # $L_{0.1}$^10 -> $L_{0.1}^{⊗ 10}$
    (re.compile(r"\}\$ \*\* (\d+)"), r"}^{\\otimes \1}$"),  # kov: $f_{1,0}$ ** 3
    (re.compile(r"(DP-SGD\([^;)]*);[^)]*\)"), r"\1)"),  # conventions belong in the caption
    (re.compile(r"numeric\[([^\[\]]*)\]"), r"\1"),  # the engine's results, also inside names
    (re.compile(r"^subsample\((.*), ([^,()]+)\)$"), r"$C_{\2}$(\1)"),  # as Subsampled's label
    (re.compile(r"^Edgeworth\[(.*)\]$"), r"Edgeworth \1"),
    (re.compile(r"\bG_([0-9.]+)"), r"$G_{\1}$"),  # "CLT G_0.4145 of ..."
    (re.compile(r"\beps="), "ε="),  # other reprs inside names, e.g. a mechanism's OUE(eps=1)
    (re.compile(r"\bdelta="), "δ="),
]
# a whole label that is one constructor-style repr, e.g. PiecewiseLinear(3 breakpoints, ...) or
# a user's MyCurve(a=1); names built from reprs ("A(x) ⊗ B(y)", "group(A(x), 2)") are not
_BARE_REPR = re.compile(r"^[A-Z]\w*\([^()]*\)$")


def label(f: TradeOff, index: int | None = None) -> str:
    r"""A readable legend label for a curve.

    Its mathtext name where it has one (``$G_{1}$``, ``$C_{0.1}$($G_{1}$)``), readable forms
    of composed names (``$L_{0.1}^{\otimes 10}$``, ``$f_{1,0}^{\otimes 3}$``), the name a
    constructor or mechanism gave it (``T(P, Q) on 3 outcomes``, ``OUE (ε=2)``), and for a curve
    without a name :func:`describe`'s ``curve N (exact, 5 breakpoints)``, never an internal
    repr.

    Parameters
    ----------
    f : TradeOff
        The curve.
    index : int, optional
        Its position in the plot (0-based); anonymous curves are numbered from 1 with it.

    Examples
    --------
    >>> import fdp
    >>> label(fdp.Gaussian(1.0))
    '$G_{1}$'
    >>> print(label(fdp.Laplace(0.1) ** 10))
    $L_{0.1}^{\otimes 10}$
    >>> label(fdp.from_points([0, 0.5, 1], [1, 0.2, 0]))
    'interpolation of 3 points'
    >>> label(fdp.PiecewiseLinear.from_points([0, 0.5, 1], [1, 0.2, 0]), index=1)  # no name
    'curve 2 (exact, 3 breakpoints)'
    """
    own = getattr(f, "_label", None)
    text = own() if callable(own) else repr(f)
    if text in _ANONYMOUS or _BARE_REPR.match(text):
        return describe(f, index)  # an internal repr, e.g. PiecewiseLinear(...)
    for pat, rep in _REPR_TO_TEX:
        text = pat.sub(rep, text)
    if _BARE_REPR.match(text) and "$" not in text:
        return describe(f, index)
    return text


# what unnamed curves call themselves
_ANONYMOUS = {"numeric", "Bracketed(lower, upper)"}


def describe(f: TradeOff, index: int | None = None) -> str:
    """A short description of a curve from what it is, for curves without a name.

    ``curve N (exact, m breakpoints)`` for a piecewise-linear curve, ``curve N (certified
    bracket)`` for a bracketed one, ``curve N (approximation)`` for an approximation: its kind
    (exact, a certified bracket, or an approximation that bounds nothing) is what a reader of
    the plot needs to know. N is ``index + 1``; without an index the number is left out.

    Examples
    --------
    >>> import fdp
    >>> describe(fdp.EpsDelta(1.0) @ fdp.EpsDelta(0.5))
    'curve (exact, ... breakpoints)'
    >>> describe(fdp.Laplace(0.1) ** 10, index=2)
    'curve 3 (certified bracket)'
    """
    if isinstance(f, PiecewiseLinear):
        what = f"{f.kind}, {f.breakpoints[0].size} breakpoints"
    elif f.kind == "bracket":
        what = "certified bracket"
    else:
        what = f.kind
    name = "curve" if index is None else f"curve {index + 1}"
    return f"{name} ({what})"


def _grid() -> np.ndarray:
    t = np.linspace(0.0, 1.0, 801)
    return np.unique(np.concatenate([t, np.logspace(-6, -1, 120), 1 - np.logspace(-6, -1, 60)]))


def curve_xy(f: TradeOff) -> tuple[np.ndarray, np.ndarray]:
    """The (α, β) points used to draw f: exact breakpoints for piecewise-linear curves, a grid
    dense near α = 0 and 1 otherwise."""
    if isinstance(f, PiecewiseLinear):
        a, b = f.breakpoints
        if a.size > 20000:  # thin very long curves for drawing (still exact at the kept points)
            keep = np.unique(np.concatenate([np.linspace(0, a.size - 1, 20000).astype(int)]))
            return a[keep], b[keep]
        return np.asarray(a), np.asarray(b)
    a = _grid()
    return a, np.asarray(f(a))


def _new_ax(ax: Any) -> Any:
    if ax is not None:
        return ax
    _matplotlib()
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    return ax


def tradeoff(
    *curves: TradeOff,
    labels: Sequence[str] | None = None,
    ax: Any = None,
    band: bool = True,
    diagonal: bool = True,
    **kw: Any,
) -> Any:
    """Draw trade-off curves: type I error α on x, type II error β on y, the unit square.

    Bracketed curves get a band between ``lower`` and ``upper`` and their conservative curve as
    the line; approximations are dashed. Extra keywords go to ``ax.plot``.
    """
    for i, c in enumerate(curves):
        if not isinstance(c, TradeOff):
            raise TypeError(f"curves[{i}] must be a TradeOff, got {type(c).__name__}")
    if labels is not None and len(labels) != len(curves):
        raise ValueError(f"labels must have one entry per curve ({len(curves)}), got {len(labels)}")
    ax = _new_ax(ax)
    for i, c in enumerate(curves):
        text = labels[i] if labels is not None else label(c, i)
        style_kw = dict(kw)
        if c.kind == "approximation":
            style_kw.setdefault("linestyle", "--")
        x, y = curve_xy(c.lower if c.kind == "bracket" else c)
        (line,) = ax.plot(x, y, label=text, **style_kw)
        if band and c.kind == "bracket":
            g = _grid()
            ax.fill_between(
                g,
                np.asarray(c.lower(g)),
                np.asarray(c.upper(g)),
                color=line.get_color(),
                alpha=0.25,
                linewidth=0,
            )
    if diagonal:
        ax.plot([0, 1], [1, 0], linestyle=":", color="0.5", linewidth=0.8, label="_Id")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("type I error α")
    ax.set_ylabel("type II error β")
    if curves:
        ax.legend(loc="upper right")
    return ax


def privacy_profile(
    *curves: TradeOff,
    eps: Any = None,
    labels: Sequence[str] | None = None,
    ax: Any = None,
    band: bool = True,
    **kw: Any,
) -> Any:
    """Draw δ(ε) against ε with a log-scaled δ axis (bands for bracketed curves)."""
    ax = _new_ax(ax)
    e = np.linspace(0.0, 8.0, 400) if eps is None else np.asarray(eps, dtype=float)
    if labels is not None and len(labels) != len(curves):
        raise ValueError(f"labels must have one entry per curve ({len(curves)}), got {len(labels)}")
    for i, c in enumerate(curves):
        text = labels[i] if labels is not None else label(c, i)
        style_kw = dict(kw)
        if c.kind == "approximation":
            style_kw.setdefault("linestyle", "--")
        d = np.asarray(c.delta(e), dtype=float)
        (line,) = ax.plot(e, np.where(d > 0, d, np.nan), label=text, **style_kw)
        if band and c.kind == "bracket":
            lo = np.asarray(c.upper.delta(e), dtype=float)
            ax.fill_between(
                e,
                np.where(lo > 0, lo, np.nan),
                np.where(d > 0, d, np.nan),
                color=line.get_color(),
                alpha=0.25,
                linewidth=0,
            )
    ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε)")
    if curves:
        ax.legend(loc="upper right")
    return ax
